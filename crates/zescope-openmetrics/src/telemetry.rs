//! How the telemetry stream (Sysman, `sampler::telemetry`) is named for Prometheus: one family
//! per kind of reading in base units, the domain in labels, as GPU exporters name them
//! (node_exporter's `node_hwmon_temp_celsius`, xpu-smi's `xpum_power_watts`, DCGM's
//! throttle-reason bitmask split into one gauge per reason):
//!
//! | series                                   | family                                             |
//! |------------------------------------------|----------------------------------------------------|
//! | GPU frequency actual/requested/TDP/efficient | `zescope_gpu_frequency_hertz{clock}` (memory: `zescope_memory_frequency_hertz`) |
//! | GPU throttle reasons (bitmask)           | `zescope_gpu_throttle_reason{reason}`, 1 while throttled for it |
//! | Package power / Tile N power             | `zescope_power_watts{domain}`                      |
//! | Package energy / Tile N energy           | `zescope_energy_joules_total{domain}` (since the run started) |
//! | GPU/Memory/Device temperature            | `zescope_temperature_celsius{sensor}`              |
//! | Compute engines utilisation              | `zescope_engine_busy_ratio{engine}`                |
//! | Memory used / total                      | `zescope_memory_used_bytes`, `zescope_memory_size_bytes` |
//! | Memory read/write bandwidth              | `zescope_memory_read_bytes_per_second`, `…_write_…` |
//!
//! A domain of a sub-device carries `tile="N"`; a device with several memory modules `module`;
//! a series whose name the sampler had to number (two domains alike) `index="N"`.
//! A series this does not know is named as any counter is ([`crate::names::family_name`]).

use crate::names::{BaseUnit, PREFIX, base_unit, snake};
use zescope_sampler::telemetry::throttle_names;

/// How one telemetry series is served.
#[derive(Clone, Debug, PartialEq)]
pub struct Named {
    /// The family, without the unit suffix and `_total`.
    pub family: String,
    /// `# HELP`.
    pub help: &'static str,
    /// The base unit and the factor from the series' unit.
    pub unit: BaseUnit,
    /// A counter (`_total`) rather than a gauge.
    pub counter: bool,
    /// Labels naming the domain (`clock`, `domain`, `sensor`, `engine`, `tile`, `module`).
    pub labels: Vec<(String, String)>,
    /// For a throttle-reason bitmask: one gauge per bit, labelled `reason` (empty otherwise).
    pub reasons: Vec<(u32, String)>,
}

/// The family and labels of the telemetry series `name` (as `sampler::telemetry` names it), or
/// `None` for a series it does not know.
pub fn telemetry(name: &str, description: &str, unit: &str) -> Option<Named> {
    let (name, index) = index(name);
    let (name, mut labels) = tile(name);
    labels.extend(index);
    let reasons = throttle_names(description);
    let named = |family: &str, help: &'static str, unit: BaseUnit, counter: bool, labels: Vec<(String, String)>| {
        Named { family: format!("{PREFIX}_{family}"), help, unit, counter, labels, reasons: Vec::new() }
    };
    let label = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    if !reasons.is_empty() {
        let (family, domain) = frequency_domain(name.strip_suffix(" throttle reasons").unwrap_or(&name), "throttle");
        labels.extend(domain);
        let reasons = reasons.into_iter().map(|(bit, n)| (bit, word(&n))).collect();
        let help = "1 while the clock is throttled for this reason (zesFrequencyGetState).";
        return Some(Named {
            reasons,
            ..named(&format!("{family}_reason"), help, BaseUnit { unit: None, scale: 1.0 }, false, labels)
        });
    }
    match unit {
        "MHz" => {
            let (what, clock) = name.rsplit_once(' ')?;
            let clock = match clock {
                "actual" | "requested" | "efficient" => clock.to_owned(),
                "TDP" => "tdp".to_owned(),
                _ => return None,
            };
            let (family, domain) = frequency_domain(what, "frequency");
            labels.extend(domain);
            labels.push(label("clock", &clock));
            Some(named(&family, "Clock frequency (zesFrequencyGetState).", base_unit(unit), false, labels))
        }
        "W" | "J" => {
            let domain = power_domain(&name)?;
            labels.push(label("domain", &domain.0));
            if let Some(t) = domain.1 {
                labels.push(label("tile", &t));
            }
            Some(if unit == "W" {
                named(
                    "power",
                    "Power from the energy counter (zesPowerGetEnergyCounter).",
                    base_unit(unit),
                    false,
                    labels,
                )
            } else {
                named(
                    "energy",
                    "Energy used since the run started (zesPowerGetEnergyCounter).",
                    base_unit(unit),
                    true,
                    labels,
                )
            })
        }
        "°C" => {
            let sensor = name.strip_prefix("Temperature sensor ").map(str::to_owned).or_else(|| {
                let (kind, min) = match name.strip_suffix(" (min)") {
                    Some(k) => (k, "_min"),
                    None => (name.as_str(), ""),
                };
                Some(format!("{}{min}", word(kind.strip_suffix(" temperature")?)))
            })?;
            labels.push(label("sensor", &sensor));
            Some(named("temperature", "Temperature (zesTemperatureGetState).", base_unit(unit), false, labels))
        }
        "%" => {
            let engine = name.strip_suffix(" utilisation")?;
            let engine = engine.replace(" engines", "").replace(" engine", "").replace("Engine group", "group");
            labels.push(label("engine", &word(&engine)));
            Some(named(
                "engine_busy",
                "Share of time the engines were busy (zesEngineGetActivity).",
                base_unit(unit),
                false,
                labels,
            ))
        }
        "B" | "B/s" => {
            let rest = name.strip_prefix("Memory ")?;
            let (module, what) = match rest.split_once(' ') {
                Some((m, w)) if m.parse::<u32>().is_ok() => (Some(m), w),
                _ => (None, rest),
            };
            if let Some(m) = module {
                labels.push(label("module", m));
            }
            let rate = BaseUnit { unit: Some("bytes_per_second"), scale: 1.0 };
            let (family, help, unit) = match what {
                "used" => ("memory_used", "Allocated device memory (zesMemoryGetState).", base_unit(unit)),
                "total" => ("memory_size", "Allocatable device memory (zesMemoryGetState).", base_unit(unit)),
                "read bandwidth" => ("memory_read", "Memory read bandwidth (zesMemoryGetBandwidth).", rate),
                "write bandwidth" => ("memory_write", "Memory write bandwidth (zesMemoryGetBandwidth).", rate),
                _ => return None,
            };
            Some(named(family, help, unit, false, labels))
        }
        _ => None,
    }
}

