//! The 3D-pipeline groups of the realistic catalogue (render, rasterizer and pixel back end,
//! samplers, thread dispatch: zero on a compute workload, as on real hardware), and the groups
//! outside the OA domain: stall sampling, and two groups that export their memory.

use super::kit::*;
use super::model::{Load, Unit};
use crate::config::{Export, GroupConfig};

/// Render, rasterizer, sampler and thread-dispatch groups.
pub(super) fn groups() -> Vec<GroupConfig> {
    let px = |name: &str, description: &str| m(name, description, events(Unit::Pixels, 2_000_000_000, Load::Graphics));
    let threads = |name: &str, what: &str| {
        m(
            name,
            &format!("The total number of {what} hardware threads dispatched."),
            events(Unit::Threads, 50_000_000, Load::Graphics),
        )
    };
    let stages = [
        ("Vf", "vertex fetch"),
        ("Vs", "vertex shader"),
        ("Hs", "hull shader"),
        ("Ds", "domain shader"),
        ("Gs", "geometry shader"),
        ("So", "stream output"),
        ("Cl", "clipper"),
        ("Sf", "strips and fans"),
        ("Hiz", "hierarchical depth test"),
        ("Iz", "early depth test"),
        ("Ps", "pixel shader"),
        ("Pb", "pixel blend"),
    ];
    let stage = |suffix: &str, what: &str| {
        stages
            .iter()
            .map(|(s, name)| {
                m(
                    &format!("{s}{suffix}"),
                    &format!("The percentage of time the {name} stage was {what}."),
                    pct(Load::Graphics),
                )
            })
            .collect::<Vec<_>>()
    };
    vec![
        oa(
            "RenderBasic",
            "Render Metrics Basic set",
            vec![vec![
                threads("VsThreads", "vertex shader"),
                threads("HsThreads", "hull shader"),
                threads("DsThreads", "domain shader"),
                threads("GsThreads", "geometry shader"),
                threads("PsThreads", "pixel shader"),
                m(
                    "CsThreads",
                    "The total number of compute shader hardware threads dispatched.",
                    events(Unit::Threads, 2_000_000, Load::Busy),
                ),
                m(
                    "EuActive",
                    "The percentage of time in which the Execution Units were actively processing.",
                    pct(Load::Fpu),
                ),
                m("EuStall", "The percentage of time in which the Execution Units were stalled.", pct(Load::Stall)),
                px("RasterizedPixels", "The total number of rasterized pixels."),
                px("HiDepthTestFails", "The total number of pixels dropped on early hierarchical depth test."),
                px("EarlyDepthTestFails", "The total number of pixels dropped on early depth test."),
                px("SamplesKilledInPs", "The total number of samples or pixels dropped in pixel shaders."),
                px(
                    "PixelsFailingPostPsTests",
                    "The total number of pixels dropped on post-PS alpha, stencil, or depth tests.",
                ),
                px("SamplesWritten", "The total number of samples or pixels written to all render targets."),
                px("SamplesBlended", "The total number of blended samples or pixels written to all render targets."),
                m(
                    "SamplerTexels",
                    "The total number of texels seen on input in all sampler units.",
                    events(Unit::Texels, 4_000_000_000, Load::Graphics),
                ),
                m(
                    "SamplerTexelMisses",
                    "The total number of texel lookups that missed L1 sampler cache.",
                    events(Unit::Texels, 400_000_000, Load::Graphics),
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
            ]],
        ),
        oa(
            "RenderPipeProfile",
            "Render Metrics for 3D Pipeline Profile",
            vec![stage("Bottleneck", "the bottleneck"), stage("Stall", "stalled")],
        ),
        oa(
            "RasterizerAndPixelBackend",
            "Metric set RasterizerAndPixelBackend",
            vec![
                vec![
                    px("RasterizedPixels", "The total number of rasterized pixels."),
                    px("SamplesWritten", "The total number of samples or pixels written to all render targets."),
                    px(
                        "SamplesBlended",
                        "The total number of blended samples or pixels written to all render targets.",
                    ),
                ],
                family(
                    "Slice{}RasterizerInputAvailable",
                    8,
                    "Slice {}: the percentage of time the rasterizer had input.",
                    pct(Load::Graphics),
                ),
                family(
                    "Slice{}RasterizerOutputReady",
                    8,
                    "Slice {}: the percentage of time the rasterizer had output ready.",
                    pct(Load::Graphics),
                ),
                family(
                    "Slice{}PixelValues0Ready",
                    8,
                    "Slice {}: the percentage of time pixel values were ready.",
                    pct(Load::Graphics),
                ),
                family(
                    "Slice{}PixelBackendInputAvailable",
                    8,
                    "Slice {}: the percentage of time the pixel back end had input.",
                    pct(Load::Graphics),
                ),
            ],
        ),
        oa(
            "Sampler",
            "Metric set Sampler",
            vec![
                family("Sampler{}Busy", 16, "The percentage of time sampler {} was busy.", pct(Load::Graphics)),
                family(
                    "Sampler{}Bottleneck",
                    16,
                    "The percentage of time sampler {} was a bottleneck.",
                    pct(Load::Graphics),
                ),
                family(
                    "Sampler{}Texels",
                    16,
                    "The texels sampler {} read.",
                    events(Unit::Texels, 250_000_000, Load::Graphics),
                ),
            ],
        ),
        tdl(1, "pixel and compute thread dispatch by slice"),
        tdl(2, "thread dispatch queues by slice"),
    ]
}

/// `TDL_N`: thread dispatch by slice.
fn tdl(n: usize, description: &str) -> GroupConfig {
    let body = if n == 1 {
        vec![
            family(
                "Slice{}PsThreadsDispatched",
                8,
                "Slice {}: the pixel shader threads dispatched.",
                events(Unit::Threads, 6_000_000, Load::Graphics),
            ),
            family(
                "Slice{}CsThreadsDispatched",
                8,
                "Slice {}: the compute shader threads dispatched.",
                events(Unit::Threads, 250_000, Load::Busy),
            ),
            family(
                "Slice{}ThreadDispatcherActive",
                8,
                "Slice {}: the percentage of time its thread dispatcher was active.",
                pct_of(30, Load::Busy),
            ),
        ]
    } else {
        vec![
            family(
                "Slice{}DispatchQueueFull",
                8,
                "Slice {}: the percentage of time its dispatch queue was full.",
                pct_of(20, Load::Stall),
            ),
            family(
                "Slice{}DispatchQueueEmpty",
                8,
                "Slice {}: the percentage of time its dispatch queue was empty.",
                pct(Load::Idle),
            ),
            family("Slice{}ThreadsInFlight", 8, "Slice {}: the hardware threads in flight.", number(512, Load::Busy)),
        ]
    };
    oa(&format!("TDL_{n}"), &format!("Metric set TDL_{n}: {description}"), body)
}

/// The groups outside the OA domain.
pub(super) fn other_domains() -> Vec<GroupConfig> {
    vec![
        super::eu_stall_sampling(),
        GroupConfig {
            name: "EngineActivity".into(),
            description: "Engine busy time, clocks and utilization (exported as one DMA-BUF)".into(),
            domain: 2,
            export: Export::Group,
            metrics: vec![
                m("EngineBusyTime", "Time the compute engines were busy.", duration()),
                m("EngineBusyCycles", "GPU core clocks while the compute engines were busy.", clocks()),
                m("EngineUtilization", "The percentage of time the compute engines were busy.", pct(Load::Busy)),
                m("EngineStallShare", "The percentage of time the compute engines were stalled.", pct(Load::Stall)),
                m("EngineContextId", "The context the engines ran last.", raw(32)),
                m("EngineFrequency", "The engines' current frequency.", raw_mhz()),
            ],
            ..GroupConfig::default()
        },
        GroupConfig {
            name: "MemoryBandwidth".into(),
            description: "Device memory traffic and bandwidth use (exported as one DMA-BUF)".into(),
            domain: 3,
            export: Export::Group,
            metrics: vec![
                // Counts of bytes typed EVENT: a layout reads EVENT and DURATION slots as running totals.
                m(
                    "MemoryBytesRead",
                    "The bytes read from device memory.",
                    events(Unit::Bytes, 40_000_000_000, Load::Memory),
                ),
                m(
                    "MemoryBytesWritten",
                    "The bytes written to device memory.",
                    events(Unit::Bytes, 12_000_000_000, Load::Memory),
                ),
                m(
                    "MemoryReadRequests",
                    "The read requests served by device memory.",
                    events(Unit::Requests, 600_000_000, Load::Memory),
                ),
                m("MemoryBandwidthUtilization", "The share of the peak bandwidth in use.", pct(Load::Memory)),
            ],
            ..GroupConfig::default()
        },
    ]
}
