//! The compute groups of the realistic catalogue: `ComputeBasic` as Intel's tools document it
//! (the 45 metrics pti-gpu's oneprof prints, in their units and types), then the extended compute,
//! vector-engine and EU-activity groups with their per-XeCore families.

use super::kit::*;
use super::model::{Load, Unit};
use crate::config::{GroupConfig, MetricConfig};

/// The number of XeCores the per-core families count.
const XE_CORES: usize = 16;

/// `ComputeBasic`: 44 metrics plus the streamer's `QueryBeginTime` (first) make 45.
pub(super) fn compute_basic() -> GroupConfig {
    let threads = |name: &str, what: &str, per_s: u64, load: Load| {
        m(name, &format!("The total number of {what} hardware threads dispatched."), events(Unit::Threads, per_s, load))
    };
    let pixels =
        |name: &str, description: &str| m(name, description, events(Unit::Pixels, 2_000_000_000, Load::Graphics));
    let metrics: Vec<MetricConfig> = vec![
        m("GpuTime", "Time elapsed on the GPU during the measurement.", duration()),
        m("GpuCoreClocks", "The total number of GPU core clocks elapsed during the measurement.", clocks()),
        m("AvgGpuCoreFrequencyMHz", "Average GPU Core Frequency in the measurement.", avg_mhz()),
        m("GpuBusy", "The percentage of time in which the GPU has been processing GPU commands.", pct(Load::Busy)),
        threads("VsThreads", "vertex shader", 50_000_000, Load::Graphics),
        threads("HsThreads", "hull shader", 50_000_000, Load::Graphics),
        threads("DsThreads", "domain shader", 50_000_000, Load::Graphics),
        threads("GsThreads", "geometry shader", 50_000_000, Load::Graphics),
        threads("PsThreads", "pixel shader", 50_000_000, Load::Graphics),
        threads("CsThreads", "compute shader", 2_000_000, Load::Busy),
        m("EuActive", "The percentage of time in which the Execution Units were actively processing.", pct(Load::Fpu)),
        m("EuStall", "The percentage of time in which the Execution Units were stalled.", pct(Load::Stall)),
        m(
            "EuFpuBothActive",
            "The percentage of time in which both EU FPU pipelines were actively processing.",
            pct_of(60, Load::Fpu),
        ),
        m(
            "Fpu0Active",
            "The percentage of time in which EU FPU0 pipeline was actively processing.",
            pct_of(90, Load::Fpu),
        ),
        m(
            "Fpu1Active",
            "The percentage of time in which EU FPU1 pipeline was actively processing.",
            pct_of(90, Load::Fpu),
        ),
        m("EuAvgIpcRate", "The average rate of IPC calculated for 2 FPU pipelines.", number(2, Load::Busy)),
        m(
            "EuSendActive",
            "The percentage of time in which EU send pipeline was actively processing.",
            pct_of(20, Load::Memory),
        ),
        m("EuThreadOccupancy", "The percentage of time in which hardware threads occupied EUs.", pct(Load::Busy)),
        pixels("RasterizedPixels", "The total number of rasterized pixels."),
        pixels("HiDepthTestFails", "The total number of pixels dropped on early hierarchical depth test."),
        pixels("EarlyDepthTestFails", "The total number of pixels dropped on early depth test."),
        pixels("SamplesKilledInPs", "The total number of samples or pixels dropped in pixel shaders."),
        pixels(
            "PixelsFailingPostPsTests",
            "The total number of pixels dropped on post-PS alpha, stencil, or depth tests.",
        ),
        pixels("SamplesWritten", "The total number of samples or pixels written to all render targets."),
        pixels("SamplesBlended", "The total number of blended samples or pixels written to all render targets."),
        m(
            "SamplerTexels",
            "The total number of texels seen on input (with 2x2 accuracy) in all sampler units.",
            events(Unit::Texels, 4_000_000_000, Load::Graphics),
        ),
        m(
            "SamplerTexelMisses",
            "The total number of texels lookups (with 2x2 accuracy) that missed L1 sampler cache.",
            events(Unit::Texels, 400_000_000, Load::Graphics),
        ),
        m(
            "SlmBytesRead",
            "The total number of GPU memory bytes read from shared local memory.",
            bytes(60_000_000_000, Load::Fpu),
        ),
        m(
            "SlmBytesWritten",
            "The total number of GPU memory bytes written into shared local memory.",
            bytes(20_000_000_000, Load::Fpu),
        ),
        m(
            "ShaderMemoryAccesses",
            "The total number of shader memory accesses to L3.",
            events(Unit::Messages, 4_000_000_000, Load::Memory),
        ),
        m(
            "ShaderAtomics",
            "The total number of shader atomic memory accesses.",
            events(Unit::Messages, 20_000_000, Load::Memory),
        ),
        m(
            "L3ShaderThroughput",
            "The total number of GPU memory bytes transferred between shaders and L3 caches w/o URB.",
            bytes(250_000_000_000, Load::Memory),
        ),
        m(
            "ShaderBarriers",
            "The total number of shader barrier messages.",
            events(Unit::Messages, 5_000_000, Load::Fpu),
        ),
        m(
            "TypedBytesRead",
            "The total number of typed memory bytes read via Data Port.",
            bytes(2_000_000_000, Load::Memory),
        ),
        m(
            "TypedBytesWritten",
            "The total number of typed memory bytes written via Data Port.",
            bytes(1_000_000_000, Load::Memory),
        ),
        m(
            "UntypedBytesRead",
            "The total number of untyped memory bytes read via Data Port.",
            bytes(240_000_000_000, Load::Memory),
        ),
        m(
            "UntypedBytesWritten",
            "The total number of untyped memory bytes written via Data Port.",
            bytes(12_000_000_000, Load::Memory),
        ),
        m(
            "GtiReadThroughput",
            "The total number of GPU memory bytes read from GTI.",
            bytes(40_000_000_000, Load::Memory),
        ),
        m(
            "GtiWriteThroughput",
            "The total number of GPU memory bytes written to GTI.",
            bytes(12_000_000_000, Load::Memory),
        ),
    ];
    let mut metrics = metrics;
    metrics.extend(tail().into_iter().take(5));
    GroupConfig {
        name: "ComputeBasic".into(),
        description: "Compute Metrics Basic set".into(),
        domain: OA,
        export: crate::config::Export::None,
        metrics,
        stream: true,
        ..GroupConfig::default()
    }
}

