//! The driver's entry points: `extern "C"` functions with the Level Zero signatures. Each one
//! checks its pointers, finds the instance that owns the handle, and calls the typed operation.
//! No panic crosses the boundary: every body runs under `catch_unwind` and a panic becomes
//! ZE_RESULT_ERROR_UNKNOWN.
//!
//! They are not `#[no_mangle]`: a driver exports only its `*ProcAddrTable` getters (see `ddi`),
//! and these names must not collide with the loader's own `zeInit`, `zeDriverGet`, ...

use core::ffi::{CStr, c_char, c_void};
use std::panic::AssertUnwindSafe;

use level_zero_sys::*;

use crate::instance::Instance;
use crate::ops_driver::{R, extension_function, fill_array};
use crate::registry::{self, HandleChanges, Obj};

fn guard(name: &str, f: impl FnOnce() -> R<()>) -> ze_result_t {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
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
    registry::lock().with(h as usize, f)
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

// ---- driver ---------------------------------------------------------------------------------

pub unsafe extern "C" fn sim_zeInit(_flags: ze_init_flags_t) -> ze_result_t {
    guard("zeInit", || crate::with_global(|inst| inst.init()))
}

pub unsafe extern "C" fn sim_zeDriverGet(count: *mut u32, drivers: *mut ze_driver_handle_t) -> ze_result_t {
    guard("zeDriverGet", || {
        // SAFETY: API contract for out-parameters.
        let count = unsafe { out(count) }?;
        crate::with_global(|inst| {
            if !inst.initialized {
                return Err(ZE_RESULT_ERROR_UNINITIALIZED);
            }
            let handle = inst.driver as ze_driver_handle_t;
            // SAFETY: API contract: `drivers` holds `*count` elements when non-null.
            fill_array(&[handle], count, unsafe { out_array(drivers, *count) });
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zeDriverGetApiVersion(h: ze_driver_handle_t, v: *mut ze_api_version_t) -> ze_result_t {
    guard("zeDriverGetApiVersion", || {
        // SAFETY: API contract.
        let v = unsafe { out(v) }?;
        with(h, |_, obj, _| {
            expect_obj!(obj, Obj::Driver => ());
            *v = ZE_API_VERSION_CURRENT;
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zeDriverGetProperties(
    h: ze_driver_handle_t,
    p: *mut ze_driver_properties_t,
) -> ze_result_t {
    guard("zeDriverGetProperties", || {
        // SAFETY: API contract.
        let p = unsafe { out(p) }?;
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Driver => ());
            inst.driver_properties(p)
        })
    })
}

pub unsafe extern "C" fn sim_zeDriverGetExtensionProperties(
    h: ze_driver_handle_t,
    count: *mut u32,
    props: *mut ze_driver_extension_properties_t,
) -> ze_result_t {
    guard("zeDriverGetExtensionProperties", || {
        // SAFETY: API contract.
        let count = unsafe { out(count) }?;
        with(h, |_, obj, _| {
            expect_obj!(obj, Obj::Driver => ());
            let items: Vec<ze_driver_extension_properties_t> = Instance::extension_names()
                .iter()
                .map(|(name, version)| {
                    let mut p = ze_driver_extension_properties_t::default();
                    crate::ops_driver::put_str(&mut p.name, name);
                    p.version = *version;
                    p
                })
                .collect();
            // SAFETY: API contract.
            fill_array(&items, count, unsafe { out_array(props, *count) });
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zeDriverGetExtensionFunctionAddress(
    h: ze_driver_handle_t,
    name: *const c_char,
    f: *mut *mut c_void,
) -> ze_result_t {
    guard("zeDriverGetExtensionFunctionAddress", || {
        // SAFETY: API contract.
        let f = unsafe { out(f) }?;
        if name.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // SAFETY: the API requires a NUL-terminated name.
        let name = unsafe { CStr::from_ptr(name) };
        with(h, |_, obj, _| {
            expect_obj!(obj, Obj::Driver => ());
            *f = extension_function(name).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
            Ok(())
        })
    })
}

// ---- devices --------------------------------------------------------------------------------

pub unsafe extern "C" fn sim_zeDeviceGet(
    h: ze_driver_handle_t,
    count: *mut u32,
    devices: *mut ze_device_handle_t,
) -> ze_result_t {
    guard("zeDeviceGet", || {
        // SAFETY: API contract.
        let count = unsafe { out(count) }?;
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Driver => ());
            // SAFETY: API contract.
            fill_array(&inst.root_devices(), count, unsafe { out_array(devices, *count) });
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zeDeviceGetSubDevices(
    h: ze_device_handle_t,
    count: *mut u32,
    subs: *mut ze_device_handle_t,
) -> ze_result_t {
    guard("zeDeviceGetSubDevices", || {
        // SAFETY: API contract.
        let count = unsafe { out(count) }?;
        with(h, |inst, obj, _| {
            let d = expect_obj!(obj, Obj::Device(d) => d);
            // SAFETY: API contract.
            fill_array(&inst.sub_devices(d), count, unsafe { out_array(subs, *count) });
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zeDeviceGetProperties(
    h: ze_device_handle_t,
    p: *mut ze_device_properties_t,
) -> ze_result_t {
    guard("zeDeviceGetProperties", || {
        // SAFETY: API contract.
        let p = unsafe { out(p) }?;
        with(h, |inst, obj, _| {
            let d = expect_obj!(obj, Obj::Device(d) => d);
            inst.device_properties(d, p)
        })
    })
}

pub unsafe extern "C" fn sim_zeDeviceGetStatus(h: ze_device_handle_t) -> ze_result_t {
    guard("zeDeviceGetStatus", || {
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Device(_) => ());
            inst.device_status()
        })
    })
}

pub unsafe extern "C" fn sim_zeDeviceGetGlobalTimestamps(
    h: ze_device_handle_t,
    host: *mut u64,
    device: *mut u64,
) -> ze_result_t {
    guard("zeDeviceGetGlobalTimestamps", || {
        // SAFETY: API contract.
        let (host, device) = unsafe { (out(host)?, out(device)?) };
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Device(_) => ());
            inst.device_status()?;
            *host = crate::writer::monotonic_ns();
            *device = inst.device_now_ns();
            Ok(())
        })
    })
}

// ---- contexts -------------------------------------------------------------------------------

pub unsafe extern "C" fn sim_zeContextCreate(
    h: ze_driver_handle_t,
    desc: *const ze_context_desc_t,
    ctx: *mut ze_context_handle_t,
) -> ze_result_t {
    guard("zeContextCreate", || {
        // SAFETY: API contract.
        let (desc, ctx) = unsafe { (desc.as_ref().ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?, out(ctx)?) };
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::Driver => ());
            *ctx = inst.context_create(desc, ch)? as ze_context_handle_t;
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zeContextDestroy(h: ze_context_handle_t) -> ze_result_t {
    guard("zeContextDestroy", || {
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::Context => ());
            inst.context_destroy(h as usize, ch)
        })
    })
}

// ---- memory ---------------------------------------------------------------------------------

pub unsafe extern "C" fn sim_zeMemAllocDevice(
    h: ze_context_handle_t,
    desc: *const ze_device_mem_alloc_desc_t,
    size: usize,
    align: usize,
    device: ze_device_handle_t,
    pptr: *mut *mut c_void,
) -> ze_result_t {
    guard("zeMemAllocDevice", || {
        // SAFETY: API contract.
        let (desc, pptr) = unsafe { (desc.as_ref().ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?, out(pptr)?) };
        if device.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Context => ());
            *pptr = inst.alloc_device(h as usize, desc, size, align)? as *mut c_void;
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zeMemAllocHost(
    h: ze_context_handle_t,
    desc: *const ze_host_mem_alloc_desc_t,
    size: usize,
    align: usize,
    pptr: *mut *mut c_void,
) -> ze_result_t {
    guard("zeMemAllocHost", || {
        // SAFETY: API contract.
        let (desc, pptr) = unsafe { (desc.as_ref().ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?, out(pptr)?) };
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Context => ());
            *pptr = inst.alloc_host(h as usize, desc, size, align)? as *mut c_void;
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zeMemFree(h: ze_context_handle_t, ptr: *mut c_void) -> ze_result_t {
    guard("zeMemFree", || {
        if ptr.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Context => ());
            inst.free(h as usize, ptr as usize)
        })
    })
}

pub unsafe extern "C" fn sim_zeCommandListCreateImmediate(
    h: ze_context_handle_t,
    device: ze_device_handle_t,
    desc: *const ze_command_queue_desc_t,
    cl: *mut ze_command_list_handle_t,
) -> ze_result_t {
    guard("zeCommandListCreateImmediate", || {
        // SAFETY: API contract.
        let (desc, cl) = unsafe { (desc.as_ref().ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?, out(cl)?) };
        if device.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::Context => ());
            *cl = inst.cmdlist_create(h as usize, desc, ch)? as ze_command_list_handle_t;
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zeCommandListAppendMemoryCopy(
    h: ze_command_list_handle_t,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    _signal: ze_event_handle_t,
    num_wait: u32,
    _wait: *mut ze_event_handle_t,
) -> ze_result_t {
    guard("zeCommandListAppendMemoryCopy", || {
        if dst.is_null() || src.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if num_wait > 0 {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::CommandList => ());
            inst.copy(h as usize, dst as usize, src as usize, size)
        })
    })
}

pub unsafe extern "C" fn sim_zeCommandListDestroy(h: ze_command_list_handle_t) -> ze_result_t {
    guard("zeCommandListDestroy", || {
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::CommandList => ());
            inst.cmdlist_destroy(h as usize, ch)
        })
    })
}

// ---- metrics --------------------------------------------------------------------------------

pub unsafe extern "C" fn sim_zetMetricGroupGet(
    h: zet_device_handle_t,
    count: *mut u32,
    groups: *mut zet_metric_group_handle_t,
) -> ze_result_t {
    guard("zetMetricGroupGet", || {
        // SAFETY: API contract.
        let count = unsafe { out(count) }?;
        with(h, |inst, obj, _| {
            let d = expect_obj!(obj, Obj::Device(d) => d);
            // SAFETY: API contract.
            fill_array(&inst.visible_groups(d), count, unsafe { out_array(groups, *count) });
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zetMetricGroupGetProperties(
    h: zet_metric_group_handle_t,
    p: *mut zet_metric_group_properties_t,
) -> ze_result_t {
    guard("zetMetricGroupGetProperties", || {
        // SAFETY: API contract.
        let p = unsafe { out(p) }?;
        with(h, |inst, obj, _| {
            let g = expect_obj!(obj, Obj::Group(g) => g);
            inst.group_properties(g, p)
        })
    })
}

pub unsafe extern "C" fn sim_zetMetricGet(
    h: zet_metric_group_handle_t,
    count: *mut u32,
    metrics: *mut zet_metric_handle_t,
) -> ze_result_t {
    guard("zetMetricGet", || {
        // SAFETY: API contract.
        let count = unsafe { out(count) }?;
        with(h, |inst, obj, _| {
            let g = expect_obj!(obj, Obj::Group(g) => g);
            // SAFETY: API contract.
            fill_array(&inst.metrics_of(g), count, unsafe { out_array(metrics, *count) });
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zetMetricGetProperties(
    h: zet_metric_handle_t,
    p: *mut zet_metric_properties_t,
) -> ze_result_t {
    guard("zetMetricGetProperties", || {
        // SAFETY: API contract.
        let p = unsafe { out(p) }?;
        with(h, |inst, obj, _| {
            let (g, i) = expect_obj!(obj, Obj::Metric(g, i) => (g, i));
            inst.metric_properties(g, i, p)
        })
    })
}

pub unsafe extern "C" fn sim_zetContextActivateMetricGroups(
    h: zet_context_handle_t,
    device: zet_device_handle_t,
    count: u32,
    groups: *mut zet_metric_group_handle_t,
) -> ze_result_t {
    guard("zetContextActivateMetricGroups", || {
        if count > 0 && groups.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // SAFETY: API contract: `groups` holds `count` handles.
        let wanted: Vec<usize> = (0..count as usize).map(|i| unsafe { *groups.add(i) } as usize).collect();
        let mut reg = registry::lock();
        // Resolve every handle to (instance, object) before touching the instance.
        let mut ids = Vec::new();
        for &w in &wanted {
            let g = reg.with(w, |inst, obj, _| Ok((inst.id, expect_obj!(obj, Obj::Group(g) => g))))?;
            ids.push(g);
        }
        let d = reg.with(device as usize, |inst, obj, _| Ok((inst.id, expect_obj!(obj, Obj::Device(d) => d))))?;
        reg.with(h as usize, |inst, obj, _| {
            expect_obj!(obj, Obj::Context => ());
            if d.0 != inst.id || ids.iter().any(|(i, _)| *i != inst.id) {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            let gs: Vec<usize> = ids.iter().map(|(_, g)| *g).collect();
            inst.activate(h as usize, d.1, &gs)
        })
    })
}

// ---- experimental ---------------------------------------------------------------------------

pub unsafe extern "C" fn sim_zetDeviceEnableMetricsExp(h: zet_device_handle_t) -> ze_result_t {
    guard("zetDeviceEnableMetricsExp", || {
        with(h, |inst, obj, _| {
            let d = expect_obj!(obj, Obj::Device(d) => d);
            inst.enable_metrics(d)
        })
    })
}

pub unsafe extern "C" fn sim_zetDeviceDisableMetricsExp(h: zet_device_handle_t) -> ze_result_t {
    guard("zetDeviceDisableMetricsExp", || {
        with(h, |inst, obj, _| {
            let d = expect_obj!(obj, Obj::Device(d) => d);
            inst.disable_metrics(d)
        })
    })
}

pub unsafe extern "C" fn sim_zetMetricGroupCreateExp(
    h: zet_device_handle_t,
    name: *const c_char,
    description: *const c_char,
    _sampling: zet_metric_group_sampling_type_flags_t,
    group: *mut zet_metric_group_handle_t,
) -> ze_result_t {
    guard("zetMetricGroupCreateExp", || {
        // SAFETY: API contract.
        let group = unsafe { out(group) }?;
        if name.is_null() || description.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // SAFETY: the API requires NUL-terminated strings.
        let (name, description) = unsafe { (CStr::from_ptr(name), CStr::from_ptr(description)) };
        with(h, |inst, obj, ch| {
            let d = expect_obj!(obj, Obj::Device(d) => d);
            let g = inst.user_group_create(d, &name.to_string_lossy(), &description.to_string_lossy(), ch)?;
            *group = g as zet_metric_group_handle_t;
            Ok(())
        })
    })
}

pub unsafe extern "C" fn sim_zetMetricGroupAddMetricExp(
    h: zet_metric_group_handle_t,
    metric: zet_metric_handle_t,
    err_size: *mut usize,
    err: *mut c_char,
) -> ze_result_t {
    guard("zetMetricGroupAddMetricExp", || {
        let outcome = with(h, |inst, obj, _| {
            let g = expect_obj!(obj, Obj::Group(g) => g);
            match inst.user_group_add(g, metric as usize)? {
                Ok(()) => Ok(()),
                Err(message) => {
                    // SAFETY: API contract for the optional error string.
                    unsafe { write_error_string(err_size, err, &message) };
                    Err(ZE_RESULT_ERROR_INVALID_ARGUMENT)
                }
            }
        });
        if outcome.is_ok() && !err_size.is_null() {
            // SAFETY: API contract.
            unsafe { *err_size = 0 };
        }
        outcome
    })
}

/// SAFETY (for callers): `size` null or writable; `buf` null or `*size` bytes writable.
unsafe fn write_error_string(size: *mut usize, buf: *mut c_char, message: &str) {
    if size.is_null() {
        return;
    }
    // SAFETY: see the function's contract.
    unsafe {
        if *size == 0 || buf.is_null() {
            *size = message.len() + 1;
        } else {
            let n = message.len().min(*size - 1);
            std::ptr::copy_nonoverlapping(message.as_ptr().cast(), buf, n);
            *buf.add(n) = 0;
        }
    }
}

pub unsafe extern "C" fn sim_zetMetricGroupCloseExp(h: zet_metric_group_handle_t) -> ze_result_t {
    guard("zetMetricGroupCloseExp", || {
        with(h, |inst, obj, _| {
            let g = expect_obj!(obj, Obj::Group(g) => g);
            inst.user_group_close(g)
        })
    })
}

pub unsafe extern "C" fn sim_zetMetricGroupDestroyExp(h: zet_metric_group_handle_t) -> ze_result_t {
    guard("zetMetricGroupDestroyExp", || {
        with(h, |inst, obj, ch| {
            let g = expect_obj!(obj, Obj::Group(g) => g);
            inst.user_group_destroy(g, ch)
        })
    })
}

/// The `Api` made of these functions: what zescope calls when it runs on the built-in device.
pub fn api() -> Api {
    Api {
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
        zelLoaderGetVersions: None,
        zelLoaderTranslateHandle: None,
        zetMetricGroupCreateExp: Some(sim_zetMetricGroupCreateExp),
        zetMetricGroupAddMetricExp: Some(sim_zetMetricGroupAddMetricExp),
        zetMetricGroupCloseExp: Some(sim_zetMetricGroupCloseExp),
        zetMetricGroupDestroyExp: Some(sim_zetMetricGroupDestroyExp),
        zetDeviceEnableMetricsExp: Some(sim_zetDeviceEnableMetricsExp),
        zetDeviceDisableMetricsExp: Some(sim_zetDeviceDisableMetricsExp),
    }
}
