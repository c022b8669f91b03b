//! Sysman entry points (`zesInit`, `zesDriverGet`, `zesDeviceGet`, device properties, and the
//! frequency, power, temperature, engine and memory queries, the processes using a device). Device calls take a Sysman device
//! handle from `zesDeviceGet`, or a core device handle when `ZES_ENABLE_SYSMAN=1` was set at
//! `zeInit` (see `crate::sysman`).

use level_zero_sys::*;

use super::{guard, out, out_array, with};
use crate::ops_driver::fill_array;
use crate::registry::Obj;
use crate::sysman::SysObj;

pub(crate) unsafe extern "C" fn sim_zesInit(_flags: zes_init_flags_t) -> ze_result_t {
    guard("zesInit", || {
        crate::with_global(|inst| {
            super::check_not_empty(inst)?;
            inst.zes_init()
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zesDriverGet(count: *mut u32, drivers: *mut zes_driver_handle_t) -> ze_result_t {
    guard("zesDriverGet", || {
        // SAFETY: API contract for out-parameters.
        let count = unsafe { out(count) }?;
        crate::with_global(|inst| {
            super::check_not_empty(inst)?;
            inst.zes_ready()?;
            let handle = inst.sysman.driver as zes_driver_handle_t;
            // SAFETY: API contract: `drivers` holds `*count` elements when non-null.
            fill_array(&[handle], count, unsafe { out_array(drivers, *count) });
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zesDeviceGet(
    h: zes_driver_handle_t,
    count: *mut u32,
    devices: *mut zes_device_handle_t,
) -> ze_result_t {
    guard("zesDeviceGet", || {
        // SAFETY: API contract.
        let count = unsafe { out(count) }?;
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Sysman(SysObj::Driver) => ());
            inst.zes_ready()?;
            // SAFETY: API contract.
            fill_array(&inst.zes_devices(), count, unsafe { out_array(devices, *count) });
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zesDeviceGetProperties(
    h: zes_device_handle_t,
    p: *mut zes_device_properties_t,
) -> ze_result_t {
    guard("zesDeviceGetProperties", || {
        // SAFETY: API contract.
        let p = unsafe { out(p) }?;
        with(h, |inst, obj, _| {
            let d = inst.sysman_device(obj)?;
            inst.zes_device_properties(d, p)
        })
    })
}

/// A `zesDeviceEnum*` entry point: the device's handles of one piece.
macro_rules! enumerate {
    ($name:ident, $label:literal, $piece:ident, $handle:ty, |$inst:ident, $d:ident| $handles:expr) => {
        pub(crate) unsafe extern "C" fn $name(
            h: zes_device_handle_t,
            count: *mut u32,
            out_handles: *mut $handle,
        ) -> ze_result_t {
            guard($label, || {
                // SAFETY: API contract.
                let count = unsafe { out(count) }?;
                with(h, |$inst, obj, _| {
                    let $d = $inst.sysman_device(obj)?;
                    $inst.root_only(crate::sysman::SysmanPiece::$piece)?;
                    let handles: Vec<$handle> = $handles.iter().map(|&x| x as $handle).collect();
                    // SAFETY: API contract: `out_handles` holds `*count` elements when non-null.
                    fill_array(&handles, count, unsafe { out_array(out_handles, *count) });
                    Ok(())
                })
            })
        }
    };
}

enumerate!(
    sim_zesDeviceEnumFrequencyDomains,
    "zesDeviceEnumFrequencyDomains",
    Frequency,
    zes_freq_handle_t,
    |inst, d| inst.freq_domains(d)
);
enumerate!(sim_zesDeviceEnumPowerDomains, "zesDeviceEnumPowerDomains", Power, zes_pwr_handle_t, |inst, d| inst
    .power_domains(d));
enumerate!(
    sim_zesDeviceEnumTemperatureSensors,
    "zesDeviceEnumTemperatureSensors",
    Temperature,
    zes_temp_handle_t,
    |inst, d| inst.temp_sensors(d)
);
enumerate!(sim_zesDeviceEnumEngineGroups, "zesDeviceEnumEngineGroups", Engines, zes_engine_handle_t, |inst, d| inst
    .engine_groups(d));
enumerate!(sim_zesDeviceEnumMemoryModules, "zesDeviceEnumMemoryModules", Memory, zes_mem_handle_t, |inst, d| inst
    .memory_modules(d));

pub(crate) unsafe extern "C" fn sim_zesDeviceProcessesGetState(
    h: zes_device_handle_t,
    count: *mut u32,
    processes: *mut zes_process_state_t,
) -> ze_result_t {
    guard("zesDeviceProcessesGetState", || {
        // SAFETY: API contract.
        let count = unsafe { out(count) }?;
        with(h, |inst, obj, _| {
            let d = inst.sysman_device(obj)?;
            inst.failing(crate::sysman::SysmanPiece::Processes)?;
            // SAFETY: API contract: `processes` holds `*count` elements when non-null.
            let out = unsafe { out_array(processes, *count) };
            inst.processes_get_state(d, count, out)
        })
    })
}

/// A query on one Sysman domain handle: `$pat` picks the object, `$body` fills the output.
macro_rules! query {
    ($name:ident, $label:literal, $handle:ty, $out:ty, |$inst:ident, $p:ident| $pat:pat => $body:expr) => {
        pub(crate) unsafe extern "C" fn $name(h: $handle, p: *mut $out) -> ze_result_t {
            guard($label, || {
                // SAFETY: API contract.
                let $p = unsafe { out(p) }?;
                with(h, |$inst, obj, _| match obj {
                    $pat => $body,
                    _ => Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE),
                })
            })
        }
    };
}

query!(sim_zesFrequencyGetProperties, "zesFrequencyGetProperties", zes_freq_handle_t, zes_freq_properties_t,
    |inst, p| Obj::Sysman(SysObj::Freq(d)) => inst.freq_properties(d, p));
query!(sim_zesFrequencyGetState, "zesFrequencyGetState", zes_freq_handle_t, zes_freq_state_t,
    |inst, p| Obj::Sysman(SysObj::Freq(d)) => inst.freq_state(d, p));
query!(sim_zesPowerGetProperties, "zesPowerGetProperties", zes_pwr_handle_t, zes_power_properties_t,
    |inst, p| Obj::Sysman(SysObj::Power(d)) => inst.power_properties(d, p));
query!(sim_zesPowerGetEnergyCounter, "zesPowerGetEnergyCounter", zes_pwr_handle_t, zes_power_energy_counter_t,
    |inst, p| Obj::Sysman(SysObj::Power(_)) => inst.energy_counter(p));
query!(sim_zesTemperatureGetProperties, "zesTemperatureGetProperties", zes_temp_handle_t, zes_temp_properties_t,
    |inst, p| Obj::Sysman(SysObj::Temp(d, i)) => inst.temp_properties(d, i, p));
query!(sim_zesTemperatureGetState, "zesTemperatureGetState", zes_temp_handle_t, f64,
    |inst, p| Obj::Sysman(SysObj::Temp(d, i)) => inst.temperature(d, i).map(|v| *p = v));
query!(sim_zesEngineGetProperties, "zesEngineGetProperties", zes_engine_handle_t, zes_engine_properties_t,
    |inst, p| Obj::Sysman(SysObj::Engine(d, i)) => inst.engine_properties(d, i, p));
query!(sim_zesEngineGetActivity, "zesEngineGetActivity", zes_engine_handle_t, zes_engine_stats_t,
    |inst, p| Obj::Sysman(SysObj::Engine(d, i)) => inst.engine_activity(d, i, p));
query!(sim_zesMemoryGetProperties, "zesMemoryGetProperties", zes_mem_handle_t, zes_mem_properties_t,
    |inst, p| Obj::Sysman(SysObj::Memory(d)) => inst.memory_properties(d, p));
query!(sim_zesMemoryGetState, "zesMemoryGetState", zes_mem_handle_t, zes_mem_state_t,
    |inst, p| Obj::Sysman(SysObj::Memory(d)) => inst.memory_state(d, p));
query!(sim_zesMemoryGetBandwidth, "zesMemoryGetBandwidth", zes_mem_handle_t, zes_mem_bandwidth_t,
    |inst, p| Obj::Sysman(SysObj::Memory(d)) => inst.memory_bandwidth(d, p));
