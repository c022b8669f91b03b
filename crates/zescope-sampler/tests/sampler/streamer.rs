//! The sampler's second way to read a group: the time-based metric streamer of the in-process
//! simulated driver, beside exported memory in the same run, with `via` choosing, DROPPED_DATA
//! counted, refused opens explained, and the one teardown leaving the driver's report clean.

use std::time::Duration;

use zescope_sampler::testing::*;
use zescope_sampler::{Command, ErrorKind, Event, StopReason, Via};

fn started(h: &zescope_sampler::SamplerHandle) -> zescope_sampler::RunInfo {
    wait_for(h, T, |e| match e {
        Event::RunStarted(i) => Some(i.clone()),
        Event::Error(e) => panic!("run failed: {e:?}"),
        _ => None,
    })
}

#[test]
fn a_streamed_and_an_exported_group_run_together_and_tear_down_clean() {
    let sim = sim(|c| c.unreadable_group = true);
    let h = sampler_on(&sim);
    let inv = wait_for(&h, T, |e| if let Event::Inventory(i) = e { Some(i.clone()) } else { None });
    let gpu = &inv.devices[0];
    let render = gpu.groups.iter().find(|g| g.name == "RenderBasic").unwrap();
    assert!(render.streamable && render.unavailable.is_none(), "{render:?}");
    assert_eq!(render.read_by(Via::Auto), Some(Via::Streamer));
    assert_eq!(render.read_by(Via::Export), None);
    // Exported and time-based: auto reads its memory, `--via streamer` its reports.
    let compute = gpu.groups.iter().find(|g| g.name == "ComputeBasic").unwrap();
    assert_eq!(compute.read_by(Via::Auto), Some(Via::Export));
    assert_eq!(compute.read_by(Via::Streamer), Some(Via::Streamer));
    // The IP-sampling group is time-based only.
    let eu = gpu.groups.iter().find(|g| g.name == "EuStallSampling").unwrap();
    assert_eq!(eu.read_by(Via::Auto), Some(Via::Streamer), "{eu:?}");
    let none = gpu.groups.iter().find(|g| g.name == "Unreadable").unwrap();
    assert!(none.unavailable.as_deref().unwrap().contains("no time-based sampling"), "{none:?}");

    let mut cfg = run_config(&["ComputeBasic", "RenderBasic"]);
    cfg.interval = Duration::from_millis(10);
    h.send(Command::Start(cfg));
    let info = started(&h);
    assert_eq!(info.streams[0].read_path, zescope_sampler::ReadPath::Mapped);
    let s = &info.streams[1];
    assert_eq!(s.read_path, zescope_sampler::ReadPath::Streamer);
    // 1 ms asked (ten a 10 ms interval), 16 ms of them per notification (`NOTIFY_SPAN`).
    assert_eq!(s.layout, "streamer (1.28 ms, 16 reports per notification)", "period and count the driver granted");
    let names: Vec<&str> = s.series.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["RenderBusyTime", "RenderBusyCycles", "RenderFrequency", "RenderUtilization", "L3BytesRead"]);
    let units: Vec<&str> = s.series.iter().map(|x| x.unit.as_str()).collect();
    assert_eq!(units, ["ns", "cycles", "MHz", "%", "bytes"], "busy time and counts running totals, levels as they are");
    let mut streamed = Vec::new();
    let mut exported = 0;
    wait_for(&h, T, |e| {
        if let Event::Samples(b) = e {
            if b.stream == 1 {
                streamed.push(b.clone());
            } else {
                exported += b.timestamps.len();
            }
        }
        (streamed.iter().map(|b| b.timestamps.len()).sum::<usize>() >= 300 && exported > 10).then_some(())
    });
    let ts: Vec<i64> = streamed.iter().flat_map(|b| b.timestamps.clone()).collect();
    let steps: Vec<i64> = ts.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(steps.iter().all(|&d| d == 1_280_000), "one sample per report, stamped with the report's time");
    let now = zescope_sampler::monotonic_ns();
    assert!((now - ts.last().unwrap()).abs() < 1_000_000_000, "report times are on the host clock");
    let util: Vec<f64> = streamed.iter().flat_map(|b| b.values.chunks(5).map(|r| r[3]).collect::<Vec<_>>()).collect();
    assert!(util.iter().all(|u| (0.0..=100.0).contains(u)), "utilisation is a percentage");
    let busy: Vec<f64> = streamed.iter().flat_map(|b| b.values.chunks(5).map(|r| r[0]).collect::<Vec<_>>()).collect();
    let added: Vec<f64> = busy.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        added.iter().all(|b| (0.0..=1_280_000.0).contains(b)),
        "each report adds its busy ns, at most the report's 1.28 ms: {added:?}"
    );
    h.send(Command::Stop);
    let reason =
        wait_for(&h, T, |e| if let Event::RunStopped { reason, .. } = e { Some(reason.clone()) } else { None });
    assert_eq!(reason, StopReason::Requested);
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
    shut_down(&h);
}

