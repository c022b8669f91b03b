//! Sysman (`zes*`): reaching a device's telemetry and reading its domains, and the processes
//! using it, as safe calls.
//!
//! Two ways in: where the loader exports `zesInit`, `zesInit` + `zesDriverGet` +
//! `zesDeviceGet`, the Sysman device matched to the core device by UUID
//! (`zesDeviceGetProperties`); else — or when that finds no match — the core device handle
//! itself, which works when `ZES_ENABLE_SYSMAN=1` was in the environment at `zeInit`
//! ([`super::set_metrics_env`] sets it for zescope's own process).

use level_zero_sys::*;

use super::device::Device;
use super::error::{ZeError, check};
use super::loader::Ze;
use super::query_array;

/// How a device's Sysman was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SysmanVia {
    /// `zesInit` + `zesDeviceGet`, matched by UUID.
    ZesInit,
    /// The core device handle (`ZES_ENABLE_SYSMAN=1` before `zeInit`).
    CoreHandle,
}

impl SysmanVia {
    /// "zesInit" or "ZES_ENABLE_SYSMAN": for the diagnostics.
    pub fn name(self) -> &'static str {
        match self {
            SysmanVia::ZesInit => "zesInit",
            SysmanVia::CoreHandle => "ZES_ENABLE_SYSMAN",
        }
    }
}

/// One device's Sysman: a handle and the entry points. Not destroyed (nothing to release).
#[derive(Clone)]
pub struct Sysman {
    ze: Ze,
    handle: zes_device_handle_t,
    /// How it was reached.
    pub via: SysmanVia,
}

/// A missing optional entry point: the loader lacks the symbol.
fn missing(call: &'static str) -> ZeError {
    ZeError { call, code: ZE_RESULT_ERROR_UNSUPPORTED_FEATURE }
}

macro_rules! entry {
    ($self:expr, $name:ident) => {
        $self.ze.api.$name.ok_or_else(|| missing(stringify!($name)))?
    };
}

impl Sysman {
    /// Sysman for `device`: through `zesInit` where the loader has it and a Sysman device has
    /// the same UUID, else through the core handle. Fails only when neither answers
    /// `zesDeviceGetProperties`.
    pub fn open(device: &Device) -> Result<Sysman, ZeError> {
        if let Some(s) = Self::through_zes_init(device) {
            return Ok(s);
        }
        let s = Sysman { ze: device.ze.clone(), handle: device.handle.cast(), via: SysmanVia::CoreHandle };
        s.properties()?;
        Ok(s)
    }

    /// The Sysman device of `device` among every Sysman driver's: the one with its UUID. Two
    /// drivers may report one UUID (a copy of a driver, another vendor's that fills it
    /// loosely): then the name and PCI ids must match too, and when that still leaves several,
    /// none is taken (the core handle is used), so one device's telemetry is never another's.
    fn through_zes_init(device: &Device) -> Option<Sysman> {
        let api = &device.ze.api;
        let (init, driver_get, device_get) = (api.zesInit?, api.zesDriverGet?, api.zesDeviceGet?);
        // SAFETY: flags 0, as the specification requires.
        check("zesInit", unsafe { init(0) }).ok()?;
        let drivers = query_array("zesDriverGet", std::ptr::null_mut(), |n, out| {
            // SAFETY: see query_array.
            unsafe { driver_get(n, out) }
        })
        .ok()?;
        let mut same_uuid: Vec<(Sysman, zes_device_properties_t)> = Vec::new();
        for d in drivers {
            let devices = query_array("zesDeviceGet", std::ptr::null_mut(), |n, out| {
                // SAFETY: see query_array; `d` came from zesDriverGet.
                unsafe { device_get(d, n, out) }
            })
            .ok()?;
            for h in devices {
                let s = Sysman { ze: device.ze.clone(), handle: h, via: SysmanVia::ZesInit };
                if let Some(p) = s.properties().ok().filter(|p| p.core.uuid.id == device.info.uuid) {
                    same_uuid.push((s, p));
                }
            }
        }
        if same_uuid.len() > 1 {
            let i = &device.info;
            same_uuid.retain(|(_, p)| {
                super::c_string(&p.core.name) == i.name
                    && p.core.vendorId == i.vendor_id
                    && p.core.deviceId == i.device_id
            });
        }
        match same_uuid.len() {
            1 => same_uuid.pop().map(|(s, _)| s),
            _ => None,
        }
    }

    /// `zesDeviceGetProperties`.
    pub fn properties(&self) -> Result<zes_device_properties_t, ZeError> {
        let f = entry!(self, zesDeviceGetProperties);
        let mut p = zes_device_properties_t::default();
        p.core.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        // SAFETY: a valid properties struct with null chains; a Sysman (or core) device handle.
        check("zesDeviceGetProperties", unsafe { f(self.handle, &mut p) })?;
        Ok(p)
    }

