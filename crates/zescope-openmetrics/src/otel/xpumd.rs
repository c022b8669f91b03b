//! The telemetry under xpumd's names: which Sysman readings of a run become which of the
//! `hw.*` metrics xpumd 2.0's `sysman` receiver publishes, with its attributes and attribute
//! values (xpumd lower-cases Level Zero's enum names: `hw.sensor_location="gpu"`,
//! `hw.gpu.task="compute-all"`, `com.intel.speed.throttle_reason="thermal_limit"`).
//!
//! Given (see `docs/otel.md` for the table and the ones zescope cannot give): `hw.frequency`
//! (`aggregation="avg"`: the newest reading, see below), `hw.frequency.request`,
//! `hw.frequency.limit` (`hw.limit_type="tdp"`), `hw.frequency.throttle_status`, `hw.power`,
//! `hw.energy`, `hw.temperature` (`statistic` `max`, or `min` for the `_MIN` sensors),
//! `hw.gpu.utilization`, `hw.memory.usage`, `hw.memory.size`, `hw.memory.utilization`,
//! `hw.memory.io.rate` and `hw.gpu.info`.
//!
//! xpumd's `hw.frequency` is the min, max and average of the actual clock it polls between two
//! collections; zescope samples the actual clock itself (at its sampling interval, usually far
//! more often than a collection), and publishes its newest reading as `aggregation="avg"`, the
//! one xpumd's dashboard reads.

use std::collections::{HashMap, HashSet};

use super::{Combine, Kind, Metric, Plan, Point};
use crate::catalog::{Labels, RunDescription};
use crate::telemetry;
use zescope_sampler::ReadPath;

/// xpumd's throttle reason names (`FREQ_THROTTLE_REASON_FLAG_*` lower-cased), in the order of
/// the sampler's throttle bits (`zescope_sampler::telemetry::THROTTLE_REASONS`).
pub const THROTTLE_REASONS: [&str; 7] =
    ["ave_pwr_cap", "burst_pwr_cap", "current_limit", "thermal_limit", "psu_alert", "sw_range", "hw_range"];

fn metric(name: &str, description: &str, unit: &'static str, kind: Kind) -> Metric {
    Metric { name: name.to_owned(), description: description.to_owned(), unit, kind, convention: true }
}

fn label<'a>(labels: &'a Labels, k: &str) -> Option<&'a str> {
    labels.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
}

