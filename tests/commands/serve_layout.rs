//! What `serve` makes of a run over two devices with telemetry, without a sampler: each device's
//! labels on its own series (uuid and driver from the inventory), one `zescope_device_info` per
//! device, the throttle bitmask as one 0/1 gauge per reason, energy as a `_joules_total` counter,
//! NaN values left out, and two series that would share family and labels told apart.

use std::sync::Arc;
use std::time::{Duration, Instant};

use zescope::commands::serve::{Format, Latest, encode};
use zescope_openmetrics::{Catalog, RunDescription};
use zescope_sampler::layout::Kind;
use zescope_sampler::telemetry::throttle_description;
use zescope_sampler::{DeviceEntry, DevicePath, RunConfig, RunInfo, SeriesInfo, StreamInfo, Target};
use zescope_ze::DeviceKind;

fn series(name: &str, unit: &str, kind: Kind, description: &str) -> SeriesInfo {
    SeriesInfo { name: name.into(), description: description.into(), unit: unit.into(), kind, wrap: None }
}

fn device(index: usize, name: &str, uuid: &str) -> DeviceEntry {
    DeviceEntry {
        path: DevicePath { driver: 0, device: index, sub_device: None },
        name: name.into(),
        kind: DeviceKind::Gpu,
        uuid: uuid.into(),
        vendor_id: 0x8086,
        device_id: 0,
        pci_bdf: Some(format!("0000:{:02x}:00.0", 3 + index)),
        driver_version: 0x10000 + index as u32,
        simulated: index == 1,
        groups: Vec::new(),
        error: None,
    }
}

fn telemetry(target: usize, device: &str, index: usize) -> StreamInfo {
    StreamInfo {
        index,
        target,
        device: device.into(),
        group: "Telemetry".into(),
        layout: "sysman".into(),
        series: vec![
            series("Package power", "W", Kind::Gauge, "p"),
            series("Package energy", "J", Kind::Gauge, "e"),
            series("GPU throttle reasons", "", Kind::Gauge, &throttle_description()),
            series("GPU temperature", "°C", Kind::Gauge, "t"),
        ],
        read_path: zescope_sampler::ReadPath::Sysman,
    }
}

fn run() -> RunInfo {
    let targets = vec![
        Target::new(DevicePath { driver: 0, device: 0, sub_device: None }, vec!["A".into()]),
        Target::new(DevicePath { driver: 0, device: 1, sub_device: None }, vec![]),
    ];
    let group = StreamInfo {
        index: 0,
        target: 0,
        device: "Card".into(),
        group: "A".into(),
        layout: "l".into(),
        // Two series that name the same thing.
        series: vec![series("Busy", "%", Kind::Gauge, "b"), series("Busy", "%", Kind::Gauge, "b")],
        read_path: zescope_sampler::ReadPath::Mapped,
    };
    RunInfo {
        run: 1,
        config: RunConfig { targets, interval: Duration::from_millis(10), via: Default::default(), telemetry: true },
        devices: vec!["Card".into(), "Card 2".into()],
        simulated: true,
        streams: vec![group, telemetry(0, "Card", 1), telemetry(1, "Card 2", 2)],
        imports: 1,
        notices: Vec::new(),
    }
}

fn lines<'a>(page: &'a str, prefix: &str) -> Vec<&'a str> {
    page.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn each_device_has_its_labels_and_telemetry_is_named_in_base_units() {
    let inventory = [device(0, "Card", "aaaa"), device(1, "Card 2", "bbbb")];
    let layout = Catalog::new(&RunDescription::live(&run(), &inventory));
    assert_eq!(layout.width, 2 + 4 + 4);
    assert_eq!(layout.stream_starts, [0, 2, 6]);
    // Busy, Busy; then per device: power 120 W, energy 5 J, throttle bits 0 and 3, 60 °C (NaN on
    // the second device: not read yet).
    let values = vec![0.5, 0.25, 120.0, 5.0, 9.0, 60.0, 7.5, 0.5, 0.0, f64::NAN];
    let snap = Arc::new(Latest { values, catalog: Some(Arc::new(layout)), running: true, ..Latest::default() });
    let om = encode(&snap, Instant::now(), Format::OpenMetrics).unwrap();

    let info = lines(&om, "zescope_device_info{");
    assert_eq!(info.len(), 2, "{om}");
    let card = "device=\"Card\",uuid=\"aaaa\",driver=\"0x10000\",pci_bdf=\"0000:03:00.0\",simulated=\"false\"";
    assert!(info[0].contains(card), "{om}");
    let card2 = "device=\"Card 2\",uuid=\"bbbb\",driver=\"0x10001\",pci_bdf=\"0000:04:00.0\",simulated=\"true\"";
    assert!(info[1].contains(card2), "{om}");

    let power = lines(&om, "zescope_power_watts{");
    assert_eq!(power.len(), 2, "{om}");
    assert!(
        power[0].contains("uuid=\"aaaa\"") && power[0].contains("domain=\"package\"") && power[0].ends_with(" 120.0")
    );
    assert!(power[1].contains("uuid=\"bbbb\"") && power[1].contains("source=\"sysman\"") && power[1].ends_with(" 7.5"));
    assert!(om.contains("# TYPE zescope_energy_joules counter\n"), "{om}");
    assert!(lines(&om, "zescope_energy_joules_total{")[0].ends_with(" 5.0"), "{om}");

    let reasons = lines(&om, "zescope_gpu_throttle_reason{");
    assert_eq!(reasons.len(), 14, "7 reasons per device:\n{om}");
    let set: Vec<&str> = reasons[..7].iter().filter(|l| l.ends_with(" 1.0")).copied().collect();
    assert_eq!(set.len(), 2, "bits 0 and 3 of 9: {reasons:?}");
    assert!(set[0].contains("reason=\"average_power_cap_pl1\"") && set[1].contains("reason=\"thermal_limit\""));
    assert!(reasons[7..].iter().all(|l| l.ends_with(" 0.0")), "{reasons:?}");

    let temps = lines(&om, "zescope_temperature_celsius{");
    assert_eq!(temps.len(), 1, "the second device's NaN is left out:\n{om}");
    assert!(temps[0].contains("sensor=\"gpu\"") && temps[0].ends_with(" 60.0"));

    let busy = lines(&om, "zescope_busy_ratio{");
    assert_eq!(busy.len(), 2, "{om}");
    assert!(!busy[0].contains("series=") && busy[1].contains("series=\"Busy\""), "told apart: {busy:?}");
}
