//! ze-sim: a simulated Level Zero driver whose metric groups export their counters as memory
//! (`ZET_experimental_metric_export_memory`), strict about the extension's rules.
//!
//! # What it is
//!
//! It stands in for a GPU where there is none. It models devices (a GPU with a sub-device, an
//! NPU-like device), metric groups in distinct domains (one exporting one DMA-BUF per group, one
//! whose metrics each export a shared buffer, one exporting nothing), and counters moved by a
//! deterministic, seeded workload (idle → compute → memory-bound phases), so a test can predict
//! what a buffer holds ([`Sim::ground_truth`], [`Sim::history`]). The exported memory is a sealed
//! memfd with a seqlocked header ([`export`] documents the bytes). As the extension's sample
//! code assumes, an export query answers the fd and size whether or not the group is activated;
//! the driver closes the fd when it tears the exporter down (destroy of a created group,
//! run-time disable of metrics), never because the application asked.
//!
//! Groups configured with `stream: true` (in the built-in model `ComputeBasic` and `MemoryTraffic`,
//! which export memory too, the IP-sampling `EuStallSampling`, and `RenderBasic` and `NocTraffic`,
//! which export nothing, as on today's drivers) can be read with the time-based metric streamer:
//! opaque raw reports, one per sampling period while it is open, that only Calculate decodes
//! ([`ops_stream`] documents the period rounding, the bounded buffer and the report bytes), with
//! event pools and events for its notifications; one streamer per domain of a device.
//!
//! Groups configured with `tracer: true` (the built-in `KernelTrace` on the GPU, in the
//! IP-sampling domain behind `EuStallSampling`) are tracer-based, as Intel's conformance suite
//! finds them: their sampling type says EXP_TRACER_BASED only, they export one DMA-BUF for the
//! group, and while they are activated the workload writes kernel events into that memory, a ring with a write index ([`ring`]
//! documents its bytes; `tracer_events_per_tick` sets the rate). The metric tracer
//! (`zetMetricTracer*Exp`) reads the events written while it is enabled as raw records, a decoder
//! (`zetMetricDecoder*Exp`) lists the decodable metrics and `zetMetricTracerDecodeExp` turns the
//! records into entries; one tracer per device.
//!
//! It enforces the extension's rules and records every breach ([`rules`]): the application
//! closing an exported fd (or replacing it: open file descriptions are compared, see
//! [`fdcheck`]), tearing an exporter down (deactivate, destroy, disable metrics, destroy the
//! context) while an import of its memory is alive (refused with
//! ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE) or while the application still maps it, deactivating,
//! disabling or destroying the context (or the notification event) while a streamer is open, touching one
//! exporter from two threads, a wrong `stype`; for the tracer: destroying it while enabled, the
//! teardown order disable → destroy the tracer (its decoders before or after it) → free imports
//! → deactivate → disable metrics, and a tracer left alive at deactivation, context destroy or
//! disable. The report ([`Report`]: `violations`, `leaks`)
//! is readable in-process and is rewritten atomically as RON to `ZE_SIM_REPORT=path` on every
//! violation, at every teardown step, and at exit. Faults and real-driver quirks are injected
//! from the configuration ([`config::Faults`], [`config::Quirks`]); entry points can be left
//! empty (`SimConfig::empty_entry_points`) to play a driver that implements less.
//!
//! # How to use it
//!
//! - **In-process** (`rlib`): [`Sim::new`] makes an independent driver instance from a
//!   [`SimConfig`] and [`Sim::api`] the `level_zero_sys::Api` table of its entry points; call
//!   them as you would a real driver's, then assert on [`Sim::report`]. zescope's built-in
//!   "simulated device" is the process-wide instance ([`global`], [`api()`]) configured from
//!   `ZE_SIM_CONFIG`. A safe layer takes either as a `level_zero_sys::InProcess`
//!   ([`in_process()`], [`Sim::in_process`]), which carries the promise that the table keeps the
//!   Level Zero contract and what keeps it valid: zescope's binary hands it to `zescope-ze`,
//!   which does not depend on this crate.
//! - **As `libze_sim.so`** (`cdylib`): the real Level Zero loader loads it through
//!   `ZE_ENABLE_ALT_DRIVERS=/abs/path/libze_sim.so`, via the `*ProcAddrTable` getters in
//!   [`ddi`]; [`testing::cdylib`] builds it for integration tests.
//!
//! ## Environment of a `libze_sim.so` copy
//!
//! Two copies can be loaded at once (a GPU driver and an NPU driver): copy the library to,
//! e.g., `libze_sim_npu.so` and list both in `ZE_ENABLE_ALT_DRIVERS` (comma-separated). Each
//! copy finds its own file with `dladdr`; its STEM is the file name without `lib` and `.so…`,
//! uppercased, with every non-alphanumeric character as `_`. It reads `ZE_SIM_CONFIG_<STEM>`
//! and `ZE_SIM_REPORT_<STEM>` first (`ZE_SIM_CONFIG_ZE_SIM_NPU` for `libze_sim_npu.so`), falling
//! back to `ZE_SIM_CONFIG` / `ZE_SIM_REPORT`. Copies report distinct driver and device UUIDs:
//! `driver_uuid_tag` from the config, or (when it is 0) a hash of the stem for any copy not
//! named `libze_sim.so`; the first 8 bytes of the driver UUID are always the ze-sim prefix.
//!
//! # Safety and threading
//!
//! The entry points are `unsafe extern "C"` functions with the Level Zero contracts: pointers
//! must be valid for what the C API says. Within that, a bad handle (never issued, or of a
//! destroyed object) answers ZE_RESULT_ERROR_INVALID_NULL_HANDLE instead of undefined
//! behaviour, and no panic crosses the C boundary (it becomes ZE_RESULT_ERROR_UNKNOWN). Every
//! call takes one process-wide lock over all instances, so calls from several threads are
//! memory-safe; but the extension gives exported memory no synchronization, so touching one
//! exporter from two threads is recorded as a violation. One background thread per instance
//! writes snapshots while any exporter is active; readers take torn-free snapshots through the
//! buffer's seqlock.
//!
//! # Testing
//!
//! The crate's own tests (`tests/`) drive it in-process, through the real loader (`loader`,
//! needs libze1) and from a C client; [`testing`] holds the helpers they and zescope's tests
//! share: a skip is loud, and a failure under `ZESCOPE_STRICT_TESTS=1` (set by CI).
#![warn(missing_docs)]
#![allow(non_snake_case, clippy::missing_safety_doc)]

