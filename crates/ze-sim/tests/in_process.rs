//! The simulated driver, in-process: its model, the rules it enforces, and every fault and quirk
//! it can inject, each observed through the raw API.

mod common;

use common::fixture::fixture;
use common::*;
use level_zero_sys::*;
use ze_sim::config::{ImportFd, MetricsEnable, SimConfig};
use ze_sim::{Sim, export};

#[test]
fn models_a_gpu_with_a_sub_device_and_an_npu() {
    let f = fixture(|_| {});
    let devices = f.raw.devices(f.drv).unwrap();
    assert_eq!(devices.len(), 2);
    let (gpu, gpu_type) = f.raw.device_name(devices[0]).unwrap();
    let (npu, npu_type) = f.raw.device_name(devices[1]).unwrap();
    assert_eq!((gpu.as_str(), gpu_type), ("ze-sim GPU", ZE_DEVICE_TYPE_GPU));
    assert_eq!((npu.as_str(), npu_type), ("ze-sim NPU", ZE_DEVICE_TYPE_VPU));
    assert_eq!(f.raw.sub_devices(devices[0]).unwrap().len(), 1);
    let groups: Vec<GroupInfo> =
        f.raw.groups(devices[0]).unwrap().into_iter().map(|g| f.raw.group(g).unwrap()).collect();
    let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["ComputeBasic", "MemoryTraffic", "EuStallSampling", "RenderBasic", "KernelTrace"]);
    let domains: Vec<u32> = groups.iter().map(|g| g.domain).collect();
    // The tracer-based group shares the IP-sampling domain, after the IP-sampling group.
    assert_eq!(domains, [0, 1, 100, 3, 100]);
    // A domain's first group is time-based (a streamer opens on it), as real catalogues have it;
    // the exported ones say EVENT_BASED too, the IP-sampling and render groups only TIME_BASED.
    let (time, event) =
        (ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED, ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED);
    let sampling: Vec<u32> = groups[..4].iter().map(|g| g.sampling).collect();
    assert_eq!(sampling, [time | event, time | event, time, time]);
    assert_ne!(groups[0].type_flags & ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF, 0);
    assert_eq!(groups[1].type_flags & ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF, 0);
    assert_eq!(groups[2].type_flags & ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF, 0);
    // The tracer-based group, as Intel's conformance suite selects one: sampling type exactly
    // TRACER_BASED, group type exactly EXPORT_DMA_BUF.
    assert_eq!(groups[4].sampling, ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED);
    assert_eq!(groups[4].type_flags, ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF);
    assert!(groups[..4].iter().all(|g| g.sampling & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED == 0));
    assert!(f.sim.report().is_clean());
}

