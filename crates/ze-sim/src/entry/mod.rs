//! The driver's entry points: `extern "C"` functions with the Level Zero signatures. Each one
//! checks its pointers, finds the instance that owns the handle, and calls the typed operation.
//! No panic crosses the boundary: every body runs under `catch_unwind` and a panic becomes
//! ZE_RESULT_ERROR_UNKNOWN.
//!
//! An entry point named in the owning instance's `empty_entry_points` answers
//! ZE_RESULT_ERROR_UNSUPPORTED_FEATURE before doing anything (the name of the running entry point
//! is kept in a thread-local set by `guard`).
//!
//! They are not `#[no_mangle]`: a driver exports only its `*ProcAddrTable` getters (see `ddi`),
//! and these names must not collide with the loader's own `zeInit`, `zeDriverGet`, ...

use std::cell::Cell;
use std::panic::AssertUnwindSafe;

use level_zero_sys::*;

use crate::instance::Instance;
use crate::ops_driver::R;
use crate::registry::{self, HandleChanges, Obj};

thread_local! {
    /// The entry point running on this thread (set by `guard`).
    static CURRENT: Cell<&'static str> = const { Cell::new("") };
}

/// Err(UNSUPPORTED_FEATURE) if the running entry point is one `inst` leaves empty.
pub(crate) fn check_not_empty(inst: &Instance) -> R<()> {
    let name = CURRENT.with(|c| c.get());
    if inst.config.is_empty_entry(name) { Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) } else { Ok(()) }
}

fn guard(name: &'static str, f: impl FnOnce() -> R<()>) -> ze_result_t {
    let previous = CURRENT.with(|c| c.replace(name));
    let r = std::panic::catch_unwind(AssertUnwindSafe(f));
    CURRENT.with(|c| c.set(previous));
    match r {
        Ok(Ok(())) => ZE_RESULT_SUCCESS,
        Ok(Err(r)) => r,
        Err(_) => {
            eprintln!("ze-sim: internal error (panic) in {name}; returning ZE_RESULT_ERROR_UNKNOWN");
            ZE_RESULT_ERROR_UNKNOWN
        }
    }
}

fn with<T>(h: *mut T, f: impl FnOnce(&mut Instance, Obj, &mut HandleChanges) -> R<()>) -> R<()> {
    if h.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    }
    registry::lock().with(h as usize, |inst, obj, ch| {
        check_not_empty(inst)?;
        f(inst, obj, ch)
    })
}

/// `&mut *p` for an out-parameter, or INVALID_NULL_POINTER.
///
/// SAFETY (for callers): a non-null `p` points to a valid, writable `T` (API contract).
unsafe fn out<'a, T>(p: *mut T) -> R<&'a mut T> {
    // SAFETY: see the function's contract.
    unsafe { p.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
}

/// The output array of a count/array query, if the caller passed one.
///
/// SAFETY (for callers): a non-null `p` points to at least `count` writable elements.
unsafe fn out_array<'a, T>(p: *mut T, count: u32) -> Option<&'a mut [T]> {
    // SAFETY: see the function's contract.
    (!p.is_null() && count > 0).then(|| unsafe { std::slice::from_raw_parts_mut(p, count as usize) })
}

macro_rules! expect_obj {
    ($obj:expr, $pat:pat => $v:expr) => {
        match $obj {
            $pat => $v,
            _ => return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE),
        }
    };
}

// Declared after the helpers above so the macro is in scope in both.
pub(crate) mod devices;

/// The C signature of `zeInitDrivers`.
pub(crate) type InitDrivers =
    unsafe extern "C" fn(*mut u32, *mut ze_driver_handle_t, *mut ze_init_driver_type_desc_t) -> ze_result_t;
mod metrics;
pub(crate) mod names;
mod stream;
mod sysman;
mod tracer;

pub(crate) use devices::*;
pub(crate) use metrics::*;
pub(crate) use stream::*;
pub(crate) use sysman::*;
pub(crate) use tracer::*;

/// The `Api` of the process-wide instance (created from the environment on first use): what
/// zescope calls when it runs on the built-in device. Its `Option` fields are `None` for the
/// entry points that instance leaves empty.
pub fn api() -> Api {
    let mut a = full_api();
    if let Ok(id) = crate::global_id() {
        let reg = registry::lock();
        if let Some(inst) = reg.instances.get(&id) {
            without_empty(&mut a, &inst.config);
        }
    }
    a
}

