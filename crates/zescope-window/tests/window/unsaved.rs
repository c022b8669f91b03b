//! Unsaved data and crash recovery, driven through egui_kittest: Quit, Open and Start over a
//! changed recording ask first (Save / Discard / Cancel) and Save carries on once the file is
//! written; a recovered checkpoint is not offered again after a clean exit, but is after a crash.

use crate::support::pump;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use zescope_model::session::autosave::{Autosaver, Recoverable, find_recoverable_in};
use zescope_model::session::{Capture, RunHistory};
use zescope_model::view::panes::Arrangement;
use zescope_model::view::timeview::TimeView;
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};
use zescope_window::ZescopeApp;
use zescope_window::dialogs::ScriptedDialogs;
use zescope_window::link::SamplerLink;
use zescope_window::settings::Settings;

fn harness(link: Box<dyn SamplerLink>, answers: Vec<Option<PathBuf>>) -> Harness<'static, ZescopeApp> {
    let mut app = ZescopeApp::new(link, Settings::default(), Store::new(64 << 20));
    app.auto_start = false;
    app.files.dialogs = Box::new(Arc::new(ScriptedDialogs::answering(answers)));
    crate::support::harness_of(app, crate::support::WINDOW)
}

/// Two steps: a new window or modal is sized on its first frame and shown on the next.
fn settle(h: &mut Harness<'_, ZescopeApp>) {
    h.step();
    h.step();
}

fn example() -> PathBuf {
    crate::support::example_session()
}

#[test]
fn open_start_and_quit_ask_before_discarding_unsaved_data() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("before-open.ron");
    let sim = crate::support::sim(|_| {});
    let mut h = harness(Box::new(crate::support::sampler_on(&sim)), vec![Some(example()), Some(saved.clone())]);
    pump(&mut h, "the inventory", |a| a.state.inventory.is_some());
    h.get_by_label("Start").click();
    pump(&mut h, "samples", |a| a.state.ingest.samples_total > 20);

    // Quit → Cancel: nothing happens.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Q);
    settle(&mut h);
    h.get_by_label("Unsaved data");
    h.get_by_label("Cancel").click();
    settle(&mut h);
    assert!(h.state().quit.is_none() && h.state().state.ingest.run.is_some(), "still running");
    assert!(h.query_by_label("Unsaved data").is_none());

    // Open → Save…: the live data is saved first, then the session opens.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    settle(&mut h);
    h.get_by_label_contains("Opening a session discards");
    assert!(h.state().files.recording.is_none(), "nothing opened before the answer");
    h.get_by_label("Save…").click();
    pump(&mut h, "the save, then the opened session", |a| a.files.recording.is_some());
    assert!(zescope_model::session::load(&saved).is_ok_and(|s| s.raw_values() > 0), "the live data was saved");
    assert_eq!(h.state().files.recording.as_deref(), Some(example().as_path()));
    assert!(!h.state().has_unsaved(), "an opened file is saved data");

    // A marker changes the recording; Start would replace it → Discard starts the new run.
    h.key_press(egui::Key::M);
    h.step();
    assert!(h.state().has_unsaved());
    h.get_by_label("Start").click();
    settle(&mut h);
    h.get_by_label_contains("Starting a new run discards");
    assert!(h.state().files.recording.is_some(), "not replaced before the answer");
    h.get_by_label("Discard").click();
    pump(&mut h, "the new run", |a| a.state.ingest.run.is_some() && a.state.ingest.samples_total > 5);
    assert!(h.state().files.recording.is_none());

    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// A checkpoint left by a zescope that crashed, under `root`.
fn crashed_checkpoint(root: &Path) -> Recoverable {
    let mut store = Store::new(usize::MAX);
    let id = store.begin_stream(StreamDesc {
        name: "s".into(),
        series: vec![SeriesDesc { name: "a".into(), unit: "u".into(), kind: SeriesKind::Gauge }],
    });
    let ts: Vec<i64> = (1..=500).map(|i| i * 1_000_000).collect();
    let vals: Vec<f64> = (1..=500).map(f64::from).collect();
    store.append(id, &ts, &vals).unwrap();
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    let mut saver = Autosaver::in_root(root).unwrap();
    assert!(
        saver.checkpoint(&store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] })
    );
    saver.wait().unwrap();
    drop(saver); // no discard: as if the process died
    let mut found = find_recoverable_in(root);
    assert_eq!(found.len(), 1);
    found.remove(0)
}

fn recover(h: &mut Harness<'_, ZescopeApp>) {
    settle(h);
    h.get_by_label("Recover the last session?");
    h.get_by_label("Recover").click();
    settle(h);
    assert!(h.state().files.recording.is_some() && h.state().state.ingest.samples_total == 500);
    assert!(h.state().has_unsaved(), "recovered data is not in any file");
}

#[test]
fn a_recovered_checkpoint_is_not_offered_again_after_a_clean_exit() {
    let root = tempfile::tempdir().unwrap();

    // Recovered, then quit (Discard): gone.
    let mut h = harness(Box::new(crate::support::NoSampler), vec![]);
    h.state_mut().files.recover = Some(crashed_checkpoint(root.path()));
    recover(&mut h);
    crate::support::quit_discarding(&mut h);
    drop(h);
    assert!(find_recoverable_in(root.path()).is_empty(), "not offered again after a clean exit");

    // Recovered and saved: quitting does not ask, and the checkpoint is gone.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("recovered.ron");
    let mut h = harness(Box::new(crate::support::NoSampler), vec![Some(saved.clone())]);
    h.state_mut().files.recover = Some(crashed_checkpoint(root.path()));
    recover(&mut h);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::S);
    pump(&mut h, "the save", |a| a.files.current.as_deref() == Some(saved.as_path()));
    assert!(!h.state().has_unsaved());
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Q);
    h.step();
    assert!(h.state().quit.is_some(), "saved data: quit without asking");
    drop(h);
    assert!(find_recoverable_in(root.path()).is_empty());

    // Recovered, then the process dies again: still offered next time.
    let mut h = harness(Box::new(crate::support::NoSampler), vec![]);
    h.state_mut().files.recover = Some(crashed_checkpoint(root.path()));
    recover(&mut h);
    assert!(find_recoverable_in(root.path()).is_empty(), "held by the zescope that recovered it");
    drop(h);
    assert_eq!(find_recoverable_in(root.path()).len(), 1, "offered again after a crash");
}

