//! Entry points for drivers, devices, contexts, memory and the immediate command list (the
//! device-to-host copy fallback).

use core::ffi::{CStr, c_char, c_void};

use level_zero_sys::*;

use super::{guard, out, out_array, with};
use crate::instance::Instance;
use crate::ops_driver::{extension_function, fill_array};
use crate::registry::Obj;

// ---- driver ---------------------------------------------------------------------------------

pub(crate) unsafe extern "C" fn sim_zeInit(_flags: ze_init_flags_t) -> ze_result_t {
    guard("zeInit", || {
        crate::with_global(|inst| {
            super::check_not_empty(inst)?;
            inst.init()
        })
    })
}

/// `zeInitDrivers` (Level Zero 1.10), through the loader only: the driver starts and reports
/// itself when `desc.flags` asks for a type of device it has (ZE_INIT_DRIVER_TYPE_FLAG_GPU for
/// a GPU, ZE_INIT_DRIVER_TYPE_FLAG_NPU for an NPU), else it answers UNINITIALIZED, as Intel's
/// NPU driver does for flags without NPU (`L0::initDrivers`).
pub(crate) unsafe extern "C" fn sim_zeInitDrivers(
    count: *mut u32,
    drivers: *mut ze_driver_handle_t,
    desc: *mut ze_init_driver_type_desc_t,
) -> ze_result_t {
    guard("zeInitDrivers", || {
        // SAFETY: API contract for out-parameters and the descriptor.
        let (count, desc) = unsafe { (out(count)?, desc.as_ref().ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?) };
        crate::with_global(|inst| {
            super::check_not_empty(inst)?;
            if !inst.serves(desc.flags) {
                return Err(ZE_RESULT_ERROR_UNINITIALIZED);
            }
            inst.init()?;
            let handle = inst.driver as ze_driver_handle_t;
            // SAFETY: API contract: `drivers` holds `*count` elements when non-null.
            fill_array(&[handle], count, unsafe { out_array(drivers, *count) });
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zeDriverGet(count: *mut u32, drivers: *mut ze_driver_handle_t) -> ze_result_t {
    guard("zeDriverGet", || {
        // SAFETY: API contract for out-parameters.
        let count = unsafe { out(count) }?;
        crate::with_global(|inst| {
            super::check_not_empty(inst)?;
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

pub(crate) unsafe extern "C" fn sim_zeDriverGetApiVersion(
    h: ze_driver_handle_t,
    v: *mut ze_api_version_t,
) -> ze_result_t {
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

pub(crate) unsafe extern "C" fn sim_zeDriverGetProperties(
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

pub(crate) unsafe extern "C" fn sim_zeDriverGetExtensionProperties(
    h: ze_driver_handle_t,
    count: *mut u32,
    props: *mut ze_driver_extension_properties_t,
) -> ze_result_t {
    guard("zeDriverGetExtensionProperties", || {
        // SAFETY: API contract.
        let count = unsafe { out(count) }?;
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Driver => ());
            // The PCI properties extension is not offered by a driver that leaves its entry empty;
            // metric export memory is not listed by a driver that predates it, nor by one built
            // before its name reached the headers (its groups still export).
            let pci_empty = inst.config.is_empty_entry("zeDevicePciGetPropertiesExt");
            let q = &inst.config.quirks;
            let export_unlisted = q.no_export_extension || q.export_extension_unlisted;
            let items: Vec<ze_driver_extension_properties_t> = Instance::extension_names()
                .iter()
                .filter(|(name, _)| !(pci_empty && *name == "ZE_extension_pci_properties"))
                .filter(|(name, _)| !(export_unlisted && *name == "ZET_experimental_metric_export_memory"))
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

pub(crate) unsafe extern "C" fn sim_zeDriverGetExtensionFunctionAddress(
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
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Driver => ());
            *f = extension_function(name)
                .filter(|_| !inst.config.is_empty_entry(&name.to_string_lossy()))
                .ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
            Ok(())
        })
    })
}

// ---- devices --------------------------------------------------------------------------------

pub(crate) unsafe extern "C" fn sim_zeDeviceGet(
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

pub(crate) unsafe extern "C" fn sim_zeDeviceGetSubDevices(
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

pub(crate) unsafe extern "C" fn sim_zeDeviceGetProperties(
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

pub(crate) unsafe extern "C" fn sim_zeDeviceGetStatus(h: ze_device_handle_t) -> ze_result_t {
    guard("zeDeviceGetStatus", || {
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Device(_) => ());
            inst.device_status()
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zeDevicePciGetPropertiesExt(
    h: ze_device_handle_t,
    p: *mut ze_pci_ext_properties_t,
) -> ze_result_t {
    guard("zeDevicePciGetPropertiesExt", || {
        // SAFETY: API contract.
        let p = unsafe { out(p) }?;
        with(h, |inst, obj, _| {
            let d = expect_obj!(obj, Obj::Device(d) => d);
            inst.pci_properties(d, p)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zeDeviceGetGlobalTimestamps(
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
            let now = crate::writer::monotonic_ns();
            *host = now;
            // A synchronized device answers its global timestamp in host ns (the 2026-05
            // specification); otherwise in ticks of its timer.
            *device = if inst.config.quirks.global_timestamps_host_ns { now } else { inst.timer_ticks_at(now) };
            Ok(())
        })
    })
}

// ---- contexts -------------------------------------------------------------------------------

pub(crate) unsafe extern "C" fn sim_zeContextCreate(
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

pub(crate) unsafe extern "C" fn sim_zeContextDestroy(h: ze_context_handle_t) -> ze_result_t {
    guard("zeContextDestroy", || {
        // The injected delay is slept outside the driver's lock, so other instances go on.
        let mut delay = 0;
        with(h, |inst, _, _| {
            delay = inst.config.faults.context_destroy_delay_ms;
            Ok(())
        })?;
        std::thread::sleep(std::time::Duration::from_millis(delay));
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::Context => ());
            inst.context_destroy(h as usize, ch)
        })
    })
}

// ---- memory ---------------------------------------------------------------------------------

pub(crate) unsafe extern "C" fn sim_zeMemAllocDevice(
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

pub(crate) unsafe extern "C" fn sim_zeMemAllocHost(
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

pub(crate) unsafe extern "C" fn sim_zeMemFree(h: ze_context_handle_t, ptr: *mut c_void) -> ze_result_t {
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

pub(crate) unsafe extern "C" fn sim_zeCommandListCreateImmediate(
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

pub(crate) unsafe extern "C" fn sim_zeCommandListAppendMemoryCopy(
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

pub(crate) unsafe extern "C" fn sim_zeCommandListDestroy(h: ze_command_list_handle_t) -> ze_result_t {
    guard("zeCommandListDestroy", || {
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::CommandList => ());
            inst.cmdlist_destroy(h as usize, ch)
        })
    })
}
