use std::time::Duration;

use super::*;
use zescope_sampler::telemetry::throttle_description;
use zescope_sampler::{DevicePath, RunConfig, SeriesInfo, StreamInfo, Target};
use zescope_ze::DeviceKind;

fn series(name: &str, unit: &str, kind: Kind) -> SeriesDescription {
    SeriesDescription { name: name.into(), description: format!("{name} help"), unit: unit.into(), kind }
}

fn stream(group: &str, read_path: ReadPath, series: Vec<SeriesDescription>) -> StreamDescription {
    StreamDescription { device: 0, group: group.into(), read_path, series }
}

fn device(name: &str) -> DeviceDescription {
    DeviceDescription {
        name: name.into(),
        identity: Some(("ab01".into(), 0x10203)),
        pci_bdf: Some("0000:03:00.0".into()),
        simulated: false,
    }
}

fn label<'a>(rule: &'a SampleRule, key: &str) -> Option<&'a str> {
    rule.labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

#[test]
fn device_labels_come_first_and_identity_only_when_known() {
    let known = device("Card").labels();
    let want: Labels = [
        ("device", "Card"),
        ("uuid", "ab01"),
        ("driver", "0x10203"),
        ("pci_bdf", "0000:03:00.0"),
        ("simulated", "false"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .to_vec();
    assert_eq!(known, want);
    let no_pci = DeviceDescription { pci_bdf: None, ..device("Card") }.labels();
    assert_eq!(no_pci.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["device", "uuid", "driver", "simulated"]);
    let unknown = DeviceDescription { name: "X".into(), identity: None, pci_bdf: None, simulated: true }.labels();
    assert_eq!(unknown, [("device".to_owned(), "X".to_owned()), ("simulated".to_owned(), "true".to_owned())]);
}

#[test]
fn reserved_names_go_to_the_alternative() {
    assert!(names::reserved("zescope_device") && names::reserved("zescope_build"));
    assert!(names::reserved("zescope_sampler_ticks") && !names::reserved("zescope_devices"));
    let run = RunDescription {
        devices: vec![device("Card")],
        streams: vec![stream(
            "Sys",
            ReadPath::Mapped,
            vec![series("Device", "", Kind::Gauge), series("Sampler ticks", "", Kind::Cumulative)],
        )],
    };
    let c = Catalog::new(&run);
    let names: Vec<&str> = c.families.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["zescope_sys_device", "zescope_sys_sampler_ticks"]);
}

#[test]
fn two_series_that_name_one_thing_are_told_apart_within_a_run() {
    let run = RunDescription {
        devices: vec![device("Card")],
        streams: vec![
            stream("A", ReadPath::Mapped, vec![series("Busy", "%", Kind::Gauge), series("Busy", "%", Kind::Gauge)]),
            // Same family and device, another group: its labels differ already.
            stream("B", ReadPath::Streamer, vec![series("Busy", "%", Kind::Gauge)]),
        ],
    };
    let mut c = Catalog::new(&run);
    assert_eq!(c.families.len(), 1);
    let series: Vec<Option<&str>> = c.rules.iter().map(|r| label(r, "series")).collect();
    assert_eq!(series, [None, Some("Busy"), None]);
    assert_eq!(label(&c.rules[2], "source"), Some("streamer"));
    assert_eq!(c.stream_starts, [0, 2]);
    assert_eq!(c.width, 3);
    // A second run of the same configuration: the same label sets again, no `series` added.
    c.add_run(&run);
    assert_eq!((c.families.len(), c.width, c.stream_starts.clone()), (1, 6, vec![0, 2, 3, 5]));
    assert_eq!(c.rules[3..].iter().map(|r| r.labels.clone()).collect::<Vec<_>>(), {
        c.rules[..3].iter().map(|r| r.labels.clone()).collect::<Vec<_>>()
    });
    assert_eq!(c.devices.len(), 2, "each run's devices");
}

#[test]
fn one_family_per_name_kind_and_unit() {
    let run = RunDescription {
        devices: vec![device("Card")],
        streams: vec![
            stream(
                "A",
                ReadPath::Mapped,
                vec![series("Time", "ns", Kind::Cumulative), series("Power", "mW", Kind::Gauge)],
            ),
            stream(
                "B",
                ReadPath::Mapped,
                vec![series("Time", "ms", Kind::Cumulative), series("Power", "%", Kind::Gauge)],
            ),
        ],
    };
    let c = Catalog::new(&run);
    let names: Vec<String> = c.families.iter().map(Family::full_name).collect();
    assert_eq!(names, ["zescope_time_seconds", "zescope_power_watts", "zescope_b_power_ratio"]);
    let scales: Vec<f64> = c.rules.iter().map(|r| r.scale).collect();
    assert_eq!(scales, [1e-9, 1e-3, 1e-3, 0.01]);
}

#[test]
fn telemetry_gets_its_families_domains_and_one_sample_per_reason() {
    let mut throttle = series("GPU throttle reasons", "", Kind::Gauge);
    throttle.description = throttle_description();
    let run = RunDescription {
        devices: vec![device("Card")],
        streams: vec![stream(
            "Telemetry",
            ReadPath::Sysman,
            vec![series("Package energy", "J", Kind::Gauge), throttle, series("Fan speed", "rpm", Kind::Gauge)],
        )],
    };
    let c = Catalog::new(&run);
    let names: Vec<String> = c.families.iter().map(Family::full_name).collect();
    assert_eq!(names, ["zescope_energy_joules", "zescope_gpu_throttle_reason", "zescope_fan_speed"]);
    assert!(c.families[0].counter, "energy is a counter");
    assert_eq!(c.families[2].help, "Fan speed help (unit: rpm)");
    assert_eq!(c.rules.len(), 1 + 7 + 1);
    assert_eq!(label(&c.rules[0], "domain"), Some("package"));
    let thermal = c.rules.iter().find(|r| label(r, "reason") == Some("thermal_limit")).unwrap();
    assert_eq!((thermal.value, thermal.bit), (1, Some(3)));
    assert_eq!(c.sample(thermal, 9.0), Some(1.0));
    assert_eq!(c.sample(thermal, 4.0), Some(0.0));
    assert_eq!(c.sample(&c.rules[0], f64::NAN), None, "not read: no sample");
    assert_eq!(c.sample(&c.rules[0], -1.0), None, "a counter below zero: no sample");
    assert_eq!(c.sample(&c.rules[0], 2.5), Some(2.5));
}

#[test]
fn derived_series_are_labelled_derived_and_never_taken_for_telemetry() {
    // A derived series whose driving stream is the telemetry's, named as a telemetry series is.
    let mut energy = series("Package energy", "J", Kind::Gauge);
    energy.description = format!("{DERIVED_PREFIX}Package energy=integral(\"Telemetry/Package power\")");
    let run = RunDescription {
        devices: vec![device("Card")],
        streams: vec![stream(DERIVED_GROUP, ReadPath::Sysman, vec![energy])],
    };
    let c = Catalog::new(&run);
    assert_eq!(c.rules.len(), 1);
    assert_eq!(label(&c.rules[0], "source"), Some("derived"));
    assert_eq!(label(&c.rules[0], "derived"), Some("Package energy=integral(\"Telemetry/Package power\")"));
    assert_eq!(label(&c.rules[0], "domain"), None, "not the telemetry's energy family's labels");
    assert!(!c.families[0].counter, "a derived series is a gauge");
}

#[test]
fn a_live_run_takes_each_devices_identity_from_the_inventory() {
    let entry = |device: usize, uuid: &str| zescope_sampler::DeviceEntry {
        path: DevicePath { driver: 0, device, sub_device: None },
        name: "ze-sim".into(),
        kind: DeviceKind::Gpu,
        uuid: uuid.into(),
        vendor_id: 0x8086,
        device_id: 0,
        pci_bdf: (device == 0).then(|| "0000:03:00.0".to_owned()),
        driver_version: 7,
        simulated: true,
        groups: Vec::new(),
        error: None,
    };
    let targets = vec![
        Target::new(DevicePath { driver: 0, device: 0, sub_device: None }, vec!["A".into()]),
        Target::new(DevicePath { driver: 0, device: 5, sub_device: None }, vec!["A".into()]),
    ];
    let info_stream = |index: usize, target: usize, device: &str| StreamInfo {
        index,
        target,
        device: device.into(),
        group: "A".into(),
        layout: "l".into(),
        series: vec![SeriesInfo {
            name: "GpuTime".into(),
            description: "d".into(),
            unit: "ns".into(),
            kind: Kind::Cumulative,
            wrap: None,
        }],
        read_path: ReadPath::FileRead,
    };
    let info = RunInfo {
        run: 3,
        config: RunConfig { targets, interval: Duration::from_millis(10), via: Default::default(), telemetry: false },
        devices: vec!["ze-sim".into(), "ze-sim (0:5)".into()],
        simulated: false,
        streams: vec![info_stream(0, 0, "ze-sim"), info_stream(1, 1, "ze-sim (0:5)")],
        imports: 2,
        notices: Vec::new(),
    };
    let run = RunDescription::live(&info, &[entry(0, "u0"), entry(1, "u1")]);
    assert_eq!(
        run.devices[0],
        DeviceDescription {
            name: "ze-sim".into(),
            identity: Some(("u0".into(), 7)),
            pci_bdf: Some("0000:03:00.0".into()),
            simulated: true
        }
    );
    assert_eq!(
        run.devices[1],
        DeviceDescription { name: "ze-sim (0:5)".into(), identity: None, pci_bdf: None, simulated: false }
    );
    assert_eq!(run.streams.iter().map(|s| s.device).collect::<Vec<_>>(), [0, 1]);
    let c = Catalog::new(&run);
    assert_eq!(c.families.len(), 1);
    assert_eq!(label(&c.rules[0], "uuid"), Some("u0"));
    assert_eq!(label(&c.rules[0], "pci_bdf"), Some("0000:03:00.0"), "the inventory's PCI address");
    assert_eq!(label(&c.rules[1], "uuid"), None);
    assert_eq!(label(&c.rules[1], "pci_bdf"), None);
    assert_eq!(label(&c.rules[1], "source"), Some("export"), "a file read is exported memory too");
}

#[test]
fn busy_time_is_a_counter_of_seconds_and_a_state_a_gauge() {
    let run = RunDescription {
        devices: vec![device("Card")],
        streams: vec![stream(
            "ComputeBasic",
            ReadPath::Mapped,
            vec![
                series("GpuTime", "ns", Kind::Busy),
                series("ContextId", "", Kind::State),
                series("Throttled", "", Kind::State),
            ],
        )],
    };
    let c = Catalog::new(&run);
    let fams: Vec<(String, bool)> = c.families.iter().map(|f| (f.full_name(), f.counter)).collect();
    assert_eq!(
        fams,
        [
            ("zescope_gpu_time_seconds".to_owned(), true),
            ("zescope_context_id".to_owned(), false),
            ("zescope_throttled".to_owned(), false),
        ],
        "busy time's running total in seconds (rate() of it is the busy share); a state's value as a gauge"
    );
    assert_eq!(c.rules[0].scale, 1e-9, "ns to seconds");
}

#[test]
fn a_streamers_counts_are_counters_as_exported_memorys_and_rates_stay_gauges() {
    let run = RunDescription {
        devices: vec![device("Card")],
        streams: vec![
            stream(
                "RenderBasic",
                ReadPath::Streamer,
                vec![
                    series("L3BytesRead", "GB", Kind::Cumulative),
                    series("RenderBusyCycles", "cycles", Kind::Cumulative),
                    series("RenderBusy", "%", Kind::Gauge),
                    series("OldRate", "cycles/s", Kind::Gauge),
                ],
            ),
            stream(
                "MemoryTraffic",
                ReadPath::Mapped,
                vec![series("ReadBandwidth", "GB/s", Kind::Gauge), series("BytesWritten", "GB", Kind::Cumulative)],
            ),
            stream(DERIVED_GROUP, ReadPath::Streamer, vec![series("twice", "bytes/s", Kind::Gauge)]),
        ],
    };
    let c = Catalog::new(&run);
    let fam = |v: usize| {
        let r = c.rules.iter().find(|r| r.value == v).expect("a rule");
        let f = &c.families[r.family];
        (f.full_name(), f.counter, r.scale)
    };
    assert_eq!(fam(0), ("zescope_l3_bytes_read_bytes".into(), true, 1e9), "GB counted, in bytes");
    assert_eq!(fam(1), ("zescope_render_busy_cycles".into(), true, 1.0));
    assert_eq!(fam(2), ("zescope_render_busy_ratio".into(), false, 0.01), "a share stays the report's");
    assert_eq!(
        fam(3),
        ("zescope_old_rate_per_second".into(), false, 1.0),
        "a rate (a session from before counts were totals) is a gauge, as recorded"
    );
    assert_eq!(fam(4), ("zescope_read_bandwidth_bytes_per_second".into(), false, 1e9), "exported memory's rate");
    assert_eq!(
        (fam(5), fam(0).1),
        (("zescope_bytes_written_bytes".into(), true, 1e9), true),
        "one rule for a count, whichever way it was read"
    );
    assert!(!fam(6).1, "a derived series is served as it is");
}
