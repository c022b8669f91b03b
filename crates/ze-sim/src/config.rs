//! What the simulated driver models, as data: devices, metric groups, metrics, the workload,
//! and the faults and real-driver quirks to inject. A default is built in; `ZE_SIM_CONFIG=path`
//! replaces it with a RON file, in which every field may be left out (its default is used), so
//! `(faults: (import_fails: true))` is a whole config.
//!
//! Which variables a copy of `libze_sim.so` reads is described in the crate docs (a copy named
//! `libze_sim_npu.so` reads `ZE_SIM_CONFIG_ZE_SIM_NPU` first). Faults and quirks are in
//! [`Faults`] and [`Quirks`]; entry points can be left empty with `empty_entry_points`.
//!
//! The configuration file is outside input: it is read only when it is a regular file of at
//! most [`MAX_CONFIG_FILE`] (1 MiB, checked before reading; a FIFO or device is refused without
//! waiting), and parsing it holds at most about 3× its size (the text, then the parsed model)
//! plus a constant. [`SimConfig::validate`] bounds names (255 bytes) and metrics per group
//! (4096, synthetic counters included). Errors name the variable, the file and RON's
//! line/column or the field.

use serde::{Deserialize, Serialize};

pub use crate::catalog::Catalog;
pub use crate::catalog::model::Model;
pub use crate::faults::{Faults, FreeFault, ImportFd, Quirks};
pub use crate::profile::Profile;
pub use crate::sysman::{EnergyDrop, ProcessesConfig, SysmanConfig, SysmanPiece};

/// The most events per second the workload writes into one tracer-based group: a kernel every
/// microsecond with four events each (`KernelTrace`'s metrics). A GPU does not start kernels
/// faster, and the writer thread keeps this rate with room to spare (it writes about 4·10^7
/// events/s flat out in a release build on a shared 2-core machine), so the events it offers are
/// the events it was asked for, stamped when they are written.
pub const MAX_TRACER_EVENTS_PER_S: u32 = 4_000_000;

