//! What each signal reports itself as: its `zet_metric_type_t` and result type, as a real driver
//! describes the metric (busy time a DURATION, counts EVENTs, bytes moved a THROUGHPUT, a share a
//! RATIO, readings and ids RAW, a flag a FLAG; `docs/ze-sim.md` has the table), and how its
//! values are written.

use level_zero_sys::*;

use crate::config::Signal;

impl Signal {
    /// The `zet_metric_type_t` a metric of this signal reports (a group that exports memory per
    /// metric reports the export marker type instead): busy time is a DURATION, counts are
    /// EVENTs, bytes moved a THROUGHPUT, averages over the interval (frequency, power)
    /// THROUGHPUTs in their per-time unit, a share of time a RATIO, raw readings (temperature,
    /// a context id) RAW, a flag a FLAG; a tracer event its event type.
    pub(crate) fn metric_type(self) -> zet_metric_type_t {
        match self {
            Signal::GpuTime => ZET_METRIC_TYPE_DURATION,
            Signal::BusyCycles | Signal::Inferences => ZET_METRIC_TYPE_EVENT,
            Signal::BytesRead | Signal::BytesWritten => ZET_METRIC_TYPE_THROUGHPUT,
            Signal::FrequencyMhz | Signal::PowerWatts => ZET_METRIC_TYPE_THROUGHPUT,
            Signal::UtilizationPercent | Signal::Synthetic => ZET_METRIC_TYPE_RATIO,
            Signal::TemperatureC | Signal::MemoryTemperatureC | Signal::ContextId => ZET_METRIC_TYPE_RAW,
            Signal::Throttled => ZET_METRIC_TYPE_FLAG,
            Signal::Timestamp => ZET_METRIC_TYPE_TIMESTAMP,
            Signal::KernelStart => ZET_METRIC_TYPE_EVENT_EXP_START,
            Signal::KernelEnd => ZET_METRIC_TYPE_EVENT_EXP_END,
            Signal::KernelBytes => ZET_METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE,
            Signal::KernelMarker => ZET_METRIC_TYPE_EVENT_EXP_TIMESTAMP,
            Signal::Modelled(m) => m.ty.zet(),
        }
    }

    /// The `zet_value_type_t` of its results: u64 for counters, timestamps and ids, bool8 for a
    /// flag, u32 for the wrapping tracer total, f64 for levels.
    pub(crate) fn result_type(self) -> zet_value_type_t {
        match self {
            Signal::Modelled(m) => m.result.zet(),
            Signal::KernelBytes => ZET_VALUE_TYPE_UINT32,
            Signal::Throttled => ZET_VALUE_TYPE_BOOL8,
            s if s.is_cumulative() => ZET_VALUE_TYPE_UINT64,
            Signal::Timestamp | Signal::ContextId | Signal::KernelStart | Signal::KernelEnd | Signal::KernelMarker => {
                ZET_VALUE_TYPE_UINT64
            }
            _ => ZET_VALUE_TYPE_FLOAT64,
        }
    }

    /// Is this a built-in level whose value is an integer (an id, a flag), written as a whole
    /// number rather than as the bits of an `f64`? (A modelled metric is written as its result
    /// type by `crate::catalog`.)
    pub(crate) fn is_integer_level(self) -> bool {
        matches!(self, Signal::ContextId | Signal::Throttled)
    }

    /// Is it a state (RAW or FLAG: an id, a flag, a raw reading), the same on every sub-device?
    pub(crate) fn is_state(self) -> bool {
        matches!(self.metric_type(), ZET_METRIC_TYPE_RAW | ZET_METRIC_TYPE_FLAG)
    }
}
