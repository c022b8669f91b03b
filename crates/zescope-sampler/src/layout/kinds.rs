//! What a metric's type (`zet_metric_type_t`) and unit say about how its values are shown, for
//! the two ways that learn kinds from the driver: `MetricOrder` layouts of exported memory
//! ([`exported_kind`]) and the time-based streamer (`read/streamer/plan.rs`, per report).
//!
//! The rules, as a user reads the metrics:
//!
//! - **EVENT, EVENT_WITH_RANGE, THROUGHPUT** count what happened (events, cycles, bytes): a rate
//!   per second. Exported memory holds their running totals ([`Kind::Cumulative`]); a streamer
//!   report holds the count within the report, divided by the report's duration. A unit that
//!   already is a level or a rate ([`is_level_unit`]: %, Hz, W, °C, "…/s") is shown as it is:
//!   drivers report averages over the report that way (Intel's `AvgGpuCoreFrequencyMHz` is an
//!   EVENT in MHz).
//! - **DURATION** in a unit of time is time busy: shown as the share of the elapsed time, in %
//!   ([`Kind::Busy`] for running totals). A DURATION already in percent is shown as it is; in
//!   any other unit (cycles) it counts like an EVENT.
//! - **RATIO** is shown as it is.
//! - **TIMESTAMP** is time, not a series: a streamer report's first one is its time.
//! - **FLAG** and instruction pointers are states, and so is a **RAW** value without a unit of a
//!   level (identifiers, report reasons, markers): [`Kind::State`], drawn as steps, never turned
//!   into rates, summed or averaged. A RAW reading in a unit of a level ([`is_level_unit`]:
//!   a temperature, a frequency) is a level a user averages: shown as it is.
//! - The metric tracer's event types ([`tracer_kind`]): a value that only grows and wraps
//!   (EVENT_EXP_MONOTONIC_WRAPS_VALUE) is a running total, shown as a rate; the start and end
//!   of a pair (kernel ids, …) and a timestamp-only event are states, drawn as steps. Standard
//!   types in a tracer entry follow the rules above.
//! - Anything else (the export marker type) is shown as it is.
//!
//! A unit "percent" is written "%" everywhere ([`plain_unit`]), so shares from every way of
//! reading share a pane.

use level_zero_sys::*;

use super::Kind;

/// Seconds per unit of a unit of time ("ns" → 1e-9, "us"/"µs", "ms", "s"); `None` for anything
/// else, an empty unit included.
pub fn unit_seconds(unit: &str) -> Option<f64> {
    match unit.trim().to_ascii_lowercase().as_str() {
        "ns" | "nsec" | "nanoseconds" => Some(1e-9),
        "us" | "µs" | "usec" | "microseconds" => Some(1e-6),
        "ms" | "msec" | "milliseconds" => Some(1e-3),
        "s" | "sec" | "seconds" => Some(1.0),
        _ => None,
    }
}

/// "percent" (any case) as "%"; any other unit as it is.
pub fn plain_unit(unit: &str) -> String {
    if unit.trim().eq_ignore_ascii_case("percent") { "%".to_owned() } else { unit.to_owned() }
}

/// Is `unit` already a level or a per-second rate, which a value per report is not divided
/// again by time: a percentage, a frequency, a power, a temperature ("°C", or "C" as drivers
/// write it), a voltage or current, or anything "per second".
pub fn is_level_unit(unit: &str) -> bool {
    let u = unit.trim();
    let lower = u.to_ascii_lowercase();
    matches!(lower.as_str(), "%" | "percent" | "hz" | "khz" | "mhz" | "ghz" | "°c" | "degc" | "celsius")
        || matches!(u, "W" | "mW" | "kW" | "µW" | "uW" | "V" | "mV" | "A" | "mA" | "C")
        || lower.ends_with("/s")
        || lower.ends_with("/sec")
        || lower.ends_with("per second")
}

/// Does a value of this metric type count what happened within a report (EVENT,
/// EVENT_WITH_RANGE, THROUGHPUT)?
pub fn counts(metric_type: zet_metric_type_t) -> bool {
    matches!(metric_type, ZET_METRIC_TYPE_EVENT | ZET_METRIC_TYPE_EVENT_WITH_RANGE | ZET_METRIC_TYPE_THROUGHPUT)
}

/// Is a metric of this type and unit a state: a FLAG, an instruction pointer, or a RAW value whose
/// unit is not that of a level (a RAW temperature or frequency is a level)?
pub fn is_state(metric_type: zet_metric_type_t, unit: &str) -> bool {
    match metric_type {
        ZET_METRIC_TYPE_FLAG | ZET_METRIC_TYPE_IP_EXP => true,
        ZET_METRIC_TYPE_RAW => !is_level_unit(unit),
        _ => false,
    }
}

/// How a metric of `metric_type` in `unit` is kept when exported memory holds it (a `MetricOrder`
/// layout: running totals for what a report counts; see the module docs). `None`: not a series
/// (a TIMESTAMP).
pub fn exported_kind(metric_type: zet_metric_type_t, unit: &str) -> Option<Kind> {
    Some(match metric_type {
        ZET_METRIC_TYPE_TIMESTAMP => return None,
        ZET_METRIC_TYPE_DURATION if unit_seconds(unit).is_some() => Kind::Busy,
        ZET_METRIC_TYPE_DURATION if is_level_unit(unit) => Kind::Gauge,
        ZET_METRIC_TYPE_DURATION => Kind::Cumulative,
        t if counts(t) && is_level_unit(unit) => Kind::Gauge,
        t if counts(t) => Kind::Cumulative,
        t if is_state(t, unit) => Kind::State,
        _ => Kind::Gauge,
    })
}

