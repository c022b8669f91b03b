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
//!   (`SeriesKind::rate_scale`); a plain cumulative counter's scale is 1.

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
    let delta = delta_raw(prev, cur, rule.wrap);
    if delta.is_nan() { delta } else { delta / dt_secs * rule.scale }
}

/// How a running total becomes what is plotted: its wrap modulus and the factor its rate per
/// second is multiplied by (1 for a cumulative counter; `SeriesKind::rate_scale`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rule {
    pub wrap: Option<f64>,
    pub scale: f64,
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
    super::agg::to_option(rate_raw(prev, cur, dt_ns, Rule { wrap, scale }))
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
    fn non_finite_totals_give_nan() {
        assert!(rate_between(f64::NAN, 1.0, MS, None).unwrap().is_nan());
        assert!(rate_between(1.0, f64::INFINITY, MS, None).unwrap().is_nan());
    }
}
