//! One simulated driver: its devices, metric groups, contexts, allocations and the record of
//! what the application did wrong.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::fd::RawFd;
use std::sync::Arc;
use std::thread::ThreadId;

use level_zero_sys::*;

use crate::config::{DeviceConfig, Export, MetricConfig, MetricsEnable, Signal, SimConfig};
use crate::export::ExportBuffer;
use crate::registry::{Obj, new_handle};
use crate::rules::{Entry, Report, handle_label, thread_label};
use crate::writer::Shared;

pub(crate) struct Dev {
    pub(crate) handle: usize,
    pub(crate) cfg: DeviceConfig,
    pub(crate) parent: Option<usize>,
    pub(crate) subs: Vec<usize>,
    pub(crate) groups: Vec<usize>,
    /// Metrics enabled with `zetDeviceEnableMetricsExp` (and not disabled since).
    pub(crate) runtime_enabled: bool,
    /// Metrics were enabled at run time once (the driver's metric library is loaded): after a
    /// disable `zetMetricGroupGet` answers SUCCESS with no groups, not DEPENDENCY_UNAVAILABLE.
    pub(crate) ever_enabled: bool,
}

#[derive(Clone)]
pub(crate) struct MetricRef {
    pub(crate) handle: usize,
    pub(crate) cfg: MetricConfig,
    /// Position in its predefined group (drives the synthetic wave's shape).
    pub(crate) index: usize,
}

pub(crate) struct Group {
    pub(crate) handle: usize,
    pub(crate) device: usize,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) domain: u32,
    pub(crate) export: Export,
    /// Readable with the time-based streamer (with a timestamp metric, `QueryBeginTime`, unless it
    /// is an IP-sampling group).
    pub(crate) stream: bool,
    /// Tracer-based: its exported memory is a ring of kernel events the metric tracer reads.
    pub(crate) tracer: bool,
    /// The decodable metric handles a decoder lists for this group (tracer groups only), one
    /// per metric: distinct from the group's own metric handles, as the specification says.
    pub(crate) decodable: Vec<usize>,
    pub(crate) metrics: Vec<MetricRef>,
    pub(crate) user_created: bool,
    /// User groups must be closed (`zetMetricGroupCloseExp`) before activation.
    pub(crate) closed: bool,
    pub(crate) destroyed: bool,
    /// The context in which the group is activated.
    pub(crate) active_in: Option<usize>,
    /// The exported memory: from the first export query or activation until the exporter is
    /// torn down (destroy, run-time disable, or deactivation with `export_only_while_active`).
    pub(crate) buffer: Option<Arc<ExportBuffer>>,
    /// The thread that first touched the exporter while it was in use (activated or imported).
    pub(crate) owner: Option<(ThreadId, String)>,
}

pub(crate) enum AllocKind {
    /// Memory imported from an exported fd: `group`'s buffer, mapped by the driver.
    Import {
        group: usize,
        buf: Arc<ExportBuffer>,
        /// With quirk `import_fd: ClosedAtFree`: the fd the import was given (closed at free)
        /// and a private dup of it to check it is still the same open file description.
        taken_fd: Option<(RawFd, RawFd)>,
    },
    Host {
        layout: std::alloc::Layout,
    },
}

pub(crate) struct Alloc {
    pub(crate) ctx: usize,
    pub(crate) size: usize,
    pub(crate) kind: AllocKind,
}

pub(crate) struct CmdList {
    pub(crate) ctx: usize,
}

pub(crate) struct Instance {
    pub(crate) id: u64,
    pub(crate) config: SimConfig,
    pub(crate) initialized: bool,
    pub(crate) metrics_from_env: bool,
    pub(crate) driver: usize,
    pub(crate) devices: Vec<Dev>,
    pub(crate) groups: Vec<Group>,
    pub(crate) contexts: Vec<usize>,
    /// Keyed by start address, so a pointer inside an allocation can be found.
    pub(crate) allocs: BTreeMap<usize, Alloc>,
    pub(crate) cmdlists: HashMap<usize, CmdList>,
    pub(crate) streamers: HashMap<usize, crate::ops_stream::Streamer>,
    pub(crate) tracers: HashMap<usize, crate::ops_tracer::Tracer>,
    pub(crate) decoders: HashMap<usize, crate::ops_tracer::Decoder>,
    pub(crate) pools: HashMap<usize, crate::ops_events::Pool>,
    pub(crate) events: HashMap<usize, crate::ops_events::Event>,
    /// Events signaled and not reset since.
    pub(crate) signaled: HashSet<usize>,
    /// Successful `zetMetricStreamerReadData` calls (for `streamer_read_fails_after`).
    pub(crate) streamer_reads: u64,
    /// The most reports one `zetMetricStreamerReadData` call copied (`Sim::streamer_reads`).
    pub(crate) most_reports_read: usize,
    /// `zetMetricTracerReadDataExp` calls let through (for `tracer_read_fails_after`).
    pub(crate) tracer_reads: u64,
    pub(crate) violations: Vec<Entry>,
    /// Read calls of size 0 received (`Report::size_queries`).
    pub(crate) size_queries: u64,
    pub(crate) shared: Arc<Shared>,
    /// What a clobbered `pNext` points at (quirk `overwrite_pnext`): a fake export struct naming
    /// an fd that is not an exported buffer. Importing it is a violation.
    pub(crate) decoy: Box<zet_export_dma_buf_exp_properties_t>,
    pub(crate) decoy_fd: RawFd,
    /// Where the report goes (the process-wide instance, from `ZE_SIM_REPORT`).
    pub(crate) report_path: Option<std::path::PathBuf>,
    /// Whether the fault `mem_free_fails: Once` has fired.
    pub(crate) free_fault_fired: bool,
    /// Whether the fault `host_free_fails: Once` has fired.
    pub(crate) host_free_fault_fired: bool,
    /// Sysman handles and whether they are usable.
    pub(crate) sysman: crate::sysman::Sysman,
}