mod builtin;
pub mod catalog;
pub mod config;
mod copy_env;
pub mod ddi;
mod entry;
pub mod export;
pub mod export_data;
mod faults;
pub mod fdcheck;
mod instance;
mod ops_calculate;
mod ops_driver;
mod ops_events;
mod ops_memory;
mod ops_metrics;
pub mod ops_stream;
mod ops_tracer;
mod ops_user_groups;
mod pci;
mod processes;
mod profile;
mod registry;
pub mod ring;
pub mod rules;
mod signal_types;
mod sysman;
pub mod testing;
mod tracer_decode;
mod workload;
mod writer;

use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use level_zero_sys::*;

pub use config::{ConfigError, SimConfig};
pub use entry::api;
pub use rules::{Entry, Report};

use instance::Instance;

/// One independent simulated driver, with its own devices, objects and report. Its handles
/// are valid only while it lives: dropping it removes it, and calls with its handles then answer
/// ZE_RESULT_ERROR_INVALID_NULL_HANDLE. It does not read `ZE_SIM_CONFIG` or `ZE_SIM_REPORT`.
pub struct Sim {
    id: u64,
}

fn insert_instance(config: SimConfig, report_path: Option<PathBuf>) -> u64 {
    insert_locked(&mut registry::lock(), config, report_path)
}

fn insert_locked(reg: &mut registry::Registry, config: SimConfig, report_path: Option<PathBuf>) -> u64 {
    let id = reg.next_instance_id();
    let (mut inst, handles) = Instance::new(id, config);
    inst.report_path = report_path;
    for (h, o) in handles {
        reg.register(h, id, o);
    }
    reg.instances.insert(id, inst);
    id
}

impl Sim {
    /// A new instance modelling `config` (used as given: check a hand-built one with
    /// [`SimConfig::validate`] first). It is not initialised: call [`Sim::init`] or `zeInit`
    /// through [`Sim::api`].
    pub fn new(config: SimConfig) -> Sim {
        Sim { id: insert_instance(config, None) }
    }

