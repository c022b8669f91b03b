//! The window's Telemetry node, driven by egui_kittest against a real sampler thread on a private
//! simulated driver: ticked by default, a run reads the device's telemetry beside its group and
//! its series go to panes of their own units; unticked, the next run reads none.

use crate::support::pump;

use egui_kittest::kittest::Queryable;
use zescope_window::ZescopeApp;

fn has_telemetry(a: &ZescopeApp) -> bool {
    a.state.ingest.run.as_ref().is_some_and(|r| r.info.streams.iter().any(|s| s.group == "Telemetry"))
}

#[test]
fn the_telemetry_node_is_ticked_by_default_and_its_series_get_panes_by_unit() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.step();
    assert!(h.state().state.selection.telemetry, "ticked by default");
    h.get_by_label_contains("Telemetry  · Sysman");
    h.get_by_label("Start").click();
    pump(&mut h, "telemetry in panes", |a| {
        has_telemetry(a)
            && a.state.ingest.series.iter().any(|(k, e)| k.group == "Telemetry" && !e.ids.is_empty())
            && a.state.ingest.series.keys().all(|k| a.panes.arrangement.contains(k))
    });
    let a = h.state();
    let units = |metric: &str| {
        let pane = a.panes.arrangement.panes.iter().find(|p| p.series.iter().any(|k| k.metric == metric)).unwrap();
        let mut u: Vec<String> =
            pane.series.iter().map(|k| a.state.ingest.series[k].plotted_unit()).collect::<Vec<_>>();
        u.dedup();
        u
    };
    assert_eq!(units("GPU frequency actual"), ["MHz"], "clocks in a MHz pane");
    assert_eq!(units("Package power"), ["W"], "power in a W pane");
    assert_eq!(units("GPU temperature"), ["°C"], "temperatures in a °C pane");
    h.step();
    h.get_by_label("Stop").click();
    pump(&mut h, "the run stopped", |a| a.state.ingest.run.is_none());
    h.step();
    h.get_by_label_contains("Telemetry  · Sysman").click();
    h.step();
    assert!(!h.state().state.selection.telemetry, "unticked");
    h.get_by_label("Start").click();
    pump(&mut h, "a run without telemetry", |a| a.state.ingest.run.is_some() && a.state.ingest.samples_total > 0);
    assert!(!has_telemetry(h.state()));
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// Throttle reasons are a state (a bitmask), not a quantity: stored and drawn as steps, with no
/// mean in the legend or the phase table.
#[test]
fn throttle_reasons_are_a_state_with_no_mean() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.step();
    h.get_by_label("Start").click();
    pump(&mut h, "telemetry samples", |a| {
        a.state.ingest.series.iter().any(|(k, e)| k.metric.contains("throttle reasons") && !e.ids.is_empty())
            && a.state.ingest.samples_total > 50
    });
    let a = h.state();
    let (key, entry) = a.state.ingest.series.iter().find(|(k, _)| k.metric.contains("throttle reasons")).unwrap();
    assert_eq!(entry.info.kind, zescope_sampler::layout::Kind::State, "{key:?}");
    let id = entry.ids[0];
    assert_eq!(a.store.series_desc(id).unwrap().kind, zescope_store::SeriesKind::State, "drawn as steps");
    let (t0, t1) = a.store.total_time_range().unwrap();
    let row = zescope_model::view::phases::phase_row(
        &a.store,
        key,
        entry,
        &zescope_model::view::phases::PhaseRange::new("all", t0, t1),
    );
    assert!(row.samples > 0 && row.mean.is_nan(), "no mean of a bitmask: {row:?}");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// The search reaches the Telemetry node's series: "throttle", "energy", "bandwidth" and
/// "frequency" show the node, open, with the series they name (and no other); a series with no
/// unit is written without empty brackets.
#[test]
fn the_search_finds_the_telemetry_series() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.step();
    h.get_by_label("Start").click();
    pump(&mut h, "telemetry series", |a| {
        a.state.ingest.series.iter().any(|(k, e)| k.group == "Telemetry" && !e.ids.is_empty())
    });
    let cases: [(&str, &str, &str); 4] = [
        ("throttle", "GPU throttle reasons", "GPU frequency actual [MHz]"),
        ("energy", "Package energy [J]", "GPU temperature [°C]"),
        ("bandwidth", "Memory read bandwidth [B/s]", "GPU temperature [°C]"),
        ("frequency", "GPU frequency actual [MHz]", "Package energy [J]"),
    ];
    for (query, found, not) in cases {
        h.state_mut().search = query.to_owned();
        h.step();
        h.step();
        assert!(h.query_by_label_contains("Telemetry  · Sysman").is_some(), "{query}: the node is shown");
        assert!(h.query_by_label(found).is_some(), "{query}: {found} is shown");
        assert!(h.query_by_label(not).is_none(), "{query}: {not} is not");
        // The count under the box counts the telemetry series shown too.
        assert!(h.query_by_label_contains("telemetry series match").is_some(), "{query}: the series counted");
    }
    assert!(h.query_by_label_contains("[]").is_none(), "no empty unit brackets");
    crate::support::quit_discarding(&mut h);
}

/// A pane's header names the unit its legend's numbers are in: clocks of ~1 GHz read "GHz" over
/// rows in GHz, not the stored "MHz".
#[test]
fn a_pane_header_says_the_unit_of_its_rows() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.step();
    h.get_by_label("Start").click();
    pump(&mut h, "clock samples in a pane", |a| {
        a.state.ingest.series.iter().any(|(k, e)| k.metric == "GPU frequency actual" && !e.ids.is_empty())
            && a.state.ingest.series.keys().all(|k| a.panes.arrangement.contains(k))
            && a.state.ingest.samples_total > 50
    });
    h.step();
    h.step();
    let ghz = h.query_all_by_label("GHz").count();
    assert!(ghz >= 2, "the legend's rows and the header both in GHz: {ghz}");
    assert!(h.query_by_label("MHz").is_none(), "no header says MHz over rows in GHz");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// Unticking the last thing a run samples stops it, and the banner says why once: its title says
/// the sampling stopped, its text what about the selection cannot be sampled (it read "Sampling
/// stopped — sampling stopped: …").
#[test]
fn unticking_the_last_group_and_the_telemetry_stops_the_run_saying_why_once() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.step();
    let groups: Vec<String> = h.state().state.selection.groups.iter().cloned().collect();
    assert_eq!(groups, ["ComputeBasic"], "the default selection");
    h.get_by_label("Start").click();
    pump(&mut h, "a run", |a| a.state.ingest.run.is_some() && a.state.ingest.samples_total > 0);
    h.get_by_label_contains("Telemetry  · Sysman").click();
    h.step();
    pump(&mut h, "the run again without telemetry", |a| a.state.ingest.run.as_ref().is_some_and(|_| !has_telemetry(a)));
    h.get_by_label_contains("ComputeBasic  · domain 0").click();
    pump(&mut h, "the run to stop", |a| a.state.ingest.run.is_none());
    h.step();
    h.get_by_label("Sampling stopped");
    h.get_by_label_contains("the new selection cannot be sampled: tick at least one metric group, or the telemetry");
    assert!(h.query_by_label_contains("sampling stopped:").is_none(), "said once, in the title");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
