//! The simulation thread: while any exporter is active it writes a fresh snapshot into every
//! active buffer each `update_period_us`, on absolute deadlines (no drift). It also injects the
//! faults counted in snapshots: the device goes down after `device_lost_after_samples`, its clock
//! restarts near 0 after `timestamp_reset_after_samples`, and exported files shrink after
//! `shrink_export_after_samples`. The device clock keeps only `timestamp_valid_bits` bits.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::{Faults, Quirks, SimConfig};
use crate::export::ExportBuffer;

pub(crate) struct Shared {
    pub(crate) active: Mutex<Vec<Arc<ExportBuffer>>>,
    stop: AtomicBool,
    pub(crate) lost: AtomicBool,
    pub(crate) snapshots: AtomicU64,
    /// Reports made by the instance's metric streamers (for `device_lost_after_reports`).
    stream_reports: AtomicU64,
    running: AtomicBool,
    /// Snapshots before the injected device loss (u64::MAX: never).
    lost_after: AtomicU64,
    /// Snapshots before the device clock restarts (u64::MAX: never; it happens once).
    reset_after: AtomicU64,
    /// Snapshots before exported files shrink (u64::MAX: never), and to what size.
    shrink_after: AtomicU64,
    shrink_to: AtomicU64,
    /// Valid bits of the device clock (64: all).
    ts_bits: AtomicU32,
    /// Rate of the global timer in Hz (1e9: it counts ns).
    timer_hz: AtomicU64,
    seed: u64,
    period: Duration,
    /// CLOCK_MONOTONIC (ns) when the driver started: `t = 0` of the workload.
    start_ns: u64,
    /// Device clock = CLOCK_MONOTONIC + this (wrapping), then masked to `ts_bits`.
    ts_offset: AtomicU64,
    /// The device clock is synchronized with the host (`Quirks::global_timestamps_host_ns`):
    /// `ts_offset` is 0 while it is.
    synced: AtomicBool,
    /// How fast the device clock runs against the host's, in ppm (`Quirks::timer_drift_ppm`).
    drift_ppm: AtomicI64,
}

/// The device clock's offset from CLOCK_MONOTONIC of a driver with this seed (when not synced).
fn unsynced_offset(seed: u64) -> u64 {
    1_000_000_000_000 + (seed % 1000) * 1_000_000
}

/// A timer counting ns.
const NS_HZ: u64 = 1_000_000_000;

