//! Where a streamed report lies on the host clock (CLOCK_MONOTONIC, the timeline of every
//! sample).
//!
//! A report carries its own time in its timestamp metric (`QueryBeginTime` and the like), in the
//! unit the metric's properties name ("ns", "us", "ms", "s"; an empty unit is taken as ns). The
//! device's global timer counts in ticks of `timerResolution` and keeps `timestampValidBits`
//! bits; `zeDeviceGetGlobalTimestamps` pairs a tick count with a host time. So a report's host
//! time is `host + (report_ns − ticks_ns)`, the difference taken modulo the timer's wrap and
//! chosen nearest to zero.
//!
//! Which unit the pair's device value is in: ticks of the timer, as the specification says up
//! to 2026; or host ns, as the specification of 2026-05 gives it for a device whose timer is
//! synchronized with the host (metric timestamps stay ticks). No field of the properties up to
//! the 1.32 loader's headers (API 1.17) says which, so the first pair tells: a device value
//! within [`SYNCED_NS`] of the pair's host value is host ns (a tick count of another rate or
//! epoch does not land there), and is turned into ticks of the timer (`timerResolution`,
//! `timestampValidBits`) before it anchors the reports. The unit found is kept for the run.
//!
//! The spec does not say which host clock `hostTimestamp` is read from (Intel's drivers use
//! CLOCK_MONOTONIC_RAW): it is used only when it falls between two CLOCK_MONOTONIC readings
//! taken around the call; otherwise their midpoint is the pair's host time. The pair is read
//! again every second, and at every read when the timer wraps in less than [`SHORT_WRAP_NS`] (a
//! report then lies well within half a wrap of its pair).
//!
//! The device's timer and the host's clock run on different crystals, tens of parts per million
//! apart: a second after a pair, a report mapped through it is off by that many µs. Jumping to
//! each new pair would put that error into one step between two reports — at 100 000 reports a
//! second, 50 ppm put five reports before the one already placed (refused as out of order) and
//! their counts into the next, a busy share of 767 %. So the mapping is continuous: a new pair
//! changes its slope, not its place. The slope is the timer's rate against the host's, measured
//! between pairs at least [`RATE_SPAN_NS`] apart, plus what makes up the new pair's offset from
//! the mapping over [`SLEW_NS`]; it stays within [`MAX_SKEW`] of 1. A pair more than [`JUMP_NS`]
//! off (the timer was reset, the host suspended) is jumped to, as is the first. A pair whose
//! host time is unsure by more than [`UNSURE_NS`] (the call was held up, and its host value is
//! of another clock) is passed over, up to [`MAX_PASSED`] times in a row, and the next read
//! asks again.
//!
//! Without a usable pair or unit, or when a mapped time lies more than [`PLAUSIBLE_NS`] from the
//! read, `map` answers `None` and the caller places reports back from the read time by whole
//! periods.

use zescope_ze::streamer::Timer;
use zescope_ze::{Device, ZeError};

/// How far a mapped report time may lie from the read time before it is distrusted.
pub(crate) const PLAUSIBLE_NS: i128 = 10_000_000_000;
/// A timer wrapping sooner than this is paired with host time at every read.
pub(crate) const SHORT_WRAP_NS: i128 = 8_000_000_000;
/// How often a pair is read otherwise.
const REFRESH_NS: u64 = 1_000_000_000;
/// A pair whose device value lies this close to its host value gives the device's global
/// timestamp in host ns (a synchronized device, the 2026-05 specification).
pub(crate) const SYNCED_NS: u64 = 1_000_000;
/// A new pair further than this from the mapping is jumped to instead of slewed to.
const JUMP_NS: i128 = 1_000_000;
/// A pair's offset from the mapping is made up over this much time.
const SLEW_NS: f64 = 1e9;
/// The mapping's slope stays within this of 1 (a timer off its stated rate by more follows its
/// pairs by jumps).
const MAX_SKEW: f64 = 0.01;
/// The timer's rate against the host's is measured between pairs at least this far apart.
const RATE_SPAN_NS: i128 = 1_000_000_000;
/// A pair whose host time is unsure by more than this is passed over…
const UNSURE_NS: i128 = 100_000;
/// …at most this many times in a row.
const MAX_PASSED: u32 = 10;

