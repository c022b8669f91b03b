//! When a run is read. A run with a stream read from a live snapshot at the sampling rate
//! (exported memory) ticks: deadline-based reads, tick k due at `start + k · interval`, so waking
//! late never shifts later ticks (no cumulative drift); a tick found later than a whole interval
//! is late, the ticks it overran are skipped, not burst.
//!
//! A run of streams read from the driver's buffers (the streamer's reports, the tracer's entries:
//! each sample carries the hardware's own time), with or without telemetry (a snapshot, but read
//! at most every 100 ms whatever the interval), is read in batches: when the
//! streamer's notification event says reports wait, else at most [`BATCH_INTERVAL`] after the
//! last read, however high its sampling rate. Its ticks are then the sampling intervals its reads
//! have served (a read serves every interval up to it: the samples waited in the buffer), so its
//! rate is the sampling rate asked, and a read more than a batch interval after its deadline is
//! late. The sampler wakes about 1 / [`BATCH_INTERVAL`] times a second instead of 1 / interval.

use std::time::{Duration, Instant};

/// The longest a run read in batches leaves its samples in the driver's buffer: its live latency,
/// and how often it is read when no notification comes sooner. A streamed group read beside
/// exported memory is read this often too (or when its notification comes), not on every tick.
pub const BATCH_INTERVAL: Duration = Duration::from_millis(20);

/// The time's worth of reports the streamer's notification is asked for at batch interval
/// `batch`: a little under it (16 ms of [`BATCH_INTERVAL`]), so the event, where the driver has
/// one, wakes the sampler before the batch deadline would.
pub(crate) fn notify_span(batch: Duration) -> Duration {
    batch * 4 / 5
}

/// The least span without samples that is a hole in a stream's data (the process stopped or
/// starved, the machine suspended, reports dropped): its samples either side do not connect
/// (`read::batch::Pieces::with_holes`), and the telemetry's rates start again after it. A busy
/// machine's late ticks (a few ms) are not one.
const HOLE_MIN: Duration = Duration::from_secs(1);

/// The least number of sampling intervals that is a hole, when longer than [`HOLE_MIN`].
const HOLE_INTERVALS: u32 = 10;

/// The span without samples that is a hole in a run sampled every `interval`.
pub(crate) fn hole(interval: Duration) -> Duration {
    HOLE_MIN.max(interval.saturating_mul(HOLE_INTERVALS))
}

/// The deadline after `due` for a read done at `now` that comes every `period`: on the grid of
/// the first read's time (`due + period`), so a read taken a little after its deadline does not
/// push the next one back (a read "a period after the last" missed every other tick that came a
/// little early); after a stall of a whole period past it, a period from now.
pub(crate) fn next_deadline(due: Option<Instant>, now: Instant, period: Duration) -> Instant {
    match due {
        Some(due) if now < due + period => due + period,
        _ => now + period,
    }
}

pub(crate) struct Ticker {
    start: Instant,
    interval: Duration,
    /// Runs read in batches: the batch interval, and ticks counted before `start`.
    batch: Option<(Duration, u64)>,
    /// The batch interval asked for (before the sampling interval may lengthen it).
    asked_batch: Duration,
    /// When the last read was (runs read in batches).
    last_read: Instant,
    k: u64,
    pub ticks: u64,
    pub late: u64,
    /// Deadlines missed by late ticks: a late tick's own and those it overran, but the last one
    /// passed, which its read serves within an interval (see `Health::skipped_ticks`).
    pub skipped: u64,
}

impl Ticker {
    pub(crate) fn new(interval: Duration, now: Instant) -> Ticker {
        Ticker {
            start: now,
            interval,
            batch: None,
            asked_batch: BATCH_INTERVAL,
            last_read: now,
            k: 0,
            ticks: 0,
            late: 0,
            skipped: 0,
        }
    }

    /// A run read in batches at most `batch` apart (the sampler's batch interval,
    /// [`BATCH_INTERVAL`] unless its options say otherwise, or the sampling interval when that
    /// is longer); the first read at once.
    pub(crate) fn batched(interval: Duration, batch: Duration, now: Instant) -> Ticker {
        let asked_batch = batch;
        let batch = batch.max(interval);
        Ticker {
            batch: Some((batch, 0)),
            asked_batch,
            last_read: now.checked_sub(batch).unwrap_or(now),
            ..Ticker::new(interval, now)
        }
    }

    /// The longest a sample waits in the device before it is read: the interval of a ticked run,
    /// the batch interval of a run read in batches.
    pub(crate) fn latency(&self) -> Duration {
        self.batch.map_or(self.interval, |(b, _)| b)
    }

    /// Is this run read in batches?
    pub(crate) fn is_batched(&self) -> bool {
        self.batch.is_some()
    }

    /// When the ticker started (the run's start on the sampler's clock).
    pub(crate) fn started(&self) -> Instant {
        self.start
    }

    pub(crate) fn interval(&self) -> Duration {
        self.interval
    }

    pub(crate) fn next_deadline(&self) -> Instant {
        match self.batch {
            Some((b, _)) => self.last_read + b,
            None => self.deadline(self.k),
        }
    }