/// Sets to `None` the `Option` fields of `a` that `config` leaves empty.
pub(crate) fn without_empty(a: &mut Api, config: &crate::SimConfig) {
    macro_rules! drop_empty {
        ($($f:ident),*) => {
            $( if config.is_empty_entry(stringify!($f)) { a.$f = None; } )*
        };
    }
    drop_empty!(
        zetMetricGroupCreateExp,
        zetMetricGroupAddMetricExp,
        zetMetricGroupCloseExp,
        zetMetricGroupDestroyExp,
        zetDeviceEnableMetricsExp,
        zetDeviceDisableMetricsExp,
        zeEventPoolCreate,
        zeEventPoolDestroy,
        zeEventCreate,
        zeEventDestroy,
        zeEventHostSynchronize,
        zeEventQueryStatus,
        zeEventHostReset,
        zetMetricStreamerOpen,
        zetMetricStreamerReadData,
        zetMetricStreamerClose,
        zetMetricGroupCalculateMetricValues,
        zetMetricGroupCalculateMultipleMetricValuesExp,
        zesInit,
        zesDriverGet,
        zesDeviceGet,
        zesDeviceGetProperties,
        zesDeviceEnumFrequencyDomains,
        zesFrequencyGetProperties,
        zesFrequencyGetState,
        zesDeviceEnumPowerDomains,
        zesPowerGetProperties,
        zesPowerGetEnergyCounter,
        zesDeviceEnumTemperatureSensors,
        zesTemperatureGetProperties,
        zesTemperatureGetState,
        zesDeviceEnumEngineGroups,
        zesEngineGetProperties,
        zesEngineGetActivity,
        zesDeviceEnumMemoryModules,
        zesMemoryGetProperties,
        zesMemoryGetState,
        zesMemoryGetBandwidth,
        zetMetricTracerCreateExp,
        zetMetricTracerDestroyExp,
        zetMetricTracerEnableExp,
        zetMetricTracerDisableExp,
        zetMetricTracerReadDataExp,
        zetMetricDecoderCreateExp,
        zetMetricDecoderDestroyExp,
        zetMetricDecoderGetDecodableMetricsExp,
        zetMetricTracerDecodeExp
    );
}

