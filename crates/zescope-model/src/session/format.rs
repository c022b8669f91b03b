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
use zescope_sampler::ReadPath;

/// The `format` field of every session file.
pub(crate) const FORMAT_NAME: &str = "zescope-session";
/// The version this build writes (7: version 6 with a counter's intervals in its coarse
/// buckets, so the mean of its rates over coarsened history stays time-weighted; 6 was version
/// 4 with the store's scaled column form; 4 was version 3 with a CRC-32C after every data chunk;
/// 5 is a recording's journal, not a file of this shape).
pub(crate) const CURRENT_VERSION: u32 = 7;

/// A whole session file, fields in the order they are written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionFile {
    /// Always [`FORMAT_NAME`]; loading refuses anything else.
    pub format: String,
    /// The format version; a file newer than [`CURRENT_VERSION`] is refused.
    pub version: u32,
    /// When, where and by which zescope the recording was made.
    pub recorded: Recorded,
    /// The source the metrics came from.
    pub source: SourceRecord,
    /// Every device a run sampled, each once; `RunRecord::device` indexes it.
    pub devices: Vec<DeviceRecord>,
    /// Every sampler run, in the order they started.
    pub runs: Vec<RunRecord>,
    /// What the window showed when the session was saved.
    pub view: ViewRecord,
    /// The user's markers, in the order they were added.
    pub markers: Vec<Marker>,
    /// Time zero of the plots' x axis (ns on the recording's monotonic clock).
    /// `None` when the session holds no samples.
    pub origin_ns: Option<i64>,
    /// Another session shown beside this one (File → Compare with…); absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<ComparisonRef>,
    /// The processes that used the devices (`processes.rs`); absent when none were seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<super::ProcessRecord>,
    /// Every stream with its data, in store order (last in the file: the bulk of it).
    pub streams: Vec<StreamFile>,
}

/// A second session shown beside this one for comparison: a reference, not a copy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRef {
    /// The other session file's path, as it was opened.
    pub path: String,
    /// Its time shift in seconds after it is aligned with this session (positive: later).
    #[serde(default)]
    pub offset_s: f64,
    /// The label of a marker both sessions hold: its two times are lined up (then the offset
    /// applies). Absent: the two sessions' first samples are lined up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align_marker: Option<String>,
}

/// When and where the session was recorded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// Wall-clock start of the first run, Unix milliseconds (0: unknown).
    pub started_unix_ms: i64,
    /// The recording machine's host name (empty if unknown).
    pub host: String,
    /// The version of zescope that recorded it (`CARGO_PKG_VERSION`).
    pub zescope_version: String,
    /// The machine's clocks read together when the first run started, which relate the samples'
    /// `CLOCK_MONOTONIC` to boot time and wall-clock time (a Perfetto trace's clock snapshot).
    /// Absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks: Option<ClockRecord>,
}

/// One instant read on three clocks of the recording machine, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockRecord {
    /// `CLOCK_MONOTONIC`, the samples' clock.
    pub monotonic_ns: i64,
    /// `CLOCK_BOOTTIME`: monotonic time including time suspended.
    pub boottime_ns: i64,
    /// `CLOCK_REALTIME`: ns since the Unix epoch.
    pub realtime_ns: i64,
}

impl ClockRecord {
    /// The clocks now: boot and wall-clock time read between two reads of the monotonic clock,
    /// which is taken as their midpoint.
    pub fn now() -> ClockRecord {
        use rustix::time::{ClockId, clock_gettime};
        let ns = |c| {
            let t = clock_gettime(c);
            t.tv_sec.saturating_mul(1_000_000_000).saturating_add(t.tv_nsec)
        };
        let before = ns(ClockId::Monotonic);
        let boottime_ns = ns(ClockId::Boottime);
        let realtime_ns = ns(ClockId::Realtime);
        let after = ns(ClockId::Monotonic);
        ClockRecord { monotonic_ns: before + (after - before) / 2, boottime_ns, realtime_ns }
    }
}