// SAFETY: the raw pointer in `decoy` points to its own boxed struct's pNext (null); instances are
// only used under the registry's lock.
unsafe impl Send for Instance {}

impl Instance {
    /// Builds the object model; returns the handles to register.
    pub(crate) fn new(id: u64, config: SimConfig) -> (Instance, Vec<(usize, Obj)>) {
        let config = crate::catalog::apply(config.resolved());
        let mut handles = Vec::new();
        let driver = new_handle();
        handles.push((driver, Obj::Driver));
        let mut devices = Vec::new();
        let mut groups = Vec::new();
        fn add(
            cfg: &DeviceConfig,
            parent: Option<usize>,
            devices: &mut Vec<Dev>,
            groups: &mut Vec<Group>,
            handles: &mut Vec<(usize, Obj)>,
        ) -> usize {
            let d = devices.len();
            let handle = new_handle();
            handles.push((handle, Obj::Device(d)));
            let mut flat = cfg.clone();
            flat.sub_devices.clear();
            devices.push(Dev {
                handle,
                cfg: flat,
                parent,
                subs: Vec::new(),
                groups: Vec::new(),
                runtime_enabled: false,
                ever_enabled: false,
            });
            for gc in &cfg.groups {
                let g = groups.len();
                let gh = new_handle();
                handles.push((gh, Obj::Group(g)));
                let timestamp = gc.has_stream_timestamp().then(|| MetricConfig {
                    name: "QueryBeginTime".into(),
                    description: "Device time at the end of the report's period".into(),
                    signal: Signal::Timestamp,
                });
                // First in a group only the streamer reads; last in one that also exports memory,
                // so the exported counters keep their slots (the timestamp is found by its type).
                let (lead, tail) = if gc.export == Export::None { (timestamp, None) } else { (None, timestamp) };
                let mut metrics: Vec<MetricRef> = lead
                    .iter()
                    .chain(gc.metrics.iter())
                    .chain(tail.iter())
                    .enumerate()
                    .map(|(i, m)| MetricRef { handle: new_handle(), cfg: m.clone(), index: i })
                    .collect();
                for i in 0..gc.synthetic_counters as usize {
                    let index = metrics.len();
                    metrics.push(MetricRef {
                        handle: new_handle(),
                        cfg: MetricConfig {
                            name: format!("Synthetic{i:03}"),
                            description: format!("Synthetic counter {i}"),
                            signal: Signal::Synthetic,
                        },
                        index,
                    });
                }
                for (i, m) in metrics.iter().enumerate() {
                    handles.push((m.handle, Obj::Metric(g, i)));
                }
                let decodable: Vec<usize> =
                    if gc.tracer { metrics.iter().map(|_| new_handle()).collect() } else { Vec::new() };
                for (i, &h) in decodable.iter().enumerate() {
                    handles.push((h, Obj::Decodable(g, i)));
                }
                groups.push(Group {
                    handle: gh,
                    device: d,
                    name: gc.name.clone(),
                    description: gc.description.clone(),
                    domain: gc.domain,
                    export: gc.export,
                    stream: gc.stream,
                    tracer: gc.tracer,
                    decodable,
                    metrics,
                    user_created: false,
                    closed: true,
                    destroyed: false,
                    active_in: None,
                    buffer: None,
                    owner: None,
                });
                devices[d].groups.push(g);
            }
            for s in &cfg.sub_devices {
                let sd = add(s, Some(d), devices, groups, handles);
                devices[d].subs.push(sd);
            }
            d
        }
        for d in &config.devices {
            add(d, None, &mut devices, &mut groups, &mut handles);
        }
        // SAFETY: opening /dev/null read-only; the fd is the decoy's and closed on drop.
        let decoy_fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        let decoy = Box::new(zet_export_dma_buf_exp_properties_t { fd: decoy_fd, size: 4096, ..Default::default() });
        let shared = Shared::new(&config);
        let sysman = crate::sysman::Sysman::new(devices.len(), &mut handles);
        let inst = Instance {
            id,
            config,
            initialized: false,
            metrics_from_env: false,
            driver,
            devices,
            groups,
            contexts: Vec::new(),
            allocs: BTreeMap::new(),
            cmdlists: HashMap::new(),
            streamers: HashMap::new(),
            tracers: HashMap::new(),
            decoders: HashMap::new(),
            pools: HashMap::new(),
            events: HashMap::new(),
            signaled: HashSet::new(),
            streamer_reads: 0,
            most_reports_read: 0,
            tracer_reads: 0,
            violations: Vec::new(),
            size_queries: 0,
            shared,
            decoy,
            decoy_fd,
            report_path: None,
            free_fault_fired: false,
            host_free_fault_fired: false,
            sysman,
        };
        (inst, handles)
    }