/// The unit of the device value of `zeDeviceGetGlobalTimestamps`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PairUnit {
    /// Ticks of the global timer (the specification up to 2026).
    Ticks,
    /// Host ns: the device's timer is synchronized with the host (2026-05).
    HostNs,
}

/// ns per unit of a timestamp metric, from its unit text; `None` for a unit that is not a time.
pub(crate) fn unit_ns(unit: &str) -> Option<u64> {
    match unit.trim().to_ascii_lowercase().as_str() {
        "" | "ns" | "nsec" | "nanoseconds" => Some(1),
        "us" | "µs" | "usec" | "microseconds" => Some(1_000),
        "ms" | "msec" | "milliseconds" => Some(1_000_000),
        "s" | "sec" | "seconds" => Some(1_000_000_000),
        _ => None,
    }
}

/// Maps report times of one streamed group onto the host clock.
pub(crate) struct ReportClock {
    timer: Timer,
    /// The timer's wrap in ns (`Timer::wrap_ns`), worked out once: `map` runs per report.
    wrap_ns: Option<i128>,
    /// ns per unit of the report's timestamp metric; `None`: not a time unit.
    unit_ns: Option<u64>,
    /// (host ns, device ns) the mapping passes through: the last pair jumped to, else where the
    /// mapping put the newest report placed when the last pair came (or that pair's device time).
    anchor: Option<(i128, i128)>,
    /// The mapping's slope less 1: host ns per device ns after the anchor, less 1.
    skew: f64,
    /// The slope less 1 before the anchor (the line the mapping followed up to it).
    skew_before: f64,
    /// The timer's measured rate against the host's, less 1 (0 until measured).
    rate_skew: f64,
    /// (host ns, device ns) of the pair the rate is next measured from.
    base: Option<(i128, i128)>,
    /// Pairs passed over in a row as unsure.
    passed: u32,
    /// The stamp of the newest report placed ([`Self::placed_up_to`]).
    newest: Option<u64>,
    /// The anchor and unit in `i64`, with half the wrap, where they fit: `map`'s usual case.
    near: Option<Near>,
    anchored_at: u64,
    /// `zeDeviceGetGlobalTimestamps` still answers.
    pairs: bool,
    /// The unit of the pairs' device value, found at the first pair.
    unit: Option<PairUnit>,
}

impl ReportClock {
    /// A clock for reports whose timestamp metric is in `unit`, on a device with `timer`.
    pub(crate) fn new(timer: Timer, unit: &str) -> ReportClock {
        let wrap_ns = timer.wrap_ns();
        ReportClock {
            timer,
            wrap_ns,
            unit_ns: unit_ns(unit),
            anchor: None,
            skew: 0.0,
            skew_before: 0.0,
            rate_skew: 0.0,
            base: None,
            passed: 0,
            newest: None,
            near: None,
            anchored_at: 0,
            pairs: true,
            unit: None,
        }
    }

    /// Reads a new pair when one is due (`now`: CLOCK_MONOTONIC ns). The first failure turns
    /// the mapping off for the run, with a notice.
    pub(crate) fn refresh(&mut self, device: &Device, now: u64, notices: &mut Vec<String>) {
        let short = self.wrap_ns.is_some_and(|w| w < SHORT_WRAP_NS);
        if self.unit_ns.is_none()
            || !self.pairs
            || (!short && self.anchor.is_some() && now.saturating_sub(self.anchored_at) < REFRESH_NS)
        {
            return;
        }
        let before = crate::host::monotonic_ns();
        let pair = device.global_timestamps();
        let after = crate::host::monotonic_ns();
        match pair {
            Ok((host, ticks)) => self.set_pair(before, after, host, ticks, now),
            Err(e) => self.lose(&e, notices),
        }
    }

