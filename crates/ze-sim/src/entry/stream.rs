//! Entry points of the time-based metric streamer: event pools and events, the streamer, and
//! Calculate. A host wait sleeps outside the driver's lock, in slices, so other calls go on.

use level_zero_sys::*;

use super::{guard, out, with};
use crate::registry::{self, Obj};

// ---- event pools and events -----------------------------------------------------------------

pub(crate) unsafe extern "C" fn sim_zeEventPoolCreate(
    h: ze_context_handle_t,
    desc: *const ze_event_pool_desc_t,
    _num_devices: u32,
    _devices: *mut ze_device_handle_t,
    pool: *mut ze_event_pool_handle_t,
) -> ze_result_t {
    guard("zeEventPoolCreate", || {
        // SAFETY: API contract.
        let (desc, pool) = unsafe { (desc.as_ref().ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?, out(pool)?) };
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::Context => ());
            *pool = inst.event_pool_create(h as usize, desc, ch)? as ze_event_pool_handle_t;
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zeEventPoolDestroy(h: ze_event_pool_handle_t) -> ze_result_t {
    guard("zeEventPoolDestroy", || {
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::EventPool => ());
            inst.event_pool_destroy(h as usize, ch)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zeEventCreate(
    h: ze_event_pool_handle_t,
    desc: *const ze_event_desc_t,
    event: *mut ze_event_handle_t,
) -> ze_result_t {
    guard("zeEventCreate", || {
        // SAFETY: API contract.
        let (desc, event) = unsafe { (desc.as_ref().ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?, out(event)?) };
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::EventPool => ());
            *event = inst.event_create(h as usize, desc, ch)? as ze_event_handle_t;
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zeEventDestroy(h: ze_event_handle_t) -> ze_result_t {
    guard("zeEventDestroy", || {
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::Event => ());
            inst.event_destroy(h as usize, ch)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zeEventQueryStatus(h: ze_event_handle_t) -> ze_result_t {
    guard("zeEventQueryStatus", || {
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Event => ());
            if inst.event_status(h as usize)? { Ok(()) } else { Err(ZE_RESULT_NOT_READY) }
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zeEventHostReset(h: ze_event_handle_t) -> ze_result_t {
    guard("zeEventHostReset", || {
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Event => ());
            inst.event_reset(h as usize)
        })
    })
}

/// Longest single sleep of a host wait: the lock is retaken this often to see closes and losses.
/// Longer than a client's batch interval (`record` waits up to 50 ms), so a wait for a streamer's
/// notification sleeps once until the reports are due, as a driver's sleeps in the kernel until
/// the event is signaled (20 ms woke such a waiter twice and more per notification).
const WAIT_SLICE_NS: u64 = 100_000_000;

pub(crate) unsafe extern "C" fn sim_zeEventHostSynchronize(h: ze_event_handle_t, timeout: u64) -> ze_result_t {
    guard("zeEventHostSynchronize", || {
        let start = crate::writer::monotonic_ns();
        let deadline = start.saturating_add(timeout);
        loop {
            let (mut due, mut signaled) = (None, false);
            with(h, |inst, obj, _| {
                expect_obj!(obj, Obj::Event => ());
                signaled = inst.event_status(h as usize)?;
                due = inst.event_due_at(h as usize);
                Ok(())
            })?;
            if signaled {
                return Ok(());
            }
            let now = crate::writer::monotonic_ns();
            if now >= deadline {
                return Err(ZE_RESULT_NOT_READY);
            }
            let until = due.unwrap_or(u64::MAX).min(deadline).max(now + 1);
            std::thread::sleep(std::time::Duration::from_nanos((until - now).min(WAIT_SLICE_NS)));
        }
    })
}

// ---- streamer -------------------------------------------------------------------------------

pub(crate) unsafe extern "C" fn sim_zetMetricStreamerOpen(
    ctx: zet_context_handle_t,
    device: zet_device_handle_t,
    group: zet_metric_group_handle_t,
    desc: *mut zet_metric_streamer_desc_t,
    event: ze_event_handle_t,
    streamer: *mut zet_metric_streamer_handle_t,
) -> ze_result_t {
    guard("zetMetricStreamerOpen", || {
        // SAFETY: API contract.
        let (desc, streamer) = unsafe { (out(desc)?, out(streamer)?) };
        if ctx.is_null() || device.is_null() || group.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        let mut reg = registry::lock();
        let g = reg.with(group as usize, |inst, obj, _| Ok((inst.id, expect_obj!(obj, Obj::Group(g) => g))))?;
        let d = reg.with(device as usize, |inst, obj, _| Ok((inst.id, expect_obj!(obj, Obj::Device(d) => d))))?;
        let e = if event.is_null() {
            None
        } else {
            Some(
                reg.with(event as usize, |inst, obj, _| Ok((inst.id, expect_obj!(obj, Obj::Event => event as usize))))?,
            )
        };
        reg.with(ctx as usize, |inst, obj, ch| {
            super::check_not_empty(inst)?;
            expect_obj!(obj, Obj::Context => ());
            if g.0 != inst.id || d.0 != inst.id || e.is_some_and(|e| e.0 != inst.id) {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            *streamer =
                inst.streamer_open(ctx as usize, d.1, g.1, desc, e.map(|e| e.1), ch)? as zet_metric_streamer_handle_t;
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricStreamerReadData(
    h: zet_metric_streamer_handle_t,
    max_reports: u32,
    size: *mut usize,
    data: *mut u8,
) -> ze_result_t {
    guard("zetMetricStreamerReadData", || {
        // SAFETY: API contract.
        let size = unsafe { out(size) }?;
        // SAFETY: API contract: a non-null `data` holds `*size` writable bytes.
        let buf = (!data.is_null() && *size > 0).then(|| unsafe { std::slice::from_raw_parts_mut(data, *size) });
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Streamer => ());
            inst.streamer_read(h as usize, max_reports, size, buf)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricStreamerClose(h: zet_metric_streamer_handle_t) -> ze_result_t {
    guard("zetMetricStreamerClose", || {
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::Streamer => ());
            inst.streamer_close(h as usize, ch)
        })
    })
}

// ---- calculate ------------------------------------------------------------------------------

/// The raw data of a Calculate call. SAFETY (for callers): API contract for `raw`/`size`.
unsafe fn raw_data<'a>(raw: *const u8, size: usize) -> Result<&'a [u8], ze_result_t> {
    if raw.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    // SAFETY: see the function's contract.
    Ok(unsafe { std::slice::from_raw_parts(raw, size) })
}

pub(crate) unsafe extern "C" fn sim_zetMetricGroupCalculateMetricValues(
    h: zet_metric_group_handle_t,
    ty: zet_metric_group_calculation_type_t,
    size: usize,
    raw: *const u8,
    count: *mut u32,
    values: *mut zet_typed_value_t,
) -> ze_result_t {
    guard("zetMetricGroupCalculateMetricValues", || {
        // SAFETY: API contract.
        let (raw, count) = unsafe { (raw_data(raw, size)?, out(count)?) };
        with(h, |inst, obj, _| {
            let g = expect_obj!(obj, Obj::Group(g) => g);
            if *count == 0 || values.is_null() {
                *count = inst.calculate_count(g, ty, raw)? as u32;
                return Ok(());
            }
            let all = inst.calculate(g, ty, raw)?;
            let n = (*count as usize).min(all.len());
            // SAFETY: API contract: `values` holds `*count` elements.
            unsafe { std::ptr::copy_nonoverlapping(all.as_ptr(), values, n) };
            *count = n as u32;
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricGroupCalculateMultipleMetricValuesExp(
    h: zet_metric_group_handle_t,
    ty: zet_metric_group_calculation_type_t,
    size: usize,
    raw: *const u8,
    sets: *mut u32,
    total: *mut u32,
    counts: *mut u32,
    values: *mut zet_typed_value_t,
) -> ze_result_t {
    guard("zetMetricGroupCalculateMultipleMetricValuesExp", || {
        // SAFETY: API contract.
        let (raw, sets, total) = unsafe { (raw_data(raw, size)?, out(sets)?, out(total)?) };
        with(h, |inst, obj, _| {
            let g = expect_obj!(obj, Obj::Group(g) => g);
            if *sets == 0 || *total == 0 || values.is_null() {
                let n = inst.calculate_set_count(g);
                *sets = n as u32;
                *total = (inst.calculate_count(g, ty, raw)? * n) as u32;
                return Ok(());
            }
            if inst.calculate_set_count(g) <= *sets as usize {
                // SAFETY: API contract: `values` holds `*total` elements.
                let out = unsafe { std::slice::from_raw_parts_mut(values, *total as usize) };
                if let Some(per_set) = inst.calculate_sets_into(g, ty, raw, out)? {
                    let n = inst.calculate_set_count(g);
                    if !counts.is_null() {
                        // SAFETY: API contract: `counts` holds `*sets` elements, and `n` ≤ `*sets`.
                        unsafe { std::slice::from_raw_parts_mut(counts, n) }.fill(per_set as u32);
                    }
                    *sets = n as u32;
                    *total = (n * per_set) as u32;
                    return Ok(());
                }
            }
            let all = inst.calculate_sets(g, ty, raw)?;
            // As the single Calculate does, a smaller buffer gets only what fits: whole sets in
            // order, the last one cut short.
            let (mut room, mut given, mut at) = (*total as usize, 0u32, 0usize);
            for (k, set) in all.iter().take(*sets as usize).enumerate() {
                let n = set.len().min(room);
                // SAFETY: API contract: `values` holds `*total` elements (`at + n` stays within
                // them) and `counts`, if not null, `*sets` (`k` stays below it).
                unsafe {
                    std::ptr::copy_nonoverlapping(set.as_ptr(), values.add(at), n);
                    if !counts.is_null() {
                        *counts.add(k) = n as u32;
                    }
                }
                at += n;
                room -= n;
                given += 1;
            }
            *sets = given;
            *total = at as u32;
            Ok(())
        })
    })
}