    /// `zesDeviceEnumFrequencyDomains` with each domain's properties.
    pub fn frequency_domains(&self) -> Result<Vec<(Domain<zes_freq_handle_t>, zes_freq_properties_t)>, ZeError> {
        let (e, p) = (entry!(self, zesDeviceEnumFrequencyDomains), entry!(self, zesFrequencyGetProperties));
        self.enumerate("zesDeviceEnumFrequencyDomains", e, "zesFrequencyGetProperties", p)
    }

    /// `zesDeviceEnumPowerDomains` with each domain's properties.
    pub fn power_domains(&self) -> Result<Vec<(Domain<zes_pwr_handle_t>, zes_power_properties_t)>, ZeError> {
        let (e, p) = (entry!(self, zesDeviceEnumPowerDomains), entry!(self, zesPowerGetProperties));
        self.enumerate("zesDeviceEnumPowerDomains", e, "zesPowerGetProperties", p)
    }

    /// `zesDeviceEnumTemperatureSensors` with each sensor's properties.
    pub fn temperature_sensors(&self) -> Result<Vec<(Domain<zes_temp_handle_t>, zes_temp_properties_t)>, ZeError> {
        let (e, p) = (entry!(self, zesDeviceEnumTemperatureSensors), entry!(self, zesTemperatureGetProperties));
        self.enumerate("zesDeviceEnumTemperatureSensors", e, "zesTemperatureGetProperties", p)
    }

    /// `zesDeviceEnumEngineGroups` with each group's properties.
    pub fn engine_groups(&self) -> Result<Vec<(Domain<zes_engine_handle_t>, zes_engine_properties_t)>, ZeError> {
        let (e, p) = (entry!(self, zesDeviceEnumEngineGroups), entry!(self, zesEngineGetProperties));
        self.enumerate("zesDeviceEnumEngineGroups", e, "zesEngineGetProperties", p)
    }

    /// `zesDeviceEnumMemoryModules` with each module's properties.
    pub fn memory_modules(&self) -> Result<Vec<(Domain<zes_mem_handle_t>, zes_mem_properties_t)>, ZeError> {
        let (e, p) = (entry!(self, zesDeviceEnumMemoryModules), entry!(self, zesMemoryGetProperties));
        self.enumerate("zesDeviceEnumMemoryModules", e, "zesMemoryGetProperties", p)
    }

    /// `zesDeviceProcessesGetState`: the processes using the device now. The list may grow
    /// between the count query and the call that fills it (the driver then answers
    /// ZE_RESULT_ERROR_INVALID_SIZE): the array is sized with room to spare and the call tried
    /// again, larger, up to [`MAX_PROCESSES`] entries; what the driver returns last is kept.
    pub fn processes(&self) -> Result<Vec<zes_process_state_t>, ZeError> {
        const CALL: &str = "zesDeviceProcessesGetState";
        let f = entry!(self, zesDeviceProcessesGetState);
        let mut n = 0u32;
        // SAFETY: a count query (null array) on a Sysman (or core) device handle.
        check(CALL, unsafe { f(self.handle, &mut n, std::ptr::null_mut()) })?;
        let mut room = (n as usize + 8).min(MAX_PROCESSES);
        loop {
            let mut v = vec![zes_process_state_t::default(); room];
            let mut count = room as u32;
            // SAFETY: `v` holds `count` valid structs with their stype set.
            let r = unsafe { f(self.handle, &mut count, v.as_mut_ptr()) };
            if r == ZE_RESULT_ERROR_INVALID_SIZE && room < MAX_PROCESSES {
                room = (room * 2).min(MAX_PROCESSES);
                continue;
            }
            if r != ZE_RESULT_ERROR_INVALID_SIZE {
                check(CALL, r)?;
            }
            v.truncate((count as usize).min(room));
            return Ok(v);
        }
    }

    fn enumerate<H: Copy + NullHandle, P: Default>(
        &self,
        enum_name: &'static str,
        enumerate: unsafe extern "C" fn(zes_device_handle_t, *mut u32, *mut H) -> ze_result_t,
        props_name: &'static str,
        props: unsafe extern "C" fn(H, *mut P) -> ze_result_t,
    ) -> Result<Vec<(Domain<H>, P)>, ZeError> {
        let handles = query_array(enum_name, H::null(), |n, out| {
            // SAFETY: see query_array; a Sysman (or core) device handle.
            unsafe { enumerate(self.handle, n, out) }
        })?;
        handles
            .into_iter()
            .map(|h| {
                let mut p = P::default();
                // SAFETY: `h` was just enumerated; `p` is a valid struct with its stype set.
                check(props_name, unsafe { props(h, &mut p) })?;
                Ok((Domain { ze: self.ze.clone(), handle: h }, p))
            })
            .collect()
    }
}

