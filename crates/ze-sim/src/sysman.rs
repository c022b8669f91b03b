//! Sysman (`zes*`) of the simulated driver: per GPU one GPU frequency domain, one package power
//! domain, two temperature sensors (GPU, memory), two engine groups (compute, copy) and one
//! device memory module, per NPU one engine group (compute) as Intel's NPU driver has, with
//! values that follow the workload (`workload::phase_at`), and the processes using the device
//! (`processes`).
//!
//! Counters (energy, engine active time, memory read/write bytes) are exact integrals of
//! noiseless phase levels, so a client's rates are checkable: the package power is 8 W idle,
//! 180 W compute-bound and 120 W memory-bound, or `fixed_power_w`. Gauges
//! (frequency, temperature, memory use) carry the workload's noise.
//!
//! Two ways in, as on Intel's driver: `zesInit` + `zesDriverGet` + `zesDeviceGet` (Sysman's
//! own device handles, matched to core devices by UUID), or `ZES_ENABLE_SYSMAN=1` in the
//! environment at `zeInit` and the core device handles passed as Sysman handles. Without either,
//! device calls answer ZE_RESULT_ERROR_UNINITIALIZED.

use level_zero_sys::*;
use serde::{Deserialize, Serialize};

use crate::config::DeviceKind;
use crate::instance::Instance;
use crate::ops_driver::R;
pub use crate::processes::ProcessesConfig;
use crate::registry::{Obj, new_handle};
use crate::workload::{self, HELD_CLOCK, Moment, Phase, Sensor, noise, phase_at, temperature};

/// A piece of Sysman telemetry, for [`SysmanConfig::failing`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SysmanPiece {
    /// Frequency domains (`zesFrequencyGetState`).
    Frequency,
    /// Power domains (`zesPowerGetEnergyCounter`).
    Power,
    /// Temperature sensors (`zesTemperatureGetState`).
    Temperature,
    /// Engine groups (`zesEngineGetActivity`).
    Engines,
    /// Memory modules (`zesMemoryGetState`, `zesMemoryGetBandwidth`).
    Memory,
    /// The processes using the device (`zesDeviceProcessesGetState`).
    Processes,
}

/// How the driver's Sysman behaves. Everything on and working by default; a piece is left out
/// entirely with `empty_entry_points` (e.g. `"zesDeviceEnumPowerDomains"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SysmanConfig {
    /// False: the driver has no Sysman (`zesInit` and every device call answer
    /// ZE_RESULT_ERROR_UNSUPPORTED_FEATURE), like an NPU driver.
    pub available: bool,
    /// Pieces whose state queries fail with ZE_RESULT_ERROR_NOT_AVAILABLE (enumeration and
    /// properties still work).
    pub failing: Vec<SysmanPiece>,
    /// Modulus of the energy (µJ), engine active time (µs) and memory byte counters: they wrap
    /// to 0 there, as narrow hardware counters do. `None`: they wrap at 2^64.
    pub counter_wrap: Option<u64>,
    /// Where the counters start (added before the wrap): with `counter_wrap`, a value just below
    /// it makes the first wrap happen within moments.
    pub counter_start: u64,
    /// Package power in W in every phase instead of the workload's (tests check the watts a
    /// client derives from the energy counter against it).
    pub fixed_power_w: Option<f64>,
    /// The energy counter falls back once, mid-run, to a few hundred joules (as compute-runtime's
    /// has been seen to on idle cards): see [`EnergyDrop`].
    pub energy_drop: Option<EnergyDrop>,
    /// `zesDeviceEnumTemperatureSensors` answers success with no sensors (as on some cards).
    pub no_temperature_sensors: bool,
    /// `zesMemoryGetBandwidth` answers success with zero read and write counters and a zero
    /// `maxBandwidth` (as on some cards).
    pub zero_memory_bandwidth: bool,
    /// The processes `zesDeviceProcessesGetState` lists, over time ([`ProcessesConfig`]).
    pub processes: ProcessesConfig,
    /// Pieces whose enumeration (`zesDeviceEnum…`) answers ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS,
    /// as compute-runtime's `zesDeviceEnumEngineGroups` does to a user without root since
    /// 2026-05 (engine activity is read from the GPU's PMU through perf). ze-sim takes the
    /// application for such a user whatever its real uid, so tests behave alike as root.
    /// (`Processes` has no enumeration: it is not affected.)
    pub root_only: Vec<SysmanPiece>,
}

