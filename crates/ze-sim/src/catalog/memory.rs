//! The memory and cache groups of the realistic catalogue: device memory by channel, the L3 banks,
//! the load/store cache and shared local memory, the data ports, and Xe Link.

use super::kit::*;
use super::model::{Load, Unit};
use crate::config::GroupConfig;

/// L3 banks the per-bank families count.
const L3_BANKS: usize = 16;
/// Memory channels the per-channel families count.
const CHANNELS: usize = 8;

/// The memory and cache groups.
pub(super) fn groups() -> Vec<GroupConfig> {
    let mut out = vec![
        oa(
            "MemoryReads",
            "Memory Reads Distribution metrics set",
            vec![
                vec![
                    m(
                        "GtiReadThroughput",
                        "The total number of GPU memory bytes read from GTI.",
                        bytes(40_000_000_000, Load::Memory),
                    ),
                    m(
                        "GtiL3Throughput",
                        "The total number of GPU memory bytes transferred between L3 caches and GTI.",
                        bytes(45_000_000_000, Load::Memory),
                    ),
                    m(
                        "GtiMemoryReads",
                        "The total number of memory read requests sent by GTI.",
                        events(Unit::Requests, 600_000_000, Load::Memory),
                    ),
                ],
                family(
                    "MemoryChannel{}ReadBytes",
                    CHANNELS,
                    "The bytes read through memory channel {}.",
                    bytes(5_000_000_000, Load::Memory),
                ),
                family(
                    "MemoryChannel{}ReadRequests",
                    CHANNELS,
                    "The read requests served by memory channel {}.",
                    events(Unit::Requests, 80_000_000, Load::Memory),
                ),
            ],
        ),
        oa(
            "MemoryWrites",
            "Memory Writes Distribution metrics set",
            vec![
                vec![
                    m(
                        "GtiWriteThroughput",
                        "The total number of GPU memory bytes written to GTI.",
                        bytes(12_000_000_000, Load::Memory),
                    ),
                    m(
                        "GtiMemoryWrites",
                        "The total number of memory write requests sent by GTI.",
                        events(Unit::Requests, 200_000_000, Load::Memory),
                    ),
                ],
                family(
                    "MemoryChannel{}WriteBytes",
                    CHANNELS,
                    "The bytes written through memory channel {}.",
                    bytes(1_500_000_000, Load::Memory),
                ),
                family(
                    "MemoryChannel{}WriteRequests",
                    CHANNELS,
                    "The write requests served by memory channel {}.",
                    events(Unit::Requests, 25_000_000, Load::Memory),
                ),
            ],
        ),
        oa(
            "GpuMemoryProfile",
            "Device memory: bandwidth, utilization and page activity",
            vec![vec![
                m("GpuMemoryByteRead", "The bytes read from device memory.", bytes(40_000_000_000, Load::Memory)),
                m("GpuMemoryByteWrite", "The bytes written to device memory.", bytes(12_000_000_000, Load::Memory)),
                m("GpuMemoryReadBandwidthUtilization", "The share of the peak read bandwidth used.", pct(Load::Memory)),
                m(
                    "GpuMemoryWriteBandwidthUtilization",
                    "The share of the peak write bandwidth used.",
                    pct_of(40, Load::Memory),
                ),
                m("GpuMemoryPageOpens", "The DRAM pages opened.", events(Unit::Events, 300_000_000, Load::Memory)),
                m(
                    "GpuMemoryPageHits",
                    "The accesses that hit an open DRAM page.",
                    events(Unit::Events, 500_000_000, Load::Memory),
                ),
                m(
                    "GpuMemoryRefreshes",
                    "The refresh cycles of device memory.",
                    events(Unit::Events, 1_000_000, Load::Idle),
                ),
                m("TlbMisses", "The GPU TLB misses.", events(Unit::Events, 2_000_000, Load::Memory)),
            ]],
        ),
    ];
    for (n, what) in [(1, "input"), (2, "output"), (3, "hits and misses"), (4, "stalls")] {
        out.push(l3(n, what));
    }
    out.extend([
        oa(
            "ComputeL3Cache",
            "Compute Metrics L3 Cache set",
            vec![
                vec![
                    m(
                        "L3Lookups",
                        "The total number of L3 cache lookups.",
                        events(Unit::Messages, 3_000_000_000, Load::Memory),
                    ),
                    m("L3Misses", "The total number of L3 misses.", events(Unit::Messages, 400_000_000, Load::Memory)),
                    m("L3HitRate", "The percentage of L3 lookups that hit.", pct_of(95, Load::Busy)),
                    m(
                        "L3ShaderThroughput",
                        "The bytes transferred between shaders and L3 caches.",
                        bytes(250_000_000_000, Load::Memory),
                    ),
                ],
                family(
                    "L3Bank{}Lookups",
                    L3_BANKS,
                    "The lookups of L3 bank {}.",
                    events(Unit::Messages, 200_000_000, Load::Memory),
                ),
                family(
                    "L3Bank{}Misses",
                    L3_BANKS,
                    "The misses of L3 bank {}.",
                    events(Unit::Messages, 25_000_000, Load::Memory),
                ),
            ],
        ),
        oa(
            "LscProfile",
            "Load/store cache: accesses, hits and partial writes",
            vec![vec![
                m(
                    "LoadStoreCacheAccesses",
                    "The accesses to the load/store cache.",
                    events(Unit::Messages, 3_000_000_000, Load::Memory),
                ),
                m(
                    "LoadStoreCacheHits",
                    "The load/store cache accesses that hit.",
                    events(Unit::Messages, 2_200_000_000, Load::Memory),
                ),
                m(
                    "LoadStoreCacheHitRate",
                    "The percentage of load/store cache accesses that hit.",
                    pct_of(80, Load::Busy),
                ),
                m(
                    "LoadStoreCachePartialWriteCount",
                    "The partial writes to the load/store cache.",
                    events(Unit::Messages, 40_000_000, Load::Memory),
                ),
                m(
                    "LoadStoreCacheBytesRead",
                    "The bytes read through the load/store cache.",
                    bytes(200_000_000_000, Load::Memory),
                ),
                m(
                    "LoadStoreCacheBytesWritten",
                    "The bytes written through the load/store cache.",
                    bytes(60_000_000_000, Load::Memory),
                ),
                m(
                    "LoadStoreCacheL3Reads",
                    "The load/store cache misses read from L3.",
                    events(Unit::Messages, 700_000_000, Load::Memory),
                ),
                m(
                    "LoadStoreCacheL3Writes",
                    "The load/store cache lines written to L3.",
                    events(Unit::Messages, 300_000_000, Load::Memory),
                ),
            ]],
        ),
        l1("L1ProfileReads", "L1 cache reads by XeCore", "Reads", Load::Memory),
        l1("L1ProfileWrites", "L1 cache writes by XeCore", "Writes", Load::Memory),
        oa(
            "L1ProfileSlmBankConflicts",
            "Shared local memory bank conflicts by XeCore",
            vec![
                vec![
                    m("SlmBytesRead", "The bytes read from shared local memory.", bytes(60_000_000_000, Load::Fpu)),
                    m(
                        "SlmBytesWritten",
                        "The bytes written into shared local memory.",
                        bytes(20_000_000_000, Load::Fpu),
                    ),
                    m(
                        "SlmBankConflictCount",
                        "The shared local memory bank conflicts.",
                        events(Unit::Events, 90_000_000, Load::Fpu),
                    ),
                ],
                family(
                    "XeCore{}SlmBankConflicts",
                    16,
                    "XeCore {}: its shared local memory bank conflicts.",
                    events(Unit::Events, 6_000_000, Load::Fpu),
                ),
                family(
                    "XeCore{}SlmAccesses",
                    16,
                    "XeCore {}: its shared local memory accesses.",
                    events(Unit::Messages, 100_000_000, Load::Fpu),
                ),
            ],
        ),
        dataport("DataportReads", "Data port reads by XeCore", "read", 8_000_000_000),
        dataport("DataportWrites", "Data port writes by XeCore", "written", 2_000_000_000),
        oa(
            "HDCAndSF",
            "Metric set HDCAndSF: the data cache and shared functions",
            vec![
                vec![
                    m("HdcBusy", "The percentage of time the data cache was busy.", pct(Load::Memory)),
                    m("SfBusy", "The percentage of time the shared functions were busy.", pct_of(60, Load::Busy)),
                    m("HdcReadBytes", "The bytes the data cache read.", bytes(30_000_000_000, Load::Memory)),
                    m("HdcWriteBytes", "The bytes the data cache wrote.", bytes(9_000_000_000, Load::Memory)),
                ],
                family(
                    "Slice{}HdcStall",
                    8,
                    "Slice {}: the percentage of time its data cache was stalled.",
                    pct_of(40, Load::Stall),
                ),
                family(
                    "Slice{}SfStall",
                    8,
                    "Slice {}: the percentage of time its shared functions were stalled.",
                    pct_of(25, Load::Stall),
                ),
            ],
        ),
        oa(
            "XeLinkProfile",
            "Xe Link traffic by link",
            vec![
                family("XeLink{}TxBytes", 8, "The bytes sent over Xe Link {}.", bytes(2_000_000_000, Load::Memory)),
                family("XeLink{}RxBytes", 8, "The bytes received over Xe Link {}.", bytes(2_000_000_000, Load::Memory)),
                family(
                    "XeLink{}Utilization",
                    8,
                    "The share of Xe Link {}'s bandwidth in use.",
                    pct_of(30, Load::Memory),
                ),
            ],
        ),
    ]);
    out
}