/// The name less the " (N)" the sampler appends to a name already taken in the stream, and the
/// `index` label it gives.
fn index(name: &str) -> (&str, Option<(String, String)>) {
    if let Some(rest) = name.strip_suffix(')')
        && let Some((base, n)) = rest.rsplit_once(" (")
        && n.parse::<u32>().is_ok()
    {
        return (base, Some(("index".into(), n.to_owned())));
    }
    (name, None)
}

/// The name less a " (tile N)" and the `tile` label it gives.
fn tile(name: &str) -> (String, Vec<(String, String)>) {
    if let Some(start) = name.find(" (tile ")
        && let Some(len) = name[start..].find(')')
    {
        let id = &name[start + " (tile ".len()..start + len];
        if id.parse::<u32>().is_ok() {
            let rest = format!("{}{}", &name[..start], &name[start + len + 1..]);
            return (rest, vec![("tile".into(), id.to_owned())]);
        }
    }
    (name.to_owned(), Vec::new())
}

/// "GPU frequency" → (`gpu_frequency`), "Memory frequency" → (`memory_frequency`), "Frequency
/// domain N" → (`frequency`, domain="N"); `what` is `frequency` or `throttle`.
fn frequency_domain(name: &str, what: &str) -> (String, Vec<(String, String)>) {
    let name = name.strip_suffix(" frequency").unwrap_or(name);
    match name.strip_prefix("Frequency domain ") {
        Some(n) => (what.to_owned(), vec![("domain".into(), n.to_owned())]),
        None => (format!("{}_{what}", snake(name)), Vec::new()),
    }
}

/// "Package power"/"Package energy" → ("package", None); "Tile N power" → ("tile", N); "Power
/// domain N"/"Energy of power domain N" → (N, None).
fn power_domain(name: &str) -> Option<(String, Option<String>)> {
    if let Some(n) = name.strip_prefix("Power domain ").or_else(|| name.strip_prefix("Energy of power domain ")) {
        return Some((n.to_owned(), None));
    }
    let (what, _) = name.rsplit_once(' ')?;
    match what.strip_prefix("Tile ") {
        Some(n) => Some(("tile".into(), Some(n.to_owned()))),
        None => Some((snake(what), None)),
    }
}

