//! A counter described the way a real driver describes it: its metric type, result type and unit
//! as `zetMetricGetProperties` reports them, and how its value moves with the workload. It is the
//! data of [`crate::config::Signal::Modelled`], so a configuration file can describe such metrics
//! too (`signal: Modelled((ty: Ratio, result: F32, unit: Percent, value: Level(max: 100, load: Busy)))`).
//!
//! Values are deterministic: a function of the workload's phase at the sample's time, the seeded
//! noise and the metric's position in its group (so the 16 banks of one family differ a little).
//! Counts (`Count`, `Cycles`) are rates per second that the writer and the streamer integrate,
//! as they do the built-in cumulative signals; the rest are levels, read as they are.

use level_zero_sys::*;
use serde::{Deserialize, Serialize};

use crate::config::DeviceKind;
use crate::workload::{self, Moment, Phase};

/// A modelled counter: what its properties say and how its value moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The `metricType` its properties report.
    pub ty: MetricType,
    /// The `resultType` its properties report, and the type Calculate answers its values in (the
    /// exported buffer holds it in the low bytes of the metric's 8-byte slot).
    pub result: ResultType,
    /// The `resultUnits` its properties report.
    pub unit: Unit,
    /// How its value moves with the workload.
    pub value: Value,
}

/// `zet_metric_type_t` of a modelled metric (the timestamp metric of a streamable group is
/// `Signal::Timestamp`, not a model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MetricType {
    /// ZET_METRIC_TYPE_DURATION: time (GpuTime).
    Duration,
    /// ZET_METRIC_TYPE_EVENT: a count of events (clocks, threads, messages).
    Event,
    /// ZET_METRIC_TYPE_EVENT_WITH_RANGE: a count with a known range.
    EventWithRange,
    /// ZET_METRIC_TYPE_THROUGHPUT: bytes moved.
    Throughput,
    /// ZET_METRIC_TYPE_FLAG: a yes/no condition.
    Flag,
    /// ZET_METRIC_TYPE_RATIO: a share or a ratio (percentages, IPC).
    Ratio,
    /// ZET_METRIC_TYPE_RAW: a raw register value (report reason, context id, frequencies).
    Raw,
    /// ZET_METRIC_TYPE_IP: an instruction pointer (the address an IP-sampling report is about).
    Ip,
}

impl MetricType {
    /// The Level Zero constant.
    pub fn zet(self) -> zet_metric_type_t {
        match self {
            MetricType::Duration => ZET_METRIC_TYPE_DURATION,
            MetricType::Event => ZET_METRIC_TYPE_EVENT,
            MetricType::EventWithRange => ZET_METRIC_TYPE_EVENT_WITH_RANGE,
            MetricType::Throughput => ZET_METRIC_TYPE_THROUGHPUT,
            MetricType::Flag => ZET_METRIC_TYPE_FLAG,
            MetricType::Ratio => ZET_METRIC_TYPE_RATIO,
            MetricType::Raw => ZET_METRIC_TYPE_RAW,
            MetricType::Ip => ZET_METRIC_TYPE_IP_EXP,
        }
    }
}

/// `zet_value_type_t` of a modelled metric's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResultType {
    /// ZET_VALUE_TYPE_UINT32.
    U32,
    /// ZET_VALUE_TYPE_UINT64.
    U64,
    /// ZET_VALUE_TYPE_FLOAT32.
    F32,
    /// ZET_VALUE_TYPE_FLOAT64.
    F64,
    /// ZET_VALUE_TYPE_BOOL8.
    Bool8,
}

impl ResultType {
    /// The Level Zero constant.
    pub fn zet(self) -> zet_value_type_t {
        match self {
            ResultType::U32 => ZET_VALUE_TYPE_UINT32,
            ResultType::U64 => ZET_VALUE_TYPE_UINT64,
            ResultType::F32 => ZET_VALUE_TYPE_FLOAT32,
            ResultType::F64 => ZET_VALUE_TYPE_FLOAT64,
            ResultType::Bool8 => ZET_VALUE_TYPE_BOOL8,
        }
    }

