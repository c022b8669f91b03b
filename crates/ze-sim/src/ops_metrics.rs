//! Metric groups and metrics: properties (with the export-memory `pNext` chain), activation,
//! and runtime enable/disable (user-created groups are in `ops_user_groups`).
//!
//! Exporter life: a group's exported memory is created by the first export query or activation
//! (an unclosed user group exports nothing yet) and torn down — its fds closed by the driver —
//! when the group is destroyed (user groups), when metrics are disabled at run time on its
//! device, or when the driver goes away. Deactivation only stops the snapshots, unless the quirk
//! `export_only_while_active` makes it a teardown too (and makes inactive groups export
//! nothing). Deactivation, destroy and disable are refused while an import of the memory is
//! alive, and recorded as a violation if the application still maps it.

use std::sync::Arc;

use level_zero_sys::*;

use crate::config::{Export, Signal};
use crate::export::{Content, CounterSpec, ExportBuffer};
use crate::instance::{Instance, MetricRef};
use crate::ops_driver::{R, put_str};
use crate::ring::RingSpec;

/// Longest `pNext` chain followed; anything longer is treated as a loop.
const MAX_CHAIN: usize = 16;

/// Which of a buffer's fds a query reports.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum WhichFd {
    Primary,
    Second,
}

/// Walks a `pNext` chain. SAFETY (for callers): the application promises every node is a valid
/// struct starting with `stype`/`pNext`, as the API requires.
unsafe fn chain(mut p: *mut core::ffi::c_void) -> Vec<*mut ze_base_properties_t> {
    let mut nodes = Vec::new();
    while !p.is_null() && nodes.len() < MAX_CHAIN {
        let node = p.cast::<ze_base_properties_t>();
        nodes.push(node);
        // SAFETY: see the function's contract.
        p = unsafe { (*node).pNext };
    }
    nodes
}

fn export_stype(stype: u32) -> bool {
    stype == ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP || stype == ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES
}

/// A group's sampling type, a bit field (the header: "a combination of
/// zet_metric_group_sampling_type_flag_t"): EXP_TRACER_BASED alone for a tracer-based group;
/// TIME_BASED for one the metric streamer reads; EVENT_BASED for one that exports memory or is
/// read neither way. A group both exported and streamed says EVENT_BASED | TIME_BASED (where
/// compute-runtime lists such a metric set twice, once per bit). Readers must test bits, never
/// compare the whole value.
pub(crate) fn sampling_type(tracer: bool, stream: bool, export: Export) -> zet_metric_group_sampling_type_flags_t {
    if tracer {
        return ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED;
    }
    let mut t = 0;
    if stream {
        t |= ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED;
    }
    if !stream || export != Export::None {
        t |= ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED;
    }
    t
}

impl Instance {
    pub(crate) fn visible_groups(&self, d: usize) -> Vec<zet_metric_group_handle_t> {
        if !self.metrics_enabled(d) {
            return Vec::new();
        }
        self.devices[d]
            .groups
            .iter()
            .filter(|&&g| !self.groups[g].user_created)
            .map(|&g| self.groups[g].handle as zet_metric_group_handle_t)
            .collect()
    }

    /// fd and size an export query reports for `g`, after faults; an active exporter is marked
    /// as touched by the calling thread.
    fn export_fields(&mut self, g: usize, which: WhichFd) -> (i32, usize) {
        let grp = &self.groups[g];
        let can_export = grp.active_in.is_some()
            || (!self.config.quirks.export_only_while_active
                && grp.closed
                && !grp.destroyed
                && !grp.metrics.is_empty());
        if grp.buffer.is_none() && can_export {
            match self.make_buffer(g) {
                Ok(buf) => self.groups[g].buffer = Some(buf),
                Err(e) => eprintln!("ze-sim: cannot create exported memory: {e}"),
            }
        }
        let Some(buf) = self.groups[g].buffer.clone().filter(|_| can_export) else {
            return (-1, 0);
        };
        if self.groups[g].active_in.is_some() {
            self.touch_exporter(g, "export query");
        }
        self.check_fds(g, "at an export query");
        let f = &self.config.faults;
        let fd = match which {
            WhichFd::Primary => buf.fd,
            WhichFd::Second => buf.second_fd.unwrap_or(buf.fd),
        };
        let fd = if f.export_fd_minus_one { -1 } else { fd };
        let full = if self.config.quirks.per_metric_sizes_differ && which == WhichFd::Primary && buf.second_fd.is_some()
        {
            buf.used
        } else {
            buf.size
        };
        let size = if f.export_size_zero {
            0
        } else if f.export_size_oversized {
            buf.size * 16
        } else {
            full
        };
        (fd, size)
    }

