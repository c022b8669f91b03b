//! Event pools and events, as far as a metric streamer needs them: a host-visible pool, an event
//! the streamer signals once `notifyEveryNReports` reports wait unread, host waits with a
//! timeout, resets and queries. Nothing else signals them here (no command lists do).
//!
//! An event of a streamer is signaled while that many reports are unread, an event of a metric
//! tracer while `notifyEveryNBytes` wait to be read (or after a signal that no reset has cleared); `zeEventHostReset` clears the latter, so a reset event signals again
//! when the next notification is due. Destroying an event a streamer still uses, or a pool whose
//! events are alive, is refused and recorded.

use level_zero_sys::*;

use crate::instance::Instance;
use crate::ops_driver::R;
use crate::registry::{HandleChanges, Obj, new_handle};

pub(crate) struct Pool {
    pub(crate) ctx: usize,
    pub(crate) host_visible: bool,
    pub(crate) count: u32,
    /// Its events are counter-based (a `ze_event_pool_counter_based_exp_desc_t` in the
    /// descriptor's chain).
    pub(crate) counter_based: bool,
}

pub(crate) struct Event {
    pub(crate) pool: usize,
    pub(crate) index: u32,
}

impl Instance {
    pub(crate) fn event_pool_create(
        &mut self,
        ctx: usize,
        desc: &ze_event_pool_desc_t,
        ch: &mut HandleChanges,
    ) -> R<usize> {
        if desc.stype != ZE_STRUCTURE_TYPE_EVENT_POOL_DESC {
            self.violation("wrong_stype", ctx, format!("zeEventPoolCreate given stype {:#x}", desc.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        if desc.count == 0 {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        if desc.flags > 0x7 {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let h = new_handle();
        let host_visible = desc.flags & ZE_EVENT_POOL_FLAG_HOST_VISIBLE != 0;
        // SAFETY: the application passes a valid chain (API contract).
        let counter_based = unsafe { counter_based_chain(desc.pNext) };
        self.pools.insert(h, Pool { ctx, host_visible, count: desc.count, counter_based });
        ch.added.push((h, Obj::EventPool));
        Ok(h)
    }

    pub(crate) fn event_pool_destroy(&mut self, pool: usize, ch: &mut HandleChanges) -> R<()> {
        let alive = self.events.values().filter(|e| e.pool == pool).count();
        if alive > 0 {
            self.violation(
                "teardown_order",
                pool,
                format!("zeEventPoolDestroy while {alive} event(s) of the pool are alive (destroy them first)"),
            );
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        self.pools.remove(&pool).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        ch.removed.push(pool);
        self.teardown_step();
        Ok(())
    }

    pub(crate) fn event_create(&mut self, pool: usize, desc: &ze_event_desc_t, ch: &mut HandleChanges) -> R<usize> {
        if desc.stype != ZE_STRUCTURE_TYPE_EVENT_DESC {
            self.violation("wrong_stype", pool, format!("zeEventCreate given stype {:#x}", desc.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let count = self.pools.get(&pool).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?.count;
        if desc.index >= count || self.events.values().any(|e| e.pool == pool && e.index == desc.index) {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let h = new_handle();
        self.events.insert(h, Event { pool, index: desc.index });
        self.signaled.remove(&h);
        ch.added.push((h, Obj::Event));
        Ok(h)
    }

    pub(crate) fn event_destroy(&mut self, e: usize, ch: &mut HandleChanges) -> R<()> {
        if self.tracer_of_event(e).is_some() {
            self.violation(
                "teardown_with_live_tracer",
                e,
                "zeEventDestroy of the notification event of a live metric tracer (destroy the tracer first)".into(),
            );
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        if self.streamers.values().any(|s| s.event == Some(e)) {
            self.violation(
                "teardown_with_open_streamer",
                e,
                "zeEventDestroy of the notification event of an open metric streamer (close the streamer first)".into(),
            );
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        self.events.remove(&e).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        self.signaled.remove(&e);
        ch.removed.push(e);
        self.teardown_step();
        Ok(())
    }

    pub(crate) fn event_is_host_visible(&self, e: usize) -> bool {
        self.events.get(&e).and_then(|ev| self.pools.get(&ev.pool)).is_some_and(|p| p.host_visible)
    }

    /// Is `e` an event of a counter-based pool?
    pub(crate) fn event_is_counter_based(&self, e: usize) -> bool {
        self.events.get(&e).and_then(|ev| self.pools.get(&ev.pool)).is_some_and(|p| p.counter_based)
    }

    /// The streamer that notifies through `e`, if any.
    fn streamer_of(&self, e: usize) -> Option<usize> {
        self.streamers.iter().find(|(_, s)| s.event == Some(e)).map(|(h, _)| *h)
    }

    /// Is `e` signaled now? Err(DEVICE_LOST) if its streamer found the device lost.
    pub(crate) fn event_status(&mut self, e: usize) -> R<bool> {
        if !self.events.contains_key(&e) {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        if self.signaled.contains(&e) {
            return Ok(true);
        }
        if let Some(t) = self.tracer_of_event(e) {
            let need = self.tracers[&t].notify_bytes as usize;
            if self.tracer_available(t)? >= need {
                self.signaled.insert(e);
                return Ok(true);
            }
            return Ok(false);
        }
        let Some(s) = self.streamer_of(e) else {
            return Ok(false);
        };
        let need = self.streamers[&s].notify_every as usize;
        if self.streamer_pending(s)? >= need {
            self.signaled.insert(e);
            return Ok(true);
        }
        Ok(false)
    }

    /// Host time at which `e` will be signaled (None: nothing will signal it).
    pub(crate) fn event_due_at(&self, e: usize) -> Option<u64> {
        if self.tracer_of_event(e).is_some() {
            // The workload writes once per tick: look again then.
            return Some(crate::writer::monotonic_ns() + self.config.update_period_us * 1000);
        }
        let s = self.streamer_of(e)?;
        self.streamer_ready_at(s, self.streamers[&s].notify_every as usize)
    }

    pub(crate) fn event_reset(&mut self, e: usize) -> R<()> {
        if !self.events.contains_key(&e) {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        self.signaled.remove(&e);
        Ok(())
    }
}

/// Does the chain of an event pool descriptor ask for counter-based events (a
/// `ze_event_pool_counter_based_exp_desc_t`: flags 0 is the default mode, immediate command
/// lists)? At most 16 nodes are followed.
///
/// # Safety
/// `p` is null or the head of a valid chain of Level Zero structs.
unsafe fn counter_based_chain(mut p: *const core::ffi::c_void) -> bool {
    for _ in 0..16 {
        if p.is_null() {
            return false;
        }
        // SAFETY: a valid chain node (the function's contract); every node starts with stype, pNext.
        let node = unsafe { &*p.cast::<ze_base_desc_t>() };
        if node.stype == ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC {
            return true;
        }
        p = node.pNext;
    }
    false
}