    /// Records a violation (and says so on stderr: a strict driver is loud).
    pub(crate) fn violation(&mut self, kind: &str, handle: usize, message: String) {
        let e = Entry { kind: kind.into(), message, handle: handle_label(handle), thread: thread_label() };
        eprintln!("ze-sim: VIOLATION [{}] {} (handle {}, thread {})", e.kind, e.message, e.handle, e.thread);
        self.violations.push(e);
        crate::write_report_if_requested(self);
    }

    pub(crate) fn metrics_enabled(&self, device: usize) -> bool {
        let root = self.devices[device].parent.unwrap_or(device);
        self.metrics_from_env || self.devices[device].runtime_enabled || self.devices[root].runtime_enabled
    }

    /// Whether `zetMetricGroupGet` on `device` answers at all: metrics enabled now, or enabled at
    /// run time once (on it or its root device) and disabled since.
    pub(crate) fn metrics_loaded(&self, device: usize) -> bool {
        let root = self.devices[device].parent.unwrap_or(device);
        self.metrics_enabled(device) || self.devices[device].ever_enabled || self.devices[root].ever_enabled
    }

    pub(crate) fn resolve_metrics_from_env(&mut self) {
        self.metrics_from_env = match self.config.metrics {
            MetricsEnable::Always => true,
            MetricsEnable::RuntimeOnly => false,
            MetricsEnable::Env => std::env::var("ZET_ENABLE_METRICS").is_ok_and(|v| v == "1"),
        };
    }

    /// Imports of `group`'s exported memory that are still alive.
    pub(crate) fn live_imports_of(&self, group: usize) -> usize {
        self.allocs.values().filter(|a| matches!(a.kind, AllocKind::Import { group: g, .. } if g == group)).count()
    }

    /// A teardown step happened: the report file is rewritten (leaks as known now).
    pub(crate) fn teardown_step(&self) {
        crate::write_report_if_requested(self);
    }

    /// Records a violation if the application still maps `group`'s exported memory (found in
    /// `/proc/self/maps` by device and inode; the driver's own mappings are not counted) when
    /// `when` tears the exporter down.
    pub(crate) fn check_mappings(&mut self, group: usize, when: &str) {
        let Some(buf) = self.groups[group].buffer.clone() else {
            return;
        };
        let ours: Vec<usize> = std::iter::once(buf.own_map())
            .chain(self.allocs.iter().filter_map(|(p, a)| match &a.kind {
                AllocKind::Import { buf: b, .. } if Arc::ptr_eq(b, &buf) => Some(*p),
                _ => None,
            }))
            .collect();
        let theirs: Vec<String> = crate::fdcheck::mappings_of(buf.id)
            .into_iter()
            .filter(|start| !ours.contains(start))
            .map(|start| format!("{start:#x}"))
            .collect();
        if !theirs.is_empty() {
            let (name, h) = (self.groups[group].name.clone(), self.groups[group].handle);
            self.violation(
                "exported_memory_still_mapped",
                h,
                format!(
                    "{when} of metric group {name} while the application still maps its exported memory at {} (unmap first)",
                    theirs.join(", ")
                ),
            );
        }
    }

    /// Checks that the exported fds of `group` still name its buffer; records a violation if not.
    pub(crate) fn check_fds(&mut self, group: usize, when: &str) {
        let Some(buf) = self.groups[group].buffer.clone() else {
            return;
        };
        for fd in buf.broken_fds() {
            let name = self.groups[group].name.clone();
            let h = self.groups[group].handle;
            self.violation(
                "exported_fd_closed",
                h,
                format!(
                    "the exported fd {fd} of metric group {name} no longer refers to its buffer ({when}): \
                     the application closed it (the fd is owned by the implementation)"
                ),
            );
        }
    }

