//! The window's choice of how to read groups, driven by egui_kittest against a real sampler
//! thread on a private simulated driver: choosing "streamer" unticks the groups it cannot read,
//! a run of the streamed group says the period and reports per notification the driver granted,
//! its samples reach a pane, and quitting leaves the driver's report clean.

use crate::support::pump;

use egui_kittest::kittest::Queryable;
use zescope_sampler::Via;

#[test]
fn choosing_the_streamer_reads_a_streamed_group_into_a_pane() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.step();
    assert!(h.query_by_label_contains("RenderBasic  · domain 3 · streamer").is_some(), "the group says how");
    assert!(h.state().state.selection.groups.contains("ComputeBasic"), "auto ticks the first group");
    // The tracer-based group, which the streamer cannot read.
    h.get_by_label_contains("KernelTrace  · domain 100").click();
    h.step();
    assert!(h.state().state.selection.groups.contains("KernelTrace"));
    h.get_by_role(egui::accesskit::Role::ComboBox).click();
    for _ in 0..3 {
        h.step();
    }
    h.get_by_label("streamer").click();
    h.step();
    h.step();
    let sel = &h.state().state.selection;
    assert_eq!(sel.via, Via::Streamer);
    assert!(!sel.groups.contains("KernelTrace"), "a group the streamer cannot read is unticked");
    assert!(sel.groups.contains("ComputeBasic"), "exported and time-based: the streamer reads it too");
    h.get_by_label_contains("RenderBasic  · domain 3").click();
    h.step();
    h.get_by_label("Start").click();
    pump(&mut h, "streamed samples in a pane", |a| {
        a.state.ingest.run.is_some() && a.state.ingest.samples_total > 100 && !a.panes.arrangement.panes.is_empty()
    });
    let run = h.state().state.ingest.run.as_ref().unwrap().info.clone();
    assert_eq!(run.config.via, Via::Streamer);
    // ComputeBasic and RenderBasic (domains 0 and 3) by the streamer, and the device's telemetry.
    let groups: Vec<&str> = run.streams.iter().map(|s| s.group.as_str()).collect();
    assert_eq!(groups, ["ComputeBasic", "RenderBasic", "Telemetry"]);
    for s in &run.streams[..2] {
        assert_eq!(s.read_path, zescope_sampler::ReadPath::Streamer, "{}", s.group);
        assert!(s.layout.starts_with("streamer ("), "{:?}", s.layout);
    }
    h.get_by_label_contains("RenderBasic/RenderUtilization");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
