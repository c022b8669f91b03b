//! The driver side of the loader interface: the `*ProcAddrTable` getters that `libze_sim.so`
//! exports. The loader (1.8.12) looks up every one of the 53 getters of its headers and fails
//! `zeInit` with ZE_RESULT_ERROR_UNINITIALIZED if one is missing, so all are exported; the
//! slots the simulated driver implements are filled, the rest stay null (the loader answers
//! those calls with ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, or ZE_RESULT_ERROR_UNINITIALIZED in
//! intercept mode). So do the slots of entry points the configuration names in
//! `empty_entry_points` (read from the process-wide configuration when the loader asks).
//!
//! Newer loaders also look up `zetGetDeviceExpProcAddrTable` (concurrent groups, run-time
//! metrics enable and disable), and loaders of API 1.10 and newer
//! `zetGetMetricTracerExpProcAddrTable` and
//! `zetGetMetricDecoderExpProcAddrTable` (the metric tracer and decoder, tables the 1.4 headers
//! lack; optional to a loader, so 1.8.12 never asks): exported here from the hand-written tables
//! of `level_zero_sys::tracer`.

use core::ffi::c_void;

use level_zero_sys::ddi::{self, Pfn};
use level_zero_sys::*;

/// Erases a typed entry point into a DDI slot.
///
/// SAFETY (for callers): `F` is an `unsafe extern "C" fn(..) -> ze_result_t` type, and the slot it
/// is stored in is called by the loader with that same C signature.
unsafe fn erase<F: Copy>(f: F) -> Pfn {
    assert_eq!(size_of::<F>(), size_of::<unsafe extern "C" fn()>());
    // SAFETY: F is a function pointer of the same size (asserted); see the function's contract.
    Some(unsafe { std::mem::transmute_copy::<F, unsafe extern "C" fn()>(&f) })
}