    /// `v` as this type: the typed value Calculate answers, the 8-byte word of an exported
    /// buffer's slot (the value in its low bytes, little-endian), and the value a reader
    /// decodes from it.
    pub(crate) fn encode(self, v: f64) -> (zet_typed_value_t, u64, f64) {
        let r#type = self.zet();
        match self {
            ResultType::U32 => {
                let x = v.round().clamp(0.0, u32::MAX as f64) as u32;
                (zet_typed_value_t { r#type, value: zet_value_t { ui32: x } }, x as u64, x as f64)
            }
            ResultType::U64 => {
                let x = v.round().max(0.0) as u64;
                (zet_typed_value_t { r#type, value: zet_value_t { ui64: x } }, x, x as f64)
            }
            ResultType::F32 => {
                let x = v as f32;
                (zet_typed_value_t { r#type, value: zet_value_t { fp32: x } }, x.to_bits() as u64, x as f64)
            }
            ResultType::F64 => (zet_typed_value_t { r#type, value: zet_value_t { fp64: v } }, v.to_bits(), v),
            ResultType::Bool8 => {
                let x = u8::from(v != 0.0);
                (zet_typed_value_t { r#type, value: zet_value_t { b8: x } }, x as u64, x as f64)
            }
        }
    }
}

/// The `resultUnits` text of a modelled metric (the units Intel's catalogues use).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// No unit (an empty string): report reasons, ids, flags.
    None,
    /// "ns".
    Ns,
    /// "cycles".
    Cycles,
    /// "%".
    Percent,
    /// "bytes".
    Bytes,
    /// "MHz".
    MHz,
    /// "threads".
    Threads,
    /// "pixels".
    Pixels,
    /// "texels".
    Texels,
    /// "messages".
    Messages,
    /// "number" (a plain number, such as instructions per cycle).
    Number,
    /// "events".
    Events,
    /// "instructions".
    Instructions,
    /// "requests".
    Requests,
    /// "Address" (an instruction pointer, as compute-runtime names the unit of `IP`).
    Address,
}

impl Unit {
    /// The text its properties report.
    pub fn text(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Ns => "ns",
            Unit::Cycles => "cycles",
            Unit::Percent => "%",
            Unit::Bytes => "bytes",
            Unit::MHz => "MHz",
            Unit::Threads => "threads",
            Unit::Pixels => "pixels",
            Unit::Texels => "texels",
            Unit::Messages => "messages",
            Unit::Number => "number",
            Unit::Events => "events",
            Unit::Instructions => "instructions",
            Unit::Requests => "requests",
            Unit::Address => "Address",
        }
    }
}

/// What part of the workload a value follows: its share (0 ..= 1) in each phase of the cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Load {
    /// The engine's busy share: low when idle, near full when compute-bound, high when
    /// memory-bound.
    Busy,
    /// The floating-point pipes: highest when compute-bound.
    Fpu,
    /// The matrix (XMX) pipes: only when compute-bound.
    Xmx,
    /// Memory traffic: highest when memory-bound.
    Memory,
    /// Stalls: highest when memory-bound.
    Stall,
    /// The idle share: the complement of `Busy`.
    Idle,
    /// 3D work (vertices, pixels, texels): none, the workload only computes.
    Graphics,
}

impl Load {
    /// The share in `phase` before noise.
    fn share(self, phase: Phase) -> f64 {
        let [idle, compute, memory] = match self {
            Load::Busy => [0.03, 0.97, 0.75],
            Load::Fpu => [0.01, 0.62, 0.18],
            Load::Xmx => [0.0, 0.45, 0.04],
            Load::Memory => [0.01, 0.12, 0.88],
            Load::Stall => [0.02, 0.18, 0.62],
            Load::Idle => [0.97, 0.03, 0.25],
            Load::Graphics => [0.0, 0.0, 0.0],
        };
        match phase {
            Phase::Idle => idle,
            Phase::Compute => compute,
            Phase::MemoryBound => memory,
        }
    }
}

/// How a modelled value moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Value {
    /// A count that only grows, at up to `per_s` a second following `load` (a cumulative
    /// counter: exported as its running total, streamed as the count in each report).
    Count {
        /// The rate at a full share of the load.
        per_s: u64,
        /// What it follows.
        load: Load,
    },
    /// GPU core clocks while busy: the core frequency times the busy share (a count).
    Cycles,
    /// A level of up to `max` following `load` (a percentage with `max: 100`).
    Level {
        /// The level at a full share of the load.
        max: u32,
        /// What it follows.
        load: Load,
    },
    /// The core frequency in MHz.
    Clock,
    /// A constant (a report reason, a context id).
    Constant(u32),
    /// 1 in the 50 ms after the workload changes phase (the core frequency changes then), else 0.
    Changed,
    /// The instruction pointer a sample is about: one of the [`IP_SLOTS`] instructions of the
    /// workload's kernel, 16 bytes apart from [`IP_BASE`], picked by the sample's noise.
    InstructionPointer,
}

/// The address of the workload kernel's first instruction (an `InstructionPointer` value).
pub const IP_BASE: u64 = 0x1000;
/// How many instructions of the kernel an `InstructionPointer` value picks from.
pub const IP_SLOTS: u64 = 64;

impl Model {
    /// Counts grow (the writer and the streamer integrate their rate); levels do not.
    pub(crate) fn is_cumulative(&self) -> bool {
        matches!(self.value, Value::Count { .. } | Value::Cycles)
    }

    /// The value at `t` seconds (a rate per second for counts) with noise `n` in [-1, 1], for
    /// the metric at `index` in its group.
    pub(crate) fn level(&self, kind: DeviceKind, clock_mhz: f64, at: Moment, n: f64, index: usize) -> f64 {
        let phase = at.phase;
        // Metrics of one family (banks, slices) differ by up to ±20 %, the same way every time.
        let skew = 0.8 + 0.4 * ((index * 37 % 17) as f64 / 16.0);
        let share = |load: Load| (load.share(phase) * skew * (1.0 + 0.04 * n)).clamp(0.0, 1.0);
        let clock = || workload::level(crate::config::Signal::FrequencyMhz, kind, clock_mhz, at, n, index);
        match self.value {
            Value::Count { per_s, load } => per_s as f64 * share(load),
            Value::Cycles => clock() * 1e6 * share(Load::Busy),
            Value::Level { max, load } => max as f64 * share(load),
            Value::Clock => clock(),
            Value::Constant(c) => c as f64,
            Value::Changed => f64::from(u8::from(phase != workload::phase_at((at.t - 0.05).max(0.0)))),
            Value::InstructionPointer => {
                let slot = (((n + 1.0) * 0.5 * IP_SLOTS as f64) as u64).min(IP_SLOTS - 1);
                (IP_BASE + 16 * slot) as f64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(value: Value, result: ResultType) -> Model {
        Model { ty: MetricType::Ratio, result, unit: Unit::Percent, value }
    }

    #[test]
    fn levels_follow_their_load_through_the_phases() {
        let busy = model(Value::Level { max: 100, load: Load::Busy }, ResultType::F32);
        let stall = model(Value::Level { max: 100, load: Load::Stall }, ResultType::F32);
        let at = |m: &Model, t| m.level(DeviceKind::Gpu, 1600.0, Moment::at(t), 0.0, 0);
        assert!(at(&busy, 3.0) > 10.0 * at(&busy, 1.0), "busy when compute-bound");
        assert!(at(&stall, 6.0) > 2.0 * at(&stall, 3.0), "stalled when memory-bound");
        let graphics = model(Value::Count { per_s: 1_000_000, load: Load::Graphics }, ResultType::U64);
        assert_eq!(at(&graphics, 3.0), 0.0, "a compute workload draws no pixels");
        for t in [0.5, 3.0, 6.0] {
            assert!((0.0..=100.0).contains(&at(&busy, t)));
        }
    }

    #[test]
    fn flags_rise_only_just_after_a_phase_change() {
        let flag = model(Value::Changed, ResultType::Bool8);
        let at = |t| flag.level(DeviceKind::Gpu, 1600.0, Moment::at(t), 0.0, 0);
        assert_eq!(at(2.01), 1.0);
        assert_eq!(at(2.2), 0.0);
        assert_eq!(at(5.03), 1.0);
        assert_eq!(at(8.02), 1.0, "back to idle");
        assert_eq!(at(1.0), 0.0);
    }

    #[test]
    fn results_encode_in_their_type_in_the_low_bytes() {
        let (v, w, back) = ResultType::F32.encode(42.5);
        assert_eq!(v.r#type, ZET_VALUE_TYPE_FLOAT32);
        assert_eq!(f32::from_bits(w as u32), 42.5);
        assert_eq!(back, 42.5);
        let (v, w, _) = ResultType::U32.encode(7.4);
        assert_eq!((v.as_f64(), w), (Some(7.0), 7));
        let (v, w, _) = ResultType::Bool8.encode(0.3);
        assert_eq!((v.as_f64(), w), (Some(1.0), 1));
        let (v, w, _) = ResultType::U64.encode(1e12);
        assert_eq!((v.as_f64(), w), (Some(1e12), 1_000_000_000_000));
        let (_, w, _) = ResultType::F64.encode(-1.25);
        assert_eq!(f64::from_bits(w), -1.25);
    }

    #[test]
    fn instruction_pointers_are_instructions_of_the_kernel() {
        let ip = Model {
            ty: MetricType::Ip,
            result: ResultType::U64,
            unit: Unit::Address,
            value: Value::InstructionPointer,
        };
        assert_eq!(ip.ty.zet(), ZET_METRIC_TYPE_IP_EXP);
        assert!(!ip.is_cumulative(), "an address is not a count");
        let mut seen = std::collections::BTreeSet::new();
        for k in 0..=200 {
            let n = -1.0 + k as f64 / 100.0;
            let a = ip.level(DeviceKind::Gpu, 1600.0, Moment::at(3.0), n, 0) as u64;
            assert!((IP_BASE..IP_BASE + 16 * IP_SLOTS).contains(&a) && a.is_multiple_of(16), "{a:#x}");
            seen.insert(a);
        }
        assert_eq!(seen.len() as u64, IP_SLOTS, "the noise reaches every instruction");
    }
}
