//! Device time onto the host's timeline (CLOCK_MONOTONIC ns), for one stream.
//!
//! A stream's first snapshot anchors its device timer to the host clock; later snapshots are
//! placed by how far the device timer advanced since the anchor. Device timers misbehave in
//! ways this type absorbs instead of freezing the plot:
//! - a timer narrower than its word (the layout's `valid_bits`) wraps: a step backwards that is
//!   a plausible forward step modulo 2^bits is a wrap, and time continues;
//! - a timer that resets, jumps backwards, or leaps forward far more than the host clock moved
//!   re-anchors the stream at the host's current time, with a gap before that sample
//!   ([`Clock::resets`] counts these);
//! - a snapshot whose timestamp did not change is not a new sample.
//!
//! "Plausible" means: the device advanced at most twice the host time since the last sample
//! was written (its placed time, or its read if that was earlier, by at most [`MAX_LATE_NS`] — a
//! snapshot read late, its writer held up, is followed by a long step in a short read interval),
//! plus a slack — [`SLACK_NS`], or a quarter of the wrap period for narrow timers, whichever is
//! smaller (snapshots are written before they are read, and ticks jitter).

use crate::layout::Timestamp;

/// Extra device time a step may show beyond twice the host's, before it counts as a jump.
pub(crate) const SLACK_NS: f64 = 50e6;

/// How late (written before read) a snapshot may count as, at most: a writer held up longer
/// gives a gap.
const MAX_LATE_NS: i64 = 1_000_000_000;

/// What one snapshot's device timestamp means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Placed {
    /// The same timestamp as the previous snapshot: the producer has not written since.
    Unchanged,
    /// A new sample at `host_ns`; `gap` when it does not connect to the previous one.
    At { host_ns: i64, gap: bool },
}

pub(crate) struct Clock {
    mask: u64,
    ns_per_tick: f64,
    slack_ns: f64,
    last: Option<Last>,
    /// Device ticks since the anchor (wraps unwound), and the anchor's host time.
    ticks_since_anchor: u128,
    anchor_host_ns: i64,
    /// Re-anchors after a reset, backwards step or implausible leap of device time.
    pub resets: u64,
}

struct Last {
    raw: u64,
    host_ns: i64,
    placed_ns: i64,
}

impl Clock {
    pub(crate) fn new(t: &Timestamp) -> Clock {
        let ns_per_tick = 1e9 / t.ticks_per_second;
        let period_ns = (t.mask() as f64 + 1.0) * ns_per_tick;
        Clock {
            mask: t.mask(),
            ns_per_tick,
            slack_ns: SLACK_NS.min(period_ns / 4.0),
            last: None,
            ticks_since_anchor: 0,
            anchor_host_ns: 0,
            resets: 0,
        }
    }

    /// Places a snapshot whose device timestamp is `raw` (already masked), read at host time
    /// `now_ns`.
    pub(crate) fn place(&mut self, raw: u64, now_ns: i64) -> Placed {
        let raw = raw & self.mask;
        let Some(last) = &self.last else {
            return self.anchor(raw, now_ns, false);
        };
        if raw == last.raw {
            return Placed::Unchanged;
        }
        // Forward distance modulo the timer's width (a wrap for narrow timers).
        let step = raw.wrapping_sub(last.raw) & self.mask;
        let backwards = raw < last.raw && self.mask == u64::MAX;
        // Since the previous snapshot was written, not read: a snapshot read late (its writer was
        // held up) followed by a fresh one is a long step in a short read interval. The credit is
        // capped, so that a device timer slower than its layout says (placed times falling ever
        // further behind) cannot blunt the leap check.
        let late = (last.host_ns - last.placed_ns).clamp(0, MAX_LATE_NS);
        let host_elapsed = (now_ns - last.host_ns + late).max(0) as f64;
        let plausible = step as f64 * self.ns_per_tick <= 2.0 * host_elapsed + self.slack_ns;
        if backwards || !plausible {
            self.resets += 1;
            return self.anchor(raw, now_ns.max(last.placed_ns + 1), true);
        }
        self.ticks_since_anchor += step as u128;
        let host_ns = self.anchor_host_ns + (self.ticks_since_anchor as f64 * self.ns_per_tick) as i64;
        self.last = Some(Last { raw, host_ns: now_ns, placed_ns: host_ns });
        Placed::At { host_ns, gap: false }
    }

