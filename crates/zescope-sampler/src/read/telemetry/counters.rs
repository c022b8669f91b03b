//! Rates from the telemetry's cumulative counters (energy µJ, engine active time µs, memory
//! bytes), and which of them to believe.
//!
//! The API does not say how wide a counter is, and drivers have been seen to make them jump: an
//! energy counter of ~22 MJ read as ~200 J for a while and then as ~22 MJ again (compute-runtime,
//! on idle cards). A naive client subtracts and plots terawatts. The rules here:
//!
//! - a counter that went backwards gives no rate for that read (a gap), never a negative one;
//! - a rate above what the device can do (its [`Ceiling`]) gives none either: the counter leapt;
//! - either way the next read goes on from the new value (the counter is re-anchored), so a
//!   counter that fell for good resumes at once and a glitch costs two reads;
//! - a read less than [`MIN_SPAN_US`] after the last gives no rate and keeps the anchor: the
//!   timestamps are whole µs and counters move in steps (an energy counter every ~1 ms on some
//!   devices), so a rate over tens of µs is off by percents or steps (the run's first read comes
//!   right after the one taken at set-up: on the simulated device it said 148 W of a steady 150).

/// The part of a counter that came since `prev`; `None` when it went backwards (wrapped or reset).
pub(crate) fn counter_delta(prev: u64, now: u64) -> Option<u64> {
    now.checked_sub(prev)
}

/// `delta / dt × scale` as a rate, or NaN without a usable interval.
pub(crate) fn rate(delta: Option<u64>, dt: u64, scale: f64) -> f64 {
    match delta {
        Some(d) if dt > 0 => d as f64 / dt as f64 * scale,
        _ => f64::NAN,
    }
}

/// The shortest span a rate is given over (µs); a read sooner than this after the anchor waits
/// for the next.
pub(crate) const MIN_SPAN_US: u64 = 10_000;

/// Power a device is taken to reach at most when its power domain gives no limit: above any
/// single accelerator card or module sold.
pub(crate) const UNKNOWN_POWER_CEILING_W: f64 = 10_000.0;

/// The highest rate a counter is believed at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Ceiling(pub f64);

impl Ceiling {
    /// Watts from a power domain's limits (mW, -1 or 0 when unknown): four times the larger of
    /// the maximum and default limit (bursts above the sustained limit are short and smaller),
    /// at least 50 W; [`UNKNOWN_POWER_CEILING_W`] without a limit.
    pub(crate) fn power(max_limit_mw: i32, default_limit_mw: i32) -> Ceiling {
        let limit = max_limit_mw.max(default_limit_mw);
        if limit > 0 { Ceiling((4.0 * limit as f64 / 1e3).max(50.0)) } else { Ceiling(UNKNOWN_POWER_CEILING_W) }
    }

    /// Bytes per second from a memory module's `maxBandwidth` (B/s, 0 when unknown): four times
    /// it, or no ceiling.
    pub(crate) fn bandwidth(max_bandwidth: u64) -> Ceiling {
        Ceiling(if max_bandwidth > 0 { 4.0 * max_bandwidth as f64 } else { f64::INFINITY })
    }

    /// `rate` when it is believable, else NaN.
    pub(crate) fn check(self, rate: f64) -> f64 {
        if rate > self.0 { f64::NAN } else { rate }
    }
}

/// A counter's last (value, µs timestamp), and how often it was re-anchored.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Anchor {
    last: (u64, u64),
    /// The next read follows a hole in the run (`Anchor::after_hole`).
    after_hole: bool,
    /// Reads whose counter went backwards or leapt past the ceiling.
    pub(crate) reanchored: u64,
}

impl Anchor {
    /// Anchored at a first read.
    pub(crate) fn new(value: u64, timestamp: u64) -> Anchor {
        Anchor { last: (value, timestamp), after_hole: false, reanchored: 0 }
    }

    /// The run had a hole since the last read (stopped, starved, paused: its samples start a new
    /// segment there): the next read gives no rate, which would be the hole's average drawn as
    /// the value after it, but still its increase (the energy used meanwhile was used).
    pub(crate) fn after_hole(&mut self) {
        self.after_hole = true;
    }

