//! Rates of cumulative counters.
//!
//! A cumulative counter (bytes moved, cycles elapsed, ...) is only interesting
//! as a rate. The rate at sample `i` is `(raw[i] - raw[i-1]) / (t[i] - t[i-1])`
//! in units per second. It is derived once at ingest into the pyramid (every
//! bucket of every level aggregates rates, never totals), so no frame ever
//! recomputes a rate series. Only the raw totals are stored per sample: a query
//! at full zoom re-derives the at most few hundred rates it touches from two
//! adjacent totals with [`rate_between`], the same pure function ingest uses,
//! so the leaves agree bit for bit with the buckets above them. Storing the rate
//! column as well would double the memory of every cumulative counter.
//!
//! Rules:
//! - the first sample of a stream and the first sample after a gap have no rate
//!   (there is no previous sample they connect to);
//! - a total that goes down is a wrap when the series has a `wrap` modulus
//!   (`delta + wrap`), and a reset otherwise: a reset sample has no rate;
//! - a non-finite total on either side gives a NaN rate (counted as non-finite);
//! - a series of busy time has its rate scaled into a percentage of the elapsed time
//!   (`SeriesKind::rate_scale`) and clamped to 0–100 %: a device cannot be busy for longer than
//!   the time that passed, so a share above 100 % is the two samples' times not matching the
//!   counter's (see below); the store counts the samples it clamped
//!   ([`crate::Store::busy_clamps`]). A plain cumulative counter's scale is 1, and it is not
//!   clamped.
//!
//! Whose time a rate is over: a sample's time is the device's timestamp of the snapshot where
//! the stream has one (the layout's `timestamp`, the streamer's and tracer's reports), mapped
//! onto the host clock, so the rate is the counter's increase over the device time between the
//! two snapshots — exact up to the device timer's resolution. Where the exported memory carries
//! no timestamp, a sample's time is the host's time of the read: the increase is over the
//! time between the two snapshots the device wrote, but it is divided by the time between the
//! two reads, and the reads' jitter (a read late after a read early) shows in the rate. Such a
//! rate is what it is over the read interval, never more exact: a busy share is clamped and
//! counted; a cumulative rate is shown as derived (the pyramid's means over a longer span
//! average the jitter out, as the counter's increase over the span is exact).

use super::agg::missing;

/// Rate between two consecutive totals `dt_ns` apart, or the "no value" marker
/// (see [`super::agg::missing`]) for a reset. `dt_ns` is > 0 (timestamps
/// strictly increase).
#[inline]
pub(crate) fn rate_raw(prev: f64, cur: f64, dt_ns: i64, rule: Rule) -> f64 {
    rate_secs(prev, cur, dt_ns as f64 * 1e-9, rule)
}

/// [`rate_raw`] with the time between the totals given as `dt_ns as f64 * 1e-9` (ingest
/// computes it once per sample for every counter of the stream).
#[inline]
pub(crate) fn rate_secs(prev: f64, cur: f64, dt_secs: f64, rule: Rule) -> f64 {
    rate_secs_clamped(prev, cur, dt_secs, rule).0
}

/// How far over 100 % a busy share is clamped without being told: the device counts its busy
/// time by its own timer, and a sample's time is the host's, through a mapping whose slope
/// follows the two clocks' drift (tens of ppm, `zescope-sampler`'s report and export clocks):
/// a device busy all along reads that much over.
pub(crate) const SHARE_SLACK: f64 = 1e-3;

/// [`rate_secs`], and whether a busy share was out of 0–100 % (by more than [`SHARE_SLACK`]
/// over) and clamped.
#[inline]
pub(crate) fn rate_secs_clamped(prev: f64, cur: f64, dt_secs: f64, rule: Rule) -> (f64, bool) {
    let delta = delta_raw(prev, cur, rule.wrap);
    if delta.is_nan() {
        return (delta, false);
    }
    let r = delta / dt_secs * rule.scale;
    if rule.share && !(0.0..=100.0).contains(&r) && !r.is_nan() {
        return (r.clamp(0.0, 100.0), !(0.0..=100.0 * (1.0 + SHARE_SLACK)).contains(&r));
    }
    (r, false)
}

/// How a running total becomes what is plotted: its wrap modulus, the factor its rate per
/// second is multiplied by (1 for a cumulative counter; `SeriesKind::rate_scale`), and whether
/// it is a busy share (clamped to 0–100 %).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rule {
    pub wrap: Option<f64>,
    pub scale: f64,
    pub share: bool,
}

impl Rule {
    /// The rule of a series of `kind` plotted as a rate (`None`: plotted as read).
    pub(crate) fn of(kind: &crate::SeriesKind) -> Option<Rule> {
        let wrap = kind.rate_wrap()?;
        Some(Rule {
            wrap: wrap.filter(|m| m.is_finite() && *m > 0.0),
            scale: kind.rate_scale(),
            share: matches!(kind, crate::SeriesKind::BusyTime { .. }),
        })
    }
}

/// Increase between two consecutive totals: `cur - prev`, plus the modulus across a wrap; NaN
/// when a total is not finite, the "no value" marker for a reset. The one rule behind every
/// rate and every total over a range.
#[inline]
pub(crate) fn delta_raw(prev: f64, cur: f64, wrap: Option<f64>) -> f64 {
    if !(prev.is_finite() && cur.is_finite()) {
        return f64::NAN;
    }
    let delta = cur - prev;
    if delta < 0.0 {
        return match wrap {
            Some(m) if delta + m >= 0.0 => delta + m,
            _ => missing(),
        };
    }
    delta
}

