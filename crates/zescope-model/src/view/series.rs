//! Series identity and description: a counter as the user knows it ([`SeriesKey`], stable across
//! runs), everything known about it ([`SeriesEntry`]: its description and its store series, one
//! per run), its kind as the store keeps it, and how a run's stream is described to the store
//! ([`stream_desc`]).

use serde::{Deserialize, Serialize};

use zescope_sampler::layout::Kind;
use zescope_sampler::{RunInfo, SeriesInfo, StreamInfo};
use zescope_store::{SeriesDesc, SeriesId, SeriesKind, StreamDesc};

/// A counter as the user knows it, stable across runs: which device, group and metric.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SeriesKey {
    /// The device's name as the driver reports it (`RunInfo::device`).
    pub device: String,
    /// The metric group's name.
    pub group: String,
    /// The metric's name within its group.
    pub metric: String,
}

impl SeriesKey {
    /// "group/metric": legends, CSV headers, exports.
    pub fn label(&self) -> String {
        format!("{}/{}", self.group, self.metric)
    }

    /// The series as a trigger or a derived series' definition names it: `GROUP/METRIC`, or with
    /// `device` (a run of several devices) `DEVICE/GROUP/METRIC`, in quotes where the name needs
    /// them (`"Telemetry/Package power"`).
    pub fn in_expression(&self, device: bool) -> String {
        let name = if device { format!("{}/{}", self.device, self.label()) } else { self.label() };
        crate::triggers::names::quoted(&name)
    }

    /// What a legend shows: `label`, after the device's name when series of several devices
    /// are known ("ze-sim NPU · NpuActivity/NpuPower").
    pub fn shown(&self, several_devices: bool) -> String {
        match several_devices {
            true => format!("{} · {}", self.device, self.label()),
            false => self.label(),
        }
    }
}

/// Do the keys of `series` name more than one device? (Then what lists them names each one's
/// device: [`SeriesKey::shown`].)
pub fn several_devices<V>(series: &std::collections::BTreeMap<SeriesKey, V>) -> bool {
    let mut devices = series.keys().map(|k| &k.device);
    devices.next().is_some_and(|first| devices.any(|d| d != first))
}

/// Is a state in `unit` an identifier ("kernel id", "context id", "id")? An identifier is a
/// label, not a quantity: its values name things (the metric tracer's kernel ids climb by one
/// per kernel), so it is drawn as a lane at one height where it has samples, never at the height
/// of its value (a climbing line read as a quantity). Its value is read on hover.
pub fn is_identifier_unit(unit: &str) -> bool {
    let u = unit.trim().to_ascii_lowercase();
    u == "id" || u == "ids" || u.ends_with(" id") || u.ends_with("_id")
}

/// Is a store series of `desc` an identifier ([`is_identifier_unit`])?
pub fn is_identifier(desc: &zescope_store::SeriesDesc) -> bool {
    desc.kind == zescope_store::SeriesKind::State && is_identifier_unit(&desc.unit)
}

/// Everything known about one counter: its description and its series in the store (one per
/// run that sampled it).
#[derive(Clone, Debug)]
pub struct SeriesEntry {
    /// Its description (unit, kind, wrap) as the newest run that sampled it gave it.
    pub info: SeriesInfo,
    /// Its store series, one per run that sampled it, oldest run first.
    pub ids: Vec<SeriesId>,
}

impl SeriesEntry {
    /// Unit of what is plotted: per second for cumulative counters, % for busy time.
    pub fn plotted_unit(&self) -> String {
        plotted_unit(&self.info)
    }

    /// Is it a state (an id, a flag: drawn as steps, never averaged or summed)?
    pub fn is_state(&self) -> bool {
        self.info.kind == Kind::State
    }
}

/// Unit of what is plotted of a series of this description: per second for cumulative
/// counters, % for busy time, the unit itself for gauges and states.
pub fn plotted_unit(info: &SeriesInfo) -> String {
    match info.kind {
        Kind::Gauge | Kind::State => info.unit.clone(),
        Kind::Cumulative => format!("{}/s", info.unit),
        Kind::Busy => "%".to_owned(),
    }
}

/// How the store keeps a series of this description: gauges and states as read, cumulative
/// counters and busy time as running totals (with the wrap the layout declares), plotted as
/// rates and as shares of the elapsed time. Busy time in a unit that is not one of time (which
/// layouts and session files refuse) is kept as a cumulative counter.
pub(crate) fn store_kind(info: &SeriesInfo) -> SeriesKind {
    match info.kind {
        Kind::Gauge => SeriesKind::Gauge,
        Kind::State => SeriesKind::State,
        Kind::Cumulative => SeriesKind::Cumulative { wrap: info.wrap },
        Kind::Busy => match zescope_sampler::layout::kinds::unit_seconds(&info.unit) {
            Some(unit_s) => SeriesKind::BusyTime { wrap: info.wrap, unit_s },
            None => SeriesKind::Cumulative { wrap: info.wrap },
        },
    }
}

/// How the store describes one stream of a run (one per metric group).
pub fn stream_desc(info: &RunInfo, s: &StreamInfo) -> StreamDesc {
    StreamDesc {
        name: format!("{} / {} (run {})", s.device, s.group, info.run),
        series: s
            .series
            .iter()
            .map(|x| SeriesDesc { name: x.name.clone(), unit: x.unit.clone(), kind: store_kind(x) })
            .collect(),
    }
}