#[test]
fn via_chooses_the_way_and_explains_a_group_it_cannot_read() {
    let sim = sim(|c| c.unreadable_group = true);
    let h = sampler_on(&sim);
    for (groups, via, expect) in [
        (&["RenderBasic"][..], Via::Export, "exports no memory"),
        (&["Unreadable"][..], Via::Streamer, "no time-based sampling"),
        (&["Unreadable"][..], Via::Auto, "exports no memory, and it has no time-based sampling"),
    ] {
        let mut cfg = run_config(groups);
        cfg.via = via;
        h.send(Command::Start(cfg));
        let e = wait_for(&h, T, |e| if let Event::Error(e) = e { Some(e.clone()) } else { None });
        assert!(e.message.contains(expect), "{via:?} {groups:?}: {e:?}");
    }
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
    shut_down(&h);
}

/// A refused open: the stream held elsewhere (HANDLE_OBJECT_IN_USE) leaves the group out of a
/// run that reads something else, with a notice, and ends a run it was all of, with a hint; a
/// denied one (permissions) ends the run, saying how to allow it.
#[test]
fn a_refused_open_says_why_and_how_to_fix_it() {
    for (groups, busy, kind, hint) in [
        (&["RenderBasic"][..], true, ErrorKind::Driver, "another process"),
        (&["ComputeBasic", "RenderBasic"][..], false, ErrorKind::Permission, "perf_stream_paranoid"),
    ] {
        let sim = sim(|c| {
            c.faults.streamer_open_busy = busy;
            c.faults.streamer_open_denied = !busy;
        });
        let h = sampler_on(&sim);
        h.send(Command::Start(run_config(groups)));
        let e = wait_for(&h, T, |e| if let Event::Error(e) = e { Some(e.clone()) } else { None });
        assert_eq!(e.kind, kind, "{e:?}");
        assert!(e.hint.as_deref().unwrap_or("").contains(hint), "{e:?}");
        sync(&h, 1);
        let r = sim.report();
        assert!(r.is_clean(), "everything set up before the refusal is released: {r:?}");
        shut_down(&h);
    }
    // Held elsewhere, beside an exported group: left out, the run goes on with the other.
    let sim = sim(|c| c.faults.streamer_open_busy = true);
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic", "RenderBasic"])));
    let info = started(&h);
    let groups: Vec<&str> = info.streams.iter().map(|s| s.group.as_str()).collect();
    assert_eq!(groups, ["ComputeBasic"], "the exported group reads on");
    let said: Vec<&String> = info.notices.iter().filter(|n| n.contains("RenderBasic is left out")).collect();
    assert_eq!(said.len(), 1, "one notice: {:?}", info.notices);
    assert!(said[0].contains("another process"), "{}", said[0]);
    wait_for(&h, T, |e| matches!(e, Event::Samples(_)).then_some(()));
    h.send(Command::Stop);
    wait_for(&h, T, |e| matches!(e, Event::RunStopped { .. }).then_some(()));
    assert!(sim.report().is_clean(), "{:?}", sim.report());
    shut_down(&h);
}

#[test]
fn dropped_reports_are_counted_and_the_run_goes_on() {
    let sim = sim(|c| c.streamer_buffer_reports = 16);
    // Read on every 100 ms tick, not when the driver's notification says 8 reports wait (which
    // keeps a 16-report buffer from overflowing unless the sampler is late): more than 16 reports
    // per read, so the driver drops some at every read, whatever the machine's load.
    let h = sampler_with(&sim, zescope_sampler::Options { poll_streamer: true, ..Default::default() });
    let mut cfg = run_config(&["RenderBasic"]);
    cfg.interval = Duration::from_millis(100);
    h.send(Command::Start(cfg));
    started(&h);
    let stats = wait_for(&h, T, |e| match e {
        Event::Health(s) if s.dropped_reports > 0 => Some(s.clone()),
        _ => None,
    });
    assert!(stats.dropped_reports >= 1);
    collect_samples(&h, 20);
    h.send(Command::Stop);
    wait_for(&h, T, |e| matches!(e, Event::RunStopped { .. }).then_some(()));
    assert!(sim.report().is_clean(), "{:?}", sim.report());
    shut_down(&h);
}

