//! View files in the window: a view saved while sampling one simulated GPU (with a metric added by
//! hand that no simulated GPU has, as from another machine's catalogue) lays out another simulated
//! GPU of another name with the series it names, says which it lacks, and brings its window
//! length, held value range, colours and triggers along.

use egui_kittest::kittest::Queryable;
use zescope_model::view::ViewLength;
use zescope_model::viewfile::ViewFile;

use crate::support::pump;

fn started(sim: &std::sync::Arc<ze_sim::Sim>) -> egui_kittest::Harness<'static, zescope_window::ZescopeApp> {
    let mut h = crate::support::harness_on(sim);
    h.get_by_label("Start").click();
    pump(&mut h, "samples in panes", |a| a.state.ingest.samples_total > 20 && !a.panes.arrangement.panes.is_empty());
    h
}

#[test]
fn a_view_saved_on_one_device_lays_out_another() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("busy.ron");

    // Saved on the built-in simulated GPU: two panes as the window placed them, one held at 0..100,
    // a colour picked, the 10 s window and a trigger.
    let sim = crate::support::sim(|_| {});
    let mut h = started(&sim);
    {
        let a = h.state_mut();
        a.view.set_window(ViewLength::Sec10);
        let pane = a.panes.arrangement.panes[0].id;
        a.panes.y_lock.insert(pane, (0.0, 100.0));
        let first = a.panes.arrangement.panes[0].series[0].clone();
        a.panes.arrangement.colors.insert(first, [10, 20, 30]);
        assert!(a.state.triggers.add("ComputeBasic/GpuUtilization > 80", None));
    }
    h.step();
    let mut saved = h.state().current_view("busy");
    let mut extra = saved.panes[0].series[0].clone();
    extra.metric = "EuActive".into();
    saved.panes[0].series.push(extra);
    saved.save(&path).unwrap();
    let shape: Vec<Vec<(String, String)>> = h
        .state()
        .panes
        .arrangement
        .panes
        .iter()
        .map(|p| p.series.iter().map(|k| (k.group.clone(), k.metric.clone())).collect())
        .collect();
    crate::support::quit_discarding(&mut h);

    // Another machine: its GPU has another name.
    let other = crate::support::sim(|c| c.devices[0].name = "Another GPU".into());
    let mut h = started(&other);
    let view = ViewFile::load(&path).unwrap();
    assert_eq!(view, saved, "read back as written");
    h.state_mut().load_view(view);
    h.step();
    h.step();
    let a = h.state();
    let now: Vec<Vec<(String, String)>> = a
        .panes
        .arrangement
        .panes
        .iter()
        .map(|p| p.series.iter().map(|k| (k.group.clone(), k.metric.clone())).collect())
        .collect();
    assert_eq!(now, shape, "the same panes");
    assert!(a.panes.arrangement.panes.iter().flat_map(|p| &p.series).all(|k| k.device == "Another GPU"));
    assert_eq!(a.panes.y_lock.get(&a.panes.arrangement.panes[0].id), Some(&(0.0, 100.0)));
    let first = &a.panes.arrangement.panes[0].series[0];
    assert_eq!(a.panes.arrangement.colors.get(first), Some(&[10, 20, 30]));
    assert_eq!(a.view.window, ViewLength::Sec10);
    assert_eq!(a.state.triggers.eval.triggers()[0].text, "ComputeBasic/GpuUtilization > 80");
    h.get_by_label_contains("names series these devices lack: gpu/ComputeBasic/EuActive");
    crate::support::quit_discarding(&mut h);
    assert!(other.report().is_clean(), "{:?}", other.report());
}

#[test]
fn the_shipped_views_are_listed_and_one_loads() {
    let listed = zescope_window::views::list(&zescope_window::views::dirs());
    let names: Vec<String> =
        listed.iter().filter_map(|p| Some(p.file_stem()?.to_string_lossy().into_owned())).collect();
    for v in ["compute-occupancy", "memory-traffic", "thermals-and-power", "npu-inference"] {
        assert!(names.iter().any(|n| n == v), "{v} in {names:?}");
    }
    let sim = crate::support::sim(|_| {});
    let mut h = started(&sim);
    let path = listed.iter().find(|p| p.ends_with("compute-occupancy.ron")).unwrap();
    h.state_mut().load_view(ViewFile::load(path).unwrap());
    h.step();
    let a = h.state();
    let metrics: Vec<&str> =
        a.panes.arrangement.panes.iter().flat_map(|p| &p.series).map(|k| k.metric.as_str()).collect();
    assert_eq!(metrics, ["GpuUtilization", "GpuFrequency"], "what the built-in GPU has of it");
    assert!(a.state.banners.is_empty(), "its patterns are optional: nothing to say");
    crate::support::quit_discarding(&mut h);
}