#[test]
fn exports_memory_before_activation_and_keeps_the_fd_across_deactivation() {
    let f = fixture(|_| {});
    let d = f.gpu();
    let g = f.raw.group_by_name(d, "ComputeBasic").unwrap();
    let before = f.raw.group(g).unwrap().export;
    assert!(before.fd >= 0, "the spec's sample queries before activation: fd {}", before.fd);
    assert_eq!(read_mapped_u64(before.fd, before.size, 0) as u32, export::MAGIC, "the header is there at once");
    let (c, d, g2, e) = f.running();
    assert_eq!(g, g2);
    assert_eq!(e.fd, before.fd, "activation keeps the exporter and its fd");
    assert!(
        e.size >= export::OFFSET_COUNTERS + 5 * 8 && e.size % 4096 == 0,
        "page-aligned, covers 5 counters: {}",
        e.size
    );
    let again = f.raw.group(g).unwrap().export;
    assert_eq!(again.fd, e.fd, "repeated queries report the same fd");
    let id = export::file_id(e.fd).unwrap();
    f.clean_teardown(c, d);
    assert_eq!(export::file_id(e.fd), Some(id), "deactivation is no teardown of the exporter: the fd stays");
    assert_eq!(f.raw.group(g).unwrap().export.fd, e.fd);
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

#[test]
fn runtime_disable_tears_the_exporter_down_and_closes_its_fd() {
    let f = fixture(|c| c.metrics = MetricsEnable::RuntimeOnly);
    let d = f.gpu();
    f.raw.device_exp(f.drv, zetDeviceEnableMetricsExp_NAME, d).unwrap();
    let (c, d, _, e) = f.running();
    let id = export::file_id(e.fd).unwrap();
    f.clean_teardown(c, d);
    assert_eq!(export::file_id(e.fd), Some(id));
    f.raw.device_exp(f.drv, zetDeviceDisableMetricsExp_NAME, d).unwrap();
    // (The number may be reused by a test running in parallel; the file must be gone.)
    assert_ne!(export::file_id(e.fd), Some(id), "the implementation closed its fd at disable");
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

#[test]
fn quirk_export_only_while_active_answers_fd_minus_one_and_closes_at_deactivation() {
    let f = fixture(|c| c.quirks.export_only_while_active = true);
    let d = f.gpu();
    let g = f.raw.group_by_name(d, "ComputeBasic").unwrap();
    let before = f.raw.group(g).unwrap().export;
    assert_eq!((before.fd, before.size), (-1, 0), "no exported memory before activation");
    let (c, d, _, e) = f.running();
    assert!(e.fd >= 0);
    let id = export::file_id(e.fd).unwrap();
    f.clean_teardown(c, d);
    assert_ne!(export::file_id(e.fd), Some(id), "the implementation closed its fd at deactivation");
    assert_eq!(f.raw.group(g).unwrap().export.fd, -1);
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

#[test]
fn per_metric_exports_share_one_buffer_through_the_same_and_a_different_fd() {
    let f = fixture(|_| {});
    let d = f.gpu();
    let g = f.raw.group_by_name(d, "MemoryTraffic").unwrap();
    let c = f.raw.context(f.drv).unwrap();
    f.raw.activate(c, d, &[g]).unwrap();
    let metrics = f.raw.metrics(g).unwrap();
    assert_eq!(metrics.len(), 4, "three counters and the streamer's timestamp, last");
    let exports: Vec<(u32, Export)> = metrics[..3]
        .iter()
        .map(|&m| {
            let (_, t, e) = f.raw.metric(m).unwrap();
            (t, e)
        })
        .collect();
    let (name, t, e) = f.raw.metric(metrics[3]).unwrap();
    assert_eq!((name.as_str(), t, e.fd), ("QueryBeginTime", ZET_METRIC_TYPE_TIMESTAMP, -1), "no counter, no export");
    assert!(exports.iter().all(|(t, _)| *t == ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF));
    assert_eq!(exports[0].1.fd, exports[1].1.fd, "two metrics report the same fd");
    assert_ne!(exports[0].1.fd, exports[2].1.fd, "a third reports another fd ...");
    assert_eq!(export::file_id(exports[0].1.fd), export::file_id(exports[2].1.fd), "... of the same buffer");
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

#[test]
fn counters_and_device_timestamp_advance_under_a_seqlock() {
    let f = fixture(|_| {});
    let (c, d, _, e) = f.running();
    let ts1 = read_mapped_u64(e.fd, e.size, export::OFFSET_TIMESTAMP);
    let busy1 = read_mapped_u64(e.fd, e.size, export::OFFSET_COUNTERS);
    // Two more snapshots written (counted by the driver): both have moved on.
    let written = f.sim.snapshots_written();
    common::wait_until("two more snapshots", || f.sim.snapshots_written() >= written + 2);
    let ts2 = read_mapped_u64(e.fd, e.size, export::OFFSET_TIMESTAMP);
    let busy2 = read_mapped_u64(e.fd, e.size, export::OFFSET_COUNTERS);
    let seq = read_mapped_u64(e.fd, e.size, export::OFFSET_SEQUENCE);
    assert!(ts2 > ts1, "device timestamp advances");
    assert!(busy2 > busy1, "the cumulative GpuTime counter advances");
    assert!(seq >= 2, "sequence counts snapshots");
    f.clean_teardown(c, d);
}

#[test]
fn deactivation_while_an_import_is_alive_is_refused_and_recorded() {
    let f = fixture(|_| {});
    let (c, d, _, e) = f.running();
    let dup = dup(e.fd);
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    assert_eq!(f.raw.activate(c, d, &[]), Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE));
    assert_eq!(f.raw.destroy_context(c), Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE));
    assert_eq!(f.raw.device_exp(f.drv, zetDeviceDisableMetricsExp_NAME, d), Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE));
    let r = f.sim.report();
    assert_eq!(r.violation_kinds(), ["teardown_with_live_import"; 3]);
    f.raw.free(c, p).unwrap();
    close(dup);
    f.clean_teardown(c, d);
    assert!(f.sim.report().leaks.is_empty());
}

#[test]
fn closing_the_exported_fd_is_a_violation() {
    let f = fixture(|_| {});
    let (c, d, g, e) = f.running();
    close(e.fd); // what an application must never do
    let _ = f.raw.group(g);
    let r = f.sim.report();
    assert_eq!(r.violation_kinds(), ["exported_fd_closed"]);
    assert!(r.violations[0].message.contains(&format!("fd {}", e.fd)), "{}", r.violations[0].message);
    f.clean_teardown(c, d);
}

#[test]
fn touching_one_exporter_from_two_threads_is_a_violation() {
    let f = fixture(|_| {});
    let (c, d, g, e) = f.running();
    let dup1 = dup(e.fd);
    let p = f.raw.import(c, d, dup1, e.size).unwrap();
    let (cu, du, gu, size) = (c as usize, d as usize, g as usize, e.size);
    let api = f.sim.api();
    std::thread::spawn(move || {
        let raw = Raw { api };
        let e = raw.group(gu as zet_metric_group_handle_t).unwrap().export;
        let dup2 = dup(e.fd);
        let p2 = raw.import(cu as _, du as _, dup2, size).unwrap();
        raw.free(cu as _, p2).unwrap();
        close(dup2);
    })
    .join()
    .unwrap();
    f.raw.free(c, p).unwrap();
    close(dup1);
    f.clean_teardown(c, d);
    let r = f.sim.report();
    assert!(r.violation_kinds().iter().all(|k| *k == "exporter_used_from_two_threads"), "{r:?}");
    assert!(r.violations.len() >= 2, "query, import and free from the second thread: {r:?}");
    assert!(r.violations[0].thread.contains("tid"), "the thread is named: {}", r.violations[0].thread);
}

#[test]
fn a_wrong_base_stype_is_a_violation() {
    let f = fixture(|_| {});
    let d = f.gpu();
    let g = f.raw.groups(d).unwrap()[0];
    let mut p = zet_metric_group_properties_t::default(); // stype 0: wrong
    // SAFETY: a valid (zeroed) properties struct.
    let r = unsafe { (f.raw.api.zetMetricGroupGetProperties)(g, &mut p) };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    assert_eq!(f.sim.report().violation_kinds(), ["wrong_stype"]);
}

#[test]
fn leaks_are_reported_and_a_clean_run_reports_nothing() {
    let f = fixture(|_| {});
    let (c, d, _, e) = f.running();
    let dup = dup(e.fd);
    let _p = f.raw.import(c, d, dup, e.size).unwrap();
    let r = f.sim.report();
    let kinds: Vec<&str> = r.leaks.iter().map(|l| l.kind.as_str()).collect();
    assert_eq!(kinds, ["import_not_freed", "context_not_destroyed", "group_left_activated"]);
    let text = r.to_ron();
    assert!(text.contains("violations: []") && text.contains("leaks: ["), "{text}");
}

#[test]
fn metrics_follow_zet_enable_metrics_and_runtime_enable_disable() {
    let f = fixture(|c| c.metrics = MetricsEnable::RuntimeOnly);
    let d = f.gpu();
    let tile = f.raw.sub_devices(d).unwrap()[0];
    // Never enabled: as real drivers (and Intel's conformance suite expects), the listing itself
    // is unavailable, with a count of 0.
    let mut count = 7;
    // SAFETY: a valid device handle and out-pointer, no array.
    let r = unsafe { (f.raw.api.zetMetricGroupGet)(d, &mut count, std::ptr::null_mut()) };
    assert_eq!((r, count), (ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, 0), "no groups before metrics are enabled");
    assert_eq!(f.raw.groups(tile).err(), Some(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE));
    f.raw.device_exp(f.drv, zetDeviceEnableMetricsExp_NAME, d).unwrap();
    assert_eq!(f.raw.groups(d).unwrap().len(), 5);
    assert!(!f.raw.groups(tile).unwrap().is_empty(), "enabling the root device enables its tile");
    assert_eq!(f.sim.report().leaks[0].kind, "metrics_left_enabled");
    f.raw.device_exp(f.drv, zetDeviceDisableMetricsExp_NAME, d).unwrap();
    // Disabled again: the listing answers, with no groups.
    assert!(f.raw.groups(d).unwrap().is_empty());
    assert!(f.raw.groups(tile).unwrap().is_empty());
    assert!(f.sim.report().is_clean());
}

#[test]
fn concurrent_groups_split_a_domain_across_sets_in_the_order_given() {
    // Two groups in domain 0 (ComputeBasic and MemoryTraffic): they cannot go together; nor can
    // EuStallSampling and KernelTrace, of domain 100.
    let mut cfg = SimConfig { metrics: MetricsEnable::Always, ..Default::default() };
    cfg.devices[0].groups[1].domain = cfg.devices[0].groups[0].domain;
    let sim = Sim::new(cfg);
    sim.init();
    let raw = Raw { api: sim.api() };
    let drv = sim.drivers().unwrap()[0];
    let d = raw.devices(drv).unwrap()[0];
    let f = raw.extension(drv, c"zetDeviceGetConcurrentMetricGroupsExp").unwrap();
    type Concurrent = unsafe extern "C" fn(
        zet_device_handle_t,
        u32,
        *mut zet_metric_group_handle_t,
        *mut u32,
        *mut u32,
    ) -> ze_result_t;
    // SAFETY: the driver returned its implementation of this entry point, of this signature.
    let f: Concurrent = unsafe { std::mem::transmute(f) };
    let gs = raw.groups(d).unwrap();
    let mut given = gs.clone();
    let (mut sets, mut per_set) = (2u32, [0u32; 2]);
    // SAFETY: `given` holds its length of handles, `per_set` `sets` counts.
    let r = unsafe { f(d, given.len() as u32, given.as_mut_ptr(), per_set.as_mut_ptr(), &mut sets) };
    assert_eq!((r, sets, per_set), (ZE_RESULT_SUCCESS, 2, [3, 2]));
    assert_eq!(given, [gs[0], gs[2], gs[3], gs[1], gs[4]], "the second of each domain goes to the second set");
    // Asked for fewer sets than there are: refused; a handle given twice: refused.
    let mut sets = 1;
    // SAFETY: as above, `per_set` holding at least 1.
    let r = unsafe { f(d, gs.len() as u32, gs.clone().as_mut_ptr(), per_set.as_mut_ptr(), &mut sets) };
    assert_eq!((r, sets), (ZE_RESULT_ERROR_INVALID_SIZE, 2));
    let mut twice = vec![gs[0], gs[0]];
    // SAFETY: as above, no per-set array.
    let r = unsafe { f(d, 2, twice.as_mut_ptr(), std::ptr::null_mut(), &mut sets) };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    assert!(sim.report().is_clean());
}

#[test]
fn activating_two_groups_of_one_domain_is_refused() {
    let mut cfg = SimConfig { metrics: MetricsEnable::Always, ..Default::default() };
    cfg.devices[0].groups[1].domain = cfg.devices[0].groups[0].domain;
    let sim = Sim::new(cfg);
    sim.init();
    let raw = Raw { api: sim.api() };
    let drv = sim.drivers().unwrap()[0];
    let d = raw.devices(drv).unwrap()[0];
    let gs = raw.groups(d).unwrap();
    let c = raw.context(drv).unwrap();
    assert_eq!(raw.activate(c, d, &gs[..2]), Err(ZE_RESULT_ERROR_INVALID_ARGUMENT));
    raw.destroy_context(c).unwrap();
    assert!(sim.report().is_clean());
}

// ---- faults ---------------------------------------------------------------------------------

#[test]
fn fault_init_fails() {
    let sim = Sim::new(SimConfig {
        faults: ze_sim::config::Faults { init_fails: true, ..Default::default() },
        ..Default::default()
    });
    assert_eq!(sim.init(), ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
    assert_eq!(sim.drivers(), Err(ZE_RESULT_ERROR_UNINITIALIZED));
}

#[test]
fn fault_no_devices() {
    let f = fixture(|c| c.faults.no_devices = true);
    assert!(f.raw.devices(f.drv).unwrap().is_empty());
}

#[test]
fn fault_group_properties_fail() {
    let f = fixture(|c| c.faults.group_properties_fail = true);
    let g = f.raw.groups(f.gpu()).unwrap()[0];
    assert_eq!(f.raw.group(g).err(), Some(ZE_RESULT_ERROR_UNKNOWN));
}

#[test]
fn fault_export_fd_minus_one_size_zero_and_oversized() {
    for (which, check) in [
        ("fd", Box::new(|e: &Export| e.fd == -1) as Box<dyn Fn(&Export) -> bool>),
        ("zero", Box::new(|e: &Export| e.size == 0 && e.fd >= 0)),
        (
            "oversized",
            Box::new(|e: &Export| {
                // SAFETY: all-zero bytes are a valid libc::stat.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                // SAFETY: fstat into our struct.
                assert_eq!(unsafe { libc::fstat(e.fd, &mut st) }, 0);
                e.size > st.st_size as usize
            }),
        ),
    ] {
        let f = fixture(|c| match which {
            "fd" => c.faults.export_fd_minus_one = true,
            "zero" => c.faults.export_size_zero = true,
            _ => c.faults.export_size_oversized = true,
        });
        let (c, d, _, e) = f.running();
        assert!(check(&e), "fault {which}: fd {} size {}", e.fd, e.size);
        f.clean_teardown(c, d);
        assert!(f.sim.report().is_clean());
    }
}

#[test]
fn fault_import_fails() {
    let f = fixture(|c| c.faults.import_fails = true);
    let (c, d, _, e) = f.running();
    let dup = dup(e.fd);
    assert!(f.raw.import(c, d, dup, e.size).is_err());
    close(dup);
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

#[test]
fn fault_device_lost_after_n_samples() {
    let f = fixture(|c| c.faults.device_lost_after_samples = Some(5));
    let (c, d, _, e) = f.running();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !f.sim.is_device_lost() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // SAFETY: plain handle call.
    assert_eq!(unsafe { (f.raw.api.zeDeviceGetStatus)(d) }, ZE_RESULT_ERROR_DEVICE_LOST);
    let flags = read_mapped_u64(e.fd, e.size, 24) >> 32;
    assert_eq!(flags as u32 & export::FLAG_DEVICE_LOST, export::FLAG_DEVICE_LOST);
    f.clean_teardown(c, d); // teardown still works on a lost device
    assert!(f.sim.report().is_clean());
}

#[test]
fn fault_disable_refused() {
    let f = fixture(|c| {
        c.metrics = MetricsEnable::RuntimeOnly;
        c.faults.disable_refused = true;
    });
    let d = f.gpu();
    f.raw.device_exp(f.drv, zetDeviceEnableMetricsExp_NAME, d).unwrap();
    assert_eq!(f.raw.device_exp(f.drv, zetDeviceDisableMetricsExp_NAME, d), Err(ZE_RESULT_ERROR_UNKNOWN));
    f.sim.configure(|faults, _| faults.disable_refused = false);
    f.raw.device_exp(f.drv, zetDeviceDisableMetricsExp_NAME, d).unwrap();
}

// ---- quirks ---------------------------------------------------------------------------------

#[test]
fn quirk_overwrite_pnext_clobbers_the_callers_chain() {
    let f = fixture(|c| c.quirks.overwrite_pnext = true);
    let (c, d, g, _) = f.running();
    let mut export = zet_export_dma_buf_exp_properties_t::default();
    let mine: *mut core::ffi::c_void = (&mut export as *mut zet_export_dma_buf_exp_properties_t).cast();
    let mut p = zet_metric_group_properties_t {
        stype: ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES,
        pNext: mine,
        ..Default::default()
    };
    // SAFETY: valid chain.
    assert_eq!(unsafe { (f.raw.api.zetMetricGroupGetProperties)(g, &mut p) }, ZE_RESULT_SUCCESS);
    assert_ne!(p.pNext, mine, "the driver replaced the caller's pNext");
    // Following the clobbered chain leads to an fd that is no export: importing it is a violation.
    // SAFETY: the clobbered pointer points at the driver's decoy struct, which has this layout.
    let decoy = unsafe { *p.pNext.cast::<zet_export_dma_buf_exp_properties_t>() };
    assert!(f.raw.import(c, d, decoy.fd, decoy.size).is_err());
    assert_eq!(f.sim.report().violation_kinds(), ["followed_clobbered_pnext"]);
    f.clean_teardown(c, d);
}

#[test]
fn quirk_invalid_argument_when_no_struct_in_the_chain_is_recognised() {
    let f = fixture(|c| c.quirks.invalid_argument_on_unknown_chain = true);
    let g = f.raw.groups(f.gpu()).unwrap()[0];
    let mut unknown = Unknown { stype: UNKNOWN_STYPE, pNext: std::ptr::null_mut(), payload: [0; 4] };
    let mut p = zet_metric_group_properties_t {
        stype: ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES,
        pNext: (&mut unknown as *mut Unknown).cast(),
        ..Default::default()
    };
    // SAFETY: valid chain.
    assert_eq!(unsafe { (f.raw.api.zetMetricGroupGetProperties)(g, &mut p) }, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    assert!(f.raw.group(g).is_ok(), "a chain with a known struct is accepted");
}

#[test]
fn quirk_import_closes_the_fd_it_is_given() {
    let f = fixture(|c| c.quirks.import_fd = ImportFd::ClosedByImport);
    let (c, d, g, e) = f.running();
    let dup = dup(e.fd);
    let file = file_of(dup);
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    // Closed: the number is free, or another test's thread already took it for another file.
    assert!(file.is_some() && file_of(dup) != file, "the import closed the dup");
    assert!(fd_is_open(e.fd), "the implementation's fd is intact");
    f.raw.free(c, p).unwrap();
    assert!(f.sim.report().violations.is_empty());
    // Handing over the implementation's own fd is a violation with this driver.
    let p = f.raw.import(c, d, e.fd, e.size).unwrap();
    f.raw.free(c, p).unwrap();
    let _ = f.raw.group(g);
    let kinds = f.sim.report().violation_kinds().join(",");
    assert!(kinds.starts_with("implementation_fd_closed_by_import"), "{kinds}");
    f.clean_teardown(c, d);
}

#[test]
fn quirk_unmappable_export_refuses_cpu_mappings_but_imports_and_copies() {
    let f = fixture(|c| c.quirks.unmappable_export = true);
    let (c, d, _, e) = f.running();
    // SAFETY: attempting a read-only mapping; failure expected.
    let m = unsafe { libc::mmap(std::ptr::null_mut(), e.size, libc::PROT_READ, libc::MAP_SHARED, e.fd, 0) };
    assert_eq!(m, libc::MAP_FAILED, "the export cannot be mapped for reading");
    let dup = dup(e.fd);
    let src = f.raw.import(c, d, dup, e.size).unwrap();
    close(dup);
    let host_desc = ze_host_mem_alloc_desc_t { stype: ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, ..Default::default() };
    let mut dst = std::ptr::null_mut();
    let q = ze_command_queue_desc_t {
        stype: ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
        mode: ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
        ..Default::default()
    };
    let mut cl = std::ptr::null_mut();
    // SAFETY: valid descriptors and out-pointers; the copy stays inside both allocations.
    unsafe {
        assert_eq!((f.raw.api.zeMemAllocHost)(c, &host_desc, e.size, 64, &mut dst), 0);
        assert_eq!((f.raw.api.zeCommandListCreateImmediate)(c, d, &q, &mut cl), 0);
        assert_eq!(
            (f.raw.api.zeCommandListAppendMemoryCopy)(
                cl,
                dst,
                src,
                e.size,
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut()
            ),
            0
        );
        assert_eq!(*dst.cast::<u32>(), export::MAGIC, "the copy holds the buffer's header");
        assert_eq!((f.raw.api.zeCommandListDestroy)(cl), 0);
    }
    f.raw.free(c, dst).unwrap();
    f.raw.free(c, src).unwrap();
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

#[test]
fn ground_truth_matches_what_a_reader_sees() {
    let f = fixture(|c| c.update_period_us = 100_000);
    let (c, d, _, e) = f.running();
    let ts = read_mapped_u64(e.fd, e.size, export::OFFSET_TIMESTAMP);
    let truth = f.sim.ground_truth("ComputeBasic", ts).expect("snapshot in history");
    let gpu_time = read_mapped_u64(e.fd, e.size, export::OFFSET_COUNTERS);
    let freq = f64::from_bits(read_mapped_u64(e.fd, e.size, export::OFFSET_COUNTERS + 16));
    if read_mapped_u64(e.fd, e.size, export::OFFSET_TIMESTAMP) == ts {
        assert_eq!(truth[0], gpu_time as f64);
        assert_eq!(truth[2], freq);
    }
    f.clean_teardown(c, d);
}

#[test]
fn handles_of_a_dropped_instance_are_rejected_not_dereferenced() {
    let f = fixture(|_| {});
    let d = f.gpu();
    let api = f.sim.api();
    drop(f);
    let raw = Raw { api };
    assert_eq!(raw.groups(d).err(), Some(ZE_RESULT_ERROR_INVALID_NULL_HANDLE));
    assert_eq!(raw.groups(0x1234 as ze_device_handle_t).err(), Some(ZE_RESULT_ERROR_INVALID_NULL_HANDLE));
}

#[test]
fn configs_parse_partially_and_errors_name_the_place() {
    let cfg = SimConfig::from_ron("(faults: (import_fails: true))", "test.ron").unwrap();
    assert!(cfg.faults.import_fails);
    assert_eq!(cfg.devices.len(), 2, "unspecified fields keep their defaults");
    let err = SimConfig::from_ron("(faults: (import_fails: yes))", "test.ron").unwrap_err().to_string();
    assert!(err.starts_with("test.ron: 1:"), "{err}");
    let err = SimConfig::from_ron("(update_period_us: 0)", "x.ron").unwrap_err().to_string();
    assert!(err.contains("update_period_us"), "{err}");
    let err = SimConfig::from_ron("(bogus: 1)", "x.ron").unwrap_err().to_string();
    assert!(err.contains("bogus"), "{err}");
}