/// Adds the `hw.*` metrics and points of `run`'s telemetry to `plan`; returns the run's values it
/// covered (those not to be exported again under a `zescope.` name).
pub fn plan(run: &RunDescription, plan: &mut Plan) -> HashSet<usize> {
    let mut covered = HashSet::new();
    // Per (device, module): the values of memory used, total, read and write bandwidth.
    let mut memory: HashMap<(usize, Option<String>), [Option<usize>; 4]> = HashMap::new();
    for d in 0..plan.devices.len() {
        if plan.devices[d].gpu {
            let m = plan.metric(metric("hw.gpu.info", "Information about the GPU device.", "1", Kind::UpDown));
            let attributes = plan.devices[d].attributes.clone();
            plan.points.push(Point {
                metric: m,
                device: d,
                attributes,
                value: None,
                scale: 1.0,
                bit: None,
                with: None,
            });
        }
    }
    let mut value = 0;
    for s in &run.streams {
        for x in &s.series {
            let v = value;
            value += 1;
            // The telemetry's own series; a derived one it drives (`--derive`, whose stream takes
            // the telemetry's read path) is the user's, named under zescope's names.
            if s.read_path != ReadPath::Sysman || s.group == crate::catalog::DERIVED_GROUP {
                continue;
            }
            let Some(named) = telemetry::telemetry(&x.name, &x.description, &x.unit) else { continue };
            let device = s.device.min(plan.devices.len().saturating_sub(1));
            let mut attrs = plan.devices.get(device).map(|d| d.point_attributes()).unwrap_or_default();
            let module = label(&named.labels, "module").map(str::to_owned);
            for (k, val) in &named.labels {
                match k.as_str() {
                    "tile" => attrs.push(("com.intel.subdevice_id".into(), val.clone())),
                    "module" | "index" => attrs.push((format!("zescope.{k}"), val.clone())),
                    _ => {}
                }
            }
            let family = named.family.strip_prefix("zescope_").unwrap_or(&named.family);
            let scale = named.unit.scale;
            let point = |plan: &mut Plan, m: Metric, extra: Vec<(&str, String)>, bit: Option<u32>| {
                let metric = plan.metric(m);
                let mut attributes = attrs.clone();
                attributes.extend(extra.into_iter().map(|(k, v)| (k.to_owned(), v)));
                let scale = if bit.is_some() { 1.0 } else { scale };
                plan.points.push(Point { metric, device, attributes, value: Some(v), scale, bit, with: None });
            };
            let freq_domain =
                || match family.strip_suffix("_frequency").or_else(|| family.strip_suffix("_throttle_reason")) {
                    Some(d) => Some(d.to_owned()),
                    None => label(&named.labels, "domain").map(str::to_owned),
                };
            let done = match family {
                "power" | "energy" => {
                    let location = match label(&named.labels, "domain") {
                        Some("tile") => "stack".to_owned(),
                        Some(d) => d.to_owned(),
                        None => continue,
                    };
                    let m = if family == "power" {
                        metric("hw.power", "Power used by the hardware component.", "W", Kind::Gauge)
                    } else {
                        metric("hw.energy", "Energy consumed by the hardware component.", "J", Kind::Counter)
                    };
                    point(plan, m, vec![("hw.sensor_location", location)], None);
                    true
                }
                "temperature" => match label(&named.labels, "sensor").and_then(sensor) {
                    Some((location, statistic)) => {
                        let m = metric("hw.temperature", "Temperature of the hardware component.", "Cel", Kind::Gauge);
                        point(plan, m, vec![("hw.sensor_location", location), ("statistic", statistic)], None);
                        true
                    }
                    None => false,
                },
                "engine_busy" => match label(&named.labels, "engine").and_then(task) {
                    Some((task, single)) => {
                        let m = metric(
                            "hw.gpu.utilization",
                            "GPU engine / task pipeline utilization ratio.",
                            "1",
                            Kind::Gauge,
                        );
                        let mut extra = vec![("hw.gpu.task", task)];
                        if let Some(engine) = single {
                            extra.push(("zescope.engine", engine));
                        }
                        point(plan, m, extra, None);
                        true
                    }
                    None => false,
                },
                "memory_used" | "memory_size" => {
                    let slot = memory.entry((device, module.clone())).or_default();
                    slot[usize::from(family == "memory_size")] = Some(v);
                    let m = if family == "memory_used" {
                        metric("hw.memory.usage", "Memory used.", "By", Kind::UpDown)
                    } else {
                        metric("hw.memory.size", "Memory size.", "By", Kind::UpDown)
                    };
                    point(plan, m, vec![("hw.memory.location", "device".into())], None);
                    true
                }
                "memory_read" | "memory_write" => {
                    let slot = memory.entry((device, module.clone())).or_default();
                    slot[2 + usize::from(family == "memory_write")] = Some(v);
                    // Kept under `zescope.` too: xpumd only has their sum.
                    false
                }
                _ if !named.reasons.is_empty() => {
                    let Some(domain) = freq_domain() else { continue };
                    let m = metric("hw.frequency.throttle_status", "Frequency throttle status.", "1", Kind::UpDown);
                    for (bit, _) in &named.reasons {
                        let Some(reason) = THROTTLE_REASONS.get(*bit as usize) else { continue };
                        let extra = vec![
                            ("hw.frequency.domain", domain.clone()),
                            ("com.intel.speed.throttle_reason", (*reason).to_owned()),
                        ];
                        point(plan, m.clone(), extra, Some(*bit));
                    }
                    true
                }
                _ if named.unit.unit == Some("hertz") => {
                    let Some(domain) = freq_domain() else { continue };
                    let d = ("hw.frequency.domain", domain);
                    match label(&named.labels, "clock") {
                        Some("actual") => {
                            let m = metric(
                                "hw.frequency",
                                "Operating frequency of the hardware component.",
                                "Hz",
                                Kind::Gauge,
                            );
                            point(plan, m, vec![d, ("aggregation", "avg".into())], None);
                            true
                        }
                        Some("requested") => {
                            let m = metric("hw.frequency.request", "Requested operating frequency.", "Hz", Kind::Gauge);
                            point(plan, m, vec![d], None);
                            true
                        }
                        Some("tdp") => {
                            let m = metric("hw.frequency.limit", "Frequency limit.", "Hz", Kind::Gauge);
                            point(plan, m, vec![d, ("hw.limit_type", "tdp".into())], None);
                            true
                        }
                        _ => false,
                    }
                }
                _ => false,
            };
            if done {
                covered.insert(v);
            }
        }
    }
    let mut memory: Vec<_> = memory.into_iter().collect();
    memory.sort_by(|a, b| a.0.cmp(&b.0));
    for ((device, module), [used, total, read, write]) in memory {
        let mut attributes = plan.devices.get(device).map(|d| d.point_attributes()).unwrap_or_default();
        if let Some(m) = module {
            attributes.push(("zescope.module".into(), m));
        }
        attributes.push(("hw.memory.location".into(), "device".into()));
        if let (Some(used), Some(total)) = (used, total) {
            let m = plan.metric(metric("hw.memory.utilization", "Memory utilization ratio.", "1", Kind::Gauge));
            let with = Some(Combine::Over(total));
            let a = attributes.clone();
            plan.points.push(Point {
                metric: m,
                device,
                attributes: a,
                value: Some(used),
                scale: 1.0,
                bit: None,
                with,
            });
        }
        if let (Some(read), Some(write)) = (read, write) {
            let desc = "Current memory bandwidth (read+write) usage in bytes/sec.";
            let m = plan.metric(metric("hw.memory.io.rate", desc, "By/s", Kind::Gauge));
            let with = Some(Combine::Add(write));
            plan.points.push(Point { metric: m, device, attributes, value: Some(read), scale: 1.0, bit: None, with });
        }
    }
    covered
}

