//! The sampler's fourth way to read a group: the metric tracer and decoder on the simulated
//! driver's tracer-based group `KernelTrace` (its exported memory a ring of kernel events the
//! workload writes). Every decoded entry is a sample at its own time with the value the workload
//! wrote (ground truth: `Sim::trace_events`); the teardown leaves the driver's report clean, also
//! after a lost device; without the tracer's entry points one notice and the run goes on.

use std::collections::BTreeSet;

use zescope_sampler::layout::Kind;
use zescope_sampler::testing::*;
use zescope_sampler::{Command, ErrorKind, Event, ReadPath, RunInfo, SampleBatch, StopReason, Via};

fn started(h: &zescope_sampler::SamplerHandle) -> RunInfo {
    wait_for(h, T, |e| match e {
        Event::RunStarted(i) => Some(i.clone()),
        Event::Error(e) => panic!("run failed: {e:?}"),
        _ => None,
    })
}

/// Every batch of stream `stream` until the run stopped (its reason), the final read included.
fn until_stopped(h: &zescope_sampler::SamplerHandle, stream: usize, got: &mut Vec<SampleBatch>) -> StopReason {
    wait_for(h, T, |e| match e {
        Event::Samples(b) if b.stream == stream => {
            got.push(b.clone());
            None
        }
        Event::RunStopped { reason, .. } => Some(reason.clone()),
        _ => None,
    })
}

#[test]
fn every_traced_event_is_a_sample_at_its_own_time_with_the_value_written() {
    // A ring that holds the whole run, so every event the tracer read can be checked.
    let sim = sim(|c| c.tracer_ring_events = 1 << 20);
    let h = sampler_on(&sim);
    let inv = wait_for(&h, T, |e| if let Event::Inventory(i) = e { Some(i.clone()) } else { None });
    let kt = inv.devices[0].groups.iter().find(|g| g.name == "KernelTrace").expect("the tracer-based group");
    assert!(kt.tracer && kt.unavailable.is_none(), "{kt:?}");
    assert_eq!(kt.read_by(Via::Auto), Some(Via::Tracer));
    assert_eq!(kt.read_by(Via::Export), None, "its memory has no layout");

    h.send(Command::Start(run_config(&["KernelTrace"])));
    let info = started(&h);
    let s = &info.streams[0];
    assert_eq!(s.read_path, ReadPath::Tracer);
    assert_eq!(s.read_path.name(), "tracer");
    assert!(s.layout.starts_with("tracer ("), "{}", s.layout);
    let names: Vec<&str> = s.series.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["KernelStart", "KernelBytes", "KernelMarker", "KernelEnd"]);
    let kinds: Vec<Kind> = s.series.iter().map(|x| x.kind).collect();
    assert_eq!(
        kinds,
        [Kind::State, Kind::Cumulative, Kind::State, Kind::State],
        "events are states, a growing value a rate"
    );
    assert_eq!(s.series[1].wrap, Some(4_294_967_296.0), "a u32 running total wraps at 2^32");
    assert_eq!(s.series[2].unit, "events", "a timestamp-only event is counted");

    let mut got = collect_samples(&h, 400);
    // What the workload wrote before the stop was asked for (the ring, read while the group is
    // active) must all be in the samples.
    let events = sim.trace_events("KernelTrace");
    let written_before_stop = events.last().expect("events were written").seq;
    let last_written = events.last().expect("events were written").timestamp_ns;
    h.send(Command::Stop);
    assert_eq!(until_stopped(&h, 0, &mut got), StopReason::Requested);
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");

    let ts: Vec<i64> = got.iter().flat_map(|b| b.timestamps.clone()).collect();
    let rows: Vec<&[f64]> = got.iter().flat_map(|b| b.values.chunks(4)).collect();
    assert_eq!(ts.len(), rows.len());
    assert!(ts.windows(2).all(|w| w[1] > w[0]));
    // The host time of the first kernel start seen fixes the device → host offset; every other
    // sample must lie at its event's device time plus that same offset, to the ns.
    let first_start = rows.iter().position(|r| !r[0].is_nan()).expect("a kernel started");
    let kernel = rows[first_start][0] as u64;
    let start_event = events.iter().find(|e| e.metric == 0 && e.value == kernel).expect("the kernel's start event");
    let offset = ts[first_start] - start_event.timestamp_ns as i64;
    let mut checked = 0;
    for (i, row) in rows.iter().enumerate().skip(first_start + 1) {
        for col in [0usize, 1] {
            if row[col] == rows[i - 1][col] || row[col].is_nan() {
                continue;
            }
            let device_ts = (ts[i] - offset) as u64;
            if device_ts > last_written {
                continue; // written after the ring was read for the check
            }
            let e = events
                .iter()
                .find(|e| e.timestamp_ns == device_ts && usize::from(e.metric) == col)
                .unwrap_or_else(|| panic!("no event of metric {col} at device time {device_ts} (sample {i})"));
            assert_eq!(row[col], e.value as f64, "sample {i}: the value written at that time");
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} changes checked");
    // KernelMarker (EVENT_EXP_TIMESTAMP: a time, no value) counts its events: from one sample
    // to the next its column steps up by the markers written at that time, never to a value
    // the workload did not write.
    let marker = 2;
    let mut counted = 0;
    for (i, row) in rows.iter().enumerate().skip(first_start + 1) {
        let device_ts = (ts[i] - offset) as u64;
        if device_ts > last_written {
            continue;
        }
        let was = if rows[i - 1][marker].is_nan() { 0.0 } else { rows[i - 1][marker] };
        let now = if row[marker].is_nan() { 0.0 } else { row[marker] };
        let written = events.iter().filter(|e| e.timestamp_ns == device_ts && usize::from(e.metric) == marker).count();
        assert_eq!(now - was, written as f64, "sample {i}: the markers written at that time");
        counted += written;
    }
    assert!(counted > 10, "{counted} markers counted");
    // One sample per distinct event time from the first sample to the event written before the
    // stop (the last read at the stop kept them).
    let first_dev = (ts[first_start] - offset) as u64;
    let want: BTreeSet<u64> = events
        .iter()
        .filter(|e| e.timestamp_ns >= first_dev && e.seq <= written_before_stop)
        .map(|e| e.timestamp_ns)
        .collect();
    let have: BTreeSet<u64> = ts[first_start..].iter().map(|&t| (t - offset) as u64).collect();
    let missing: Vec<&u64> = want.difference(&have).take(5).collect();
    assert!(missing.is_empty(), "{} event times have no sample, e.g. {missing:?}", want.difference(&have).count());
    shut_down(&h);
}

