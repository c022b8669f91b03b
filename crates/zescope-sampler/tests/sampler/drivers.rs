//! The sampler against drivers that behave in every way the spec and real drivers allow, not
//! only the way the simulated driver's defaults do: optional entry points left empty, exports
//! answered before activation or only while active, the three owners of an imported fd, frees
//! that fail, device clocks that wrap or reset, exports that shrink, and metrics of one buffer
//! that report different sizes. Each ends with the simulated driver's report: zero violations,
//! and zero leaks except where a test provokes one and says so.

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::time::Duration;

use ze_sim::Sim;
use ze_sim::config::{FreeFault, ImportFd, MetricsEnable, SimConfig};
use zescope_sampler::layout::LayoutSet;
use zescope_sampler::testing::*;
use zescope_sampler::{Command, ErrorKind, Event, Options, RunInfo, StopReason};
use zescope_ze::Loader;

fn started(h: &zescope_sampler::SamplerHandle) -> RunInfo {
    wait_for(h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None })
}

fn stats_where(
    h: &zescope_sampler::SamplerHandle,
    f: impl Fn(&zescope_sampler::Health) -> bool,
) -> zescope_sampler::Health {
    wait_for(h, T, |e| if let Event::Health(s) = e { f(s).then(|| s.clone()) } else { None })
}

#[test]
fn a_driver_with_every_optional_entry_point_empty_still_records() {
    let sim = sim(|c| {
        // Without run-time enable, metrics are on from the start (as with ZET_ENABLE_METRICS=1).
        c.metrics = MetricsEnable::Always;
        c.empty_entry_points = SimConfig::optional_entry_points().iter().map(|s| s.to_string()).collect();
    });
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    let info = started(&h);
    assert_eq!(info.streams[0].read_path, zescope_sampler::ReadPath::Mapped);
    // Lost-device detection is the one feature a read loop loses: said once, the run goes on.
    let notice = wait_for(&h, T, |e| if let Event::Notice { message, .. } = e { Some(message.clone()) } else { None });
    assert!(notice.contains("lost-device detection") && notice.contains("zeDeviceGetStatus"), "{notice}");
    let batches = collect_samples(&h, 300);
    assert!(batches.iter().all(|b| b.run == info.run));
    let later = sync(&h, 1);
    assert!(first_error(&later).is_none(), "{later:?}");
    assert!(!later.iter().any(|e| matches!(e, Event::Notice { .. })), "the notice is given once");
    h.send(Command::Stop);
    let reason =
        wait_for(&h, T, |e| if let Event::RunStopped { reason, .. } = e { Some(reason.clone()) } else { None });
    assert_eq!(reason, StopReason::Requested);
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn exports_are_read_whether_queried_before_activation_or_only_while_active() {
    for only_while_active in [false, true] {
        let sim = sim(|c| {
            c.metrics = MetricsEnable::Always;
            c.quirks.export_only_while_active = only_while_active;
        });
        // The spec's sample code queries before any activation: by default that works.
        let before = query_compute_basic(&sim);
        let answered = before.as_ref().is_ok_and(|&(fd, size)| fd >= 0 && size > 0);
        assert_eq!(answered, !only_while_active, "query before activation: {before:?}");
        let h = sampler_on(&sim);
        h.send(Command::Start(run_config(&["ComputeBasic", "MemoryTraffic"])));
        assert_eq!(started(&h).imports, 2);
        collect_samples(&h, 40);
        shut_down(&h);
        assert!(sim.report().is_clean(), "only while active = {only_while_active}: {:?}", sim.report());
    }
}

/// ComputeBasic's export (fd, size) through zescope's Level Zero layer, without activating (the
/// driver must show its groups without run-time enable: `MetricsEnable::Always`).
fn query_compute_basic(sim: &Arc<Sim>) -> Result<(i32, usize), String> {
    let l = Loader::in_process(sim.in_process()).map_err(|e| e.to_string())?;
    let dev = l.drivers[0].devices().map_err(|e| e.to_string())?.remove(0);
    let groups = dev.metric_groups().map_err(|e| e.to_string())?;
    let g = groups.iter().find(|g| g.info.name == "ComputeBasic").ok_or("no ComputeBasic")?;
    g.query_export().map(|e| (e.fd, e.size)).map_err(|e| e.to_string())
}

/// How many of this process's fds name the file behind `fd`.
fn fds_naming(fd: i32) -> usize {
    let target = std::fs::metadata(format!("/proc/self/fd/{fd}"))
        .unwrap_or_else(|e| panic!("the exported fd {fd} is not open: {e}"));
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::metadata(e.ok()?.path()).ok())
        .filter(|m| m.dev() == target.dev() && m.ino() == target.ino())
        .count()
}

