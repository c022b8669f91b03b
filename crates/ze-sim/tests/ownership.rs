//! Who owns which fd, and what the driver sees: the three import-fd behaviours, a failing
//! `zeMemFree`, an exported fd replaced behind the driver's back, a mapping left in place at
//! teardown, and the report file rewritten as things become known.

mod common;

use common::fixture::fixture;
use common::*;
use level_zero_sys::*;
use ze_sim::config::{FreeFault, ImportFd, MetricsEnable, SimConfig};
use ze_sim::{Report, Sim, export, fdcheck};

#[test]
fn import_fd_kept_by_default_the_application_closes_its_dup() {
    let f = fixture(|_| {});
    let (c, d, _, e) = f.running();
    let dup = dup(e.fd);
    let id = export::file_id(dup).unwrap();
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    f.raw.free(c, p).unwrap();
    assert_eq!(export::file_id(dup), Some(id), "the driver never closes the fd it was given");
    close(dup);
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

#[test]
fn import_fd_closed_at_free() {
    let f = fixture(|c| c.quirks.import_fd = ImportFd::ClosedAtFree);
    let (c, d, _, e) = f.running();
    let dup = dup(e.fd);
    let id = export::file_id(dup).unwrap();
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    assert_eq!(export::file_id(dup), Some(id), "the import keeps the fd open ...");
    f.raw.free(c, p).unwrap();
    // (The number may be reused by a test running in parallel; it must not be our file.)
    assert_ne!(export::file_id(dup), Some(id), "... and the free closes it");
    assert!(fd_is_open(e.fd), "the implementation's fd is intact");
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

#[test]
fn import_fd_closed_at_free_refuses_to_close_what_the_application_already_closed() {
    let f = fixture(|c| c.quirks.import_fd = ImportFd::ClosedAtFree);
    let (c, d, _, e) = f.running();
    let dup = dup(e.fd);
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    close(dup); // too early with this driver
    f.raw.free(c, p).unwrap();
    assert_eq!(f.sim.report().violation_kinds(), ["import_fd_closed_before_free"]);
    // Handing over the implementation's own fd is a violation too: the free would close it.
    let p = f.raw.import(c, d, e.fd, e.size).unwrap();
    let kinds = f.sim.report().violation_kinds().join(",");
    assert!(kinds.ends_with("implementation_fd_closed_by_import"), "{kinds}");
    f.raw.free(c, p).unwrap();
    f.clean_teardown(c, d);
}

#[test]
fn free_fails_once_keeps_the_import_alive_and_the_teardown_refused() {
    let f = fixture(|c| c.faults.mem_free_fails = Some(FreeFault::Once));
    let (c, d, _, e) = f.running();
    let dup = dup(e.fd);
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    assert_eq!(f.raw.free(c, p), Err(ZE_RESULT_ERROR_UNKNOWN));
    assert_eq!(f.sim.live_imports(), 1, "a failed free leaves the import alive");
    assert_eq!(f.raw.activate(c, d, &[]), Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE), "too early: refused");
    assert_eq!(f.sim.report().violation_kinds(), ["teardown_with_live_import"]);
    f.raw.free(c, p).unwrap(); // the retry succeeds
    assert_eq!(f.sim.live_imports(), 0);
    close(dup);
    f.clean_teardown(c, d);
    let r = f.sim.report();
    assert!(r.leaks.is_empty() && r.violations.len() == 1, "{r:?}");
}

#[test]
fn free_fails_always_leaves_the_import_and_refuses_disable() {
    let f = fixture(|c| {
        c.metrics = MetricsEnable::RuntimeOnly;
        c.faults.mem_free_fails = Some(FreeFault::Always);
    });
    f.raw.device_exp(f.drv, zetDeviceEnableMetricsExp_NAME, f.gpu()).unwrap();
    let (c, d, _, e) = f.running();
    let dup = dup(e.fd);
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    for _ in 0..3 {
        assert_eq!(f.raw.free(c, p), Err(ZE_RESULT_ERROR_UNKNOWN));
    }
    assert_eq!(f.raw.device_exp(f.drv, zetDeviceDisableMetricsExp_NAME, d), Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE));
    let r = f.sim.report();
    assert_eq!(r.violation_kinds(), ["teardown_with_live_import"]);
    assert_eq!(r.leaks[0].kind, "import_not_freed");
    // Host allocations are not affected by the fault.
    let host_desc = ze_host_mem_alloc_desc_t { stype: ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, ..Default::default() };
    let mut h = std::ptr::null_mut();
    // SAFETY: valid descriptor and out-pointer.
    assert_eq!(unsafe { (f.raw.api.zeMemAllocHost)(c, &host_desc, 64, 64, &mut h) }, ZE_RESULT_SUCCESS);
    f.raw.free(c, h).unwrap();
    f.sim.configure(|faults, _| faults.mem_free_fails = None);
    f.raw.free(c, p).unwrap();
    close(dup);
    f.clean_teardown(c, d);
    f.raw.device_exp(f.drv, zetDeviceDisableMetricsExp_NAME, d).unwrap();
    assert!(f.sim.report().leaks.is_empty());
}

