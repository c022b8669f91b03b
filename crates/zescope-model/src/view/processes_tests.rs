use std::cell::RefCell;
use std::collections::HashMap;

use super::*;
use zescope_sampler::processes::ProcessUse;

/// A host whose processes the test decides.
#[derive(Default)]
struct FakeHost(RefCell<HashMap<u32, (String, u64)>>);

impl FakeHost {
    fn set(&self, pid: u32, command: &str, start: u64) {
        self.0.borrow_mut().insert(pid, (command.to_owned(), start));
    }
}

impl Host for FakeHost {
    fn command(&self, pid: u32) -> Option<String> {
        self.0.borrow().get(&pid).map(|p| p.0.clone())
    }
    fn start_time(&self, pid: u32) -> Option<u64> {
        self.0.borrow().get(&pid).map(|p| p.1)
    }
}

fn snap(run: u64, t: i64, list: &[(u32, u64)]) -> ProcessSnapshot {
    let processes = list
        .iter()
        .map(|&(pid, mem)| ProcessUse { pid, memory_bytes: mem, shared_bytes: mem / 2, engines: 2 })
        .collect();
    ProcessSnapshot { run, target: 0, at_ns: t, processes }
}

#[test]
fn processes_come_and_go_and_a_pid_listed_again_is_another_process() {
    let host = FakeHost::default();
    let mut p = Processes::default();
    p.ingest(&snap(1, 1, &[(10, 100), (20, 200)]), "GPU", &host);
    p.ingest(&snap(1, 2, &[(10, 110), (20, 210)]), "GPU", &host);
    p.ingest(&snap(1, 3, &[(10, 120)]), "GPU", &host);
    p.ingest(&snap(1, 4, &[(10, 130), (20, 50)]), "GPU", &host);
    let pids: Vec<(u32, bool, usize)> = p.list().iter().map(|x| (x.pid, x.alive, x.samples.len())).collect();
    assert_eq!(pids, [(10, true, 4), (20, false, 2), (20, true, 1)], "pid 20 came back: a second process");
    assert_eq!(p.list()[1].last_ns(), 2, "the first one ended where it was last listed");
    assert_eq!(p.top_alive("GPU", 5).iter().map(|x| x.pid).collect::<Vec<_>>(), [10, 20]);
    assert_eq!(p.top_by_peak("GPU", 1)[0].pid, 20, "the first pid 20 peaked at 210");
    p.run_stopped(1);
    assert!(p.list().iter().all(|x| !x.alive));
    // A process listed when the run stopped and again at the next run's start goes on: one row
    // per pid, not one per run.
    p.ingest(&snap(2, 5, &[(10, 1)]), "GPU", &host);
    assert_eq!(p.list().len(), 3, "pid 10 goes on in run 2: {:?}", p.list());
    assert_eq!((p.list()[0].run, p.list()[0].alive, p.list()[0].samples.len()), (2, true, 5));
    p.ingest(&snap(2, 6, &[(10, 2), (20, 9)]), "GPU", &host);
    assert_eq!(p.list().len(), 4, "pid 20 was not listed at run 2's start: another process");
    assert_eq!(p.list()[3].run, 2);
}

#[test]
fn a_host_pid_started_anew_between_runs_is_another_process() {
    let host = FakeHost::default();
    host.set(7, "trainer", 1000);
    let mut p = Processes::default();
    p.ingest(&snap(1, 1, &[(7, 1)]), "GPU", &host);
    p.run_stopped(1);
    host.set(7, "other", 2000);
    p.ingest(&snap(2, 2, &[(7, 1)]), "GPU", &host);
    let sevens: Vec<&str> = p.on("GPU").map(|x| x.command_text()).collect();
    assert_eq!(sevens, ["trainer", "other"], "another start time: another process");
    p.run_stopped(2);
    p.ingest(&snap(3, 3, &[(7, 1)]), "GPU", &host);
    assert_eq!(p.list().len(), 2, "the same start time in run 3: the same process");
}

