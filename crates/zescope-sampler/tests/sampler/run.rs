//! The sampler against the in-process simulated driver: a run end to end, dedup of shared
//! buffers, decoding against the driver's ground truth, teardown on every path, and one test per
//! fault and quirk the driver can inject.

use std::time::Duration;

use zescope_sampler::testing::*;
use zescope_sampler::{Command, ErrorKind, Event, StopReason, Via};

#[test]
fn a_run_streams_decoded_samples_and_stops_through_the_teardown() {
    let sim = sim(|c| c.unreadable_group = true);
    let h = sampler_on(&sim);
    let inv = wait_for(&h, T, |e| if let Event::Inventory(i) = e { Some(i.clone()) } else { None });
    assert!(inv.source.as_ref().unwrap().simulated);
    assert_eq!(inv.devices.len(), 3, "GPU, its sub-device, NPU");
    let none = inv.devices[0].groups.iter().find(|g| g.name == "Unreadable").unwrap();
    assert!(none.unavailable.as_deref().unwrap().contains("exports no memory"));
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    assert_eq!(info.imports, 1);
    assert_eq!(info.streams[0].series.len(), 5);
    assert_eq!(info.streams[0].series[0].unit, "ns");
    assert_eq!(info.streams[0].read_path, zescope_sampler::ReadPath::Mapped);
    assert_eq!(sim.live_imports(), 1);
    let batches = collect_samples(&h, 50);
    let ts: Vec<i64> = batches.iter().flat_map(|b| b.timestamps.clone()).collect();
    assert!(ts.windows(2).all(|w| w[0] < w[1]), "timestamps strictly increase");
    let gpu_time: Vec<f64> =
        batches.iter().flat_map(|b| b.values.chunks(5).map(|r| r[0]).collect::<Vec<_>>()).collect();
    assert!(gpu_time.windows(2).all(|w| w[0] <= w[1]) && gpu_time.last() > gpu_time.first(), "GpuTime counts up");
    h.send(Command::Stop);
    let reason =
        wait_for(&h, T, |e| if let Event::RunStopped { reason, .. } = e { Some(reason.clone()) } else { None });
    assert_eq!(reason, StopReason::Requested);
    assert_eq!(sim.live_imports(), 0);
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
}

/// A run's last health comes ahead of its stop and covers its whole time, also for a run shorter
/// than the health period (`record --duration 300ms` said "too short for a rate").
#[test]
fn a_run_shorter_than_the_health_period_ends_with_its_health() {
    let sim = sim(|_| {});
    let options = zescope_sampler::Options { health_period: Duration::from_secs(60), ..Default::default() };
    let h = sampler_with(&sim, options);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    collect_samples(&h, 100);
    h.send(Command::Stop);
    let events = sync(&h, 1);
    let stopped = events.iter().position(|e| matches!(e, Event::RunStopped { .. })).expect("the run stopped");
    let health = events[..stopped].iter().rev().find_map(|e| if let Event::Health(s) = e { Some(s) } else { None });
    let health = health.expect("a health before the stop");
    assert_eq!(health.run, info.run);
    assert!(health.ticks >= 100 && !health.ticked_for.is_zero(), "{health:?}");
    assert!(!events[stopped..].iter().any(|e| matches!(e, Event::Health(_))), "none after the stop");
    shut_down(&h);
}

/// The achieved rate counts deadlines, not the window's wall time: at 10 Hz a health window of
/// a second and a bit holds 10 or 11 reads, which over its length read as 9.88 or 10.09 Hz where
/// every read was done.
#[test]
fn a_run_that_misses_no_deadline_achieves_exactly_its_rate() {
    let sim = sim(|_| {});
    let options = zescope_sampler::Options { health_period: Duration::from_millis(450), ..Default::default() };
    let h = sampler_with(&sim, options);
    let mut cfg = run_config(&["ComputeBasic"]);
    cfg.interval = Duration::from_millis(100);
    h.send(Command::Start(cfg));
    let mut health = Vec::new();
    wait_for(&h, T, |e| {
        if let Event::Health(s) = e {
            health.push(s.clone());
        }
        (health.len() >= 5).then_some(())
    });
    shut_down(&h);
    let mut exact = 0;
    for w in health.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert_eq!(b.requested_hz, 10.0);
        assert!(b.achieved_hz <= b.requested_hz, "never more than asked: {b:?}");
        if b.skipped_ticks == a.skipped_ticks && b.ticks > a.ticks {
            assert_eq!(b.achieved_hz, 10.0, "no deadline missed in the window: {b:?}");
            exact += 1;
        }
    }
    assert!(exact >= 1, "a window without a missed deadline: {health:?}");
}