    fn set_pair(&mut self, before: i64, after: i64, host: u64, device: u64, now: u64) {
        let unit = *self.unit.get_or_insert(if device.abs_diff(host) <= SYNCED_NS {
            PairUnit::HostNs
        } else {
            PairUnit::Ticks
        });
        let ticks = match unit {
            PairUnit::Ticks => device,
            PairUnit::HostNs => (u128::from(device) * u128::from(self.timer.hz) / 1_000_000_000) as u64,
        };
        let host = i128::from(host);
        let (before, after) = (i128::from(before), i128::from(after));
        let (host, unsure) =
            if (before..=after).contains(&host) { (host, 0) } else { ((before + after) / 2, (after - before) / 2) };
        let ticks = if self.timer.valid_bits < 64 { ticks & ((1u64 << self.timer.valid_bits) - 1) } else { ticks };
        let dev = self.timer.ticks_to_ns(ticks);
        let Some((a_host, a_dev)) = self.anchor else {
            self.jump(host, dev, now);
            return;
        };
        if unsure > UNSURE_NS && self.passed < MAX_PASSED {
            self.passed += 1;
            return;
        }
        self.passed = 0;
        let d = self.within_half_wrap(dev - a_dev);
        let mapped = a_host + d + slew_wide(d, self.skew_at(d));
        let off = host - mapped;
        if off.abs() > JUMP_NS {
            self.jump(host, dev, now);
            return;
        }
        if let Some((b_host, b_dev)) = self.base
            && host - b_host >= RATE_SPAN_NS
        {
            let span = host - b_host;
            let dev_span = self.unwound(dev - b_dev, span);
            if dev_span > 0 {
                self.rate_skew = (span as f64 / dev_span as f64 - 1.0).clamp(-MAX_SKEW, MAX_SKEW);
            }
            self.base = Some((host, dev));
        }
        // The new slope starts at the newest report placed (placed by this mapping; at the pair's
        // device time when none was since a jump): the reports still to come, older than the
        // pair but newer than those, lie after it, and nothing placed moves. Before it the
        // mapping stays the line it was there.
        let newest =
            self.newest.zip(self.unit_ns).map(|(s, u)| self.within_half_wrap(i128::from(s) * i128::from(u) - a_dev));
        let from = newest.filter(|&ds| ds <= d && d - ds < PLAUSIBLE_NS).unwrap_or(d);
        let (host_at, dev_at) = (a_host + from + slew_wide(from, self.skew_at(from)), a_dev + from);
        let dev_at = self.wrap_ns.map_or(dev_at, |w| dev_at.rem_euclid(w));
        self.skew_before = self.skew_at(from);
        self.skew = (self.rate_skew + off as f64 / SLEW_NS).clamp(-MAX_SKEW, MAX_SKEW);
        self.anchor = Some((host_at, dev_at));
        self.near = Near::of(host_at, dev_at, self.unit_ns, self.wrap_ns, self.skew, self.skew_before);
        self.anchored_at = now;
    }

    /// The slope less 1 the mapping follows `d` ns of device time from its anchor.
    fn skew_at(&self, d: i128) -> f64 {
        if d < 0 { self.skew_before } else { self.skew }
    }

    /// Says that reports up to the one stamped `stamp` (in the metric's unit) have been placed:
    /// a new pair's slope starts there.
    pub(crate) fn placed_up_to(&mut self, stamp: u64) {
        self.newest = Some(stamp);
    }

    /// Anchors the mapping at the pair (`host`, `dev`) itself, at the rate measured so far.
    fn jump(&mut self, host: i128, dev: i128, now: u64) {
        self.newest = None;
        self.skew = self.rate_skew;
        self.skew_before = self.skew;
        self.anchor = Some((host, dev));
        self.base = Some((host, dev));
        self.passed = 0;
        self.near = Near::of(host, dev, self.unit_ns, self.wrap_ns, self.skew, self.skew_before);
        self.anchored_at = now;
    }

    /// A difference of device times taken nearest to zero modulo the timer's wrap.
    fn within_half_wrap(&self, d: i128) -> i128 {
        match self.wrap_ns {
            Some(w) if !(-w / 2 < d && d <= w / 2) => {
                let d = d.rem_euclid(w);
                if d > w / 2 { d - w } else { d }
            }
            _ => d,
        }
    }

    /// A difference of device times modulo the timer's wrap, taken nearest to `host_span` (the
    /// host time between the two: the timer may have wrapped in between, more than once).
    fn unwound(&self, d: i128, host_span: i128) -> i128 {
        match self.wrap_ns {
            Some(w) => {
                let d = d.rem_euclid(w);
                d + ((host_span - d) as f64 / w as f64).round() as i128 * w
            }
            None => d,
        }
    }

    fn lose(&mut self, e: &ZeError, notices: &mut Vec<String>) {
        self.pairs = false;
        self.anchor = None;
        self.near = None;
        notices.push(crate::optional::off("mapping streamer report times onto the host clock", e));
    }

