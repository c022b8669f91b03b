use std::time::Duration;

use super::*;
use crate::session::{self, Recorder};
use zescope_sampler::layout::Kind;
use zescope_sampler::telemetry::throttle_description;
use zescope_sampler::{
    DeviceEntry, DevicePath, Inventory, ReadPath, RunConfig, RunInfo, SampleBatch, SeriesInfo, StreamInfo, Target,
};
use zescope_ze::DeviceKind;

fn path(device: usize) -> DevicePath {
    DevicePath { driver: 0, device, sub_device: None }
}

fn entry(device: usize, name: &str) -> DeviceEntry {
    DeviceEntry {
        path: path(device),
        name: name.into(),
        kind: DeviceKind::Gpu,
        uuid: format!("0{device}00-aa"),
        vendor_id: 0x8086,
        device_id: 1,
        pci_bdf: Some(format!("0000:{:02x}:00.0", 3 + device)),
        driver_version: 0x100 + device as u32,
        simulated: device == 0,
        groups: Vec::new(),
        error: None,
    }
}

fn series(name: &str, unit: &str, kind: Kind, description: &str) -> SeriesInfo {
    SeriesInfo { name: name.into(), description: description.into(), unit: unit.into(), kind, wrap: None }
}

/// A run over two devices (the second not in the inventory): a group read from a file, the same
/// group through the streamer, and the first device's telemetry.
fn run() -> (RunInfo, Inventory) {
    let stream = |index: usize, target: usize, device: &str, group: &str, read_path: ReadPath, series| StreamInfo {
        index,
        target,
        device: device.into(),
        group: group.into(),
        layout: match read_path {
            ReadPath::Sysman => "sysman".into(),
            ReadPath::Streamer => "streamer (1 ms, 4 reports per notification)".into(),
            _ => "sim layout".into(),
        },
        series,
        read_path,
    };
    let busy = || {
        vec![
            series("GpuTime", "ns", Kind::Busy, "t"),
            series("Busy", "%", Kind::Gauge, "b"),
            series("ContextId", "", Kind::State, "c"),
        ]
    };
    let telemetry = vec![
        series("Package power", "W", Kind::Gauge, "p"),
        series("GPU throttle reasons", "", Kind::Gauge, &throttle_description()),
    ];
    let info = RunInfo {
        run: 4,
        config: RunConfig {
            targets: vec![Target::new(path(0), vec!["A".into()]), Target::new(path(3), vec!["A".into()])],
            interval: Duration::from_millis(10),
            via: Default::default(),
            telemetry: true,
        },
        devices: vec!["Card".into(), "Card (0:3)".into()],
        simulated: false,
        streams: vec![
            stream(0, 0, "Card", "A", ReadPath::FileRead, busy()),
            stream(1, 0, "Card", "Telemetry", ReadPath::Sysman, telemetry),
            stream(2, 1, "Card (0:3)", "A", ReadPath::Streamer, busy()),
        ],
        imports: 1,
        notices: Vec::new(),
    };
    let inventory = Inventory { source: None, devices: vec![entry(0, "Card"), entry(1, "Other")] };
    (info, inventory)
}

/// The session `zescope record` would save of `run()`, a few samples per stream.
fn recorded() -> Session {
    let (info, inventory) = run();
    let mut rec = Recorder::new("unused.ron".into(), inventory);
    rec.started(&info);
    for (stream, width) in [(0, 3), (1, 2), (2, 3)] {
        let timestamps = vec![1_000_000_000, 1_010_000_000];
        let values = (0..2 * width).map(|v| v as f64 + 1.0).collect();
        rec.samples(&SampleBatch { run: 4, stream, timestamps, values, gap_before: false }).unwrap();
    }
    rec.session()
}

