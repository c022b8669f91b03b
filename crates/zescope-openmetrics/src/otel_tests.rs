use super::*;
use crate::catalog::{DeviceDescription, SeriesDescription, StreamDescription};
use zescope_sampler::ReadPath;
use zescope_sampler::layout::Kind as SeriesKind;
use zescope_sampler::telemetry::throttle_description;

fn series(name: &str, unit: &str, kind: SeriesKind) -> SeriesDescription {
    SeriesDescription { name: name.into(), description: format!("{name} help"), unit: unit.into(), kind }
}

fn gauge(name: &str, unit: &str) -> SeriesDescription {
    series(name, unit, SeriesKind::Gauge)
}

fn run() -> RunDescription {
    let device = DeviceDescription {
        name: "Card".into(),
        identity: Some(("ab01".into(), 0x10203)),
        pci_bdf: Some("0000:03:00.0".into()),
        simulated: false,
    };
    let mut throttle = gauge("GPU throttle reasons", "");
    throttle.description = throttle_description();
    let telemetry = vec![
        gauge("GPU frequency actual", "MHz"),
        gauge("GPU frequency requested", "MHz"),
        gauge("GPU frequency TDP", "MHz"),
        gauge("GPU frequency efficient", "MHz"),
        throttle,
        gauge("Package power", "W"),
        gauge("Package energy", "J"),
        gauge("GPU temperature", "°C"),
        gauge("Memory temperature (min)", "°C"),
        gauge("Compute engines utilisation", "%"),
        gauge("Copy engine 1 utilisation", "%"),
        gauge("Memory used", "B"),
        gauge("Memory total", "B"),
        gauge("Memory read bandwidth", "B/s"),
        gauge("Memory write bandwidth", "B/s"),
    ];
    let oa = vec![gauge("GpuBusy", "%"), series("GpuTime", "ns", SeriesKind::Cumulative)];
    RunDescription {
        devices: vec![device],
        streams: vec![
            StreamDescription { device: 0, group: "ComputeBasic".into(), read_path: ReadPath::Mapped, series: oa },
            StreamDescription { device: 0, group: "Telemetry".into(), read_path: ReadPath::Sysman, series: telemetry },
        ],
    }
}

fn plan() -> Plan {
    let run = run();
    let catalog = Catalog::new(&run);
    let devices = vec![Device::new(&run.devices[0], Some(0x8086), "gpu")];
    Plan::new(&run, &catalog, devices)
}

/// Each point as `prometheus_name{label="v",…} = value` for values `values`.
fn page(plan: &Plan, values: &[f64]) -> Vec<String> {
    plan.points
        .iter()
        .filter_map(|p| {
            let m = &plan.metrics[p.metric];
            let v = plan.value(p, values)?;
            let labels: Vec<String> =
                p.attributes.iter().map(|(k, v)| format!("{}=\"{v}\"", prometheus_label(k))).collect();
            Some(format!("{}{{{}}} = {v}", prometheus_name(m), labels.join(",")))
        })
        .collect()
}

#[test]
fn prometheus_names_follow_the_otel_translation() {
    let m = |name: &str, unit: &'static str, kind: Kind| {
        prometheus_name(&Metric { name: name.into(), description: String::new(), unit, kind, convention: true })
    };
    assert_eq!(m("hw.gpu.utilization", "1", Kind::Gauge), "hw_gpu_utilization_ratio");
    assert_eq!(m("hw.energy", "J", Kind::Counter), "hw_energy_joules_total");
    assert_eq!(m("hw.power", "W", Kind::Gauge), "hw_power_watts");
    assert_eq!(m("hw.temperature", "Cel", Kind::Gauge), "hw_temperature_celsius");
    assert_eq!(m("hw.memory.usage", "By", Kind::UpDown), "hw_memory_usage_bytes");
    assert_eq!(m("hw.memory.io.rate", "By/s", Kind::Gauge), "hw_memory_io_rate_bytes_per_second");
    assert_eq!(m("hw.gpu.info", "1", Kind::UpDown), "hw_gpu_info");
    assert_eq!(m("hw.frequency.throttle_status", "1", Kind::UpDown), "hw_frequency_throttle_status");
    assert_eq!(m("hw.errors", "{error}", Kind::Counter), "hw_errors_total");
    assert_eq!(m("zescope.time", "s", Kind::Counter), "zescope_time_seconds_total");
    assert_eq!(m("zescope.time_seconds", "s", Kind::Counter), "zescope_time_seconds_total");
    assert_eq!(prometheus_label("com.intel.speed.throttle_reason"), "com_intel_speed_throttle_reason");
}

