//! What crosses the channels between the sampler thread and everyone else: plain data only.

pub mod processes;
mod read_path;
pub mod telemetry;

pub use read_path::{ReadPath, Via};

use std::time::Duration;

use crate::layout::Kind;
use zescope_ze::{DeviceKind, Source};

/// Shortest sampling interval.
pub const MIN_INTERVAL: Duration = Duration::from_micros(100);
/// Longest sampling interval; `Command::SetInterval` and `RunConfig::interval` are clamped into
/// `MIN_INTERVAL..=MAX_INTERVAL`.
pub const MAX_INTERVAL: Duration = Duration::from_secs(10);

/// Commands to the sampler.
#[derive(Clone, Debug)]
pub enum Command {
    /// Enumerate devices and groups again (sends `Event::Inventory`).
    Refresh,
    /// Start a run (stopping the current one first, through the teardown).
    Start(RunConfig),
    /// Stop the current run through the teardown (answered by `Event::RunStopped`).
    Stop,
    /// Change the sampling interval of the current and later runs. A run that reads a group
    /// through the streamer starts again at it (`RunStopped` `Replaced`, then `RunStarted`): its
    /// streamers sample at a period fixed when they open.
    SetInterval(Duration),
    /// Stop/continue reading; the run (and its imports) stays up.
    Pause,
    /// Continue reading after `Pause`.
    Resume,
    /// Tear down and end the thread.
    Shutdown,
    /// Answered by `Event::Synced` with the same number once every earlier command is handled.
    Sync(u64),
}

/// Which device: index of the driver, of the root device, and of a sub-device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct DevicePath {
    /// Index of the driver, in the loader's order.
    pub driver: usize,
    /// Index of the root device within the driver.
    pub device: usize,
    /// Index of the sub-device within the root device; `None` for the root device itself.
    pub sub_device: Option<usize>,
}

/// What to sample on one device: the device, its groups and metrics.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Target {
    /// The device to sample.
    pub device: DevicePath,
    /// Metric groups by name, in distinct domains.
    pub groups: Vec<String>,
    /// Only these metrics (by name) of the groups; empty: all.
    #[serde(default)]
    pub metrics: Vec<String>,
    /// Instead of the predefined groups, create one group at run time from `metrics` (all of
    /// `groups`' domain), when the driver supports it.
    #[serde(default)]
    pub custom_group: bool,
}

impl Target {
    /// All metrics of `groups` on `device`, predefined groups.
    pub fn new(device: DevicePath, groups: Vec<String>) -> Target {
        Target { device, groups, metrics: Vec::new(), custom_group: false }
    }
}

/// What to sample: one or more devices, each with its groups and metrics, on one clock, and how
/// often. Stored in sessions and settings; the form written before several devices (one
/// `device` with its `groups`, `metrics`, `custom_group`) still loads, as one target.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "super::config_compat::RunConfigRepr")]
pub struct RunConfig {
    /// The devices to sample, each once, in the order their streams are announced.
    pub targets: Vec<Target>,
    /// Time between reads (clamped to `MIN_INTERVAL..=MAX_INTERVAL`).
    pub interval: Duration,
    /// How the groups are read: exported memory, the time-based streamer, or each the best
    /// way it offers (the default).
    #[serde(default)]
    pub via: Via,
    /// Also read the device's telemetry through Sysman (frequency, power, temperature, engines,
    /// memory) as one more stream, "Telemetry".
    /// (On when a file written before telemetry existed does not say.)
    pub telemetry: bool,
}

impl RunConfig {
    /// One device's groups (all their metrics), the default way to read them, without telemetry.
    pub fn single(device: DevicePath, groups: Vec<String>, interval: Duration) -> RunConfig {
        RunConfig { targets: vec![Target::new(device, groups)], interval, via: Via::Auto, telemetry: false }
    }
}

/// Devices and their metric groups, for pickers.
#[derive(Clone, Debug, Default)]
pub struct Inventory {
    /// What was opened; `None` until the source opened.
    pub source: Option<SourceInfo>,
    /// Every device of every driver, sub-devices after their root device.
    pub devices: Vec<DeviceEntry>,
}

/// The source the sampler opened, for the window's title and the diagnostics.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceInfo {
    /// The source the user asked for (`auto`, `sim`, `ze`).
    pub requested: Source,
    /// True for the built-in simulated driver or ze-sim behind the loader.
    pub simulated: bool,
    /// One line saying what was opened (loader path or simulated driver).
    pub description: String,
    /// Why `auto` fell back to the simulated device.
    pub fallback_reason: Option<String>,
}