/// The whole model of one simulated driver: what [`crate::Sim::new`] takes and what
/// `ZE_SIM_CONFIG` holds as RON. Devices and metric groups are fixed when the instance is
/// created; faults and quirks can be changed later with [`crate::Sim::configure`]. Build it
/// with [`SimConfig::from_ron`] or [`SimConfig::from_env`] to have it checked
/// ([`SimConfig::validate`]); `Default` is the built-in model (a GPU with one sub-device and
/// an NPU, metric groups exporting per group, per metric and not at all).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// Seed of the workload's noise: the same seed gives the same counters.
    pub seed: u64,
    /// How often the simulation thread writes a new snapshot into each exported buffer, in
    /// microseconds (10 ..= 10 000 000; default 1000).
    pub update_period_us: u64,
    /// Whether metric groups are visible without runtime enable: `Env` follows
    /// `ZET_ENABLE_METRICS=1` like Intel's driver.
    pub metrics: MetricsEnable,
    /// What `zeDriverGetProperties` reports as `driverVersion` (default `0x0001_0000`).
    pub driver_version: u32,
    /// The root devices of the driver, in the order `zeDeviceGet` reports them; each may have
    /// sub-devices (one level deep).
    pub devices: Vec<DeviceConfig>,
    /// Failures to inject (all off by default).
    pub faults: Faults,
    /// Legal but awkward behaviours of real drivers to imitate (all off by default).
    pub quirks: Quirks,
    /// Level Zero entry points this driver leaves EMPTY, by name (e.g. `"zeDeviceGetStatus"`):
    /// through the real loader their DDI slot is null (the loader answers for them:
    /// ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, or ZE_RESULT_ERROR_UNINITIALIZED in intercept mode)
    /// and `zeDriverGetExtensionFunctionAddress` does not return them; in-process they answer
    /// ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, and `Sim::api` leaves the `Option` fields of the
    /// `Api` that name them `None`. Only names this driver implements are accepted
    /// ([`SimConfig::implemented_entry_points`]); [`SimConfig::optional_entry_points`] lists
    /// every one the export-memory path does not need.
    pub empty_entry_points: Vec<String>,
    /// Mixed into the driver UUID (bytes 8..16) and the device UUIDs, so two copies of the
    /// driver in one process report distinct ones. The first 8 bytes of the driver UUID stay the
    /// ze-sim prefix. 0 (the default) in a copy not named `libze_sim.so` means "derived from the
    /// copy's file name" (see the crate docs).
    pub driver_uuid_tag: u32,
    /// How many reports a metric streamer buffers before it drops the oldest (and its next
    /// `zetMetricStreamerReadData` answers ZE_RESULT_WARNING_DROPPED_DATA); 16 ..= 1048576,
    /// default 16384 (an OA buffer of 16 MiB holds about as many).
    pub streamer_buffer_reports: u32,
    /// Sysman telemetry (frequency, power, temperature, engines, memory): on by default; faults
    /// and wrapping counters here, pieces left out through `empty_entry_points`.
    pub sysman: SysmanConfig,
    /// How many events the workload writes into the exported memory of each activated
    /// tracer-based group per simulation tick (`update_period_us`): 0 ..= 65536, at most
    /// `tracer_ring_events`; default 8 (8000 events/s at the default 1 ms tick). The event rate
    /// is `tracer_events_per_tick × 1e6 / update_period_us` per second, at most
    /// [`MAX_TRACER_EVENTS_PER_S`]: the fastest setting is, e.g., `update_period_us: 1000,
    /// tracer_events_per_tick: 4000` (see docs/ze-sim.md for why).
    pub tracer_events_per_tick: u32,
    /// How many events the exported ring of a tracer-based group holds before the workload
    /// overwrites the oldest (a tracer that falls this far behind loses events and its next read
    /// answers ZE_RESULT_WARNING_DROPPED_DATA): 64 ..= 4194304 (32 bytes each), default 16384.
    pub tracer_ring_events: u32,
    /// A public driver's behaviours, bundled ([`Profile`]): turned on on top of the rest when
    /// an instance is created ([`SimConfig::resolved`]). `None` (default): only what is listed.
    pub profile: Option<Profile>,
    /// The metric groups of the GPU devices: `Builtin` (default) keeps each device's `groups`;
    /// `Realistic` gives every GPU device (root and sub-device) a catalogue the size of a real
    /// Intel GPU's in their place (34 groups, about 1,300 metrics; `crate::catalog` describes
    /// it). NPUs keep their groups.
    pub catalog: Catalog,
    /// For tests of clients: adds [`crate::catalog::UNREADABLE_GROUP`] to the first GPU (after its
    /// other groups, domain 5): event-based only, exporting no memory, no streamer, no tracer — a
    /// group a client lists but no way of reading reaches (as a query-only metric set is to a
    /// client without metric queries). Off by default: the built-in model holds no such group.
    pub unreadable_group: bool,
}

/// When metric groups are visible to the application (`zetMetricGroupGet` answers them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MetricsEnable {
    /// `ZET_ENABLE_METRICS=1` in the environment when the driver initialises.
    Env,
    /// Always, whatever the environment (convenient for tests).
    Always,
    /// Only after `zetDeviceEnableMetricsExp`.
    RuntimeOnly,
}

/// What a simulated device reports itself as; it also scales the workload (an NPU draws far
/// less power and counts inferences).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeviceKind {
    /// Reported as `ZE_DEVICE_TYPE_GPU`.
    Gpu,
    /// Reported as `ZE_DEVICE_TYPE_VPU` (Level Zero's type for NPUs).
    Npu,
}

