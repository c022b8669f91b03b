//! The simulation thread: while any exporter is active it writes a fresh snapshot into every
//! active buffer each `update_period_us`, on absolute deadlines (no drift). It also brings the
//! device down after `device_lost_after_samples` snapshots.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::SimConfig;
use crate::export::ExportBuffer;

pub struct Shared {
    pub active: Mutex<Vec<Arc<ExportBuffer>>>,
    stop: AtomicBool,
    pub lost: AtomicBool,
    pub snapshots: AtomicU64,
    running: AtomicBool,
    /// Snapshots before the injected device loss (u64::MAX: never).
    lost_after: AtomicU64,
    seed: u64,
    period: Duration,
    start: Instant,
    /// Device clock = CLOCK_MONOTONIC + this.
    ts_offset: u64,
}

/// CLOCK_MONOTONIC in ns.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into our timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Shared {
    pub fn new(config: &SimConfig) -> Arc<Shared> {
        Arc::new(Shared {
            active: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            lost: AtomicBool::new(false),
            snapshots: AtomicU64::new(0),
            running: AtomicBool::new(false),
            lost_after: AtomicU64::new(config.faults.device_lost_after_samples.unwrap_or(u64::MAX)),
            seed: config.seed,
            period: Duration::from_micros(config.update_period_us),
            start: Instant::now(),
            ts_offset: 1_000_000_000_000 + (config.seed % 1000) * 1_000_000,
        })
    }

    pub fn device_now_ns(&self) -> u64 {
        monotonic_ns().wrapping_add(self.ts_offset)
    }

    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// The device comes back (as after a reset): not lost, snapshot count from zero.
    pub fn recover(&self) {
        self.snapshots.store(0, Ordering::Release);
        self.lost.store(false, Ordering::Release);
    }

    pub fn set_lost_after(&self, n: Option<u64>) {
        self.lost_after.store(n.unwrap_or(u64::MAX), Ordering::Release);
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Starts publishing `buf` (writes a first snapshot at once, so an import sees data).
    pub fn activate(self: &Arc<Self>, buf: Arc<ExportBuffer>) {
        if !self.is_lost() {
            buf.write_snapshot(self.seed, self.device_now_ns(), self.start.elapsed().as_secs_f64());
        } else {
            buf.set_lost();
        }
        self.active.lock().unwrap_or_else(|e| e.into_inner()).push(buf);
        if !self.running.swap(true, Ordering::AcqRel) {
            let me = Arc::clone(self);
            let spawned = std::thread::Builder::new().name("ze-sim-writer".into()).spawn(move || me.run());
            if spawned.is_err() {
                self.running.store(false, Ordering::Release);
            }
        }
    }

    pub fn deactivate(&self, buf: &Arc<ExportBuffer>) {
        self.active.lock().unwrap_or_else(|e| e.into_inner()).retain(|b| !Arc::ptr_eq(b, buf));
    }

    fn run(self: Arc<Self>) {
        let mut deadline = Instant::now();
        while !self.stop.load(Ordering::Acquire) {
            deadline += self.period;
            let now = Instant::now();
            if deadline > now {
                std::thread::sleep(deadline - now);
            } else if now - deadline > self.period * 100 {
                deadline = now; // far behind (suspended?): resynchronise instead of bursting
            }
            if self.is_lost() {
                continue;
            }
            let active = self.active.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if active.is_empty() {
                continue;
            }
            let n = self.snapshots.fetch_add(1, Ordering::AcqRel) + 1;
            if n > self.lost_after.load(Ordering::Acquire) {
                self.lost.store(true, Ordering::Release);
                for b in &active {
                    b.set_lost();
                }
                eprintln!("ze-sim: injected fault: device lost after {} snapshots", n - 1);
                continue;
            }
            let t = self.start.elapsed().as_secs_f64();
            let ts = self.device_now_ns();
            for b in &active {
                b.write_snapshot(self.seed, ts, t);
            }
        }
    }
}