/// Where the metrics came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceRecord {
    /// "auto", "level-zero" or "sim", as requested.
    pub requested: String,
    /// One line saying what was opened (the loader's path or the simulated driver).
    pub description: String,
    /// The data came from a simulated device, not hardware.
    pub simulated: bool,
}

/// A device some run sampled.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DeviceRecord {
    /// The name the driver reports; series name their device by it.
    pub name: String,
    /// "Gpu", "Npu", ...
    pub kind: String,
    /// PCI vendor id (0x8086 for Intel; 0 when unknown).
    pub vendor_id: u32,
    /// PCI device id (0 when unknown).
    pub device_id: u32,
    /// Device UUID, lowercase hex in dashed groups like "01000000-0000-0000-515a-000000000000"
    /// (empty when unknown).
    pub uuid: String,
    /// The driver's version number as it reports it (0 when unknown).
    pub driver_version: u32,
    /// A simulated device, not hardware.
    pub simulated: bool,
    /// PCI address `DDDD:BB:DD.F` (as `lspci -D` prints it) where the driver reported it;
    /// absent when unknown, and in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bdf: Option<String>,
}

/// Where a device sits: driver, root device and sub-device indices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DevicePathRecord {
    /// Index of the driver in the loader's list.
    pub driver: u32,
    /// Index of the root device in its driver's list.
    pub device: u32,
    /// Index of the sub-device (tile) in its root device; `None`: the root device itself.
    pub sub_device: Option<u32>,
}

/// One sampler run and how it was configured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The sampler's run number.
    pub run: u64,
    /// Index into `devices`.
    pub device: u32,
    /// Where the device sat when the run was made (indices can change between boots).
    pub device_path: DevicePathRecord,
    /// The metric groups sampled, by name, one stream each.
    pub groups: Vec<String>,
    /// Only these metrics; empty: all of the groups'.
    pub metrics: Vec<String>,
    /// `metrics` were combined into one metric group created for the run.
    pub custom_group: bool,
    /// The sampling interval in ns, as clamped by the sampler.
    pub interval_ns: u64,
    /// How each group was read, in `groups` order: the name of the layout that decoded its
    /// exported memory, or "streamer (period, N reports per notification)"; then "sysman" for
    /// the telemetry stream, when the run read it.
    pub layouts: Vec<String>,
    /// The way asked for (`auto`, `export`, `streamer`); "auto" in files that predate it.
    #[serde(default = "auto")]
    pub via: String,
    /// The run also read the device's telemetry through Sysman (its stream, "Telemetry", after
    /// the groups'). Absent in files older than telemetry: false.
    #[serde(default)]
    pub telemetry: bool,
    /// Wall-clock start of the run, Unix milliseconds.
    pub started_unix_ms: i64,
    /// What the sampler said when the run started (`RunInfo::notices`: features off, a group
    /// left out and why, a period the driver refused), on the run's first entry. Absent when it
    /// said nothing, and in files older than it: empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// The derived series of this device's part of the run (`docs/derived-series.md`), as
    /// defined: `NAME=EXPR` or `NAME[UNIT]=EXPR`. Their values are a stream of group `Derived`
    /// like any other (not in `layouts`). Absent when there were none, and in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<String>,
}

fn auto() -> String {
    "auto".to_owned()
}

/// A series as the user knows it: the file's form of `view::SeriesKey`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SeriesRef {
    /// The device's name ([`DeviceRecord::name`]).
    pub device: String,
    /// The metric group's name.
    pub group: String,
    /// The metric's name within its group.
    pub metric: String,
}

/// One plot pane of the saved view.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PaneRecord {
    /// The pane's id: unique within the view and not above [`ViewRecord::next_pane_id`]
    /// (loading checks both).
    pub id: u64,
    /// Its series in legend order.
    pub series: Vec<SeriesRef>,
}

/// Live window length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WindowRecord {
    /// The last 10 seconds.
    Sec10,
    /// The last minute (the default).
    #[default]
    Min1,
    /// The last 10 minutes.
    Min10,
    /// All data.
    All,
}