#[test]
fn without_the_tracer_entry_points_one_notice_and_the_run_goes_on() {
    let sim = sim(|c| c.empty_entry_points = vec!["zetMetricTracerCreateExp".into()]);
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic", "KernelTrace"])));
    let info = started(&h);
    let off: Vec<&String> = info.notices.iter().filter(|n| n.contains("metric tracer")).collect();
    assert_eq!(off.len(), 1, "{:?}", info.notices);
    assert!(off[0].contains("zetMetricTracerCreateExp") && off[0].contains("KernelTrace"), "{off:?}");
    assert!(off[0].contains("is not read, the rest of the run goes on"), "{off:?}");
    assert_eq!(info.streams.len(), 1, "KernelTrace is left out");
    assert_eq!(info.streams[0].group, "ComputeBasic");
    collect_samples(&h, 20);
    h.send(Command::Stop);
    let mut rest = Vec::new();
    assert_eq!(until_stopped(&h, 0, &mut rest), StopReason::Requested);
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");

    // Alone, the tracer-based group leaves nothing to read: a clear error, nothing left behind.
    h.send(Command::Start(run_config(&["KernelTrace"])));
    let e = wait_for(&h, T, |e| if let Event::Error(e) = e { Some(e.clone()) } else { None });
    assert_eq!(e.kind, ErrorKind::Config, "{e:?}");
    assert!(e.message.contains("metric tracer is not offered"), "{e:?}");
    sync(&h, 1);
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
    shut_down(&h);
}