    /// Records that the calling thread touches `group`'s exporter; a second thread is a violation.
    pub(crate) fn touch_exporter(&mut self, group: usize, what: &str) {
        let me = std::thread::current().id();
        match &self.groups[group].owner {
            None => self.groups[group].owner = Some((me, crate::rules::thread_label())),
            Some((owner, label)) if *owner != me => {
                let (label, name, h) = (label.clone(), self.groups[group].name.clone(), self.groups[group].handle);
                self.violation(
                    "exporter_used_from_two_threads",
                    h,
                    format!("{what} on the exporter of metric group {name}, first used from thread {label}: nothing synchronizes exported memory"),
                );
            }
            Some(_) => {}
        }
    }

    /// Everything still alive: the leaks of a report.
    pub(crate) fn leaks(&self) -> Vec<Entry> {
        let mut v = Vec::new();
        let mut leak = |kind: &str, h: usize, message: String| {
            v.push(Entry { kind: kind.into(), message, handle: handle_label(h), thread: String::new() })
        };
        for (ptr, a) in &self.allocs {
            match a.kind {
                AllocKind::Import { group, .. } => leak(
                    "import_not_freed",
                    *ptr,
                    format!(
                        "import of the exported memory of metric group {} ({} bytes) was never freed",
                        self.groups[group].name, a.size
                    ),
                ),
                AllocKind::Host { .. } => leak(
                    "host_allocation_not_freed",
                    *ptr,
                    format!("host allocation of {} bytes was never freed", a.size),
                ),
            }
        }
        for s in self.streamers.keys() {
            let name = &self.groups[self.streamers[s].group].name;
            leak("streamer_not_closed", *s, format!("metric streamer on metric group {name} was never closed"));
        }
        for (h, t) in &self.tracers {
            let names: Vec<&str> = t.groups.iter().map(|&g| self.groups[g].name.as_str()).collect();
            leak(
                "tracer_not_destroyed",
                *h,
                format!("metric tracer on metric group(s) {} was never destroyed", names.join(", ")),
            );
        }
        for h in self.decoders.keys() {
            leak("decoder_not_destroyed", *h, "metric decoder was never destroyed".into());
        }
        for e in self.events.keys() {
            leak("event_not_destroyed", *e, "event was never destroyed".into());
        }
        for p in self.pools.keys() {
            leak("event_pool_not_destroyed", *p, "event pool was never destroyed".into());
        }
        for h in self.cmdlists.keys() {
            leak("command_list_not_destroyed", *h, "immediate command list was never destroyed".into());
        }
        for h in &self.contexts {
            leak("context_not_destroyed", *h, "context was never destroyed".into());
        }
        for g in &self.groups {
            if g.active_in.is_some() {
                leak("group_left_activated", g.handle, format!("metric group {} was left activated", g.name));
            }
            if g.user_created && !g.destroyed {
                leak(
                    "user_group_not_destroyed",
                    g.handle,
                    format!("user-created metric group {} was never destroyed", g.name),
                );
            }
        }
        for d in &self.devices {
            if d.runtime_enabled {
                leak(
                    "metrics_left_enabled",
                    d.handle,
                    format!("metrics enabled at run time on {} were never disabled", d.cfg.name),
                );
            }
        }
        v
    }

    pub(crate) fn report(&self) -> Report {
        Report { violations: self.violations.clone(), leaks: self.leaks(), size_queries: self.size_queries }
    }

    /// Device timestamp in ns (the device clock runs at a fixed offset from CLOCK_MONOTONIC).
    /// The global timer now, in its ticks (see `Quirks::timer_hz`).
    pub(crate) fn timer_ticks_at(&self, host_ns: u64) -> u64 {
        self.shared.timer_ticks_at(host_ns)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.shared.stop();
        for g in &mut self.groups {
            if let Some(b) = g.buffer.take() {
                b.close_reported_fds();
            }
        }
        for (ptr, a) in std::mem::take(&mut self.allocs) {
            match a.kind {
                AllocKind::Import { taken_fd, .. } => {
                    crate::export::unmap_import(ptr as *mut u8, a.size);
                    if let Some((_, private)) = taken_fd {
                        // SAFETY: the private dup is ours.
                        unsafe { libc::close(private) };
                    }
                }
                // SAFETY: allocated in zeMemAllocHost with exactly this layout, freed once here.
                AllocKind::Host { layout } => unsafe { std::alloc::dealloc(ptr as *mut u8, layout) },
            }
        }
        // SAFETY: the decoy fd is ours.
        unsafe { libc::close(self.decoy_fd) };
    }
}
