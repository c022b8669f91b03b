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
#[path = "report_time_tests.rs"]
mod tests;