/// One simulated device: its properties and its metric groups.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeviceConfig {
    /// The device name `zeDeviceGetProperties` reports (at most 255 bytes).
    pub name: String,
    /// GPU or NPU.
    pub kind: DeviceKind,
    /// PCI vendor id reported in the properties (default 0x8086).
    pub vendor_id: u32,
    /// PCI device id reported in the properties; also part of the device UUID.
    pub device_id: u32,
    /// Maximum core clock in MHz, reported as `coreClockRate`; the workload's frequency
    /// counters reach it in the compute phase.
    pub core_clock_mhz: u32,
    /// The metric groups of this device, in the order `zetMetricGroupGet` reports them.
    pub groups: Vec<GroupConfig>,
    /// Sub-devices (tiles) reported by `zeDeviceGetSubDevices`; they may not have
    /// sub-devices of their own.
    pub sub_devices: Vec<DeviceConfig>,
    /// The PCI address `zeDevicePciGetPropertiesExt` reports, `"DDDD:BB:DD.F"` (hex, as
    /// `lspci -D` prints it). `None` (default): a plausible one by kind and position (the k-th
    /// GPU at `0000:(03+k):00.0`, the k-th NPU at `0000:00:(0b+k).0`). Root devices only:
    /// sub-devices report their root's.
    pub pci_bdf: Option<String>,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            name: "ze-sim device".into(),
            kind: DeviceKind::Gpu,
            vendor_id: 0x8086,
            device_id: 0x5a5a,
            core_clock_mhz: 1600,
            groups: Vec::new(),
            sub_devices: Vec::new(),
            pci_bdf: None,
        }
    }
}

/// How a group's counters are exported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Export {
    /// The group's type flags say EXPORT_DMA_BUF; one buffer holds all its metrics.
    Group,
    /// Each metric reports type EXP_EXPORT_DMA_BUF; all share one buffer. The first metrics
    /// report the same fd; the last reports a second fd (a dup) of the same buffer.
    PerMetric,
    /// Nothing is exported.
    None,
}

/// One metric group of a device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GroupConfig {
    /// The group name in its properties (1 ..= 255 bytes).
    pub name: String,
    /// The group description in its properties (at most 255 bytes).
    pub description: String,
    /// The hardware domain: groups of one domain cannot be activated together on a device
    /// (`zetContextActivateMetricGroups` answers ZE_RESULT_ERROR_INVALID_ARGUMENT).
    pub domain: u32,
    /// How (and whether) its counters are exported as memory.
    pub export: Export,
    /// Its metrics, in buffer order; with `synthetic_counters`, 1 ..= 4096 in all.
    pub metrics: Vec<MetricConfig>,
    /// Adds this many synthetic gauge counters after `metrics` (for large-buffer benchmarks).
    pub synthetic_counters: u32,
    /// The group can be read with the time-based metric streamer (`zetMetricStreamerOpen`):
    /// its sampling type says TIME_BASED (and EVENT_BASED as well when it also exports memory)
    /// and a timestamp metric `QueryBeginTime` is added to its metrics (so it has one more metric
    /// than `metrics` lists): first when it exports nothing, last when it also exports memory (so
    /// its exported counters keep their slots). An IP-sampling group (one holding a metric of
    /// type IP, [`GroupConfig::ip_sampling`]) gets none: its reports are samples of instruction
    /// pointers, as compute-runtime's `EuStallSampling`'s are. Without `stream` the group says
    /// EVENT_BASED only and a streamer on it is refused. Default false.
    pub stream: bool,
    /// The group is tracer-based (sampling type EXP_TRACER_BASED only, as Intel's conformance
    /// suite selects them): the workload writes kernel events into its exported memory (a ring,
    /// `crate::ring` documents the bytes) and the metric tracer reads them
    /// (`zetMetricTracer*Exp`, decoded by `zetMetricTracerDecodeExp`). It must export as a
    /// `Group`, not stream, and hold only the kernel-event signals (`KernelStart`, `KernelEnd`,
    /// `KernelBytes`, `KernelMarker`). Default false.
    pub tracer: bool,
}

