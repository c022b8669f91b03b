//! What Intel's metrics conformance suite (oneapi-src/level-zero-tests,
//! `conformance_tests/tools/metrics`) expects of a driver, checked through the upstream loader
//! v1.32 (built by `ze_sim::testing::upstream_loader`), whose exported entry points the suite
//! calls. CI cannot run the suite itself; these tests pin each behaviour it relies on. Each runs
//! in a child process (loader state is per process): the test re-runs itself (`--exact`) with
//! `ZE_SIM_SUITE_CHILD` set to the loader to use, the child does the calls and its checks, the
//! parent checks its exit, its summary line and the driver's report.
//!
//! - metrics never enabled (`ZET_ENABLE_METRICS` unset): `zetMetricGroupGet` answers
//!   DEPENDENCY_UNAVAILABLE with a count of 0; the run-time enable and disable reach the driver
//!   (the loader routes them through `zetGetDeviceExpProcAddrTable`), and after the disable the
//!   listing answers SUCCESS with no groups;
//! - once enabled, `zetMetricGroupGetGlobalTimestampsExp` answers host ns or device ticks (the
//!   loader routes it through API 1.5's slot of the metric-group table), so does
//!   `zetMetricGroupGetExportDataExp` (API 1.6's slot), the GPU's tile has a
//!   time-based group, and
//!   `zetDeviceGetConcurrentMetricGroupsExp` (the suite's harness calls it before every choice
//!   of groups) answers sets of one group per domain;
//! - the tracer: a read with size 0 and no buffer is INVALID_ARGUMENT, destroying it while
//!   enabled is refused with HANDLE_OBJECT_IN_USE, and its decoder outlives it.

mod common;

use std::ffi::CString;
use std::process::Command;
use std::time::{Duration, Instant};

use level_zero_sys::*;
use ze_sim::{Report, testing};

use common::{Raw, ok};

/// Set in a child: the loader library to load.
const CHILD: &str = "ZE_SIM_SUITE_CHILD";

type DeviceCall = unsafe extern "C" fn(zet_device_handle_t) -> ze_result_t;
type Timestamps = unsafe extern "C" fn(zet_metric_group_handle_t, ze_bool_t, *mut u64, *mut u64) -> ze_result_t;
type ExportData = unsafe extern "C" fn(zet_metric_group_handle_t, *const u8, usize, *mut usize, *mut u8) -> ze_result_t;
type Concurrent =
    unsafe extern "C" fn(zet_device_handle_t, u32, *mut zet_metric_group_handle_t, *mut u32, *mut u32) -> ze_result_t;

/// Runs test `name` of this binary again as a child against the upstream loader, with
/// `libze_sim.so` as its driver, `ZET_ENABLE_METRICS` unset and its own report; returns the
/// child's stdout and the report, or None after a loud skip.
fn in_child(name: &str) -> Option<(String, Report)> {
    let (lib, _) = match testing::upstream_loader() {
        Ok(dirs) => dirs,
        Err(why) => {
            testing::skip("the conformance suite's expectations through the upstream loader", &why);
            return None;
        }
    };
    let so = match testing::cdylib() {
        Ok(so) => so,
        Err(why) => {
            testing::skip("the conformance suite's expectations through the upstream loader", &why);
            return None;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.ron");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, lib.join("libze_loader.so.1"))
        .env("LD_LIBRARY_PATH", &lib)
        .env("ZE_ENABLE_ALT_DRIVERS", &so)
        .env("ZE_SIM_REPORT", &report)
        .env_remove("ZET_ENABLE_METRICS")
        .env_remove("ZE_SIM_CONFIG")
        .env_remove("ZE_SIM_CONFIG_ZE_SIM")
        .env_remove("ZE_SIM_REPORT_ZE_SIM")
        .output()
        .expect("spawn the child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name} child failed ({}):\n{stdout}\n{stderr}", out.status);
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("no report ({e}):\n{stderr}"));
    Some((stdout, ron::from_str(&text).unwrap_or_else(|e| panic!("unreadable report {e}:\n{text}"))))
}

/// The loader at `path` (loaded already by `Api::load_from`) and its `zeInit`.
fn load(path: &str) -> Raw {
    // SAFETY: the upstream loader, kept loaded by the table for the whole child.
    let raw = Raw { api: unsafe { Api::load_from(path) }.expect("load the loader") };
    // SAFETY: plain call.
    ok(unsafe { (raw.api.zeInit)(0) }).expect("zeInit through the loader");
    raw
}

/// The loader's own export `name` (what an application linked to it calls).
fn export<F: Copy>(path: &str, name: &str) -> F {
    assert_eq!(size_of::<F>(), size_of::<*mut core::ffi::c_void>());
    let (path, name) = (CString::new(path).unwrap(), CString::new(name).unwrap());
    // SAFETY: RTLD_NOLOAD only finds the loader `load` already loaded; dlsym of a NUL-terminated name.
    let sym = unsafe {
        let h = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        assert!(!h.is_null(), "the loader is loaded");
        libc::dlsym(h, name.as_ptr())
    };
    assert!(!sym.is_null(), "the loader exports {name:?}");
    // SAFETY: F is the C signature of that export (the caller's promise), a pointer in size.
    unsafe { std::mem::transmute_copy::<*mut core::ffi::c_void, F>(&sym) }
}

/// `zetMetricGroupGet`'s count query: (result, count).
fn group_count(raw: &Raw, d: ze_device_handle_t) -> (ze_result_t, u32) {
    let mut n = 7;
    // SAFETY: a device handle, a count and no array.
    let r = unsafe { (raw.api.zetMetricGroupGet)(d, &mut n, std::ptr::null_mut()) };
    (r, n)
}

/// CLOCK_MONOTONIC in ns, the host clock the driver reports.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn name_of(raw: &Raw, g: zet_metric_group_handle_t) -> String {
    raw.group(g).unwrap().name
}