/// Fills the table named `table` at `t`.
///
/// SAFETY (for callers): `t` points to a writable table of that type.
unsafe fn fill(table: &str, t: *mut c_void) {
    let a = crate::entry::full_api();
    let empty = empty_entry_points();
    macro_rules! slots {
        ($ty:ident { $($slot:ident = $f:ident),* $(,)? }) => {{
            // SAFETY: the caller guarantees `t` is a `$ty`.
            let t = unsafe { &mut *t.cast::<ddi::$ty>() };
            $(
                t.$slot = if empty.iter().any(|e| e == stringify!($f)) {
                    None
                } else {
                    // SAFETY: each slot gets the entry point with exactly the C signature of that slot.
                    unsafe { erase(a.$f) }
                };
            )*
        }};
    }
    // The same for entry points that are `Option`s in the `Api` (ze-sim implements them all).
    macro_rules! optional_slots {
        ($ty:ident { $($slot:ident = $f:ident),* $(,)? }) => {{
            // SAFETY: the caller guarantees `t` is a `$ty`.
            let t = unsafe { &mut *t.cast::<ddi::$ty>() };
            $(
                t.$slot = match a.$f {
                    Some(f) if !empty.iter().any(|e| e == stringify!($f)) => {
                        // SAFETY: each slot gets the entry point with exactly the C signature of that slot.
                        unsafe { erase(f) }
                    }
                    _ => None,
                };
            )*
        }};
    }
    match table {
        "ze_global_dditable_t" => slots!(ze_global_dditable_t { pfnInit = zeInit }),
        "ze_driver_dditable_t" => slots!(ze_driver_dditable_t {
            pfnGet = zeDriverGet,
            pfnGetApiVersion = zeDriverGetApiVersion,
            pfnGetProperties = zeDriverGetProperties,
            pfnGetExtensionProperties = zeDriverGetExtensionProperties,
            pfnGetExtensionFunctionAddress = zeDriverGetExtensionFunctionAddress,
        }),
        "ze_device_dditable_t" => {
            slots!(ze_device_dditable_t {
                pfnGet = zeDeviceGet,
                pfnGetSubDevices = zeDeviceGetSubDevices,
                pfnGetProperties = zeDeviceGetProperties,
                pfnGetStatus = zeDeviceGetStatus,
                pfnGetGlobalTimestamps = zeDeviceGetGlobalTimestamps,
            });
            optional_slots!(ze_device_dditable_t { pfnPciGetPropertiesExt = zeDevicePciGetPropertiesExt });
        }
        "ze_context_dditable_t" => slots!(ze_context_dditable_t {
            pfnCreate = zeContextCreate,
            pfnDestroy = zeContextDestroy,
        }),
        "ze_mem_dditable_t" => slots!(ze_mem_dditable_t {
            pfnAllocDevice = zeMemAllocDevice,
            pfnAllocHost = zeMemAllocHost,
            pfnFree = zeMemFree,
        }),
        "ze_command_list_dditable_t" => slots!(ze_command_list_dditable_t {
            pfnCreateImmediate = zeCommandListCreateImmediate,
            pfnDestroy = zeCommandListDestroy,
            pfnAppendMemoryCopy = zeCommandListAppendMemoryCopy,
        }),
        "zet_metric_group_dditable_t" => {
            slots!(zet_metric_group_dditable_t {
                pfnGet = zetMetricGroupGet,
                pfnGetProperties = zetMetricGroupGetProperties,
            });
            optional_slots!(zet_metric_group_dditable_t {
                pfnCalculateMetricValues = zetMetricGroupCalculateMetricValues,
            });
        }
        "zet_metric_group_exp_dditable_t" => optional_slots!(zet_metric_group_exp_dditable_t {
            pfnCalculateMultipleMetricValuesExp = zetMetricGroupCalculateMultipleMetricValuesExp,
        }),
        "zet_metric_streamer_dditable_t" => optional_slots!(zet_metric_streamer_dditable_t {
            pfnOpen = zetMetricStreamerOpen,
            pfnClose = zetMetricStreamerClose,
            pfnReadData = zetMetricStreamerReadData,
        }),
        "ze_event_pool_dditable_t" => optional_slots!(ze_event_pool_dditable_t {
            pfnCreate = zeEventPoolCreate,
            pfnDestroy = zeEventPoolDestroy,
        }),
        "ze_event_dditable_t" => optional_slots!(ze_event_dditable_t {
            pfnCreate = zeEventCreate,
            pfnDestroy = zeEventDestroy,
            pfnHostSynchronize = zeEventHostSynchronize,
            pfnQueryStatus = zeEventQueryStatus,
            pfnHostReset = zeEventHostReset,
        }),
        "zet_metric_dditable_t" => slots!(zet_metric_dditable_t {
            pfnGet = zetMetricGet,
            pfnGetProperties = zetMetricGetProperties,
        }),
        "zet_context_dditable_t" => slots!(zet_context_dditable_t {
            pfnActivateMetricGroups = zetContextActivateMetricGroups,
        }),
        "zes_device_dditable_t" => optional_slots!(zes_device_dditable_t {
            pfnGetProperties = zesDeviceGetProperties,
            pfnEnumEngineGroups = zesDeviceEnumEngineGroups,
            pfnEnumFrequencyDomains = zesDeviceEnumFrequencyDomains,
            pfnEnumMemoryModules = zesDeviceEnumMemoryModules,
            pfnEnumPowerDomains = zesDeviceEnumPowerDomains,
            pfnEnumTemperatureSensors = zesDeviceEnumTemperatureSensors,
            pfnProcessesGetState = zesDeviceProcessesGetState,
        }),
        "zes_frequency_dditable_t" => optional_slots!(zes_frequency_dditable_t {
            pfnGetProperties = zesFrequencyGetProperties,
            pfnGetState = zesFrequencyGetState,
        }),
        "zes_power_dditable_t" => optional_slots!(zes_power_dditable_t {
            pfnGetProperties = zesPowerGetProperties,
            pfnGetEnergyCounter = zesPowerGetEnergyCounter,
        }),
        "zes_temperature_dditable_t" => optional_slots!(zes_temperature_dditable_t {
            pfnGetProperties = zesTemperatureGetProperties,
            pfnGetState = zesTemperatureGetState,
        }),
        "zes_engine_dditable_t" => optional_slots!(zes_engine_dditable_t {
            pfnGetProperties = zesEngineGetProperties,
            pfnGetActivity = zesEngineGetActivity,
        }),
        "zes_memory_dditable_t" => optional_slots!(zes_memory_dditable_t {
            pfnGetProperties = zesMemoryGetProperties,
            pfnGetState = zesMemoryGetState,
            pfnGetBandwidth = zesMemoryGetBandwidth,
        }),
        _ => {}
    }
}