impl GroupConfig {
    /// Is it an IP-sampling group: one holding a metric of type IP (`Modelled` with `ty: Ip`)?
    /// The streamer adds no timestamp metric to such a group (the built-in `EuStallSampling`
    /// streams and exports nothing, as compute-runtime's does).
    pub fn ip_sampling(&self) -> bool {
        self.metrics.iter().any(|m| m.signal.metric_type() == level_zero_sys::ZET_METRIC_TYPE_IP_EXP)
    }

    /// Does the streamer add its timestamp metric `QueryBeginTime` to this group?
    pub fn has_stream_timestamp(&self) -> bool {
        self.stream && !self.ip_sampling()
    }
}

impl Default for GroupConfig {
    fn default() -> Self {
        GroupConfig {
            name: "Group".into(),
            description: String::new(),
            domain: 0,
            export: Export::Group,
            metrics: Vec::new(),
            synthetic_counters: 0,
            stream: false,
            tracer: false,
        }
    }
}

/// What a counter measures; the workload model gives each signal its value over time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Signal {
    /// Cumulative ns the engine was busy.
    GpuTime,
    /// Cumulative cycles the engine was busy.
    BusyCycles,
    /// Cumulative bytes read from device memory.
    BytesRead,
    /// Cumulative bytes written to device memory.
    BytesWritten,
    /// Gauge: the core frequency, MHz.
    FrequencyMhz,
    /// Gauge: share of time busy, 0 ..= 100 %.
    UtilizationPercent,
    /// Gauge: power, W.
    PowerWatts,
    /// Gauge: temperature, degrees Celsius (the GPU sensor's, as Sysman's GPU sensor reads it).
    TemperatureC,
    /// Gauge: the device memory's temperature, degrees Celsius (as Sysman's memory sensor reads
    /// it).
    MemoryTemperatureC,
    /// Cumulative inferences (NPU).
    Inferences,
    /// A deterministic wave, for synthetic counters.
    Synthetic,
    /// A state: the id of the context the engine runs (0 while idle, one id per phase of the
    /// workload), a RAW metric with u64 results, as real drivers report `ContextId`.
    ContextId,
    /// A state: 1 while the engine is held at its power limit (late in the compute phase, as
    /// Sysman's throttle reasons say), else 0; a FLAG metric with bool8 results.
    Throttled,
    /// The device time of a report, ns (the timestamp metric of a streamable group).
    Timestamp,
    /// Tracer event: a kernel began; the value is its id (metric type EVENT_EXP_START, u64).
    KernelStart,
    /// Tracer event: a kernel ended; the value is its id (EVENT_EXP_END, u64).
    KernelEnd,
    /// Tracer event: the bytes the kernels wrote so far, a running total that wraps at 2^32
    /// (EVENT_EXP_MONOTONIC_WRAPS_VALUE, u32).
    KernelBytes,
    /// Tracer event: a marker with only a timestamp; the value is 0 and means nothing
    /// (EVENT_EXP_TIMESTAMP, u64).
    KernelMarker,
    /// A counter described as a real driver describes it (metric type, result type, unit) whose
    /// value follows the workload as its model says (`crate::catalog::model`).
    Modelled(Model),
}

impl Signal {
    /// Is this a counter that only grows (written as u64), rather than a gauge (written as f64)?
    pub(crate) fn is_cumulative(self) -> bool {
        matches!(
            self,
            Signal::GpuTime | Signal::BusyCycles | Signal::BytesRead | Signal::BytesWritten | Signal::Inferences
        ) || matches!(self, Signal::Modelled(m) if m.is_cumulative())
    }

    /// Is this an event of a tracer-based group (written into its ring, not a counter)?
    pub(crate) fn is_trace_event(self) -> bool {
        matches!(self, Signal::KernelStart | Signal::KernelEnd | Signal::KernelBytes | Signal::KernelMarker)
    }

