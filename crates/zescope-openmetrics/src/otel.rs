//! A run as OpenTelemetry metrics: every value of the run under an OTel name with a UCUM unit,
//! an instrument kind and attributes, planned once when the run starts ([`Plan::new`]), from the
//! same [`RunDescription`] and [`Catalog`] the OpenMetrics page is planned from.
//!
//! Two namespaces (the mapping table is `docs/otel.md`):
//!
//! - Telemetry that xpumd (Intel's XPU Manager 2.0, an OpenTelemetry Collector) publishes goes
//!   under xpumd's `hw.*` names and attributes ([`xpumd`]): `hw.power`, `hw.energy`,
//!   `hw.temperature`, `hw.frequency`, `hw.gpu.utilization`, `hw.memory.usage`, … with `hw.id`,
//!   `hw.name`, `pci.bdf`, `hw.sensor_location`, `com.intel.speed.throttle_reason`, … These
//!   are [`Metric::convention`] metrics: what `zescope serve --names xpumd` adds to its page
//!   (named as the OTel Prometheus translation names them, [`prometheus_name`]), so xpumd's
//!   dashboards and alert rules find them.
//! - Everything else (the metric groups' counters, telemetry xpumd has no name for) keeps a
//!   `zescope.` namespace: `zescope.` + its OpenMetrics family's name, so a collector that
//!   translates it back to Prometheus names it as `zescope serve` does (`zescope.gpu_busy`, unit
//!   `1`, a gauge → `zescope_gpu_busy_ratio`). Its labels become attributes: the device's as
//!   `hw.name`, `hw.id`, `pci.bdf`, `hw.driver_version`; the others as `zescope.<label>`.
//!
//! Counters are monotonic cumulative sums ([`Kind::Counter`], the driver's running total, as
//! the OpenMetrics page serves them), levels gauges, sizes non-monotonic sums
//! ([`Kind::UpDown`], as xpumd publishes `hw.memory.usage`). A point may combine two values of
//! the run ([`Combine`]): `hw.memory.utilization` is used over total, `hw.memory.io.rate` read
//! plus write.

pub mod xpumd;

use crate::catalog::{Catalog, Labels, RunDescription};
use crate::names;

/// How an OTel instrument aggregates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A monotonic cumulative sum (a counter).
    Counter,
    /// A gauge.
    Gauge,
    /// A non-monotonic cumulative sum (a level that adds up: sizes, usage, info).
    UpDown,
}

/// One OTel metric (one instrument).
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// The OTel name (`hw.power`, `zescope.gpu_busy`).
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its unit in UCUM (`W`, `J`, `Cel`, `Hz`, `By`, `By/s`, `s`, `1`; empty for a count).
    pub unit: &'static str,
    /// How it aggregates.
    pub kind: Kind,
    /// Named by xpumd's `hw.*` conventions (not in the `zescope.` namespace).
    pub convention: bool,
}

/// A second value a point combines with its own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Combine {
    /// Plus this value of the run (scaled by the point's scale too).
    Add(usize),
    /// Over this value of the run (a ratio; the scale is not applied).
    Over(usize),
}

/// One data point of one metric: which value(s) of the run it shows and its attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Index into [`Plan::metrics`].
    pub metric: usize,
    /// Index into [`Plan::devices`]: the device it belongs to.
    pub device: usize,
    /// Attributes, in the order written (the device's first).
    pub attributes: Labels,
    /// Index into the run's values; `None`: a constant 1 (an info metric such as `hw.gpu.info`).
    pub value: Option<usize>,
    /// Factor from the driver's unit into the metric's unit.
    pub scale: f64,
    /// A bit of a bitmask value: 1 when set, else 0.
    pub bit: Option<u32>,
    /// A second value combined with the first.
    pub with: Option<Combine>,
}

/// What a device is known as to OTel: its attributes (`hw.id`, `hw.name`, `hw.vendor`,
/// `pci.bdf`, `hw.driver_version`, `hw.type`), each when known.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Device {
    /// The attributes, in that order.
    pub attributes: Labels,
    /// A GPU (xpumd's `hw.gpu.info` is published for GPUs only).
    pub gpu: bool,
}

