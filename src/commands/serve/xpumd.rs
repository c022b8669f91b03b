//! `serve --names`: the page under zescope's names, xpumd's, or both (`docs/otel.md`).
//!
//! xpumd's names are the run's OTel plan (`zescope_openmetrics::otel`) as the OpenTelemetry
//! Prometheus translation names it: the `hw.*` metrics become `hw_power_watts{pci_bdf=…,
//! hw_sensor_location=…}` and the like, which xpumd's Grafana dashboard and alert rules select.
//! With `--names xpumd` alone, the values those cover are no longer served under zescope's
//! names (everything else still is, under `zescope_*`); with `--names zescope,xpumd` both are.

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use zescope_openmetrics::otel::{self, Device, Kind, Plan};
use zescope_openmetrics::{Catalog, RunDescription};
use zescope_sampler::{DeviceEntry, RunInfo};
use zescope_ze::DeviceKind;

/// One of `--names`' words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Names {
    /// zescope's own names (`zescope_*`).
    Zescope,
    /// xpumd's names for the telemetry it names (`hw_*`).
    Xpumd,
}

/// Which names the page serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameSet {
    /// `zescope_*` for every value.
    pub zescope: bool,
    /// `hw_*` for the telemetry xpumd names.
    pub xpumd: bool,
}

impl Default for NameSet {
    /// zescope's names only.
    fn default() -> NameSet {
        NameSet { zescope: true, xpumd: false }
    }
}

impl Names {
    /// The set `--names` lists (zescope's alone when empty).
    pub fn set(list: &[Names]) -> NameSet {
        if list.is_empty() {
            return NameSet::default();
        }
        NameSet { zescope: list.contains(&Names::Zescope), xpumd: list.contains(&Names::Xpumd) }
    }
}

/// The `hw.type` of a device kind.
pub fn kind_name(kind: DeviceKind) -> &'static str {
    match kind {
        DeviceKind::Gpu => "gpu",
        DeviceKind::Npu => "npu",
        DeviceKind::Cpu => "cpu",
        DeviceKind::Fpga => "fpga",
        _ => "",
    }
}

/// The OTel plan of a live run: `run` and `catalog` as the page plans them, each device's vendor
/// and kind from the inventory (found by the run's device path, as `RunDescription::live` does).
pub fn plan(run: &RunDescription, catalog: &Catalog, info: &RunInfo, inventory: &[DeviceEntry]) -> Plan {
    let devices = run
        .devices
        .iter()
        .enumerate()
        .map(|(t, d)| {
            let path = info.config.targets.get(t).map(|x| x.device);
            let entry = inventory
                .iter()
                .find(|e| Some(e.path) == path && e.name == d.name)
                .or_else(|| inventory.iter().find(|e| Some(e.path) == path));
            Device::new(d, entry.map(|e| e.vendor_id), entry.map_or("", |e| kind_name(e.kind)))
        })
        .collect();
    Plan::new(run, catalog, devices)
}

/// The run's values that xpumd's names cover (`true` at their index), for `--names xpumd` alone
/// to leave out of the `zescope_*` families.
pub fn covered(plan: &Plan, width: usize) -> Vec<bool> {
    let mut covered = vec![false; width];
    for p in plan.points.iter().filter(|p| plan.metrics.get(p.metric).is_some_and(|m| m.convention)) {
        // A combined point (utilization, io rate) is extra: its values keep their own names.
        if p.with.is_none()
            && let Some(c) = p.value.and_then(|v| covered.get_mut(v))
        {
            *c = true;
        }
    }
    covered
}

/// Writes the plan's `hw.*` metrics at `values`, under their Prometheus names.
pub fn encode(enc: &mut DescriptorEncoder, plan: &Plan, values: &[f64]) -> std::fmt::Result {
    for (mi, m) in plan.metrics.iter().enumerate().filter(|(_, m)| m.convention) {
        let mut points =
            plan.points.iter().filter(|p| p.metric == mi).filter_map(|p| Some((p, plan.value(p, values)?))).peekable();
        if points.peek().is_none() {
            continue;
        }
        // The unit is in the translated name already; `# UNIT` would have it appended again.
        let name = otel::prometheus_name(m);
        let (name, kind) = match m.kind {
            Kind::Counter => (name.strip_suffix("_total").unwrap_or(&name).to_owned(), MetricType::Counter),
            Kind::Gauge | Kind::UpDown => (name, MetricType::Gauge),
        };
        let mut family = enc.encode_descriptor(&name, &m.description, None, kind)?;
        for (p, v) in points {
            let labels: Vec<(String, String)> =
                p.attributes.iter().map(|(k, v)| (otel::prometheus_label(k), v.clone())).collect();
            if m.kind == Kind::Counter {
                ConstCounter::new(v).encode(family.encode_family(&labels)?)?;
            } else {
                ConstGauge::new(v).encode(family.encode_family(&labels)?)?;
            }
        }
    }
    Ok(())
}
