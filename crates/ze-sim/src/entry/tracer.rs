//! Entry points of the metric tracer and decoder (`ZET_experimental_metric_tracer`). The
//! loader reaches them through `zetGetMetricTracerExpProcAddrTable` and
//! `zetGetMetricDecoderExpProcAddrTable` (`crate::ddi`); the behaviour is in `ops_tracer` and
//! `tracer_decode`.

use level_zero_sys::*;

use super::{guard, out, out_array, with};
use crate::ops_driver::fill_array;
use crate::registry::{self, Obj};

pub(crate) unsafe extern "C" fn sim_zetMetricTracerCreateExp(
    ctx: zet_context_handle_t,
    device: zet_device_handle_t,
    count: u32,
    groups: *mut zet_metric_group_handle_t,
    desc: *mut zet_metric_tracer_exp_desc_t,
    event: ze_event_handle_t,
    tracer: *mut zet_metric_tracer_exp_handle_t,
) -> ze_result_t {
    guard("zetMetricTracerCreateExp", || {
        if ctx.is_null() || device.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        // SAFETY: API contract.
        let (desc, tracer) = unsafe { (out(desc)?, out(tracer)?) };
        if groups.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // SAFETY: API contract: `groups` holds `count` handles.
        let wanted: Vec<usize> = (0..count as usize).map(|i| unsafe { *groups.add(i) } as usize).collect();
        let mut reg = registry::lock();
        let mut gs = Vec::with_capacity(wanted.len());
        for &w in &wanted {
            gs.push(reg.with(w, |inst, obj, _| Ok((inst.id, expect_obj!(obj, Obj::Group(g) => g))))?);
        }
        let d = reg.with(device as usize, |inst, obj, _| Ok((inst.id, expect_obj!(obj, Obj::Device(d) => d))))?;
        let e =
            match event.is_null() {
                true => None,
                false => Some(reg.with(event as usize, |inst, obj, _| {
                    Ok((inst.id, expect_obj!(obj, Obj::Event => event as usize)))
                })?),
            };
        reg.with(ctx as usize, |inst, obj, ch| {
            super::check_not_empty(inst)?;
            expect_obj!(obj, Obj::Context => ());
            if d.0 != inst.id || gs.iter().any(|g| g.0 != inst.id) || e.is_some_and(|e| e.0 != inst.id) {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            let groups: Vec<usize> = gs.iter().map(|g| g.1).collect();
            let h = inst.tracer_create(ctx as usize, d.1, &groups, desc, e.map(|e| e.1), ch)?;
            *tracer = h as zet_metric_tracer_exp_handle_t;
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricTracerDestroyExp(h: zet_metric_tracer_exp_handle_t) -> ze_result_t {
    guard("zetMetricTracerDestroyExp", || {
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::Tracer => ());
            inst.tracer_destroy(h as usize, ch)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricTracerEnableExp(
    h: zet_metric_tracer_exp_handle_t,
    synchronous: ze_bool_t,
) -> ze_result_t {
    guard("zetMetricTracerEnableExp", || {
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Tracer => ());
            inst.tracer_enable(h as usize, synchronous != 0)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricTracerDisableExp(
    h: zet_metric_tracer_exp_handle_t,
    synchronous: ze_bool_t,
) -> ze_result_t {
    guard("zetMetricTracerDisableExp", || {
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Tracer => ());
            inst.tracer_disable(h as usize, synchronous != 0)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricTracerReadDataExp(
    h: zet_metric_tracer_exp_handle_t,
    size: *mut usize,
    data: *mut u8,
) -> ze_result_t {
    guard("zetMetricTracerReadDataExp", || {
        if h.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        // SAFETY: API contract.
        let size = unsafe { out(size) }?;
        // SAFETY: API contract: a non-null `data` holds `*size` writable bytes.
        let buf = (!data.is_null() && *size > 0).then(|| unsafe { std::slice::from_raw_parts_mut(data, *size) });
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Tracer => ());
            inst.tracer_read(h as usize, size, buf)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricDecoderCreateExp(
    h: zet_metric_tracer_exp_handle_t,
    decoder: *mut zet_metric_decoder_exp_handle_t,
) -> ze_result_t {
    guard("zetMetricDecoderCreateExp", || {
        if h.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        // SAFETY: API contract.
        let decoder = unsafe { out(decoder) }?;
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::Tracer => ());
            *decoder = inst.decoder_create(h as usize, ch)? as zet_metric_decoder_exp_handle_t;
            Ok(())
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricDecoderDestroyExp(h: zet_metric_decoder_exp_handle_t) -> ze_result_t {
    guard("zetMetricDecoderDestroyExp", || {
        with(h, |inst, obj, ch| {
            expect_obj!(obj, Obj::Decoder => ());
            inst.decoder_destroy(h as usize, ch)
        })
    })
}

pub(crate) unsafe extern "C" fn sim_zetMetricDecoderGetDecodableMetricsExp(
    h: zet_metric_decoder_exp_handle_t,
    count: *mut u32,
    metrics: *mut zet_metric_handle_t,
) -> ze_result_t {
    guard("zetMetricDecoderGetDecodableMetricsExp", || {
        if h.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        // SAFETY: API contract.
        let count = unsafe { out(count) }?;
        with(h, |inst, obj, _| {
            expect_obj!(obj, Obj::Decoder => ());
            let all = inst.decodable_metrics(h as usize)?;
            // SAFETY: API contract: a non-null `metrics` holds `*count` handles.
            fill_array(&all, count, unsafe { out_array(metrics, *count) });
            Ok(())
        })
    })
}

#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe extern "C" fn sim_zetMetricTracerDecodeExp(
    h: zet_metric_decoder_exp_handle_t,
    raw_size: *mut usize,
    raw: *mut u8,
    metrics_count: u32,
    metrics: *mut zet_metric_handle_t,
    set_count: *mut u32,
    per_set: *mut u32,
    entries_count: *mut u32,
    entries: *mut zet_metric_entry_exp_t,
) -> ze_result_t {
    guard("zetMetricTracerDecodeExp", || {
        if h.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        // SAFETY: API contract.
        let (raw_size, set_count, entries_count) = unsafe { (out(raw_size)?, out(set_count)?, out(entries_count)?) };
        if metrics.is_null() || (raw.is_null() && *raw_size > 0) {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if metrics_count == 0 {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        // SAFETY: API contract: `raw` holds `*raw_size` bytes, `metrics` `metrics_count` handles.
        let (bytes, handles) = unsafe {
            let bytes = if *raw_size == 0 { &[][..] } else { std::slice::from_raw_parts(raw, *raw_size) };
            (bytes, std::slice::from_raw_parts(metrics, metrics_count as usize))
        };
        let mut reg = registry::lock();
        // A null handle asks for nothing (Intel's conformance suite pads the array with them);
        // any other handle must be a decodable metric.
        let mut wanted = Vec::with_capacity(handles.len());
        for &m in handles {
            if m.is_null() {
                wanted.push(None);
                continue;
            }
            match reg.with(m as usize, |inst, obj, _| Ok((inst.id, obj))) {
                Ok((id, Obj::Decodable(g, i))) => wanted.push(Some((id, (g, i)))),
                _ => return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
            }
        }
        reg.with(h as usize, |inst, obj, _| {
            super::check_not_empty(inst)?;
            expect_obj!(obj, Obj::Decoder => ());
            if wanted.iter().flatten().any(|(id, _)| *id != inst.id) {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            let wanted: Vec<Option<(usize, usize)>> = wanted.iter().map(|w| w.map(|(_, w)| w)).collect();
            let query = *entries_count == 0 || entries.is_null();
            let sets = inst.decoder_sets(h as usize)? as u32;
            if !query && !per_set.is_null() && *set_count != 0 && *set_count < sets {
                return Err(ZE_RESULT_ERROR_INVALID_SIZE);
            }
            // SAFETY: API contract: a non-null `entries` holds `*entries_count` entries.
            let out = (!query).then(|| unsafe { std::slice::from_raw_parts_mut(entries, *entries_count as usize) });
            let o = inst.decode(h as usize, bytes, &wanted, out)?;
            if !per_set.is_null() && *set_count >= sets {
                // SAFETY: API contract: `per_set` holds `*set_count` (≥ sets) counts.
                unsafe { std::ptr::copy_nonoverlapping(o.per_set.as_ptr(), per_set, o.per_set.len()) };
            }
            if let Some(p) = o.processed.filter(|_| !inst.config.quirks.tracer_decode_keeps_size) {
                *raw_size = p;
            }
            *set_count = sets;
            *entries_count = o.total;
            Ok(())
        })
    })
}