#[test]
fn every_owner_of_the_imported_fd_leaves_no_dup_behind_and_the_drivers_fd_open() {
    for owner in [ImportFd::Kept, ImportFd::ClosedByImport, ImportFd::ClosedAtFree] {
        let sim = sim(|c| {
            // No run-time enable/disable: a driver closes its exported fd when metrics are
            // disabled, and this test watches that fd across a whole run.
            c.metrics = MetricsEnable::Always;
            c.empty_entry_points = vec!["zetDeviceEnableMetricsExp".into(), "zetDeviceDisableMetricsExp".into()];
            c.quirks.import_fd = owner;
        });
        let (fd, _) = query_compute_basic(&sim).unwrap();
        let before = fds_naming(fd);
        let h = sampler_on(&sim);
        h.send(Command::Start(run_config(&["ComputeBasic"])));
        started(&h);
        collect_samples(&h, 20);
        assert!(fds_naming(fd) > before, "{owner:?}: zescope maps and imports through dups of its own");
        h.send(Command::Stop);
        wait_for(&h, T, |e| matches!(e, Event::RunStopped { .. }).then_some(()));
        assert_eq!(fds_naming(fd), before, "{owner:?}: every dup zescope made is closed, and only those");
        assert!(std::fs::metadata(format!("/proc/self/fd/{fd}")).is_ok(), "{owner:?}: the driver's fd stays open");
        shut_down(&h);
        assert!(sim.report().is_clean(), "{owner:?}: {:?}", sim.report());
    }
}

#[test]
fn a_free_that_fails_once_keeps_the_groups_active_until_the_next_start_frees_it() {
    let sim = sim(|c| c.faults.mem_free_fails = Some(FreeFault::Once));
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    started(&h);
    collect_samples(&h, 10);
    h.send(Command::Stop);
    let e = first_error(&sync(&h, 1)).expect("the failed free is reported");
    assert_eq!(e.kind, ErrorKind::Teardown);
    assert!(e.message.contains("zeMemFree") && e.message.contains("stay active"), "{}", e.message);
    assert_eq!(sim.live_imports(), 1, "the import the driver refused to free is still there");
    assert!(sim.report().violations.is_empty(), "nothing was torn down under it: {:?}", sim.report());
    // The next start retries the free first, then goes on in order.
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    started(&h);
    collect_samples(&h, 10);
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn a_free_that_always_fails_never_lets_the_exporter_be_torn_down_under_it() {
    let sim = sim(|c| c.faults.mem_free_fails = Some(FreeFault::Always));
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    started(&h);
    collect_samples(&h, 10);
    h.send(Command::Stop);
    assert!(first_error(&sync(&h, 1)).is_some_and(|e| e.message.contains("zeMemFree")));
    // Retried at the next start: still failing, so a run on the same device is refused (it
    // would deactivate or disable under the live import); another device can still be sampled.
    h.send(Command::Start(run_config(&["MemoryTraffic"])));
    let events = sync(&h, 2);
    assert!(first_error(&events).is_some_and(|e| e.message.contains("zeMemFree")), "{events:?}");
    let refused =
        events.iter().filter_map(|e| if let Event::Error(e) = e { Some(e) } else { None }).next_back().unwrap();
    assert!(refused.message.contains("could not be freed"), "{refused:?}");
    assert!(!events.iter().any(|e| matches!(e, Event::RunStarted(_))));
    let mut npu = run_config(&["NpuActivity"]);
    npu.targets[0].device = zescope_sampler::DevicePath { driver: 0, device: 1, sub_device: None };
    h.send(Command::Start(npu));
    started(&h);
    collect_samples(&h, 10);
    h.send(Command::Stop);
    sync(&h, 3);
    shut_down(&h);
    let r = sim.report();
    assert!(r.violations.is_empty(), "no deactivation, destroy or disable under a live import: {r:?}");
    assert!(!r.leaks.is_empty(), "the import the driver never freed is the (provoked) leak: {r:?}");
}

/// The simulated driver's layouts, plus ComputeBasic with a device timer of `bits` valid bits.
fn layouts_with_clock_bits(bits: u32) -> LayoutSet {
    let mut set = LayoutSet::built_in();
    let text = format!(
        r#"Layout(
            name: "ze-sim ComputeBasic, {bits}-bit clock",
            matches: [(driver: Simulated, group: Some("ComputeBasic"))],
            magic: Some((offset: 0, value: 0x4d49535a)),
            seqlock: Some(8),
            timestamp: Some((offset: 16, ticks_per_second: 1000000000.0, valid_bits: Some({bits}))),
            counters: MetricOrder(first: 32, stride: 8),
        )"#
    );
    set.add_file("test", &text).expect("a valid layout");
    set
}

