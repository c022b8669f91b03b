//! The simulated driver's PCI addresses (`zeDevicePciGetPropertiesExt`) and process lists
//! (`zesDeviceProcessesGetState`), in-process on a private instance: configured and default
//! addresses, a tile sharing its root's, an empty entry point; processes that come and go on the
//! configured schedule, a pid given to a new process, the application itself while it holds a
//! context, a count too small, the same list for the same seed, no more memory held by the
//! processes than the device has in use.

mod common;

use std::time::{Duration, Instant};

use common::fixture::fixture;
use common::ok;
use level_zero_sys::*;
use ze_sim::config::{ProcessesConfig, SysmanConfig, SysmanPiece};

fn bdf(api: &Api, d: ze_device_handle_t) -> Result<String, ze_result_t> {
    let mut p = ze_pci_ext_properties_t::default();
    // SAFETY: a device handle of this instance and a valid properties struct.
    ok(unsafe { (api.zeDevicePciGetPropertiesExt.expect("the entry point"))(d, &mut p) })?;
    let a = p.address;
    Ok(format!("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.device, a.function))
}

#[test]
fn devices_report_their_pci_address_and_tiles_their_roots() {
    let f = fixture(|_| {});
    let devices = f.raw.devices(f.drv).unwrap();
    assert_eq!(bdf(&f.raw.api, devices[0]).unwrap(), "0000:03:00.0");
    assert_eq!(bdf(&f.raw.api, devices[1]).unwrap(), "0000:00:0b.0");
    let tile = f.raw.sub_devices(devices[0]).unwrap()[0];
    assert_eq!(bdf(&f.raw.api, tile).unwrap(), "0000:03:00.0", "a tile is a function of its root");

    let f = fixture(|c| {
        c.devices[0].pci_bdf = Some("0001:81:00.0".into());
        c.devices[1].pci_bdf = None;
    });
    let devices = f.raw.devices(f.drv).unwrap();
    assert_eq!(bdf(&f.raw.api, devices[0]).unwrap(), "0001:81:00.0");
    assert_eq!(bdf(&f.raw.api, devices[1]).unwrap(), "0000:00:0b.0", "the first NPU's default");

    let f = fixture(|c| c.empty_entry_points = vec!["zeDevicePciGetPropertiesExt".into()]);
    assert!(f.raw.api.zeDevicePciGetPropertiesExt.is_none(), "an empty entry point is not in the Api");
}

#[test]
fn a_bad_or_misplaced_pci_address_is_refused_by_name() {
    let e = ze_sim::SimConfig::from_ron(r#"(devices: [(pci_bdf: Some("03:00.0"))])"#, "cfg").unwrap_err().0;
    assert!(e.contains("devices[0].pci_bdf") && e.contains("DDDD:BB:DD.F"), "{e}");
    let e = ze_sim::SimConfig::from_ron(r#"(devices: [(sub_devices: [(pci_bdf: Some("0000:03:00.1"))])])"#, "cfg")
        .unwrap_err()
        .0;
    assert!(e.contains("sub_devices[0].pci_bdf"), "{e}");
    let e =
        ze_sim::SimConfig::from_ron("(sysman: (processes: (exit_at_ms: 500, reuse_at_ms: 400)))", "cfg").unwrap_err().0;
    assert!(e.contains("reuse_at_ms"), "{e}");
}

fn processes(api: &Api, d: ze_device_handle_t) -> Result<Vec<zes_process_state_t>, ze_result_t> {
    let get = api.zesDeviceProcessesGetState.expect("the entry point");
    let mut n = 0;
    // SAFETY: a count query on a core device handle (Sysman on core handles in a private instance).
    ok(unsafe { get(d.cast(), &mut n, std::ptr::null_mut()) })?;
    let mut v = vec![zes_process_state_t::default(); n as usize + 4];
    let mut n = v.len() as u32;
    // SAFETY: room for `n` entries.
    ok(unsafe { get(d.cast(), &mut n, v.as_mut_ptr()) })?;
    v.truncate(n as usize);
    Ok(v)
}

fn pids(v: &[zes_process_state_t]) -> Vec<u32> {
    v.iter().map(|p| p.processId).collect()
}

/// Waits (within 30 s) for `done`; returns how long after `started` it held.
fn wait_for_since(started: Instant, mut done: impl FnMut() -> bool, what: &str) -> Duration {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within 30 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    started.elapsed()
}

#[test]
fn processes_come_and_go_on_schedule_and_an_exited_pid_is_reused() {
    let schedule = ProcessesConfig { exit_at_ms: 1000, reuse_at_ms: 1500, job_period_ms: 0, include_self: false };
    // The driver starts after `started`, so its clock is behind this one: a read within
    // `exit_at_ms` of `started` is before the exit. A loaded machine may miss that: try again
    // with a fresh driver (each attempt is checked, none is skipped).
    let (started, f, before) = (0..10)
        .find_map(|_| {
            let started = Instant::now();
            let f = fixture(|c| c.sysman = SysmanConfig { processes: schedule.clone(), ..Default::default() });
            let before = processes(&f.raw.api, f.gpu()).unwrap();
            (started.elapsed() < Duration::from_millis(schedule.exit_at_ms)).then_some((started, f, before))
        })
        .expect("no read within the media process's life of 1 s in ten fresh drivers");
    let gpu = f.gpu();
    assert_eq!(before.len(), 2, "the long-lived workload and the media process: {before:?}");
    let (main, media) = (before[0], before[1]);
    assert!(main.processId > 1 << 22, "simulated pids are above any host pid: {}", main.processId);
    assert!(main.memSize > (29 << 30) / 10 && main.engines & ZES_ENGINE_TYPE_FLAG_COMPUTE != 0, "{main:?}");
    assert_eq!(media.engines, ZES_ENGINE_TYPE_FLAG_MEDIA | ZES_ENGINE_TYPE_FLAG_DMA);
    assert_eq!(media.sharedSize, 256 << 20);

    // The media process exits, not before its time; later a new process takes its pid, not
    // before its time either (the driver's clock is behind `started`).
    let exited = wait_for_since(started, || processes(&f.raw.api, gpu).unwrap().len() == 1, "the media process exits");
    assert!(exited >= Duration::from_millis(schedule.exit_at_ms), "exited early, {exited:?} in");
    assert_eq!(pids(&processes(&f.raw.api, gpu).unwrap()), [main.processId], "the media process exited");
    let reused =
        wait_for_since(started, || processes(&f.raw.api, gpu).unwrap().len() == 2, "a process takes the freed pid");
    assert!(reused >= Duration::from_millis(schedule.reuse_at_ms), "reused early, {reused:?} in");
    let after = processes(&f.raw.api, gpu).unwrap();
    assert_eq!(pids(&after), [main.processId, media.processId], "a new process has the exited one's pid");
    assert_eq!((after[1].memSize, after[1].engines), (1 << 30, ZES_ENGINE_TYPE_FLAG_RENDER), "and is not the old one");

    let tile = f.raw.sub_devices(gpu).unwrap()[0];
    assert_eq!(pids(&processes(&f.raw.api, tile).unwrap()), pids(&after), "a tile lists its root's processes");
    let npu = f.raw.devices(f.drv).unwrap()[1];
    let on_npu = processes(&f.raw.api, npu).unwrap();
    assert_eq!(on_npu.len(), 1);
    assert!(!pids(&after).contains(&on_npu[0].processId));

    // The same seed gives the same pids; another seed others.
    let same = fixture(|c| c.sysman = SysmanConfig { processes: schedule.clone(), ..Default::default() });
    assert_eq!(processes(&same.raw.api, same.gpu()).unwrap()[0].processId, main.processId);
    let other = fixture(|c| {
        c.seed = 2;
        c.sysman = SysmanConfig { processes: schedule, ..Default::default() };
    });
    assert_ne!(processes(&other.raw.api, other.gpu()).unwrap()[0].processId, main.processId);
}

#[test]
fn short_jobs_start_with_fresh_pids() {
    let f = fixture(|c| {
        c.sysman.processes = ProcessesConfig { job_period_ms: 200, include_self: false, ..Default::default() };
    });
    // A job per period, each with its own pid: three of them seen (a loaded machine may read
    // too seldom to see every one; it waits for more periods instead).
    let mut jobs = std::collections::BTreeSet::new();
    wait_for_since(
        Instant::now(),
        || {
            let list = processes(&f.raw.api, f.gpu()).unwrap();
            assert!((2..=3).contains(&list.len()), "{list:?}");
            jobs.extend(list.iter().skip(2).map(|p| p.processId));
            jobs.len() >= 3
        },
        "three short jobs with fresh pids",
    );
}

#[test]
fn the_application_is_listed_while_it_holds_a_context_with_what_it_imported() {
    let f = fixture(|_| {});
    let me = std::process::id();
    assert!(!pids(&processes(&f.raw.api, f.gpu()).unwrap()).contains(&me));
    let (c, d, _g, e) = f.running();
    let p = f.raw.import(c, d, e.fd, e.size).unwrap();
    let list = processes(&f.raw.api, d).unwrap();
    let own = list.iter().find(|p| p.processId == me).expect("the application is listed");
    assert_eq!(own.sharedSize, e.size as u64, "its import of the exported memory is shared memory");
    let npu = f.raw.devices(f.drv).unwrap()[1];
    let on_npu = processes(&f.raw.api, npu).unwrap();
    assert_eq!(on_npu.iter().find(|p| p.processId == me).map(|p| p.sharedSize), Some(0), "nothing imported there");
    f.raw.free(c, p).unwrap();
    f.clean_teardown(c, d);
    assert!(!pids(&processes(&f.raw.api, d).unwrap()).contains(&me), "gone with its context");
}

/// The device memory in use (size − free) by `zesMemoryGetState` of the device's one module.
fn memory_used(api: &Api, d: ze_device_handle_t) -> u64 {
    let (mut n, mut m) = (1u32, std::ptr::null_mut());
    // SAFETY: a core device handle (Sysman on core handles), room for one handle.
    ok(unsafe { (api.zesDeviceEnumMemoryModules.unwrap())(d.cast(), &mut n, &mut m) }).unwrap();
    let mut s = zes_mem_state_t::default();
    // SAFETY: an enumerated handle and a valid out-struct.
    ok(unsafe { (api.zesMemoryGetState.unwrap())(m, &mut s) }).unwrap();
    s.size - s.free
}

#[test]
fn the_processes_hold_no_more_memory_than_the_device_has_in_use() {
    let f = fixture(|_| {});
    let (c, d, _g, _e) = f.running();
    for _ in 0..50 {
        // Read between two reads of the device's memory: at a phase change the device's use moves
        // while the list is read, and the list belongs to one side of it.
        let before = memory_used(&f.raw.api, d);
        let held: u64 = processes(&f.raw.api, d).unwrap().iter().map(|p| p.memSize).sum();
        let after = memory_used(&f.raw.api, d);
        assert!(held <= before.max(after), "processes hold {held} B, the device has {before} / {after} B in use");
        std::thread::sleep(Duration::from_millis(2));
    }
    f.clean_teardown(c, d);
}

#[test]
fn a_count_too_small_fills_what_fits_and_says_so() {
    let f = fixture(|_| {});
    let get = f.raw.api.zesDeviceProcessesGetState.unwrap();
    let mut one = [zes_process_state_t::default(); 1];
    let mut n = 1;
    // SAFETY: room for one entry.
    let r = unsafe { get(f.gpu().cast(), &mut n, one.as_mut_ptr()) };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_SIZE);
    assert_eq!(n, 1);
    assert!(one[0].processId > 1 << 22);
}

#[test]
fn a_failing_or_empty_process_list_answers_as_configured() {
    let f = fixture(|c| c.sysman.failing = vec![SysmanPiece::Processes]);
    assert_eq!(processes(&f.raw.api, f.gpu()).unwrap_err(), ZE_RESULT_ERROR_NOT_AVAILABLE);
    let f = fixture(|c| c.empty_entry_points = vec!["zesDeviceProcessesGetState".into()]);
    assert!(f.raw.api.zesDeviceProcessesGetState.is_none());
}
