//! Several devices on one screen, driven by egui_kittest against a real sampler thread on a
//! private simulated driver: ticking the NPU beside the GPU (each with its own groups) starts one
//! run with both, both devices' series are plotted against the one time axis with the device in
//! their legends, the status bar names both, Stop tears both down (clean driver report), and
//! remembered choices are reconciled per device.

use crate::support::pump;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use zescope_sampler::DevicePath;
use zescope_window::ZescopeApp;
use zescope_window::settings::Settings;

const NPU: DevicePath = DevicePath { driver: 0, device: 1, sub_device: None };

fn app(sim: &std::sync::Arc<ze_sim::Sim>, settings: Settings) -> Harness<'static, ZescopeApp> {
    let mut h = crate::support::with_inventory(crate::support::app_on(sim, settings), [1280.0, 900.0]);
    h.step();
    h
}

#[test]
fn ticking_groups_of_two_devices_runs_both_on_one_time_axis_and_stop_tears_both_down() {
    let sim = crate::support::sim(|_| {});
    let mut h = app(&sim, Settings::default());
    assert!(h.state().state.selection.groups.contains("ComputeBasic"), "the GPU's first group is ticked");
    // The NPU's groups show only once the NPU is ticked; ticking it ticks its first group.
    assert!(h.query_by_label_contains("NpuActivity  · domain 0").is_none());
    h.get_by_label_contains("ze-sim NPU [Npu]").click();
    h.step();
    h.step();
    assert!(h.state().state.selection.is_picked(NPU));
    assert!(h.state().state.selection.groups_of(NPU).unwrap().contains("NpuActivity"));
    // The GPU's second group, in its own domain, is the GPU's alone.
    h.get_by_label_contains("MemoryTraffic  · domain 1").click();
    h.step();
    h.get_by_label("Start").click();
    pump(&mut h, "samples of both devices in panes", |a| {
        let plotted = |dev: &str| a.panes.arrangement.panes.iter().any(|p| p.series.iter().any(|k| k.device == dev));
        a.state.ingest.run.is_some()
            && a.state.ingest.samples_total > 300
            && plotted("ze-sim GPU")
            && plotted("ze-sim NPU")
    });
    let run = h.state().state.ingest.run.as_ref().unwrap().info.clone();
    let targets: Vec<(DevicePath, Vec<String>)> =
        run.config.targets.iter().map(|t| (t.device, t.groups.clone())).collect();
    assert_eq!(
        targets,
        [
            (DevicePath::default(), vec!["ComputeBasic".to_owned(), "MemoryTraffic".to_owned()]),
            (NPU, vec!["NpuActivity".to_owned()]),
        ],
        "one run with both devices, each with its own groups"
    );
    assert_eq!(run.devices, ["ze-sim GPU", "ze-sim NPU"]);

    // One time axis: both devices' streams cover the same stretch of the one clock.
    let a = h.state();
    let ranges: Vec<(i64, i64)> =
        a.state.ingest.run.as_ref().unwrap().streams.iter().map(|&s| a.store.time_range(s).unwrap()).collect();
    let (gpu, npu) = (ranges[0], ranges[2]);
    assert!(gpu.0 < npu.1 && npu.0 < gpu.1, "the devices' samples overlap in time: {ranges:?}");
    h.step();
    // Legends head each device's rows once two are sampled; the status bar lists both.
    crate::support::legend_has(&h, "ze-sim NPU", "NpuActivity/NpuPower");
    crate::support::legend_has(&h, "ze-sim GPU", "ComputeBasic/GpuTime");
    h.get_by_label_contains("ze-sim GPU · ComputeBasic, MemoryTraffic · ze-sim NPU · NpuActivity");
    assert_eq!(sim.live_imports(), 3, "the GPU's two buffers and the NPU's one");

    h.get_by_label("Stop").click();
    pump(&mut h, "the run to stop", |a| a.state.ingest.run.is_none());
    assert_eq!(sim.live_imports(), 0, "stopping tears both devices down");
    let r = sim.report();
    assert!(r.violations.is_empty(), "{r:?}");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn unticking_the_first_device_leaves_the_other_with_its_groups() {
    let sim = crate::support::sim(|_| {});
    let mut h = app(&sim, Settings::default());
    h.get_by_label_contains("ze-sim NPU [Npu]").click();
    h.step();
    h.get_by_label_contains("ze-sim GPU [Gpu]").click();
    h.step();
    h.step();
    let sel = &h.state().state.selection;
    assert_eq!(sel.device, Some(NPU), "the NPU takes the first place");
    assert!(sel.groups.contains("NpuActivity") && sel.more.is_empty(), "{sel:?}");
    assert!(h.query_by_label_contains("ComputeBasic  · domain 0").is_none(), "the GPU's groups are hidden");
    h.get_by_label("Start").click();
    pump(&mut h, "the NPU run", |a| a.state.ingest.run.is_some());
    assert_eq!(h.state().state.ingest.run.as_ref().unwrap().info.devices, ["ze-sim NPU"]);
    h.step();
    // One device: legends as before, without the device.
    pump(&mut h, "a plotted series", |a| a.panes.arrangement.panes.iter().any(|p| !p.series.is_empty()));
    h.step();
    assert!(h.query_by_label("ze-sim NPU").is_none(), "no device heading");
    h.get_by_label("Stop").click();
    pump(&mut h, "the run to stop", |a| a.state.ingest.run.is_none());
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn remembered_devices_are_reconciled_each_on_its_own() {
    let sim = crate::support::sim(|_| {});
    let mut settings = Settings::default();
    let s = &mut settings.selection;
    s.device = Some(DevicePath::default());
    s.groups.insert("ComputeBasic".into());
    s.more.push(zescope_window::state::DeviceChoice {
        device: NPU,
        groups: ["NoSuchNpuGroup".to_owned()].into_iter().collect(),
        excluded: Default::default(),
    });
    s.more.push(zescope_window::state::DeviceChoice {
        device: DevicePath { driver: 0, device: 7, sub_device: None },
        groups: ["Gone".to_owned()].into_iter().collect(),
        excluded: Default::default(),
    });
    let h = app(&sim, settings);
    let a = h.state();
    let sel = &a.state.selection;
    assert!(sel.groups.contains("ComputeBasic"), "the GPU's valid choice stays");
    let npu: Vec<&String> = sel.groups_of(NPU).unwrap().iter().collect();
    assert_eq!(npu, ["NpuActivity"], "the NPU's stale group falls back to its first sampleable one");
    assert_eq!(sel.more.len(), 1, "the device this machine lacks is dropped");
    assert_eq!(a.state.banners.len(), 1, "said once");
    h.get_by_label_contains("metric group \"NoSuchNpuGroup\" of ze-sim NPU");
    h.get_by_label_contains("the remembered device");
    drop(h);
    assert!(sim.report().violations.is_empty(), "{:?}", sim.report());
}

/// Ticking the NPU (or a group) while sampling applies at once: a new run samples the new
/// selection, what the first run sampled stays shown, and its imports were torn down.
#[test]
fn a_device_ticked_while_running_joins_at_once_keeping_the_history() {
    let sim = crate::support::sim(|_| {});
    let mut h = app(&sim, Settings::default());
    h.get_by_label("Start").click();
    pump(&mut h, "the GPU run", |a| a.state.ingest.run.is_some() && a.state.ingest.samples_total > 50);
    let first = h.state().state.ingest.run.as_ref().unwrap().info.run;
    let gpu_samples = h.state().state.ingest.samples_total;
    h.get_by_label_contains("ze-sim NPU [Npu]").click();
    h.step();
    pump(&mut h, "a run of both devices", |a| {
        a.state.ingest.run.as_ref().is_some_and(|r| r.info.run != first && r.info.devices.len() == 2)
            && a.state.ingest.samples_total > gpu_samples + 50
    });
    let a = h.state();
    assert_eq!(a.state.ingest.run.as_ref().unwrap().info.devices, ["ze-sim GPU", "ze-sim NPU"]);
    let runs: std::collections::BTreeSet<u64> = a.state.history.runs.iter().map(|r| r.run).collect();
    assert_eq!(runs.len(), 2, "the first run's history is kept beside the new one");
    let (t0, _) = a.store.total_time_range().unwrap();
    let gpu_first = a.store.streams().filter_map(|s| a.store.time_range(s.id)).map(|r| r.0).min().unwrap();
    assert_eq!(t0, gpu_first, "the first run's samples are still held");
    assert_eq!(sim.live_imports(), 2, "one buffer a device: the first run's were freed, not leaked");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// A run of the GPU alone under panes that also name the NPU's series (an arrangement kept from a
/// session of both): a pane that names both devices' series heads each device's rows (two rows
/// "Telemetry/Package power" are told apart), and a pane of the NPU's series says the NPU is not in
/// the data shown (not that its series are hidden).
#[test]
fn panes_naming_a_device_the_run_lacks_say_so() {
    let sim = crate::support::sim(|_| {});
    // Tall enough for every pane to be laid out.
    let mut h = crate::support::with_inventory(crate::support::app_on(&sim, Settings::default()), [1280.0, 3000.0]);
    h.step();
    h.get_by_label("Start").click();
    pump(&mut h, "the GPU's telemetry in panes", |a| {
        a.state.ingest.samples_total > 50
            && a.panes.arrangement.panes.iter().any(|p| p.series.iter().any(|k| k.metric == "Package power"))
    });
    let key = |group: &str, metric: &str| zescope_model::view::SeriesKey {
        device: "ze-sim NPU".into(),
        group: group.into(),
        metric: metric.into(),
    };
    {
        let arrangement = &mut h.state_mut().panes.arrangement;
        let power = arrangement.panes.iter().find(|p| p.series.iter().any(|k| k.metric == "Package power")).unwrap().id;
        arrangement.show_also(&key("Telemetry", "Package power"), Some(power));
        let npu = arrangement.add_pane();
        arrangement.assign(&key("NpuActivity", "NpuUtilization"), Some(npu));
    }
    h.step();
    h.step();
    assert!(h.query_by_label_contains("Every series of this pane is hidden").is_none(), "not 'hidden'");
    h.get_by_label_contains("No data for this pane: NpuActivity of ze-sim NPU is not in the data shown. Pick it");
    assert!(h.query_all_by_label("ze-sim NPU").count() >= 1, "a legend heading over the NPU's rows");
    assert!(h.query_all_by_label("ze-sim GPU").count() >= 1, "and over the GPU's");
    crate::support::quit_discarding(&mut h);
}

/// Devices ticked after the first follow the source list's order, whatever the order ticked: a
/// tile ticked last comes beside its device, not after the NPU (its streams, legend and panes
/// came after the NPU's).
#[test]
fn devices_ticked_later_keep_the_source_lists_order() {
    let tile = DevicePath { driver: 0, device: 0, sub_device: Some(0) };
    let mut s = zescope_window::state::Selection::default();
    for d in [DevicePath::default(), NPU, tile] {
        s.pick(d, Default::default());
    }
    let order: Vec<DevicePath> = s.picked().iter().map(|p| p.0).collect();
    assert_eq!(order, [DevicePath::default(), tile, NPU]);
}