    /// The host time of a report stamped `stamp` (in the metric's unit), read at `now`;
    /// `None` when it cannot be placed (see the module doc).
    #[inline]
    pub(crate) fn map(&self, stamp: Option<u64>, now: u64) -> Option<i64> {
        let stamp = stamp?;
        if let Some(t) = self.near.and_then(|n| n.map(stamp, now)) {
            return t;
        }
        self.map_wide(stamp, now)
    }

    /// [`Self::map`] in 128 bits: a report beyond half a wrap of its pair, or values that do not
    /// fit `i64`.
    #[cold]
    fn map_wide(&self, stamp: u64, now: u64) -> Option<i64> {
        let (host, dev) = self.anchor?;
        let report = i128::from(stamp) * i128::from(self.unit_ns?);
        let mut d = report - dev;
        if let Some(w) = self.wrap_ns {
            // Within half a wrap of the anchor already (a report read soon after its pair): no
            // 128-bit division.
            if !(-w / 2 < d && d <= w / 2) {
                d = d.rem_euclid(w);
                if d > w / 2 {
                    d -= w;
                }
            }
        }
        let t = host + d + slew_wide(d, self.skew_at(d));
        ((t - i128::from(now)).abs() < PLAUSIBLE_NS).then_some(t as i64)
    }

    #[cfg(test)]
    fn map_wide_only(&self, stamp: Option<u64>, now: u64) -> Option<i64> {
        self.map_wide(stamp?, now)
    }

    /// Says once, at setup, why report times will not be mapped (a unit that is not a time).
    pub(crate) fn unit_notice(&self, metric: &str, unit: &str) -> Option<String> {
        self.unit_ns.is_none().then(|| {
            format!(
                "the report time of {metric} is in {unit:?}, not a unit of time: its samples are placed back from each \
                 read by whole sampling periods"
            )
        })
    }
}

/// A pair's anchor in `i64`: most reports lie within half a wrap of it, where their time is
/// `host + (stamp × unit − dev)` without a remainder, in 64 bits (stamping in 128 bits was
/// 3.5 % of `record`'s CPU at 100k reports a second).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Near {
    host: i64,
    dev: i64,
    unit: i64,
    /// Half the timer's wrap (`i64::MAX` without one).
    half: i64,
    /// The mapping's slope less 1, after the anchor and before it.
    skew: f64,
    skew_before: f64,
}

impl Near {
    fn of(host: i128, dev: i128, unit: Option<u64>, wrap: Option<i128>, skew: f64, skew_before: f64) -> Option<Near> {
        Some(Near {
            host: i64::try_from(host).ok()?,
            dev: i64::try_from(dev).ok()?,
            unit: i64::try_from(unit?).ok()?,
            half: wrap.map_or(Some(i64::MAX), |w| i64::try_from(w / 2).ok())?,
            skew,
            skew_before,
        })
    }

    /// `Some(answer)` where 64 bits settle the report's time; `None` to take the wide way.
    #[inline(always)]
    fn map(self, stamp: u64, now: u64) -> Option<Option<i64>> {
        let d = i64::try_from(stamp).ok()?.checked_mul(self.unit)?.checked_sub(self.dev)?;
        if !(-self.half < d && d <= self.half) {
            return None;
        }
        let t = self.host.checked_add(d)?.checked_add(slew(d, if d < 0 { self.skew_before } else { self.skew }))?;
        let off = t.checked_sub(i64::try_from(now).ok()?)?;
        Some((off.unsigned_abs() < PLAUSIBLE_NS as u64).then_some(t))
    }
}

/// What a slope of `1 + skew` adds over `d` ns of device time, in whole ns toward zero (a
/// conversion, not a rounding call per report; `d` beyond 2^53 ns, 104 days, is rounded on the
/// way). It grows with `d`, so mapped times keep the reports' order.
#[inline(always)]
fn slew(d: i64, skew: f64) -> i64 {
    (d as f64 * skew) as i64
}

