//! Entry points for metric groups and metrics, activation, and the experimental runtime
//! enable/disable and group creation functions.

use core::ffi::{CStr, c_char};

use level_zero_sys::*;

use super::{guard, out, out_array, with};
use crate::ops_driver::fill_array;
use crate::registry::{self, Obj};

// ---- metrics --------------------------------------------------------------------------------

pub(crate) unsafe extern "C" fn sim_zetMetricGroupGet(
    h: zet_device_handle_t,
    count: *mut u32,
    groups: *mut zet_metric_group_handle_t,
) -> ze_result_t {
    guard("zetMetricGroupGet", || {
        // SAFETY: API contract.
        let count = unsafe { out(count) }?;
        with(h, |inst, obj, _| {
            let d = expect_obj!(obj, Obj::Device(d) => d);
            if !inst.metrics_loaded(d) {
                // Metrics never enabled (no ZET_ENABLE_METRICS=1, no run-time enable): real
                // drivers have not loaded what lists the groups.
                *count = 0;
                return Err(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
            }
            // SAFETY: API contract.
            fill_array(&inst.visible_groups(d), count, unsafe { out_array(groups, *count) });
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricGroupGetProperties(
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

pub(crate) unsafe extern "C" fn sim_zetMetricGet(
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

pub(crate) unsafe extern "C" fn sim_zetMetricGetProperties(
    h: zet_metric_handle_t,
    p: *mut zet_metric_properties_t,
) -> ze_result_t {
    guard("zetMetricGetProperties", || {
        // SAFETY: API contract.
        let p = unsafe { out(p) }?;
        with(h, |inst, obj, _| {
            // A decodable metric of a tracer's decoder answers as the group's metric it stands for.
            let (g, i) = expect_obj!(obj, Obj::Metric(g, i) | Obj::Decodable(g, i) => (g, i));
            inst.metric_properties(g, i, p)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetContextActivateMetricGroups(
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
            super::check_not_empty(inst)?;
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

pub(crate) unsafe extern "C" fn sim_zetDeviceEnableMetricsExp(h: zet_device_handle_t) -> ze_result_t {
    guard("zetDeviceEnableMetricsExp", || {
        with(h, |inst, obj, _| {
            let d = expect_obj!(obj, Obj::Device(d) => d);
            inst.enable_metrics(d)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetDeviceDisableMetricsExp(h: zet_device_handle_t) -> ze_result_t {
    guard("zetDeviceDisableMetricsExp", || {
        with(h, |inst, obj, _| {
            let d = expect_obj!(obj, Obj::Device(d) => d);
            inst.disable_metrics(d)
        })
    })
}

/// The C signature of `zetMetricGroupGetGlobalTimestampsExp`.
pub(crate) type GlobalTimestamps =
    unsafe extern "C" fn(zet_metric_group_handle_t, ze_bool_t, *mut u64, *mut u64) -> ze_result_t;

/// `zetMetricGroupGetGlobalTimestampsExp` (`ZET_experimental_metric_global_timestamps`): the
/// host's CLOCK_MONOTONIC ns (synchronized with host) or the device's timer ticks, and the
/// metric timestamp in ticks of the device's timer, read at one instant.
pub(crate) unsafe extern "C" fn sim_zetMetricGroupGetGlobalTimestampsExp(
    h: zet_metric_group_handle_t,
    synchronized_with_host: ze_bool_t,
    global: *mut u64,
    metric: *mut u64,
) -> ze_result_t {
    guard("zetMetricGroupGetGlobalTimestampsExp", || {
        // SAFETY: API contract.
        let (global, metric) = unsafe { (out(global)?, out(metric)?) };
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Group(_) => ());
            inst.device_status()?;
            let now = crate::writer::monotonic_ns();
            let ticks = inst.timer_ticks_at(now);
            *global = if synchronized_with_host != 0 { now } else { ticks };
            *metric = ticks;
            Ok(())
        })
    })
}

/// The C signature of `zetMetricGroupGetExportDataExp`.
pub(crate) type GetExportData =
    unsafe extern "C" fn(zet_metric_group_handle_t, *const u8, usize, *mut usize, *mut u8) -> ze_result_t;

/// `zetMetricGroupGetExportDataExp` (`ZET_experimental_metric_export_data`): the group's raw
/// data with its description (`export_data.rs`). With `*size` 0 it answers the bytes needed;
/// with more it writes them and answers how many it wrote; with fewer it refuses the call
/// (INVALID_ARGUMENT, one of the spec's listed errors; the spec says nothing of a short buffer).
pub(crate) unsafe extern "C" fn sim_zetMetricGroupGetExportDataExp(
    h: zet_metric_group_handle_t,
    raw: *const u8,
    raw_size: usize,
    size: *mut usize,
    export: *mut u8,
) -> ze_result_t {
    guard("zetMetricGroupGetExportDataExp", || {
        // SAFETY: API contract.
        let size = unsafe { out(size) }?;
        if raw.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // SAFETY: API contract: `raw` holds `raw_size` bytes.
        let raw = unsafe { std::slice::from_raw_parts(raw, raw_size) };
        with(h, |inst, obj, _| {
            let g = expect_obj!(obj, Obj::Group(g) => g);
            inst.device_status()?;
            let data = crate::export_data::encode(&inst.export_description(g)?, raw);
            if *size == 0 {
                *size = data.len();
                return Ok(());
            }
            if *size < data.len() {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            if export.is_null() {
                return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
            }
            // SAFETY: API contract: `export` holds `*size` bytes, at least `data.len()`.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), export, data.len()) };
            *size = data.len();
            Ok(())
        })
    })
}

/// The C signature of `zetDeviceGetConcurrentMetricGroupsExp`.
pub(crate) type GetConcurrentGroups =
    unsafe extern "C" fn(zet_device_handle_t, u32, *mut zet_metric_group_handle_t, *mut u32, *mut u32) -> ze_result_t;

/// `zetDeviceGetConcurrentMetricGroupsExp` (`ZET_experimental_concurrent_metric_groups`):
/// reorders `groups` in place into sets that can be activated together (see
/// `Instance::concurrent_sets`).
pub(crate) unsafe extern "C" fn sim_zetDeviceGetConcurrentMetricGroupsExp(
    h: zet_device_handle_t,
    count: u32,
    groups: *mut zet_metric_group_handle_t,
    per_set: *mut u32,
    set_count: *mut u32,
) -> ze_result_t {
    guard("zetDeviceGetConcurrentMetricGroupsExp", || {
        // SAFETY: API contract.
        let set_count = unsafe { out(set_count) }?;
        if count > 0 && groups.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // SAFETY: API contract: `groups` holds `count` handles.
        let given: Vec<usize> = (0..count as usize).map(|i| unsafe { *groups.add(i) } as usize).collect();
        let mut reg = registry::lock();
        let mut ids = Vec::with_capacity(given.len());
        for &g in &given {
            ids.push(reg.with(g, |inst, obj, _| Ok((inst.id, expect_obj!(obj, Obj::Group(g) => g))))?);
        }
        reg.with(h as usize, |inst, obj, _| {
            super::check_not_empty(inst)?;
            let d = expect_obj!(obj, Obj::Device(d) => d);
            if ids.iter().any(|(i, _)| *i != inst.id) {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            let gs: Vec<usize> = ids.iter().map(|(_, g)| *g).collect();
            let sets = inst.concurrent_sets(d, &gs)?;
            let asked = *set_count as usize;
            *set_count = sets.len() as u32;
            if !per_set.is_null() && asked < sets.len() {
                return Err(ZE_RESULT_ERROR_INVALID_SIZE);
            }
            for (i, &g) in sets.iter().flatten().enumerate() {
                // SAFETY: API contract: `groups` holds `count` handles; the sets hold exactly
                // the `count` given.
                unsafe { *groups.add(i) = inst.groups[g].handle as zet_metric_group_handle_t };
            }
            if !per_set.is_null() {
                for (n, set) in sets.iter().enumerate() {
                    // SAFETY: API contract: `per_set` holds `*pConcurrentGroupCount` counts (at
                    // least the sets', checked above).
                    unsafe { *per_set.add(n) = set.len() as u32 };
                }
            }
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricGroupCreateExp(
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

pub(crate) unsafe extern "C" fn sim_zetMetricGroupAddMetricExp(
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

pub(crate) unsafe extern "C" fn sim_zetMetricGroupCloseExp(h: zet_metric_group_handle_t) -> ze_result_t {
    guard("zetMetricGroupCloseExp", || {
        with(h, |inst, obj, _| {
            let g = expect_obj!(obj, Obj::Group(g) => g);
            inst.user_group_close(g)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricGroupDestroyExp(h: zet_metric_group_handle_t) -> ze_result_t {
    guard("zetMetricGroupDestroyExp", || {
        with(h, |inst, obj, ch| {
            let g = expect_obj!(obj, Obj::Group(g) => g);
            inst.user_group_destroy(g, ch)
        })
    })
}