#[test]
fn a_device_lost_mid_stream_ends_the_run_through_the_teardown() {
    let sim = sim(|c| c.faults.device_lost_after_reports = Some(40));
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["RenderBasic"])));
    started(&h);
    let mut stopped = false;
    let e = wait_for(&h, T, |e| match e {
        Event::RunStopped { reason, .. } => {
            stopped = *reason == StopReason::Error;
            None
        }
        Event::Error(e) => Some(e.clone()),
        _ => None,
    });
    assert_eq!(e.kind, ErrorKind::DeviceLost, "{e:?}");
    assert!(stopped, "the run ended with the error");
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
    shut_down(&h);
}

/// The samples of stream 1 once `want` of them arrived.
fn streamed(h: &zescope_sampler::SamplerHandle, want: usize) -> Vec<zescope_sampler::SampleBatch> {
    let mut got = Vec::new();
    wait_for(h, T, |e| {
        if let Event::Samples(b) = e
            && b.stream == 0
        {
            got.push(b.clone());
        }
        (got.iter().map(|b| b.timestamps.len()).sum::<usize>() >= want).then_some(())
    });
    got
}

/// RenderBasic's 1.28 ms reports (a 10 ms interval) on a simulated driver configured by
/// `quirks` until `want` have come: every step between two reports' times that is off the
/// period by more than `slack_ns`. The run starts without a notice, its last report is on the
/// host clock, and it tears down clean.
fn report_steps_off(quirks: impl FnOnce(&mut ze_sim::config::Quirks), want: usize, slack_ns: i64) -> Vec<i64> {
    let sim = sim(|c| quirks(&mut c.quirks));
    let h = sampler_on(&sim);
    let mut cfg = run_config(&["RenderBasic"]);
    cfg.interval = Duration::from_millis(10);
    h.send(Command::Start(cfg));
    let info = started(&h);
    assert!(info.notices.is_empty(), "{:?}", info.notices);
    let ts: Vec<i64> = streamed(&h, want).iter().flat_map(|b| b.timestamps.clone()).collect();
    let off = ts.windows(2).map(|w| w[1] - w[0] - 1_280_000).filter(|d| d.abs() > slack_ns).collect();
    let now = zescope_sampler::monotonic_ns();
    assert!((now - ts.last().unwrap()).abs() < 1_000_000_000, "report times are on the host clock");
    h.send(Command::Stop);
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
    off
}

#[test]
fn report_times_map_through_a_ticking_wrapping_timer() {
    // An Intel-like global timer: 19.2 MHz ticks with 24 valid bits wraps every 874 ms; the
    // report's timestamp metric is in ns of those ticks. Mapped through the tick pair, every
    // report lands one period after the one before, across the wraps; placed back from the read
    // time instead, the steps between reads would be off by up to a period. 1.28 ms reports for
    // 2.3 s: the timer wraps twice.
    let quirks = |q: &mut ze_sim::config::Quirks| {
        q.timer_hz = Some(19_200_000);
        q.timestamp_valid_bits = Some(24);
    };
    let off = report_steps_off(quirks, 1_800, 5_000);
    assert!(off.is_empty(), "steps off the 1.28 ms period by more than 5 µs: {off:?}");
}

#[test]
fn report_times_of_a_timer_drifting_from_the_host_clock_have_no_step_where_a_new_pair_is_read() {
    // The device's timer 300 ppm fast against the host's clock: a second after a pair, a report
    // mapped through it is 300 µs ahead. Jumping to the next pair would put those 300 µs into
    // one step between two reports (their rate, over a period a quarter short, a quarter high);
    // the mapping's slope changes instead. 1.28 ms reports for 2.6 s: pairs at the start, a
    // second on and two seconds on. Until the rate is measured a step is the device's period
    // (384 ns short), then the offset is made up over a second (384 ns long for each second the
    // first new pair came after the first: reads held up on a loaded machine make that more than
    // one).
    let off = report_steps_off(|q| q.timer_drift_ppm = Some(300), 2_000, 3_000);
    assert!(off.is_empty(), "steps off the 1.28 ms period by more than 3 µs: {off:?}");
}