/// Follow/pause state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ModeRecord {
    /// Following the newest sample; `ViewRecord::range` is not used.
    #[default]
    Live,
    /// Frozen by the user at `ViewRecord::range`.
    Paused,
    /// Moved or zoomed by the user to `ViewRecord::range`.
    Zoomed,
}

/// A time range in seconds since `origin_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RangeRecord {
    /// Left edge; when the view is not live, loading checks that both edges are finite and
    /// `start_s < end_s`.
    pub start_s: f64,
    /// Right edge.
    pub end_s: f64,
}

/// What the window showed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ViewRecord {
    /// The plot panes, top to bottom; empty when none were saved (`zescope record` saves none,
    /// and `zescope export` then lays out the default panes).
    pub panes: Vec<PaneRecord>,
    /// The id last given to a pane; panes added after a restore get higher ones.
    pub next_pane_id: u64,
    /// "#rrggbb" per series.
    pub colors: BTreeMap<SeriesRef, String>,
    /// Series the user switched off (kept in their panes, not drawn).
    pub hidden: Vec<SeriesRef>,
    /// The live window's length.
    pub window: WindowRecord,
    /// Following, paused or zoomed.
    pub mode: ModeRecord,
    /// The frozen or zoomed range (when `mode` is not `Live`).
    pub range: Option<RangeRecord>,
}

/// A labelled point in time, or a named range that starts there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    /// When, in ns on the recording's monotonic clock (the clock of `origin_ns`); a range's start.
    pub t_ns: i64,
    /// The text shown beside it.
    pub label: String,
    /// Instant or range; absent (files written before ranges existed, and every instant): an
    /// instant.
    #[serde(default, skip_serializing_if = "SpanRecord::is_instant")]
    pub span: SpanRecord,
}

/// What a marker covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum SpanRecord {
    /// A point in time.
    #[default]
    Instant,
    /// A range from `t_ns` to `end_ns` (not before `t_ns`).
    Range {
        /// When it ended (ns, the same clock).
        end_ns: i64,
    },
    /// A range that had begun and not ended when the session was saved.
    Open,
}

impl SpanRecord {
    /// An instant (written by leaving `span` out).
    pub fn is_instant(&self) -> bool {
        *self == SpanRecord::Instant
    }
}

/// How to read a counter.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum KindRecord {
    /// A value read as is (temperature, frequency, occupancy).
    Gauge,
    /// A running total, plotted as a rate; `wrap`: the modulus it wraps at.
    Cumulative {
        /// The modulus the raw value wraps at (positive and finite); `None`: it does not wrap.
        wrap: Option<f64>,
    },
    /// A running total of time busy in the series' unit of time ("ns", "us", "ms", "s"),
    /// plotted as the share of the elapsed time it grew by, in %; wraps as `Cumulative`.
    Busy {
        /// The modulus the raw value wraps at (positive and finite); `None`: it does not wrap.
        wrap: Option<f64>,
    },
    /// A state (an id, a flag): read as is, drawn as steps, never averaged or summed.
    State,
}

impl KindRecord {
    /// The record of a series of `kind` wrapping at `wrap` (running totals only).
    pub fn of(kind: zescope_sampler::layout::Kind, wrap: Option<f64>) -> KindRecord {
        use zescope_sampler::layout::Kind;
        match kind {
            Kind::Gauge => KindRecord::Gauge,
            Kind::Cumulative => KindRecord::Cumulative { wrap },
            Kind::Busy => KindRecord::Busy { wrap },
            Kind::State => KindRecord::State,
        }
    }

    /// The kind and wrap it records.
    pub fn kind(self) -> (zescope_sampler::layout::Kind, Option<f64>) {
        use zescope_sampler::layout::Kind;
        match self {
            KindRecord::Gauge => (Kind::Gauge, None),
            KindRecord::Cumulative { wrap } => (Kind::Cumulative, wrap),
            KindRecord::Busy { wrap } => (Kind::Busy, wrap),
            KindRecord::State => (Kind::State, None),
        }
    }
}