/// The energy counter's fall: from `at_ms` after the driver started its value is `to_j` joules
/// plus what was used since; with `lasts_ms`, only reads within that window see the fallen value
/// and later ones see the true total again (a glitch, as in compute-runtime's report of ~200 J
/// reads between ~22 MJ ones), without it the counter counts on from `to_j`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnergyDrop {
    /// When the counter falls, ms after the driver started (default 1500).
    pub at_ms: u64,
    /// What it falls to, J (default 200).
    pub to_j: f64,
    /// How long the fallen value is read, ms; `None` (default): for good.
    pub lasts_ms: Option<u64>,
}

impl Default for EnergyDrop {
    fn default() -> Self {
        EnergyDrop { at_ms: 1500, to_j: 200.0, lasts_ms: None }
    }
}

impl Default for SysmanConfig {
    fn default() -> Self {
        SysmanConfig {
            available: true,
            failing: Vec::new(),
            counter_wrap: None,
            counter_start: 0,
            fixed_power_w: None,
            energy_drop: None,
            no_temperature_sensors: false,
            zero_memory_bandwidth: false,
            processes: ProcessesConfig::default(),
            root_only: Vec::new(),
        }
    }
}

impl SysmanConfig {
    /// Rejects a wrap of 0 or non-finite/negative power, naming the field.
    pub(crate) fn validate(&self) -> Result<(), String> {
        self.processes.validate()?;
        if self.counter_wrap == Some(0) {
            return Err("sysman.counter_wrap must be at least 1".into());
        }
        if let Some(p) = self.fixed_power_w
            && !(p.is_finite() && (0.0..1e6).contains(&p))
        {
            return Err(format!("sysman.fixed_power_w = {p} is not a power in W (0 ..< 1e6)"));
        }
        if let Some(d) = &self.energy_drop
            && !(d.to_j.is_finite() && (0.0..1e12).contains(&d.to_j))
        {
            return Err(format!("sysman.energy_drop.to_j = {} is not an energy in J (0 ..< 1e12)", d.to_j));
        }
        Ok(())
    }
}

/// One device's Sysman handles.
pub(crate) struct DevSysman {
    /// The device as `zesDeviceGet` returns it (distinct from the core handle).
    pub(crate) handle: usize,
    pub(crate) freq: usize,
    pub(crate) power: usize,
    pub(crate) temps: [usize; 2],
    pub(crate) engines: [usize; 2],
    pub(crate) memory: usize,
}

/// A Sysman object: which device and which piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SysObj {
    Driver,
    Device(usize),
    Freq(usize),
    Power(usize),
    Temp(usize, usize),
    Engine(usize, usize),
    Memory(usize),
}

/// The Sysman state of an instance.
pub(crate) struct Sysman {
    pub(crate) driver: usize,
    pub(crate) devices: Vec<DevSysman>,
    /// `ZES_ENABLE_SYSMAN=1` was set at `zeInit`: core device handles work as Sysman handles.
    pub(crate) on_core: bool,
    /// `zesInit` succeeded.
    pub(crate) initialized: bool,
}

const TEMP_SENSORS: [zes_temp_sensors_t; 2] = [ZES_TEMP_SENSORS_GPU, ZES_TEMP_SENSORS_MEMORY];
const ENGINE_GROUPS: [zes_engine_group_t; 2] = [ZES_ENGINE_GROUP_COMPUTE_ALL, ZES_ENGINE_GROUP_COPY_ALL];
/// Device memory of every simulated device, bytes.
const MEMORY_BYTES: u64 = 16 << 30;

impl Sysman {
    /// Handles for `devices` devices; returns them for registration.
    pub(crate) fn new(devices: usize, handles: &mut Vec<(usize, Obj)>) -> Sysman {
        let mut h = |o: SysObj| {
            let x = new_handle();
            handles.push((x, Obj::Sysman(o)));
            x
        };
        let driver = h(SysObj::Driver);
        let devices = (0..devices)
            .map(|d| DevSysman {
                handle: h(SysObj::Device(d)),
                freq: h(SysObj::Freq(d)),
                power: h(SysObj::Power(d)),
                temps: [h(SysObj::Temp(d, 0)), h(SysObj::Temp(d, 1))],
                engines: [h(SysObj::Engine(d, 0)), h(SysObj::Engine(d, 1))],
                memory: h(SysObj::Memory(d)),
            })
            .collect();
        Sysman { driver, devices, on_core: false, initialized: false }
    }
}

