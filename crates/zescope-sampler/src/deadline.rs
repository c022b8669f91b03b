//! The teardown's deadline: how long a shutdown waits for the sampler thread, counted in the time
//! that thread could have run.
//!
//! The deadline exists for a driver that hangs. A driver call that hangs spends its time asleep
//! (blocked in the kernel) or on a CPU (spinning); a sampler on a machine with more runnable
//! threads than cores spends its time waiting for a CPU, which says nothing about the driver. So
//! the time the sampler thread waited on a run queue since the deadline was armed (the kernel's
//! `run_delay`, the second field of `/proc/self/task/TID/schedstat`) moves the deadline later,
//! by at most [`MAX_GRACE`] times the timeout: a starved machine cannot hold a quit forever.
//! Where the kernel keeps no schedstat, or the thread is not a sampler thread of this process
//! (a remote feed's), the deadline is the wall clock's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The most the time spent waiting for a CPU can add to a deadline, in timeouts.
pub(crate) const MAX_GRACE: u32 = 9;

/// Where the sampler thread puts its kernel thread id (`gettid`) when it starts.
pub(crate) type TidSlot = Arc<OnceLock<u32>>;

/// Records the calling thread's id in `slot` (the sampler thread does, first thing).
pub(crate) fn record_thread_id(slot: &TidSlot) {
    let _ = slot.set(rustix::thread::gettid().as_raw_nonzero().get() as u32);
}

/// Total time thread `tid` of this process has waited on a run queue, from schedstat; `None`
/// where the kernel does not keep it or the thread is gone.
pub(crate) fn run_delay(tid: u32) -> Option<Duration> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    let ns: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// A shutdown's deadline (the module's docs).
#[derive(Debug)]
pub(crate) struct Deadline {
    at: Instant,
    timeout: Duration,
    /// The thread whose waits for a CPU move the deadline, and its `run_delay` when armed.
    thread: Option<(u32, Duration)>,
    /// The most it was seen to have waited since (ns): kept once the thread has ended and its
    /// schedstat is gone.
    queued: AtomicU64,
}

impl Deadline {
    /// A deadline `timeout` from now, moved by the time thread `tid` waits for a CPU from now on.
    pub(crate) fn arm(timeout: Duration, tid: Option<u32>) -> Deadline {
        let thread = tid.and_then(|t| Some((t, run_delay(t)?)));
        Deadline { at: Instant::now() + timeout, timeout, thread, queued: AtomicU64::new(0) }
    }