/// The further compute groups.
pub(super) fn groups() -> Vec<GroupConfig> {
    let core = |what: &str| format!("XeCore {{}} {what}");
    vec![
        oa(
            "ComputeExtended",
            "Compute Metrics Extended set",
            vec![
                vec![
                    m(
                        "EuActive",
                        "The percentage of time in which the Execution Units were actively processing.",
                        pct(Load::Fpu),
                    ),
                    m("EuStall", "The percentage of time in which the Execution Units were stalled.", pct(Load::Stall)),
                    m(
                        "EuThreadOccupancy",
                        "The percentage of time in which hardware threads occupied EUs.",
                        pct(Load::Busy),
                    ),
                    m("EuAvgIpcRate", "The average rate of IPC calculated for 2 FPU pipelines.", number(2, Load::Busy)),
                    m(
                        "CsThreads",
                        "The total number of compute shader hardware threads dispatched.",
                        events(Unit::Threads, 2_000_000, Load::Busy),
                    ),
                    m(
                        "EuTypedAtomics",
                        "The total number of typed atomic messages.",
                        events(Unit::Messages, 10_000_000, Load::Memory),
                    ),
                    m(
                        "EuUntypedAtomics",
                        "The total number of untyped atomic messages.",
                        events(Unit::Messages, 20_000_000, Load::Memory),
                    ),
                    m(
                        "EuA64UntypedReads",
                        "The total number of A64 untyped read messages.",
                        events(Unit::Messages, 900_000_000, Load::Memory),
                    ),
                    m(
                        "EuA64UntypedWrites",
                        "The total number of A64 untyped write messages.",
                        events(Unit::Messages, 300_000_000, Load::Memory),
                    ),
                ],
                family(
                    "XeCore{}Active",
                    XE_CORES,
                    &core("active: the percentage of time its vector engines were processing."),
                    pct(Load::Fpu),
                ),
                family(
                    "XeCore{}Stall",
                    XE_CORES,
                    &core("stall: the percentage of time its vector engines were stalled."),
                    pct(Load::Stall),
                ),
            ],
        ),
        oa(
            "VectorEngineProfile",
            "Vector engine pipes: utilization and instructions executed per pipe and data type",
            vec![
                vec![
                    m(
                        "XveActive",
                        "The percentage of time in which the vector engines were actively processing.",
                        pct(Load::Fpu),
                    ),
                    m("XveStall", "The percentage of time in which the vector engines were stalled.", pct(Load::Stall)),
                    m(
                        "XveThreadOccupancy",
                        "The percentage of time in which hardware threads occupied vector engines.",
                        pct(Load::Busy),
                    ),
                    m(
                        "XveMultiplePipeActive",
                        "The percentage of time in which at least two pipes were active.",
                        pct_of(40, Load::Fpu),
                    ),
                    m("XveFpuActive", "The percentage of time in which the FPU pipe was active.", pct(Load::Fpu)),
                    m(
                        "XveEmActive",
                        "The percentage of time in which the extended math pipe was active.",
                        pct_of(15, Load::Fpu),
                    ),
                    m(
                        "XveSendActive",
                        "The percentage of time in which the send pipe was active.",
                        pct_of(25, Load::Memory),
                    ),
                    m(
                        "XveXmxActive",
                        "The percentage of time in which the XMX (systolic) pipe was active.",
                        pct(Load::Xmx),
                    ),
                    m(
                        "XveInstIssued",
                        "The total number of instructions issued.",
                        events(Unit::Instructions, 400_000_000_000, Load::Busy),
                    ),
                    m(
                        "XveInstExecutedAlu0",
                        "The total number of ALU0 instructions executed.",
                        events(Unit::Instructions, 150_000_000_000, Load::Fpu),
                    ),
                    m(
                        "XveInstExecutedAlu1",
                        "The total number of ALU1 instructions executed.",
                        events(Unit::Instructions, 100_000_000_000, Load::Fpu),
                    ),
                    m(
                        "XveInstExecutedAlu2",
                        "The total number of ALU2 instructions executed.",
                        events(Unit::Instructions, 50_000_000_000, Load::Fpu),
                    ),
                    m(
                        "XveInstExecutedSend",
                        "The total number of send instructions executed.",
                        events(Unit::Instructions, 30_000_000_000, Load::Memory),
                    ),
                    m(
                        "XveInstExecutedControl",
                        "The total number of control instructions executed.",
                        events(Unit::Instructions, 8_000_000_000, Load::Busy),
                    ),
                    m(
                        "XveInstExecutedXmx",
                        "The total number of XMX instructions executed.",
                        events(Unit::Instructions, 80_000_000_000, Load::Xmx),
                    ),
                    m(
                        "XveInstExecutedXmxBf16",
                        "The total number of XMX instructions on BF16 data executed.",
                        events(Unit::Instructions, 60_000_000_000, Load::Xmx),
                    ),
                    m(
                        "XveInstExecutedXmxFp16",
                        "The total number of XMX instructions on FP16 data executed.",
                        events(Unit::Instructions, 10_000_000_000, Load::Xmx),
                    ),
                    m(
                        "XveInstExecutedXmxInt8",
                        "The total number of XMX instructions on INT8 data executed.",
                        events(Unit::Instructions, 5_000_000_000, Load::Xmx),
                    ),
                    m(
                        "XveInstExecutedXmxTf32",
                        "The total number of XMX instructions on TF32 data executed.",
                        events(Unit::Instructions, 5_000_000_000, Load::Xmx),
                    ),
                    m(
                        "XveInstExecutedFp64",
                        "The total number of FP64 instructions executed.",
                        events(Unit::Instructions, 20_000_000_000, Load::Fpu),
                    ),
                    m(
                        "XveInstExecutedFp32",
                        "The total number of FP32 instructions executed.",
                        events(Unit::Instructions, 90_000_000_000, Load::Fpu),
                    ),
                    m(
                        "XveInstExecutedFp16",
                        "The total number of FP16 instructions executed.",
                        events(Unit::Instructions, 30_000_000_000, Load::Fpu),
                    ),
                    m(
                        "XveInstExecutedInt",
                        "The total number of integer instructions executed.",
                        events(Unit::Instructions, 70_000_000_000, Load::Busy),
                    ),
                ],
                family(
                    "XeCore{}XmxActive",
                    XE_CORES,
                    &core("XMX active: the percentage of time its XMX pipes were processing."),
                    pct(Load::Xmx),
                ),
            ],
        ),
        oa(
            "VectorEngineStalls",
            "Vector engine stall reasons",
            vec![
                [
                    ("XveStallAluWr", "waiting for an ALU write-back"),
                    ("XveStallBarrier", "waiting at a barrier"),
                    ("XveStallControl", "waiting on control flow"),
                    ("XveStallDep", "waiting on a register dependency"),
                    ("XveStallDist", "waiting on a distance dependency"),
                    ("XveStallInstFetch", "waiting for an instruction fetch"),
                    ("XveStallPipe", "waiting for a busy pipe"),
                    ("XveStallSbid", "waiting for a send to complete (SBID token)"),
                    ("XveStallSendWr", "waiting for the send port"),
                    ("XveStallSync", "waiting on a synchronisation"),
                    ("XveStallOther", "stalled for another reason"),
                ]
                .iter()
                .map(|(name, why)| {
                    m(
                        name,
                        &format!("The percentage of time in which the vector engines were {why}."),
                        pct_of(30, Load::Stall),
                    )
                })
                .collect(),
                family(
                    "XeCore{}StallSbid",
                    XE_CORES,
                    &core("stall on SBID: the percentage of time waiting for sends."),
                    pct_of(40, Load::Stall),
                ),
                family(
                    "XeCore{}StallPipe",
                    XE_CORES,
                    &core("stall on pipes: the percentage of time waiting for a busy pipe."),
                    pct_of(20, Load::Stall),
                ),
            ],
        ),
        eu_activity(1, "FPU pipes"),
        eu_activity(2, "send and extended math pipes"),
        eu_activity(3, "thread occupancy"),
        eu_activity(4, "barriers and atomics"),
        oa(
            "TestOa",
            "HW test metric set: counters that count clocks at fixed ratios",
            vec![family(
                "Counter{}",
                8,
                "Test counter {}: counts GPU clocks at a fixed ratio.",
                ranged(Unit::Events, 500_000_000, Load::Busy),
            )],
        ),
    ]
}

/// `EuActivityN`: per-XeCore active, stall and occupancy shares for one view of the EUs.
fn eu_activity(n: usize, what: &str) -> GroupConfig {
    oa(
        &format!("EuActivity{n}"),
        &format!("EU activity by XeCore ({what})"),
        vec![
            family(
                "XeCore{}EuActive",
                XE_CORES,
                "XeCore {}: the percentage of time its EUs were active.",
                pct(Load::Fpu),
            ),
            family(
                "XeCore{}EuStall",
                XE_CORES,
                "XeCore {}: the percentage of time its EUs were stalled.",
                pct(Load::Stall),
            ),
            family("XeCore{}EuIdle", XE_CORES, "XeCore {}: the percentage of time its EUs were idle.", pct(Load::Idle)),
        ],
    )
}