/// Increase between two consecutive totals of a cumulative counter (see [`rate_between`]):
/// `None` for a reset, NaN when a total is not finite.
pub fn delta_between(prev: f64, cur: f64, wrap: Option<f64>) -> Option<f64> {
    super::agg::to_option(delta_raw(prev, cur, wrap))
}

/// Rate in units per second between two consecutive totals of a cumulative
/// counter: `None` when the counter was reset (it went down and has no `wrap`
/// modulus, or went down by more than the modulus), NaN when a total is not
/// finite. This is the definition the store applies; it is public so callers
/// (export, tests) can derive exactly the same numbers.
pub fn rate_between(prev: f64, cur: f64, dt_ns: i64, wrap: Option<f64>) -> Option<f64> {
    scaled_rate_between(prev, cur, dt_ns, wrap, 1.0)
}

/// [`rate_between`] multiplied by `scale` (`SeriesKind::rate_scale`: a series of busy time is
/// plotted as a percentage), as the store derives it.
pub fn scaled_rate_between(prev: f64, cur: f64, dt_ns: i64, wrap: Option<f64>, scale: f64) -> Option<f64> {
    super::agg::to_option(rate_raw(prev, cur, dt_ns, Rule { wrap, scale, share: false }))
}

/// What the store plots between two consecutive raw values of a series of `kind` plotted as a
/// rate: [`rate_between`] with the kind's wrap and scale, a busy share clamped to 0–100 %.
/// `None` for a reset, or for a kind plotted as read (gauge, state).
pub fn kind_rate_between(prev: f64, cur: f64, dt_ns: i64, kind: &crate::SeriesKind) -> Option<f64> {
    super::agg::to_option(rate_raw(prev, cur, dt_ns, Rule::of(kind)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn plain_rate_is_delta_over_seconds() {
        assert_eq!(rate_between(100.0, 150.0, 500 * MS, None), Some(100.0));
    }

    #[test]
    fn wrap_adds_the_modulus() {
        let m = 2f64.powi(32);
        // 0xFFFF_FFF0 -> 0x10 is 32 counts in 1 ms.
        let r = rate_between(m - 16.0, 16.0, MS, Some(m));
        assert_eq!(r, Some(32_000.0));
    }

    #[test]
    fn a_decrease_without_modulus_is_a_reset_with_no_rate() {
        assert_eq!(rate_between(1000.0, 3.0, MS, None), None);
        // Decreasing by more than the modulus cannot be a single wrap.
        assert_eq!(rate_between(1000.0, 3.0, MS, Some(100.0)), None);
    }

    #[test]
    fn busy_time_is_a_share_of_the_elapsed_time_in_percent() {
        // 250 µs busy (in ns) over 1 ms: 25 %.
        let ns = crate::SeriesKind::BusyTime { wrap: None, unit_s: 1e-9 };
        let r = scaled_rate_between(1_000.0, 251_000.0, MS, None, ns.rate_scale()).unwrap();
        assert!((r - 25.0).abs() < 1e-9, "{r}");
        // In µs, the same share.
        let us = crate::SeriesKind::BusyTime { wrap: None, unit_s: 1e-6 };
        let r = scaled_rate_between(0.0, 250.0, MS, None, us.rate_scale()).unwrap();
        assert!((r - 25.0).abs() < 1e-9, "{r}");
        assert_eq!(crate::SeriesKind::Cumulative { wrap: None }.rate_scale(), 1.0);
        assert_eq!(crate::SeriesKind::State.rate_wrap(), None, "a state is read as it is");
    }

    #[test]
    fn a_busy_share_is_clamped_to_the_elapsed_time_and_a_counter_is_not() {
        // 1.07 ms busy over 1 ms (two reads closer than the snapshots they read): 100 %, said.
        let ns = crate::SeriesKind::BusyTime { wrap: None, unit_s: 1e-9 };
        let rule = Rule::of(&ns).unwrap();
        assert_eq!(rate_secs_clamped(0.0, 1_070_000.0, 1e-3, rule), (100.0, true));
        assert_eq!(kind_rate_between(0.0, 1_070_000.0, MS, &ns), Some(100.0));
        // 50 ppm over (a device busy all along, its timer 50 ppm fast): 100 %, not said.
        assert_eq!(rate_secs_clamped(0.0, 1_000_050.0, 1e-3, rule), (100.0, false));
        assert_eq!(rate_secs_clamped(0.0, 1_002_000.0, 1e-3, rule), (100.0, true), "0.2 % over is said");
        let (half, clamped) = rate_secs_clamped(0.0, 500_000.0, 1e-3, rule);
        assert!((half - 50.0).abs() < 1e-9 && !clamped, "{half}");
        // A wrap or reset is not a clamp.
        assert!(!rate_secs_clamped(10.0, 5.0, 1e-3, rule).1);
        // Cycles are not clamped: 2.23 G over a second is what was derived.
        let cum = crate::SeriesKind::Cumulative { wrap: None };
        assert_eq!(kind_rate_between(0.0, 2.23e9, 1_000 * MS, &cum), Some(2.23e9));
        assert_eq!(kind_rate_between(0.0, 1.0, MS, &crate::SeriesKind::Gauge), None);
    }

    #[test]
    fn non_finite_totals_give_nan() {
        assert!(rate_between(f64::NAN, 1.0, MS, None).unwrap().is_nan());
        assert!(rate_between(1.0, f64::INFINITY, MS, None).unwrap().is_nan());
    }
}
