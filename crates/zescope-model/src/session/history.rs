//! What a session remembers about where its streams came from: the source,
//! the devices (identity: name, vendor, UUID, driver version, simulated or
//! real) and every run's configuration, recorded as runs start. The UI keeps
//! one [`RunHistory`] and feeds it `RunStarted` events; `zescope record` does
//! the same. Capture turns it into the session's metadata.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use zescope_sampler::{DeviceEntry, Inventory, RunInfo, SourceInfo};
use zescope_store::StreamId;
use zescope_ze::Source;

use super::format::{DevicePathRecord, DeviceRecord, Recorded, RunRecord, SeriesMeta, SourceRecord, StreamMeta};

/// Sources, devices, runs and which store stream each run created.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunHistory {
    /// When and where the first run started.
    pub recorded: Option<Recorded>,
    /// The source of the newest inventory that came with a run (default: nothing known).
    pub source: SourceRecord,
    /// Every device a run sampled, each once, in the order first sampled.
    pub devices: Vec<DeviceRecord>,
    /// Every run, in the order they started.
    pub runs: Vec<RunRecord>,
    /// What each stream is (set when its run started, or restored).
    pub streams: BTreeMap<StreamId, StreamMeta>,
    /// The processes that used the devices (fed with the sampler's process snapshots, or
    /// restored).
    pub processes: crate::view::Processes,
}

/// Milliseconds since the Unix epoch, now.
pub fn unix_ms_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// This machine's host name (empty if unknown).
pub(super) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_owned()).unwrap_or_default()
}

/// The session's record of a source the sampler opened: the requested source as the command
/// line spells it ("auto", "level-zero", "sim"), the description and whether it is simulated.
pub(super) fn source_record(s: &SourceInfo) -> SourceRecord {
    let requested = match s.requested {
        Source::Auto => "auto",
        Source::LevelZero => "level-zero",
        Source::Sim => "sim",
    };
    SourceRecord { requested: requested.to_owned(), description: s.description.clone(), simulated: s.simulated }
}

/// The session's record of a device from the sampler's inventory: its identity (name, kind,
/// PCI ids and address, UUID, driver version), not where it sits in the driver's list.
pub(super) fn device_record(d: &DeviceEntry) -> DeviceRecord {
    DeviceRecord {
        name: d.name.clone(),
        kind: format!("{:?}", d.kind),
        vendor_id: d.vendor_id,
        device_id: d.device_id,
        uuid: d.uuid.clone(),
        driver_version: d.driver_version,
        simulated: d.simulated,
        pci_bdf: d.pci_bdf.clone(),
    }
}

use crate::derive::{DESCRIPTION_PREFIX, is_derived};

impl RunHistory {
    /// Record a run that started: per device (looked up in `inventory` by its path) one
    /// `RunRecord` with that device's configuration and layouts (a run over several devices
    /// gives several records of one run number), and the store streams created for its
    /// groups, in `info.streams` order.
    pub fn run_started(&mut self, info: &RunInfo, inventory: Option<&Inventory>, streams: &[StreamId]) {
        if let Some(src) = inventory.and_then(|i| i.source.as_ref()) {
            self.source = source_record(src);
        }
        let now = unix_ms_now();
        self.recorded.get_or_insert_with(|| Recorded {
            started_unix_ms: now,
            host: host_name(),
            zescope_version: env!("CARGO_PKG_VERSION").to_owned(),
            clocks: Some(super::ClockRecord::now()),
        });
        let u32_of = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        // The streams sampled (those of derived series are listed in `derived`, not `layouts`).
        let sampled = || info.streams.iter().filter(|s| !is_derived(s));
        for (t, target) in info.config.targets.iter().enumerate() {
            let entry = inventory.and_then(|i| i.devices.iter().find(|d| d.path == target.device));
            let name = info.devices.get(t).cloned().unwrap_or_default();
            let device = match entry {
                // A name made unique in the run is the one its series carry.
                Some(d) => DeviceRecord { name: name.clone(), ..device_record(d) },
                None => DeviceRecord { name, simulated: info.simulated, ..DeviceRecord::default() },
            };
            let index = match self.devices.iter().position(|d| *d == device) {
                Some(i) => i,
                None => {
                    self.devices.push(device);
                    self.devices.len() - 1
                }
            };
            self.runs.push(RunRecord {
                run: info.run,
                device: index as u32,
                device_path: DevicePathRecord {
                    driver: u32_of(target.device.driver),
                    device: u32_of(target.device.device),
                    sub_device: target.device.sub_device.map(u32_of),
                },
                groups: target.groups.clone(),
                metrics: target.metrics.clone(),
                custom_group: target.custom_group,
                interval_ns: info.config.interval.as_nanos().min(u64::MAX as u128) as u64,
                layouts: sampled().filter(|s| s.target == t).map(|s| s.layout.clone()).collect(),
                via: info.config.via.name().to_owned(),
                telemetry: sampled().any(|s| s.target == t && s.read_path == zescope_sampler::ReadPath::Sysman),
                started_unix_ms: now,
                notices: if t == 0 { info.notices.clone() } else { Vec::new() },
                derived: info
                    .streams
                    .iter()
                    .filter(|s| s.target == t && is_derived(s))
                    .flat_map(|s| s.series.iter())
                    .filter_map(|x| x.description.strip_prefix(DESCRIPTION_PREFIX).map(str::to_owned))
                    .collect(),
            });
        }
        for (s, &id) in info.streams.iter().zip(streams) {
            self.streams.insert(id, stream_meta(info.run, s));
        }
    }

    /// A stream added to run `run` after it started (a derived series defined then, filed as
    /// store stream `id`): its meta, and its definitions in the run's `derived`.
    pub fn stream_added(&mut self, run: u64, s: &zescope_sampler::StreamInfo, id: StreamId) {
        self.streams.insert(id, stream_meta(run, s));
        let defs = s.series.iter().filter_map(|x| x.description.strip_prefix(DESCRIPTION_PREFIX).map(str::to_owned));
        if let Some(r) = self.runs.iter_mut().rev().find(|r| r.run == run) {
            r.derived.extend(defs);
        }
    }

    /// When and where the recording started (here, at an unknown time, if
    /// no run did).
    pub fn recorded(&self) -> Recorded {
        self.recorded.clone().unwrap_or_else(|| Recorded {
            started_unix_ms: 0,
            host: host_name(),
            zescope_version: env!("CARGO_PKG_VERSION").to_owned(),
            clocks: None,
        })
    }
}

/// How a stream of run `run` is described in the session file.
fn stream_meta(run: u64, s: &zescope_sampler::StreamInfo) -> StreamMeta {
    let series = s
        .series
        .iter()
        .map(|x| SeriesMeta {
            metric: x.name.clone(),
            unit: x.unit.clone(),
            kind: super::KindRecord::of(x.kind, x.wrap),
            description: x.description.clone(),
        })
        .collect();
    StreamMeta {
        name: format!("{} / {} (run {})", s.device, s.group, run),
        run,
        device: s.device.clone(),
        group: s.group.clone(),
        layout: s.layout.clone(),
        series,
        read_path: Some(s.read_path.name().to_owned()),
    }
}
