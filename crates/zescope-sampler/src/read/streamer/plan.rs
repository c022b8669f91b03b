//! How the values of a time-based streamer's report become samples, metric by metric.
//!
//! Calculate gives one value per metric per report, and each value is about that report alone:
//! an EVENT or THROUGHPUT counts what happened within the report's interval, a DURATION is the
//! time busy within it. So, by metric type (the rules of `layout::kinds`, applied per report;
//! the report's duration is the sampling period the driver granted):
//!
//! - EVENT, EVENT_WITH_RANGE, THROUGHPUT: a count, kept as exported memory gives it: the running
//!   total of the reports' counts (`Kind::Cumulative` in the metric's unit, "events" without one;
//!   the store plots its rate per second, Prometheus serves it as a counter), so a report's count
//!   is never divided by a period and every path treats a count alike; a unit that is already a
//!   level or a rate (MHz, %, W, "…/s") as it is;
//! - DURATION in a unit of time: busy time, as exported memory gives it: a running total of the
//!   reports' busy time in the metric's unit (`Kind::Busy`; the store plots it as the share of
//!   the time between two reports it grew by, Prometheus serves it as busy seconds), each
//!   report's time clamped to 0..= the report's length; a report busy up to [`BUSY_SLACK_PCT`] %
//!   longer than itself is report-timing jitter, anything further (or below 0) is no busy time
//!   of the report at all, and a notice says so once per metric ([`Conv::apply`] tells the
//!   caller); a DURATION in percent as it is, in another unit as a count;
//! - RATIO: as it is;
//! - TIMESTAMP: the first one is the report's time, none is a series;
//! - RAW, FLAG (and instruction pointers): states, as they are (`Kind::State`: drawn as steps,
//!   never summed or averaged);
//! - any other type: as it is.
//!
//! A unit "percent" is written "%".

use level_zero_sys::*;

use crate::layout::Kind;
use crate::layout::kinds::{counts, is_level_unit, is_state, plain_unit, unit_seconds};
use zescope_ze::Metric;

use crate::protocol::SeriesInfo;

/// How far (percent of the report's length) a report's busy time may exceed the report before it
/// is said to be no busy time of it: less is the jitter of report times against the period,
/// counted as the whole report.
pub(crate) const BUSY_SLACK_PCT: f64 = 5.0;

/// What to do with one metric's value of a report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Column {
    /// The report's time (the first timestamp metric).
    Time,
    /// Plotted, converted so.
    Series(Conv),
    /// Not plotted (not chosen, or a further timestamp).
    Skip,
}

/// How a plotted value is converted from what the report holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Conv {
    /// As it is (ratios, levels, states).
    AsIs,
    /// A count within the report: added to the column's running total (the reader keeps it).
    Count,
    /// Time busy within the report, in units of `unit_s` seconds: clamped to the report's
    /// length, it is added to the column's running total (the reader keeps it).
    Busy {
        /// Seconds per unit of the value.
        unit_s: f64,
    },
    /// [`Conv::Busy`] bound to a period ([`Conv::at`]): time busy within a report `units` of the
    /// value's units long.
    BusyOf {
        /// The report's length in the value's units.
        units: f64,
    },
}

impl Conv {
    /// The conversion for reports of a period at which `per_s` reports make a second, with what
    /// depends on the period worked out once ([`Conv::apply`] of the result gives the same).
    pub(crate) fn at(self, per_s: f64) -> Conv {
        match self {
            Conv::Busy { unit_s } => Conv::BusyOf { units: report_units(unit_s, per_s) },
            c => c,
        }
    }

    /// The value of the report for `x` (for a count and busy time, what is added to its running
    /// total) at a period at which `per_s` reports make a second ([`per_second`]), and whether
    /// it was out of what it can be (busy time beyond the report's length and its slack, or
    /// below 0: clamped to 0..= the report's length; a count below 0: none, NaN).
    pub(crate) fn apply(self, x: f64, per_s: f64) -> (f64, bool) {
        match self {
            Conv::AsIs => (x, false),
            // A count below zero is none: no report counts less than nothing.
            Conv::Count if x < 0.0 => (f64::NAN, true),
            Conv::Count => (x, false),
            Conv::Busy { unit_s } => Conv::BusyOf { units: report_units(unit_s, per_s) }.apply(x, per_s),
            Conv::BusyOf { units } => {
                if x.is_nan() {
                    return (x, false);
                }
                (x.clamp(0.0, units), !(0.0..=units * (1.0 + BUSY_SLACK_PCT / 100.0)).contains(&x))
            }
        }
    }
}

/// A report's length in units of `unit_s` seconds, at `per_s` reports a second: the nearest whole
/// number where it is one to within rounding (10 000 ns at 100 000 reports a second).
fn report_units(unit_s: f64, per_s: f64) -> f64 {
    let units = 1.0 / (unit_s * per_s);
    let whole = units.round();
    if (units - whole).abs() <= 1e-9 * whole { whole } else { units }
}