/// Loading a view keeps the user's triggers and their firings; the view's join them (one
/// already there is not added twice). File → Views lists the views by their names.
#[test]
fn loading_a_view_keeps_the_users_triggers() {
    let dir = tempfile::tempdir().unwrap();
    let sim = crate::support::sim(|_| {});
    let mut h = started(&sim);
    let mine = "ComputeBasic/GpuUtilization > 80";
    assert!(h.state_mut().state.triggers.add(mine, None));
    h.step();
    let firing = zescope_model::triggers::Firing { trigger: 0, t_ns: 1, series: "x".into(), value: 90.0 };
    h.state_mut().state.triggers.firings.push(firing.clone());
    let mut view = h.state().current_view("mine");
    view.triggers.clear();
    let trigger = |expr: &str| zescope_model::viewfile::ViewTrigger { expr: expr.into(), pre_s: 1.0, post_s: 1.0 };
    view.triggers = vec![trigger("ComputeBasic/GpuFrequency < 500"), trigger(mine)];
    let path = dir.path().join("v.ron");
    view.save(&path).unwrap();
    h.state_mut().load_view(ViewFile::load(&path).unwrap());
    h.step();
    let t: Vec<String> = h.state().state.triggers.eval.triggers().iter().map(|t| t.text.clone()).collect();
    assert_eq!(t, [mine, "ComputeBasic/GpuFrequency < 500"], "the user's first, the view's new one after");
    assert_eq!(h.state().state.triggers.firings, [firing], "the firings stay");
    assert!(h.state().views.said.as_deref().is_some_and(|s| s.contains("1 of its 2 triggers added")));
    // File → Views lists the shipped views by name.
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Views").click();
    h.run();
    h.get_by_label("Compute occupancy");
    assert!(h.query_by_label("compute-occupancy").is_none(), "not by file name");
    h.key_press(egui::Key::Escape);
    h.run();
    crate::support::quit_discarding(&mut h);
}

/// Loads a view of one pane per (group, metric) of `panes`, and lets the window lay it out.
fn load(h: &mut egui_kittest::Harness<'static, zescope_window::ZescopeApp>, panes: [(&str, &str); 2]) {
    let panes: Vec<String> =
        panes.iter().map(|(g, m)| format!(r#"(series: [(group: "{g}", metric: "{m}")])"#)).collect();
    let view = ViewFile::parse(&format!("(version: 1, name: \"v\", panes: [{}])", panes.join(", "))).unwrap();
    h.state_mut().load_view(view);
    h.step();
    h.step();
}

/// A view naming series of a group the device has but the run does not sample says so, and
/// which group to tick; one naming a metric no device has says the devices lack it.
#[test]
fn a_view_says_which_groups_to_tick_apart_from_what_the_devices_lack() {
    let sim = crate::support::sim(|_| {});
    let mut h = started(&sim);
    load(&mut h, [("KernelTrace", "KernelMarker"), ("ComputeBasic", "NoSuchMetric")]);
    h.get_by_label_contains("names series of groups not sampled now: */KernelTrace/KernelMarker");
    assert!(h.query_all_by_label("View shown in part").count() == 2, "titled for what it is, not settings");
    assert!(h.query_by_label("Remembered settings adjusted").is_none());
    h.get_by_label_contains("tick KernelTrace on the left");
    h.get_by_label_contains("names series these devices lack: */ComputeBasic/NoSuchMetric");
    // No pane of the view found a series, while the run goes on: not "press Start", and the
    // banners do not say "the rest is shown" of nothing.
    h.get_by_label_contains("No pane shows the series sampled");
    h.get_by_label_contains("*/KernelTrace/KernelMarker; none of its series is sampled now");
    assert!(h.query_by_label_contains("the rest is shown").is_none());
    assert!(h.query_by_label_contains("press Start").is_none());
    // The banner offers to sample the group: the run restarts with it, and the view is laid
    // out again on the new run, its pane showing the series it named.
    let run = h.state().state.ingest.run.as_ref().map(|r| r.info.run);
    h.get_by_label("Sample KernelTrace").click();
    h.step();
    let gpu = h.state().state.inventory.as_ref().unwrap().devices[0].path;
    assert!(h.state().state.selection.groups_of(gpu).is_some_and(|g| g.contains("KernelTrace")), "ticked");
    pump(&mut h, "the new run lays the view out", |app| {
        app.state.ingest.run.as_ref().map(|r| r.info.run) != run && app.views.pending.is_none()
    });
    let shown: Vec<String> =
        h.state().panes.arrangement.panes.iter().flat_map(|p| p.series.iter().map(|k| k.metric.clone())).collect();
    assert!(shown.contains(&"KernelMarker".to_owned()), "the view's pane shows it: {shown:?}");
    assert!(h.query_by_label_contains("groups not sampled now").is_none(), "the banner went with the offer");
    crate::support::quit_discarding(&mut h);
}

/// A view shown in part says the rest is shown.
#[test]
fn a_view_shown_in_part_says_the_rest_is_shown() {
    let sim = crate::support::sim(|_| {});
    let mut h = started(&sim);
    load(&mut h, [("ComputeBasic", "GpuUtilization"), ("ComputeBasic", "NoSuchMetric")]);
    h.get_by_label_contains("names series these devices lack: */ComputeBasic/NoSuchMetric; the rest is shown");
    crate::support::quit_discarding(&mut h);
}
