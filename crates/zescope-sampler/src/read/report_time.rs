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
    /// (host ns, device ns) of the last pair.
    anchor: Option<(i128, i128)>,
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
        let host = if (before..=after).contains(&host) { host } else { (before + after) / 2 };
        let ticks = if self.timer.valid_bits < 64 { ticks & ((1u64 << self.timer.valid_bits) - 1) } else { ticks };
        let dev = self.timer.ticks_to_ns(ticks);
        self.anchor = Some((host, dev));
        self.near = Near::of(host, dev, self.unit_ns, self.wrap_ns);
        self.anchored_at = now;
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
        let t = host + d;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Near {
    host: i64,
    dev: i64,
    unit: i64,
    /// Half the timer's wrap (`i64::MAX` without one).
    half: i64,
}

impl Near {
    fn of(host: i128, dev: i128, unit: Option<u64>, wrap: Option<i128>) -> Option<Near> {
        Some(Near {
            host: i64::try_from(host).ok()?,
            dev: i64::try_from(dev).ok()?,
            unit: i64::try_from(unit?).ok()?,
            half: wrap.map_or(Some(i64::MAX), |w| i64::try_from(w / 2).ok())?,
        })
    }

    /// `Some(answer)` where 64 bits settle the report's time; `None` to take the wide way.
    #[inline(always)]
    fn map(self, stamp: u64, now: u64) -> Option<Option<i64>> {
        let d = i64::try_from(stamp).ok()?.checked_mul(self.unit)?.checked_sub(self.dev)?;
        if !(-self.half < d && d <= self.half) {
            return None;
        }
        let t = self.host.checked_add(d)?;
        let off = t.checked_sub(i64::try_from(now).ok()?)?;
        Some((off.unsigned_abs() < PLAUSIBLE_NS as u64).then_some(t))
    }
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
                    let c = clock(timer, unit, host, ticks);
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
        c.set_pair(1_000, 1_100, 1_020, 500, 1_100);
        assert_eq!(c.anchor, Some((1_020, 500)), "a host time between the readings is kept");
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