/// A label value in snake_case: "average power cap (PL1)" → `average_power_cap_pl1`, "3D,
/// render and compute" → `3d_render_and_compute` (a label value may start with a digit).
fn word(name: &str) -> String {
    snake(&format!("x {name}")).get(2..).unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use zescope_sampler::telemetry::throttle_description;

    fn full(n: &Named) -> String {
        let unit = n.unit.unit.map(|u| format!("_{u}")).unwrap_or_default();
        format!("{}{unit}{}", n.family, if n.counter { "_total" } else { "" })
    }

    fn labels(n: &Named) -> Vec<String> {
        n.labels.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn every_series_the_sampler_names_gets_a_family_in_base_units() {
        let cases: &[(&str, &str, &str, &[&str], f64)] = &[
            ("GPU frequency actual", "MHz", "zescope_gpu_frequency_hertz", &["clock=actual"], 1e6),
            ("GPU frequency (tile 1) TDP", "MHz", "zescope_gpu_frequency_hertz", &["tile=1", "clock=tdp"], 1e6),
            ("Memory frequency requested", "MHz", "zescope_memory_frequency_hertz", &["clock=requested"], 1e6),
            ("Frequency domain 7 efficient", "MHz", "zescope_frequency_hertz", &["domain=7", "clock=efficient"], 1e6),
            ("Package power", "W", "zescope_power_watts", &["domain=package"], 1.0),
            ("Tile 1 power", "W", "zescope_power_watts", &["domain=tile", "tile=1"], 1.0),
            ("Power domain 2", "W", "zescope_power_watts", &["domain=2"], 1.0),
            ("Package energy", "J", "zescope_energy_joules_total", &["domain=package"], 1.0),
            ("Tile 0 energy", "J", "zescope_energy_joules_total", &["domain=tile", "tile=0"], 1.0),
            ("Energy of power domain 2", "J", "zescope_energy_joules_total", &["domain=2"], 1.0),
            ("GPU temperature", "°C", "zescope_temperature_celsius", &["sensor=gpu"], 1.0),
            ("Memory temperature (tile 0)", "°C", "zescope_temperature_celsius", &["tile=0", "sensor=memory"], 1.0),
            ("Device temperature (min)", "°C", "zescope_temperature_celsius", &["sensor=device_min"], 1.0),
            ("Temperature sensor 9", "°C", "zescope_temperature_celsius", &["sensor=9"], 1.0),
            ("Compute engines utilisation", "%", "zescope_engine_busy_ratio", &["engine=compute"], 0.01),
            ("Copy engine 1 utilisation", "%", "zescope_engine_busy_ratio", &["engine=copy_1"], 0.01),
            ("All engines utilisation", "%", "zescope_engine_busy_ratio", &["engine=all"], 0.01),
            (
                "3D, render and compute engines utilisation",
                "%",
                "zescope_engine_busy_ratio",
                &["engine=3d_render_and_compute"],
                0.01,
            ),
            ("Memory used", "B", "zescope_memory_used_bytes", &[], 1.0),
            ("Memory 1 (tile 1) total", "B", "zescope_memory_size_bytes", &["tile=1", "module=1"], 1.0),
            ("Memory read bandwidth", "B/s", "zescope_memory_read_bytes_per_second", &[], 1.0),
            ("Memory 0 write bandwidth", "B/s", "zescope_memory_write_bytes_per_second", &["module=0"], 1.0),
            ("GPU frequency actual (2)", "MHz", "zescope_gpu_frequency_hertz", &["index=2", "clock=actual"], 1e6),
            ("Package power (3)", "W", "zescope_power_watts", &["index=3", "domain=package"], 1.0),
        ];
        for &(name, unit, family, want, scale) in cases {
            let n = telemetry(name, "x", unit).unwrap_or_else(|| panic!("{name} not named"));
            assert_eq!(full(&n), family, "{name}");
            assert_eq!(labels(&n), want, "{name}");
            assert_eq!(n.unit.scale, scale, "{name}");
            assert!(n.reasons.is_empty());
        }
    }

    #[test]
    fn throttle_reasons_become_one_gauge_per_reason() {
        let n = telemetry("GPU throttle reasons (tile 0)", &throttle_description(), "").unwrap();
        assert_eq!(full(&n), "zescope_gpu_throttle_reason");
        assert_eq!(labels(&n), ["tile=0"]);
        assert_eq!(n.reasons.len(), 7);
        assert_eq!(n.reasons[3], (3, "thermal_limit".to_owned()));
        assert_eq!(n.reasons[0], (0, "average_power_cap_pl1".to_owned()));
        let n = telemetry("Frequency domain 4", &throttle_description(), "").unwrap();
        assert_eq!((full(&n), labels(&n)), ("zescope_throttle_reason".to_owned(), vec!["domain=4".to_owned()]));
    }

    #[test]
    fn series_it_does_not_know_are_left_to_the_plain_naming() {
        assert_eq!(telemetry("GPU frequency wobble", "x", "MHz"), None);
        assert_eq!(telemetry("Fan speed", "x", "rpm"), None);
        assert_eq!(telemetry("Memory spare", "x", "B"), None);
        assert_eq!(telemetry("Something", "x", "%"), None);
        assert_eq!(telemetry(" temperature", "x", "°C").map(|n| labels(&n)), Some(vec!["sensor=".to_owned()]));
    }
}