#[test]
fn the_listing_waits_for_metrics_and_the_run_time_enable_reaches_the_driver() {
    let Ok(path) = std::env::var(CHILD) else {
        let Some((out, report)) = in_child("the_listing_waits_for_metrics_and_the_run_time_enable_reaches_the_driver")
        else {
            return;
        };
        assert!(out.contains("listing and run-time enable: ok"), "{out}");
        assert!(report.is_clean(), "{report:?}");
        return;
    };
    let raw = load(&path);
    let enable: DeviceCall = export(&path, "zetDeviceEnableMetricsExp");
    let disable: DeviceCall = export(&path, "zetDeviceDisableMetricsExp");
    let drv = raw.drivers().unwrap()[0];
    let d = raw.devices(drv).unwrap()[0];
    let tile = raw.sub_devices(d).unwrap()[0];
    assert_eq!(group_count(&raw, d), (ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, 0), "never enabled");
    assert_eq!(group_count(&raw, tile), (ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, 0));
    // SAFETY: the loader's exports with a device handle it gave.
    assert_eq!(unsafe { enable(d) }, ZE_RESULT_SUCCESS, "the loader routes the run-time enable");
    assert_eq!(group_count(&raw, d), (ZE_RESULT_SUCCESS, 5));
    let tile_groups = raw.groups(tile).unwrap();
    assert!(
        tile_groups
            .iter()
            .any(|&g| raw.group(g).unwrap().sampling & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0),
        "the tile has a time-based group"
    );
    // The global and metric timestamps of a group, through the loader (API 1.5's slot).
    let timestamps: Timestamps = export(&path, "zetMetricGroupGetGlobalTimestampsExp");
    let g = raw.groups(d).unwrap()[0];
    let (mut global, mut metric) = (0u64, 0u64);
    let before = monotonic_ns();
    // SAFETY: a group handle the loader gave, valid out-pointers.
    assert_eq!(unsafe { timestamps(g, 1, &mut global, &mut metric) }, ZE_RESULT_SUCCESS);
    let after = monotonic_ns();
    assert!(
        (before..=after).contains(&global),
        "synchronized with the host: host ns ({before} <= {global} <= {after})"
    );
    assert!(metric > 0, "metric timestamp in ticks");
    // SAFETY: as above.
    assert_eq!(unsafe { timestamps(g, 0, &mut global, &mut metric) }, ZE_RESULT_SUCCESS);
    assert_eq!(global, metric, "not synchronized: the device's ticks, read at the same instant");
    // The export data of a group's raw data, through the loader (API 1.6's slot).
    let export_data: ExportData = export(&path, "zetMetricGroupGetExportDataExp");
    let (report, mut size) = ([0u8; 64], 0usize);
    // SAFETY: a group handle the loader gave, 64 bytes of raw data, a size query.
    let r = unsafe { export_data(g, report.as_ptr(), report.len(), &mut size, std::ptr::null_mut()) };
    assert_eq!(r, ZE_RESULT_SUCCESS);
    let mut data = vec![0u8; size];
    // SAFETY: `data` holds `size` bytes.
    let r = unsafe { export_data(g, report.as_ptr(), report.len(), &mut size, data.as_mut_ptr()) };
    assert_eq!(
        (r, &data[..8]),
        (ZE_RESULT_SUCCESS, &ze_sim::export_data::MAGIC[..]),
        "the loader routes the export data"
    );
    // SAFETY: as above.
    assert_eq!(unsafe { disable(d) }, ZE_RESULT_SUCCESS, "the loader routes the run-time disable");
    assert_eq!(group_count(&raw, d), (ZE_RESULT_SUCCESS, 0), "disabled again: listed, no groups");
    assert_eq!(group_count(&raw, tile), (ZE_RESULT_SUCCESS, 0));
    println!("listing and run-time enable: ok");
}