    /// Call when `next_deadline` has passed (or, read in batches, when the notification came):
    /// counts the tick(s) and schedules the next.
    pub(crate) fn fire(&mut self, now: Instant) {
        if let Some((b, before)) = self.batch {
            if now.saturating_duration_since(self.last_read + b) > b {
                self.late += 1;
            }
            let served =
                (now.saturating_duration_since(self.start).as_nanos() / self.interval.as_nanos().max(1)) as u64;
            self.ticks = self.ticks.max(before + served);
            self.last_read = now;
            return;
        }
        let due = self.deadline(self.k);
        self.ticks += 1;
        if now.saturating_duration_since(due) > self.interval {
            self.late += 1;
            // Skip the ticks that are already over.
            let behind = (now - self.start).as_nanos() / self.interval.as_nanos().max(1);
            let next = behind as u64 + 1;
            self.skipped += next.saturating_sub(self.k + 1);
            self.k = next;
        } else {
            self.k += 1;
        }
    }

    fn deadline(&self, k: u64) -> Instant {
        self.start + Duration::from_nanos((self.interval.as_nanos() as u64).saturating_mul(k))
    }

    /// Changes the interval from now on, keeping the tick count.
    pub(crate) fn set_interval(&mut self, interval: Duration, now: Instant) {
        self.interval = interval;
        self.start = now;
        self.k = 1;
        let asked = self.asked_batch;
        if let Some((batch, before)) = &mut self.batch {
            *batch = asked.max(interval);
            *before = self.ticks;
            self.last_read = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_stay_on_the_grid_of_the_first_read() {
        let (t0, p, ms) = (Instant::now(), Duration::from_millis(100), Duration::from_millis(1));
        assert_eq!(next_deadline(None, t0, p), t0 + p);
        // Read a little after its deadline: the next is a period after the deadline, not after
        // the read.
        assert_eq!(next_deadline(Some(t0), t0 + ms, p), t0 + p);
        assert_eq!(next_deadline(Some(t0 + p), t0 + p + 99 * ms, p), t0 + 2 * p);
        // A whole period past it (a stall): a period from now.
        assert_eq!(next_deadline(Some(t0), t0 + p * 5 / 2, p), t0 + p * 7 / 2);
    }

    #[test]
    fn deadlines_do_not_drift_when_ticks_wake_late() {
        let t0 = Instant::now();
        let mut t = Ticker::new(Duration::from_millis(10), t0);
        assert_eq!(t.next_deadline(), t0);
        // Each tick wakes 3 ms late; deadlines stay on the 10 ms grid.
        for k in 0..100u64 {
            let wake = t0 + Duration::from_millis(10 * k + 3);
            t.fire(wake);
            assert_eq!(t.next_deadline(), t0 + Duration::from_millis(10 * (k + 1)));
        }
        assert_eq!((t.ticks, t.late), (100, 0));
    }

    #[test]
    fn a_tick_later_than_an_interval_is_late_and_missed_ticks_are_skipped() {
        let t0 = Instant::now();
        let mut t = Ticker::new(Duration::from_millis(10), t0);
        t.fire(t0 + Duration::from_millis(35));
        assert_eq!(t.late, 1);
        assert_eq!(t.next_deadline(), t0 + Duration::from_millis(40), "skips to the next grid point");
        // The read at 35 ms serves deadline 30 (5 ms after it); 0, 10 and 20 had no read within
        // 10 ms after them: missed.
        assert_eq!((t.ticks, t.skipped), (1, 3));
        t.fire(t0 + Duration::from_millis(40));
        assert_eq!((t.ticks, t.late, t.skipped), (2, 1, 3), "an on-time tick skips nothing");
    }

    #[test]
    fn a_run_read_in_batches_counts_the_intervals_its_reads_served() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut t = Ticker::batched(Duration::from_micros(100), BATCH_INTERVAL, t0);
        assert_eq!(t.next_deadline(), t0, "the first read at once");
        t.fire(t0);
        assert_eq!(t.next_deadline(), t0 + ms(20));
        // A notification 16 ms in: the read serves 160 intervals of 100 µs; the next deadline
        // is a batch interval after it.
        t.fire(t0 + ms(16));
        assert_eq!((t.ticks, t.late, t.skipped), (160, 0, 0));
        assert_eq!(t.next_deadline(), t0 + ms(36));
        // A read 50 ms after its deadline is late; nothing is skipped (the samples waited).
        t.fire(t0 + ms(86));
        assert_eq!((t.ticks, t.late, t.skipped), (860, 1, 0));
        assert_eq!(t.latency(), ms(20));
        // An interval change counts on from the ticks served; a sampling interval longer than
        // the batch interval is the batch interval.
        t.set_interval(ms(1), t0 + ms(86));
        t.fire(t0 + ms(96));
        assert_eq!(t.ticks, 870);
        t.set_interval(ms(100), t0 + ms(96));
        assert_eq!((t.latency(), t.next_deadline()), (ms(100), t0 + ms(196)));
    }

    #[test]
    fn interval_changes_apply_from_now() {
        let t0 = Instant::now();
        let mut t = Ticker::new(Duration::from_millis(10), t0);
        t.fire(t0);
        let now = t0 + Duration::from_millis(5);
        t.set_interval(Duration::from_millis(100), now);
        assert_eq!(t.next_deadline(), now + Duration::from_millis(100));
    }
}