#[test]
fn an_exported_fd_replaced_by_dup2_of_the_same_file_is_a_violation() {
    let f = fixture(|_| {});
    let (c, d, g, e) = f.running();
    let other = dup(e.fd); // same file, even the same open file description
    // SAFETY: dup2 replaces the exported fd (closing it) with another fd of the same file:
    // exactly what an application must not do. Atomic, so no other thread's fd is disturbed.
    assert_eq!(unsafe { libc::dup2(other, e.fd) }, e.fd);
    assert_eq!(export::file_id(e.fd), export::file_id(other), "fstat alone cannot tell");
    let _ = f.raw.group(g);
    assert_eq!(f.sim.report().violation_kinds(), ["exported_fd_closed"]);
    f.clean_teardown(c, d);
    close(e.fd); // ours now: the driver only closes fds that are still its own
    close(other);
}

#[test]
fn an_exported_fd_replaced_by_another_open_of_the_same_file_is_seen_with_kcmp() {
    let f = fixture(|_| {});
    let (c, d, g, e) = f.running();
    let path = std::ffi::CString::new(format!("/proc/self/fd/{}", e.fd)).unwrap();
    // SAFETY: a new open file description of the exported file, with O_CLOEXEC like the driver's.
    let reopened = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    assert!(reopened >= 0);
    // SAFETY: replaces the exported fd, keeping FD_CLOEXEC: only kcmp can see the difference.
    assert_eq!(unsafe { libc::dup3(reopened, e.fd, libc::O_CLOEXEC) }, e.fd);
    let _ = f.raw.group(g);
    let kinds = f.sim.report().violation_kinds().join(",");
    if fdcheck::kcmp_available() {
        assert_eq!(kinds, "exported_fd_closed", "kcmp compares open file descriptions");
    } else {
        assert_eq!(kinds, "", "the documented fallback (fstat + FD_CLOEXEC) cannot see this case");
    }
    f.clean_teardown(c, d);
    close(e.fd);
    close(reopened);
}

#[test]
fn a_mapping_left_at_deactivation_or_disable_is_a_violation() {
    let f = fixture(|c| c.metrics = MetricsEnable::RuntimeOnly);
    f.raw.device_exp(f.drv, zetDeviceEnableMetricsExp_NAME, f.gpu()).unwrap();
    let (c, d, _, e) = f.running();
    // SAFETY: a read-only shared mapping of the exported fd, unmapped below.
    let m = unsafe { libc::mmap(std::ptr::null_mut(), e.size, libc::PROT_READ, libc::MAP_SHARED, e.fd, 0) };
    assert_ne!(m, libc::MAP_FAILED);
    f.raw.activate(c, d, &[]).unwrap();
    assert_eq!(f.sim.report().violation_kinds(), ["exported_memory_still_mapped"]);
    assert!(f.sim.report().violations[0].message.contains(&format!("{:#x}", m as usize)));
    f.raw.destroy_context(c).unwrap();
    f.raw.device_exp(f.drv, zetDeviceDisableMetricsExp_NAME, d).unwrap();
    assert_eq!(f.sim.report().violation_kinds(), ["exported_memory_still_mapped"; 2]);
    // SAFETY: unmapping our own mapping.
    unsafe { libc::munmap(m, e.size) };
    assert!(f.sim.report().leaks.is_empty());
}

