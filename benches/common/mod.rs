//! The simulated device the sampler benchmarks run against: its default devices plus one group
//! of synthetic counters exported as one buffer.

use std::sync::Arc;

use ze_sim::Sim;
use ze_sim::config::{Export, GroupConfig, MetricsEnable, SimConfig};

/// Adds a "Synthetic" group of `counters` gauges (domain 7) to the default GPU; the device
/// writes a snapshot every `update_period_us`.
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
    });
    Arc::new(Sim::new(cfg))
}