#[test]
fn via_chooses_the_tracer_only_for_tracer_based_groups() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    for (group, via, expect) in [
        ("KernelTrace", Via::Export, "read with the metric tracer"),
        ("KernelTrace", Via::Streamer, "read with the metric tracer"),
        ("ComputeBasic", Via::Tracer, "not tracer-based"),
    ] {
        let mut cfg = run_config(&[group]);
        cfg.via = via;
        h.send(Command::Start(cfg));
        let e = wait_for(&h, T, |e| if let Event::Error(e) = e { Some(e.clone()) } else { None });
        assert!(e.message.contains(expect), "{group} {via:?}: {e:?}");
    }
    let mut cfg = run_config(&["KernelTrace"]);
    cfg.via = Via::Tracer;
    h.send(Command::Start(cfg));
    assert_eq!(started(&h).streams[0].read_path, ReadPath::Tracer);
    h.send(Command::Stop);
    sync(&h, 2);
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
    shut_down(&h);
}

#[test]
fn a_device_lost_while_tracing_ends_the_run_through_the_teardown_in_order() {
    let sim = sim(|c| c.faults.device_lost_after_samples = Some(30));
    let h = sampler_on(&sim);
    h.send(Command::Start(run_config(&["ComputeBasic", "KernelTrace"])));
    let info = started(&h);
    assert_eq!(info.streams[1].read_path, ReadPath::Tracer);
    let mut stopped = false;
    let e = wait_for(&h, T, |e| match e {
        Event::RunStopped { reason, .. } => {
            stopped = *reason == StopReason::Error;
            None
        }
        Event::Error(e) if e.kind != ErrorKind::Teardown => Some(e.clone()),
        _ => None,
    });
    assert_eq!(e.kind, ErrorKind::DeviceLost, "{e:?}");
    sync(&h, 1);
    assert!(stopped, "the run ended with the error");
    let r = sim.report();
    assert!(r.violations.is_empty(), "nothing torn down out of order: {r:?}");
    assert!(r.leaks.is_empty(), "{r:?}");
    shut_down(&h);
}

/// Each fault of a run's setup and of the tracer, alone, on a run of the tracer-based group and
/// of a group read from exported memory: the start fails with a message naming the call the
/// driver refused (or, for reads that fail, the run stops with one), whatever was set up is
/// torn down in order, and at the exit nothing is left behind.
#[test]
fn each_setup_and_tracer_fault_ends_in_a_named_error_and_a_clean_teardown() {
    use ze_sim::testing::faults::{Fault, SETUP_AND_TRACER};
    for &fault in SETUP_AND_TRACER {
        let sim = sim(|c| fault.apply(c));
        let h = sampler_on(&sim);
        wait_for(&h, T, |e| matches!(e, Event::Inventory(_)).then_some(()));
        let mut cfg = run_config(&["KernelTrace", "ComputeBasic"]);
        cfg.interval = std::time::Duration::from_millis(2);
        h.send(Command::Start(cfg));
        let call = match fault {
            Fault::TracerCreateFails => "zetMetricTracerCreateExp",
            Fault::DecoderCreateFails => "zetMetricDecoderCreateExp",
            Fault::TracerEnableFails => "zetMetricTracerEnableExp",
            Fault::TracerReadFails => "zetMetricTracerReadDataExp",
            Fault::ActivateFails => "zetContextActivateMetricGroups",
            Fault::EnableMetricsFails => "zetDeviceEnableMetricsExp",
            _ => unreachable!("{fault:?}"),
        };
        // What is said: an error, or the run's notices (a group the driver refused is left out
        // of the run, which goes on with the others).
        let said = wait_for(&h, T, |e| match e {
            Event::Error(e) => Some(format!("{e:?}")),
            Event::RunStarted(i) if !i.notices.is_empty() => Some(i.notices.join("\n")),
            _ => None,
        });
        assert!(said.contains(call), "{fault:?}: {said}");
        assert!(sim.report().violations.is_empty(), "{fault:?}: {}", sim.report().to_ron());
        shut_down(&h);
        let r = sim.report();
        assert!(r.is_clean(), "{fault:?}: {}", r.to_ron());
    }
}