/// One device (root or sub-device) and its metric groups.
#[derive(Clone, Debug)]
pub struct DeviceEntry {
    /// Where the device is; what `RunConfig::device` names.
    pub path: DevicePath,
    /// Name the driver reports.
    pub name: String,
    /// Processor kind.
    pub kind: DeviceKind,
    /// Device UUID as lowercase hex.
    pub uuid: String,
    /// PCI vendor id.
    pub vendor_id: u32,
    /// PCI device id.
    pub device_id: u32,
    /// PCI address `DDDD:BB:DD.F`, where the driver reports it (`zeDevicePciGetPropertiesExt`);
    /// a sub-device has its root device's.
    pub pci_bdf: Option<String>,
    /// The driver's version number, as the driver reports it.
    pub driver_version: u32,
    /// True for a simulated device.
    pub simulated: bool,
    /// The device's metric groups (empty when `error` is set).
    pub groups: Vec<GroupEntry>,
    /// Why groups could not be listed, if they could not.
    pub error: Option<String>,
}

/// One metric group of a device.
#[derive(Clone, Debug)]
pub struct GroupEntry {
    /// Name the driver reports; what `RunConfig::groups` lists.
    pub name: String,
    /// The driver's description.
    pub description: String,
    /// Domain: groups of one run must be in distinct domains.
    pub domain: u32,
    /// How the group's exported memory is offered.
    pub exports: GroupExportKind,
    /// The group's sampling type says TIME_BASED: the metric streamer can read it.
    pub streamable: bool,
    /// The group is tracer-based (sampling type EXP_TRACER_BASED only): the metric tracer reads
    /// it (where the loader offers the tracer; without it the run goes on without the group).
    pub tracer: bool,
    /// The group's metrics, in the driver's order.
    pub metrics: Vec<MetricEntry>,
    /// Why the group cannot be sampled either way (no usable exported memory and no time-based
    /// sampling), if it cannot.
    pub unavailable: Option<String>,
    /// Why its exported memory cannot be read (none, no layout, ...) when the streamer still can.
    pub export_unavailable: Option<String>,
    /// The ways that read it, each named by the `--via` word that asks for it, in the order the
    /// sampler offers a group to its ways: the first reads it under `auto`. Each way says so
    /// itself, from what is above (the sampler's `read::Way::lists`).
    pub ways: Vec<Via>,
}

impl GroupEntry {
    /// The way `via` reads the group (`Via::Tracer` for a tracer-based group, `Via::Export` for
    /// its exported memory, `Via::Streamer`, ...): under `auto` the first of [`GroupEntry::ways`],
    /// else `via` itself when it is one of them; `None` when it cannot. Never `Via::Auto`: that is
    /// the choice this resolves.
    pub fn read_by(&self, via: Via) -> Option<Via> {
        self.ways.iter().copied().find(|&w| via == Via::Auto || w == via)
    }

    /// Why `via` cannot read the group (`None` when it can).
    pub fn unreadable_by(&self, via: Via) -> Option<String> {
        if self.read_by(via).is_some() {
            return None;
        }
        Some(match via {
            Via::Streamer => "no time-based sampling: the metric streamer cannot read it".to_owned(),
            Via::Tracer => "not tracer-based: the metric tracer cannot read it".to_owned(),
            _ => self.unavailable.clone().or_else(|| self.export_unavailable.clone()).unwrap_or_default(),
        })
    }
}

/// How a group's counters are exported as DMA-BUF memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupExportKind {
    /// One exported buffer for the whole group.
    Group,
    /// No group buffer, but metrics export individually.
    PerMetric,
    /// No exported memory: the group cannot be sampled.
    None,
    /// The driver mishandled the export query.
    Unknown,
}

/// One metric of a group, as the driver describes it.
#[derive(Clone, Debug)]
pub struct MetricEntry {
    /// Name the driver reports; what `RunConfig::metrics` lists.
    pub name: String,
    /// The driver's description.
    pub description: String,
    /// The driver's unit text (may be empty).
    pub unit: String,
}

/// One series of a stream, as the layout decodes it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeriesInfo {
    /// Counter name (the metric's name).
    pub name: String,
    /// The driver's description of the metric.
    pub description: String,
    /// Unit of the value after scaling (of the rate's numerator for cumulative counters, of the
    /// running total for busy time: a unit of time).
    pub unit: String,
    /// Cumulative (plotted as a rate), gauge, busy time (plotted as a share, %) or state (drawn
    /// as steps, never averaged).
    pub kind: Kind,
    /// For running totals (cumulative counters, busy time): the modulus at which the raw value
    /// wraps.
    pub wrap: Option<f64>,
}

