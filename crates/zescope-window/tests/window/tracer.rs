//! The metric tracer in the window, driven by egui_kittest against a real sampler thread on a
//! private simulated driver: the source panel says the tracer-based group `KernelTrace` is read
//! by the tracer, ticking it and starting a run reads it with the metric tracer (the panel then
//! shows what the driver granted), its kernel events reach a pane, and quitting leaves the
//! driver's report clean.

use crate::support::pump;

use egui_kittest::kittest::{NodeT, Queryable};
use zescope_sampler::ReadPath;

#[test]
fn the_source_panel_shows_the_tracer_group_and_its_series_plot() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.step();
    assert!(h.query_by_label_contains("KernelTrace  · domain 100 · tracer").is_some(), "the group says how it is read");
    h.get_by_label_contains("KernelTrace  · domain 100").click();
    h.step();
    assert!(h.state().state.selection.groups.contains("KernelTrace"));
    h.get_by_label("Start").click();
    pump(&mut h, "traced samples in a pane", |a| {
        a.state.ingest.run.as_ref().is_some_and(|r| r.info.streams.iter().any(|s| s.read_path == ReadPath::Tracer))
            && a.state.ingest.samples_total > 200
            && !a.panes.arrangement.panes.is_empty()
    });
    let run = h.state().state.ingest.run.as_ref().unwrap().info.clone();
    let traced = run.streams.iter().find(|s| s.group == "KernelTrace").expect("the traced stream");
    assert_eq!(traced.read_path, ReadPath::Tracer);
    assert!(traced.layout.starts_with("tracer ("), "{:?}", traced.layout);
    for _ in 0..3 {
        h.step();
    }
    // While running, the panel names what the driver granted.
    assert!(
        h.query_by_label_contains("KernelTrace  · domain 100 · tracer").is_some(),
        "the running group still says tracer"
    );
    // Its series are plotted: the legend lists them.
    h.get_by_label_contains("KernelTrace/KernelStart");
    h.get_by_label_contains("KernelTrace/KernelBytes");
    // The A/B cursors read a kernel id as it is ("1234 kernel id"), not scaled ("1.23 kkernel id").
    let (t0, t1) = h.state().store.total_time_range().unwrap();
    h.state_mut().cursors.set(zescope_model::view::cursors::Which::A, t0 + (t1 - t0) / 2);
    h.state_mut().cursors.set(zescope_model::view::cursors::Which::B, t1);
    h.step();
    h.step();
    assert!(h.query_by_label("A/B cursors").is_some(), "the cursors' window is open");
    assert_eq!(h.query_all_by_label_contains("kkernel id").count(), 0, "no SI prefix on a kernel id");
    let ids: Vec<String> = h
        .get_all_by_label_contains(" kernel id")
        .filter_map(|n| n.accesskit_node().value())
        .filter(|l| l.split_once(' ').is_some_and(|(n, _)| n.parse::<u64>().is_ok()))
        .collect();
    assert!(!ids.is_empty(), "the kernel ids at A and B, whole");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