/// Reports a second at a period of `period_ns`: exact for the periods streamers give (10 µs ×
/// 2^k divides 10^9 into a binary fraction), so a report's length in a unit of time worked out
/// from it is the whole number it is ([`Conv::at`]).
pub(crate) fn per_second(period_ns: u64) -> f64 {
    1e9 / period_ns.max(1) as f64
}

/// The series a metric gives and how its values become theirs: `None` for a metric that is no
/// series (a timestamp).
pub(crate) fn column_of(
    metric_type: zet_metric_type_t,
    name: &str,
    description: &str,
    units: &str,
) -> Option<(Conv, SeriesInfo)> {
    let series = |unit: String, kind: Kind| SeriesInfo {
        name: name.to_owned(),
        description: description.to_owned(),
        unit,
        kind,
        wrap: None,
    };
    let count = || {
        let unit = if units.trim().is_empty() { "events" } else { units.trim() };
        (Conv::Count, series(unit.to_owned(), Kind::Cumulative))
    };
    let as_is = |kind| (Conv::AsIs, series(plain_unit(units), kind));
    Some(match metric_type {
        ZET_METRIC_TYPE_TIMESTAMP => return None,
        ZET_METRIC_TYPE_DURATION => match unit_seconds(units) {
            Some(unit_s) => (Conv::Busy { unit_s }, series(units.trim().to_owned(), Kind::Busy)),
            None if is_level_unit(units) => as_is(Kind::Gauge),
            None => count(),
        },
        t if counts(t) && is_level_unit(units) => as_is(Kind::Gauge),
        t if counts(t) => count(),
        t if is_state(t, units) => as_is(Kind::State),
        _ => as_is(Kind::Gauge),
    })
}

/// How a streamed group's metrics become samples: the series they give and what to do with
/// each metric's value.
pub(crate) struct ReportPlan {
    /// The series, set after set.
    pub series: Vec<SeriesInfo>,
    /// Per metric of the group, in its order.
    pub columns: Vec<Column>,
    /// The metric name of each plotted column, in order (for notices).
    pub names: Vec<String>,
    /// The report time's metric and unit (the first timestamp metric), if the group has one.
    pub time: Option<(String, String)>,
    /// Value sets per report.
    pub sets: usize,
}