/// [`slew`] of a difference in 128 bits.
fn slew_wide(d: i128, skew: f64) -> i128 {
    (d as f64 * skew) as i128
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(timer: Timer, unit: &str, host: u64, ticks: u64) -> ReportClock {
        let mut c = ReportClock::new(timer, unit);
        c.set_pair(host as i64 - 10, host as i64 + 10, host, ticks, host);
        c
    }

    #[test]
    fn units_of_time_scale_to_ns_and_others_are_refused() {
        assert_eq!(unit_ns("ns"), Some(1));
        assert_eq!(unit_ns(""), Some(1));
        assert_eq!(unit_ns(" us "), Some(1_000));
        assert_eq!(unit_ns("ms"), Some(1_000_000));
        assert_eq!(unit_ns("cycles"), None);
    }

    #[test]
    fn the_timer_takes_the_exact_rate_only_when_both_answers_agree() {
        let t = Timer::from_resolutions(52, Some(19_200_000), 32);
        assert_eq!(t, Timer { hz: 19_200_000, valid_bits: 32 });
        // A driver that ignored the 1.2 type answered ns per tick there too.
        assert_eq!(Timer::from_resolutions(52, Some(52), 32).hz, 1_000_000_000 / 52);
        assert_eq!(Timer::from_resolutions(0, None, 0), Timer::NS);
        assert_eq!(Timer::from_resolutions(1, Some(1_000_000_000), 64), Timer::NS);
    }

    #[test]
    fn a_report_in_ns_maps_through_a_tick_pair() {
        // 19.2 MHz: 1_920_000 ticks are 100 ms.
        let timer = Timer { hz: 19_200_000, valid_bits: 64 };
        let c = clock(timer, "ns", 5_000_000_000, 1_920_000);
        // A report 1 ms after the pair's device time.
        assert_eq!(c.map(Some(101_000_000), 5_000_000_000), Some(5_001_000_000));
        // In µs.
        let c = clock(timer, "us", 5_000_000_000, 1_920_000);
        assert_eq!(c.map(Some(99_000), 5_000_000_000), Some(4_999_000_000));
    }

    #[test]
    fn a_wrapped_timer_maps_across_the_wrap() {
        // 24 valid bits at 19.2 MHz wrap every 873.8 ms.
        let timer = Timer { hz: 19_200_000, valid_bits: 24 };
        let wrap = timer.wrap_ns().unwrap() as u64;
        // The pair just before the wrap, the report just after it (its ns count restarted).
        let ticks = (1u64 << 24) - 192; // 10 µs before the wrap
        let c = clock(timer, "ns", 7_000_000_000, ticks);
        let report = 20_000; // 20 µs after the wrap
        let t = c.map(Some(report), 7_000_000_000).unwrap();
        assert_eq!(t, 7_000_000_000 + 30_000, "10 µs to the wrap and 20 µs after it");
        // A report of before the pair, across the wrap the other way.
        let c = clock(timer, "ns", 7_000_000_000, 192);
        let t = c.map(Some(wrap - 20_000), 7_000_000_000).unwrap();
        assert_eq!(t, 7_000_000_000 - 30_000);
    }

    #[test]
    fn a_synchronized_device_gives_host_ns_and_reports_stay_ticks() {
        // 19.2 MHz, 32 valid bits; the device's timer runs on the host's ns (synchronized), so a
        // report's tick count (as ns) is the host time, modulo the timer's wrap.
        let timer = Timer { hz: 19_200_000, valid_bits: 32 };
        let host = 5_000_000_000_000u64; // 5000 s after boot
        let c = clock(timer, "ns", host, host);
        assert_eq!(c.unit, Some(PairUnit::HostNs));
        let ticks_now = (u128::from(host) * 19_200_000 / 1_000_000_000) as u64 & 0xffff_ffff;
        let report_ns = |ticks: u64| (u128::from(ticks) * 1_000_000_000 / 19_200_000) as u64;
        // A report 1 ms (19,200 ticks) after the pair maps 1 ms after it.
        let t = c.map(Some(report_ns(ticks_now + 19_200)), host).unwrap();
        assert!((t - (host as i64 + 1_000_000)).abs() <= 52, "{t}");
        // The same device value taken for ticks (the old reading) lands far from the read.
        let mut old = ReportClock::new(timer, "ns");
        old.unit = Some(PairUnit::Ticks);
        old.set_pair(host as i64 - 10, host as i64 + 10, host, host, host);
        assert_ne!(old.map(Some(report_ns(ticks_now + 19_200)), host), Some(t));
        // A tick count of another epoch is ticks.
        let c = clock(timer, "ns", host, 1_920_000);
        assert_eq!(c.unit, Some(PairUnit::Ticks));
    }

    #[test]
    fn the_64_bit_way_answers_as_the_128_bit_way() {
        let timers = [
            Timer::NS,
            Timer { hz: 19_200_000, valid_bits: 24 },
            Timer { hz: 19_200_000, valid_bits: 32 },
            Timer { hz: 12_500_000, valid_bits: 36 },
            Timer { hz: 38_400_000, valid_bits: 64 },
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut near = 0;
        for timer in timers {
            for unit in ["ns", "us"] {
                for (host, ticks) in
                    [(5_000_000_000u64, 1_920_000u64), (1 << 40, (1 << 24) - 192), (1 << 62, 7), (3, u64::MAX)]
                {
                    let mut c = clock(timer, unit, host, ticks);
                    // And with a slope, as a drifting timer's mapping has.
                    if rnd() % 2 == 0 {
                        (c.skew, c.skew_before) = (3.7e-5, -2.1e-5);
                        c.near =
                            c.anchor.and_then(|(h, d)| Near::of(h, d, c.unit_ns, c.wrap_ns, c.skew, c.skew_before));
                    }
                    let dev = c.anchor.unwrap().1;
                    for _ in 0..400 {
                        // Around the pair's device time, across wraps, at the edges of u64.
                        let spread = 1u64 << (rnd() % 64);
                        let base = u64::try_from(dev.max(0) / i128::from(unit_ns(unit).unwrap())).unwrap_or(u64::MAX);
                        let stamp = match rnd() % 4 {
                            0 => base.wrapping_add(rnd() % spread),
                            1 => base.wrapping_sub(rnd() % spread),
                            2 => rnd(),
                            _ => u64::MAX - rnd() % 3,
                        };
                        let now = host.wrapping_add(rnd() % (1 << 36)).wrapping_sub(1 << 35);
                        assert_eq!(
                            c.map(Some(stamp), now),
                            c.map_wide_only(Some(stamp), now),
                            "{timer:?} {unit} {host} {ticks} {stamp} {now}"
                        );
                        near += usize::from(c.near.and_then(|n| n.map(stamp, now)).is_some());
                    }
                }
            }
        }
        assert!(near > 1_000, "the 64-bit way answered {near} times");
    }

    #[test]
    fn a_host_time_from_another_clock_is_replaced_by_the_midpoint() {
        let mut c = ReportClock::new(Timer::NS, "ns");
        c.set_pair(1_000, 1_100, 9_999_999, 500, 1_100);
        assert_eq!(c.anchor, Some((1_050, 500)));
        let mut c = ReportClock::new(Timer::NS, "ns");
        c.set_pair(1_000, 1_100, 1_020, 500, 1_100);
        assert_eq!(c.anchor, Some((1_020, 500)), "a host time between the readings is kept");
    }

    /// A deterministic jitter in ±`amp` ns.
    fn jitter(seed: &mut u64, amp: i64) -> i64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        (*seed % (2 * amp as u64 + 1)) as i64 - amp
    }

    /// Reports every 10 µs for 12 s on a timer running `ppm` fast, read as a streamer's are:
    /// every 100 ms, in parts of 1 638 reports 0.3 ms apart, a pair taken before a part when one
    /// is due (every second; before every part for a timer wrapping within [`SHORT_WRAP_NS`]),
    /// its host time another clock's (the midpoint of a call of 4 µs ± 2 µs): the mapped times,
    /// and each report's true host time.
    fn drifting(ppm: i64, timer: Timer) -> Vec<(i64, i64)> {
        let (host0, dev0) = (50_000_000_000i64, 7_000_000_000i64);
        let dev_at = |host: i64| dev0 + (host - host0) + (host - host0) * ppm / 1_000_000;
        let ticks_at = |host: i64| {
            let ticks = (i128::from(dev_at(host)) * i128::from(timer.hz) / 1_000_000_000) as u64;
            if timer.valid_bits < 64 { ticks & ((1 << timer.valid_bits) - 1) } else { ticks }
        };
        let short = timer.wrap_ns().is_some_and(|w| w < SHORT_WRAP_NS);
        let mut c = ReportClock::new(timer, "ns");
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut out = Vec::new();
        let mut paired = i64::MIN / 2;
        let (mut next, mut read_at) = (host0, host0);
        while read_at < host0 + 12_000_000_000 {
            for (part, reports) in (0..).zip((next..read_at).step_by(10_000).collect::<Vec<_>>().chunks(1_638)) {
                let at = read_at + part * 300_000;
                if short || at - paired >= 1_000_000_000 {
                    let before = at - 2_000 + jitter(&mut seed, 1_000);
                    let after = at + 2_000 + jitter(&mut seed, 1_000);
                    c.set_pair(before, after, 1, ticks_at(at), at as u64);
                    paired = at;
                }
                for &host in reports {
                    let stamp = timer.ticks_to_ns(ticks_at(host)) as u64;
                    out.push((c.map(Some(stamp), at as u64).expect("a report near its pair"), host));
                }
                c.placed_up_to(timer.ticks_to_ns(ticks_at(*reports.last().unwrap())) as u64);
            }
            next = next.max(read_at);
            read_at += 100_000_000;
        }
        out
    }

    #[test]
    fn a_timer_drifting_from_the_host_clock_maps_without_steps_and_follows_the_host() {
        for timer in [Timer::NS, Timer { hz: 19_200_000, valid_bits: 32 }, Timer { hz: 19_200_000, valid_bits: 24 }] {
            for ppm in [50, -50, 200] {
                let mapped = drifting(ppm, timer);
                // Every step one report period (a tick of a 19.2 MHz timer is 52 ns): no report
                // placed before the one before it, none with a hole after it.
                // Until the rate is measured the steps are the device's, `ppm` long.
                let tick = if timer.hz == 19_200_000 { 53 } else { 2 } + ppm.abs() / 100;
                let worst = mapped.windows(2).map(|w| (w[1].0 - w[0].0 - 10_000).abs()).max().unwrap();
                assert!(worst <= tick, "{timer:?} {ppm} ppm: a step off the 10 µs period by {worst} ns");
                // Within the pairs' jitter of the host's time, once the rate is measured and the
                // offset made up (a pair a second: at the second pair; pairs 100 ms apart make up
                // a tenth of it each).
                let off = mapped[500_000..].iter().map(|(t, host)| (t - host).abs()).max().unwrap();
                assert!(off < 10_000, "{timer:?} {ppm} ppm: {off} ns from the host's time");
                let first = mapped[..500_000].iter().map(|(t, host)| (t - host).abs()).max().unwrap();
                assert!(
                    first < (ppm.abs() + 5) * 1_000,
                    "{timer:?} {ppm} ppm: {first} ns off before the rate is known"
                );
            }
        }
    }

    #[test]
    fn a_pair_far_off_the_mapping_is_jumped_to_and_an_unsure_one_is_passed_over() {
        let mut c = ReportClock::new(Timer::NS, "ns");
        c.set_pair(1_000_000, 1_000_010, 1, 5_000_000, 1_000_010);
        // A second on, the timer was reset: its device time jumped back to 1 µs.
        c.set_pair(1_001_000_000, 1_001_000_010, 1, 1_000, 1_001_000_010);
        assert_eq!(c.anchor, Some((1_001_000_005, 1_000)), "jumped to");
        assert_eq!(c.map(Some(11_000), 1_001_000_010), Some(1_001_010_005));
        // A call held up for 3 ms, its host value another clock's: the midpoint is 1.5 ms unsure.
        let before = c.anchor;
        c.set_pair(1_002_000_000, 1_005_000_000, 1, 4_500_000, 1_005_000_000);
        assert_eq!(c.anchor, before, "passed over");
        assert_eq!(c.anchored_at, 1_001_000_010, "asked again at the next read");
        // Passed over at most MAX_PASSED times in a row: the next is taken (here 2 ms off the
        // mapping: jumped to).
        for _ in 1..MAX_PASSED {
            c.set_pair(1_002_000_000, 1_005_000_000, 1, 4_500_000, 1_005_000_000);
        }
        assert_eq!(c.anchor, before);
        c.set_pair(1_002_000_000, 1_005_000_000, 1, 4_500_000, 1_005_000_000);
        assert_eq!(c.anchor, Some((1_003_500_000, 4_500_000)));
    }

    #[test]
    fn implausible_or_unplaceable_reports_are_left_to_the_caller() {
        let c = clock(Timer::NS, "ns", 1_000_000_000_000, 0);
        assert_eq!(c.map(Some(20_000_000_000), 1_000_000_000_000), None, "20 s away from the read");
        assert_eq!(c.map(None, 1_000_000_000_000), None);
        let c = clock(Timer::NS, "cycles", 1_000, 0);
        assert_eq!(c.map(Some(5), 1_000), None);
        assert!(c.unit_notice("QueryBeginTime", "cycles").unwrap().contains("\"cycles\""));
    }
}