    /// An instance that rewrites its report to `path` as the process-wide one does to
    /// `ZE_SIM_REPORT` (on each violation and at every teardown step).
    pub fn with_report(config: SimConfig, path: PathBuf) -> Sim {
        Sim { id: insert_instance(config, Some(path)) }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Instance) -> R) -> R {
        let mut reg = registry::lock();
        let inst = reg.instances.get_mut(&self.id).expect("a Sim's instance lives as long as the Sim");
        f(inst)
    }

    /// The entry points (the same functions for every instance; handles select the instance),
    /// with the `Option` fields this instance leaves empty set to `None`. `zesInit`,
    /// `zesDriverGet` and `zesDeviceGet` are `None`: like `zeInit` and `zeDriverGet` they have no
    /// handle and reach the process-wide instance; this instance's Sysman is reached through its
    /// core device handles (see [`Sim::init`]).
    pub fn api(&self) -> Api {
        let mut a = entry::full_api();
        self.with(|i| entry::without_empty(&mut a, &i.config));
        a.zesInit = None;
        a.zesDriverGet = None;
        a.zesDeviceGet = None;
        a
    }

    /// `zeInit` for this instance. Its core device handles then also take Sysman calls, as a
    /// driver's do after `ZES_ENABLE_SYSMAN=1` (unless `sysman.available` is false).
    pub fn init(&self) -> ze_result_t {
        match self.with(|i| {
            i.init()?;
            i.sysman.on_core = true;
            Ok(())
        }) {
            Ok(()) => ZE_RESULT_SUCCESS,
            Err(r) => r,
        }
    }

    /// `zeDriverGet` for this instance: its one driver, once initialised.
    pub fn drivers(&self) -> Result<Vec<ze_driver_handle_t>, ze_result_t> {
        self.with(|i| {
            if i.initialized { Ok(vec![i.driver as ze_driver_handle_t]) } else { Err(ZE_RESULT_ERROR_UNINITIALIZED) }
        })
    }

    /// Violations so far and everything still alive.
    pub fn report(&self) -> Report {
        self.with(|i| i.report())
    }

    /// Changes faults or quirks of a running instance (devices and groups are fixed at creation).
    pub fn configure(&self, f: impl FnOnce(&mut config::Faults, &mut config::Quirks)) {
        self.with(|i| {
            f(&mut i.config.faults, &mut i.config.quirks);
            i.shared.apply(&i.config.faults, &i.config.quirks);
        })
    }

    /// The values ze-sim wrote into the buffer of the activated group `group` in the snapshot
    /// stamped `timestamp_ns`, in metric order (cumulative counters as their integer value).
    pub fn ground_truth(&self, group: &str, timestamp_ns: u64) -> Option<Vec<f64>> {
        self.with(|i| {
            i.groups
                .iter()
                .filter(|g| g.name == group)
                .filter_map(|g| g.buffer.as_ref())
                .find_map(|b| b.ground_truth(timestamp_ns))
        })
    }

    /// Every snapshot still held for the activated group `group`: (device timestamp, values).
    pub fn history(&self, group: &str) -> Vec<(u64, Vec<f64>)> {
        self.with(|i| {
            i.groups
                .iter()
                .filter(|g| g.name == group)
                .filter_map(|g| g.buffer.as_ref())
                .flat_map(|b| b.history())
                .collect()
        })
    }

    /// The kernel events the workload wrote into the ring of the tracer-based group `group` that
    /// the ring still holds (its last `tracer_ring_events`), oldest first: what a tracer reads.
    pub fn trace_events(&self, group: &str) -> Vec<ring::TraceEvent> {
        self.with(|i| {
            i.groups
                .iter()
                .filter(|g| g.name == group)
                .filter_map(|g| g.buffer.as_ref())
                .find_map(|b| b.ring_read(0, u64::MAX, usize::MAX).map(|(events, _)| events))
                .unwrap_or_default()
        })
    }

    /// Brings a lost device back (as a reset would) and clears the device-lost fault.
    pub fn recover_device(&self) {
        self.with(|i| {
            i.config.faults.device_lost_after_samples = None;
            i.shared.set_lost_after(None);
            i.shared.recover();
        })
    }

    /// Snapshots written so far (across all buffers of this instance, one per tick).
    pub fn snapshots_written(&self) -> u64 {
        self.with(|i| i.shared.snapshots.load(Ordering::Acquire))
    }

    /// Reports the metric streamers of this instance made so far (every one a read could get).
    pub fn streamer_reports_made(&self) -> u64 {
        self.with(|i| i.shared.streamer_reports_made())
    }

    /// Successful `zetMetricStreamerReadData` calls that copied reports or could have (a size
    /// query is not one), and the most reports one of them copied: how a client takes a full
    /// buffer, at once or in parts.
    pub fn streamer_reads(&self) -> (u64, usize) {
        self.with(|i| (i.streamer_reads, i.most_reports_read))
    }

    /// Has the fault `device_lost_after_samples` fired (and not been undone by
    /// [`Sim::recover_device`])?
    pub fn is_device_lost(&self) -> bool {
        self.with(|i| i.shared.is_lost())
    }

    /// Number of imports currently alive.
    pub fn live_imports(&self) -> usize {
        self.with(|i| i.allocs.values().filter(|a| matches!(a.kind, instance::AllocKind::Import { .. })).count())
    }

    /// The handle of this instance's device `index` (depth-first: a root, then its sub-devices).
    pub fn device_handle(&self, index: usize) -> Option<ze_device_handle_t> {
        self.with(|i| i.devices.get(index).map(|d| d.handle as ze_device_handle_t))
    }

    /// This instance as an in-process driver for a safe layer: [`Sim::api`], kept alive by the
    /// `Arc` (its handles stay valid while any clone lives), its driver reached by [`Sim::init`]
    /// and [`Sim::drivers`] (the table's `zeInit` reaches the process-wide instance instead).
    pub fn in_process(self: &Arc<Sim>) -> InProcess {
        let sim = Arc::clone(self);
        let start: StartDrivers = Box::new(move || {
            match sim.init() {
                ZE_RESULT_SUCCESS => {}
                result => return Err(InitFailed { call: "zeInit", result }),
            }
            sim.drivers().map_err(|result| InitFailed { call: "zeDriverGet", result })
        });
        // SAFETY: ze-sim's own entry points, functions of this program: each keeps the Level Zero
        // contract for arguments that keep theirs (a handle never issued, or of a destroyed
        // object, answers an error), and this instance's handles stay valid while it is
        // registered, which the `Arc` in `keep_alive` (and in `start`) ensures.
        unsafe { InProcess::new(self.api(), Arc::clone(self) as Arc<dyn Any + Send + Sync>, Drivers::Own(start)) }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        registry::lock().unregister_instance(self.id);
    }
}