/// One series of a stream, in the stream's column order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesMeta {
    /// The metric's name.
    pub metric: String,
    /// Unit of the stored value (of a rate's numerator for cumulative counters: "ns" plots as
    /// "ns/s"; of the running total of busy time, which plots as "%").
    pub unit: String,
    /// Gauge, cumulative, busy time or state.
    pub kind: KindRecord,
    /// The driver's description of the metric.
    pub description: String,
}

/// What a stream is: one metric group of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamMeta {
    /// Its display name ("ze-sim GPU / ComputeBasic (run 1)").
    pub name: String,
    /// The run's number (see `runs`); 0 when unknown.
    pub run: u64,
    /// The device's name ([`DeviceRecord::name`]).
    pub device: String,
    /// The metric group's name.
    pub group: String,
    /// The name of the layout that decoded the group's exported memory ("streamer (…)" for the
    /// metric streamer, "sysman" for the telemetry).
    pub layout: String,
    /// Its series, in the order of the data's columns (at most `MAX_SERIES`).
    pub series: Vec<SeriesMeta>,
    /// How the group was read ("mmap", "file read", "device copy", "streamer", "sysman",
    /// "tracer": the sampler's `ReadPath::name`). Absent in files older than it: [`StreamMeta::read_path`]
    /// tells it from `layout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_path: Option<String>,
}

impl StreamMeta {
    /// How the group was read: the recorded way, or for a file that predates it the way its
    /// layout names (the telemetry's "sysman", the streamer's "streamer (…)", else exported
    /// memory, mapped: which of its three ways such a file does not say, and all three are one
    /// `source` label). Loading has checked a recorded name.
    pub fn read_path(&self) -> ReadPath {
        if let Some(p) = self.read_path.as_deref().and_then(ReadPath::from_name) {
            return p;
        }
        if self.layout == zescope_sampler::telemetry::LAYOUT {
            ReadPath::Sysman
        } else if self.layout.starts_with("streamer") {
            ReadPath::Streamer
        } else if self.layout.starts_with("tracer (") {
            ReadPath::Tracer
        } else {
            ReadPath::Mapped
        }
    }
}

/// A stream with its recorded data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct StreamFile {
    /// What the stream is.
    pub meta: StreamMeta,
    /// The stream's run is over: it takes no more samples after a restore.
    pub ended: bool,
    /// Oldest samples the memory cap dropped entirely (held at no resolution).
    pub evicted_samples: u64,
    /// History the memory cap summarised into buckets, oldest first.
    pub coarse: CoarseFile,
    /// The samples held at full resolution, after the coarse history.
    pub raw: RawFile,
}

/// Coarsened history: `buckets` buckets in chunks of up to 1024.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CoarseFile {
    /// How many buckets the chunks hold in all.
    pub buckets: u64,
    /// The buckets, base64 of the coarse encoding in `codec.rs`; bucket `k` is in chunk
    /// `k / 1024`.
    pub chunks: Vec<String>,
}

/// Full-resolution samples.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct RawFile {
    /// Block number of the first sample: its place in the store's summary pyramid.
    pub first_block: u64,
    /// Position of the first sample in the stream (samples before it were coarsened or
    /// evicted).
    pub first_ordinal: u64,
    /// When `gaps` starts with 0: how long the gap before the first sample was, in ns (its
    /// predecessor may be gone); 0 otherwise.
    pub first_gap: i64,
    /// Per series: the rate at the first sample of a cumulative counter (its predecessor may be
    /// gone); `None` for gauges and where there was none. One entry per series.
    pub first_rates: Vec<Option<f64>>,
    /// How many samples the chunks hold in all.
    pub samples: u64,
    /// Indices of samples a gap separates from the previous one.
    pub gaps: Vec<u64>,
    /// Samples in chunks aligned to multiples of 4096 ordinals.
    pub chunks: Vec<String>,
}

/// Just enough of a file to tell what it is: read when the whole file does not parse, to tell a
/// newer version or another kind of file from a damaged session.
#[derive(Deserialize)]
pub(crate) struct Header {
    /// [`FORMAT_NAME`] for a session file.
    pub format: String,
    /// Which version wrote it.
    pub version: u32,
}
