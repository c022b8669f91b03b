//! What crosses the channels between the sampler thread and everyone else: plain data only.

use std::time::Duration;

use crate::layout::Kind;
use crate::ze::{DeviceKind, Source};

/// Shortest and longest sampling interval.
pub const MIN_INTERVAL: Duration = Duration::from_micros(100);
pub const MAX_INTERVAL: Duration = Duration::from_secs(10);

/// Commands to the sampler.
#[derive(Clone, Debug)]
pub enum Command {
    /// Enumerate devices and groups again (sends `Event::Inventory`).
    Refresh,
    /// Start a run (stopping the current one first, through the teardown).
    Start(RunConfig),
    Stop,
    SetInterval(Duration),
    /// Stop/continue reading; the run (and its imports) stays up.
    Pause,
    Resume,
    /// Tear down and end the thread.
    Shutdown,
    /// Answered by `Event::Synced` with the same number once every earlier command is handled.
    Sync(u64),
}

/// Which device: index of the driver, of the root device, and of a sub-device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct DevicePath {
    pub driver: usize,
    pub device: usize,
    pub sub_device: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunConfig {
    pub device: DevicePath,
    /// Metric groups by name, in distinct domains.
    pub groups: Vec<String>,
    /// Only these metrics (by name) of the groups; empty: all.
    pub metrics: Vec<String>,
    /// Instead of the predefined groups, create one group at run time from `metrics` (all of
    /// `groups`' domain), when the driver supports it.
    pub custom_group: bool,
    pub interval: Duration,
}

/// Devices and their metric groups, for pickers.
#[derive(Clone, Debug, Default)]
pub struct Inventory {
    pub source: Option<SourceInfo>,
    pub devices: Vec<DeviceEntry>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SourceInfo {
    pub requested: Source,
    /// True for the built-in simulated driver or ze-sim behind the loader.
    pub simulated: bool,
    pub description: String,
    /// Why `auto` fell back to the simulated device.
    pub fallback_reason: Option<String>,
}

#[derive(Clone, Debug)]
pub struct DeviceEntry {
    pub path: DevicePath,
    pub name: String,
    pub kind: DeviceKind,
    pub uuid: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub driver_version: u32,
    pub simulated: bool,
    pub groups: Vec<GroupEntry>,
    /// Why groups could not be listed, if they could not.
    pub error: Option<String>,
}

#[derive(Clone, Debug)]
pub struct GroupEntry {
    pub name: String,
    pub description: String,
    pub domain: u32,
    pub exports: GroupExportKind,
    pub metrics: Vec<MetricEntry>,
    /// Why the group cannot be sampled (no exported memory, no layout, ...), if it cannot.
    pub unavailable: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupExportKind {
    Group,
    PerMetric,
    None,
    Unknown,
}

#[derive(Clone, Debug)]
pub struct MetricEntry {
    pub name: String,
    pub description: String,
    pub unit: String,
}

/// One series of a stream, as the layout decodes it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeriesInfo {
    pub name: String,
    pub description: String,
    pub unit: String,
    pub kind: Kind,
    /// For cumulative counters: the modulus at which the raw value wraps.
    pub wrap: Option<f64>,
}

/// One group of a run: its series share timestamps.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamInfo {
    pub index: usize,
    pub group: String,
    pub layout: String,
    pub series: Vec<SeriesInfo>,
    /// How the buffer is read: "mmap", "file read" or "device copy".
    pub read_path: &'static str,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    pub run: u64,
    pub config: RunConfig,
    pub device: String,
    pub simulated: bool,
    pub streams: Vec<StreamInfo>,
    /// Imports made (one per distinct exported buffer).
    pub imports: usize,
    /// Optional features the driver does not offer, turned off for this run (one line each).
    pub notices: Vec<String>,
}

/// Samples of one stream, row-major: `values.len() == timestamps.len() * series`.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleBatch {
    pub run: u64,
    pub stream: usize,
    /// ns on the CLOCK_MONOTONIC timeline (device timestamps are mapped onto it).
    pub timestamps: Vec<i64>,
    pub values: Vec<f64>,
    /// The first sample does not connect to the previous one (after a pause or a drop).
    pub gap_before: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub run: u64,
    pub requested_hz: f64,
    pub achieved_hz: f64,
    pub ticks: u64,
    pub late_ticks: u64,
    pub torn_reads: u64,
    /// Reads that found the same device timestamp as the one before (nothing new written).
    pub unchanged_reads: u64,
    /// Device time reset, jumped backwards or leapt forward: a stream was re-anchored.
    pub clock_resets: u64,
    pub dropped_samples: u64,
    pub dropped_batches: u64,
    /// The sampler thread's CPU time over the last window, in % of one core.
    pub cpu_percent: f64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    Requested,
    Replaced,
    Error,
    Shutdown,
}

/// A problem the user should hear about: what happened and what to try.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SamplerError {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Source,
    Config,
    Driver,
    DeviceLost,
    Permission,
    Export,
    Layout,
    Teardown,
    Internal,
}

#[derive(Clone, Debug)]
pub enum Event {
    Inventory(Inventory),
    RunStarted(RunInfo),
    Samples(SampleBatch),
    Stats(Stats),
    RunStopped {
        run: u64,
        reason: StopReason,
    },
    Error(SamplerError),
    /// An optional feature was turned off during a run (the run goes on): one line for the
    /// diagnostics and the log.
    Notice {
        run: u64,
        message: String,
    },
    /// Answer to `Command::Sync`.
    Synced(u64),
    /// The last event: teardown is complete and the thread ends.
    ShutDown,
}