#[test]
fn telemetry_goes_under_xpumds_names_and_the_rest_under_zescope() {
    let plan = plan();
    // Values in the run's order: OA (busy %, time ns), then the telemetry above.
    let values = [
        50.0, 2e9, 1500.0, 1600.0, 1800.0, 900.0, 8.0, 120.0, 3000.0, 71.5, 30.0, 25.0, 10.0, 1024.0, 4096.0, 100.0,
        300.0,
    ];
    let page = page(&plan, &values);
    let dev = "hw_id=\"ab01\",hw_name=\"Card\",pci_bdf=\"0000:03:00.0\"";
    let want = [
        format!("hw_frequency_hertz{{{dev},hw_frequency_domain=\"gpu\",aggregation=\"avg\"}} = 1500000000"),
        format!("hw_frequency_request_hertz{{{dev},hw_frequency_domain=\"gpu\"}} = 1600000000"),
        format!("hw_frequency_limit_hertz{{{dev},hw_frequency_domain=\"gpu\",hw_limit_type=\"tdp\"}} = 1800000000"),
        // 8 = bit 3: thermal limit.
        format!(
            "hw_frequency_throttle_status{{{dev},hw_frequency_domain=\"gpu\",com_intel_speed_throttle_reason=\"thermal_limit\"}} = 1"
        ),
        format!(
            "hw_frequency_throttle_status{{{dev},hw_frequency_domain=\"gpu\",com_intel_speed_throttle_reason=\"ave_pwr_cap\"}} = 0"
        ),
        format!("hw_power_watts{{{dev},hw_sensor_location=\"package\"}} = 120"),
        format!("hw_energy_joules_total{{{dev},hw_sensor_location=\"package\"}} = 3000"),
        format!("hw_temperature_celsius{{{dev},hw_sensor_location=\"gpu\",statistic=\"max\"}} = 71.5"),
        format!("hw_temperature_celsius{{{dev},hw_sensor_location=\"memory\",statistic=\"min\"}} = 30"),
        format!("hw_gpu_utilization_ratio{{{dev},hw_gpu_task=\"compute-all\"}} = 0.25"),
        format!("hw_gpu_utilization_ratio{{{dev},hw_gpu_task=\"copy-single\",zescope_engine=\"copy_1\"}} = 0.1"),
        format!("hw_memory_usage_bytes{{{dev},hw_memory_location=\"device\"}} = 1024"),
        format!("hw_memory_size_bytes{{{dev},hw_memory_location=\"device\"}} = 4096"),
        format!("hw_memory_utilization_ratio{{{dev},hw_memory_location=\"device\"}} = 0.25"),
        format!("hw_memory_io_rate_bytes_per_second{{{dev},hw_memory_location=\"device\"}} = 400"),
        "hw_gpu_info{hw_id=\"ab01\",hw_name=\"Card\",hw_vendor=\"Intel\",pci_bdf=\"0000:03:00.0\",hw_driver_version=\"0x10203\",hw_type=\"gpu\"} = 1".to_owned(),
    ];
    for w in &want {
        assert!(page.contains(w), "{w} missing from\n{}", page.join("\n"));
    }
    let zescope: Vec<&String> = page.iter().filter(|l| l.starts_with("zescope_")).collect();
    let names: Vec<&str> = zescope.iter().map(|l| l.split('{').next().unwrap()).collect();
    // The OA counters, and the telemetry xpumd has no name for (efficient clock, read and write
    // bandwidth apart), named as zescope's own page names them.
    assert_eq!(
        names,
        [
            "zescope_gpu_busy_ratio",
            "zescope_gpu_time_seconds_total",
            "zescope_gpu_frequency_hertz",
            "zescope_memory_read_bytes_per_second",
            "zescope_memory_write_bytes_per_second"
        ],
        "{zescope:#?}"
    );
    assert!(zescope[0].contains("hw_name=\"Card\",hw_id=\"ab01\",hw_driver_version=\"0x10203\",pci_bdf=\"0000:03:00.0\",zescope_simulated=\"false\",zescope_group=\"ComputeBasic\""), "{}", zescope[0]);
    assert!(zescope[1].ends_with(" = 2"), "ns → s: {}", zescope[1]);
    assert!(
        zescope[2].contains("zescope_clock=\"efficient\"") && zescope[2].ends_with(" = 900000000"),
        "{}",
        zescope[2]
    );
}

/// A derived series the telemetry drives (its stream takes the telemetry's read path) is the
/// user's, not the device's: `GPU power avg` in W went out as `hw.power` of a "gpu_power" sensor.
#[test]
fn a_derived_series_of_the_telemetry_is_not_named_as_the_devices() {
    let mut run = run();
    run.streams.push(StreamDescription {
        device: 0,
        group: crate::catalog::DERIVED_GROUP.into(),
        read_path: ReadPath::Sysman,
        series: vec![gauge("GPU power avg", "W")],
    });
    let catalog = Catalog::new(&run);
    let plan = Plan::new(&run, &catalog, vec![Device::new(&run.devices[0], Some(0x8086), "gpu")]);
    let page = page(&plan, &[1.0; 18]);
    let power: Vec<&String> = page.iter().filter(|l| l.starts_with("hw_power")).collect();
    assert_eq!(power.len(), 1, "the package's power alone: {power:#?}");
    let derived: Vec<&String> = page.iter().filter(|l| l.contains("Derived")).collect();
    assert!(derived.len() == 1 && derived[0].starts_with("zescope_"), "{derived:#?}");
}

#[test]
fn a_point_is_unknown_until_all_its_values_are() {
    let plan = plan();
    let mut values = [f64::NAN; 17];
    values[13] = 1024.0;
    let util = plan.metrics.iter().position(|m| m.name == "hw.memory.utilization").unwrap();
    let p = plan.points.iter().find(|p| p.metric == util).unwrap();
    assert_eq!(plan.value(p, &values), None, "total unknown");
    values[14] = 0.0;
    assert_eq!(plan.value(p, &values), None, "total zero");
    values[14] = 2048.0;
    assert_eq!(plan.value(p, &values), Some(0.5));
    let kind = |name: &str| plan.metrics.iter().find(|m| m.name == name).map(|m| (m.kind, m.unit));
    assert_eq!(kind("hw.energy"), Some((Kind::Counter, "J")));
    assert_eq!(kind("zescope.gpu_time"), Some((Kind::Counter, "s")));
    assert_eq!(kind("hw.memory.usage"), Some((Kind::UpDown, "By")));
    assert_eq!(kind("hw.power"), Some((Kind::Gauge, "W")));
}
