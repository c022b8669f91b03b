//! Remembered settings from another machine, driven through egui_kittest against a sampler on a
//! private simulated driver: a stale device group and stale pane series are dropped, the first
//! sampleable group is chosen, the change is said once in a banner that a successful start
//! clears, and Start works after ticking other groups.

use crate::support::pump;

use egui_kittest::kittest::Queryable;
use zescope_model::view::{Arrangement, SeriesKey};
use zescope_sampler::DevicePath;
use zescope_window::settings::Settings;

fn stale_settings() -> Settings {
    let mut s = Settings::default();
    s.selection.device = Some(DevicePath::default());
    s.selection.groups.insert("NoSuchGroup".into());
    s.selection.excluded.entry("NoSuchGroup".into()).or_default().insert("Gone".into());
    let mut arrangement = Arrangement::default();
    let stale = SeriesKey { device: "Some other GPU".into(), group: "NoSuchGroup".into(), metric: "Gone".into() };
    arrangement.assign(&stale, None);
    s.arrangement = arrangement;
    s
}

#[test]
fn stale_remembered_settings_are_reconciled_and_said_once() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::with_inventory(crate::support::app_on(&sim, stale_settings()), crate::support::WINDOW);
    h.step();
    let a = h.state();
    assert!(!a.state.selection.groups.contains("NoSuchGroup"), "the stale group is dropped");
    assert!(a.state.selection.groups.contains("ComputeBasic"), "the first sampleable group is chosen");
    assert!(a.state.selection.excluded.is_empty(), "stale unticked metrics are dropped");
    assert!(a.panes.arrangement.panes.is_empty(), "the stale pane and its legend are gone");
    assert_eq!(a.state.banners.len(), 1, "said once");
    h.get_by_label("Remembered settings adjusted");
    h.get_by_label_contains("NoSuchGroup");

    // Refresh lists the devices again: nothing more is dropped, nothing said again.
    // The inventory shown is marked, so the wait ends on the refreshed one, not the first.
    let before = "listed before the refresh";
    h.state_mut().state.inventory.as_mut().unwrap().source.as_mut().unwrap().description = before.into();
    h.get_by_label("Refresh").click();
    pump(&mut h, "the refreshed inventory", |a| {
        a.state.inventory.as_ref().and_then(|i| i.source.as_ref()).is_some_and(|s| s.description != before)
    });
    h.step();
    assert_eq!(h.state().state.banners.len(), 1);
    assert_eq!(h.state().state.banners[0].count, 1, "not repeated by a refresh");

    // Tick another group (another domain) and start: both run; the banner goes away.
    h.get_by_label_contains("MemoryTraffic  ·").click();
    h.step();
    h.get_by_label("Start").click();
    pump(&mut h, "a run with samples", |a| a.state.ingest.run.is_some() && a.state.ingest.samples_total > 10);
    h.step();
    let a = h.state();
    let groups: Vec<&str> =
        a.state.ingest.run.as_ref().unwrap().info.streams.iter().map(|s| s.group.as_str()).collect();
    // Both groups, and the device's telemetry (ticked by default) after them.
    assert_eq!(groups, ["ComputeBasic", "MemoryTraffic", "Telemetry"]);
    assert!(a.state.banners.is_empty(), "a successful start clears the settings banner");
    assert!(h.query_by_label("Remembered settings adjusted").is_none());
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn layout_series_with_recorded_data_or_present_on_this_machine_are_kept() {
    let sim = crate::support::sim(|_| {});
    let mut settings = Settings::default();
    let here = SeriesKey { device: "ze-sim GPU".into(), group: "ComputeBasic".into(), metric: "GpuTime".into() };
    settings.arrangement.assign(&here, None);
    // The device's telemetry is no metric group of it, yet it is this machine's.
    let power = SeriesKey { device: "ze-sim GPU".into(), group: "Telemetry".into(), metric: "Package power".into() };
    settings.arrangement.assign(&power, None);
    let mut h = crate::support::with_inventory(crate::support::app_on(&sim, settings), crate::support::WINDOW);
    h.step();
    let panes = &h.state().panes.arrangement.panes;
    let kept: Vec<&SeriesKey> = panes.iter().flat_map(|p| &p.series).collect();
    assert_eq!(kept, [&here, &power], "series this machine has stay");
    assert!(h.state().state.banners.is_empty(), "nothing to say");
}