#[test]
fn an_unmapped_buffer_and_a_freed_import_give_a_clean_teardown() {
    let f = fixture(|_| {});
    let (c, d, _, e) = f.running();
    let dup = dup(e.fd);
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    let v = read_mapped_u64(dup, e.size, export::OFFSET_SEQUENCE); // maps and unmaps
    assert!(v >= 2);
    f.raw.free(c, p).unwrap();
    close(dup);
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

#[test]
fn the_report_file_is_rewritten_at_each_violation_and_teardown_step() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.ron");
    let cfg = SimConfig { metrics: MetricsEnable::Always, update_period_us: 200, ..Default::default() };
    let sim = Sim::with_report(cfg, path.clone());
    assert_eq!(sim.init(), ZE_RESULT_SUCCESS);
    let raw = Raw { api: sim.api() };
    let drv = sim.drivers().unwrap()[0];
    let d = raw.devices(drv).unwrap()[0];
    let g = raw.group_by_name(d, "ComputeBasic").unwrap();
    let c = raw.context(drv).unwrap();
    raw.activate(c, d, &[g]).unwrap();
    let e = raw.group(g).unwrap().export;
    let dup = dup(e.fd);
    let p = raw.import(c, d, dup, e.size).unwrap();
    let read = || -> Report { ron::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap() };
    let leak_kinds = |r: &Report| r.leaks.iter().map(|l| l.kind.clone()).collect::<Vec<_>>();
    assert_eq!(raw.activate(c, d, &[]), Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE));
    let r = read();
    assert_eq!(r.violation_kinds(), ["teardown_with_live_import"], "written at the violation");
    assert_eq!(leak_kinds(&r), ["import_not_freed", "context_not_destroyed", "group_left_activated"]);
    raw.free(c, p).unwrap();
    close(dup);
    assert_eq!(leak_kinds(&read()), ["context_not_destroyed", "group_left_activated"], "rewritten at the free");
    raw.activate(c, d, &[]).unwrap();
    assert_eq!(leak_kinds(&read()), ["context_not_destroyed"], "rewritten at deactivation");
    raw.destroy_context(c).unwrap();
    assert!(read().leaks.is_empty(), "rewritten at context destroy");
    drop(sim);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn destroying_a_created_group_closes_its_fd_and_only_then() {
    let f = fixture(|_| {});
    let d = f.gpu();
    let a = &f.raw.api;
    let (create, add, close_group, destroy) = (
        a.zetMetricGroupCreateExp.unwrap(),
        a.zetMetricGroupAddMetricExp.unwrap(),
        a.zetMetricGroupCloseExp.unwrap(),
        a.zetMetricGroupDestroyExp.unwrap(),
    );
    let source = f.raw.group_by_name(d, "ComputeBasic").unwrap();
    let metrics = f.raw.metrics(source).unwrap();
    let mut g = std::ptr::null_mut();
    // SAFETY: NUL-terminated strings, a valid out-pointer, metric handles of this device.
    unsafe {
        assert_eq!(create(d, c"Mine".as_ptr(), c"".as_ptr(), 1, &mut g), ZE_RESULT_SUCCESS);
        for &m in &metrics[..2] {
            assert_eq!(add(g, m, std::ptr::null_mut(), std::ptr::null_mut()), ZE_RESULT_SUCCESS);
        }
        assert_eq!(f.raw.group(g).unwrap().export.fd, -1, "an unclosed created group exports nothing yet");
        assert_eq!(close_group(g), ZE_RESULT_SUCCESS);
    }
    let e = f.raw.group(g).unwrap().export;
    assert!(e.fd >= 0, "a closed created group exports before activation");
    let id = export::file_id(e.fd).unwrap();
    let c = f.raw.context(f.drv).unwrap();
    f.raw.activate(c, d, &[g]).unwrap();
    f.raw.activate(c, d, &[]).unwrap();
    assert_eq!(export::file_id(e.fd), Some(id), "deactivation leaves the fd");
    // SAFETY: a created group handle.
    assert_eq!(unsafe { destroy(g) }, ZE_RESULT_SUCCESS);
    assert_ne!(export::file_id(e.fd), Some(id), "destroy closed it");
    f.raw.destroy_context(c).unwrap();
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

/// Unmap before free: freeing the last import of exported memory the application still maps is
/// a violation at the free, not only later at deactivation or disable.
#[test]
fn freeing_the_last_import_of_mapped_memory_is_a_violation() {
    let f = fixture(|_| {});
    let (c, d, _, e) = f.running();
    let dup = dup(e.fd);
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    // SAFETY: a read-only shared mapping of the exported fd, unmapped below.
    let m = unsafe { libc::mmap(std::ptr::null_mut(), e.size, libc::PROT_READ, libc::MAP_SHARED, dup, 0) };
    assert_ne!(m, libc::MAP_FAILED);
    f.raw.free(c, p).unwrap();
    let r = f.sim.report();
    assert_eq!(r.violation_kinds(), ["exported_memory_still_mapped"], "{r:?}");
    assert!(r.violations[0].message.starts_with("zeMemFree of the last import"), "{r:?}");
    // SAFETY: unmapping our own mapping.
    unsafe { libc::munmap(m, e.size) };
    close(dup);
}
