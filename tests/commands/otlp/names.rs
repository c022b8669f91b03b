//! Which zescope series an exported OTLP point is: docs/otel.md's table read backwards (the
//! `zescope.*` names from their attributes and unit, the `hw.*` names from xpumd's).

use std::collections::BTreeMap;

use serde_json::Value;

/// The zescope series (name and the labels it must have) an exported point shows, by
/// docs/otel.md's table; `None` for points derived from two values (utilization, io rate) and
/// for the info metric.
pub(super) fn series_of(p: &Value) -> Option<(String, BTreeMap<String, String>)> {
    let a = |k: &str| p["attributes"][k].as_str().map(str::to_owned);
    let name = p["name"].as_str().unwrap();
    let mut labels = BTreeMap::new();
    labels.insert("device".to_owned(), a("hw.name").unwrap());
    let family = if let Some(rest) = name.strip_prefix("zescope.") {
        // Its attributes are its labels; its name the translation of name and unit.
        for (k, v) in p["attributes"].as_object().unwrap() {
            let k = match k.as_str() {
                "hw.name" => "device",
                "hw.id" => "uuid",
                "pci.bdf" => "pci_bdf",
                "hw.driver_version" => "driver",
                other => other.strip_prefix("zescope.").unwrap(),
            };
            labels.insert(k.to_owned(), v.as_str().unwrap().to_owned());
        }
        let unit = match p["unit"].as_str().unwrap() {
            "s" => "_seconds",
            "By" => "_bytes",
            "By/s" => "_bytes_per_second",
            "1/s" => "_per_second",
            "J" => "_joules",
            "W" => "_watts",
            "Hz" => "_hertz",
            "Cel" => "_celsius",
            "1" if p["kind"] == "gauge" => "_ratio",
            _ => "",
        };
        let total = if p["monotonic"] == true { "_total" } else { "" };
        format!("zescope_{rest}{unit}{total}")
    } else {
        let location = a("hw.sensor_location");
        match name {
            "hw.power" | "hw.energy" => {
                labels.insert("domain".into(), location.unwrap().replace("stack", "tile"));
                if name == "hw.power" { "zescope_power_watts" } else { "zescope_energy_joules_total" }.to_owned()
            }
            "hw.temperature" => {
                let location = location.unwrap().replace("global", "device");
                let min = if a("statistic").as_deref() == Some("min") { "_min" } else { "" };
                labels.insert("sensor".into(), format!("{location}{min}"));
                "zescope_temperature_celsius".to_owned()
            }
            "hw.gpu.utilization" => {
                let task = a("hw.gpu.task").unwrap();
                let engine = a("zescope.engine").unwrap_or_else(|| {
                    task.trim_end_matches("-all")
                        .replace("3d-render-compute", "3d_render_and_compute")
                        .replace('-', "_")
                });
                labels.insert("engine".into(), engine);
                "zescope_engine_busy_ratio".to_owned()
            }
            "hw.memory.usage" | "hw.memory.size" => {
                if name == "hw.memory.usage" { "zescope_memory_used_bytes" } else { "zescope_memory_size_bytes" }
                    .to_owned()
            }
            "hw.frequency" | "hw.frequency.request" | "hw.frequency.limit" => {
                let clock = match name {
                    "hw.frequency" => "actual",
                    "hw.frequency.request" => "requested",
                    _ => "tdp",
                };
                labels.insert("clock".into(), clock.into());
                format!("zescope_{}_frequency_hertz", a("hw.frequency.domain").unwrap())
            }
            "hw.frequency.throttle_status" => {
                let reasons =
                    ["ave_pwr_cap", "burst_pwr_cap", "current_limit", "thermal_limit", "psu_alert", "sw_range"];
                let words = [
                    "average_power_cap_pl1",
                    "burst_power_cap_pl2",
                    "current_limit_pl4",
                    "thermal_limit",
                    "power_supply_alert",
                    "software_frequency_range",
                ];
                let r = a("com.intel.speed.throttle_reason").unwrap();
                let word = reasons.iter().position(|x| *x == r).map_or("hardware_frequency_range", |i| words[i]);
                labels.insert("reason".into(), word.into());
                format!("zescope_{}_throttle_reason", a("hw.frequency.domain").unwrap())
            }
            _ => return None,
        }
    };
    Some((family, labels))
}