/// ∫₀ᵗ of a level that is `levels[phase]` in each phase of the 8 s cycle.
fn phase_integral(t: f64, [idle, compute, memory]: [f64; 3]) -> f64 {
    let cycles = (t / 8.0).floor();
    let r = t - cycles * 8.0;
    let part = idle * r.min(2.0) + compute * (r - 2.0).clamp(0.0, 3.0) + memory * (r - 5.0).clamp(0.0, 3.0);
    cycles * (2.0 * idle + 3.0 * compute + 3.0 * memory) + part
}

impl Instance {
    fn sysman_available(&self) -> R<()> {
        if self.config.sysman.available { Ok(()) } else { Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) }
    }

    /// At `zeInit`: does the environment enable Sysman on core handles?
    pub(crate) fn resolve_sysman_from_env(&mut self) {
        self.sysman.on_core = std::env::var("ZES_ENABLE_SYSMAN").is_ok_and(|v| v == "1");
    }

    /// `zesInit`.
    pub(crate) fn zes_init(&mut self) -> R<()> {
        self.sysman_available()?;
        if self.config.faults.init_fails {
            return Err(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
        }
        self.sysman.initialized = true;
        Ok(())
    }

    /// `zesDriverGet` / `zesDeviceGet` need `zesInit`.
    pub(crate) fn zes_ready(&self) -> R<()> {
        if self.sysman.initialized { Ok(()) } else { Err(ZE_RESULT_ERROR_UNINITIALIZED) }
    }

    /// The Sysman device handles of the root devices.
    pub(crate) fn zes_devices(&self) -> Vec<zes_device_handle_t> {
        if self.config.faults.no_devices {
            return Vec::new();
        }
        (0..self.devices.len())
            .filter(|&d| self.devices[d].parent.is_none())
            .map(|d| self.sysman.devices[d].handle as zes_device_handle_t)
            .collect()
    }

    /// The device behind a Sysman device handle (`Obj::Sysman(Device)`), or behind a core
    /// device handle when `ZES_ENABLE_SYSMAN=1` was set at `zeInit`.
    pub(crate) fn sysman_device(&self, obj: Obj) -> R<usize> {
        self.sysman_available()?;
        match obj {
            Obj::Sysman(SysObj::Device(d)) if self.sysman.initialized => Ok(d),
            Obj::Device(d) if self.initialized && self.sysman.on_core => Ok(d),
            Obj::Sysman(SysObj::Device(_)) | Obj::Device(_) => Err(ZE_RESULT_ERROR_UNINITIALIZED),
            _ => Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE),
        }
    }

    /// Before a state query: DEVICE_LOST on a lost device, NOT_AVAILABLE for a failing piece.
    pub(crate) fn failing(&self, piece: SysmanPiece) -> R<()> {
        if self.shared.is_lost() {
            return Err(ZE_RESULT_ERROR_DEVICE_LOST);
        }
        if self.config.sysman.failing.contains(&piece) { Err(ZE_RESULT_ERROR_NOT_AVAILABLE) } else { Ok(()) }
    }

    /// Before an enumeration: INSUFFICIENT_PERMISSIONS for a piece that needs root
    /// ([`SysmanConfig::root_only`]).
    pub(crate) fn root_only(&self, piece: SysmanPiece) -> R<()> {
        if self.config.sysman.root_only.contains(&piece) {
            Err(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS)
        } else {
            Ok(())
        }
    }

    /// (seconds since the driver started, µs timestamp) now.
    fn sysman_now(&self) -> (f64, u64) {
        let ns = crate::writer::monotonic_ns();
        (self.shared.seconds_at(ns), ns / 1000)
    }

    fn power_levels(&self) -> [f64; 3] {
        if let Some(p) = self.config.sysman.fixed_power_w {
            return [p; 3];
        }
        [8.0, 180.0, 120.0]
    }

    /// A counter's raw value: `counter_start` plus `total`, wrapped at `counter_wrap`.
    fn counter(&self, total: f64) -> u64 {
        let v = self.config.sysman.counter_start.wrapping_add(total as u64);
        match self.config.sysman.counter_wrap {
            Some(m) => v % m,
            None => v,
        }
    }

    /// Package power (W) at `t`: what the energy counter integrates.
    fn power_at(&self, t: f64) -> f64 {
        let [i, c, m] = self.power_levels();
        match phase_at(t) {
            Phase::Idle => i,
            Phase::Compute => c,
            Phase::MemoryBound => m,
        }
    }

    pub(crate) fn freq_properties(&self, d: usize, p: &mut zes_freq_properties_t) -> R<()> {
        self.sysman_available()?;
        let on_sub = self.devices[d].parent.is_some();
        *p = zes_freq_properties_t {
            r#type: ZES_FREQ_DOMAIN_GPU,
            onSubdevice: on_sub as ze_bool_t,
            min: 300.0,
            max: self.devices[d].cfg.core_clock_mhz as f64,
            ..Default::default()
        };
        Ok(())
    }

    pub(crate) fn freq_state(&self, d: usize, s: &mut zes_freq_state_t) -> R<()> {
        self.failing(SysmanPiece::Frequency)?;
        let (t, us) = self.sysman_now();
        let clock = self.devices[d].cfg.core_clock_mhz as f64;
        let Clocks { request, actual, tdp, reasons } =
            clocks_at(t, clock, noise(self.shared.seed(), 9001 + d as u64, us / 100_000));
        *s = zes_freq_state_t {
            currentVoltage: 0.7 + 0.3 * actual / clock,
            request,
            tdp,
            efficient: 0.5 * clock,
            actual,
            throttleReasons: reasons,
            ..Default::default()
        };
        Ok(())
    }

    pub(crate) fn power_properties(&self, d: usize, p: &mut zes_power_properties_t) -> R<()> {
        self.sysman_available()?;
        let max = self.power_levels()[1] * 1000.0 * 1.2;
        *p = zes_power_properties_t {
            onSubdevice: self.devices[d].parent.is_some() as ze_bool_t,
            defaultLimit: max as i32,
            minLimit: 0,
            maxLimit: max as i32,
            ..Default::default()
        };
        Ok(())
    }

    pub(crate) fn energy_counter(&self, e: &mut zes_power_energy_counter_t) -> R<()> {
        self.failing(SysmanPiece::Power)?;
        let (t, us) = self.sysman_now();
        let levels = self.power_levels();
        let joules = phase_integral(t, levels);
        let energy = match &self.config.sysman.energy_drop {
            Some(drop) if t * 1e3 >= drop.at_ms as f64 => {
                let at = drop.at_ms as f64 / 1e3;
                match drop.lasts_ms {
                    Some(ms) if t * 1e3 >= (drop.at_ms + ms) as f64 => self.counter(joules * 1e6),
                    // The fallen counter: `to_j` plus what was used since the fall (no start, no wrap).
                    _ => ((drop.to_j + joules - phase_integral(at, levels)) * 1e6) as u64,
                }
            }
            _ => self.counter(joules * 1e6),
        };
        *e = zes_power_energy_counter_t { energy, timestamp: us };
        Ok(())
    }

    /// Device `d` is an NPU: its Sysman is what Intel's NPU driver offers, engine groups only (one,
    /// COMPUTE_ALL; `zesGetDeviceProcAddrTable` of intel/linux-npu-driver leaves frequency, power,
    /// temperature and memory `nullptr`). In this driver, which may serve a GPU beside it, those
    /// enumerations answer no domains for the NPU.
    fn npu(&self, d: usize) -> bool {
        self.devices[d].cfg.kind == DeviceKind::Npu
    }

    /// The frequency domains `zesDeviceEnumFrequencyDomains` answers for device `d`.
    pub(crate) fn freq_domains(&self, d: usize) -> &[usize] {
        if self.npu(d) { &[] } else { std::slice::from_ref(&self.sysman.devices[d].freq) }
    }

    /// The power domains `zesDeviceEnumPowerDomains` answers for device `d`.
    pub(crate) fn power_domains(&self, d: usize) -> &[usize] {
        if self.npu(d) { &[] } else { std::slice::from_ref(&self.sysman.devices[d].power) }
    }

    /// The memory modules `zesDeviceEnumMemoryModules` answers for device `d`.
    pub(crate) fn memory_modules(&self, d: usize) -> &[usize] {
        if self.npu(d) { &[] } else { std::slice::from_ref(&self.sysman.devices[d].memory) }
    }

    /// The engine groups `zesDeviceEnumEngineGroups` answers for device `d`.
    pub(crate) fn engine_groups(&self, d: usize) -> &[usize] {
        let all = &self.sysman.devices[d].engines;
        if self.npu(d) { &all[..1] } else { all }
    }

    /// The temperature sensors `zesDeviceEnumTemperatureSensors` answers for device `d`.
    pub(crate) fn temp_sensors(&self, d: usize) -> &[usize] {
        if self.config.sysman.no_temperature_sensors || self.npu(d) { &[] } else { &self.sysman.devices[d].temps }
    }

    pub(crate) fn temp_properties(&self, d: usize, i: usize, p: &mut zes_temp_properties_t) -> R<()> {
        self.sysman_available()?;
        *p = zes_temp_properties_t {
            r#type: TEMP_SENSORS[i],
            onSubdevice: self.devices[d].parent.is_some() as ze_bool_t,
            maxTemperature: 105.0,
            ..Default::default()
        };
        Ok(())
    }

    pub(crate) fn temperature(&self, d: usize, i: usize) -> R<f64> {
        self.failing(SysmanPiece::Temperature)?;
        let (t, us) = self.sysman_now();
        let n = noise(self.shared.seed(), 9100 + d as u64 * 2 + i as u64, us / 100_000);
        let p = self.power_at(t);
        Ok(temperature(if i == 0 { Sensor::Gpu } else { Sensor::Memory }, p, n))
    }

    pub(crate) fn engine_properties(&self, d: usize, i: usize, p: &mut zes_engine_properties_t) -> R<()> {
        self.sysman_available()?;
        *p = zes_engine_properties_t {
            r#type: ENGINE_GROUPS[i],
            onSubdevice: self.devices[d].parent.is_some() as ze_bool_t,
            ..Default::default()
        };
        Ok(())
    }

    pub(crate) fn engine_activity(&self, _d: usize, i: usize, s: &mut zes_engine_stats_t) -> R<()> {
        self.failing(SysmanPiece::Engines)?;
        let (t, us) = self.sysman_now();
        // Busy fraction per phase: compute engines busy when computing, copy engines when moving data.
        let levels = if i == 0 { [0.03, 0.95, 0.70] } else { [0.01, 0.10, 0.60] };
        *s = zes_engine_stats_t { activeTime: self.counter(phase_integral(t, levels) * 1e6), timestamp: us };
        Ok(())
    }

    pub(crate) fn memory_properties(&self, d: usize, p: &mut zes_mem_properties_t) -> R<()> {
        self.sysman_available()?;
        *p = zes_mem_properties_t {
            r#type: 17, // GDDR6
            onSubdevice: self.devices[d].parent.is_some() as ze_bool_t,
            location: ZES_MEM_LOC_DEVICE,
            physicalSize: MEMORY_BYTES,
            busWidth: 256,
            numChannels: 8,
            ..Default::default()
        };
        Ok(())
    }

    pub(crate) fn memory_state(&self, d: usize, s: &mut zes_mem_state_t) -> R<()> {
        self.failing(SysmanPiece::Memory)?;
        let (t, us) = self.sysman_now();
        let n = noise(self.shared.seed(), 9200 + d as u64, us / 100_000);
        // At least what the processes using the device hold in each phase (`processes.rs`: the
        // workload's 3 / 5 / 8 GiB ±1 %, up to 1 GiB of another process and 768 MiB of a job:
        // at most 4.8 / 6.8 / 9.9 GiB).
        let used = match phase_at(t) {
            Phase::Idle => 5.0,
            Phase::Compute => 7.5,
            Phase::MemoryBound => 11.0,
        } * (1 << 30) as f64
            * (1.0 + 0.01 * n);
        *s = zes_mem_state_t {
            health: 1, // ZES_MEM_HEALTH_OK
            free: MEMORY_BYTES - used as u64,
            size: MEMORY_BYTES,
            ..Default::default()
        };
        Ok(())
    }

    pub(crate) fn memory_bandwidth(&self, _d: usize, b: &mut zes_mem_bandwidth_t) -> R<()> {
        self.failing(SysmanPiece::Memory)?;
        let (t, us) = self.sysman_now();
        if self.config.sysman.zero_memory_bandwidth {
            *b = zes_mem_bandwidth_t { timestamp: us, ..Default::default() };
            return Ok(());
        }
        let read = phase_integral(t, [1.0e8, 5.0e9, 4.0e10]);
        *b = zes_mem_bandwidth_t {
            readCounter: self.counter(read),
            writeCounter: self.counter(0.4 * read),
            maxBandwidth: 5.0e10 as u64,
            timestamp: us,
        };
        Ok(())
    }

    /// `zesDeviceGetProperties`: the core properties (UUID included) and board strings.
    pub(crate) fn zes_device_properties(&mut self, d: usize, p: &mut zes_device_properties_t) -> R<()> {
        self.sysman_available()?;
        let mut core = ze_device_properties_t { stype: ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, ..Default::default() };
        self.device_properties(d, &mut core)?;
        *p = zes_device_properties_t { core, numSubdevices: self.devices[d].subs.len() as u32, ..Default::default() };
        crate::ops_driver::put_str(&mut p.vendorName, "ze-sim");
        crate::ops_driver::put_str(&mut p.modelName, &self.devices[d].cfg.name);
        crate::ops_driver::put_str(&mut p.serialNumber, &format!("SIM{d:04}"));
        Ok(())
    }
}