#[test]
fn a_host_pid_reused_between_two_snapshots_is_two_processes_and_commands_are_looked_up_once() {
    let host = FakeHost::default();
    host.set(7, "trainer", 1000);
    let mut p = Processes::default();
    p.ingest(&snap(1, 1, &[(7, 1), (99, 1)]), "GPU", &host);
    host.set(7, "renamed", 1000);
    p.ingest(&snap(1, 2, &[(7, 1), (99, 1)]), "GPU", &host);
    assert_eq!(p.list().len(), 2);
    assert_eq!(p.list()[0].command_text(), "trainer", "looked up when first listed");
    assert_eq!(p.list()[1].command_text(), NOT_ON_HOST);
    host.set(7, "other", 2000);
    p.ingest(&snap(1, 3, &[(7, 1), (99, 1)]), "GPU", &host);
    let sevens: Vec<(&str, bool)> = p.on("GPU").filter(|x| x.pid == 7).map(|x| (x.command_text(), x.alive)).collect();
    assert_eq!(sevens, [("trainer", false), ("other", true)], "another start time: another process");
}

#[test]
fn devices_are_kept_apart_and_columns_sort_both_ways() {
    let host = FakeHost::default();
    host.set(3, "b-prog", 1);
    host.set(4, "a-prog", 1);
    let mut p = Processes::default();
    p.ingest(&snap(1, 1, &[(3, 300), (4, 100), (5, 200)]), "GPU", &host);
    p.ingest(&snap(1, 1, &[(3, 7)]), "NPU", &host);
    assert_eq!(p.devices(), ["GPU", "NPU"]);
    assert_eq!(p.on("NPU").count(), 1);
    let rows = |c, asc| sorted(p.on("GPU").collect(), c, asc).iter().map(|x| x.pid).collect::<Vec<_>>();
    assert_eq!(rows(ProcessColumn::Memory, false), [3, 5, 4]);
    assert_eq!(rows(ProcessColumn::Memory, true), [4, 5, 3]);
    assert_eq!(rows(ProcessColumn::Pid, true), [3, 4, 5]);
    assert_eq!(rows(ProcessColumn::Command, true), [5, 4, 3], "(not on this host) sorts before names");
    assert_eq!(ProcessColumn::ALL.len(), 6);
}

#[test]
fn memory_stays_bounded_however_long_and_wide_a_run_is() {
    let host = FakeHost::default();
    let mut p = Processes::default();
    // More processes than kept: the earliest that ended go first.
    for k in 0..(MAX_PROCESSES as u32 + 10) {
        p.ingest(&snap(1, k as i64 + 1, &[(1, 1), (1000 + k, 1)]), "GPU", &host);
    }
    assert_eq!(p.list().len(), MAX_PROCESSES);
    assert_eq!(p.list()[0].pid, 1, "the one alive throughout stays");
    // More samples than kept: thinned, first and last kept.
    let mut q = Processes::default();
    for t in 0..(MAX_SAMPLES as i64 + 5) {
        q.ingest(&snap(1, t, &[(1, t as u64)]), "GPU", &host);
    }
    let one = &q.list()[0];
    assert!(one.samples.len() <= MAX_SAMPLES, "{}", one.samples.len());
    assert_eq!((one.first_ns(), one.last_ns()), (0, MAX_SAMPLES as i64 + 4));
    assert!(one.samples.windows(2).all(|w| w[0].t_ns < w[1].t_ns));
}

#[test]
fn this_hosts_own_process_is_found_in_proc() {
    let me = std::process::id();
    let name = ProcFs.command(me).expect("this test's own command");
    assert!(!name.is_empty() && !name.contains('\n'), "{name:?}");
    assert!(ProcFs.start_time(me).is_some_and(|t| t > 0));
    assert_eq!(ProcFs.command(u32::MAX), None, "no such pid");
}

#[test]
fn a_process_in_a_runs_first_snapshot_was_there_from_the_start_and_a_later_one_was_not() {
    let host = FakeHost::default();
    let mut p = Processes::default();
    p.ingest(&snap(1, 10, &[]), "NPU", &host);
    p.ingest(&snap(1, 10, &[(10, 100)]), "GPU", &host);
    p.ingest(&snap(1, 20, &[(10, 100), (20, 5)]), "GPU", &host);
    p.ingest(&snap(1, 20, &[(30, 7)]), "NPU", &host);
    let from_start = |pid: u32| p.listed_from_start(p.list().iter().find(|x| x.pid == pid).unwrap());
    assert!(from_start(10), "listed in the GPU's first snapshot");
    assert!(!from_start(20), "came a second later");
    assert!(!from_start(30), "the NPU's first snapshot listed nobody");
    // A file keeps processes only: the earliest of each device and run stands for its start.
    let restored = Processes::from_list(p.list().to_vec());
    let from_start = |pid: u32| restored.listed_from_start(restored.list().iter().find(|x| x.pid == pid).unwrap());
    assert!(from_start(10) && !from_start(20));
}