/// One group of a run: its series share timestamps.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamInfo {
    /// Position of the stream in `RunInfo::streams` and `SampleBatch::stream`.
    pub index: usize,
    /// Index of the stream's device in `RunConfig::targets` (and `RunInfo::devices`).
    pub target: usize,
    /// The device's name (as `RunInfo::devices` holds it).
    pub device: String,
    /// The metric group's name.
    pub group: String,
    /// How the group is read: the name of the layout that decodes its exported memory, or for
    /// the time-based streamer "streamer (period, N reports per notification)" with the values
    /// the driver granted.
    pub layout: String,
    /// The series, in the order of each sample's values.
    pub series: Vec<SeriesInfo>,
    /// How the group is read.
    pub read_path: ReadPath,
}

/// A run that started: what it samples and how (sent as `Event::RunStarted`).
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    /// Run number, increasing from 1 over the sampler's life; tags every later event of the run.
    pub run: u64,
    /// The configuration the run was started with (interval clamped).
    pub config: RunConfig,
    /// The devices' names, in `config.targets` order; a name two devices share gets the later
    /// one's path appended (series name their device by it).
    pub devices: Vec<String>,
    /// True when a device is simulated.
    pub simulated: bool,
    /// One stream per group, device after device in `config.targets` order, each device's in
    /// its `groups` order.
    pub streams: Vec<StreamInfo>,
    /// Imports made (one per distinct exported buffer of each device).
    pub imports: usize,
    /// What the run says to its user, one line each: optional features the driver does not
    /// offer, turned off for this run; a group left out and why; a period the driver refused. A
    /// consumer adds what is said later (`Event::Notice`: values out of range, a remote link's
    /// drops).
    pub notices: Vec<String>,
}

impl RunInfo {
    /// Stream `stream` is a device's telemetry (read through Sysman), not a metric group's: its
    /// rows are telemetry reads, at most ten a second, counted apart from the groups' samples.
    pub fn is_telemetry(&self, stream: usize) -> bool {
        self.streams.get(stream).is_some_and(|s| s.read_path == ReadPath::Sysman)
    }
}

/// Samples of one stream, row-major: `values.len() == timestamps.len() * series`.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleBatch {
    /// The run the samples belong to.
    pub run: u64,
    /// Index into `RunInfo::streams`.
    pub stream: usize,
    /// ns on the CLOCK_MONOTONIC timeline (device timestamps are mapped onto it).
    pub timestamps: Vec<i64>,
    /// Values, row-major: sample `i`'s series `k` is at `i * series + k`; NaN where a value could
    /// not be read.
    pub values: Vec<f64>,
    /// The first sample does not connect to the previous one (after a pause or a drop).
    pub gap_before: bool,
}

/// Sampler health over the last health window (sent as `Event::Health` every
/// `Options::health_period`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Health {
    /// The run these numbers are for (0: no run).
    pub run: u64,
    /// Reads per second asked for (1 / interval).
    pub requested_hz: f64,
    /// Reads per second done over the window: the requested rate times the share of the window's
    /// deadlines a read was done for (of the run's so far when none fell in the window; 0 while
    /// paused).
    pub achieved_hz: f64,
    /// Ticks since the run started: reads of a ticked run; of a run read in batches
    /// (`batched`), the intervals its reads served so far.
    pub ticks: u64,
    /// The run is read in batches (its streams are all the streamer's or the tracer's): it has
    /// no tick to be late for, and its samples a second are the device's reports a second.
    pub batched: bool,
    /// Samples read since the run started (every stream's): over `ticked_for`, the run's samples
    /// a second, which for a run read in batches is what its rate is (a streamer takes ten
    /// reports an interval).
    pub samples: u64,
    /// The time `ticks` were counted over, on the sampler's clock (from the run's start to this
    /// report), however late its events arrive. A tick is due at the start and every interval
    /// after, so the whole run's rate is `ticks / (ticks + skipped_ticks)` of the requested one
    /// (`ticks / ticked_for` is one tick high).
    pub ticked_for: std::time::Duration,
    /// Ticks found more than a whole interval after their deadline (and skipped ahead).
    pub late_ticks: u64,
    /// Deadlines missed by late ticks: a late tick's read serves the last deadline passed
    /// (less than an interval before it); its own deadline and those between are counted here.
    /// The deadlines missed (nothing read within an interval after them) are `skipped_ticks` of
    /// `ticks + skipped_ticks`.
    pub skipped_ticks: u64,
    /// Reads that found no torn-free snapshot in their attempts (the seqlock word kept changing);
    /// they yield no sample.
    pub torn_reads: u64,
    /// Reads that found the same device timestamp as the one before (nothing new written).
    pub unchanged_reads: u64,
    /// Device time reset, jumped backwards or leapt forward: a stream was re-anchored.
    pub clock_resets: u64,
    /// Streamer reads the driver answered with ZE_RESULT_WARNING_DROPPED_DATA: reports were lost
    /// (the plot has a gap there; the run goes on).
    pub dropped_reports: u64,
    /// Samples dropped because the event channel was full (the outbox never blocks the sampler).
    pub dropped_samples: u64,
    /// Batches dropped for the same reason.
    pub dropped_batches: u64,
    /// The sampler thread's CPU time over the last window, in % of one core.
    pub cpu_percent: f64,
    /// Times the sampler thread woke since the run started (to read, to send, to report, for a
    /// command): a run read in batches wakes about 1 / `latency` times a second, however high
    /// its sampling rate; a ticked run about once a tick.
    pub wakeups: u64,
    /// The longest a sample waits in the device before the sampler reads it: the interval of a
    /// run read on ticks (one with exported memory), the batch interval of a run read in batches
    /// (its streams the streamer's or the tracer's, with or without telemetry; `BATCH_INTERVAL`).
    pub latency: std::time::Duration,
}