impl Device {
    /// A device of the run: its name, UUID, PCI address and driver version from `d`; its vendor
    /// from the PCI vendor id (`vendor_id`, when the inventory knows it); `kind` is its
    /// `hw.type` (`gpu`, `npu`, …; empty when not known).
    pub fn new(d: &crate::DeviceDescription, vendor_id: Option<u32>, kind: &str) -> Device {
        let mut attributes: Labels = Vec::new();
        let mut put = |k: &str, v: String| attributes.push((k.to_owned(), v));
        if let Some((uuid, _)) = &d.identity {
            put("hw.id", uuid.clone());
        }
        put("hw.name", d.name.clone());
        if let Some(v) = vendor_id {
            put("hw.vendor", vendor_name(v));
        }
        if let Some(bdf) = &d.pci_bdf {
            put("pci.bdf", bdf.clone());
        }
        if let Some((_, driver)) = &d.identity {
            put("hw.driver_version", format!("{driver:#x}"));
        }
        if !kind.is_empty() {
            put("hw.type", kind.to_owned());
        }
        Device { attributes, gpu: kind == "gpu" }
    }

    /// The attributes every point of the device carries (as xpumd's do): `hw.id`, `hw.name`,
    /// `pci.bdf`.
    pub fn point_attributes(&self) -> Labels {
        let keep = |(k, _): &&(String, String)| matches!(k.as_str(), "hw.id" | "hw.name" | "pci.bdf");
        self.attributes.iter().filter(keep).cloned().collect()
    }
}

/// A PCI vendor id's name (`0x8086` → "Intel"); another id as `0x…`.
pub fn vendor_name(id: u32) -> String {
    match id {
        0x8086 => "Intel".into(),
        other => format!("{other:#06x}"),
    }
}

/// The OTel metrics and points of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The metrics, in the order first seen.
    pub metrics: Vec<Metric>,
    /// The points, metric by metric in the order planned.
    pub points: Vec<Point>,
    /// The run's devices.
    pub devices: Vec<Device>,
}

impl Plan {
    /// The plan of a run: `catalog` is `Catalog::new(run)`; `devices` the run's devices as
    /// [`Device::new`] describes them (one per `run.devices`; a missing one gets only `hw.name`).
    pub fn new(run: &RunDescription, catalog: &Catalog, devices: Vec<Device>) -> Plan {
        let mut plan = Plan { devices, ..Plan::default() };
        for (i, d) in run.devices.iter().enumerate() {
            if plan.devices.len() <= i {
                plan.devices.push(Device::new(d, None, ""));
            }
        }
        // Values of the run that xpumd's names cover; the rest go to the `zescope.` namespace.
        let covered = xpumd::plan(run, &mut plan);
        let mut by_value: Vec<Vec<&crate::SampleRule>> = vec![Vec::new(); catalog.width];
        for rule in &catalog.rules {
            if let Some(v) = by_value.get_mut(rule.value) {
                v.push(rule);
            }
        }
        let mut device_of = vec![0; catalog.width];
        for (s, stream) in run.streams.iter().enumerate() {
            let start = catalog.stream_starts.get(s).copied().unwrap_or(0);
            for i in 0..stream.series.len() {
                if let Some(d) = device_of.get_mut(start + i) {
                    *d = stream.device;
                }
            }
        }
        for (value, rules) in by_value.iter().enumerate() {
            if covered.contains(&value) {
                continue;
            }
            for rule in rules {
                let Some(f) = catalog.families.get(rule.family) else { continue };
                let metric = plan.metric(Metric {
                    name: format!("{}.{}", names::PREFIX, f.name.strip_prefix("zescope_").unwrap_or(&f.name)),
                    description: f.help.clone(),
                    unit: ucum(f.unit),
                    kind: if f.counter { Kind::Counter } else { Kind::Gauge },
                    convention: false,
                });
                plan.points.push(Point {
                    metric,
                    device: device_of[value],
                    attributes: attributes(&rule.labels),
                    value: Some(value),
                    scale: rule.scale,
                    bit: rule.bit,
                    with: None,
                });
            }
        }
        plan
    }