/// The process-wide configuration's empty entry points (none if it is unusable: then `zeInit`
/// reports why).
fn empty_entry_points() -> Vec<String> {
    let Ok(id) = crate::global_id() else {
        return Vec::new();
    };
    let reg = crate::registry::lock();
    reg.instances.get(&id).map(|i| i.config.empty_entry_points.clone()).unwrap_or_default()
}

/// `zes_global_dditable_t` (Level Zero 1.5): the table of `zesInit`, which the 1.4 headers lack.
#[repr(C)]
pub struct ZesGlobalDdiTable {
    /// `zesInit`
    pub pfnInit: Pfn,
}

/// Slots that API 1.5 appended to tables of the 1.4 headers: `zesDriverGet` (after the two
/// slots of `zes_driver_dditable_t`) and `zesDeviceGet` (after the 28 of
/// `zes_device_dditable_t`).
///
/// SAFETY (for callers): `t` points to a writable table of that type as API 1.5 or newer lays it
/// out.
unsafe fn fill_1_5(table: &str, t: *mut c_void) {
    let a = crate::entry::full_api();
    let empty = empty_entry_points();
    let slot = |name: &str, f: Option<Pfn>| if empty.iter().any(|e| e == name) { None } else { f.flatten() };
    let (index, value) = match table {
        "zes_driver_dditable_t" => {
            // SAFETY: the slot's C signature is zesDriverGet's.
            let f = a.zesDriverGet.map(|f| unsafe { erase(f) });
            (size_of::<ddi::zes_driver_dditable_t>() / size_of::<Pfn>(), slot("zesDriverGet", f))
        }
        "zes_device_dditable_t" => {
            // SAFETY: the slot's C signature is zesDeviceGet's.
            let f = a.zesDeviceGet.map(|f| unsafe { erase(f) });
            (size_of::<ddi::zes_device_dditable_t>() / size_of::<Pfn>(), slot("zesDeviceGet", f))
        }
        _ => return,
    };
    // SAFETY: the caller guarantees the table has the 1.5 slot right after the 1.4 ones.
    unsafe { t.cast::<Pfn>().add(index).write(value) };
}

/// A slot for `f`, unless the entry point `name` is emptied by the configuration.
fn optional_slot<F: Copy>(empty: &[String], name: &str, f: Option<F>) -> Pfn {
    match f {
        // SAFETY: callers store `f` in the slot whose C signature is `f`'s.
        Some(f) if !empty.iter().any(|e| e == name) => unsafe { erase(f) },
        _ => None,
    }
}

/// Checks a getter's arguments and runs `fill` on the table (panics become UNKNOWN).
fn optional_getter<T>(version: ze_api_version_t, table: *mut T, fill: impl FnOnce(&mut T, &[String])) -> ze_result_t {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the loader passes null or a writable table of this type.
        let Some(table) = (unsafe { table.as_mut() }) else {
            return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        };
        if ze_major_version(version) != ze_major_version(ZE_API_VERSION_CURRENT) {
            return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
        }
        fill(table, &empty_entry_points());
        ZE_RESULT_SUCCESS
    }));
    r.unwrap_or(ZE_RESULT_ERROR_UNKNOWN)
}

/// Loader entry point (API 1.10): fills the metric tracer's table.
///
/// # Safety
/// `table` is null or points to a writable `zet_metric_tracer_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetMetricTracerExpProcAddrTable(
    version: ze_api_version_t,
    table: *mut zet_metric_tracer_exp_dditable_t,
) -> ze_result_t {
    optional_getter(version, table, |t, empty| {
        let a = crate::entry::full_api();
        t.pfnCreateExp = optional_slot(empty, "zetMetricTracerCreateExp", a.zetMetricTracerCreateExp);
        t.pfnDestroyExp = optional_slot(empty, "zetMetricTracerDestroyExp", a.zetMetricTracerDestroyExp);
        t.pfnEnableExp = optional_slot(empty, "zetMetricTracerEnableExp", a.zetMetricTracerEnableExp);
        t.pfnDisableExp = optional_slot(empty, "zetMetricTracerDisableExp", a.zetMetricTracerDisableExp);
        t.pfnReadDataExp = optional_slot(empty, "zetMetricTracerReadDataExp", a.zetMetricTracerReadDataExp);
        t.pfnDecodeExp = optional_slot(empty, "zetMetricTracerDecodeExp", a.zetMetricTracerDecodeExp);
    })
}