    /// The unit the metric's properties report for this signal.
    pub(crate) fn unit(self) -> &'static str {
        match self {
            Signal::GpuTime => "ns",
            Signal::BusyCycles => "cycles",
            Signal::BytesRead | Signal::BytesWritten => "bytes",
            Signal::FrequencyMhz => "MHz",
            Signal::UtilizationPercent => "%",
            Signal::PowerWatts => "W",
            Signal::TemperatureC | Signal::MemoryTemperatureC => "C",
            Signal::Inferences => "inferences",
            Signal::ContextId | Signal::Throttled => "",
            Signal::Synthetic => "units",
            Signal::Timestamp => "ns",
            Signal::KernelStart | Signal::KernelEnd => "kernel id",
            Signal::KernelBytes => "bytes",
            Signal::KernelMarker => "events",
            Signal::Modelled(m) => m.unit.text(),
        }
    }
}

/// One metric of a group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricConfig {
    /// The metric name in its properties (1 ..= 255 bytes).
    pub name: String,
    /// The metric description in its properties (at most 255 bytes).
    pub description: String,
    /// What it measures: its unit, cumulative or gauge, and its values over time.
    pub signal: Signal,
}

impl Default for MetricConfig {
    fn default() -> Self {
        MetricConfig { name: "Metric".into(), description: String::new(), signal: Signal::Synthetic }
    }
}

/// Why a configuration could not be used: one line that names the source (file or variable)
/// and the offending field.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError(
    /// The message, ready to show.
    pub String,
);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ConfigError {}

/// Largest configuration file read: a configuration is a few KiB; anything near this is not one.
pub const MAX_CONFIG_FILE: u64 = 1 << 20;

/// Read a configuration file: a regular file of at most [`MAX_CONFIG_FILE`] bytes (checked
/// before reading, the file opened non-blocking so a FIFO is refused rather than waited on; the
/// read stops one byte past the limit), as UTF-8. Parsing it allocates a small multiple of its
/// size (RON's recursion limit bounds nesting). `shown` names it in errors.
fn read_config_file(path: &std::path::Path, shown: &str) -> Result<String, ConfigError> {
    use std::io::Read;
    let err = |m: String| ConfigError(format!("{shown}: {m}"));
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer.
    let f = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| err(e.to_string()))?;
    let meta = f.metadata().map_err(|e| err(e.to_string()))?;
    if !meta.is_file() {
        return Err(err("not a regular file".into()));
    }
    if meta.len() > MAX_CONFIG_FILE {
        return Err(err(format!("{} bytes, more than a configuration may have ({MAX_CONFIG_FILE})", meta.len())));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.take(MAX_CONFIG_FILE + 1).read_to_end(&mut bytes).map_err(|e| err(e.to_string()))?;
    if bytes.len() as u64 > MAX_CONFIG_FILE {
        return Err(err(format!("grew beyond {MAX_CONFIG_FILE} bytes while being read")));
    }
    String::from_utf8(bytes).map_err(|e| err(format!("not UTF-8 (at byte {})", e.utf8_error().valid_up_to())))
}

impl SimConfig {
    /// Parses a RON configuration; `origin` names it in errors (a path, usually).
    pub fn from_ron(text: &str, origin: &str) -> Result<SimConfig, ConfigError> {
        let cfg: SimConfig =
            ron::Options::default().from_str(text).map_err(|e| ConfigError(format!("{origin}: {e}")))?;
        cfg.validate().map_err(|e| ConfigError(format!("{origin}: {e}")))?;
        Ok(cfg)
    }

    /// The configuration named by `ZE_SIM_CONFIG_<STEM>` or `ZE_SIM_CONFIG` (see the crate
    /// docs), or the built-in default.
    pub fn from_env() -> Result<SimConfig, ConfigError> {
        match crate::copy_env::var("ZE_SIM_CONFIG") {
            None => Ok(SimConfig::default()),
            Some((name, path)) => {
                let shown = format!("{name}={}", path.to_string_lossy());
                let text = read_config_file(std::path::Path::new(&path), &shown)?;
                SimConfig::from_ron(&text, &shown)
            }
        }
    }

