//! Device time that wraps or jumps back, exported files that are unsealed and shrink while
//! mapped, per-metric exports of one file with different sizes, entry points left empty, and
//! the configuration that reaches all of them.

mod common;

use std::time::{Duration, Instant};

use common::fixture::fixture;
use common::*;
use level_zero_sys::*;
use ze_sim::config::{FreeFault, ImportFd, SimConfig};
use ze_sim::{Sim, export};

/// Polls `cond` for up to 5 s.
fn wait_for(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

#[test]
fn timestamp_valid_bits_wrap_the_device_clock() {
    let f = fixture(|c| c.quirks.timestamp_valid_bits = Some(24));
    let (c, d, _, e) = f.running();
    let mut p = ze_device_properties_t { stype: ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, ..Default::default() };
    // SAFETY: a valid properties struct.
    assert_eq!(unsafe { (f.raw.api.zeDeviceGetProperties)(d, &mut p) }, ZE_RESULT_SUCCESS);
    assert_eq!(p.timestampValidBits, 24);
    let (mut host, mut dev) = (0, 0);
    // SAFETY: valid out-pointers.
    assert_eq!(unsafe { (f.raw.api.zeDeviceGetGlobalTimestamps)(d, &mut host, &mut dev) }, ZE_RESULT_SUCCESS);
    assert!(dev < 1 << 24, "global timestamps keep 24 bits too: {dev}");
    let mut last = read_mapped_u64(e.fd, e.size, export::OFFSET_TIMESTAMP);
    let wrapped = wait_for(|| {
        let ts = read_mapped_u64(e.fd, e.size, export::OFFSET_TIMESTAMP);
        assert!(ts < 1 << 24, "only 24 bits: {ts:#x}");
        let back = ts < last;
        last = ts;
        back
    });
    assert!(wrapped, "24 bits of ns wrap every 16.8 ms");
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

#[test]
fn timestamp_reset_jumps_back_near_zero_and_keeps_counting() {
    let f = fixture(|_| {});
    let (c, d, _, e) = f.running();
    let stamp = || read_mapped_u64(e.fd, e.size, export::OFFSET_TIMESTAMP);
    // The reset is armed only after this read, so `first` predates it however late this thread
    // runs.
    let first = stamp();
    assert!(first > 1_000_000_000_000, "the device clock starts far from 0: {first}");
    // Armed for a snapshot still to come; the writer may have passed that count before the fault
    // was stored (this thread waited), then it is armed again for a later one.
    let armed_from = Instant::now();
    let armed = loop {
        let at = f.sim.snapshots_written() + 20;
        f.sim.configure(|faults, _| faults.timestamp_reset_after_samples = Some(at));
        if f.sim.snapshots_written() < at {
            break at;
        }
    };
    assert!(wait_for(|| f.sim.snapshots_written() > armed + 5));
    let after = stamp();
    // The clock restarted at ~1 µs after the fault was armed: it cannot have counted further
    // than the time since then.
    let bound = armed_from.elapsed().as_nanos() as u64 + 1_000;
    assert!(after <= bound, "restarted near 0: {after} ns, more than the {bound} ns since the reset was armed");
    assert!(wait_for(|| stamp() > after), "and counts on from there ({after} -> {})", stamp());
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

fn seals(fd: i32) -> i32 {
    // SAFETY: F_GET_SEALS on an fd; -1 if it is not a memfd.
    unsafe { libc::fcntl(fd, libc::F_GET_SEALS) }
}

fn file_len(fd: i32) -> usize {
    // SAFETY: all-zero bytes are a valid stat; fstat writes into it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::fstat(fd, &mut st) }, 0);
    st.st_size as usize
}

#[test]
fn a_sealed_export_is_exactly_size_long_and_sealed_against_shrinking() {
    let f = fixture(|_| {});
    let (c, d, _, e) = f.running();
    assert_eq!(file_len(e.fd), e.size);
    assert_ne!(seals(e.fd) & libc::F_SEAL_SHRINK, 0);
    f.clean_teardown(c, d);
}

#[test]
fn an_unsealed_export_shrinks_while_mapped_and_the_writer_survives() {
    let f = fixture(|c| c.quirks.unsealed_export = true);
    let (c, d, _, e) = f.running();
    assert_eq!(seals(e.fd) & libc::F_SEAL_SHRINK, 0, "not sealed against shrinking");
    assert_eq!(file_len(e.fd), e.size + 4096, "one page longer than size, page-aligned");
    let dup = dup(e.fd);
    let src = f.raw.import(c, d, dup, e.size).unwrap();
    // Armed only now, so the length above is checked before any shrink however late this
    // thread runs (the writer shrinks at the first snapshot at or past the count).
    let at = f.sim.snapshots_written() + 10;
    f.sim.configure(|faults, _| faults.shrink_export_after_samples = Some(at));
    assert!(wait_for(|| file_len(e.fd) == 0), "truncated to shrink_export_to (0)");
    let n = f.sim.snapshots_written();
    assert!(wait_for(|| f.sim.snapshots_written() > n + 5), "the writer keeps running without faulting");
    // A copy out of the shrunk buffer is refused instead of faulting inside the driver.
    let host_desc = ze_host_mem_alloc_desc_t { stype: ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, ..Default::default() };
    let q = ze_command_queue_desc_t { stype: ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, ..Default::default() };
    let (mut dst, mut cl) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid descriptors and out-pointers; the copy range lies inside both allocations.
    unsafe {
        assert_eq!((f.raw.api.zeMemAllocHost)(c, &host_desc, e.size, 64, &mut dst), ZE_RESULT_SUCCESS);
        assert_eq!((f.raw.api.zeCommandListCreateImmediate)(c, d, &q, &mut cl), ZE_RESULT_SUCCESS);
        let r =
            (f.raw.api.zeCommandListAppendMemoryCopy)(cl, dst, src, 64, std::ptr::null_mut(), 0, std::ptr::null_mut());
        assert_eq!(r, ZE_RESULT_ERROR_UNKNOWN);
        assert_eq!((f.raw.api.zeCommandListDestroy)(cl), ZE_RESULT_SUCCESS);
    }
    f.raw.free(c, dst).unwrap();
    f.raw.free(c, src).unwrap();
    close(dup);
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

#[test]
fn shrinking_to_one_page_keeps_the_header_moving() {
    let f = fixture(|c| {
        c.quirks.unsealed_export = true;
        c.faults.shrink_export_after_samples = Some(5);
        c.faults.shrink_export_to = 4096;
        c.devices[0].groups[0].synthetic_counters = 1000; // three pages of counters
    });
    let (c, d, _, e) = f.running();
    assert!(e.size > 4096);
    assert!(wait_for(|| file_len(e.fd) == 4096));
    let seq = read_mapped_u64(e.fd, 4096, export::OFFSET_SEQUENCE);
    assert!(wait_for(|| read_mapped_u64(e.fd, 4096, export::OFFSET_SEQUENCE) > seq), "first page still written");
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

#[test]
fn per_metric_sizes_differ_across_metrics_of_one_file() {
    let f = fixture(|c| c.quirks.per_metric_sizes_differ = true);
    let (c, d, g, _) = f.running_group("MemoryTraffic");
    let metrics: Vec<_> = f.raw.metrics(g).unwrap().into_iter().map(|m| f.raw.metric(m).unwrap()).collect();
    // The streamer's timestamp (last, as the group also exports) is no counter: it exports nothing.
    let (name, ty, stamp) = metrics.last().unwrap();
    assert_eq!((name.as_str(), *ty, stamp.fd, stamp.size), ("QueryBeginTime", ZET_METRIC_TYPE_TIMESTAMP, -1, 0));
    let exports: Vec<&Export> = metrics[..3].iter().map(|m| &m.2).collect();
    let ids: Vec<_> = exports.iter().map(|e| export::file_id(e.fd)).collect();
    assert!(ids.iter().all(|i| i.is_some() && *i == ids[0]), "one file");
    let sizes: Vec<usize> = exports.iter().map(|e| e.size).collect();
    // Three counters and the timestamp's slot.
    assert_eq!(sizes, [export::OFFSET_COUNTERS + 4 * 8, export::OFFSET_COUNTERS + 4 * 8, 4096]);
    for e in &exports {
        let dup = dup(e.fd);
        let p = f.raw.import(c, d, dup, e.size).unwrap();
        f.raw.free(c, p).unwrap();
        close(dup);
    }
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

#[test]
fn empty_entry_points_answer_unsupported_and_leave_the_export_path_working() {
    let f = fixture(|c| {
        c.empty_entry_points = SimConfig::optional_entry_points().iter().map(|s| s.to_string()).collect();
    });
    let a = &f.raw.api;
    assert!(a.zetDeviceEnableMetricsExp.is_none() && a.zetMetricGroupCreateExp.is_none(), "Option fields are None");
    let d = f.gpu();
    // SAFETY: plain handle call.
    assert_eq!(unsafe { (a.zeDeviceGetStatus)(d) }, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    let (mut host, mut dev) = (0, 0);
    // SAFETY: valid out-pointers.
    assert_eq!(unsafe { (a.zeDeviceGetGlobalTimestamps)(d, &mut host, &mut dev) }, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    assert_eq!(f.raw.extension(f.drv, zetDeviceEnableMetricsExp_NAME), Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE));
    // The export path, as the spec's sample: query before activation, import, free.
    let g = f.raw.group_by_name(d, "ComputeBasic").unwrap();
    let e = f.raw.group(g).unwrap().export;
    assert!(e.fd >= 0);
    let c = f.raw.context(f.drv).unwrap();
    let dup = dup(e.fd);
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    f.raw.activate(c, d, &[g]).unwrap();
    assert!(wait_for(|| read_mapped_u64(dup, e.size, export::OFFSET_SEQUENCE) >= 4));
    f.raw.free(c, p).unwrap();
    close(dup);
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

#[test]
fn an_emptied_extension_function_is_not_returned_but_the_others_are() {
    let f = fixture(|c| c.empty_entry_points = vec!["zetDeviceEnableMetricsExp".into()]);
    assert_eq!(f.raw.extension(f.drv, zetDeviceEnableMetricsExp_NAME), Err(ZE_RESULT_ERROR_INVALID_ARGUMENT));
    assert!(f.raw.extension(f.drv, zetDeviceDisableMetricsExp_NAME).is_ok());
    assert!(f.raw.api.zetDeviceEnableMetricsExp.is_none() && f.raw.api.zetDeviceDisableMetricsExp.is_some());
}

#[test]
fn driver_uuid_tags_keep_the_prefix_and_make_copies_distinct() {
    let uuid = |tag: u32| {
        let sim = Sim::new(SimConfig { driver_uuid_tag: tag, ..Default::default() });
        assert_eq!(sim.init(), ZE_RESULT_SUCCESS);
        let drv = sim.drivers().unwrap()[0];
        let mut p = ze_driver_properties_t { stype: ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, ..Default::default() };
        // SAFETY: valid properties struct.
        assert_eq!(unsafe { (sim.api().zeDriverGetProperties)(drv, &mut p) }, ZE_RESULT_SUCCESS);
        p.uuid.id
    };
    let (a, b) = (uuid(0), uuid(7));
    assert_eq!(a[..8], 0x7a65_2d73_696d_0001u64.to_le_bytes(), "the ze-sim prefix");
    assert_eq!(a[..8], b[..8]);
    assert_ne!(a, b);
}

#[test]
fn every_new_fault_and_quirk_is_reachable_from_ron_and_bad_values_are_named() {
    let text = r#"(
        empty_entry_points: ["zeDeviceGetStatus"],
        driver_uuid_tag: 3,
        faults: (mem_free_fails: Some(Once), timestamp_reset_after_samples: Some(9),
                 shrink_export_after_samples: Some(4), shrink_export_to: 4096),
        quirks: (import_fd: ClosedAtFree, export_only_while_active: true, timestamp_valid_bits: Some(32),
                 unsealed_export: true, per_metric_sizes_differ: true),
    )"#;
    let c = SimConfig::from_ron(text, "t.ron").unwrap();
    assert_eq!(c.empty_entry_points, ["zeDeviceGetStatus"]);
    assert_eq!((c.driver_uuid_tag, c.faults.mem_free_fails), (3, Some(FreeFault::Once)));
    assert_eq!((c.faults.timestamp_reset_after_samples, c.faults.shrink_export_after_samples), (Some(9), Some(4)));
    assert_eq!((c.quirks.import_fd, c.quirks.timestamp_valid_bits), (ImportFd::ClosedAtFree, Some(32)));
    assert!(c.quirks.export_only_while_active && c.quirks.unsealed_export && c.quirks.per_metric_sizes_differ);
    let err = |t: &str| SimConfig::from_ron(t, "x.ron").unwrap_err().to_string();
    let e = err(r#"(empty_entry_points: ["zeDeviceGetStatus", "zeBogus"])"#);
    assert!(e.contains("empty_entry_points[1]") && e.contains("zeBogus"), "{e}");
    let e = err("(quirks: (timestamp_valid_bits: Some(3)))");
    assert!(e.contains("timestamp_valid_bits"), "{e}");
    let e = err("(faults: (shrink_export_after_samples: Some(3)))");
    assert!(e.contains("unsealed_export"), "{e}");
    let e =
        err("(quirks: (unsealed_export: true), faults: (shrink_export_after_samples: Some(3), shrink_export_to: 5))");
    assert!(e.contains("shrink_export_to"), "{e}");
    let e = err("(quirks: (import_fd: Sometimes))");
    assert!(e.contains("Sometimes"), "{e}");
    let c = SimConfig::from_ron("(quirks: (timer_drift_ppm: Some(-40)))", "t.ron").unwrap();
    assert_eq!(c.quirks.timer_drift_ppm, Some(-40));
    let e = err("(quirks: (timer_drift_ppm: Some(2000)))");
    assert!(e.contains("timer_drift_ppm = 2000"), "{e}");
    let e = err("(quirks: (timer_drift_ppm: Some(5), global_timestamps_host_ns: true))");
    assert!(e.contains("contradicts"), "{e}");
}

#[test]
fn a_drifting_timer_runs_its_ppm_fast_against_the_host_clock_in_every_device_time() {
    // 1000 ppm fast: 1 ms more device time a second of host time.
    let f = fixture(|c| c.quirks.timer_drift_ppm = Some(1000));
    let (c, d, _, e) = f.running();
    let pair = || {
        let (mut host, mut dev) = (0, 0);
        // SAFETY: valid out-pointers.
        assert_eq!(unsafe { (f.raw.api.zeDeviceGetGlobalTimestamps)(d, &mut host, &mut dev) }, ZE_RESULT_SUCCESS);
        (host as i64, dev as i64)
    };
    let (h0, d0) = pair();
    std::thread::sleep(Duration::from_millis(400));
    let stamp = read_mapped_u64(e.fd, e.size, export::OFFSET_TIMESTAMP) as i64;
    let (h1, d1) = pair();
    let (host, dev) = (h1 - h0, d1 - d0);
    // The drift is exact in the pairs (both values from one read of the clock): 1000 ppm of the
    // host's interval, within a nanosecond of rounding.
    assert!((dev - host - host / 1000).abs() <= 1, "{dev} ns of device time in {host} ns of host time");
    // The exported buffer's timestamp is the same clock's (its offset from the host's too),
    // written before the pair was read (within a second, however loaded the machine).
    assert!(stamp <= d1 && d1 - stamp < 1_000_000_000, "exported stamp {stamp}, the device's clock {d1}");
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}