#[test]
fn two_metrics_reporting_one_shared_buffer_give_one_import_and_one_mapping() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["MemoryTraffic"])));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    assert_eq!(info.imports, 1, "three metrics, two fds, one buffer");
    assert_eq!(sim.live_imports(), 1);
    assert_eq!(info.streams[0].series.len(), 3);
    collect_samples(&h, 10);
    h.send(Command::Stop);
    sync(&h, 1);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn decoded_values_equal_what_the_driver_wrote() {
    let sim = sim(|c| c.update_period_us = 500);
    let h = sampler_on(&sim);
    let mut cfg = run_config(&["ComputeBasic"]);
    cfg.interval = Duration::from_micros(300);
    h.send(Command::Start(cfg));
    wait_for(&h, T, |e| matches!(e, Event::RunStarted(_)).then_some(()));
    let batches = collect_samples(&h, 40);
    // Each snapshot also holds the streamer's timestamp, last: the five counters come first.
    let history = sim.history("ComputeBasic");
    let mut offsets = std::collections::HashSet::new();
    let mut matched = 0;
    for b in &batches {
        for (i, row) in b.values.chunks(5).enumerate() {
            let found = history.iter().find(|(_, v)| &v[..5] == row);
            if let Some((device_ts, _)) = found {
                offsets.insert(b.timestamps[i] - *device_ts as i64);
                matched += 1;
            }
        }
    }
    assert!(
        matched >= 30,
        "{matched} of the sampled rows are exact snapshots the driver wrote (history may have rolled)"
    );
    assert_eq!(offsets.len(), 1, "every sample is stamped with its snapshot's device time (one fixed offset)");
    h.send(Command::Shutdown);
    wait_for(&h, T, |e| matches!(e, Event::ShutDown).then_some(()));
    assert!(sim.report().is_clean());
}

#[test]
fn pause_stops_reading_and_resume_marks_a_gap() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    collect_samples(&h, 5);
    h.send(Command::Pause);
    sync(&h, 1);
    // Time passes on the sampler while paused: two health reports come (each after a batch
    // period, when whatever had been read would have been sent), the device writes snapshots
    // meanwhile, and no read is made (the tick count holds) nor any sample sent.
    let written = sim.snapshots_written();
    let (mut health, mut samples) = (Vec::new(), 0);
    wait_for(&h, T, |e| {
        match e {
            Event::Samples(b) => samples += b.timestamps.len(),
            Event::Health(s) => health.push(s.clone()),
            _ => {}
        }
        (health.len() >= 2 && sim.snapshots_written() > written).then_some(())
    });
    assert_eq!(samples, 0, "no samples while paused");
    assert_eq!(health[0].ticks, health.last().unwrap().ticks, "no reads while paused: {health:?}");
    assert_eq!(health.last().unwrap().achieved_hz, 0.0);
    let during = sync(&h, 2);
    assert!(!during.iter().any(|e| matches!(e, Event::Samples(_))), "no samples while paused");
    h.send(Command::Resume);
    let b = wait_for(&h, T, |e| if let Event::Samples(b) = e { Some(b.clone()) } else { None });
    assert!(b.gap_before, "the first batch after a pause does not connect");
    h.send(Command::SetInterval(Duration::from_micros(50)));
    let stats = wait_for(&h, T, |e| if let Event::Health(s) = e { Some(s.clone()) } else { None });
    assert_eq!(stats.requested_hz, 10_000.0, "interval clamped to 100 µs");
}

#[test]
fn groups_in_one_domain_are_refused_with_an_explanation() {
    let sim = sim(|c| c.devices[0].groups[1].domain = 0);
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic", "MemoryTraffic"])));
    let e = first_error(&sync(&h, 1)).expect("an error");
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(
        e.message.contains("both in domain 0") && e.hint.unwrap().contains("one group per domain"),
        "{}",
        e.message
    );
    assert!(sim.report().is_clean());
}