/// CLOCK_MONOTONIC in ns.
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into our timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Shared {
    pub(crate) fn new(config: &SimConfig) -> Arc<Shared> {
        Arc::new(Shared {
            active: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            lost: AtomicBool::new(false),
            snapshots: AtomicU64::new(0),
            stream_reports: AtomicU64::new(0),
            running: AtomicBool::new(false),
            lost_after: AtomicU64::new(u64::MAX),
            reset_after: AtomicU64::new(u64::MAX),
            shrink_after: AtomicU64::new(u64::MAX),
            shrink_to: AtomicU64::new(0),
            ts_bits: AtomicU32::new(64),
            timer_hz: AtomicU64::new(NS_HZ),
            seed: config.seed,
            period: Duration::from_micros(config.update_period_us),
            start_ns: monotonic_ns(),
            ts_offset: AtomicU64::new(unsynced_offset(config.seed)),
            synced: AtomicBool::new(false),
            drift_ppm: AtomicI64::new(0),
        })
        .with_faults(&config.faults, &config.quirks)
    }

    fn with_faults(self: Arc<Self>, faults: &Faults, quirks: &Quirks) -> Arc<Self> {
        self.apply(faults, quirks);
        self
    }

    /// Takes over the snapshot-counted faults and the clock quirk (at creation and on
    /// `Sim::configure`).
    pub(crate) fn apply(&self, faults: &Faults, quirks: &Quirks) {
        self.set_lost_after(faults.device_lost_after_samples);
        self.reset_after.store(faults.timestamp_reset_after_samples.unwrap_or(u64::MAX), Ordering::Release);
        self.shrink_after.store(faults.shrink_export_after_samples.unwrap_or(u64::MAX), Ordering::Release);
        self.shrink_to.store(faults.shrink_export_to, Ordering::Release);
        self.ts_bits.store(quirks.timestamp_valid_bits.unwrap_or(64).clamp(1, 64), Ordering::Release);
        self.timer_hz.store(quirks.timer_hz.unwrap_or(NS_HZ).max(1), Ordering::Release);
        self.drift_ppm.store(quirks.timer_drift_ppm.unwrap_or(0).into(), Ordering::Release);
        let synced = quirks.global_timestamps_host_ns;
        if self.synced.swap(synced, Ordering::AcqRel) != synced {
            let offset = if synced { 0 } else { unsynced_offset(self.seed) };
            self.ts_offset.store(offset, Ordering::Release);
        }
    }

    /// Host time `host_ns` as the device's timer counts it: drifted by `drift_ppm` since the
    /// driver started.
    fn drifted(&self, host_ns: u64) -> u64 {
        let ppm = self.drift_ppm.load(Ordering::Acquire);
        if ppm == 0 {
            return host_ns;
        }
        let since = i128::from(host_ns) - i128::from(self.start_ns);
        (i128::from(host_ns) + since * i128::from(ppm) / 1_000_000) as u64
    }

    /// The device clock at host time `host_ns` in ns, all its bits.
    fn device_ns_at(&self, host_ns: u64) -> u64 {
        self.drifted(host_ns).wrapping_add(self.ts_offset.load(Ordering::Acquire))
    }

    /// The device clock at host time `host_ns` (CLOCK_MONOTONIC), in ns, as written into buffers:
    /// it may wrap (valid bits) or have jumped back (reset fault).
    pub(crate) fn device_time_at(&self, host_ns: u64) -> u64 {
        let t = self.device_ns_at(host_ns);
        let bits = self.ts_bits.load(Ordering::Acquire);
        if bits >= 64 { t } else { t & ((1u64 << bits) - 1) }
    }

    /// The global timer at host time `host_ns`, in ticks of [`Shared::timer_hz`], keeping only
    /// the valid bits: what `zeDeviceGetGlobalTimestamps` answers.
    pub(crate) fn timer_ticks_at(&self, host_ns: u64) -> u64 {
        let hz = self.timer_hz();
        if hz == NS_HZ {
            return self.device_time_at(host_ns);
        }
        let ns = self.device_ns_at(host_ns);
        let t = (u128::from(ns) * u128::from(hz) / u128::from(NS_HZ)) as u64;
        let bits = self.ts_bits.load(Ordering::Acquire);
        if bits >= 64 { t } else { t & ((1u64 << bits) - 1) }
    }

    /// A streamer report's timestamp metric for a report ending at host time `host_ns`: the
    /// global timer's (masked) ticks in ns.
    pub(crate) fn report_time_at(&self, host_ns: u64) -> u64 {
        let hz = self.timer_hz();
        let ticks = self.timer_ticks_at(host_ns);
        if hz == NS_HZ { ticks } else { (u128::from(ticks) * u128::from(NS_HZ) / u128::from(hz)) as u64 }
    }

    /// Rate of the global timer in Hz.
    pub(crate) fn timer_hz(&self) -> u64 {
        self.timer_hz.load(Ordering::Acquire)
    }

    /// A snapshot's device timestamp and workload time (seconds since the driver started), both
    /// of host time `host_ns`: one clock read for both, so the time between two snapshots is the
    /// same on the device's clock as in the counters that grew over it (two reads, with the writer
    /// preempted between them, once stamped a snapshot 3 µs after the one before whose counters
    /// had grown over 3.4: a busy share of 111 %).
    pub(crate) fn snapshot_clock(&self, host_ns: u64) -> (u64, f64) {
        (self.device_time_at(host_ns), self.seconds_at(host_ns))
    }

    /// Seconds since the driver started at host time `host_ns`: the workload's `t`.
    pub(crate) fn seconds_at(&self, host_ns: u64) -> f64 {
        self.since_start_ns(host_ns) as f64 / 1e9
    }

    /// Nanoseconds since the driver started at host time `host_ns` (0 before).
    pub(crate) fn since_start_ns(&self, host_ns: u64) -> u64 {
        host_ns.saturating_sub(self.start_ns)
    }

    /// The workload's noise seed.
    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }

    /// Reports the instance's streamers have made so far.
    pub(crate) fn streamer_reports_made(&self) -> u64 {
        self.stream_reports.load(Ordering::Acquire)
    }

    /// Counts `n` streamer reports made.
    pub(crate) fn count_streamer_reports(&self, n: u64) {
        self.stream_reports.fetch_add(n, Ordering::AcqRel);
    }

    /// Marks the device lost now (a fault counted in streamer reports).
    pub(crate) fn lose_device(&self) {
        self.lost.store(true, Ordering::Release);
    }

    /// Valid bits of the device clock.
    pub(crate) fn timestamp_bits(&self) -> u32 {
        self.ts_bits.load(Ordering::Acquire)
    }

    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// The device comes back (as after a reset): not lost, snapshot count from zero.
    pub(crate) fn recover(&self) {
        self.snapshots.store(0, Ordering::Release);
        self.stream_reports.store(0, Ordering::Release);
        self.lost.store(false, Ordering::Release);
    }

    pub(crate) fn set_lost_after(&self, n: Option<u64>) {
        self.lost_after.store(n.unwrap_or(u64::MAX), Ordering::Release);
    }

    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Starts publishing `buf` (writes a first snapshot at once, so an import sees data).
    pub(crate) fn activate(self: &Arc<Self>, buf: Arc<ExportBuffer>) {
        if !self.is_lost() {
            let (ts, t) = self.snapshot_clock(monotonic_ns());
            buf.write_snapshot(self.seed, ts, t);
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

    pub(crate) fn deactivate(&self, buf: &Arc<ExportBuffer>) {
        self.active.lock().unwrap_or_else(|e| e.into_inner()).retain(|b| !Arc::ptr_eq(b, buf));
    }

    fn run(self: Arc<Self>) {
        let mut deadline = Instant::now();
        // The buffers being written, copied out of the lock each pass into storage kept from
        // pass to pass (the simulated device allocates nothing per snapshot: a monitor's
        // allocations per tick are measured beside it).
        let mut active: Vec<Arc<crate::export::ExportBuffer>> = Vec::new();
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
            active.clear();
            active.extend(self.active.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned());
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
            if n == self.reset_after.load(Ordering::Acquire) {
                // The clock restarts at ~1 µs from now on.
                self.ts_offset.store(1000u64.wrapping_sub(self.drifted(monotonic_ns())), Ordering::Release);
                self.reset_after.store(u64::MAX, Ordering::Release);
                eprintln!("ze-sim: injected fault: device clock reset after {n} snapshots");
            }
            if n >= self.shrink_after.load(Ordering::Acquire) {
                let to = self.shrink_to.load(Ordering::Acquire) as usize;
                for b in &active {
                    b.shrink(to);
                }
            }
            let (ts, t) = self.snapshot_clock(monotonic_ns());
            for b in &active {
                b.write_snapshot(self.seed, ts, t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DeviceKind, Signal};
    use crate::export::{Content, CounterSpec};

    /// Snapshots written however close together (a writer late after a preemption writes its
    /// next ones microseconds apart) have counters that grew over the time their device
    /// timestamps say: never more busy time than time, never more busy cycles than the clock
    /// gives over it.
    #[test]
    fn snapshots_close_together_grow_their_counters_over_the_time_their_timestamps_say() {
        let shared = Shared::new(&SimConfig::default());
        let counters = [Signal::GpuTime, Signal::BusyCycles]
            .iter()
            .enumerate()
            .map(|(index, &signal)| CounterSpec { signal, index })
            .collect();
        let clock_mhz = 2100.0;
        let buf = ExportBuffer::create(Content::Counters(counters), DeviceKind::Gpu, clock_mhz, 1, false, false, false)
            .expect("a buffer");
        // Through the workload's phases (a busy one among them), 5 ms apart, each with a snapshot
        // 1 µs and 3 µs after it.
        let mut host = shared.start_ns;
        for _ in 0..4000 {
            for step in [5_000_000, 1_000, 2_000] {
                host += step;
                let (ts, t) = shared.snapshot_clock(host);
                buf.write_snapshot(shared.seed(), ts, t);
            }
        }
        let history = buf.history();
        assert!(history.len() > 100, "{} snapshots kept", history.len());
        let mut busiest = 0.0f64;
        for w in history.windows(2) {
            let ((t0, a), (t1, b)) = (&w[0], &w[1]);
            let dt = t1.wrapping_sub(*t0) as f64;
            assert!(dt > 0.0, "timestamps grow: {t0} then {t1}");
            // Counters are written as whole units: a unit either side.
            let busy = b[0] - a[0];
            assert!(busy <= dt + 1.0, "{busy} ns busy in {dt} ns between snapshots at {t0} and {t1}");
            let cycles = b[1] - a[1];
            assert!(cycles <= dt * clock_mhz / 1e3 + 1.0, "{cycles} cycles in {dt} ns at {clock_mhz} MHz at most");
            if dt > 1e6 {
                busiest = busiest.max(busy / dt);
            }
        }
        assert!(busiest > 0.5, "a busy phase was written: the busiest share {busiest}");
    }
}