#[test]
fn a_narrow_device_clock_wraps_without_gaps_or_resets() {
    let sim = sim(|c| c.quirks.timestamp_valid_bits = Some(24)); // wraps every 16.8 ms
    let h = sampler_with(&sim, Options { layouts: layouts_with_clock_bits(24), ..Options::default() });
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    started(&h);
    let batches = collect_samples(&h, 300); // ≥ 300 ms at 1 kHz: many wraps
    let ts: Vec<i64> = batches.iter().flat_map(|b| b.timestamps.clone()).collect();
    assert!(ts.windows(2).all(|w| w[0] < w[1]), "time goes on through every wrap");
    assert!(ts.last().unwrap() - ts[0] > 100_000_000, "the samples span many wraps");
    assert!(batches.iter().skip(1).all(|b| !b.gap_before), "a wrap is not a gap");
    let s = stats_where(&h, |s| s.ticks > 100);
    assert_eq!(s.clock_resets, 0, "{s:?}");
    shut_down(&h);
    assert!(sim.report().is_clean());
}

#[test]
fn a_device_clock_reset_re_anchors_the_stream_with_a_gap() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    started(&h);
    // Armed once the run reads (a reset before its first read would be no reset to it), for a
    // snapshot still to come: armed again if the writer passed it meanwhile.
    loop {
        let at = sim.snapshots_written() + 100;
        sim.configure(|faults, _| faults.timestamp_reset_after_samples = Some(at));
        if sim.snapshots_written() < at {
            break;
        }
    }
    let batches = collect_samples(&h, 400);
    assert!(batches.iter().any(|b| b.gap_before), "the reset shows as a gap");
    let ts: Vec<i64> = batches.iter().flat_map(|b| b.timestamps.clone()).collect();
    assert!(ts.windows(2).all(|w| w[0] < w[1]), "stamps stay increasing across the reset");
    let s = stats_where(&h, |s| s.clock_resets > 0);
    assert_eq!(s.clock_resets, 1, "{s:?}");
    shut_down(&h);
    assert!(sim.report().is_clean());
}