/// zescope's `sensor` label → xpumd's `hw.sensor_location` and `statistic`.
fn sensor(s: &str) -> Option<(String, String)> {
    let (kind, statistic) = match s.strip_suffix("_min") {
        Some(k) => (k, "min"),
        None => (s, "max"),
    };
    let location = match kind {
        "gpu" | "memory" => kind,
        "device" => "global",
        _ => return None,
    };
    Some((location.to_owned(), statistic.to_owned()))
}

/// zescope's `engine` label → xpumd's `hw.gpu.task` (Level Zero's engine group type, lower-case
/// with dashes) and, for a single engine, zescope's label to tell it from its siblings.
fn task(engine: &str) -> Option<(String, Option<String>)> {
    let all = match engine {
        "all" => Some("all"),
        "compute" => Some("compute-all"),
        "media" => Some("media-all"),
        "copy" => Some("copy-all"),
        "render" => Some("render-all"),
        "3d" => Some("3d-all"),
        "3d_render_and_compute" => Some("3d-render-compute-all"),
        _ => None,
    };
    if let Some(t) = all {
        return Some((t.to_owned(), None));
    }
    let (kind, k) = engine.rsplit_once('_')?;
    k.parse::<u32>().ok()?;
    let kind = match kind {
        "compute" | "render" | "copy" | "3d" | "media_decode" | "media_encode" | "media_enhancement" => kind,
        _ => return None,
    };
    Some((format!("{}-single", kind.replace('_', "-")), Some(engine.to_owned())))
}