/// How a decoded tracer entry of `metric_type` in `unit` (results of `value_type`) is shown, and
/// for a running total the modulus it wraps at (see the module docs).
pub fn tracer_kind(metric_type: zet_metric_type_t, unit: &str, value_type: zet_value_type_t) -> (Kind, Option<f64>) {
    let wrap = match value_type {
        ZET_VALUE_TYPE_UINT32 => Some(4_294_967_296.0),
        ZET_VALUE_TYPE_UINT64 => Some(18_446_744_073_709_551_616.0),
        _ => None,
    };
    let kind = match metric_type {
        ZET_METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE => Kind::Cumulative,
        ZET_METRIC_TYPE_EVENT_EXP_START | ZET_METRIC_TYPE_EVENT_EXP_END | ZET_METRIC_TYPE_EVENT_EXP_TIMESTAMP => {
            Kind::State
        }
        ZET_METRIC_TYPE_TIMESTAMP => Kind::State,
        t => exported_kind(t, unit).unwrap_or(Kind::Gauge),
    };
    (kind, if kind.is_running_total() { wrap } else { None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_ids_and_flags_are_states_raw_levels_are_not() {
        assert!(is_state(ZET_METRIC_TYPE_RAW, ""), "an id");
        assert!(is_state(ZET_METRIC_TYPE_RAW, "number"));
        assert!(is_state(ZET_METRIC_TYPE_FLAG, "%"), "a flag whatever its unit");
        assert!(!is_state(ZET_METRIC_TYPE_RAW, "°C"), "a temperature read raw is a level");
        assert!(!is_state(ZET_METRIC_TYPE_RAW, "MHz"));
        assert_eq!(exported_kind(ZET_METRIC_TYPE_RAW, "MHz"), Some(Kind::Gauge));
        assert_eq!(exported_kind(ZET_METRIC_TYPE_RAW, ""), Some(Kind::State));
    }

    #[test]
    fn tracer_events_are_states_and_growing_values_rates() {
        let k = |t, v| tracer_kind(t, "", v);
        assert_eq!(k(ZET_METRIC_TYPE_EVENT_EXP_START, ZET_VALUE_TYPE_UINT64), (Kind::State, None));
        assert_eq!(k(ZET_METRIC_TYPE_EVENT_EXP_END, ZET_VALUE_TYPE_UINT64), (Kind::State, None));
        assert_eq!(k(ZET_METRIC_TYPE_EVENT_EXP_TIMESTAMP, ZET_VALUE_TYPE_UINT64), (Kind::State, None));
        assert_eq!(
            k(ZET_METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE, ZET_VALUE_TYPE_UINT32),
            (Kind::Cumulative, Some(4_294_967_296.0))
        );
        assert_eq!(k(ZET_METRIC_TYPE_RAW, ZET_VALUE_TYPE_UINT32), (Kind::State, None));
        assert_eq!(tracer_kind(ZET_METRIC_TYPE_RATIO, "%", ZET_VALUE_TYPE_FLOAT32), (Kind::Gauge, None));
    }

    #[test]
    fn units_of_time_are_seconds_per_unit_and_nothing_else_is() {
        assert_eq!(unit_seconds("ns"), Some(1e-9));
        assert_eq!(unit_seconds(" µs "), Some(1e-6));
        assert_eq!(unit_seconds("ms"), Some(1e-3));
        assert_eq!(unit_seconds(""), None, "an empty unit is not taken for a time here");
        assert_eq!(unit_seconds("cycles"), None);
    }

    #[test]
    fn levels_and_rates_are_told_from_counts() {
        for u in ["%", "percent", "MHz", "GHz", "W", "mW", "°C", "GB/s", "bytes/s"] {
            assert!(is_level_unit(u), "{u}");
        }
        for u in ["", "events", "cycles", "bytes", "B", "ns", "MB", "inferences"] {
            assert!(!is_level_unit(u), "{u}");
        }
        assert_eq!(plain_unit("Percent"), "%");
        assert_eq!(plain_unit("MHz"), "MHz");
    }

    #[test]
    fn exported_memory_keeps_counts_as_totals_busy_time_as_a_share_and_states_as_read() {
        use ZET_METRIC_TYPE_DURATION as DURATION;
        let k = exported_kind;
        assert_eq!(k(DURATION, "ns"), Some(Kind::Busy));
        assert_eq!(k(DURATION, "percent"), Some(Kind::Gauge), "already a share");
        assert_eq!(k(DURATION, "cycles"), Some(Kind::Cumulative));
        assert_eq!(k(ZET_METRIC_TYPE_EVENT, "cycles"), Some(Kind::Cumulative));
        assert_eq!(k(ZET_METRIC_TYPE_THROUGHPUT, "bytes"), Some(Kind::Cumulative));
        assert_eq!(k(ZET_METRIC_TYPE_EVENT, "MHz"), Some(Kind::Gauge), "an average frequency");
        assert_eq!(k(ZET_METRIC_TYPE_RATIO, "percent"), Some(Kind::Gauge));
        assert_eq!(k(ZET_METRIC_TYPE_RAW, ""), Some(Kind::State));
        assert_eq!(k(ZET_METRIC_TYPE_FLAG, ""), Some(Kind::State));
        assert_eq!(k(ZET_METRIC_TYPE_TIMESTAMP, "ns"), None);
        assert_eq!(k(ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF, "B"), Some(Kind::Gauge));
    }
}