/// A frequency domain's clocks (MHz) and throttle reasons at a moment.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Clocks {
    request: f64,
    actual: f64,
    /// The highest clock the power limit allows now.
    tdp: f64,
    reasons: zes_freq_throttle_reason_flags_t,
}

/// The clocks of a device whose top clock is `clock` MHz, `t` seconds after the driver started,
/// with noise `n` in [-1, 1]: where the power limit holds the clock down ([`Moment::held`], as
/// the metrics' frequency is), the TDP clock falls to where the actual clock runs and the reason
/// says so; otherwise the limit is far off and allows the full clock. The actual clock
/// ([`workload::clock`], whole MHz) is never above the request nor the TDP clock, nor the request
/// above the top clock.
fn clocks_at(t: f64, clock: f64, n: f64) -> Clocks {
    let at = Moment::at(t);
    let held = HELD_CLOCK * clock;
    let actual = workload::clock(at, clock, n);
    let (request, tdp, reasons) = match at.phase {
        // Idle, the driver asks for a little over the floor and gets it.
        Phase::Idle => (actual, clock, 0),
        Phase::Compute if at.held => (clock, held, ZES_FREQ_THROTTLE_REASON_FLAG_AVE_PWR_CAP),
        Phase::Compute => (clock, clock, 0),
        Phase::MemoryBound => (0.8 * clock, clock, 0),
    };
    Clocks { request, actual, tdp, reasons }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_actual_clock_is_never_above_the_tdp_clock_and_a_capped_clock_says_why() {
        let clock = 2100.0;
        let mut capped = 0;
        for k in 0..1600 {
            let t = k as f64 * 0.01;
            for n in [-1.0, -0.3, 0.0, 0.6, 1.0] {
                let c = clocks_at(t, clock, n);
                assert!(c.actual <= c.tdp && c.tdp <= clock && c.request <= clock, "at {t} s: {c:?}");
                assert!(c.actual > 0.0 && c.actual <= c.request, "at {t} s: {c:?}");
                assert_eq!(c.actual, c.actual.round(), "whole MHz at {t} s: {c:?}");
                if c.tdp < clock {
                    capped += 1;
                    assert_eq!(c.reasons, ZES_FREQ_THROTTLE_REASON_FLAG_AVE_PWR_CAP, "at {t} s: {c:?}");
                    assert!(c.actual < c.request, "held below its request: {c:?}");
                } else {
                    assert_eq!(c.reasons, 0, "at {t} s: {c:?}");
                }
            }
        }
        // 1.5 s of each 8 s cycle, two cycles, five noises each.
        assert_eq!(capped, 2 * 150 * 5);
    }

    #[test]
    fn phase_integral_sums_each_phase_and_whole_cycles() {
        let l = [1.0, 10.0, 100.0];
        assert_eq!(phase_integral(1.0, l), 1.0);
        assert_eq!(phase_integral(3.0, l), 2.0 + 10.0);
        assert_eq!(phase_integral(6.0, l), 2.0 + 30.0 + 100.0);
        assert_eq!(phase_integral(8.0, l), 2.0 + 30.0 + 300.0);
        assert_eq!(phase_integral(17.0, l), 2.0 * 332.0 + 1.0);
    }
}
