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
//!
//! The device's timer and the host's clock run on different crystals, tens of ppm apart, so
//! placed times would drift from the host's by that much of the run (50 ppm: 180 ms an hour,
//! 4 s a day, against markers and telemetry stamped by the host). A snapshot is read after it
//! was written, so the least of the reads' lateness (read time less placed time) over a window
//! of at least [`WINDOW_NS`] and [`WINDOW_SAMPLES`] samples says where the placement stands;
//! from one window to the next it says how fast the timer runs against the host. At each
//! window's end the placement's slope becomes the measured rate plus what makes up that offset
//! over two windows, within [`MAX_SKEW`] of the layout's rate (500 ppm: beyond a crystal's drift,
//! within what a busy share may read over 100 % untold, `zescope_store`'s `SHARE_SLACK`), from
//! the sample just placed on: no step. The first read anchors the placement, and a snapshot it
//! found old is made up for the same way.

use crate::layout::Timestamp;

/// Extra device time a step may show beyond twice the host's, before it counts as a jump.
pub(crate) const SLACK_NS: f64 = 50e6;

/// How late (written before read) a snapshot may count as, at most: a writer held up longer
/// gives a gap.
const MAX_LATE_NS: i64 = 1_000_000_000;

/// Host time a window of lateness spans at least…
const WINDOW_NS: i64 = 1_000_000_000;
/// …and samples it holds at least.
const WINDOW_SAMPLES: u32 = 16;
/// The placement's slope stays within this of the layout's rate.
const MAX_SKEW: f64 = 500e-6;
/// Weight of a window's rate in the rate kept (the rest: the windows before).
const RATE_WEIGHT: f64 = 0.25;

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
    /// The placement's slope less 1 (host ns per device ns at the layout's rate, less 1).
    skew: f64,
    /// The timer's rate against the host's, less 1, as the windows measured it (`None` before
    /// two windows).
    rate: Option<f64>,
    window: Window,
}

/// The reads' lateness since a window began.
#[derive(Clone, Copy)]
struct Window {
    start_ns: i64,
    samples: u32,
    least_late_ns: i64,
    /// The previous window's least lateness and the slope it was placed with.
    before: Option<(i64, f64)>,
}

impl Window {
    fn new(start_ns: i64) -> Window {
        Window { start_ns, samples: 0, least_late_ns: i64::MAX, before: None }
    }
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
            skew: 0.0,
            rate: None,
            window: Window::new(0),
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
        let host_ns =
            self.anchor_host_ns + (self.ticks_since_anchor as f64 * self.ns_per_tick * (1.0 + self.skew)) as i64;
        self.last = Some(Last { raw, host_ns: now_ns, placed_ns: host_ns });
        self.follow_host(host_ns, now_ns);
        Placed::At { host_ns, gap: false }
    }

    /// Counts a sample placed at `placed_ns` and read at `now_ns` in the window; at its end,
    /// sets the slope from this sample on.
    fn follow_host(&mut self, placed_ns: i64, now_ns: i64) {
        let w = &mut self.window;
        w.samples += 1;
        w.least_late_ns = w.least_late_ns.min(now_ns - placed_ns);
        let span = now_ns - w.start_ns;
        if span < WINDOW_NS || w.samples < WINDOW_SAMPLES {
            return;
        }
        let late = w.least_late_ns;
        if let Some((before, skew)) = w.before {
            // The lateness fell by the timer's rate and the slope placed with, over the window.
            let rate = (before - late) as f64 / span as f64 - skew;
            let rate = self.rate.map_or(rate, |r| r + RATE_WEIGHT * (rate - r));
            self.rate = Some(rate);
            // Late placed behind the reads: a steeper slope makes it up over two windows.
            self.skew = (late as f64 / (2.0 * span as f64) - rate).clamp(-MAX_SKEW, MAX_SKEW);
            self.ticks_since_anchor = 0;
            self.anchor_host_ns = placed_ns;
        }
        self.window = Window { before: Some((late, self.skew)), ..Window::new(now_ns) };
    }

    fn anchor(&mut self, raw: u64, host_ns: i64, gap: bool) -> Placed {
        self.ticks_since_anchor = 0;
        self.anchor_host_ns = host_ns;
        self.last = Some(Last { raw, host_ns, placed_ns: host_ns });
        self.window = Window::new(host_ns);
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

    /// Snapshots written every ms by a timer `ppm` fast, read every 10 ms a little late
    /// (0–3 ms, a deterministic jitter) for two minutes: (placed, written) host times.
    fn drifting(ppm: i64) -> (Clock, Vec<(i64, i64)>) {
        let mut c = clock(None);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut out = Vec::new();
        let host0 = 1_000_000_000_000i64;
        for read in 0..12_000i64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let now = host0 + read * 10_000_000 + (x % 3_000_000) as i64;
            let written = (now - host0) / 1_000_000 * 1_000_000 + host0;
            let stamp = 5_000_000 + (written - host0) + (written - host0) * ppm / 1_000_000;
            if let Placed::At { host_ns, .. } = c.place(stamp as u64, now) {
                out.push((host_ns, written));
            }
        }
        (c, out)
    }

    #[test]
    fn placed_times_follow_the_host_clock_when_the_timer_drifts_and_never_step() {
        for ppm in [50, -80, 150, 0] {
            let (c, placed) = drifting(ppm);
            assert_eq!(c.resets, 0);
            // Each step the device's, within the slope's bound: no step in a rate.
            for w in placed.windows(2) {
                let (step, written) = (w[1].0 - w[0].0, w[1].1 - w[0].1);
                let bound = (written as f64 * (ppm.abs() as f64 * 1e-6 + MAX_SKEW)) as i64 + 2;
                assert!((step - written).abs() <= bound, "{ppm} ppm: a step of {step} ns for {written} ns");
            }
            // Placed within a millisecond of when the snapshots were written, after 20 s (uncorrected,
            // 50 ppm would be 6 ms off by the end); the first snapshot's read is the anchor.
            let off = placed[2_000..].iter().map(|(p, w)| (p - w).abs()).max().unwrap();
            assert!(off < 1_000_000, "{ppm} ppm: placed {off} ns from when they were written");
        }
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