/// Every entry point, whatever any configuration leaves empty.
pub(crate) fn full_api() -> Api {
    Api {
        library: None,
        zeInit: sim_zeInit,
        zeDriverGet: sim_zeDriverGet,
        zeDriverGetApiVersion: sim_zeDriverGetApiVersion,
        zeDriverGetProperties: sim_zeDriverGetProperties,
        zeDriverGetExtensionProperties: sim_zeDriverGetExtensionProperties,
        zeDriverGetExtensionFunctionAddress: sim_zeDriverGetExtensionFunctionAddress,
        zeDeviceGet: sim_zeDeviceGet,
        zeDeviceGetSubDevices: sim_zeDeviceGetSubDevices,
        zeDeviceGetProperties: sim_zeDeviceGetProperties,
        zeDeviceGetStatus: sim_zeDeviceGetStatus,
        zeDeviceGetGlobalTimestamps: sim_zeDeviceGetGlobalTimestamps,
        zeContextCreate: sim_zeContextCreate,
        zeContextDestroy: sim_zeContextDestroy,
        zeMemAllocDevice: sim_zeMemAllocDevice,
        zeMemAllocHost: sim_zeMemAllocHost,
        zeMemFree: sim_zeMemFree,
        zeCommandListCreateImmediate: sim_zeCommandListCreateImmediate,
        zeCommandListAppendMemoryCopy: sim_zeCommandListAppendMemoryCopy,
        zeCommandListDestroy: sim_zeCommandListDestroy,
        zetMetricGroupGet: sim_zetMetricGroupGet,
        zetMetricGroupGetProperties: sim_zetMetricGroupGetProperties,
        zetMetricGet: sim_zetMetricGet,
        zetMetricGetProperties: sim_zetMetricGetProperties,
        zetContextActivateMetricGroups: sim_zetContextActivateMetricGroups,
        zeInitDrivers: None,
        zesInit: Some(sim_zesInit),
        zesDriverGet: Some(sim_zesDriverGet),
        zesDeviceGet: Some(sim_zesDeviceGet),
        zesDeviceGetProperties: Some(sim_zesDeviceGetProperties),
        zesDeviceEnumFrequencyDomains: Some(sim_zesDeviceEnumFrequencyDomains),
        zesFrequencyGetProperties: Some(sim_zesFrequencyGetProperties),
        zesFrequencyGetState: Some(sim_zesFrequencyGetState),
        zesDeviceEnumPowerDomains: Some(sim_zesDeviceEnumPowerDomains),
        zesPowerGetProperties: Some(sim_zesPowerGetProperties),
        zesPowerGetEnergyCounter: Some(sim_zesPowerGetEnergyCounter),
        zesDeviceEnumTemperatureSensors: Some(sim_zesDeviceEnumTemperatureSensors),
        zesTemperatureGetProperties: Some(sim_zesTemperatureGetProperties),
        zesTemperatureGetState: Some(sim_zesTemperatureGetState),
        zesDeviceEnumEngineGroups: Some(sim_zesDeviceEnumEngineGroups),
        zesEngineGetProperties: Some(sim_zesEngineGetProperties),
        zesEngineGetActivity: Some(sim_zesEngineGetActivity),
        zesDeviceEnumMemoryModules: Some(sim_zesDeviceEnumMemoryModules),
        zesMemoryGetProperties: Some(sim_zesMemoryGetProperties),
        zesMemoryGetState: Some(sim_zesMemoryGetState),
        zesMemoryGetBandwidth: Some(sim_zesMemoryGetBandwidth),
        zelLoaderGetVersions: None,
        zelLoaderTranslateHandle: None,
        zetMetricGroupCreateExp: Some(sim_zetMetricGroupCreateExp),
        zetMetricGroupAddMetricExp: Some(sim_zetMetricGroupAddMetricExp),
        zetMetricGroupCloseExp: Some(sim_zetMetricGroupCloseExp),
        zetMetricGroupDestroyExp: Some(sim_zetMetricGroupDestroyExp),
        zetDeviceEnableMetricsExp: Some(sim_zetDeviceEnableMetricsExp),
        zetDeviceDisableMetricsExp: Some(sim_zetDeviceDisableMetricsExp),
        zeEventPoolCreate: Some(sim_zeEventPoolCreate),
        zeEventPoolDestroy: Some(sim_zeEventPoolDestroy),
        zeEventCreate: Some(sim_zeEventCreate),
        zeEventDestroy: Some(sim_zeEventDestroy),
        zeEventHostSynchronize: Some(sim_zeEventHostSynchronize),
        zeEventQueryStatus: Some(sim_zeEventQueryStatus),
        zeEventHostReset: Some(sim_zeEventHostReset),
        zetMetricStreamerOpen: Some(sim_zetMetricStreamerOpen),
        zetMetricStreamerReadData: Some(sim_zetMetricStreamerReadData),
        zetMetricStreamerClose: Some(sim_zetMetricStreamerClose),
        zetMetricGroupCalculateMetricValues: Some(sim_zetMetricGroupCalculateMetricValues),
        zetMetricGroupCalculateMultipleMetricValuesExp: Some(sim_zetMetricGroupCalculateMultipleMetricValuesExp),
        zetMetricTracerCreateExp: Some(sim_zetMetricTracerCreateExp),
        zetMetricTracerDestroyExp: Some(sim_zetMetricTracerDestroyExp),
        zetMetricTracerEnableExp: Some(sim_zetMetricTracerEnableExp),
        zetMetricTracerDisableExp: Some(sim_zetMetricTracerDisableExp),
        zetMetricTracerReadDataExp: Some(sim_zetMetricTracerReadDataExp),
        zetMetricDecoderCreateExp: Some(sim_zetMetricDecoderCreateExp),
        zetMetricDecoderDestroyExp: Some(sim_zetMetricDecoderDestroyExp),
        zetMetricDecoderGetDecodableMetricsExp: Some(sim_zetMetricDecoderGetDecodableMetricsExp),
        zetMetricTracerDecodeExp: Some(sim_zetMetricTracerDecodeExp),
    }
}
