//! The simulated device the sampler benchmarks run against: its default devices plus one group
//! of synthetic counters exported as one buffer.

use std::sync::Arc;

use ze_sim::Sim;
use ze_sim::config::{Export, GroupConfig, MetricsEnable, SimConfig};

/// Adds a "Synthetic" group of `counters` gauges (domain 7) to the default GPU; the device
/// writes a snapshot every `update_period_us`.
#[allow(dead_code)]
pub fn synthetic_sim(counters: u32, update_period_us: u64) -> Arc<Sim> {
    let mut cfg = SimConfig { metrics: MetricsEnable::Always, update_period_us, ..Default::default() };
    cfg.devices[0].groups.push(GroupConfig {
        name: "Synthetic".into(),
        description: "synthetic counters".into(),
        domain: 7,
        export: Export::Group,
        metrics: Vec::new(),
        synthetic_counters: counters,
        stream: false,
        tracer: false,
    });
    Arc::new(Sim::new(cfg))
}

/// Adds a "Stream16" group read with the time-based streamer to the default GPU: its timestamp
/// metric and 15 synthetic counters (16 metrics), exporting nothing (domain 8). Only the
/// sampler bench uses it.
#[allow(dead_code)]
pub fn streamed_sim() -> Arc<Sim> {
    let mut cfg = SimConfig { metrics: MetricsEnable::Always, ..Default::default() };
    cfg.devices[0].groups.push(GroupConfig {
        name: "Stream16".into(),
        description: "16 metrics for the streamer".into(),
        domain: 8,
        export: Export::None,
        metrics: Vec::new(),
        synthetic_counters: 15,
        stream: true,
        tracer: false,
    });
    Arc::new(Sim::new(cfg))
}

/// The default GPU with a "Synthetic" group of `counters` counters read from exported memory and
/// a "Stream16" group of 16 metrics for the streamer, the device writing every `update_period_us`.
#[allow(dead_code)]
pub fn counters_sim(counters: u32, update_period_us: u64) -> Arc<Sim> {
    let mut cfg = SimConfig { metrics: MetricsEnable::Always, update_period_us, ..Default::default() };
    for (name, domain, export, stream, n) in
        [("Synthetic", 7, Export::Group, false, counters), ("Stream16", 8, Export::None, true, 15)]
    {
        cfg.devices[0].groups.push(GroupConfig {
            name: name.into(),
            description: format!("{name} for the benchmarks"),
            domain,
            export,
            metrics: Vec::new(),
            synthetic_counters: n,
            stream,
            tracer: false,
        });
    }
    Arc::new(Sim::new(cfg))
}