#[test]
fn an_export_that_shrinks_mid_run_ends_the_run_with_a_clear_error_not_sigbus() {
    let sim = sim(|c| {
        c.quirks.unsealed_export = true;
        c.faults.shrink_export_after_samples = Some(1000); // 200 ms
    });
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    let info = started(&h);
    assert_eq!(info.streams[0].read_path, zescope_sampler::ReadPath::FileRead, "an unsealed memfd is never mapped");
    let mut samples = 0;
    let e = wait_for(&h, Duration::from_secs(20), |e| match e {
        Event::Samples(b) => {
            samples += b.timestamps.len();
            None
        }
        Event::Error(e) => Some(e.clone()),
        _ => None,
    });
    assert_eq!(e.kind, ErrorKind::Export);
    assert!(e.message.contains("shrank"), "{}", e.message);
    assert!(samples > 50, "what was read before is delivered: {samples}");
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn metrics_of_one_buffer_reporting_different_sizes_are_read_once() {
    let sim = sim(|c| c.quirks.per_metric_sizes_differ = true);
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["MemoryTraffic"])));
    assert_eq!(started(&h).imports, 1);
    collect_samples(&h, 20);
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn quitting_waits_for_one_deadline_however_many_callers_wait() {
    let sim = sim(|c| c.faults.context_destroy_delay_ms = 3000);
    let mut h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    started(&h);
    let t0 = std::time::Instant::now();
    assert!(h.shutdown(Duration::from_millis(400)).is_err(), "the teardown is slower than the deadline");
    // The window's quit, its exit hook and Drop all wait: together no longer than the first deadline.
    assert!(h.shutdown(Duration::from_secs(3)).is_err());
    drop(h);
    // Not a second deadline: the second call saw the first one passed and did not wait for
    // its own 3 s (it would then have seen the 3 s teardown end and answered Ok).
    let waited = t0.elapsed();
    assert!(waited < Duration::from_millis(2900), "waited {waited:?}");
    // The sampler finishes its teardown on its own afterwards.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !sim.report().is_clean() {
        assert!(std::time::Instant::now() < deadline, "{:?}", sim.report());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The fault combination of the hostile review: a buffer that can be neither mapped nor read by
/// the CPU, a driver without host allocations (so the device-copy path cannot be set up), and a
/// free of an import that fails. The run cannot start, and nothing is torn down under an import:
/// the buffer is set up for reading before it is imported, so no error path frees an import.
#[test]
fn an_unreadable_buffer_without_a_copy_path_is_refused_before_anything_is_imported() {
    for fault in [FreeFault::Once, FreeFault::Always] {
        let sim = sim(|c| {
            c.quirks.unmappable_export = true;
            c.quirks.import_fd = ImportFd::ClosedAtFree;
            c.faults.mem_free_fails = Some(fault);
            c.empty_entry_points = vec!["zeMemAllocHost".into()];
        });
        let h = sampler_on(&sim);
        h.send(Command::Start(run_config(&["ComputeBasic"])));
        let events = sync(&h, 1);
        assert!(!events.iter().any(|e| matches!(e, Event::RunStarted(_))), "{fault:?}: {events:?}");
        let e = first_error(&events).expect("the refusal is reported");
        assert!(e.message.contains("through the device") && e.message.contains("zeMemAllocHost"), "{e:?}");
        assert_eq!(sim.live_imports(), 0);
        shut_down(&h);
        let r = sim.report();
        assert!(r.is_clean(), "{fault:?}: {}", r.to_ron());
    }
}

/// Host memory of the device-copy path whose free fails (after the command list could not be
/// made) is kept and freed again at the teardown; while it lives, the context is not destroyed.
#[test]
fn staging_memory_whose_free_fails_is_kept_and_freed_before_the_context_goes() {
    for fault in [FreeFault::Once, FreeFault::Always] {
        let sim = sim(|c| {
            c.quirks.unmappable_export = true;
            c.faults.host_free_fails = Some(fault);
            c.empty_entry_points = vec!["zeCommandListCreateImmediate".into()];
        });
        let h = sampler_on(&sim);
        h.send(Command::Start(run_config(&["ComputeBasic"])));
        let events = sync(&h, 1);
        assert!(!events.iter().any(|e| matches!(e, Event::RunStarted(_))), "{fault:?}: {events:?}");
        let r = sim.report();
        assert!(r.violations.is_empty(), "{fault:?}: the context outlives its host memory: {}", r.to_ron());
        let messages: Vec<String> = events
            .iter()
            .filter_map(|e| if let Event::Error(e) = e { Some(e.message.clone()) } else { None })
            .collect();
        match fault {
            FreeFault::Once => assert!(r.is_clean(), "freed at the setup's teardown: {}", r.to_ron()),
            FreeFault::Always => {
                assert!(messages.iter().any(|m| m.contains("host memory")), "{messages:?}");
                assert!(!r.leaks.is_empty(), "the host memory never freed is the provoked leak");
            }
        }
        shut_down(&h);
        let r = sim.report();
        assert!(r.violations.is_empty(), "{fault:?}: {}", r.to_ron());
        if matches!(fault, FreeFault::Once) {
            assert!(r.is_clean(), "{}", r.to_ron());
        }
    }
}
