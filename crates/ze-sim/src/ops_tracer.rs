//! The metric tracer and its decoders (`ZET_experimental_metric_tracer`): create, enable,
//! disable, read, destroy; decoder create, destroy, decodable metrics. Decoding is in
//! `tracer_decode`.
//!
//! A tracer reads the rings of the tracer-based groups it was created on (`crate::ring`); it must
//! be created on groups activated on that device in that context, one tracer per device, and
//! starts disabled. It collects the events the workload writes while it is enabled: a
//! synchronous enable or disable takes effect at the call, an asynchronous one one simulation
//! tick (`update_period_us`) later, seen at the next tracer call. `zetMetricTracerReadDataExp`
//! copies whole 32-byte records, oldest first (several groups merged by time): NOT_READY with
//! size 0 while disabled with nothing left, SUCCESS otherwise (size 0 while enabled and nothing
//! came yet); `*pRawDataSize == 0` (or no buffer), the size query the specification deprecated,
//! is refused with INVALID_ARGUMENT as compute-runtime does, unless the quirk `tracer_size_query`
//! answers the bytes available (older drivers); a buffer smaller than one record is INVALID_SIZE. Events the ring overwrote before they were read are
//! lost, and the next read says WARNING_DROPPED_DATA once. The notification event is signaled
//! while `notifyEveryNBytes` (rounded up to whole records, at most half the smallest ring) wait.
//!
//! The rules (violations, each refused with HANDLE_OBJECT_IN_USE): destroying a tracer still
//! enabled (`tracer_destroyed_while_enabled`); deactivating a traced group, destroying the
//! context, disabling metrics on the device or destroying the notification event while a tracer
//! lives (`teardown_with_live_tracer`). A decoder and its tracer may be destroyed in either order
//! (the header orders nothing between them; a decoder keeps what it decodes), and a decoder
//! outliving everything is a leak at exit, never a violation. Freeing an import of a traced group is allowed at any time
//! before its exporter is torn down (the extension asks nothing more): Intel's conformance suite
//! frees it first, then destroys the decoder and the tracer, then deactivates.

use std::collections::VecDeque;

use level_zero_sys::*;

use crate::instance::Instance;
use crate::ops_driver::R;
use crate::registry::{HandleChanges, Obj, new_handle};
use crate::ring::{RECORD_BYTES, TraceEvent};

/// Whether a tracer collects, and the transition an asynchronous call asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Disabled,
    /// Enabled asynchronously: collecting from host time `at`.
    Enabling {
        at: u64,
    },
    Enabled,
    /// Disabled asynchronously: collecting until host time `at`.
    Disabling {
        at: u64,
    },
}

/// The events of one group a tracer has collected and not yet handed out: windows of sequence
/// numbers `[next, end)`, `end` open while enabled.
struct Windows {
    group: usize,
    windows: VecDeque<(u64, Option<u64>)>,
}

pub(crate) struct Tracer {
    pub(crate) ctx: usize,
    pub(crate) device: usize,
    pub(crate) groups: Vec<usize>,
    pub(crate) event: Option<usize>,
    pub(crate) notify_bytes: u32,
    state: State,
    collected: Vec<Windows>,
    /// Events were overwritten before they were read (said once by the next read).
    dropped: bool,
}

/// A decoder: what it decodes, copied from its tracer at creation (it may outlive the tracer).
pub(crate) struct Decoder {
    pub(crate) groups: Vec<usize>,
    /// Sub-devices of the tracer's device (0 when it has none): one set per sub-device.
    pub(crate) sub_devices: usize,
}

impl Tracer {
    /// Enabled, or asked to be (its decoders and the tracer itself must wait for a disable).
    pub(crate) fn enabled(&self) -> bool {
        self.state != State::Disabled
    }
}

