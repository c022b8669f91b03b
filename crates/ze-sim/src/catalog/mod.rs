//! Metric catalogues: the built-in one (a handful of groups per device, the default
//! `SimConfig`'s) or a realistic one, the size and shape of a real Intel GPU's, chosen with
//! `SimConfig::catalog`.
//!
//! # The realistic catalogue
//!
//! With `catalog: Realistic`, every GPU device (root and sub-device) reports the groups of
//! [`realistic_groups`] instead of its configured `groups`; NPUs keep theirs. The catalogue has
//! 34 groups and about 1,300 metrics, written after what Intel's tools document (pti-gpu's
//! oneprof and unitrace listings, the OA metric sets): group and metric names, descriptions,
//! units (ns, cycles, %, bytes, MHz, threads, pixels, texels, messages, number, …), metric types
//! (DURATION, EVENT, EVENT_WITH_RANGE, THROUGHPUT, RATIO, TIMESTAMP, RAW, FLAG) and result
//! types (u32, u64, f32, bool8).
//!
//! - 31 groups in the OA domain (0), time-based, read by the metric streamer, exporting nothing,
//!   as on today's drivers: `ComputeBasic` with the 45 metrics oneprof prints (`GpuTime`,
//!   `GpuCoreClocks`, `AvgGpuCoreFrequencyMHz`, `GpuBusy`, the thread, EU, pixel, texel, SLM,
//!   shader and GTI counters, `QueryBeginTime`, the frequencies, `ReportReason`, `ContextId`,
//!   `StreamMarker`), `ComputeExtended`, `VectorEngineProfile`, `VectorEngineStalls`,
//!   `EuActivity1..4`, `TestOa`, `MemoryReads`, `MemoryWrites`, `GpuMemoryProfile`, `L3_1..4`,
//!   `ComputeL3Cache`, `LscProfile`, `L1Profile*`, `DataportReads/Writes`, `HDCAndSF`,
//!   `XeLinkProfile`, `RenderBasic`, `RenderPipeProfile`, `RasterizerAndPixelBackend`,
//!   `Sampler`, `TDL_1`, `TDL_2`. Every one but `ComputeBasic` starts with `GpuTime`,
//!   `GpuCoreClocks`, `AvgGpuCoreFrequencyMHz`, `GpuBusy` and ends with the frequencies, the
//!   raw report words and the FLAG `CoreFrequencyChanged`; most hold per-unit families
//!   (16 XeCores, 16 L3 banks, 8 slices, 8 memory channels, 8 Xe Links).
//! - `EuStallSampling` (domain 100): the IP-sampling group ([`eu_stall_sampling`]), time-based
//!   only, as compute-runtime publishes it.
//! - The built-in model's tracer-based `KernelTrace` is not in it: a realistic GPU's groups are
//!   what the time-based streamer and exported memory read.
//! - `EngineActivity` (domain 2) and `MemoryBandwidth` (domain 3): exported as one DMA-BUF each
//!   (ze-sim's buffer format, which zescope's built-in `ze-sim (any group)` layout decodes by
//!   the metrics' result types), read as exported memory.
//!
//! Values follow the workload's phases per metric ([`model::Load`]): a compute workload keeps
//! the 3D counters (vertices, pixels, texels) at zero, as on real hardware.
//!
//! # What the catalogue changes in the driver
//!
//! A modelled metric ([`crate::config::Signal::Modelled`]) reports its own metric type, result
//! type and unit (`override_types`); its level is written into an exported buffer in the low
//! bytes of its 8-byte slot as its result type (`gauge`); Calculate answers its values in its
//! result type (`retype`). Counts are integrated like the built-in cumulative signals.

mod compute;
mod ip_sampling;
mod kit;
mod memory;
pub mod model;
mod render;

use level_zero_sys::*;
use serde::{Deserialize, Serialize};

pub use ip_sampling::{EU_SAMPLING_DOMAIN, eu_stall_sampling};