/// The series a streamed group's metrics give (all, or only `wanted` when not empty), and for
/// each metric what to do with it. `sets` value sets come from each report (one per sub-device
/// of a root device): with more than one, each metric gives one series per set, named
/// "… (sub-device k)". `None` when no chosen metric is in the group.
pub(crate) fn plan(metrics: &[Metric], wanted: &[String], sets: usize) -> Option<ReportPlan> {
    let sets = sets.max(1);
    let mut series = Vec::new();
    let mut columns = Vec::new();
    let mut names = Vec::new();
    let mut time = None;
    for m in metrics {
        let i = &m.info;
        let col = if i.metric_type == ZET_METRIC_TYPE_TIMESTAMP {
            if time.is_some() {
                Column::Skip
            } else {
                time = Some((i.name.clone(), i.units.clone()));
                Column::Time
            }
        } else if wanted.is_empty() || wanted.contains(&i.name) {
            match column_of(i.metric_type, &i.name, &i.description, &i.units) {
                Some((conv, s)) => {
                    series.push(s);
                    names.push(i.name.clone());
                    Column::Series(conv)
                }
                None => Column::Skip,
            }
        } else {
            Column::Skip
        };
        columns.push(col);
    }
    if series.is_empty() {
        return None;
    }
    if sets > 1 {
        let one = std::mem::take(&mut series);
        for k in 0..sets {
            series.extend(one.iter().map(|s| SeriesInfo {
                name: format!("{} (sub-device {k})", s.name),
                description: format!("{} (sub-device {k} of the root device)", s.description),
                ..s.clone()
            }));
        }
    }
    Some(ReportPlan { series, columns, names, time, sets })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(t: zet_metric_type_t, units: &str) -> (Conv, String, Kind) {
        let (c, s) = column_of(t, "m", "", units).expect("a series");
        (c, s.unit, s.kind)
    }

    /// `conv` of `x` in a report of `ns` is `want` (to 1e-9 relative), told or not.
    fn gives(conv: Conv, x: f64, ns: u64, want: f64, told: bool) {
        let (v, t) = conv.apply(x, per_second(ns));
        assert!((v - want).abs() <= 1e-9 * want.abs().max(1.0), "{conv:?} of {x} in {ns} ns: {v}, not {want}");
        assert_eq!(t, told, "{conv:?} of {x}");
    }

    #[test]
    fn a_count_is_added_to_its_running_total_as_it_is_whatever_the_period() {
        let (conv, unit, kind) = col(ZET_METRIC_TYPE_EVENT, "cycles");
        assert_eq!(
            (conv, unit.as_str(), kind),
            (Conv::Count, "cycles", Kind::Cumulative),
            "as exported memory gives it"
        );
        for k in 0..=16 {
            let ns = 10_000u64 << k;
            for x in [0.0, 1.0, 7.0, 12_345.0, 1_234_567.0] {
                gives(conv, x, ns, x, false);
            }
        }
        let (v, told) = conv.apply(-3.0, per_second(10_000));
        assert!(v.is_nan() && told, "a count below zero is none, and told");
        let (v, told) = conv.apply(f64::NAN, per_second(10_000));
        assert!(v.is_nan() && !told, "no value stays none");
    }

    #[test]
    fn a_reports_busy_time_is_bounded_by_the_report_of_its_period_in_its_unit() {
        // The report's length in the value's unit, a whole number for every streamer period
        // (10 µs × 2^k) in ns and µs: 10 000 ns busy of a 10 µs report is all of it, not
        // 9 999.999999999998 of it.
        for k in 0..=16 {
            let ns = 10_000u64 << k;
            assert_eq!(Conv::Busy { unit_s: 1e-9 }.at(per_second(ns)), Conv::BusyOf { units: ns as f64 });
            assert_eq!(Conv::Busy { unit_s: 1e-6 }.at(per_second(ns)), Conv::BusyOf { units: (ns / 1000) as f64 });
            assert_eq!(Conv::Busy { unit_s: 1e-9 }.apply(ns as f64, per_second(ns)), (ns as f64, false));
        }
        // Bound to its period once, the same values.
        for (unit_s, ns) in [(1e-9, 10_000u64), (1e-9, 40_000), (1e-6, 10_000 << 16), (1e-3, 80_000)] {
            let per_s = per_second(ns);
            for x in [0.0, 1.0, 398.0, 7_777.0, 1e9] {
                let free = Conv::Busy { unit_s }.apply(x, per_s);
                assert_eq!(Conv::Busy { unit_s }.at(per_s).apply(x, per_s), free, "{x} of {ns} ns");
            }
        }
    }

    #[test]
    fn a_duration_is_busy_time_kept_as_a_running_total_in_its_unit() {
        let (conv, unit, kind) = col(ZET_METRIC_TYPE_DURATION, "ns");
        assert_eq!((unit.as_str(), kind), ("ns", Kind::Busy), "busy time, as exported memory gives it");
        // 640 µs busy in a 1.28 ms report: 640 µs added.
        gives(conv, 640_000.0, 1_280_000, 640_000.0, false);
        let (conv, unit, kind) = col(ZET_METRIC_TYPE_DURATION, "us");
        assert_eq!((unit.as_str(), kind), ("us", Kind::Busy));
        gives(conv, 640.0, 1_280_000, 640.0, false);
    }

    #[test]
    fn busy_time_beyond_the_report_is_clamped_to_it_and_nonsense_is_told() {
        let (conv, _, _) = col(ZET_METRIC_TYPE_DURATION, "ns");
        gives(conv, 1_300_000.0, 1_280_000, 1_280_000.0, false); // 1.6 % over: jitter of report times
        gives(conv, 3_000_000.0, 1_280_000, 1_280_000.0, true); // more than twice the report
        gives(conv, -5.0, 1_280_000, 0.0, true);
        let (v, told) = conv.apply(f64::NAN, per_second(1_280_000));
        assert!(v.is_nan() && !told, "no value stays none");
    }

    #[test]
    fn events_throughputs_and_durations_not_in_time_are_counts_in_their_unit() {
        let (conv, unit, kind) = col(ZET_METRIC_TYPE_THROUGHPUT, "bytes");
        assert_eq!((conv, unit.as_str(), kind), (Conv::Count, "bytes", Kind::Cumulative));
        assert_eq!(col(ZET_METRIC_TYPE_EVENT_WITH_RANGE, "").1, "events", "a count without a unit counts events");
        assert_eq!(col(ZET_METRIC_TYPE_EVENT, " cycles ").1, "cycles");
        let (conv, unit, kind) = col(ZET_METRIC_TYPE_DURATION, "cycles");
        assert_eq!((conv, unit.as_str(), kind), (Conv::Count, "cycles", Kind::Cumulative), "a duration in cycles");
    }

    #[test]
    fn levels_ratios_and_states_are_shown_as_they_are() {
        let (conv, unit, kind) = col(ZET_METRIC_TYPE_EVENT, "MHz");
        assert_eq!((conv, unit.as_str(), kind), (Conv::AsIs, "MHz", Kind::Gauge), "an average frequency");
        let (conv, unit, kind) = col(ZET_METRIC_TYPE_RATIO, "percent");
        assert_eq!((conv, unit.as_str(), kind), (Conv::AsIs, "%", Kind::Gauge));
        let (conv, unit, kind) = col(ZET_METRIC_TYPE_DURATION, "percent");
        assert_eq!((conv, unit.as_str(), kind), (Conv::AsIs, "%", Kind::Gauge), "a share already");
        for t in [ZET_METRIC_TYPE_RAW, ZET_METRIC_TYPE_FLAG] {
            let (conv, _, kind) = col(t, "");
            assert_eq!((conv, kind), (Conv::AsIs, Kind::State));
            assert_eq!(conv.apply(7.0, 1e-3), (7.0, false), "an id is not divided by time");
        }
        assert!(column_of(ZET_METRIC_TYPE_TIMESTAMP, "QueryBeginTime", "", "ns").is_none());
    }
}