    /// Fills the structs of the `pNext` chain for group `g` (or one of its metrics). Returns Err
    /// on the INVALID_ARGUMENT quirk.
    fn fill_chain(
        &mut self,
        p_next: *mut core::ffi::c_void,
        g: usize,
        export: Option<WhichFd>,
        group_type: u32,
    ) -> R<()> {
        // SAFETY: the application passes a valid chain (API contract).
        let nodes = unsafe { chain(p_next) };
        let knows_export = !self.config.quirks.no_export_extension;
        let known = |stype: u32| knows_export && export_stype(stype);
        if self.config.quirks.invalid_argument_on_unknown_chain
            && !nodes.is_empty()
            // SAFETY: nodes are valid per the chain contract.
            && !nodes.iter().any(|&n| known(unsafe { (*n).stype }))
        {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        for n in nodes.into_iter().filter(|_| knows_export) {
            // SAFETY: as above; the stype says which struct the node is.
            let stype = unsafe { (*n).stype };
            if stype == ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP {
                // SAFETY: stype identifies a zet_metric_group_type_exp_t.
                unsafe { (*n.cast::<zet_metric_group_type_exp_t>()).r#type = group_type };
            } else if stype == ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES {
                let (fd, size) = match export {
                    Some(which) => self.export_fields(g, which),
                    None => (-1, 0),
                };
                // SAFETY: stype identifies a zet_export_dma_buf_exp_properties_t.
                let e = unsafe { &mut *n.cast::<zet_export_dma_buf_exp_properties_t>() };
                e.fd = fd;
                e.size = size;
            }
        }
        Ok(())
    }

    fn clobber(&mut self) -> *mut core::ffi::c_void {
        (&mut *self.decoy as *mut zet_export_dma_buf_exp_properties_t).cast()
    }

    pub(crate) fn group_properties(&mut self, g: usize, p: &mut zet_metric_group_properties_t) -> R<()> {
        let h = self.groups[g].handle;
        if p.stype != ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES {
            self.violation("wrong_stype", h, format!("zetMetricGroupGetProperties given base stype {:#x}", p.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        if self.config.faults.group_properties_fail {
            return Err(ZE_RESULT_ERROR_UNKNOWN);
        }
        let grp = &self.groups[g];
        let mut group_type = match grp.export {
            Export::Group => ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF,
            Export::PerMetric | Export::None => ZET_METRIC_GROUP_TYPE_EXP_FLAG_OTHER,
        };
        if grp.user_created {
            group_type |= ZET_METRIC_GROUP_TYPE_EXP_FLAG_USER_CREATED;
        }
        if self.config.quirks.group_type_bits_combined {
            // As compute-runtime fills it: a bit set, never one value.
            group_type |= ZET_METRIC_GROUP_TYPE_EXP_FLAG_OTHER
                | ZET_METRIC_GROUP_TYPE_EXP_FLAG_MARKER
                | ZET_METRIC_GROUP_TYPE_EXP_FLAG_USER_CREATED;
        }
        let export = (grp.export == Export::Group).then_some(WhichFd::Primary);
        self.fill_chain(p.pNext, g, export, group_type)?;
        let grp = &self.groups[g];
        put_str(&mut p.name, &grp.name);
        put_str(&mut p.description, &grp.description);
        p.samplingType = sampling_type(grp.tracer, grp.stream, grp.export);
        p.domain = grp.domain;
        p.metricCount = grp.metrics.len() as u32;
        if self.config.quirks.overwrite_pnext {
            p.pNext = self.clobber();
        }
        Ok(())
    }

    /// What `zetMetricGroupGetExportDataExp` says of group `g` (`export_data.rs`): its
    /// properties and its metrics' as the property queries answer them.
    pub(crate) fn export_description(&mut self, g: usize) -> R<crate::export_data::ExportedGroup> {
        let mut p =
            zet_metric_group_properties_t { stype: ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES, ..Default::default() };
        self.group_properties(g, &mut p)?;
        let mut metrics = Vec::new();
        for i in 0..self.groups[g].metrics.len() {
            let mut m = zet_metric_properties_t { stype: ZET_STRUCTURE_TYPE_METRIC_PROPERTIES, ..Default::default() };
            self.metric_properties(g, i, &mut m)?;
            metrics.push(crate::export_data::ExportedMetric {
                name: self.groups[g].metrics[i].cfg.name.clone(),
                metric_type: m.metricType,
                result_type: m.resultType,
                unit: self.groups[g].metrics[i].cfg.signal.unit().to_owned(),
            });
        }
        Ok(crate::export_data::ExportedGroup {
            device_id: self.devices[self.groups[g].device].cfg.device_id,
            domain: p.domain,
            sampling: p.samplingType,
            name: self.groups[g].name.clone(),
            metrics,
        })
    }

    pub(crate) fn metrics_of(&self, g: usize) -> Vec<zet_metric_handle_t> {
        self.groups[g].metrics.iter().map(|m| m.handle as zet_metric_handle_t).collect()
    }

    pub(crate) fn metric_properties(&mut self, g: usize, i: usize, p: &mut zet_metric_properties_t) -> R<()> {
        let h = self.groups[g].metrics[i].handle;
        if p.stype != ZET_STRUCTURE_TYPE_METRIC_PROPERTIES {
            self.violation("wrong_stype", h, format!("zetMetricGetProperties given base stype {:#x}", p.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        // Per-metric export: every counter reports the buffer, the last one through a second fd;
        // the streamer's timestamp metric is no counter and exports nothing.
        let grp = &self.groups[g];
        let counter = |m: &MetricRef| m.cfg.signal != Signal::Timestamp;
        let per_metric = grp.export == Export::PerMetric && counter(&grp.metrics[i]);
        let counters = grp.metrics.iter().filter(|m| counter(m)).count();
        let last = grp.metrics.iter().rposition(counter);
        let export =
            per_metric.then_some(if Some(i) == last && counters > 1 { WhichFd::Second } else { WhichFd::Primary });
        self.fill_chain(p.pNext, g, export, 0)?;
        let grp = &self.groups[g];
        let m = &grp.metrics[i];
        let device_kind = self.devices[grp.device].cfg.kind;
        put_str(&mut p.name, &m.cfg.name);
        put_str(&mut p.description, &m.cfg.description);
        put_str(&mut p.component, &format!("{:?}/{}", device_kind, grp.name));
        p.tierNumber = 1;
        let signal = m.cfg.signal;
        p.metricType = if per_metric && !signal.is_trace_event() {
            ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF
        } else {
            signal.metric_type()
        };
        p.resultType = signal.result_type();
        put_str(&mut p.resultUnits, m.cfg.signal.unit());
        if self.config.quirks.overwrite_pnext {
            p.pNext = self.clobber();
        }
        Ok(())
    }

    /// `zetContextActivateMetricGroups`: makes `wanted` the set of groups activated on `d` in `ctx`.
    pub(crate) fn activate(&mut self, ctx: usize, d: usize, wanted: &[usize]) -> R<()> {
        if !wanted.is_empty() {
            if self.shared.is_lost() {
                return Err(ZE_RESULT_ERROR_DEVICE_LOST);
            }
            if !self.metrics_enabled(d) {
                return Err(ZE_RESULT_ERROR_UNINITIALIZED);
            }
            if self.config.faults.activate_fails {
                return Err(ZE_RESULT_ERROR_UNKNOWN);
            }
        }
        let mut domains = std::collections::HashSet::new();
        for &g in wanted {
            let grp = &self.groups[g];
            if grp.device != d || grp.destroyed || !grp.closed {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            if grp.active_in.is_some_and(|c| c != ctx) {
                return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
            }
            if !domains.insert(grp.domain) {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
        }
        let current: Vec<usize> = (0..self.groups.len())
            .filter(|&g| self.groups[g].active_in == Some(ctx) && self.groups[g].device == d)
            .collect();
        let dropped: Vec<usize> = current.iter().copied().filter(|g| !wanted.contains(g)).collect();
        if !dropped.is_empty() {
            let h = self.groups[dropped[0]].handle;
            self.refuse_with_open_streamer(&dropped, None, "deactivation", h)?;
            self.refuse_with_live_tracer(&dropped, None, "deactivation", h)?;
        }
        for &g in &dropped {
            let live = self.live_imports_of(g);
            if live > 0 {
                let (name, h) = (self.groups[g].name.clone(), self.groups[g].handle);
                self.violation(
                    "teardown_with_live_import",
                    h,
                    format!("metric group {name} deactivated while {live} import(s) of its exported memory are alive (free them first)"),
                );
                return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
            }
        }
        for &g in &dropped {
            self.check_fds(g, "at deactivation");
            self.check_mappings(g, "deactivation");
            if self.config.quirks.export_only_while_active {
                self.retire_buffer(g);
            } else if let Some(buf) = &self.groups[g].buffer {
                self.shared.deactivate(buf);
            }
            self.groups[g].owner = None;
            self.groups[g].active_in = None;
        }
        for &g in wanted {
            if self.groups[g].active_in.is_some() {
                continue;
            }
            if self.groups[g].export != Export::None {
                if self.groups[g].buffer.is_none() {
                    let buf = self.make_buffer(g).map_err(|e| {
                        eprintln!("ze-sim: cannot create exported memory: {e}");
                        ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
                    })?;
                    self.groups[g].buffer = Some(buf);
                }
                let buf = Arc::clone(self.groups[g].buffer.as_ref().expect("just made"));
                self.shared.activate(buf);
            }
            self.groups[g].active_in = Some(ctx);
        }
        if !dropped.is_empty() {
            self.teardown_step();
        }
        Ok(())
    }

    fn make_buffer(&self, g: usize) -> std::io::Result<Arc<ExportBuffer>> {
        let grp = &self.groups[g];
        let dev = &self.devices[grp.device].cfg;
        let content = if grp.tracer {
            Content::Ring(RingSpec {
                tag: crate::ring::tag_of(g),
                signals: grp.metrics.iter().map(|m| m.cfg.signal).collect(),
                sub_devices: self.devices[grp.device].subs.len().max(1) as u16,
                capacity: self.config.tracer_ring_events as usize,
                per_tick: self.config.tracer_events_per_tick,
            })
        } else {
            Content::Counters(
                grp.metrics.iter().map(|m| CounterSpec { signal: m.cfg.signal, index: m.index }).collect(),
            )
        };
        Ok(Arc::new(ExportBuffer::create(
            content,
            dev.kind,
            dev.core_clock_mhz as f64,
            g as u64 + 1,
            grp.export == Export::PerMetric && grp.metrics.len() > 1,
            self.config.quirks.unmappable_export,
            self.config.quirks.unsealed_export,
        )?))
    }

    /// Tears down a group's exporter: the implementation closes the fds it reported. Callers
    /// have checked that no import of it is alive.
    pub(crate) fn retire_buffer(&mut self, g: usize) {
        if let Some(buf) = self.groups[g].buffer.take() {
            self.shared.deactivate(&buf);
            buf.close_reported_fds();
        }
        self.groups[g].owner = None;
        self.groups[g].active_in = None;
    }

    fn device_family(&self, d: usize) -> Vec<usize> {
        let mut v = vec![d];
        v.extend(self.devices[d].subs.iter().copied());
        v
    }

    /// `zetDeviceGetConcurrentMetricGroupsExp`: `given` (groups of device `d`) split into sets
    /// that can be activated together, at most one group per domain in each: the first set
    /// takes the first group of every domain in the order given, the second the second, and so
    /// on (as many sets as the most groups one domain has). A group of another device, a
    /// destroyed one or one given twice is INVALID_ARGUMENT.
    pub(crate) fn concurrent_sets(&self, d: usize, given: &[usize]) -> R<Vec<Vec<usize>>> {
        if self.shared.is_lost() {
            return Err(ZE_RESULT_ERROR_DEVICE_LOST);
        }
        let mut sets: Vec<Vec<usize>> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for &g in given {
            let grp = &self.groups[g];
            if grp.device != d || grp.destroyed || !seen.insert(g) {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            match sets.iter_mut().find(|s| s.iter().all(|&o| self.groups[o].domain != grp.domain)) {
                Some(set) => set.push(g),
                None => sets.push(vec![g]),
            }
        }
        Ok(sets)
    }

    pub(crate) fn enable_metrics(&mut self, d: usize) -> R<()> {
        if self.shared.is_lost() {
            return Err(ZE_RESULT_ERROR_DEVICE_LOST);
        }
        if self.config.faults.enable_metrics_fails {
            return Err(ZE_RESULT_ERROR_UNKNOWN);
        }
        self.devices[d].runtime_enabled = true;
        self.devices[d].ever_enabled = true;
        Ok(())
    }

    pub(crate) fn disable_metrics(&mut self, d: usize) -> R<()> {
        if self.config.faults.disable_refused {
            return Err(ZE_RESULT_ERROR_UNKNOWN);
        }
        let family = self.device_family(d);
        let h = self.devices[d].handle;
        let groups: Vec<usize> = (0..self.groups.len()).filter(|&g| family.contains(&self.groups[g].device)).collect();
        self.refuse_with_open_streamer(&groups, None, "zetDeviceDisableMetricsExp", h)?;
        self.refuse_with_live_tracer(&groups, None, "zetDeviceDisableMetricsExp", h)?;
        let live: usize = groups.iter().map(|&g| self.live_imports_of(g)).sum();
        if live > 0 {
            self.violation(
                "teardown_with_live_import",
                h,
                format!(
                    "zetDeviceDisableMetricsExp while {live} import(s) of exported memory are alive (free them first)"
                ),
            );
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        let active: Vec<String> = groups
            .iter()
            .filter(|&&g| self.groups[g].active_in.is_some())
            .map(|&g| self.groups[g].name.clone())
            .collect();
        if !active.is_empty() {
            self.violation(
                "teardown_order",
                h,
                format!("zetDeviceDisableMetricsExp while metric groups are activated: {}", active.join(", ")),
            );
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        for &g in &groups {
            if self.groups[g].buffer.is_some() {
                self.check_fds(g, "at zetDeviceDisableMetricsExp");
                self.check_mappings(g, "zetDeviceDisableMetricsExp");
                self.retire_buffer(g);
            }
        }
        for m in family {
            self.devices[m].runtime_enabled = false;
        }
        self.teardown_step();
        Ok(())
    }
}