/// The question names what is unsaved: after a save of a live run, only the samples since; after
/// a marker on an opened file, only the marker; nothing when nothing is.
#[test]
fn the_question_names_only_what_no_file_holds() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("live.ron");
    let sim = crate::support::sim(|_| {});
    let answers = vec![Some(saved.clone()), Some(example()), Some(example())];
    let mut h = harness(Box::new(crate::support::sampler_on(&sim)), answers);
    pump(&mut h, "the inventory", |a| a.state.inventory.is_some());
    h.get_by_label("Start").click();
    pump(&mut h, "samples", |a| a.state.ingest.samples_total > 20);

    // Saved while running; then more samples come.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::S);
    pump(&mut h, "the save", |a| a.files.current.is_some() && a.files.saving().is_none());
    let at_save = zescope_model::session::load(&saved).unwrap().raw_values();
    let total = h.state().state.ingest.samples_total;
    pump(&mut h, "more samples", |a| a.state.ingest.samples_total > total + 20);
    let summary = h.state().unsaved_summary().expect("the samples since the save are unsaved");
    assert!(summary.contains("recorded after") && summary.contains("(the last save)"), "{summary}");
    let shown = h.state().state.ingest.samples_total;
    assert!(!summary.contains(&format!("the {shown} ")), "not every sample shown: {summary}");
    assert!(at_save > 0);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    settle(&mut h);
    h.get_by_label_contains("Opening a session discards what no file holds: the ");
    h.get_by_label("Discard").click();
    pump(&mut h, "the opened session", |a| a.files.recording.is_some() && !a.opening());

    // Opened as it is: nothing to ask.
    assert_eq!(h.state().unsaved_summary(), None);
    // One marker: the question is about the marker alone.
    h.key_press(egui::Key::M);
    h.step();
    assert_eq!(h.state().unsaved_summary().as_deref(), Some("1 new marker"));
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Q);
    settle(&mut h);
    h.get_by_label("Quitting discards what no file holds: 1 new marker.");
    h.get_by_label("Discard").click();
    h.step();
    assert!(h.state().quit.is_some());
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// Markers removed from a saved file: the question names them ("2 markers removed"), not every
/// sample shown, which the file holds.
#[test]
fn the_question_after_clearing_markers_names_the_markers_removed() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("marked.ron");
    let mut h = harness(Box::new(crate::support::NoSampler), vec![Some(example()), Some(saved.clone())]);
    h.step();
    let open = h.state_mut().files.ask_open();
    h.state_mut().perform(open);
    pump(&mut h, "the opened session", |a| a.files.recording.is_some() && !a.opening());
    for _ in 0..2 {
        // M opens the marker's name field; Escape keeps its default name.
        h.key_press(egui::Key::M);
        h.step();
        h.key_press(egui::Key::Escape);
        h.step();
    }
    assert_eq!(h.state().unsaved_summary().as_deref(), Some("2 new markers"));
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::S);
    pump(&mut h, "the save", |a| a.files.current.as_deref() == Some(saved.as_path()) && a.files.saving().is_none());
    assert_eq!(h.state().unsaved_summary(), None, "saved with its markers");

    h.get_by_label("View").click();
    settle(&mut h);
    h.get_by_label("Clear markers").click();
    settle(&mut h);
    assert!(h.state().markers.is_empty());
    assert_eq!(h.state().unsaved_summary().as_deref(), Some("2 markers removed"));
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Q);
    settle(&mut h);
    h.get_by_label("Quitting discards what no file holds: 2 markers removed.");
}

/// The question over a live run keeps its buttons where they are while the count of unsaved
/// samples it names grows (a button that moves under the pointer takes a click meant for its
/// neighbour, or none).
#[test]
fn the_question_over_a_live_run_keeps_its_buttons_still() {
    let sim = crate::support::sim(|_| {});
    let mut h = harness(Box::new(crate::support::sampler_on(&sim)), vec![]);
    pump(&mut h, "the inventory", |a| a.state.inventory.is_some());
    h.get_by_label("Start").click();
    pump(&mut h, "samples", |a| a.state.ingest.samples_total > 20);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Q);
    settle(&mut h);
    let buttons = ["Save…", "Discard", "Cancel"];
    let at_first: Vec<_> = buttons.iter().map(|b| h.get_by_label(b).rect()).collect();
    let mut texts = std::collections::BTreeSet::new();
    for _ in 0..60 {
        std::thread::sleep(std::time::Duration::from_millis(15));
        h.step();
        texts.insert(h.state().unsaved_summary().unwrap());
        let now: Vec<_> = buttons.iter().map(|b| h.get_by_label(b).rect()).collect();
        assert_eq!(now, at_first, "the buttons moved as the question changed: {texts:?}");
    }
    assert!(texts.len() > 5, "the count grew while asking: {texts:?}");
    h.get_by_label("Discard").click();
    h.step();
    assert!(h.state().quit.is_some(), "Discard quits");
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
