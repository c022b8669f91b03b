//! The IP-sampling group, as compute-runtime publishes it on Intel GPUs: `EuStallSampling`,
//! time-based only, in a domain of its own (100), exporting nothing; its metrics are the sampled
//! instruction pointer `IP` (type IP, u64, unit "Address") and nine counts of the samples taken
//! at that instruction (`Active` and the stall reasons; EVENT, u64). Each report of its streamer
//! is one sample: an instruction of the workload's kernel and the counts there in the period.
//! It has no timestamp metric (compute-runtime's has none either). Both catalogues use it.

use super::model::{Load, MetricType, Model, ResultType, Unit, Value};
use crate::config::{Export, GroupConfig, MetricConfig, Signal};

/// The domain of the IP-sampling group (compute-runtime's IP-sampling source uses 100). The
/// built-in tracer-based `KernelTrace` shares it: the EUs' sampling serves one of them at a time.
pub const EU_SAMPLING_DOMAIN: u32 = 100;

/// `EuStallSampling`: the instruction pointer, then the count of samples there per reason.
pub fn eu_stall_sampling() -> GroupConfig {
    let m = |name: &str, description: &str, model: Model| MetricConfig {
        name: name.into(),
        description: description.into(),
        signal: Signal::Modelled(model),
    };
    let count = |per_s: u64, load: Load| Model {
        ty: MetricType::Event,
        result: ResultType::U64,
        unit: Unit::Events,
        value: Value::Count { per_s, load },
    };
    let ip =
        Model { ty: MetricType::Ip, result: ResultType::U64, unit: Unit::Address, value: Value::InstructionPointer };
    GroupConfig {
        name: "EuStallSampling".into(),
        description: "EU stall sampling: per sampled instruction pointer, the samples taken there by reason".into(),
        domain: EU_SAMPLING_DOMAIN,
        export: Export::None,
        metrics: vec![
            m("IP", "The instruction pointer of the sample", ip),
            m("Active", "Samples taken while the thread was active", count(4_000_000, Load::Busy)),
            m("ControlStall", "Samples taken while the thread waited on control flow", count(300_000, Load::Stall)),
            m("PipeStall", "Samples taken while the thread waited for a busy pipe", count(900_000, Load::Stall)),
            m("SendStall", "Samples taken while the thread waited for a send", count(1_800_000, Load::Stall)),
            m(
                "DistStall",
                "Samples taken while the thread waited on a distance dependency",
                count(600_000, Load::Stall),
            ),
            m("SbidStall", "Samples taken while the thread waited on an SBID token", count(1_500_000, Load::Stall)),
            m("SyncStall", "Samples taken while the thread waited on a synchronisation", count(200_000, Load::Stall)),
            m(
                "InstrFetchStall",
                "Samples taken while the thread waited for an instruction fetch",
                count(100_000, Load::Stall),
            ),
            m("OtherStall", "Samples taken while the thread stalled for another reason", count(150_000, Load::Stall)),
        ],
        synthetic_counters: 0,
        stream: true,
        tracer: false,
    }
}
