//! Deadline-based ticks: tick k is due at `start + k · interval`, so waking late never shifts
//! later ticks (no cumulative drift). A tick found later than a whole interval is late; the
//! ticks it overran are skipped, not burst.

use std::time::{Duration, Instant};

pub(crate) struct Ticker {
    start: Instant,
    interval: Duration,
    k: u64,
    pub ticks: u64,
    pub late: u64,
    /// Deadlines missed by late ticks: a late tick's own and those it overran, but the last one
    /// passed, which its read serves within an interval (see `Health::skipped_ticks`).
    pub skipped: u64,
}

impl Ticker {
    pub(crate) fn new(interval: Duration, now: Instant) -> Ticker {
        Ticker { start: now, interval, k: 0, ticks: 0, late: 0, skipped: 0 }
    }

    /// When the ticker started (the run's start on the sampler's clock).
    pub(crate) fn started(&self) -> Instant {
        self.start
    }

    pub(crate) fn interval(&self) -> Duration {
        self.interval
    }

    pub(crate) fn next_deadline(&self) -> Instant {
        self.deadline(self.k)
    }

    /// Call when `next_deadline` has passed: counts the tick and schedules the next.
    pub(crate) fn fire(&mut self, now: Instant) {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn interval_changes_apply_from_now() {
        let t0 = Instant::now();
        let mut t = Ticker::new(Duration::from_millis(10), t0);
        t.fire(t0);
        let now = t0 + Duration::from_millis(5);
        t.set_interval(Duration::from_millis(100), now);
        assert_eq!(t.next_deadline(), now + Duration::from_millis(100));
    }
}