    /// Every entry point this driver implements (the names `empty_entry_points` accepts).
    pub fn implemented_entry_points() -> &'static [&'static str] {
        &crate::entry::names::IMPLEMENTED
    }

    /// Every implemented entry point the export-memory path does NOT need: leave them all empty
    /// to check that a client degrades instead of stopping.
    pub fn optional_entry_points() -> &'static [&'static str] {
        crate::entry::names::OPTIONAL
    }

    /// Is `name` in `empty_entry_points`?
    pub(crate) fn is_empty_entry(&self, name: &str) -> bool {
        self.empty_entry_points.iter().any(|e| e == name)
    }

    /// Rejects what the model cannot represent (names or descriptions too long for the C
    /// properties, groups with no or too many metrics, nested sub-devices, out-of-range periods,
    /// inconsistent faults), with a message naming the field, e.g.
    /// `devices[0].groups[1]: needs 1..=4096 metrics, has 0`. [`SimConfig::from_ron`] and
    /// [`SimConfig::from_env`] call it; [`crate::Sim::new`] trusts what it is given.
    pub fn validate(&self) -> Result<(), String> {
        self.sysman.validate()?;
        for (i, name) in self.empty_entry_points.iter().enumerate() {
            if !Self::implemented_entry_points().contains(&name.as_str()) {
                return Err(format!("empty_entry_points[{i}] = {name:?} is not an entry point this driver implements"));
            }
        }
        if let Some(bits) = self.quirks.timestamp_valid_bits
            && !(16..=64).contains(&bits)
        {
            return Err(format!("quirks.timestamp_valid_bits = {bits} is outside 16 ..= 64"));
        }
        if let Some(hz) = self.quirks.timer_hz
            && !(1_000..=1_000_000_000).contains(&hz)
        {
            return Err(format!("quirks.timer_hz = {hz} is outside 1 kHz ..= 1 GHz"));
        }
        if let Some(ppm) = self.quirks.timer_drift_ppm {
            if !(-1000..=1000).contains(&ppm) {
                return Err(format!("quirks.timer_drift_ppm = {ppm} is outside -1000 ..= 1000"));
            }
            if self.quirks.global_timestamps_host_ns {
                return Err("quirks.timer_drift_ppm contradicts quirks.global_timestamps_host_ns: a timer \
                            synchronized with the host does not drift from it"
                    .into());
            }
        }
        if self.faults.shrink_export_after_samples.is_some() && !self.quirks.unsealed_export {
            return Err(
                "faults.shrink_export_after_samples needs quirks.unsealed_export: a sealed memfd cannot shrink".into(),
            );
        }
        if !self.faults.shrink_export_to.is_multiple_of(4096) {
            return Err(format!(
                "faults.shrink_export_to = {} is not a multiple of 4096",
                self.faults.shrink_export_to
            ));
        }
        if !(16..=1 << 20).contains(&self.streamer_buffer_reports) {
            return Err(format!(
                "streamer_buffer_reports = {} is outside 16 ..= 1048576",
                self.streamer_buffer_reports
            ));
        }
        if !(10..=10_000_000).contains(&self.update_period_us) {
            return Err(format!("update_period_us = {} is outside 10 ..= 10000000", self.update_period_us));
        }
        if !(64..=1 << 22).contains(&self.tracer_ring_events) {
            return Err(format!("tracer_ring_events = {} is outside 64 ..= 4194304", self.tracer_ring_events));
        }
        if self.tracer_events_per_tick > (1 << 16).min(self.tracer_ring_events) {
            return Err(format!(
                "tracer_events_per_tick = {} is outside 0 ..= 65536 or above tracer_ring_events ({}): \
                 events would be overwritten in the tick that writes them",
                self.tracer_events_per_tick, self.tracer_ring_events
            ));
        }
        let rate = u128::from(self.tracer_events_per_tick) * 1_000_000 / u128::from(self.update_period_us);
        if rate > u128::from(MAX_TRACER_EVENTS_PER_S) {
            return Err(format!(
                "tracer_events_per_tick = {} every update_period_us = {} asks for {rate} events/s; the \
                 workload writes at most {MAX_TRACER_EVENTS_PER_S} (a kernel every microsecond, four events each)",
                self.tracer_events_per_tick, self.update_period_us
            ));
        }
        fn check(d: &DeviceConfig, path: &str) -> Result<(), String> {
            if d.name.len() >= 256 {
                return Err(format!("{path}.name is longer than 255 bytes"));
            }
            if let Some(bdf) = &d.pci_bdf {
                crate::pci::parse_bdf(bdf).map_err(|e| format!("{path}.pci_bdf: {e}"))?;
            }
            for (i, g) in d.groups.iter().enumerate() {
                let gp = format!("{path}.groups[{i}]");
                if g.name.is_empty() || g.name.len() >= 256 || g.description.len() >= 256 {
                    return Err(format!("{gp}: name must be 1..=255 bytes, description at most 255"));
                }
                let n = g.metrics.len() + g.synthetic_counters as usize + g.has_stream_timestamp() as usize;
                if n == 0 || n > 4096 {
                    return Err(format!("{gp}: needs 1..=4096 metrics, has {n}"));
                }
                for (j, m) in g.metrics.iter().enumerate() {
                    if m.name.is_empty() || m.name.len() >= 256 || m.description.len() >= 256 {
                        return Err(format!("{gp}.metrics[{j}]: name must be 1..=255 bytes"));
                    }
                    if m.signal.is_trace_event() != g.tracer {
                        return Err(format!(
                            "{gp}.metrics[{j}]: signal {:?} {} (kernel-event signals belong to tracer groups, and only they)",
                            m.signal,
                            if g.tracer { "in a tracer group" } else { "outside a tracer group" }
                        ));
                    }
                }
                if g.tracer && (g.export != Export::Group || g.stream || g.synthetic_counters > 0) {
                    return Err(format!(
                        "{gp}: a tracer group exports as a Group, does not stream and has no synthetic counters"
                    ));
                }
            }
            for (i, s) in d.sub_devices.iter().enumerate() {
                if !s.sub_devices.is_empty() {
                    return Err(format!("{path}.sub_devices[{i}] has sub-devices of its own"));
                }
                if s.pci_bdf.is_some() {
                    return Err(format!(
                        "{path}.sub_devices[{i}].pci_bdf: a sub-device reports its root device's PCI address"
                    ));
                }
                check(s, &format!("{path}.sub_devices[{i}]"))?;
            }
            Ok(())
        }
        for (i, d) in self.devices.iter().enumerate() {
            check(d, &format!("devices[{i}]"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod file_tests {
    use super::*;

    #[test]
    fn config_files_are_size_checked_before_reading_and_named() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let big = dir.join("big.ron");
        std::fs::File::create(&big).unwrap().set_len(MAX_CONFIG_FILE + 1).unwrap();
        let e = read_config_file(&big, "ZE_SIM_CONFIG=big.ron").unwrap_err().0;
        assert!(e.starts_with("ZE_SIM_CONFIG=big.ron: ") && e.contains("more than a configuration may have"), "{e}");
        let e = read_config_file(dir, "ZE_SIM_CONFIG=dir").unwrap_err().0;
        assert!(e.contains("not a regular file"), "{e}");
        // A FIFO nobody writes to: refused at once, not waited on.
        let fifo = dir.join("fifo.ron");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let e = read_config_file(&fifo, "ZE_SIM_CONFIG=fifo.ron").unwrap_err().0;
        assert_eq!(e, "ZE_SIM_CONFIG=fifo.ron: not a regular file");
        let ok = dir.join("ok.ron");
        std::fs::write(&ok, "(seed: 3)").unwrap();
        let cfg = SimConfig::from_ron(&read_config_file(&ok, "ok").unwrap(), "ok").unwrap();
        assert_eq!(cfg.seed, 3);
    }
}
