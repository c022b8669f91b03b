//! The window on drivers that behave as the public ones do (ze-sim's profiles, in-process): a run
//! of a streamed group at a 1 ms interval starts and keeps going — on the NPU driver at its 1 ms
//! period floor, on compute-runtime while its energy counter falls to ~200 J and comes back — and
//! each notice is in the run's list once, counted once in the status line. On the NPU driver,
//! which allows one open streamer per device, a second streamed group is left out with one
//! notice in that list and the first streams on (issue 41).

use std::time::{Duration, Instant};

use crate::support::pump;

use egui_kittest::kittest::Queryable;
use ze_sim::config::{MetricsEnable, Profile};
use zescope_window::ZescopeApp;

fn notices(a: &ZescopeApp) -> Vec<String> {
    a.state.ingest.run.as_ref().map_or_else(Vec::new, |r| r.info.notices.clone())
}

/// Runs `groups` (only) at a 1 ms interval on a driver of `profile` for 2.5 s after the driver
/// started; checks the run kept going and returns its notices.
fn run(profile: Profile, groups: &[&str]) -> Vec<String> {
    let born = Instant::now();
    let sim = crate::support::sim(|c| {
        c.profile = Some(profile);
        c.devices = profile.devices();
        c.metrics = MetricsEnable::Always;
    });
    let mut h = crate::support::harness_on(&sim);
    h.step();
    {
        let sel = &mut h.state_mut().state.selection;
        sel.groups.clear();
        sel.groups.extend(groups.iter().map(|g| g.to_string()));
        sel.interval = Duration::from_millis(1);
    }
    h.step();
    h.get_by_label("Start").click();
    pump(&mut h, "the run's samples", |a| a.state.ingest.run.is_some() && a.state.ingest.samples_total > 200);
    let mut before = h.state().state.ingest.samples_total;
    while born.elapsed() < Duration::from_millis(2500) {
        std::thread::sleep(Duration::from_millis(100));
        h.step();
        let a = h.state();
        assert!(a.state.ingest.run.is_some(), "the run keeps going");
        assert!(a.state.ingest.samples_total > before, "samples keep coming");
        before = a.state.ingest.samples_total;
    }
    let n = notices(h.state());
    let shown = format!("{} notice{}", n.len(), if n.len() == 1 { "" } else { "s" });
    h.get_by_label(&shown);
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
    n
}

fn once(n: &[String], part: &str) {
    assert_eq!(n.iter().filter(|m| m.contains(part)).count(), 1, "{part:?} once in {n:#?}");
}

#[test]
fn on_the_npu_driver_a_run_at_1ms_streams_at_its_floor() {
    let n = run(Profile::NpuDriverLike, &["NocTraffic"]);
    once(&n, "refused a sampling period of 100 µs");
    for piece in ["frequency domains", "power domains", "temperature sensors", "memory modules"] {
        once(&n, piece);
    }
}

#[test]
fn on_compute_runtime_a_run_goes_on_through_the_energy_counter_falling() {
    let n = run(Profile::ComputeRuntimeLike, &["RenderBasic"]);
    once(&n, "no temperature sensors");
    once(&n, "Memory bandwidth is off");
    once(&n, "went backwards or leapt");
}

#[test]
fn on_the_npu_driver_a_second_streamed_group_is_one_notice_and_the_run_goes_on() {
    let n = run(Profile::NpuDriverLike, &["NocTraffic", "NpuActivity"]);
    once(&n, "is left out of this run: the driver allows one open metric streamer per device");
}