use crate::config::{DeviceKind, GroupConfig, Signal, SimConfig};
use crate::instance::MetricRef;

/// Which metric groups the simulated GPUs report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Catalog {
    /// Each device's configured `groups` (the built-in model's handful by default).
    #[default]
    Builtin,
    /// Every GPU device reports the realistic catalogue ([`realistic_groups`]) instead.
    Realistic,
}

/// The realistic catalogue's groups, in the order `zetMetricGroupGet` reports them.
pub fn realistic_groups() -> Vec<GroupConfig> {
    let mut groups = vec![compute::compute_basic()];
    groups.extend(compute::groups());
    groups.extend(memory::groups());
    groups.extend(render::groups());
    groups.extend(render::other_domains());
    groups
}

/// The name of the test-only group `SimConfig::unreadable_group` adds.
pub const UNREADABLE_GROUP: &str = "Unreadable";

/// The test-only group no way reads (`SimConfig::unreadable_group`).
fn unreadable_group() -> GroupConfig {
    GroupConfig {
        name: UNREADABLE_GROUP.into(),
        description: "Test-only: event-based only, no exported memory (no way of reading it)".into(),
        domain: 5,
        export: crate::config::Export::None,
        metrics: vec![crate::config::MetricConfig {
            name: "UnreadableSamples".into(),
            description: "Samples nothing reads".into(),
            signal: Signal::Synthetic,
        }],
        synthetic_counters: 0,
        stream: false,
        tracer: false,
    }
}

/// `config` with its GPU devices' groups replaced by the realistic catalogue when it asks for it,
/// and the test-only unreadable group added when it asks for that (the model builder calls this
/// first).
pub(crate) fn apply(mut config: SimConfig) -> SimConfig {
    if config.catalog == Catalog::Realistic {
        let groups = realistic_groups();
        let gpu = |d: &mut crate::config::DeviceConfig| {
            if d.kind == DeviceKind::Gpu {
                d.groups = groups.clone();
            }
        };
        for d in &mut config.devices {
            gpu(d);
            d.sub_devices.iter_mut().for_each(gpu);
        }
    }
    if config.unreadable_group
        && let Some(gpu) = config.devices.iter_mut().find(|d| d.kind == DeviceKind::Gpu)
        && !gpu.groups.iter().any(|g| g.name == UNREADABLE_GROUP)
    {
        gpu.groups.push(unreadable_group());
    }
    config
}

/// A gauge's 8-byte slot word and the value a reader decodes from it: the f64 for built-in
/// signals, the model's result type in the low bytes for a modelled metric.
pub(crate) fn gauge(signal: Signal, level: f64) -> (u64, f64) {
    match signal {
        Signal::Modelled(m) => {
            let (_, word, value) = m.result.encode(level);
            (word, value)
        }
        _ => (level.to_bits(), level),
    }
}

/// Turns Calculate's values of modelled metrics (report after report, `metrics` each) into
/// their result types; other values are left as they are.
pub(crate) fn retype(metrics: &[MetricRef], values: &mut [zet_typed_value_t]) {
    if metrics.is_empty() {
        return;
    }
    for (i, v) in values.iter_mut().enumerate() {
        *v = retyped(&metrics[i % metrics.len()], *v);
    }
}

/// Calculate's value `v` of `metric` in its result type when the metric is modelled; any other
/// as it is.
pub(crate) fn retyped(metric: &MetricRef, v: zet_typed_value_t) -> zet_typed_value_t {
    let Signal::Modelled(m) = metric.cfg.signal else {
        return v;
    };
    // Integers exactly (a u64 does not fit an f64's 53 bits), anything else as it is.
    let x = match v.r#type {
        ZET_VALUE_TYPE_UINT32 | ZET_VALUE_TYPE_UINT64 => v.as_u64().map_or(0.0, |u| u as f64),
        _ => v.as_f64().unwrap_or(0.0),
    };
    m.result.encode(x).0
}

#[cfg(test)]
mod tests;
