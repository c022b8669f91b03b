//! The pieces the realistic catalogue is written with: one constructor per kind of counter Intel's
//! catalogues have, families of per-unit counters (banks, slices, links), and the metrics every
//! OA group of a real GPU starts and ends with.

use super::model::{Load, MetricType, Model, ResultType, Unit, Value};
use crate::config::{Export, GroupConfig, MetricConfig, Signal};

/// The hardware domain of the observation-architecture (OA) groups: one at a time per device.
pub(super) const OA: u32 = 0;

/// A metric with its model.
pub(super) fn m(name: &str, description: &str, model: Model) -> MetricConfig {
    MetricConfig { name: name.into(), description: description.into(), signal: Signal::Modelled(model) }
}

/// `count` metrics named `name` with `{}` replaced by 00, 01, … (and the same in
/// `description`).
pub(super) fn family(name: &str, count: usize, description: &str, model: Model) -> Vec<MetricConfig> {
    (0..count)
        .map(|i| {
            let k = format!("{i:02}");
            m(&name.replace("{}", &k), &description.replace("{}", &k), model)
        })
        .collect()
}

fn model(ty: MetricType, result: ResultType, unit: Unit, value: Value) -> Model {
    Model { ty, result, unit, value }
}

/// GpuTime: ns the GPU was busy (DURATION, u64).
pub(super) fn duration() -> Model {
    model(MetricType::Duration, ResultType::U64, Unit::Ns, Value::Count { per_s: 1_000_000_000, load: Load::Busy })
}

/// A count of busy cycles (EVENT, u64, cycles).
pub(super) fn clocks() -> Model {
    model(MetricType::Event, ResultType::U64, Unit::Cycles, Value::Cycles)
}

/// An average frequency over the report: a level, typed EVENT as Intel's catalogues type it.
pub(super) fn avg_mhz() -> Model {
    model(MetricType::Event, ResultType::U64, Unit::MHz, Value::Clock)
}

/// A frequency register (RAW, u64, MHz).
pub(super) fn raw_mhz() -> Model {
    model(MetricType::Raw, ResultType::U64, Unit::MHz, Value::Clock)
}

/// A percentage following `load` (RATIO, f32).
pub(super) fn pct(load: Load) -> Model {
    model(MetricType::Ratio, ResultType::F32, Unit::Percent, Value::Level { max: 100, load })
}

/// A percentage of up to `max` following `load` (RATIO, f32).
pub(super) fn pct_of(max: u32, load: Load) -> Model {
    model(MetricType::Ratio, ResultType::F32, Unit::Percent, Value::Level { max, load })
}

/// A plain number of up to `max` (RATIO, f32, "number"): instructions per cycle and the like.
pub(super) fn number(max: u32, load: Load) -> Model {
    model(MetricType::Ratio, ResultType::F32, Unit::Number, Value::Level { max, load })
}

/// A count of `unit` at up to `per_s` a second (EVENT, u64).
pub(super) fn events(unit: Unit, per_s: u64, load: Load) -> Model {
    model(MetricType::Event, ResultType::U64, unit, Value::Count { per_s, load })
}

/// A count of `unit` in a known range (EVENT_WITH_RANGE, u32).
pub(super) fn ranged(unit: Unit, per_s: u64, load: Load) -> Model {
    model(MetricType::EventWithRange, ResultType::U32, unit, Value::Count { per_s, load })
}

/// Bytes moved at up to `per_s` a second (THROUGHPUT, u64).
pub(super) fn bytes(per_s: u64, load: Load) -> Model {
    model(MetricType::Throughput, ResultType::U64, Unit::Bytes, Value::Count { per_s, load })
}

/// A raw register holding `value` (RAW, u32, no unit).
pub(super) fn raw(value: u32) -> Model {
    model(MetricType::Raw, ResultType::U32, Unit::None, Value::Constant(value))
}

/// Set just after the core frequency changes (FLAG, bool8).
pub(super) fn changed() -> Model {
    model(MetricType::Flag, ResultType::Bool8, Unit::None, Value::Changed)
}

/// The metrics an OA group starts with.
pub(super) fn head() -> Vec<MetricConfig> {
    vec![
        m("GpuTime", "Time elapsed on the GPU during the measurement.", duration()),
        m("GpuCoreClocks", "The total number of GPU core clocks elapsed during the measurement.", clocks()),
        m("AvgGpuCoreFrequencyMHz", "Average GPU Core Frequency in the measurement.", avg_mhz()),
        m("GpuBusy", "The percentage of time in which the GPU has been processing GPU commands.", pct(Load::Busy)),
    ]
}

/// The metrics an OA group ends with (the streamer's `QueryBeginTime` comes first).
pub(super) fn tail() -> Vec<MetricConfig> {
    vec![
        m("CoreFrequencyMHz", "The last GPU core (unslice) frequency in the measurement.", raw_mhz()),
        m("EuSliceFrequencyMHz", "The last GPU Execution Unit slice frequency in the measurement.", raw_mhz()),
        m("ReportReason", "The reason of the report.", raw(1)),
        m("ContextId", "The context tag in which report has been taken.", raw(32)),
        m("StreamMarker", "The marker of the stream, written by the driver.", raw(0x0046_5a3c)),
        m("CoreFrequencyChanged", "The flag is set when the core frequency changed in the measurement.", changed()),
    ]
}

/// An OA group: time-based, read by the streamer, no exported memory (as on today's drivers);
/// `body` between the usual head and tail.
pub(super) fn oa(name: &str, description: &str, body: Vec<Vec<MetricConfig>>) -> GroupConfig {
    let mut metrics = head();
    metrics.extend(body.into_iter().flatten());
    metrics.extend(tail());
    GroupConfig {
        name: name.into(),
        description: description.into(),
        domain: OA,
        export: Export::None,
        metrics,
        stream: true,
        ..GroupConfig::default()
    }
}