/// Loader entry point (API 1.10): fills the metric decoder's table.
///
/// # Safety
/// `table` is null or points to a writable `zet_metric_decoder_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetMetricDecoderExpProcAddrTable(
    version: ze_api_version_t,
    table: *mut zet_metric_decoder_exp_dditable_t,
) -> ze_result_t {
    optional_getter(version, table, |t, empty| {
        let a = crate::entry::full_api();
        t.pfnCreateExp = optional_slot(empty, "zetMetricDecoderCreateExp", a.zetMetricDecoderCreateExp);
        t.pfnDestroyExp = optional_slot(empty, "zetMetricDecoderDestroyExp", a.zetMetricDecoderDestroyExp);
        t.pfnGetDecodableMetricsExp =
            optional_slot(empty, "zetMetricDecoderGetDecodableMetricsExp", a.zetMetricDecoderGetDecodableMetricsExp);
    })
}

/// `zet_device_exp_dditable_t` (`zet_ddi.h` of newer APIs): the experimental device calls,
/// which the 1.4 headers of `level_zero_sys::ddi` lack.
#[repr(C)]
pub struct ZetDeviceExpDdiTable {
    /// `zetDeviceGetConcurrentMetricGroupsExp`
    pub pfnGetConcurrentMetricGroupsExp: Pfn,
    /// `zetDeviceCreateMetricGroupsFromMetricsExp` (not implemented: left null)
    pub pfnCreateMetricGroupsFromMetricsExp: Pfn,
    /// `zetDeviceEnableMetricsExp`
    pub pfnEnableMetricsExp: Pfn,
    /// `zetDeviceDisableMetricsExp`
    pub pfnDisableMetricsExp: Pfn,
}

/// Loader entry point (optional to a loader, looked up by newer ones such as 1.32): fills the
/// experimental device table, through which the loader
/// routes `zetDeviceGetConcurrentMetricGroupsExp` and the run-time metrics enable and disable
/// (without it a loader answers them ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, whatever
/// `zeDriverGetExtensionFunctionAddress` returns).
///
/// # Safety
/// `table` is null or points to a writable `zet_device_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetDeviceExpProcAddrTable(
    version: ze_api_version_t,
    table: *mut ZetDeviceExpDdiTable,
) -> ze_result_t {
    optional_getter(version, table, |t, empty| {
        let concurrent: crate::entry::GetConcurrentGroups = crate::entry::sim_zetDeviceGetConcurrentMetricGroupsExp;
        let enable: unsafe extern "C" fn(zet_device_handle_t) -> ze_result_t =
            crate::entry::sim_zetDeviceEnableMetricsExp;
        let disable: unsafe extern "C" fn(zet_device_handle_t) -> ze_result_t =
            crate::entry::sim_zetDeviceDisableMetricsExp;
        t.pfnGetConcurrentMetricGroupsExp =
            optional_slot(empty, "zetDeviceGetConcurrentMetricGroupsExp", Some(concurrent));
        t.pfnCreateMetricGroupsFromMetricsExp = None;
        t.pfnEnableMetricsExp = optional_slot(empty, "zetDeviceEnableMetricsExp", Some(enable));
        t.pfnDisableMetricsExp = optional_slot(empty, "zetDeviceDisableMetricsExp", Some(disable));
    })
}

/// Loader entry point (API 1.5): fills the Sysman global table (`zesInit`).
///
/// # Safety
/// `table` is null or points to a writable `zes_global_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetGlobalProcAddrTable(
    version: ze_api_version_t,
    table: *mut ZesGlobalDdiTable,
) -> ze_result_t {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: the caller's contract.
        let Some(table) = (unsafe { table.as_mut() }) else {
            return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        };
        if ze_major_version(version) != ze_major_version(ZE_API_VERSION_CURRENT) {
            return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
        }
        let empty = empty_entry_points();
        table.pfnInit = match crate::entry::full_api().zesInit {
            // SAFETY: the slot's C signature is zesInit's.
            Some(f) if !empty.iter().any(|e| e == "zesInit") => unsafe { erase(f) },
            _ => None,
        };
        ZE_RESULT_SUCCESS
    });
    r.unwrap_or(ZE_RESULT_ERROR_UNKNOWN)
}

