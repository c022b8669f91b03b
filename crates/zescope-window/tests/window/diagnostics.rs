//! Help → Diagnostics during a live run, driven by egui_kittest against a real sampler thread:
//! the checks run on their own thread against the same simulated driver the run reads, and leave
//! the run's devices alone (nothing but the run's sampler touches them) for every read path —
//! exported memory, the tracer, the streamer, telemetry. The simulated driver's report counts
//! every teardown under a live import or tracer, from whichever thread.

use std::sync::{Arc, OnceLock};

use egui_kittest::kittest::Queryable;
use ze_sim::Sim;
use zescope_doctor::Status;
use zescope_sampler::{Command, DevicePath, RunConfig, Via};
use zescope_window::windows::Diagnostics;

use crate::support::pump;

/// The simulated driver both the run and the checks open (the checks' "built-in" device is a
/// plain function, so it is found through this).
static SIM: OnceLock<Arc<Sim>> = OnceLock::new();

fn built_in() -> Result<zescope_ze::InProcess, String> {
    SIM.get().map(|s| s.in_process()).ok_or_else(|| "no simulated device yet".to_owned())
}

#[test]
fn diagnostics_leave_the_devices_of_a_live_run_alone_on_every_read_path() {
    // Metrics always on: the other device's groups are listed, so its streamer is tried.
    let sim = SIM.get_or_init(|| crate::support::sim(|c| c.metrics = ze_sim::config::MetricsEnable::Always));
    let mut app = crate::support::app_on(sim, zescope_window::settings::Settings::default());
    app.windows.diagnostics = Diagnostics::with_built_in(built_in);
    let mut h = crate::support::with_inventory(app, crate::support::WINDOW);
    let runs: [(&str, Via, &[&str], bool); 4] = [
        ("exported memory", Via::Export, &["ComputeBasic"], false),
        ("tracer", Via::Tracer, &["KernelTrace"], false),
        ("streamer", Via::Streamer, &["RenderBasic"], false),
        ("telemetry", Via::Auto, &[], true),
    ];
    for (n, (what, via, groups, telemetry)) in runs.into_iter().enumerate() {
        let groups = groups.iter().map(|g| g.to_string()).collect();
        let cfg = RunConfig {
            via,
            telemetry,
            ..RunConfig::single(DevicePath::default(), groups, std::time::Duration::from_millis(5))
        };
        h.state_mut().send(Command::Start(cfg));
        let before = h.state().state.ingest.samples_total;
        pump(&mut h, &format!("{what}: samples"), |a| {
            a.state.ingest.run.as_ref().is_some_and(|r| r.info.run == n as u64 + 1)
                && a.state.ingest.samples_total > before + 20
        });
        // Help → Diagnostics…, as a user opens it.
        h.get_by_label("Help").click();
        h.step();
        h.step();
        h.get_by_label("Diagnostics…").click();
        pump(&mut h, &format!("{what}: the checks"), |a| a.windows.diagnostics.results().is_some());
        let report = sim.report();
        assert!(report.violations.is_empty(), "{what}: the checks broke the run's teardown order: {report:?}");
        let checks = h.state().windows.diagnostics.results().unwrap().to_vec();
        let named = |name: &str| {
            checks.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("{what}: no {name:?} in {checks:#?}"))
        };
        // The run's device is reported from the run, the other device is still checked.
        let gpu = named("metric streamer on ze-sim GPU");
        assert_eq!((gpu.status, gpu.detail.as_str()), (Status::Ok, zescope_doctor::IN_USE), "{what}");
        assert_eq!(named("metric groups of ze-sim GPU").detail, zescope_doctor::IN_USE, "{what}");
        let npu = named("metric streamer on ze-sim NPU");
        assert!(npu.status == Status::Ok && npu.detail.starts_with("opened and closed"), "{what}: {npu:?}");
        h.step();
        assert!(h.query_by_label_contains("This window's run").is_some(), "{what}: the run's own state is shown");
        // The run goes on reading.
        let seen = h.state().state.ingest.samples_total;
        pump(&mut h, &format!("{what}: samples after the checks"), |a| a.state.ingest.samples_total > seen + 20);
        assert!(h.state().state.banners.is_empty(), "{what}: {:?}", h.state().state.banners);
        h.state_mut().windows.diagnostics = Diagnostics::with_built_in(built_in);
    }
    crate::support::quit_discarding(&mut h);
    let report = sim.report();
    assert!(report.is_clean(), "{report:?}");
}