    /// Whether the deadline has passed.
    pub(crate) fn passed(&self) -> bool {
        if let Some(q) = self.thread.and_then(|(t, at_arm)| Some(run_delay(t)?.saturating_sub(at_arm))) {
            self.queued.fetch_max(q.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
        }
        self.passed_at(Instant::now(), Duration::from_nanos(self.queued.load(Ordering::Relaxed)))
    }

    /// Whether the deadline has passed at `now`, the thread having waited `queued` for a CPU since
    /// it was armed.
    fn passed_at(&self, now: Instant, queued: Duration) -> bool {
        now >= self.at + queued.min(self.timeout * MAX_GRACE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_waiting_for_a_cpu_moves_the_deadline_up_to_nine_timeouts() {
        let d =
            Deadline { at: Instant::now(), timeout: Duration::from_secs(3), thread: None, queued: AtomicU64::new(0) };
        let s = Duration::from_secs;
        assert!(!d.passed_at(d.at - s(1), Duration::ZERO), "before the deadline");
        assert!(d.passed_at(d.at, Duration::ZERO), "at it, nothing queued");
        assert!(!d.passed_at(d.at + s(2), s(3)), "three seconds queued: three seconds more");
        assert!(d.passed_at(d.at + s(3), s(3)));
        assert!(!d.passed_at(d.at + s(26), s(100)), "at most nine timeouts more");
        assert!(d.passed_at(d.at + s(27), s(100)));
    }

    #[test]
    fn a_deadline_without_a_thread_is_the_wall_clocks() {
        // Timeouts far from the time a check takes, so a loaded machine cannot tip either.
        assert!(!Deadline::arm(Duration::from_secs(60), None).passed());
        let d = Deadline::arm(Duration::from_millis(20), None);
        std::thread::sleep(Duration::from_millis(30));
        assert!(d.passed(), "past its 20 ms with nothing to move it");
        // A thread of this process whose schedstat cannot be read (no such thread): the same.
        let gone = Deadline::arm(Duration::from_millis(20), Some(u32::MAX));
        std::thread::sleep(Duration::from_millis(30));
        assert!(gone.passed());
    }

    /// Two threads that spin on one CPU wait for it in turns: the run delay each reads of itself
    /// grows by about the other's time on that CPU. Needs `taskset` (util-linux) and a kernel
    /// with schedstat; says so and fails without them (the suite runs where both are).
    #[test]
    fn run_delay_counts_the_time_a_spinning_thread_waits_for_a_cpu_it_shares() {
        let spin = |slot: TidSlot, go: Arc<std::sync::Barrier>| {
            move || {
                record_thread_id(&slot);
                go.wait();
                go.wait();
                let tid = *slot.get().unwrap();
                let before = run_delay(tid);
                let end = Instant::now() + Duration::from_millis(600);
                let mut x = 0u64;
                while Instant::now() < end {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
                }
                Some(run_delay(tid)?.saturating_sub(before?))
            }
        };
        let go = Arc::new(std::sync::Barrier::new(3));
        let (a, b) = (TidSlot::default(), TidSlot::default());
        let ta = std::thread::spawn(spin(a.clone(), go.clone()));
        let tb = std::thread::spawn(spin(b.clone(), go.clone()));
        go.wait();
        pin_to_cpu0(*a.get().unwrap());
        pin_to_cpu0(*b.get().unwrap());
        go.wait();
        let waited = [ta.join().unwrap(), tb.join().unwrap()];
        for w in waited {
            let w = w.expect("the kernel keeps schedstat (/proc/self/task/TID/schedstat)");
            // Each spun 600 ms on the one CPU they share, so each waited for it while the other ran.
            assert!(w >= Duration::from_millis(150), "a thread waited {w:?} for its CPU: {waited:?}");
        }
    }

    /// Pins thread `tid` of this process to CPU 0 (`taskset`, util-linux); whether it could.
    fn pinned_to_cpu0(tid: u32) -> bool {
        let pinned = std::process::Command::new("taskset")
            .args(["-p", "-c", "0", &tid.to_string()])
            .stdout(std::process::Stdio::null())
            .status();
        pinned.is_ok_and(|s| s.success())
    }

    /// Pins thread `tid` of this process to CPU 0, or fails the test saying why.
    fn pin_to_cpu0(tid: u32) {
        assert!(pinned_to_cpu0(tid), "taskset -p -c 0 {tid} (util-linux) failed");
    }

    /// A sampler thread that shares its CPU with three spinning threads needs four times its CPU
    /// time in wall time; a shutdown waits for it past a timeout it could have kept alone.
    #[test]
    fn a_shutdown_waits_for_a_sampler_that_waited_for_its_cpu() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = Arc::new(AtomicBool::new(false));
        let go = Arc::new(std::sync::Barrier::new(2));
        // Three threads spin on CPU 0 until the test ends, from when all three are pinned there.
        let pinned = Arc::new(std::sync::Barrier::new(4));
        let hogs: Vec<_> = (0..3)
            .map(|_| {
                let (stop, pinned) = (stop.clone(), pinned.clone());
                std::thread::spawn(move || {
                    let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32;
                    let ok = pinned_to_cpu0(tid);
                    pinned.wait();
                    assert!(ok, "taskset -p -c 0 {tid} (util-linux) failed");
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        struct Stop(Arc<AtomicBool>);
        impl Drop for Stop {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let _stop = Stop(stop.clone());
        pinned.wait();
        // The sampler's opener waits until it is pinned beside them, then needs 60 ms of CPU (and
        // finds no driver: the thread then waits for commands, and ends on the shutdown).
        let g = go.clone();
        let opener = Box::new(move || {
            g.wait();
            let start = crate::thread_cpu_time();
            while crate::thread_cpu_time() - start < Duration::from_millis(60) {
                std::hint::spin_loop();
            }
            Err(zescope_ze::Error::NoDriver { cause: "a test's opener".into() })
        });
        let mut h = crate::spawn(opener, crate::Options::default());
        let tid = loop {
            match h.thread_id() {
                Some(t) => break t,
                None => std::thread::sleep(Duration::from_millis(1)),
            }
        };
        pin_to_cpu0(tid);
        go.wait();
        let timeout = Duration::from_millis(200);
        let start = Instant::now();
        let done = h.shutdown(timeout);
        let took = start.elapsed();
        drop(_stop);
        hogs.into_iter().for_each(|t| t.join().unwrap());
        assert!(took > timeout, "the sampler was slowed past the timeout ({took:?}): the case is made");
        assert_eq!(done, Ok(()), "the shutdown waited for it ({took:?}), as its waits for a CPU moved the deadline");
    }
}
