//! The session file's types, version 1: what `docs/session-format.md`
//! documents, field by field.
//!
//! These are the file's own types, not the UI's: renaming a UI field must not
//! silently change what files mean. Conversions to and from the UI's types
//! live in `capture.rs`. Everything is ordered (lists, `BTreeMap`s), so the
//! same session always serialises to the same bytes. The metadata comes
//! first and is plain RON; the recorded samples come last as chunks of the
//! compact encoding in `codec.rs`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The `format` field of every session file.
pub const FORMAT_NAME: &str = "zescope-session";
/// The version this build writes.
pub const CURRENT_VERSION: u32 = 1;

/// A whole session file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionFile {
    pub format: String,
    pub version: u32,
    pub recorded: Recorded,
    pub source: SourceRecord,
    pub devices: Vec<DeviceRecord>,
    pub runs: Vec<RunRecord>,
    pub view: ViewRecord,
    pub markers: Vec<Marker>,
    /// Time zero of the plots' x axis (ns on the recording's monotonic clock).
    pub origin_ns: Option<i64>,
    pub streams: Vec<StreamFile>,
}

/// When and where the session was recorded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// Wall-clock start of the first run, Unix milliseconds (0: unknown).
    pub started_unix_ms: i64,
    pub host: String,
    pub zescope_version: String,
}

/// Where the metrics came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceRecord {
    /// "auto", "level-zero" or "sim", as requested.
    pub requested: String,
    pub description: String,
    pub simulated: bool,
}

/// A device some run sampled.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DeviceRecord {
    pub name: String,
    /// "Gpu", "Npu", ...
    pub kind: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub uuid: String,
    pub driver_version: u32,
    pub simulated: bool,
}

/// Where a device sits: driver, root device and sub-device indices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DevicePathRecord {
    pub driver: u32,
    pub device: u32,
    pub sub_device: Option<u32>,
}

/// One sampler run and how it was configured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The sampler's run number.
    pub run: u64,
    /// Index into `devices`.
    pub device: u32,
    pub device_path: DevicePathRecord,
    pub groups: Vec<String>,
    /// Only these metrics; empty: all of the groups'.
    pub metrics: Vec<String>,
    pub custom_group: bool,
    pub interval_ns: u64,
    /// Layout file used for each group, in `groups` order.
    pub layouts: Vec<String>,
    pub started_unix_ms: i64,
}

/// A series as the user knows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SeriesRef {
    pub device: String,
    pub group: String,
    pub metric: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PaneRecord {
    pub id: u64,
    pub series: Vec<SeriesRef>,
}

/// Live window length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WindowRecord {
    Sec10,
    #[default]
    Min1,
    Min10,
    All,
}

/// Follow/pause state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ModeRecord {
    #[default]
    Live,
    Paused,
    Zoomed,
}

/// A time range in seconds since `origin_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RangeRecord {
    pub start_s: f64,
    pub end_s: f64,
}

/// What the window showed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ViewRecord {
    pub panes: Vec<PaneRecord>,
    pub next_pane_id: u64,
    /// "#rrggbb" per series.
    pub colors: BTreeMap<SeriesRef, String>,
    pub hidden: Vec<SeriesRef>,
    pub window: WindowRecord,
    pub mode: ModeRecord,
    /// The frozen or zoomed range (when `mode` is not `Live`).
    pub range: Option<RangeRecord>,
}

/// A labelled point in time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    pub t_ns: i64,
    pub label: String,
}

/// How to read a counter.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum KindRecord {
    Gauge,
    /// A running total, plotted as a rate; `wrap`: the modulus it wraps at.
    Cumulative {
        wrap: Option<f64>,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesMeta {
    pub metric: String,
    pub unit: String,
    pub kind: KindRecord,
    pub description: String,
}

/// What a stream is: one metric group of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamMeta {
    pub name: String,
    /// The run's number (see `runs`); 0 when unknown.
    pub run: u64,
    pub device: String,
    pub group: String,
    pub layout: String,
    pub series: Vec<SeriesMeta>,
}

/// A stream with its recorded data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamFile {
    pub meta: StreamMeta,
    pub ended: bool,
    pub evicted_samples: u64,
    pub coarse: CoarseFile,
    pub raw: RawFile,
}

/// Coarsened history: `buckets` buckets in chunks of up to 1024.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoarseFile {
    pub buckets: u64,
    pub chunks: Vec<String>,
}

/// Full-resolution samples.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RawFile {
    pub first_block: u64,
    pub first_ordinal: u64,
    pub first_gap: i64,
    pub first_rates: Vec<Option<f64>>,
    pub samples: u64,
    /// Indices of samples a gap separates from the previous one.
    pub gaps: Vec<u64>,
    /// Samples in chunks aligned to multiples of 4096 ordinals.
    pub chunks: Vec<String>,
}

/// Just enough of a file to tell what it is.
#[derive(Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
}