/// Most processes read of one device at a time: a driver reporting more gets the first this many
/// (a host runs far fewer processes on one device).
pub const MAX_PROCESSES: usize = 4096;

/// A null value of a handle type, for `query_array`.
pub trait NullHandle {
    /// The null handle.
    fn null() -> Self;
}

impl<T> NullHandle for *mut T {
    fn null() -> Self {
        std::ptr::null_mut()
    }
}

/// One Sysman domain (frequency domain, power domain, sensor, engine group, memory module).
#[derive(Clone)]
pub struct Domain<H> {
    ze: Ze,
    handle: H,
}

impl Domain<zes_freq_handle_t> {
    /// `zesFrequencyGetState`.
    pub fn state(&self) -> Result<zes_freq_state_t, ZeError> {
        let f = entry!(self, zesFrequencyGetState);
        let mut s = zes_freq_state_t::default();
        // SAFETY: an enumerated handle and a valid state struct.
        check("zesFrequencyGetState", unsafe { f(self.handle, &mut s) })?;
        Ok(s)
    }
}

impl Domain<zes_pwr_handle_t> {
    /// `zesPowerGetEnergyCounter`: (µJ, µs).
    pub fn energy(&self) -> Result<zes_power_energy_counter_t, ZeError> {
        let f = entry!(self, zesPowerGetEnergyCounter);
        let mut e = zes_power_energy_counter_t::default();
        // SAFETY: an enumerated handle and a valid struct.
        check("zesPowerGetEnergyCounter", unsafe { f(self.handle, &mut e) })?;
        Ok(e)
    }
}

impl Domain<zes_temp_handle_t> {
    /// `zesTemperatureGetState`: °C.
    pub fn celsius(&self) -> Result<f64, ZeError> {
        let f = entry!(self, zesTemperatureGetState);
        let mut t = 0.0;
        // SAFETY: an enumerated handle and a valid out-pointer.
        check("zesTemperatureGetState", unsafe { f(self.handle, &mut t) })?;
        Ok(t)
    }
}

impl Domain<zes_engine_handle_t> {
    /// `zesEngineGetActivity`: (active µs, µs).
    pub fn activity(&self) -> Result<zes_engine_stats_t, ZeError> {
        let f = entry!(self, zesEngineGetActivity);
        let mut s = zes_engine_stats_t::default();
        // SAFETY: an enumerated handle and a valid struct.
        check("zesEngineGetActivity", unsafe { f(self.handle, &mut s) })?;
        Ok(s)
    }
}

impl Domain<zes_mem_handle_t> {
    /// `zesMemoryGetState`.
    pub fn state(&self) -> Result<zes_mem_state_t, ZeError> {
        let f = entry!(self, zesMemoryGetState);
        let mut s = zes_mem_state_t::default();
        // SAFETY: an enumerated handle and a valid struct.
        check("zesMemoryGetState", unsafe { f(self.handle, &mut s) })?;
        Ok(s)
    }

    /// `zesMemoryGetBandwidth`.
    pub fn bandwidth(&self) -> Result<zes_mem_bandwidth_t, ZeError> {
        let f = entry!(self, zesMemoryGetBandwidth);
        let mut b = zes_mem_bandwidth_t::default();
        // SAFETY: an enumerated handle and a valid struct.
        check("zesMemoryGetBandwidth", unsafe { f(self.handle, &mut b) })?;
        Ok(b)
    }
}

/// What `zescope list` shows: the pieces of telemetry a device offers ("frequency ×1, power
/// ×1, ..."), or why none.
pub fn summary(device: &Device) -> Result<String, String> {
    let s = Sysman::open(device).map_err(|e| format!("no Sysman ({} answered {})", e.call, e.name()))?;
    let mut parts = Vec::new();
    let mut count = |what: &str, n: Result<usize, ZeError>| match n {
        Ok(0) => {}
        Ok(n) => parts.push(format!("{what} ×{n}")),
        Err(e) if e.code == ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS => parts.push(format!("{what}: privileged only")),
        Err(_) => {}
    };
    count("frequency", s.frequency_domains().map(|v| v.len()));
    count("power", s.power_domains().map(|v| v.len()));
    count("temperature", s.temperature_sensors().map(|v| v.len()));
    count("engines", s.engine_groups().map(|v| v.len()));
    count("memory", s.memory_modules().map(|v| v.len()));
    if parts.is_empty() {
        return Err(format!("Sysman ({}) offers none of frequency, power, temperature, engines, memory", s.via.name()));
    }
    Ok(format!("{} (through {})", parts.join(", "), s.via.name()))
}