/// Runs `f` on the process-wide instance, creating it from `ZE_SIM_CONFIG` on first use.
fn with_global<R>(f: impl FnOnce(&mut Instance) -> Result<R, ze_result_t>) -> Result<R, ze_result_t> {
    let id = global_id().map_err(|e| {
        eprintln!("ze-sim: {e}");
        ZE_RESULT_ERROR_INVALID_ARGUMENT
    })?;
    let mut reg = registry::lock();
    let inst = reg.instances.get_mut(&id).ok_or(ZE_RESULT_ERROR_UNINITIALIZED)?;
    f(inst)
}

pub(crate) fn global_id() -> Result<u64, ConfigError> {
    let mut reg = registry::lock();
    if let Some(id) = reg.global {
        return Ok(id);
    }
    let config = SimConfig::from_env()?;
    let report = copy_env::var("ZE_SIM_REPORT").map(|(_, p)| p).filter(|p| !p.is_empty()).map(PathBuf::from);
    let id = insert_locked(&mut reg, config, report);
    reg.global = Some(id);
    drop(reg);
    // SAFETY: registering a plain extern "C" fn with no captured state; the library is linked
    // with -z nodelete (as a cdylib) or is part of the executable, so it outlives exit handlers.
    unsafe { libc::atexit(report_at_exit) };
    Ok(id)
}

extern "C" fn report_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let reg = registry::lock();
        if let Some(inst) = reg.global.and_then(|id| reg.instances.get(&id)) {
            write_report_if_requested(inst);
        }
    });
}

/// The process-wide simulated driver: what `zeInit`/`zeDriverGet` of [`api()`] use, configured
/// from `ZE_SIM_CONFIG`, reporting to `ZE_SIM_REPORT` at exit.
pub struct Global {
    id: u64,
}

/// The process-wide instance (created on first use). Fails if `ZE_SIM_CONFIG` is unusable.
pub fn global() -> Result<Global, ConfigError> {
    global_id().map(|id| Global { id })
}

/// The process-wide instance as an in-process driver for a safe layer (zescope's built-in
/// simulated device): [`api()`], its driver reached through the table's own `zeInit` and
/// `zeDriverGet`. Fails if `ZE_SIM_CONFIG` is unusable.
pub fn in_process() -> Result<InProcess, ConfigError> {
    let global = global()?;
    // SAFETY: ze-sim's own entry points, functions of this program: each keeps the Level Zero
    // contract for arguments that keep theirs (a handle never issued, or of a destroyed object,
    // answers an error), and the process-wide instance is never removed, so its handles stay
    // valid for the life of the process.
    Ok(unsafe { InProcess::new(api(), Arc::new(global), Drivers::ThroughApi) })
}

impl Global {
    /// Violations so far and everything still alive in the process-wide instance (an empty
    /// report if it is gone).
    pub fn report(&self) -> Report {
        let reg = registry::lock();
        reg.instances.get(&self.id).map(|i| i.report()).unwrap_or_default()
    }

    /// Writes the report to `ZE_SIM_REPORT` now (it is also written at exit).
    pub fn write_report(&self) {
        let reg = registry::lock();
        if let Some(inst) = reg.instances.get(&self.id) {
            write_report_if_requested(inst);
        }
    }
}

pub(crate) fn write_report_if_requested(inst: &Instance) {
    if let Some(path) = &inst.report_path
        && let Err(e) = inst.report().write_to(path)
    {
        eprintln!("ze-sim: cannot write the report to {}: {e}", path.display());
    }
}