#[test]
fn a_recorded_run_is_described_as_serve_describes_it_live() {
    let (info, inventory) = run();
    let live = RunDescription::live(&info, &inventory.devices);
    let session = recorded();
    assert_eq!(described(&session), [(live.clone(), vec![0, 1, 2])]);
    // Saved and loaded again.
    let loaded = session::from_slice(&session::to_bytes(&session).unwrap()).unwrap();
    assert_eq!(described(&loaded), [(live.clone(), vec![0, 1, 2])]);
    assert_eq!(loaded.streams[2].meta.read_path.as_deref(), Some("streamer"));
}

#[test]
fn a_file_older_than_the_read_path_gives_the_same_catalog() {
    let (info, inventory) = run();
    let live = Catalog::new(&RunDescription::live(&info, &inventory.devices));
    let mut old = recorded();
    for s in &mut old.streams {
        s.meta.read_path = None;
    }
    let text = session::to_v1_string(&old).unwrap();
    assert!(!text.contains("read_path"), "absent, as in older files");
    let loaded = session::from_str(&text).unwrap();
    let (run, _) = &described(&loaded)[0];
    assert_eq!(run.streams[0].read_path, ReadPath::Mapped, "which way into exported memory is not known");
    assert_eq!(Catalog::new(run), live, "but the labels are the same");
}

#[test]
fn an_unknown_read_path_is_refused_naming_the_field() {
    let mut s = recorded();
    s.streams[1].meta.read_path = Some("warp drive".into());
    let text = session::to_v1_string(&s).unwrap();
    let err = session::from_str(&text).unwrap_err().to_string();
    assert!(err.contains("streams[1].meta.read_path") && err.contains("\"warp drive\""), "{err}");
    assert!(err.contains("mmap, file read, device copy, streamer, sysman"), "{err}");
}

#[test]
fn streams_outside_a_run_name_their_device_from_the_list() {
    let mut s = recorded();
    // Run 9 has no record: its device is found by name, or known by name only.
    s.streams[0].meta.run = 9;
    s.streams[2].meta.run = 9;
    s.streams[2].meta.device = "Gone".into();
    let runs = described(&s);
    assert_eq!(runs.iter().map(|r| r.1.clone()).collect::<Vec<_>>(), [vec![0, 2], vec![1]]);
    let devices = &runs[0].0.devices;
    assert_eq!(devices[0], device(&s.devices[0]));
    assert_eq!(devices[1], DeviceDescription { name: "Gone".into(), identity: None, pci_bdf: None, simulated: false });
}

#[test]
fn the_backfill_is_written_with_wall_clock_times() {
    let s = recorded();
    let mut store = Store::new(usize::MAX);
    let restored = s.restore_into(&mut store).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.om");
    let n = openmetrics(&s, &store, &restored.streams, &out).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    // GpuTime of both devices (2 each), Busy (2 each), ContextId (2 each), power (2), 7 reasons
    // (2 each).
    assert_eq!(n, 4 + 4 + 4 + 2 + 14, "{text}");
    assert!(text.contains("# TYPE zescope_gpu_time_seconds counter\n"), "busy time's running total: {text}");
    assert!(text.contains("# TYPE zescope_context_id gauge\n"), "a state is a gauge: {text}");
    let start = s.recorded.started_unix_ms;
    let stamp = |ms: i64| format!(" {}.{:03}", ms / 1000, ms % 1000);
    // The session's device record keeps the PCI address: the backfill labels it as serve does.
    let card = "zescope_gpu_time_seconds_total{device=\"Card\",uuid=\"0000-aa\",driver=\"0x100\",\
                pci_bdf=\"0000:03:00.0\",simulated=\"true\",group=\"A\",source=\"export\"}";
    let first = text.lines().find(|l| l.starts_with(card)).unwrap_or_else(|| panic!("{text}"));
    assert!(first.ends_with(&stamp(start)), "{first} at {start}");
    assert!(text.contains("device=\"Card (0:3)\",simulated=\"false\",group=\"A\",source=\"streamer\""), "{text}");
    let mut empty = s.clone();
    empty.recorded.started_unix_ms = 0;
    let err = openmetrics(&empty, &store, &restored.streams, &out).unwrap_err();
    assert!(err.contains("started_unix_ms"), "{err}");
}