/// `pfnGetGlobalTimestampsExp`, the slot API 1.5 appended to `zet_metric_group_exp_dditable_t`
/// (after `pfnCalculateMultipleMetricValuesExp`).
///
/// SAFETY (for callers): `t` points to a writable `zet_metric_group_exp_dditable_t` as API 1.5
/// or newer lays it out.
unsafe fn fill_metric_group_exp_1_5(table: &str, t: *mut c_void) {
    if table != "zet_metric_group_exp_dditable_t" {
        return;
    }
    let f: crate::entry::GlobalTimestamps = crate::entry::sim_zetMetricGroupGetGlobalTimestampsExp;
    let value = optional_slot(&empty_entry_points(), "zetMetricGroupGetGlobalTimestampsExp", Some(f));
    let index = size_of::<ddi::zet_metric_group_exp_dditable_t>() / size_of::<Pfn>();
    // SAFETY: the caller guarantees the table has the 1.5 slot right after the 1.4 ones.
    unsafe { t.cast::<Pfn>().add(index).write(value) };
}

/// `pfnGetExportDataExp`, the slot API 1.6 appended to `zet_metric_group_exp_dditable_t` (after
/// 1.5's `pfnGetGlobalTimestampsExp`).
///
/// SAFETY (for callers): `t` points to a writable `zet_metric_group_exp_dditable_t` as API 1.6
/// or newer lays it out.
unsafe fn fill_metric_group_exp_1_6(table: &str, t: *mut c_void) {
    if table != "zet_metric_group_exp_dditable_t" {
        return;
    }
    let f: crate::entry::GetExportData = crate::entry::sim_zetMetricGroupGetExportDataExp;
    let value = optional_slot(&empty_entry_points(), "zetMetricGroupGetExportDataExp", Some(f));
    let index = size_of::<ddi::zet_metric_group_exp_dditable_t>() / size_of::<Pfn>() + 1;
    // SAFETY: the caller guarantees the table has the 1.6 slot right after the 1.5 one.
    unsafe { t.cast::<Pfn>().add(index).write(value) };
}

/// `zeInitDrivers`, the slot API 1.10 appended to `ze_global_dditable_t` (after `pfnInit`).
///
/// SAFETY (for callers): `t` points to a writable `ze_global_dditable_t` as API 1.10 or newer
/// lays it out.
unsafe fn fill_1_10(table: &str, t: *mut c_void) {
    if table != "ze_global_dditable_t" {
        return;
    }
    let empty = empty_entry_points();
    let f: crate::entry::InitDrivers = crate::entry::devices::sim_zeInitDrivers;
    // SAFETY: the slot's C signature is zeInitDrivers'.
    let value = if empty.iter().any(|e| e == "zeInitDrivers") { None } else { unsafe { erase(f) } };
    let index = size_of::<ddi::ze_global_dditable_t>() / size_of::<Pfn>();
    // SAFETY: the caller guarantees the table has the 1.10 slot right after `pfnInit`.
    unsafe { t.cast::<Pfn>().add(index).write(value) };
}

fn getter(version: ze_api_version_t, table: &str, t: *mut c_void) -> ze_result_t {
    let r = std::panic::catch_unwind(|| {
        if t.is_null() {
            return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        }
        if ze_major_version(version) != ze_major_version(ZE_API_VERSION_CURRENT) {
            return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
        }
        // SAFETY: the loader passes a writable table of the type this getter fills.
        unsafe { fill(table, t) };
        if version >= ze_make_version(1, 5) {
            // SAFETY: a loader of API 1.5 or newer passes the longer tables of its headers.
            unsafe { fill_1_5(table, t) };
            // SAFETY: as above.
            unsafe { fill_metric_group_exp_1_5(table, t) };
        }
        if version >= ze_make_version(1, 6) {
            // SAFETY: a loader of API 1.6 or newer passes the longer table of its headers.
            unsafe { fill_metric_group_exp_1_6(table, t) };
        }
        if version >= ze_make_version(1, 10) {
            // SAFETY: a loader of API 1.10 or newer passes the global table of its headers.
            unsafe { fill_1_10(table, t) };
        }
        ZE_RESULT_SUCCESS
    });
    r.unwrap_or(ZE_RESULT_ERROR_UNKNOWN)
}

macro_rules! export_getter {
    ($getter:ident, $table:ident) => {
        /// Loader entry point: fills this driver's table.
        ///
        /// # Safety
        /// `table` is null or points to a writable table of this type.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $getter(version: ze_api_version_t, table: *mut ddi::$table) -> ze_result_t {
            getter(version, stringify!($table), table.cast())
        }
    };
}

level_zero_sys::for_each_ddi_getter!(export_getter);