#[test]
fn two_groups_of_distinct_domains_and_a_custom_group_run_and_tear_down() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic", "MemoryTraffic"])));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    assert_eq!((info.streams.len(), info.imports), (2, 2));
    let mut cfg = run_config(&["ComputeBasic"]);
    cfg.targets[0].custom_group = true;
    cfg.targets[0].metrics = vec!["GpuPower".into(), "GpuTime".into()];
    h.send(Command::Start(cfg));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    assert_eq!(info.streams[0].group, "zescope custom");
    let names: Vec<&str> = info.streams[0].series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["GpuPower", "GpuTime"]);
    collect_samples(&h, 5);
    h.send(Command::Shutdown);
    wait_for(&h, T, |e| matches!(e, Event::ShutDown).then_some(()));
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn a_panic_free_shutdown_waits_for_teardown_and_leaves_nothing() {
    let sim = sim(|_| {});
    let mut h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    collect_samples(&h, 3);
    assert!(h.shutdown(Duration::from_secs(3)).is_ok());
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

// ---- the fault matrix: every fault and quirk -------------------------------------------------

/// Starts ComputeBasic (or `group`) with the fault set, expects an error containing `needle`,
/// clears the fault, and checks a new run works and everything is released.
fn fault_case(
    group: &str,
    set: impl FnOnce(&mut ze_sim::config::Faults, &mut ze_sim::config::Quirks),
    kind: ErrorKind,
    needle: &str,
) {
    fault_case_via(group, Via::Auto, set, kind, needle)
}

/// [`fault_case`] reading the group only `via` (ComputeBasic is time-based too: under auto a
/// group whose export fails is read by the streamer).
fn fault_case_via(
    group: &str,
    via: Via,
    set: impl FnOnce(&mut ze_sim::config::Faults, &mut ze_sim::config::Quirks),
    kind: ErrorKind,
    needle: &str,
) {
    let sim = sim(|_| {});
    sim.configure(set);
    let h = sampler_on(&sim);
    let mut cfg = run_config(&[group]);
    cfg.via = via;
    h.send(Command::Start(cfg));
    let events = sync(&h, 1);
    let e = first_error(&events).unwrap_or_else(|| panic!("no error for {needle}: {events:?}"));
    assert_eq!(e.kind, kind, "{}", e.message);
    assert!(e.message.contains(needle), "{:?} not in {:?}", needle, e.message);
    assert_eq!(sim.live_imports(), 0, "nothing left imported after the failed start");
    sim.configure(|f, q| {
        *f = Default::default();
        *q = Default::default();
    });
    let mut cfg = run_config(&[group]);
    cfg.via = via;
    h.send(Command::Start(cfg));
    collect_samples(&h, 3);
    h.send(Command::Shutdown);
    wait_for(&h, T, |e| matches!(e, Event::ShutDown).then_some(()));
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
}

#[test]
fn fault_export_fd_minus_one() {
    fault_case("ComputeBasic", |f, _| f.export_fd_minus_one = true, ErrorKind::Export, "fd -1");
}

#[test]
fn fault_export_size_zero() {
    fault_case("ComputeBasic", |f, _| f.export_size_zero = true, ErrorKind::Export, "size 0");
}

#[test]
fn fault_export_size_larger_than_the_buffer() {
    fault_case("MemoryTraffic", |f, _| f.export_size_oversized = true, ErrorKind::Export, "but the buffer behind fd");
}

#[test]
fn fault_import_fails() {
    fault_case("ComputeBasic", |f, _| f.import_fails = true, ErrorKind::Driver, "zeMemAllocDevice failed");
}

#[test]
fn fault_group_properties_fail() {
    fault_case("ComputeBasic", |f, _| f.group_properties_fail = true, ErrorKind::Driver, "zetMetricGroupGetProperties");
}

#[test]
fn fault_no_devices() {
    fault_case("ComputeBasic", |f, _| f.no_devices = true, ErrorKind::Config, "does not exist");
}

#[test]
fn quirk_overwritten_pnext_makes_the_export_unavailable() {
    fault_case_via(
        "ComputeBasic",
        Via::Export,
        |_, q| q.overwrite_pnext = true,
        ErrorKind::Export,
        "overwrote the query's pNext chain",
    );
}

#[test]
fn quirk_driver_without_export_support() {
    fault_case_via(
        "ComputeBasic",
        Via::Export,
        |_, q| {
            q.no_export_extension = true;
            q.invalid_argument_on_unknown_chain = true;
        },
        ErrorKind::Export,
        "exports no memory",
    );
}

/// Without the export extension, auto reads ComputeBasic, time-based too, with the streamer.
#[test]
fn quirk_driver_without_export_support_streams_a_time_based_group_under_auto() {
    let sim = sim(|c| c.quirks.no_export_extension = true);
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    assert_eq!(info.streams[0].read_path, zescope_sampler::ReadPath::Streamer);
    assert_eq!(info.imports, 0);
    collect_samples(&h, 5);
    h.send(Command::Shutdown);
    wait_for(&h, T, |e| matches!(e, Event::ShutDown).then_some(()));
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn fault_init_fails_then_refresh_reopens() {
    let sim = sim(|c| c.faults.init_fails = true);
    let h = sampler_on(&sim);
    let e = wait_for(&h, T, |e| if let Event::Error(e) = e { Some(e.clone()) } else { None });
    assert_eq!(e.kind, ErrorKind::Source);
    assert!(e.message.contains("ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE"), "{}", e.message);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    assert!(first_error(&sync(&h, 1)).unwrap().message.contains("no source is open"));
    sim.configure(|f, _| f.init_fails = false);
    h.send(Command::Refresh);
    wait_for(&h, T, |e| matches!(e, Event::Inventory(_)).then_some(()));
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    collect_samples(&h, 3);
    h.send(Command::Shutdown);
    wait_for(&h, T, |e| matches!(e, Event::ShutDown).then_some(()));
    assert!(sim.report().is_clean());
}

#[test]
fn fault_device_lost_mid_run_stops_it_with_a_clear_error() {
    let sim = sim(|c| c.faults.device_lost_after_samples = Some(30));
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    let e = wait_for(&h, T, |e| if let Event::Error(e) = e { Some(e.clone()) } else { None });
    assert_eq!(e.kind, ErrorKind::DeviceLost, "{}", e.message);
    assert!(e.message.contains("ZE_RESULT_ERROR_DEVICE_LOST") && e.hint.unwrap().contains("new run"));
    assert_eq!(sim.live_imports(), 0);
    sim.recover_device();
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    collect_samples(&h, 3);
    h.send(Command::Shutdown);
    wait_for(&h, T, |e| matches!(e, Event::ShutDown).then_some(()));
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn fault_disable_refused_is_reported_and_retried() {
    let sim = sim(|c| c.faults.disable_refused = true);
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    collect_samples(&h, 3);
    h.send(Command::Stop);
    let e = first_error(&sync(&h, 1)).expect("the refused disable is reported");
    assert_eq!(e.kind, ErrorKind::Teardown);
    assert!(e.message.contains("zetDeviceDisableMetricsExp"), "{}", e.message);
    assert_eq!(sim.live_imports(), 0, "everything before the disable was released");
    assert!(sim.report().violations.is_empty());
    sim.configure(|f, _| f.disable_refused = false);
    h.send(Command::Shutdown);
    wait_for(&h, T, |e| matches!(e, Event::ShutDown).then_some(()));
    assert!(sim.report().is_clean(), "retried at exit: {:?}", sim.report());
}

#[test]
fn quirk_invalid_argument_on_unknown_chains_still_samples() {
    let sim = sim(|c| c.quirks.invalid_argument_on_unknown_chain = true);
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    collect_samples(&h, 5);
    h.send(Command::Shutdown);
    wait_for(&h, T, |e| matches!(e, Event::ShutDown).then_some(()));
    assert!(sim.report().is_clean());
}

#[test]
fn quirk_unmappable_export_is_read_by_device_copy() {
    let sim = sim(|c| c.quirks.unmappable_export = true);
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    assert_eq!(info.streams[0].read_path, zescope_sampler::ReadPath::DeviceCopy);
    let batches = collect_samples(&h, 20);
    let history = sim.history("ComputeBasic");
    let exact = batches
        .iter()
        .flat_map(|b| b.values.chunks(5))
        .filter(|row| history.iter().any(|(_, v)| &v[..5] == *row))
        .count();
    assert!(exact >= 15, "copied snapshots are exact: {exact}");
    h.send(Command::Shutdown);
    wait_for(&h, T, |e| matches!(e, Event::ShutDown).then_some(()));
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn a_slow_consumer_never_blocks_the_sampler_and_drops_are_counted() {
    let sim = sim(|c| c.update_period_us = 100);
    let options = zescope_sampler::Options { event_capacity: 1, max_waiting_values: 500, ..Default::default() };
    let h = sampler_with(&sim, options);
    let mut cfg = run_config(&["ComputeBasic"]);
    cfg.interval = Duration::from_micros(100);
    h.send(Command::Start(cfg));
    std::thread::sleep(Duration::from_millis(400)); // nobody reads events meanwhile
    let stats =
        wait_for(&h, T, |e| if let Event::Health(s) = e { (s.dropped_samples > 0).then(|| s.clone()) } else { None });
    assert!(stats.dropped_batches > 0 && stats.ticks > 1000, "{stats:?}");
    h.send(Command::Shutdown);
    wait_for(&h, T, |e| matches!(e, Event::ShutDown).then_some(()));
    assert!(sim.report().is_clean());
}

/// A run driven on the caller's thread (`DirectRun`, as benchmarks and `doctor` use it) says a
/// disable the driver refuses even at the retry, instead of dropping the step silently.
#[test]
fn a_direct_run_says_what_its_teardown_left() {
    let sim = sim(|c| c.faults.disable_refused = true);
    let loader = zescope_ze::Loader::in_process(sim.in_process()).unwrap();
    let layouts = zescope_sampler::layout::LayoutSet::built_in();
    let mut run = zescope_sampler::DirectRun::start(&loader, &layouts, &run_config(&["ComputeBasic"])).unwrap();
    run.read().unwrap();
    let errors = run.stop();
    assert!(errors.iter().any(|e| e.contains("zetDeviceDisableMetricsExp")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("metrics stay enabled")), "the step left is said: {errors:?}");
    assert_eq!(sim.live_imports(), 0);
    assert!(sim.report().violations.is_empty(), "{}", sim.report().to_ron());
}

/// A device the sampler thread's run holds is held for the whole process (`claims`): a run
/// another thread starts on it fails at once, before any call on the device, and the sampler's
/// run reads on with a clean report; once the run stopped the device is free again.
#[test]
fn a_device_a_run_holds_is_touched_by_no_other_thread() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    wait_for(&h, T, |e| matches!(e, Event::Inventory(_)).then_some(()));
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    wait_for(&h, T, |e| matches!(e, Event::RunStarted(_)).then_some(()));
    let loader = zescope_ze::Loader::in_process(sim.in_process()).unwrap();
    let root = loader.drivers[0].devices().unwrap().remove(0);
    assert!(zescope_sampler::claims::held(&root), "the run's device is held");
    let npu = loader.drivers[0].devices().unwrap().remove(1);
    assert!(!zescope_sampler::claims::held(&npu), "the other device is not");
    let layouts = zescope_sampler::layout::LayoutSet::built_in();
    let mut streamer = run_config(&["RenderBasic"]);
    streamer.via = zescope_sampler::Via::Streamer;
    let err = zescope_sampler::DirectRun::start(&loader, &layouts, &streamer).err().expect("refused");
    assert!(err.message.contains("in use by another reader in this process"), "{err:?}");
    collect_samples(&h, 20);
    assert!(sim.report().violations.is_empty(), "{}", sim.report().to_ron());
    h.send(Command::Stop);
    wait_for(&h, T, |e| matches!(e, Event::RunStopped { .. }).then_some(()));
    assert!(!zescope_sampler::claims::held(&root), "released with the run");
    let run = zescope_sampler::DirectRun::start(&loader, &layouts, &streamer).expect("free again");
    assert!(run.stop().is_empty());
    shut_down(&h);
    assert!(sim.report().is_clean(), "{}", sim.report().to_ron());
}
