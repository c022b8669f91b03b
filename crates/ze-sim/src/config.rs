//! What the simulated driver models, as data: devices, metric groups, metrics, the workload,
//! and the faults and real-driver quirks to inject. A default is built in; `ZE_SIM_CONFIG=path`
//! replaces it with a RON file, in which every field may be left out (its default is used), so
//! `(faults: (import_fails: true))` is a whole config.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// Seed of the workload's noise: the same seed gives the same counters.
    pub seed: u64,
    /// How often the simulation thread writes a new snapshot into each exported buffer.
    pub update_period_us: u64,
    /// Whether metric groups are visible without runtime enable: `Env` follows
    /// `ZET_ENABLE_METRICS=1` like Intel's driver.
    pub metrics: MetricsEnable,
    pub driver_version: u32,
    pub devices: Vec<DeviceConfig>,
    pub faults: Faults,
    pub quirks: Quirks,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MetricsEnable {
    /// `ZET_ENABLE_METRICS=1` in the environment when the driver initialises.
    Env,
    Always,
    /// Only after `zetDeviceEnableMetricsExp`.
    RuntimeOnly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeviceKind {
    Gpu,
    Npu,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeviceConfig {
    pub name: String,
    pub kind: DeviceKind,
    pub vendor_id: u32,
    pub device_id: u32,
    pub core_clock_mhz: u32,
    pub groups: Vec<GroupConfig>,
    pub sub_devices: Vec<DeviceConfig>,
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GroupConfig {
    pub name: String,
    pub description: String,
    pub domain: u32,
    pub export: Export,
    pub metrics: Vec<MetricConfig>,
    /// Adds this many synthetic gauge counters after `metrics` (for large-buffer benchmarks).
    pub synthetic_counters: u32,
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
    BytesRead,
    BytesWritten,
    /// Gauges.
    FrequencyMhz,
    UtilizationPercent,
    PowerWatts,
    TemperatureC,
    /// Cumulative inferences (NPU).
    Inferences,
    /// A deterministic wave, for synthetic counters.
    Synthetic,
}

impl Signal {
    pub fn is_cumulative(self) -> bool {
        matches!(
            self,
            Signal::GpuTime | Signal::BusyCycles | Signal::BytesRead | Signal::BytesWritten | Signal::Inferences
        )
    }
    pub fn unit(self) -> &'static str {
        match self {
            Signal::GpuTime => "ns",
            Signal::BusyCycles => "cycles",
            Signal::BytesRead | Signal::BytesWritten => "bytes",
            Signal::FrequencyMhz => "MHz",
            Signal::UtilizationPercent => "%",
            Signal::PowerWatts => "W",
            Signal::TemperatureC => "C",
            Signal::Inferences => "inferences",
            Signal::Synthetic => "units",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricConfig {
    pub name: String,
    pub description: String,
    pub signal: Signal,
}

impl Default for MetricConfig {
    fn default() -> Self {
        MetricConfig { name: "Metric".into(), description: String::new(), signal: Signal::Synthetic }
    }
}

/// Faults to inject. Each one makes the named call fail (or lie) the way a broken or
/// restricted driver would.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// `zeInit` fails with ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE.
    pub init_fails: bool,
    /// The driver reports no devices.
    pub no_devices: bool,
    /// `zetMetricGroupGetProperties` fails with ZE_RESULT_ERROR_UNKNOWN.
    pub group_properties_fail: bool,
    /// Export queries report `fd = -1`.
    pub export_fd_minus_one: bool,
    /// Export queries report `size = 0`.
    pub export_size_zero: bool,
    /// Export queries report a `size` larger than the memory behind the fd.
    pub export_size_oversized: bool,
    /// `zeMemAllocDevice` with an import descriptor fails.
    pub import_fails: bool,
    /// After this many snapshots the device is lost: calls return ZE_RESULT_ERROR_DEVICE_LOST
    /// and the buffers stop moving.
    pub device_lost_after_samples: Option<u64>,
    /// `zetDeviceDisableMetricsExp` fails with ZE_RESULT_ERROR_UNKNOWN.
    pub disable_refused: bool,
}

/// Behaviours of real drivers that are legal but awkward.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Quirks {
    /// GetProperties overwrites the caller's `pNext` (as Intel's NPU driver does).
    pub overwrite_pnext: bool,
    /// GetProperties answers ZE_RESULT_ERROR_INVALID_ARGUMENT when it recognises no struct in a
    /// non-empty `pNext` chain (as compute-runtime does).
    pub invalid_argument_on_unknown_chain: bool,
    /// An import closes the fd passed to it (as compute-runtime does since 2026-03).
    pub import_closes_fd: bool,
    /// The driver predates metric export memory: it knows neither the group-type nor the export
    /// struct and skips them in chains (with `invalid_argument_on_unknown_chain`, it rejects them).
    pub no_export_extension: bool,
    /// The exported fd cannot be mapped by the application (readers must copy through the
    /// device instead).
    pub unmappable_export: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        let m = |name: &str, description: &str, signal| MetricConfig {
            name: name.into(),
            description: description.into(),
            signal,
        };
        let compute = || GroupConfig {
            name: "ComputeBasic".into(),
            description: "Engine activity, clocks and power (exported as one DMA-BUF)".into(),
            domain: 0,
            export: Export::Group,
            metrics: vec![
                m("GpuTime", "Time the compute engine was busy", Signal::GpuTime),
                m("GpuBusyCycles", "Cycles the compute engine was busy", Signal::BusyCycles),
                m("GpuFrequency", "Current GPU core frequency", Signal::FrequencyMhz),
                m("GpuUtilization", "Share of time the GPU was busy", Signal::UtilizationPercent),
                m("GpuPower", "Package power", Signal::PowerWatts),
            ],
            synthetic_counters: 0,
        };
        let memory = GroupConfig {
            name: "MemoryTraffic".into(),
            description: "Device memory traffic (each metric exports the shared DMA-BUF)".into(),
            domain: 1,
            export: Export::PerMetric,
            metrics: vec![
                m("BytesRead", "Bytes read from device memory", Signal::BytesRead),
                m("BytesWritten", "Bytes written to device memory", Signal::BytesWritten),
                m("MemoryTemperature", "Memory temperature", Signal::TemperatureC),
            ],
            synthetic_counters: 0,
        };
        let stall = GroupConfig {
            name: "EuStallSampling".into(),
            description: "Instruction-pointer stall sampling (no exported memory)".into(),
            domain: 2,
            export: Export::None,
            metrics: vec![m("StallSamples", "Stall samples taken", Signal::Synthetic)],
            synthetic_counters: 0,
        };
        let gpu = DeviceConfig {
            name: "ze-sim GPU".into(),
            kind: DeviceKind::Gpu,
            vendor_id: 0x8086,
            device_id: 0x5a51,
            core_clock_mhz: 2100,
            groups: vec![compute(), memory.clone(), stall],
            sub_devices: vec![DeviceConfig {
                name: "ze-sim GPU tile 0".into(),
                kind: DeviceKind::Gpu,
                vendor_id: 0x8086,
                device_id: 0x5a51,
                core_clock_mhz: 2100,
                groups: vec![compute()],
                sub_devices: Vec::new(),
            }],
        };
        let npu = DeviceConfig {
            name: "ze-sim NPU".into(),
            kind: DeviceKind::Npu,
            vendor_id: 0x8086,
            device_id: 0x5a5e,
            core_clock_mhz: 1400,
            groups: vec![GroupConfig {
                name: "NpuActivity".into(),
                description: "Inference engine activity (exported as one DMA-BUF)".into(),
                domain: 0,
                export: Export::Group,
                metrics: vec![
                    m("NpuBusyTime", "Time the inference engine was busy", Signal::GpuTime),
                    m("Inferences", "Inferences completed", Signal::Inferences),
                    m("NpuUtilization", "Share of time the NPU was busy", Signal::UtilizationPercent),
                    m("NpuPower", "NPU power", Signal::PowerWatts),
                ],
                synthetic_counters: 0,
            }],
            sub_devices: Vec::new(),
        };
        SimConfig {
            seed: 1,
            update_period_us: 1000,
            metrics: MetricsEnable::Env,
            driver_version: 0x0001_0000,
            devices: vec![gpu, npu],
            faults: Faults::default(),
            quirks: Quirks::default(),
        }
    }
}

/// Why a configuration could not be used.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ConfigError {}

impl SimConfig {
    /// Parses a RON configuration; `origin` names it in errors (a path, usually).
    pub fn from_ron(text: &str, origin: &str) -> Result<SimConfig, ConfigError> {
        let cfg: SimConfig =
            ron::Options::default().from_str(text).map_err(|e| ConfigError(format!("{origin}: {e}")))?;
        cfg.validate().map_err(|e| ConfigError(format!("{origin}: {e}")))?;
        Ok(cfg)
    }

    /// The configuration named by `ZE_SIM_CONFIG`, or the built-in default.
    pub fn from_env() -> Result<SimConfig, ConfigError> {
        match std::env::var_os("ZE_SIM_CONFIG") {
            None => Ok(SimConfig::default()),
            Some(path) => {
                let shown = format!("ZE_SIM_CONFIG={}", path.to_string_lossy());
                let text = std::fs::read_to_string(&path).map_err(|e| ConfigError(format!("{shown}: {e}")))?;
                SimConfig::from_ron(&text, &shown)
            }
        }
    }

    /// Rejects what the model cannot represent, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(10..=10_000_000).contains(&self.update_period_us) {
            return Err(format!("update_period_us = {} is outside 10 ..= 10000000", self.update_period_us));
        }
        fn check(d: &DeviceConfig, path: &str) -> Result<(), String> {
            if d.name.len() >= 256 {
                return Err(format!("{path}.name is longer than 255 bytes"));
            }
            for (i, g) in d.groups.iter().enumerate() {
                let gp = format!("{path}.groups[{i}]");
                if g.name.is_empty() || g.name.len() >= 256 || g.description.len() >= 256 {
                    return Err(format!("{gp}: name must be 1..=255 bytes, description at most 255"));
                }
                let n = g.metrics.len() + g.synthetic_counters as usize;
                if n == 0 || n > 4096 {
                    return Err(format!("{gp}: needs 1..=4096 metrics, has {n}"));
                }
                for (j, m) in g.metrics.iter().enumerate() {
                    if m.name.is_empty() || m.name.len() >= 256 || m.description.len() >= 256 {
                        return Err(format!("{gp}.metrics[{j}]: name must be 1..=255 bytes"));
                    }
                }
            }
            for (i, s) in d.sub_devices.iter().enumerate() {
                if !s.sub_devices.is_empty() {
                    return Err(format!("{path}.sub_devices[{i}] has sub-devices of its own"));
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