impl Instance {
    pub(crate) fn tracer_create(
        &mut self,
        ctx: usize,
        d: usize,
        groups: &[usize],
        desc: &mut zet_metric_tracer_exp_desc_t,
        event: Option<usize>,
        ch: &mut HandleChanges,
    ) -> R<usize> {
        self.device_status()?;
        if self.config.faults.tracer_create_fails {
            return Err(ZE_RESULT_ERROR_UNKNOWN);
        }
        if desc.stype != ZET_STRUCTURE_TYPE_METRIC_TRACER_EXP_DESC {
            self.violation("wrong_stype", ctx, format!("zetMetricTracerCreateExp given stype {:#x}", desc.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        if groups.is_empty() {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        for &g in groups {
            let grp = &self.groups[g];
            if grp.device != d || !grp.tracer || grp.active_in != Some(ctx) || grp.buffer.is_none() {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
        }
        if let Some(e) = event {
            if !self.event_is_host_visible(e) {
                return Err(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
            }
            if self.streamers.values().any(|s| s.event == Some(e)) || self.tracers.values().any(|t| t.event == Some(e))
            {
                return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
            }
        }
        if self.tracers.values().any(|t| t.device == d) {
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        let smallest = groups.iter().filter_map(|&g| self.ring_capacity(g)).min().unwrap_or(64);
        let half = (smallest * RECORD_BYTES / 2) as u32;
        let rounded = desc.notifyEveryNBytes.max(1).div_ceil(RECORD_BYTES as u32).saturating_mul(RECORD_BYTES as u32);
        desc.notifyEveryNBytes = rounded.min(half);
        let h = new_handle();
        let mut unique: Vec<usize> = Vec::with_capacity(groups.len());
        for &g in groups {
            if !unique.contains(&g) {
                unique.push(g);
            }
        }
        let collected = unique.iter().map(|&group| Windows { group, windows: VecDeque::new() }).collect();
        self.tracers.insert(
            h,
            Tracer {
                ctx,
                device: d,
                groups: unique,
                event,
                notify_bytes: desc.notifyEveryNBytes,
                state: State::Disabled,
                collected,
                dropped: false,
            },
        );
        ch.added.push((h, Obj::Tracer));
        Ok(h)
    }

    fn ring_capacity(&self, g: usize) -> Option<usize> {
        self.groups[g].buffer.as_ref()?.ring.as_ref().map(|r| r.capacity)
    }

    /// Events written so far into the ring of group `g`.
    fn written(&self, g: usize) -> u64 {
        self.groups[g].buffer.as_ref().map_or(0, |b| b.ring_written())
    }

    fn tracer_mut(&mut self, h: usize) -> R<&mut Tracer> {
        self.tracers.get_mut(&h).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
    }

    /// Starts collecting from every group's current write index.
    fn open_windows(&mut self, h: usize) {
        let starts: Vec<u64> = self.tracers[&h].collected.iter().map(|w| self.written(w.group)).collect();
        let t = self.tracers.get_mut(&h).expect("checked by the caller");
        for (w, start) in t.collected.iter_mut().zip(starts) {
            w.windows.push_back((start, None));
        }
        t.state = State::Enabled;
    }

    /// Stops collecting at every group's current write index.
    fn close_windows(&mut self, h: usize) {
        let ends: Vec<u64> = self.tracers[&h].collected.iter().map(|w| self.written(w.group)).collect();
        let t = self.tracers.get_mut(&h).expect("checked by the caller");
        for (w, end) in t.collected.iter_mut().zip(ends) {
            if let Some(last) = w.windows.back_mut().filter(|l| l.1.is_none()) {
                last.1 = Some(end);
            }
        }
        t.state = State::Disabled;
    }

    /// Applies an asynchronous enable or disable whose time has come.
    fn settle(&mut self, h: usize) -> R<()> {
        let now = crate::writer::monotonic_ns();
        match self.tracer_mut(h)?.state {
            State::Enabling { at } if now >= at => self.open_windows(h),
            State::Disabling { at } if now >= at => self.close_windows(h),
            _ => {}
        }
        Ok(())
    }

    pub(crate) fn tracer_enable(&mut self, h: usize, synchronous: bool) -> R<()> {
        self.device_status()?;
        self.settle(h)?;
        if self.config.faults.tracer_enable_fails {
            self.tracer_mut(h)?;
            return Err(ZE_RESULT_ERROR_UNKNOWN);
        }
        let later = crate::writer::monotonic_ns() + self.config.update_period_us * 1000;
        match self.tracer_mut(h)?.state {
            State::Disabled if synchronous => self.open_windows(h),
            State::Disabled => self.tracer_mut(h)?.state = State::Enabling { at: later },
            State::Enabling { .. } if synchronous => self.open_windows(h),
            State::Disabling { .. } => self.tracer_mut(h)?.state = State::Enabled,
            State::Enabling { .. } | State::Enabled => {}
        }
        Ok(())
    }

    pub(crate) fn tracer_disable(&mut self, h: usize, synchronous: bool) -> R<()> {
        // A release: it works on a lost device too (as closing a streamer does), so a client can
        // still tear down in order after the loss.
        self.settle(h)?;
        let later = crate::writer::monotonic_ns() + self.config.update_period_us * 1000;
        match self.tracer_mut(h)?.state {
            State::Enabled if synchronous => self.close_windows(h),
            State::Enabled => self.tracer_mut(h)?.state = State::Disabling { at: later },
            State::Disabling { .. } if synchronous => self.close_windows(h),
            State::Enabling { .. } => self.tracer_mut(h)?.state = State::Disabled,
            State::Disabling { .. } | State::Disabled => {}
        }
        Ok(())
    }

    /// Collected events of tracer `h` not yet handed out, per group (without taking them), at
    /// most `max` per group; marks the tracer `dropped` if the ring overwrote some.
    fn pending(&mut self, h: usize, max: usize) -> Vec<Vec<TraceEvent>> {
        let mut out = Vec::new();
        let mut lost = false;
        let t = &self.tracers[&h];
        for w in &t.collected {
            let mut events = Vec::new();
            let buf = self.groups[w.group].buffer.clone();
            for &(start, end) in &w.windows {
                let Some((mut got, oldest)) =
                    buf.as_ref().and_then(|b| b.ring_read(start, end.unwrap_or(u64::MAX), max - events.len()))
                else {
                    break;
                };
                lost |= oldest > start;
                events.append(&mut got);
                if events.len() >= max {
                    break;
                }
            }
            out.push(events);
        }
        let t = self.tracers.get_mut(&h).expect("looked up above");
        t.dropped |= lost;
        out
    }

    /// Bytes tracer `h` could hand out now (counted, not read: events the ring overwrote are
    /// not counted).
    pub(crate) fn tracer_available(&mut self, h: usize) -> R<usize> {
        self.settle(h)?;
        let mut events = 0u64;
        for w in &self.tracers[&h].collected {
            let written = self.written(w.group);
            let oldest = written.saturating_sub(self.ring_capacity(w.group).unwrap_or(0) as u64);
            for &(start, end) in &w.windows {
                let end = end.unwrap_or(written).min(written);
                events += end.saturating_sub(start.max(oldest));
            }
        }
        Ok(events as usize * RECORD_BYTES)
    }

    /// Hands out `events` of tracer `h` (taken from the fronts of its windows).
    fn consume(&mut self, h: usize, events: &[TraceEvent]) {
        let t = self.tracers.get_mut(&h).expect("looked up by the caller");
        for w in &mut t.collected {
            let tag = crate::ring::tag_of(w.group);
            let Some(last) = events.iter().rev().find(|e| e.tag == tag) else { continue };
            // Windows before the one holding the last event handed out are exhausted.
            while let Some(&(start, end)) = w.windows.front() {
                if end.is_some_and(|e| e <= last.seq) {
                    w.windows.pop_front();
                    continue;
                }
                w.windows[0].0 = start.max(last.seq + 1);
                break;
            }
            w.windows.retain(|&(start, end)| end.is_none_or(|e| start < e));
        }
    }

    /// `zetMetricTracerReadDataExp`.
    pub(crate) fn tracer_read(&mut self, h: usize, size: &mut usize, data: Option<&mut [u8]>) -> R<()> {
        self.device_status()?;
        self.settle(h)?;
        if let Some(n) = self.config.faults.tracer_read_fails_after {
            if self.tracer_reads >= n {
                return Err(ZE_RESULT_ERROR_UNKNOWN);
            }
            self.tracer_reads += 1;
        }
        let collecting = self.tracer_mut(h)?.enabled() && !matches!(self.tracers[&h].state, State::Enabling { .. });
        let available = self.tracer_available(h)?;
        let Some(buf) = data.filter(|_| *size > 0) else {
            self.size_queries += 1;
            if !self.config.quirks.tracer_size_query {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            *size = available;
            return if available == 0 && !collecting { Err(ZE_RESULT_NOT_READY) } else { Ok(()) };
        };
        if available == 0 {
            *size = 0;
            return if collecting { Ok(()) } else { Err(ZE_RESULT_NOT_READY) };
        }
        let room = buf.len() / RECORD_BYTES;
        if room == 0 {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        let mut merged: Vec<TraceEvent> = self.pending(h, room).into_iter().flatten().collect();
        merged.sort_by_key(|e| (e.timestamp_ns, e.tag, e.seq));
        merged.truncate(room);
        for (i, e) in merged.iter().enumerate() {
            buf[i * RECORD_BYTES..(i + 1) * RECORD_BYTES].copy_from_slice(&e.to_bytes());
        }
        *size = merged.len() * RECORD_BYTES;
        self.consume(h, &merged);
        if std::mem::take(&mut self.tracer_mut(h)?.dropped) {
            return Err(ZE_RESULT_WARNING_DROPPED_DATA);
        }
        Ok(())
    }

    pub(crate) fn tracer_destroy(&mut self, h: usize, ch: &mut HandleChanges) -> R<()> {
        self.settle(h)?;
        if self.tracer_mut(h)?.enabled() {
            self.violation(
                "tracer_destroyed_while_enabled",
                h,
                "zetMetricTracerDestroyExp on a tracer still enabled (disable it first)".into(),
            );
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        // Its decoders may outlive it: they keep what they decode (the header orders nothing
        // between the two, and Intel's conformance suite destroys the tracer first).
        self.tracers.remove(&h);
        ch.removed.push(h);
        self.teardown_step();
        Ok(())
    }

    pub(crate) fn decoder_create(&mut self, tracer: usize, ch: &mut HandleChanges) -> R<usize> {
        let t = self.tracers.get(&tracer).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        if self.config.faults.decoder_create_fails {
            return Err(ZE_RESULT_ERROR_UNKNOWN);
        }
        let decoder = Decoder { groups: t.groups.clone(), sub_devices: self.devices[t.device].subs.len() };
        let h = new_handle();
        self.decoders.insert(h, decoder);
        ch.added.push((h, Obj::Decoder));
        Ok(h)
    }

    pub(crate) fn decoder_destroy(&mut self, h: usize, ch: &mut HandleChanges) -> R<()> {
        // Whether or not its tracer still lives or is enabled: a decoder reads nothing the tracer
        // owns (the header orders nothing between them).
        self.decoders.remove(&h).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        ch.removed.push(h);
        self.teardown_step();
        Ok(())
    }

    /// The decodable metric handles of decoder `h`, group after group in metric order.
    pub(crate) fn decodable_metrics(&self, h: usize) -> R<Vec<zet_metric_handle_t>> {
        let d = self.decoders.get(&h).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        Ok(d.groups.iter().flat_map(|&g| self.groups[g].decodable.iter().map(|&m| m as zet_metric_handle_t)).collect())
    }

    /// The tracer notifying through event `e`, if any.
    pub(crate) fn tracer_of_event(&self, e: usize) -> Option<usize> {
        self.tracers.iter().find(|(_, t)| t.event == Some(e)).map(|(h, _)| *h)
    }

    /// Records a violation and refuses if a tracer lives on one of `groups`, in context `ctx`
    /// or on one of `devices`: `what` is the teardown step attempted.
    pub(crate) fn refuse_with_live_tracer(
        &mut self,
        groups: &[usize],
        ctx: Option<usize>,
        what: &str,
        h: usize,
    ) -> R<()> {
        let live: Vec<String> = self
            .tracers
            .values()
            .filter(|t| t.groups.iter().any(|g| groups.contains(g)) || Some(t.ctx) == ctx)
            .flat_map(|t| t.groups.iter().map(|&g| self.groups[g].name.clone()))
            .collect();
        if live.is_empty() {
            return Ok(());
        }
        self.violation(
            "teardown_with_live_tracer",
            h,
            format!(
                "{what} while a metric tracer lives on metric group(s) {} (disable it, destroy its decoders, then it)",
                live.join(", ")
            ),
        );
        Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)
    }
}
