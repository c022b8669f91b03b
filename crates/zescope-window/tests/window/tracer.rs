//! The metric tracer in the window, driven by egui_kittest against a real sampler thread on a
//! private simulated driver: the source panel says the tracer-based group `KernelTrace` is read
//! by the tracer, ticking it and starting a run reads it with the metric tracer (the panel then
//! shows what the driver granted), its kernel events reach a pane, and quitting leaves the
//! driver's report clean.

use crate::support::pump;

use egui_kittest::kittest::Queryable;
use zescope_sampler::ReadPath;

#[test]
fn the_source_panel_shows_the_tracer_group_and_its_series_plot() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.step();
    assert!(h.query_by_label_contains("KernelTrace  · domain 4 · tracer").is_some(), "the group says how it is read");
    h.get_by_label_contains("KernelTrace  · domain 4").click();
    h.step();
    assert!(h.state().state.selection.groups.contains("KernelTrace"));
    h.get_by_label("Start").click();
    pump(&mut h, "traced samples in a pane", |a| {
        a.state.ingest.run.as_ref().is_some_and(|r| r.info.streams.iter().any(|s| s.read_path == ReadPath::Tracer))
            && a.state.ingest.samples_total > 200
            && !a.panes.layout.panes.is_empty()
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
        h.query_by_label_contains("KernelTrace  · domain 4 · tracer").is_some(),
        "the running group still says tracer"
    );
    // Its series are plotted: the legend lists them.
    h.get_by_label_contains("KernelTrace/KernelStart");
    h.get_by_label_contains("KernelTrace/KernelBytes");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
