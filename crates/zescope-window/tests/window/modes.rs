//! The window's one state (live, paused, stopped, recording open), driven through egui_kittest
//! against a sampler on a private simulated driver: the toolbar and the status bar never
//! contradict each other, an opened recording is fitted to its length and never takes live
//! samples, even from a run asked for before it was opened.

use crate::support::pump;

use std::sync::Arc;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use zescope_model::view::{Activity, data_x};
use zescope_sampler::Command;
use zescope_store::Store;
use zescope_window::ZescopeApp;
use zescope_window::dialogs::ScriptedDialogs;
use zescope_window::settings::Settings;

/// Which of the toolbar's mode badges and buttons are on screen and usable (a control the state
/// does not offer keeps its place, greyed).
fn shown(h: &Harness<'_, ZescopeApp>) -> Vec<&'static str> {
    [" LIVE ", " PAUSED ", " ZOOMED ", " STOPPED ", " FILE ", "Pause", "Follow live", "Fit"]
        .into_iter()
        .filter(|l| h.query_by_label(l).is_some_and(|n| !format!("{n:?}").contains("disabled: true")))
        .collect()
}

#[test]
fn toolbar_and_status_follow_one_state() {
    let example = crate::support::example_session();
    let sim = crate::support::sim(|_| {});
    let mut app =
        ZescopeApp::new(Box::new(crate::support::sampler_on(&sim)), Settings::default(), Store::new(64 << 20));
    app.files.dialogs = Box::new(Arc::new(ScriptedDialogs::answering([Some(example.clone())])));
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);

    pump(&mut h, "samples", |a| a.state.ingest.samples_total > 20);
    h.step();
    assert_eq!(h.state().activity(), Activity::Live);
    assert_eq!(shown(&h), [" LIVE ", "Pause"]);

    h.key_press(egui::Key::Space);
    h.step();
    assert_eq!(h.state().activity(), Activity::Paused { zoomed: false });
    assert_eq!(shown(&h), [" PAUSED ", "Follow live", "Fit"]);
    assert!(h.query_by_label_contains("view frozen, sampling continues").is_some(), "the status bar agrees");
    h.get_by_label("Follow live").click();
    h.step();
    h.step();
    assert_eq!(shown(&h), [" LIVE ", "Pause"]);

    // Stopped: no LIVE, no Pause, whatever the time axis was doing.
    h.get_by_label("Stop").click();
    pump(&mut h, "the run to stop", |a| a.state.ingest.run.is_none());
    h.step();
    assert!(h.state().view.is_live(), "the axis still follows the (stopped) data");
    assert_eq!(h.state().activity(), Activity::Stopped);
    assert_eq!(shown(&h), [" STOPPED ", "Fit"]);
    assert!(h.query_by_label_contains("· stopped").is_some());
    h.key_press(egui::Key::Space);
    h.step();
    assert_eq!(shown(&h), [" STOPPED ", "Fit"], "Space does not pause a stopped view");

    // Open a recording (the stopped run's samples are unsaved: Discard). It is fitted whole.
    let open = h.state_mut().files.ask_open();
    h.state_mut().perform(open);
    h.step();
    assert!(h.state().unsaved.asking.is_some(), "the stopped run's samples are unsaved: asks first");
    h.step();
    h.get_by_label("Discard").click();
    pump(&mut h, "the recording", |a| a.files.recording.is_some());
    h.step();
    assert_eq!(h.state().activity(), Activity::File);
    assert_eq!(shown(&h), [" FILE ", "Fit"], "and its Info button, no live controls");
    assert!(h.query_by_label_contains("showing example-session.ron").is_some(), "the status bar names the file");
    let a = h.state();
    let data = data_x(&a.store).expect("the recording has data");
    assert!(data.1 - data.0 < 60.0, "shorter than the default 1 min window: {data:?}");
    assert_eq!(a.view.range(Some(data)), Some(data), "the recording fills the time axis");

    // Its metadata panel: when, what, how long, markers.
    h.get_by_label("Info").click();
    h.step();
    h.step();
    for what in ["Recorded", "Source", "Duration", "Run 1", "Markers"] {
        h.get_by_label(what);
    }
    assert!(h.query_all_by_label_contains(" UTC").next().is_some(), "the recording's start as a date");

    // A run asked for behind the recording's back (a Start in flight when the file opened) is
    // stopped at once and adds nothing to it.
    let a = h.state();
    let before = (a.state.ingest.samples_total, a.store.memory_used(), a.state.ingest.series.len());
    h.state().send(Command::Start(crate::support::run_config(&["ComputeBasic"])));
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(800);
    while std::time::Instant::now() < deadline {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    pump(&mut h, "the stray run to be torn down", |_| sim.live_imports() == 0);
    let a = h.state();
    assert_eq!((a.state.ingest.samples_total, a.store.memory_used(), a.state.ingest.series.len()), before);
    assert!(a.state.ingest.run.is_none());
    assert_eq!(shown(&h), [" FILE ", "Fit"], "and its Info button, no live controls");

    // Start leaves the recording for a new live run.
    h.get_by_label("Start").click();
    pump(&mut h, "a new live run", |a| a.state.ingest.samples_total > 5);
    h.step();
    assert_eq!(shown(&h), [" LIVE ", "Pause"]);
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// The toolbar's controls keep their places whatever the state (live, paused, zoomed, stopped):
/// a click meant for "+ Marker" lands on it.
#[test]
fn toolbar_controls_stay_where_they_are_in_every_state() {
    use egui_kittest::kittest::Queryable;
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.get_by_label("Start").click();
    crate::support::pump(&mut h, "samples", |a| a.state.ingest.samples_total > 20);
    h.step();
    let places = |h: &egui_kittest::Harness<'_, zescope_window::ZescopeApp>| -> Vec<egui::Rect> {
        ["Window:", "+ Pane", "+ Marker", "Fit"].iter().map(|l| h.get_by_label(l).rect()).collect()
    };
    let live = places(&h);
    h.key_press(egui::Key::Space);
    h.step();
    h.step();
    crate::support::pump(&mut h, "new samples while paused", |a| a.view.new_since_frozen > 0);
    h.step();
    assert_eq!(places(&h), live, "paused, with a count of new samples");
    h.state_mut().view.user_moved((0.1, 0.5));
    h.step();
    h.step();
    assert_eq!(places(&h), live, "zoomed");
    h.get_by_label("Stop").click();
    crate::support::pump(&mut h, "the run to stop", |a| a.state.ingest.run.is_none());
    h.step();
    assert_eq!(places(&h), live, "stopped");
    crate::support::quit_discarding(&mut h);
}

/// The window's title names the file shown, marked while it holds unsaved changes.
#[test]
fn the_title_names_the_file_shown() {
    let example = crate::support::example_session();
    let mut h = crate::support::showing(&example, Settings::default(), crate::support::WINDOW, None);
    h.step();
    assert_eq!(h.state().title(), "example-session.ron — zescope");
    h.key_press(egui::Key::M);
    h.step();
    h.step();
    assert_eq!(h.state().title(), "• example-session.ron — zescope", "a marker not saved yet");
}

/// The idle window asks for no frame: a recording shown, or a run stopped, paints again only
/// on input (no repaint scheduled at all), while a live run schedules its next frame.
#[test]
fn an_idle_window_schedules_no_frame() {
    let delay = |h: &Harness<'_, ZescopeApp>| {
        h.output().viewport_output.get(&egui::ViewportId::ROOT).map_or(std::time::Duration::MAX, |v| v.repaint_delay)
    };
    let example = crate::support::example_session();
    let mut h = crate::support::showing(&example, Settings::default(), crate::support::WINDOW, None);
    h.run();
    h.step();
    assert_eq!(delay(&h), std::time::Duration::MAX, "a recording shown: nothing to paint until input");

    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.get_by_label("Start").click();
    pump(&mut h, "samples", |a| a.state.ingest.samples_total > 20);
    h.step();
    assert!(delay(&h) < std::time::Duration::from_secs(1), "live: the next frame is scheduled");
    h.get_by_label("Stop").click();
    pump(&mut h, "the run to stop", |a| a.state.ingest.run.is_none());
    h.run();
    h.step();
    assert_eq!(delay(&h), std::time::Duration::MAX, "stopped: nothing to paint until input");
    crate::support::quit_discarding(&mut h);
}