/// `L3_N`: one view of the 16 L3 banks.
fn l3(n: usize, what: &str) -> GroupConfig {
    let family_of = |name: &str, description: &str, model| family(name, L3_BANKS, description, model);
    let body = match n {
        1 => vec![
            family_of(
                "L3Bank{}InputAvailable",
                "The percentage of time L3 bank {} had input available.",
                pct(Load::Memory),
            ),
            family_of(
                "L3Bank{}InputAccepted",
                "The percentage of time L3 bank {} accepted input.",
                pct_of(90, Load::Memory),
            ),
        ],
        2 => vec![
            family_of("L3Bank{}OutputReady", "The percentage of time L3 bank {} had output ready.", pct(Load::Memory)),
            family_of(
                "L3Bank{}OutputAccepted",
                "The percentage of time L3 bank {}'s output was accepted.",
                pct_of(90, Load::Memory),
            ),
        ],
        3 => vec![
            family_of("L3Bank{}Hits", "The hits of L3 bank {}.", events(Unit::Messages, 180_000_000, Load::Memory)),
            family_of("L3Bank{}Misses", "The misses of L3 bank {}.", events(Unit::Messages, 25_000_000, Load::Memory)),
        ],
        _ => vec![
            family_of("L3Bank{}Stalled", "The percentage of time L3 bank {} was stalled.", pct_of(50, Load::Stall)),
            family_of("L3Bank{}Busy", "The percentage of time L3 bank {} was busy.", pct(Load::Memory)),
        ],
    };
    oa(&format!("L3_{n}"), &format!("L3 cache metrics set {n}: {what} by bank"), body)
}

