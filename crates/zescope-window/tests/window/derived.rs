//! Derived series in the window: one started from a legend row's "Moving average…" is offered
//! with its series, a definition is checked as it is typed (a misspelt series names what it could
//! mean, a syntax error its column), and once added the series is filed into the store as the run
//! goes on, placed in a pane and listed in its legend, its values those of its definition.

use egui_kittest::kittest::Queryable;

use crate::support::pump;

const SERIES: &str = "ComputeBasic/GpuUtilization";

#[test]
fn a_derived_series_from_the_legend_is_plotted_and_listed() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.get_by_label("Start").click();
    pump(&mut h, "samples in a pane", |a| a.state.ingest.samples_total > 20 && !a.panes.arrangement.panes.is_empty());

    h.step();
    h.get_by_label(SERIES).click_secondary();
    h.step();
    h.step();
    h.get_by_label("Moving average…").click();
    h.step();
    h.step();
    assert!(h.state().windows.derived.open, "the derived series' window opened");
    assert_eq!(h.state().state.derived.text, format!("avg_GpuUtilization=avg({SERIES}, 1s)"));

    // Checked as typed: a misspelt series, then a syntax error.
    h.state_mut().state.derived.text = "twice=ComputeBasic/GpuUtilisation * 2".into();
    h.step();
    h.step();
    h.get_by_label_contains("it could mean ComputeBasic/GpuUtilization");
    h.state_mut().state.derived.text = "twice=ComputeBasic/GpuUtilization *".into();
    h.step();
    h.step();
    h.get_by_label_contains("column 36: expected a series, a number or a function");

    h.state_mut().state.derived.text = format!("twice={SERIES} * 2");
    h.step();
    h.step();
    h.get_by_label("Add").click();
    h.step();
    h.step();
    assert_eq!(h.state().state.derived.deriver.derivations().len(), 1, "{:?}", h.state().state.derived.said);

    // Filed as the run goes on, in a pane and its legend.
    pump(&mut h, "derived samples", |a| {
        a.state
            .ingest
            .series
            .iter()
            .any(|(k, e)| k.group == "Derived" && e.ids.iter().any(|id| a.store.sample_count(id.stream()) > 20))
    });
    h.step();
    h.get_by_label("Derived/twice");
    let a = h.state();
    let run = a.state.ingest.run.as_ref().unwrap();
    let (cb, dv) = (
        run.info.streams.iter().position(|s| s.group == "ComputeBasic").unwrap(),
        run.info.streams.iter().position(|s| s.group == "Derived").unwrap(),
    );
    let col = run.info.streams[cb].series.iter().position(|s| s.name == "GpuUtilization").unwrap();
    let mut util = std::collections::HashMap::new();
    a.store.for_each_raw_row(run.streams[cb], |t, row| {
        util.insert(t, row[col]);
    });
    let mut checked = 0;
    a.store.for_each_raw_row(run.streams[dv], |t, row| {
        let u = util[&t];
        assert!((row[0] - 2.0 * u).abs() <= 1e-9 * u.abs().max(1.0), "at {t}: {} vs 2 × {u}", row[0]);
        checked += 1;
    });
    assert!(checked > 20, "{checked}");
    assert!(
        a.panes.arrangement.panes.iter().any(|p| p.series.iter().any(|k| k.group == "Derived")),
        "placed in a pane"
    );
}
