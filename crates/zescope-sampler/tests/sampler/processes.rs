//! The processes using each device, read by the sampler thread in runs that read telemetry
//! (`zesDeviceProcessesGetState`) on the simulated driver's schedule: snapshots at most once a
//! second per device on the samples' clock; processes that come and go; a pid that leaves and is
//! listed again later for another process (two processes, which the snapshots alone show as two
//! separate spans with different engines); the application itself with the memory it imported;
//! no snapshots without telemetry; a driver without the call or whose call fails: one notice,
//! and the run goes on.

use std::time::{Duration, Instant};

use ze_sim::config::{ProcessesConfig, SysmanPiece};
use zescope_sampler::processes::ProcessSnapshot;
use zescope_sampler::testing::*;
use zescope_sampler::{Command, DevicePath, Event, RunConfig, Target, monotonic_ns};

const GPU: DevicePath = DevicePath { driver: 0, device: 0, sub_device: None };
const NPU: DevicePath = DevicePath { driver: 0, device: 1, sub_device: None };

fn with_telemetry(targets: Vec<Target>, telemetry: bool) -> RunConfig {
    RunConfig { targets, interval: Duration::from_millis(10), via: Default::default(), telemetry }
}

/// Every process snapshot the sampler sends until `done` says enough (within `within`); with the
/// notices seen.
fn snapshots(
    h: &zescope_sampler::SamplerHandle,
    within: Duration,
    mut done: impl FnMut(&[ProcessSnapshot]) -> bool,
) -> (Vec<ProcessSnapshot>, Vec<String>) {
    let (mut got, mut notices) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + within;
    while Instant::now() < deadline && !done(&got) {
        match h.events.recv_timeout(Duration::from_millis(100)) {
            Ok(Event::Processes(p)) => got.push(p),
            Ok(Event::Notice { message, .. }) => notices.push(message),
            Ok(Event::RunStarted(info)) => notices.extend(info.notices),
            Ok(Event::Error(e)) => panic!("{e:?}"),
            _ => {}
        }
    }
    (got, notices)
}

fn listed(s: &ProcessSnapshot, pid: u32) -> Option<&zescope_sampler::processes::ProcessUse> {
    s.processes.iter().find(|p| p.pid == pid)
}

#[test]
fn processes_come_and_go_once_a_second_and_a_pid_comes_back_as_another_process() {
    let schedule = ProcessesConfig { exit_at_ms: 1500, reuse_at_ms: 3000, job_period_ms: 0, include_self: true };
    let sim = sim(|c| c.sysman.processes = schedule);
    let h = sampler_on(&sim);
    let t0 = monotonic_ns();
    h.send(Command::Start(with_telemetry(vec![Target::new(GPU, vec!["ComputeBasic".into()])], true)));
    // Until a snapshot lists three processes again after one listed two (the media process gone).
    let (snaps, notices) = snapshots(&h, T, |s| {
        s.iter().position(|x| x.processes.len() == 2).is_some_and(|i| s[i..].iter().any(|x| x.processes.len() >= 3))
    });
    assert!(notices.is_empty(), "{notices:?}");
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());

    assert!(snaps.len() >= 3, "{snaps:#?}");
    assert!(snaps.iter().all(|s| s.target == 0 && s.run == snaps[0].run));
    // On the samples' clock, at most once a second.
    assert!(snaps[0].at_ns >= t0 && snaps.last().unwrap().at_ns <= monotonic_ns());
    for w in snaps.windows(2) {
        assert!(w[1].at_ns - w[0].at_ns >= 990_000_000, "{} ns apart", w[1].at_ns - w[0].at_ns);
    }
    // The application itself, with the exported memory it imported as shared memory.
    let me = std::process::id();
    assert!(snaps.iter().all(|s| listed(s, me).is_some_and(|p| p.shared_bytes >= 4096)), "{snaps:#?}");
    // The long-lived workload throughout; the media process listed, then gone, then its pid
    // listed again for a process of another kind: two spans, two processes.
    let main = snaps[0].processes[0].pid;
    assert!(snaps.iter().all(|s| listed(s, main).is_some()));
    let media = snaps[0].processes[1];
    assert_ne!(media.pid, me);
    let present: Vec<bool> = snaps.iter().map(|s| listed(s, media.pid).is_some()).collect();
    let gone = present.iter().position(|p| !p).expect("the media process exits");
    let back = present[gone..].iter().position(|p| *p).expect("its pid is listed again") + gone;
    assert!(present[..gone].iter().all(|p| *p), "{present:?}");
    let before = listed(&snaps[gone - 1], media.pid).unwrap();
    let after = listed(&snaps[back], media.pid).unwrap();
    assert_eq!(before.engines, media.engines);
    assert_ne!(after.engines, before.engines, "another process: {before:?} then {after:?}");
    assert_ne!(after.memory_bytes, before.memory_bytes);
}

#[test]
fn every_device_of_the_run_is_listed_and_only_with_telemetry() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    let both = vec![Target::new(GPU, vec!["ComputeBasic".into()]), Target::new(NPU, vec!["NpuActivity".into()])];
    h.send(Command::Start(with_telemetry(both.clone(), false)));
    let (none, _) = snapshots(&h, Duration::from_millis(1500), |_| false);
    assert!(none.is_empty(), "no telemetry, no process list: {none:?}");
    h.send(Command::Start(with_telemetry(both, true)));
    let (snaps, _) = snapshots(&h, T, |s| s.iter().any(|x| x.target == 0) && s.iter().any(|x| x.target == 1));
    let npu = snaps.iter().find(|s| s.target == 1).unwrap();
    let gpu = snaps.iter().find(|s| s.target == 0).unwrap();
    assert!(npu.processes.iter().all(|p| gpu.processes.iter().all(|q| q.pid != p.pid || p.pid == std::process::id())));
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn a_driver_without_the_list_or_failing_it_gets_one_notice_and_the_run_goes_on() {
    for (empty, failing) in [(true, false), (false, true)] {
        let sim = sim(|c| {
            if empty {
                c.empty_entry_points = vec!["zesDeviceProcessesGetState".into()];
            }
            if failing {
                c.sysman.failing = vec![SysmanPiece::Processes];
            }
        });
        let h = sampler_on(&sim);
        h.send(Command::Start(with_telemetry(vec![Target::new(GPU, vec!["ComputeBasic".into()])], true)));
        let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
        let said: Vec<&String> = info.notices.iter().filter(|n| n.contains("process list")).collect();
        assert_eq!(said.len(), 1, "{:?}", info.notices);
        let want = if empty { "does not offer zesDeviceProcessesGetState" } else { "ZE_RESULT_ERROR_NOT_AVAILABLE" };
        assert!(said[0].contains(want), "{}", said[0]);
        assert!(info.streams.iter().any(|s| s.group == "Telemetry"), "the rest of the telemetry is read");
        let batches = collect_samples(&h, 100);
        assert!(batches.iter().all(|b| b.run == info.run));
        let (snaps, notices) = snapshots(&h, Duration::from_millis(1200), |_| false);
        assert!(snaps.is_empty() && notices.iter().all(|n| !n.contains("process list")), "{snaps:?} {notices:?}");
        shut_down(&h);
        assert!(sim.report().is_clean(), "{:?}", sim.report());
    }
}