impl Health {
    /// The run's samples a second so far (`samples` over `ticked_for`): what a run read in
    /// batches shows as its rate, live (low by up to a batch interval over the run's length: the
    /// samples are counted at the last read, the time now). `None` for a run shorter than two
    /// intervals, too short for one.
    pub fn samples_per_second(&self) -> Option<f64> {
        let secs = self.ticked_for.as_secs_f64();
        (secs * self.requested_hz >= 2.0).then(|| self.samples as f64 / secs)
    }
}

/// Why a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// `Command::Stop`.
    Requested,
    /// A `Command::Start` replaced it.
    Replaced,
    /// An error ended it (an `Event::Error` comes first).
    Error,
    /// `Command::Shutdown`, or the handle was dropped.
    Shutdown,
}

/// A problem the user should hear about: what happened and what to try.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SamplerError {
    /// What kind of problem, for grouping and exit codes.
    pub kind: ErrorKind,
    /// What happened, one sentence naming the thing that failed.
    pub message: String,
    /// What the user can try, if anything.
    pub hint: Option<String>,
}

/// Where a `SamplerError` comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The source (loader or simulated driver) could not be opened.
    Source,
    /// The run configuration names something that does not exist or cannot go together.
    Config,
    /// A Level Zero call failed.
    Driver,
    /// The device was lost (reset, removed or hung).
    DeviceLost,
    /// The OS refused access (device node, perf paranoia, capabilities).
    Permission,
    /// Exporting, importing or mapping the DMA-BUF memory failed.
    Export,
    /// No layout fits, or the layout does not fit the buffer.
    Layout,
    /// Ending a run left something undone (the report says what).
    Teardown,
    /// A bug in zescope (e.g. the sampler thread panicked).
    Internal,
    /// A remote server's live feed could not be reached, or refused the viewer (`zescope
    /// --connect`).
    Link,
}

/// What the sampler thread sends, in order, on `SamplerHandle::events`.
#[derive(Clone, Debug)]
pub enum Event {
    /// Answer to `Command::Refresh` (and sent once at start).
    Inventory(Inventory),
    /// A run started; its samples follow.
    RunStarted(RunInfo),
    /// Samples of one stream of the current run.
    Samples(SampleBatch),
    /// The processes using one device of the current run (runs that read telemetry; at most
    /// once a second per device).
    Processes(processes::ProcessSnapshot),
    /// Sampler health, every `Options::health_period`.
    Health(Health),
    /// A run ended; no more samples of it follow.
    RunStopped {
        /// The run that ended.
        run: u64,
        /// Why it ended.
        reason: StopReason,
    },
    /// A problem the user should hear about (a run it ends is followed by `RunStopped`).
    Error(SamplerError),
    /// An optional feature was turned off during a run (the run goes on): one line for the
    /// diagnostics and the log.
    Notice {
        /// The run it happened in.
        run: u64,
        /// The feature, what happened, and what still works.
        message: String,
    },
    /// A workload's marker of a remote run (`zescope --connect`: `zescope mark` on the server's
    /// host), on the run's clock. The sampler itself never sends it: a local run's markers come
    /// through the markers socket.
    Marker {
        /// Instant, begin or end.
        kind: zescope_markers::Kind,
        /// When, on the run's clock.
        t_ns: i64,
        /// The marker's (or range's) name.
        name: String,
    },
    /// Answer to `Command::Sync`.
    Synced(u64),
    /// The last event: teardown is complete and the thread ends.
    ShutDown,
}
