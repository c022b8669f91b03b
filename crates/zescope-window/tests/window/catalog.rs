//! The source panel on a realistic catalogue (ze-sim's `catalog: Realistic`: dozens of groups and
//! over a thousand metrics per GPU), driven through egui_kittest against a real sampler: groups
//! start collapsed and only the rows in view are laid out; a search shows the matching metrics in
//! their groups; ticking the 45-metric `ComputeBasic` takes all its metrics; a run of it puts its
//! series in panes by unit, one pane per unit and no pane mixing units; scrolling a fully open
//! catalogue brings the rows at its bottom into view, still laying out only those.

use std::collections::BTreeSet;

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use ze_sim::catalog::{Catalog, realistic_groups};
use zescope_model::view::text::base_unit;
use zescope_window::ZescopeApp;
use zescope_window::settings::Settings;

use crate::support::pump;

/// Each pane's units without SI prefixes (what decides which series share a pane).
fn pane_units(a: &ZescopeApp) -> Vec<BTreeSet<String>> {
    let series = &a.state.ingest.series;
    let panes = &a.panes.arrangement.panes;
    panes
        .iter()
        .map(|p| p.series.iter().filter_map(|k| series.get(k)).map(|e| base_unit(&e.plotted_unit())).collect())
        .collect()
}

#[test]
fn a_searched_and_ticked_compute_basic_runs_into_one_pane_per_unit() {
    let sim = crate::support::sim(|c| c.catalog = Catalog::Realistic);
    let mut app = crate::support::app_on(&sim, Settings::default());
    app.state.selection.telemetry = false;
    let mut h = crate::support::with_inventory(app, crate::support::WINDOW);
    h.step();
    let catalogue = realistic_groups();
    let gpu_groups = h.state().state.inventory.as_ref().unwrap().devices[0].groups.len();
    assert_eq!(gpu_groups, catalogue.len());
    // Collapsed: the picked GPU's groups are rows, none of their metrics.
    assert!(h.query_by_label_contains("ComputeBasic  · domain 0 · streamer").is_some());
    assert!(h.query_by_label("GpuBusy [%]").is_none(), "groups start collapsed");
    let rows = h.state().source_rows();
    assert!(rows > gpu_groups && rows < gpu_groups + 10, "{rows} rows");
    // Everything open: over a thousand rows, of which only those in view are laid out.
    h.state_mut().open_all_groups(true);
    h.step();
    let rows = h.state().source_rows();
    assert!(rows > 1000, "{rows} rows");
    let laid_out = h.query_all_by_role(Role::CheckBox).count();
    assert!(laid_out < 100, "{laid_out} tick boxes laid out of {rows} rows");
    h.state_mut().open_all_groups(false);
    // The auto-picked group is unticked first, so the tick below is what picks it.
    h.get_by_label_contains("ComputeBasic  · domain 0").click();
    h.step();
    assert!(h.state().state.selection.groups.is_empty());

    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::F);
    h.step();
    h.step();
    h.get_by_role(Role::TextInput).type_text("gpubusy");
    h.step();
    h.step();
    let matching =
        catalogue.iter().flat_map(|g| &g.metrics).filter(|m| m.name.to_lowercase().contains("gpubusy")).count();
    assert!(h.query_by_label(&format!("{matching} metrics match")).is_some(), "{matching} GpuBusy metrics");
    let compute = catalogue.iter().find(|g| g.name == "ComputeBasic").unwrap();
    let n = compute.metrics.len() + 1; // and the streamer's QueryBeginTime
    assert_eq!(n, 45);
    h.get_by_label(&format!("ComputeBasic  · domain 0 · streamer · 1 of {n} match"));
    assert!(h.query_all_by_label("GpuBusy [%]").count() >= 1, "the matching metric is shown in its group");
    assert!(h.query_by_label_contains("EngineActivity").is_none(), "a group without a match is hidden");

    h.get_by_label_contains("ComputeBasic  · domain 0 · streamer").click();
    h.step();
    let sel = &h.state().state.selection;
    assert_eq!(sel.groups, BTreeSet::from(["ComputeBasic".to_owned()]));
    assert!(sel.excluded.is_empty(), "the whole group: all {n} metrics");
    h.get_by_label("Start").click();
    pump(&mut h, "ComputeBasic's series in panes", |a| {
        a.state.ingest.run.as_ref().is_some_and(|r| r.info.streams.len() == 1)
            && a.state.ingest.samples_total > 100
            && !a.state.ingest.series.is_empty()
            && a.state.ingest.series.keys().all(|k| a.panes.arrangement.contains(k))
    });
    let a = h.state();
    let run = &a.state.ingest.run.as_ref().unwrap().info;
    assert_eq!(run.streams[0].group, "ComputeBasic");
    assert_eq!(run.streams[0].series.len(), n - 1, "every metric but the reports' time is a series");
    let units = pane_units(a);
    assert!(units.iter().all(|u| u.len() == 1), "a pane mixes units: {units:?}");
    let distinct: BTreeSet<&String> = units.iter().flatten().collect();
    assert_eq!(distinct.len(), units.len(), "one pane per unit: {units:?}");
    let all: BTreeSet<String> = a.state.ingest.series.values().map(|e| base_unit(&e.plotted_unit())).collect();
    assert_eq!(distinct.len(), all.len(), "every unit has its pane: {all:?}");
    assert!(all.len() >= 8, "ComputeBasic's units: {all:?}");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn scrolling_the_open_catalogue_lays_out_the_rows_that_come_into_view() {
    let sim = crate::support::sim(|c| c.catalog = Catalog::Realistic);
    let mut h = crate::support::harness_on(&sim);
    h.state_mut().open_all_groups(true);
    h.step();
    let last = realistic_groups().last().unwrap().metrics.last().unwrap().clone();
    let ze_sim::config::Signal::Modelled(model) = last.signal else { panic!("{last:?}") };
    let last = format!("{} [{}]", last.name, model.unit.text());
    assert!(h.query_by_label("GpuTime [ns]").is_some(), "the top of the tree is in view");
    assert!(h.query_by_label(&last).is_none(), "{last} is far below");
    let over = h.get_by_label("GpuTime [ns]").rect().center();
    h.hover_at(over);
    for _ in 0..10 {
        h.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, -100_000.0),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
            modifiers: egui::Modifiers::NONE,
        });
        h.step();
    }
    for _ in 0..20 {
        h.step();
    }
    assert!(h.query_by_label(&last).is_some(), "the bottom of the tree came into view");
    assert!(h.query_by_label("GpuTime [ns]").is_none(), "the top left it");
    let laid_out = h.query_all_by_role(Role::CheckBox).count();
    assert!(laid_out < 100, "{laid_out} tick boxes laid out of {} rows", h.state().source_rows());
}