    fn anchor(&mut self, raw: u64, host_ns: i64, gap: bool) -> Placed {
        self.ticks_since_anchor = 0;
        self.anchor_host_ns = host_ns;
        self.last = Some(Last { raw, host_ns, placed_ns: host_ns });
        Placed::At { host_ns, gap }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(bits: Option<u32>) -> Clock {
        Clock::new(&Timestamp { offset: 0, ticks_per_second: 1e9, valid_bits: bits })
    }

    fn at(p: Placed) -> (i64, bool) {
        match p {
            Placed::At { host_ns, gap } => (host_ns, gap),
            Placed::Unchanged => panic!("expected a sample"),
        }
    }

    #[test]
    fn device_time_advances_from_the_first_anchor() {
        let mut c = clock(None);
        assert_eq!(at(c.place(5_000, 1_000_000)), (1_000_000, false));
        assert_eq!(at(c.place(6_000, 1_001_100)), (1_001_000, false), "device spacing, not read time");
        assert_eq!(c.place(6_000, 1_002_000), Placed::Unchanged);
        assert_eq!(c.resets, 0);
    }

    #[test]
    fn a_narrow_timer_wraps_without_a_gap() {
        let mut c = clock(Some(24));
        let top = (1u64 << 24) - 1_000;
        at(c.place(top, 10_000_000));
        // 1_000 ticks to the wrap, then 500 more: 1.5 µs later.
        assert_eq!(at(c.place(500, 10_001_600)), (10_001_500, false));
        // Bits above the valid ones are ignored.
        assert_eq!(at(c.place((7 << 24) | 1_500, 10_002_600)), (10_002_500, false));
        assert_eq!(c.resets, 0);
    }

    #[test]
    fn a_reset_re_anchors_with_a_gap() {
        let mut c = clock(None);
        at(c.place(9_000_000, 1_000_000));
        at(c.place(10_000_000, 2_000_000));
        let (t, gap) = at(c.place(100, 3_000_000));
        assert!(gap && t == 3_000_000, "{t} {gap}");
        assert_eq!(at(c.place(1_100, 3_001_000)), (3_001_000, false), "time goes on from the new anchor");
        assert_eq!(c.resets, 1);
    }

    #[test]
    fn a_reset_of_a_narrow_timer_is_not_taken_for_a_wrap() {
        // 24 bits of ns wrap every 16.8 ms. From 8e6 back to 10 after 1 ms of host time would be
        // an 8.8 ms wrap: more than the device can have advanced.
        let mut c = clock(Some(24));
        at(c.place(8_000_000, 1_000_000));
        let (t, gap) = at(c.place(10, 2_000_000));
        assert!(gap && t == 2_000_000, "{t} {gap}");
        assert_eq!(c.resets, 1);
        // A real wrap after the same host time is not a reset.
        let mut w = clock(Some(24));
        at(w.place((1 << 24) - 400_000, 1_000_000));
        assert_eq!(at(w.place(600_000, 2_000_000)), (2_000_000, false));
        assert_eq!(w.resets, 0);
    }

    #[test]
    fn a_leap_forward_re_anchors_and_stamps_stay_increasing() {
        let mut c = clock(None);
        at(c.place(1_000, 1_000_000));
        let (t1, _) = at(c.place(2_000, 1_001_000));
        let (t2, gap) = at(c.place(1_000_000_000_000, 1_001_500));
        assert!(gap && t2 > t1);
        assert_eq!(c.resets, 1);
    }

    #[test]
    fn a_snapshot_read_late_then_a_fresh_one_is_not_a_leap() {
        // 24 bits of ns: a 16.8 ms wrap, 4.2 ms of slack. The second read finds a snapshot the
        // held-up writer wrote 7.9 ms before; the third, 1 ms later, a fresh one: the device
        // moved 8 ms in 1 ms of reads, but in 8.9 ms since the previous snapshot was written.
        let mut c = clock(Some(24));
        at(c.place(1_000_000, 100_000_000));
        assert_eq!(at(c.place(1_100_000, 108_000_000)), (100_100_000, false));
        assert_eq!(at(c.place(9_100_000, 109_000_000)), (108_100_000, false));
        assert_eq!(c.resets, 0, "a late snapshot is not a clock jump");
        // A step beyond twice the time since the last write, plus the slack, still re-anchors.
        let (_, gap) = at(c.place(16_000_000, 109_100_000));
        assert!(gap);
        assert_eq!(c.resets, 1);
    }

    #[test]
    fn lateness_counts_for_at_most_a_second() {
        // A snapshot read 10 s after it was written (a timer slower than its layout says looks
        // the same), then a 5 s step 1 ms later: more than the capped credit allows, a leap.
        let mut c = clock(None);
        at(c.place(0, 0));
        assert_eq!(at(c.place(1_000_000, 10_000_000_000)), (1_000_000, false));
        let (_, gap) = at(c.place(5_000_000_000, 10_001_000_000));
        assert!(gap, "the leap check keeps its teeth");
        assert_eq!(c.resets, 1);
    }
}
