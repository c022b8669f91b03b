//! Panes by unit, driven through egui_kittest against a sampler on a private simulated driver:
//! a second group ticked for the next run puts its series in panes of their own units (never
//! B/s and °C on one axis), keeps the first group's panes, and "Reset layout" lays every
//! series out by unit again.

use crate::support::pump;

use std::collections::BTreeSet;

use egui_kittest::kittest::Queryable;
use zescope_window::ZescopeApp;
use zescope_window::settings::Settings;

/// Each pane's plotted units, top to bottom.
fn pane_units(a: &ZescopeApp) -> Vec<BTreeSet<String>> {
    let series = &a.state.ingest.series;
    a.panes
        .arrangement
        .panes
        .iter()
        .map(|p| p.series.iter().filter_map(|k| series.get(k)).map(|e| e.plotted_unit()).collect())
        .collect()
}

fn assert_one_unit_per_pane(a: &ZescopeApp, what: &str) {
    let units = pane_units(a);
    assert!(units.iter().all(|u| u.len() == 1), "{what}: a pane mixes units: {units:?}");
    let distinct: BTreeSet<&String> = units.iter().flatten().collect();
    assert_eq!(distinct.len(), units.len(), "{what}: one pane per unit: {units:?}");
}

#[test]
fn a_second_group_goes_to_panes_of_its_units_and_reset_groups_by_unit() {
    let sim = crate::support::sim(|_| {});
    let mut app = crate::support::app_on(&sim, Settings::default());
    // The metric groups' panes only (telemetry joins panes by unit too: `gui_telemetry`).
    app.state.selection.telemetry = false;
    let mut h = crate::support::with_inventory(app, crate::support::WINDOW);
    h.get_by_label("Start").click();
    pump(&mut h, "ComputeBasic's panes", |a| {
        a.state.ingest.samples_total > 10 && !a.panes.arrangement.panes.is_empty()
    });
    let first = h.state().panes.arrangement.panes.clone();
    assert_one_unit_per_pane(h.state(), "ComputeBasic");
    h.step();
    h.get_by_label("Stop").click();
    pump(&mut h, "the run stopped", |a| a.state.ingest.run.is_none());
    h.step();

    h.get_by_label_contains("MemoryTraffic").click();
    h.step();
    assert!(h.state().state.selection.groups.contains("MemoryTraffic"), "the second group is ticked");
    h.get_by_label("Start").click();
    pump(&mut h, "a run of both groups", |a| {
        a.state.ingest.run.as_ref().is_some_and(|r| r.info.streams.len() == 2)
            && a.state.ingest.series.keys().all(|k| a.panes.arrangement.contains(k))
    });
    assert_one_unit_per_pane(h.state(), "after ticking MemoryTraffic");
    let units = pane_units(h.state());
    let flat: Vec<&String> = units.iter().flatten().collect();
    assert!(flat.contains(&&"B/s".to_owned()) && flat.contains(&&"°C".to_owned()), "{units:?}");
    assert_eq!(
        h.state().panes.arrangement.panes[..first.len()],
        first[..],
        "the first group's panes stay as they were"
    );

    // Move a temperature into the B/s pane by hand, then Reset layout: by unit again.
    let temp = h.state().state.ingest.series.keys().find(|k| k.metric == "MemoryTemperature").unwrap().clone();
    let bytes_pane =
        h.state().panes.arrangement.panes.iter().find(|p| p.series.iter().any(|k| k.metric == "BytesRead")).unwrap().id;
    h.state_mut().panes.assign(&temp, Some(bytes_pane));
    h.step();
    h.get_by_label("View").click();
    h.step();
    h.step();
    h.get_by_label("Reset layout").click();
    h.step();
    assert_one_unit_per_pane(h.state(), "after Reset layout");
    assert_eq!(pane_units(h.state()).len(), units.len());
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// View → Reset layout on an opened recording lays its series out again, as opening it did
/// for a session without panes; it never leaves the window without panes.
#[test]
fn reset_layout_on_an_opened_recording_keeps_its_series_in_panes() {
    let mut h = crate::support::showing(
        &crate::support::example_session(),
        zescope_window::settings::Settings::default(),
        crate::support::WINDOW,
        None,
    );
    let keys: std::collections::BTreeSet<_> = h.state().state.ingest.series.keys().cloned().collect();
    assert!(!h.state().panes.arrangement.panes.is_empty());
    h.get_by_label("View").click();
    h.step();
    h.step();
    h.get_by_label("Reset layout").click();
    h.step();
    h.step();
    let placed: std::collections::BTreeSet<_> =
        h.state().panes.arrangement.panes.iter().flat_map(|p| p.series.iter().cloned()).collect();
    assert_eq!(placed, keys, "every series of the recording is in a pane again");
    assert_one_unit_per_pane(h.state(), "after Reset layout of a recording");
    assert!(!h.state().plot_frames.is_empty(), "and drawn");
}