    /// The index of the metric named `m.name`, added when new.
    pub fn metric(&mut self, m: Metric) -> usize {
        match self.metrics.iter().position(|x| x.name == m.name) {
            Some(i) => i,
            None => {
                self.metrics.push(m);
                self.metrics.len() - 1
            }
        }
    }

    /// The value of point `p` given the run's newest values (in the driver's units), in its
    /// metric's unit; `None` while a value it needs is unknown (NaN), or a counter below zero.
    pub fn value(&self, p: &Point, values: &[f64]) -> Option<f64> {
        let Some(i) = p.value else { return Some(1.0) };
        let raw = *values.get(i)?;
        if !raw.is_finite() {
            return None;
        }
        let v = match (p.bit, p.with) {
            (Some(bit), _) => ((raw as u64 >> bit) & 1) as f64,
            (None, None) => raw * p.scale,
            (None, Some(Combine::Add(j))) => (raw + values.get(j).copied().filter(|x| x.is_finite())?) * p.scale,
            (None, Some(Combine::Over(j))) => {
                let d = values.get(j).copied().filter(|x| x.is_finite() && *x > 0.0)?;
                raw / d
            }
        };
        let counter = self.metrics.get(p.metric).is_some_and(|m| m.kind == Kind::Counter);
        (!counter || v >= 0.0).then_some(v)
    }
}

/// An OpenMetrics base unit in UCUM, as OTel wants units.
pub fn ucum(base: Option<&str>) -> &'static str {
    match base {
        Some("seconds") => "s",
        Some("bytes") => "By",
        Some("bytes_per_second") => "By/s",
        Some("per_second") => "1/s",
        Some("joules") => "J",
        Some("watts") => "W",
        Some("volts") => "V",
        Some("amperes") => "A",
        Some("hertz") => "Hz",
        Some("celsius") => "Cel",
        Some("ratio") => "1",
        _ => "",
    }
}

/// The attributes of a sample's labels: the device's as OTel's `hw.*`/`pci.*` ones, the others in
/// the `zescope.` namespace.
pub fn attributes(labels: &Labels) -> Labels {
    labels
        .iter()
        .map(|(k, v)| {
            let k = match k.as_str() {
                "device" => "hw.name".to_owned(),
                "uuid" => "hw.id".to_owned(),
                "pci_bdf" => "pci.bdf".to_owned(),
                "driver" => "hw.driver_version".to_owned(),
                other => format!("{}.{other}", names::PREFIX),
            };
            (k, v.clone())
        })
        .collect()
}

/// The name the OpenTelemetry Prometheus translation (the Collector's `prometheus` exporter and
/// `prometheusremotewrite`, `translation_strategy: UnderscoreEscapingWithSuffixes`, the default)
/// gives a metric: dots and other invalid characters become `_`, the unit's word is added as a
/// suffix unless the name already ends in it (`By` → `bytes`, `Cel` → `celsius`, `By/s` →
/// `bytes_per_second`, `1/s` → `per_second`, a unit in braces is dropped), a gauge of unit `1` ends in `_ratio`, and a
/// monotonic sum in `_total`. `hw.gpu.utilization` → `hw_gpu_utilization_ratio`, `hw.energy` →
/// `hw_energy_joules_total`, `hw.gpu.info` → `hw_gpu_info`.
pub fn prometheus_name(m: &Metric) -> String {
    let mut name: String = m.name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let unit = match m.unit {
        "1" if m.kind == Kind::Gauge => "ratio",
        "1" | "" => "",
        "s" => "seconds",
        "By" => "bytes",
        "By/s" => "bytes_per_second",
        "1/s" => "per_second",
        "J" => "joules",
        "W" => "watts",
        "V" => "volts",
        "A" => "amperes",
        "Hz" => "hertz",
        "Cel" => "celsius",
        u if u.starts_with('{') => "",
        _ => "",
    };
    if !unit.is_empty() && !name.ends_with(&format!("_{unit}")) {
        name = format!("{name}_{unit}");
    }
    if m.kind == Kind::Counter && !name.ends_with("_total") {
        name.push_str("_total");
    }
    name
}

/// The Prometheus label name of an attribute (`pci.bdf` → `pci_bdf`).
pub fn prometheus_label(attribute: &str) -> String {
    attribute.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

#[cfg(test)]
#[path = "otel_tests.rs"]
mod tests;