/// An L1 profile of `what` (reads or writes) by XeCore.
fn l1(name: &str, description: &str, what: &str, load: Load) -> GroupConfig {
    let lower = what.to_lowercase();
    oa(
        name,
        description,
        vec![
            vec![
                m(&format!("L1{what}"), &format!("The L1 cache {lower}."), events(Unit::Messages, 2_000_000_000, load)),
                m(
                    &format!("L1{what}Hits"),
                    &format!("The L1 cache {lower} that hit."),
                    events(Unit::Messages, 1_500_000_000, load),
                ),
            ],
            family(
                &format!("XeCore{{}}L1{what}"),
                16,
                &format!("XeCore {{}}: its L1 cache {lower}."),
                events(Unit::Messages, 120_000_000, load),
            ),
            family(
                &format!("XeCore{{}}L1{what}Hits"),
                16,
                &format!("XeCore {{}}: its L1 cache {lower} that hit."),
                events(Unit::Messages, 90_000_000, load),
            ),
        ],
    )
}

/// A data port profile: bytes `what` by XeCore.
fn dataport(name: &str, description: &str, what: &str, per_core: u64) -> GroupConfig {
    oa(
        name,
        description,
        vec![
            vec![m(
                &format!("DataportBytes{}", if what == "read" { "Read" } else { "Written" }),
                &format!("The bytes {what} through the data ports."),
                bytes(16 * per_core, Load::Memory),
            )],
            family(
                &format!("XeCore{{}}DataportBytes{}", if what == "read" { "Read" } else { "Written" }),
                16,
                &format!("XeCore {{}}: the bytes {what} through its data port."),
                bytes(per_core, Load::Memory),
            ),
            family(
                "XeCore{}DataportBusy",
                16,
                "XeCore {}: the percentage of time its data port was busy.",
                pct(Load::Memory),
            ),
        ],
    )
}