#[test]
fn concurrent_groups_come_through_the_loader_one_per_domain_in_each_set() {
    let Ok(path) = std::env::var(CHILD) else {
        let Some((out, report)) = in_child("concurrent_groups_come_through_the_loader_one_per_domain_in_each_set")
        else {
            return;
        };
        assert!(out.contains("concurrent groups: ok"), "{out}");
        assert!(report.is_clean(), "{report:?}");
        return;
    };
    let raw = load(&path);
    let enable: DeviceCall = export(&path, "zetDeviceEnableMetricsExp");
    let disable: DeviceCall = export(&path, "zetDeviceDisableMetricsExp");
    let concurrent: Concurrent = export(&path, "zetDeviceGetConcurrentMetricGroupsExp");
    let drv = raw.drivers().unwrap()[0];
    let d = raw.devices(drv).unwrap()[0];
    // SAFETY: the loader's export with a device handle it gave.
    assert_eq!(unsafe { enable(d) }, ZE_RESULT_SUCCESS);
    let groups = raw.groups(d).unwrap();
    // The harness's order: the set count first (no per-set array), then the per-set counts.
    let mut given = groups.clone();
    let mut sets = 0;
    // SAFETY: `given` holds its length of handles; no per-set array; a valid out-pointer.
    let r = unsafe { concurrent(d, given.len() as u32, given.as_mut_ptr(), std::ptr::null_mut(), &mut sets) };
    // Four domains: EuStallSampling and KernelTrace share the IP-sampling domain (100).
    assert_eq!((r, sets), (ZE_RESULT_SUCCESS, 2), "five groups in four domains make two sets");
    let mut per_set = vec![0u32; sets as usize];
    // SAFETY: as above, with `per_set` holding `sets` counts.
    let r = unsafe { concurrent(d, given.len() as u32, given.as_mut_ptr(), per_set.as_mut_ptr(), &mut sets) };
    assert_eq!((r, per_set), (ZE_RESULT_SUCCESS, vec![4, 1]));
    assert_eq!(
        given,
        [groups[0], groups[1], groups[2], groups[3], groups[4]],
        "KernelTrace, second of its domain, last"
    );
    let mut sorted = given.clone();
    sorted.sort();
    let mut all = groups.clone();
    all.sort();
    assert_eq!(sorted, all, "the same handles, reordered at most");
    // A handle of another device is refused.
    let tile = raw.sub_devices(d).unwrap()[0];
    let mut foreign = vec![raw.groups(tile).unwrap()[0]];
    // SAFETY: as above.
    let r = unsafe { concurrent(d, 1, foreign.as_mut_ptr(), std::ptr::null_mut(), &mut sets) };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT, "{}: a tile's group", name_of(&raw, foreign[0]));
    // SAFETY: as above.
    assert_eq!(unsafe { disable(d) }, ZE_RESULT_SUCCESS);
    println!("concurrent groups: ok");
}

#[test]
fn the_tracer_refuses_the_size_query_and_its_decoder_outlives_it() {
    let Ok(path) = std::env::var(CHILD) else {
        let Some((out, report)) = in_child("the_tracer_refuses_the_size_query_and_its_decoder_outlives_it") else {
            return;
        };
        assert!(out.contains("tracer: ok"), "{out}");
        // The one breach is the suite's own: a destroy while enabled, refused.
        assert_eq!(report.violation_kinds(), ["tracer_destroyed_while_enabled"], "{report:?}");
        assert!(report.leaks.is_empty(), "{report:?}");
        return;
    };
    let raw = load(&path);
    let enable: DeviceCall = export(&path, "zetDeviceEnableMetricsExp");
    let disable: DeviceCall = export(&path, "zetDeviceDisableMetricsExp");
    let drv = raw.drivers().unwrap()[0];
    let d = raw.devices(drv).unwrap()[0];
    // SAFETY: the loader's export with a device handle it gave.
    assert_eq!(unsafe { enable(d) }, ZE_RESULT_SUCCESS);
    let g = raw.tracer_group(d).unwrap();
    let c = raw.context(drv).unwrap();
    raw.activate(c, d, &[g]).unwrap();
    let (t, _) = raw.tracer_create(c, d, &[g], 64, std::ptr::null_mut()).unwrap();
    raw.tracer_enable(t, true).unwrap();
    assert_eq!(raw.tracer_available(t).0, ZE_RESULT_ERROR_INVALID_ARGUMENT, "size 0, no buffer");
    assert_eq!(raw.tracer_destroy(t), Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE), "still enabled");
    let dec = raw.decoder_create(t).unwrap();
    let decodable = raw.decodable(dec).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let bytes = loop {
        let (r, bytes) = raw.tracer_read_into(t, 1 << 20);
        assert_eq!(r, ZE_RESULT_SUCCESS);
        if !bytes.is_empty() {
            break bytes;
        }
        assert!(Instant::now() < deadline, "no kernel events within 10 s");
        std::thread::sleep(Duration::from_millis(1));
    };
    raw.tracer_disable(t, true).unwrap();
    raw.tracer_destroy(t).unwrap();
    let got = raw.decode(dec, &bytes, &decodable).unwrap();
    assert_eq!(got.entries.len(), bytes.len() / 32, "the decoder decodes after its tracer is gone");
    raw.decoder_destroy(dec).unwrap();
    raw.activate(c, d, &[]).unwrap();
    raw.destroy_context(c).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { disable(d) }, ZE_RESULT_SUCCESS);
    println!("tracer: ok");
}
