//! Metric types as the window shows them: the default run (ComputeBasic on the simulated GPU)
//! draws its busy time, GpuTime, as a busy share in %, in the pane of the other percentages
//! (GpuUtilization, the engines' utilisation), not as "ms/s" of busy time; the legend says "%".

use crate::support::pump;

use egui_kittest::kittest::Queryable;

#[test]
fn the_default_run_shows_gpu_time_as_a_busy_percentage() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    pump(&mut h, "the inventory", |a| a.state.inventory.is_some());
    h.get_by_label("Start").click();
    pump(&mut h, "a second of samples", |a| {
        a.state.ingest.run.is_some() && a.state.ingest.samples_total > 200 && !a.panes.arrangement.panes.is_empty()
    });
    h.step();
    let a = h.state();
    let pane =
        a.panes.arrangement.panes.iter().find(|p| p.series.iter().any(|k| k.metric == "GpuTime")).expect("plotted");
    let shown: Vec<(&str, String)> =
        pane.series.iter().map(|k| (k.metric.as_str(), a.state.ingest.series[k].plotted_unit())).collect();
    assert!(shown.iter().all(|(_, u)| u == "%"), "busy time in the percentage pane: {shown:?}");
    assert!(shown.iter().any(|(m, _)| *m == "GpuUtilization"), "beside the utilisation: {shown:?}");
    // The share the store plots: between 0 and 100 %, and about the utilisation the driver
    // reports beside it (the same workload, each with its own noise).
    let stats = |metric: &str| {
        let e = a.state.ingest.series.iter().find(|(k, _)| k.metric == metric).unwrap().1;
        a.store.stats(e.ids[0], i64::MIN, i64::MAX)
    };
    let (busy, util) = (stats("GpuTime"), stats("GpuUtilization"));
    assert!(busy.count > 100, "{busy:?}");
    assert!(busy.min >= 0.0 && busy.max <= 100.5, "a share of the time: {busy:?}");
    assert!((busy.mean - util.mean).abs() < 10.0, "busy {} % against utilisation {} %", busy.mean, util.mean);
    // The legend reads in %, and nothing is in "ms/s" any more.
    assert!(h.query_all_by_label("%").count() >= 2, "the unit column of both rows");
    assert!(h.query_by_label("ms/s").is_none() && h.query_by_label("ns/s").is_none(), "no busy time per second");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