#[test]
fn a_root_device_with_two_sub_devices_gives_one_series_set_each() {
    let sim = sim(|c| {
        let mut tile = c.devices[0].sub_devices[0].clone();
        tile.name = "ze-sim GPU tile 1".into();
        c.devices[0].sub_devices.push(tile);
    });
    let h = sampler_on(&sim);
    let mut cfg = run_config(&["RenderBasic"]);
    cfg.interval = Duration::from_millis(10);
    cfg.targets[0].metrics = vec!["RenderFrequency".into(), "RenderBusyTime".into()];
    h.send(Command::Start(cfg));
    let info = started(&h);
    let names: Vec<&str> = info.streams[0].series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "RenderBusyTime (sub-device 0)",
            "RenderFrequency (sub-device 0)",
            "RenderBusyTime (sub-device 1)",
            "RenderFrequency (sub-device 1)"
        ]
    );
    assert!(info.notices.is_empty(), "{:?}", info.notices);
    let batches = streamed(&h, 100);
    for b in &batches {
        for row in b.values.chunks(4) {
            assert!(row.iter().all(|v| v.is_finite()), "every set is decoded: {row:?}");
            // The simulated driver's second sub-device reads 3/4 of the device's frequency.
            assert!((row[3] - 0.75 * row[1]).abs() <= 1e-9 * row[1].abs(), "{row:?}");
        }
    }
    h.send(Command::Stop);
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// The IP-sampling group (time-based only, no timestamp metric: reports are placed by their
/// period) streams the sampled instruction pointer and the stall counts, and tears down clean.
#[test]
fn the_ip_sampling_group_streams_instruction_pointers_and_stall_counts() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    let mut cfg = run_config(&["EuStallSampling"]);
    cfg.interval = Duration::from_millis(10);
    h.send(Command::Start(cfg));
    let info = started(&h);
    let s = &info.streams[0];
    assert_eq!(s.read_path, zescope_sampler::ReadPath::Streamer);
    let names: Vec<&str> = s.series.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names.len(), 10, "{names:?}");
    assert_eq!(names[0], "IP");
    let mut rows = Vec::new();
    wait_for(&h, T, |e| {
        if let Event::Samples(b) = e {
            rows.extend(b.values.chunks(10).map(|r| r.to_vec()));
        }
        (rows.len() >= 50).then_some(())
    });
    assert!(
        rows.iter().all(|r| (0x1000..0x1400).contains(&(r[0] as u64)) && (r[0] as u64).is_multiple_of(16)),
        "each sample an instruction of the kernel"
    );
    assert!(rows.iter().any(|r| r[1] > 0.0), "samples taken while active");
    h.send(Command::Stop);
    wait_for(&h, T, |e| matches!(e, Event::RunStopped { .. }).then_some(()));
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
    shut_down(&h);
}

/// A new interval reaches a streamed group: the run starts again with its streamer opened at the
/// new period (ten reports an interval), where it kept the old period while the window said the
/// new rate was requested. A run of exported memory alone keeps going at the new interval.
#[test]
fn a_new_interval_reopens_the_streamer_at_its_period_and_leaves_an_exported_run_going() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    let mut cfg = run_config(&["ComputeBasic", "RenderBasic"]);
    cfg.interval = Duration::from_millis(10);
    h.send(Command::Start(cfg));
    let first = started(&h);
    assert_eq!(first.streams[1].layout, "streamer (1.28 ms, 16 reports per notification)");
    h.send(Command::SetInterval(Duration::from_millis(1)));
    let reason =
        wait_for(&h, T, |e| if let Event::RunStopped { reason, .. } = e { Some(reason.clone()) } else { None });
    assert_eq!(reason, StopReason::Replaced);
    let again = started(&h);
    assert!(again.run > first.run, "a new run");
    assert_eq!(again.config.interval, Duration::from_millis(1));
    assert_eq!(again.config.targets, first.config.targets, "the same groups");
    assert_eq!(again.streams[1].layout, "streamer (160 µs, 160 reports per notification)", "the new period");
    let mut ts = Vec::new();
    wait_for(&h, T, |e| {
        if let Event::Samples(b) = e
            && (b.run, b.stream) == (again.run, 1)
        {
            ts.extend_from_slice(&b.timestamps);
        }
        (ts.len() >= 200).then_some(())
    });
    assert!(ts.windows(2).all(|w| w[1] - w[0] == 160_000), "reports 160 µs apart");
    // Exported memory alone: the same run, at the new interval.
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    let exported = started(&h);
    h.send(Command::SetInterval(Duration::from_millis(2)));
    h.send(Command::Sync(9));
    wait_for(&h, T, |e| match e {
        Event::RunStopped { .. } | Event::RunStarted(_) => panic!("an exported run is not started again: {e:?}"),
        Event::Synced(9) => Some(()),
        _ => None,
    });
    h.send(Command::Stop);
    let stopped = wait_for(&h, T, |e| if let Event::RunStopped { run, .. } = e { Some(*run) } else { None });
    assert_eq!(stopped, exported.run);
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
    shut_down(&h);
}