    /// The rate (per second × `scale` per unit of counter per µs) since the last read, within
    /// `ceiling`, and the increase it stands for; (NaN, None) for a read that went backwards or
    /// leapt, which re-anchors. Anchored at this read either way.
    pub(crate) fn advance(&mut self, value: u64, timestamp: u64, scale: f64, ceiling: Ceiling) -> (f64, Option<u64>) {
        let delta = counter_delta(self.last.0, value);
        if std::mem::take(&mut self.after_hole) {
            self.last = (value, timestamp);
            return (f64::NAN, delta);
        }
        if delta.is_some() && timestamp.saturating_sub(self.last.1) < MIN_SPAN_US {
            return (f64::NAN, None);
        }
        let r = ceiling.check(rate(delta, timestamp.saturating_sub(self.last.1), scale));
        self.last = (value, timestamp);
        if delta.is_none() || (r.is_nan() && delta.is_some_and(|d| d > 0)) {
            self.reanchored += 1;
            return (f64::NAN, None);
        }
        (r, delta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_that_goes_backwards_gives_no_delta() {
        assert_eq!(counter_delta(10, 25), Some(15));
        assert_eq!(counter_delta(u64::MAX - 5, 3), None);
        assert!(rate(None, 100, 1.0).is_nan());
        assert!(rate(Some(5), 0, 1.0).is_nan());
        assert_eq!(rate(Some(500), 100, 1.0), 5.0);
    }

    #[test]
    fn a_read_right_after_the_anchor_waits_for_a_span_a_rate_can_be_believed_over() {
        // 150 W read 62 µs after the anchor, the counter at whole µJ and the time at whole µs:
        // 9297 µJ over "62" µs (62.x really) would say 149.95 W, or 148 W one µs off.
        let ceiling = Ceiling::power(216_000, 180_000);
        let mut a = Anchor::new(114_213, 20_792_996_500);
        let (w, d) = a.advance(123_510, 20_792_996_562, 1.0, ceiling);
        assert!(w.is_nan() && d.is_none(), "no rate over 62 µs: {w} {d:?}");
        // The next read goes on from the anchor: the whole span, the whole energy.
        let (w, d) = a.advance(15_114_213, 20_793_096_500, 1.0, ceiling);
        assert_eq!((w, d), (150.0, Some(15_000_000)));
        assert_eq!(a.reanchored, 0);
        // A counter that went backwards soon after is still a re-anchor (not a wait).
        assert!(a.advance(5, 20_793_096_600, 1.0, ceiling).0.is_nan());
        assert_eq!(a.reanchored, 1);
    }

    #[test]
    fn the_read_after_a_hole_gives_its_increase_but_no_rate() {
        let ceiling = Ceiling::power(216_000, 180_000);
        let mut a = Anchor::new(0, 0);
        assert_eq!(a.advance(15_000_000, 100_000, 1.0, ceiling), (150.0, Some(15_000_000)));
        // 4 s stopped at 150 W, then 100 ms at 50 W.
        a.after_hole();
        let (w, d) = a.advance(615_000_000, 4_100_000, 1.0, ceiling);
        assert!(w.is_nan(), "the hole's average is no value at its end: {w}");
        assert_eq!(d, Some(600_000_000), "the energy used meanwhile still counts");
        assert_eq!(a.advance(620_000_000, 4_200_000, 1.0, ceiling), (50.0, Some(5_000_000)));
        assert_eq!(a.reanchored, 0);
    }

    #[test]
    fn an_energy_counter_that_falls_to_200_joules_and_comes_back_gives_two_gaps_and_no_spike() {
        // 150 W from a counter at ~22 MJ, read every 100 ms (µJ, µs).
        let ceiling = Ceiling::power(216_000, 180_000);
        assert_eq!(ceiling, Ceiling(864.0));
        let mut a = Anchor::new(22_000_000_000_000, 0);
        let mut watts = Vec::new();
        let reads = [22_000_015_000_000, 200_000_000, 215_000_000, 22_000_060_000_000, 22_000_075_000_000];
        for (i, &e) in reads.iter().enumerate() {
            watts.push(a.advance(e, (i as u64 + 1) * 100_000, 1.0, ceiling).0);
        }
        assert_eq!(watts[0], 150.0);
        assert!(watts[1].is_nan(), "the fall is a gap, not a negative rate");
        assert_eq!(watts[2], 150.0, "counting goes on from the fallen value");
        assert!(watts[3].is_nan(), "the way back up is a gap, not ~220 MW");
        assert_eq!(watts[4], 150.0);
        assert_eq!(a.reanchored, 2);
    }

    #[test]
    fn ceilings_come_from_the_limits_or_a_bound_no_device_reaches() {
        assert_eq!(Ceiling::power(-1, -1), Ceiling(UNKNOWN_POWER_CEILING_W));
        assert_eq!(Ceiling::power(0, 5_000), Ceiling(50.0), "at least 50 W");
        assert!(Ceiling::bandwidth(0).check(1e15).is_finite());
        assert!(Ceiling::bandwidth(1_000).check(5_000.0).is_nan());
        // An idle counter (no increase) is not a leap, whatever the ceiling.
        let mut a = Anchor::new(5, 0);
        assert_eq!(a.advance(5, 100_000, 1.0, Ceiling(0.0)), (0.0, Some(0)));
        assert_eq!(a.reanchored, 0);
    }
}
