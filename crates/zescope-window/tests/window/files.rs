//! The window's file commands, driven through egui_kittest with scripted dialogs: save a live
//! session (Ctrl+S, in the background), open it again (shown as a recording, same panes), export
//! a pane, and a new run leaving the recording.

use crate::support::pump;

use std::sync::Arc;

use egui_kittest::kittest::Queryable;
use zescope_store::Store;
use zescope_window::ZescopeApp;
use zescope_window::dialogs::{FileKind, ScriptedDialogs};
use zescope_window::settings::Settings;

#[test]
fn save_open_export_and_leave_a_recording() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("run.ron");
    let png = dir.path().join("pane.png");
    let csv = dir.path().join("all.csv");
    let answers = [Some(session.clone()), Some(session.clone()), Some(png.clone()), Some(csv.clone())];
    let dialogs = Arc::new(ScriptedDialogs::answering(answers));
    let sim = crate::support::sim(|_| {});
    let mut app =
        ZescopeApp::new(Box::new(crate::support::sampler_on(&sim)), Settings::default(), Store::new(64 << 20));
    app.files.dialogs = Box::new(dialogs.clone());
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);

    // Live data, then Ctrl+S: asks where (no current file), saves in the background.
    pump(&mut h, "samples", |a| a.state.ingest.samples_total > 50);
    h.key_press(egui::Key::M);
    h.step();
    assert_eq!(h.state().markers.len(), 1, "M adds a marker");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::S);
    pump(&mut h, "the save to finish", |a| a.files.current.is_some());
    let saved = zescope_model::session::load(&session).expect("the saved session loads");
    assert!(saved.raw_values() > 0);
    let panes_live = h.state().panes.arrangement.panes.len();
    assert_eq!(saved.view.panes.len(), panes_live, "the view is in the file");
    assert_eq!(saved.markers.len(), 1, "markers are in the file");

    // Open it: samples taken since the save would be lost, so it asks first; Discard. The run
    // is stopped first (teardown), then the file is shown as a recording.
    let n = h.state().state.ingest.samples_total;
    pump(&mut h, "samples after the save", |a| a.state.ingest.samples_total > n);
    let open = h.state_mut().files.ask_open();
    h.state_mut().perform(open);
    h.step();
    assert!(h.state().files.recording.is_none(), "nothing opened before the answer");
    assert!(h.state().unsaved.asking.is_some(), "asks first");
    h.step();
    h.get_by_label("Discard").click();
    pump(&mut h, "the recording", |a| a.files.recording.is_some());
    h.step();
    let a = h.state();
    assert!(a.state.ingest.run.is_none());
    assert_eq!(sim.live_imports(), 0, "the live run was torn down before opening");
    assert_eq!(a.panes.arrangement.panes.len(), panes_live);
    assert_eq!(a.markers.len(), 1, "markers come back with the session");
    assert!(a.store.memory_used() > 0 && !a.state.ingest.series.is_empty());
    h.get_by_label(" FILE ");

    // Export the first pane through its menu.
    h.get_all_by_label("Export").next().expect("a pane export menu").click();
    h.step();
    h.step();
    h.get_by_label("PNG image…").click();
    pump(&mut h, "the export", |a| png.exists() && a.files.writing().is_none());
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    let asked: Vec<FileKind> = dialogs.asked.lock().unwrap().iter().map(|(k, _)| *k).collect();
    assert_eq!(asked, [FileKind::Session, FileKind::Session, FileKind::File(&zescope_model::write::Png)]);

    // All data as CSV: written in the background (the frame does not wait for it), with the
    // markers beside it as `zescope export` writes them; the names offered say what each holds.
    let f = &h.state().files;
    assert_eq!(f.write_name(FileKind::File(&zescope_model::write::Csv), None, true), "run-visible.csv");
    assert_eq!(f.write_name(FileKind::File(&zescope_model::write::Csv), None, false), "run-all.csv");
    assert_eq!(f.write_name(FileKind::File(&zescope_model::write::Png), Some(1), false), "run-pane-2.png");
    let export = h.state_mut().files.ask_write(FileKind::File(&zescope_model::write::Csv), None, false);
    h.state_mut().perform(export);
    assert!(h.state().files.writing().is_some(), "the export runs beside the window");
    pump(&mut h, "the CSV export", |a| a.files.writing().is_none());
    let markers = dir.path().join("all.markers.csv");
    assert!(csv.exists() && markers.exists(), "the CSV and its markers file");
    let lines = std::fs::read_to_string(&markers).unwrap();
    assert_eq!(lines.lines().count(), 2, "a header and the one marker: {lines}");
    assert!(h.state().files.note.as_deref().is_some_and(|n| n.contains("all.markers.csv (1 marker)")));

    // Start: a new live run replaces the recording.
    h.get_by_label("Start").click();
    pump(&mut h, "a new live run", |a| a.state.ingest.run.is_some() && a.state.ingest.samples_total > 5);
    assert!(h.state().files.recording.is_none());
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// Failed file commands are the window's own banners (what failed, what to try), not sampler
/// errors, and leave what is shown alone.
#[test]
fn failed_open_and_export_show_the_windows_own_banners() {
    use zescope_window::banner::{BannerError, UiErrorKind};
    let dir = tempfile::tempdir().unwrap();
    let not_a_session = dir.path().join("notes.ron");
    std::fs::write(&not_a_session, "hello").unwrap();
    let example = crate::support::example_session();
    let unwritable = dir.path().join("no/such/dir/pane.png");
    let dialogs = ScriptedDialogs::answering([Some(example), Some(not_a_session.clone()), Some(unwritable.clone())]);
    let mut app = ZescopeApp::new(Box::new(crate::support::NoSampler), Settings::default(), Store::new(64 << 20));
    app.files.dialogs = Box::new(dialogs);
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);
    h.step();
    let open = h.state_mut().files.ask_open();
    h.state_mut().perform(open);
    h.step();
    assert!(h.state().state.banners.is_empty(), "the example session opens");
    let panes = h.state().panes.arrangement.panes.clone();

    let open = h.state_mut().files.ask_open();
    h.state_mut().perform(open);
    let export = h.state_mut().files.ask_write(FileKind::File(&zescope_model::write::Png), None, false);
    h.state_mut().perform(export);
    pump(&mut h, "the export to fail", |a| a.state.banners.len() == 2);
    let kinds: Vec<UiErrorKind> = h
        .state()
        .state
        .banners
        .iter()
        .map(|b| match &b.error {
            BannerError::Ui(e) => e.kind,
            BannerError::Sampler(e) => panic!("a sampler error for a file command: {e:?}"),
        })
        .collect();
    assert_eq!(kinds, [UiErrorKind::Open, UiErrorKind::Write]);
    h.get_by_label("Cannot open");
    h.get_by_label("Export failed");
    h.get_by_label_contains("no/such/dir");
    // Under each title the file and why, the title not said again ("Cannot open · cannot open …").
    let said: Vec<String> = (h.state().state.banners.iter())
        .map(|b| match &b.error {
            BannerError::Ui(e) => e.message.clone(),
            BannerError::Sampler(e) => e.message.clone(),
        })
        .collect();
    assert!(said[0].starts_with(&format!("{}: ", not_a_session.display())), "{said:?}");
    assert!(said[1].starts_with(&format!("{}: ", unwritable.display())), "{said:?}");
    assert!(said.iter().all(|m| !m.contains("cannot open") && !m.contains("failed")), "{said:?}");
    assert_eq!(h.state().panes.arrangement.panes, panes, "what was shown is left as it was");
}

/// The workload's markers reach a live window: a range and an instant sent through the markers
/// crate are on the window's list (drawn on every pane) and saved with the session.
#[test]
fn a_live_window_takes_the_workloads_markers_and_saves_them() {
    let dir = tempfile::tempdir().unwrap();
    // In a folder zescope makes (0700): tempfile's folder may be open to others.
    let socket = dir.path().join("private").join("markers.sock");
    let session = dir.path().join("run.ron");
    let sim = crate::support::sim(|_| {});
    let mut app =
        ZescopeApp::new(Box::new(crate::support::sampler_on(&sim)), Settings::default(), Store::new(64 << 20));
    app.files.dialogs = Box::new(Arc::new(ScriptedDialogs::answering([Some(session.clone())])));
    app.markers_in = Some(zescope_model::markers::Listener::start(&socket, Default::default()).unwrap());
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);
    pump(&mut h, "samples", |a| a.state.ingest.samples_total > 50);
    let m = zescope_markers::Sender::connect_to(Some(socket.clone()));
    m.begin("solve");
    m.instant("converged");
    m.end("solve");
    m.begin("still going");
    pump(&mut h, "the markers", |a| a.markers.len() == 3);
    let a = h.state();
    let ranges: Vec<&str> = a.markers.closed_ranges().map(|r| r.0).collect();
    assert_eq!(ranges, vec!["solve"]);
    let (first, last) = a.store.total_time_range().unwrap();
    let solve = &a.markers.marks()[0];
    assert!(solve.t_ns > first && solve.t_ns <= last + 50_000_000, "on the samples' time axis");
    h.step();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::S);
    pump(&mut h, "the save to finish", |a| a.files.current.is_some());
    let saved = zescope_model::session::load(&session).unwrap();
    let spans: Vec<_> = saved.markers.iter().map(|m| (m.label.as_str(), m.span.is_instant())).collect();
    assert_eq!(spans, vec![("solve", false), ("converged", true), ("still going", false)]);
    assert_eq!(saved.markers[2].span, zescope_model::session::SpanRecord::Open);
}

/// File menu items keep their places when "Compare with <the last recording>" becomes possible
/// (a second file in the recent list): the item is always there, disabled until then.
/// A window without a run, its dialogs `dialogs`, once File → Open… opened the recording their
/// first answer names.
fn opened(dialogs: Box<dyn zescope_window::dialogs::Dialogs>) -> egui_kittest::Harness<'static, ZescopeApp> {
    let mut app = ZescopeApp::new(Box::new(crate::support::NoSampler), Settings::default(), Store::new(64 << 20));
    app.files.dialogs = dialogs;
    app.auto_start = false;
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);
    h.step();
    let open = h.state_mut().files.ask_open();
    h.state_mut().perform(open);
    pump(&mut h, "the recording", |a| a.files.recording.is_some() && !a.opening());
    h
}

#[test]
fn file_menu_items_do_not_move_when_a_comparison_becomes_possible() {
    let dir = tempfile::tempdir().unwrap();
    let example = crate::support::example_session();
    let copy = dir.path().join("copy.ron");
    let mut h = opened(Box::new(Arc::new(ScriptedDialogs::answering([Some(example), Some(copy.clone())]))));
    let save_at = |h: &mut egui_kittest::Harness<'_, ZescopeApp>| {
        h.get_by_label("File").click();
        h.step();
        h.step();
        let compare = h.query_all_by_label_contains("Compare with").count();
        let r = h.get_all_by_label_contains("Save").next().expect("File → Save").rect();
        h.key_press(egui::Key::Escape);
        h.step();
        h.step();
        (r, compare)
    };
    let (before, _) = save_at(&mut h);
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::S);
    pump(&mut h, "the save", |a| a.files.current.as_deref() == Some(copy.as_path()) && a.files.saving().is_none());
    let (after, compare) = save_at(&mut h);
    assert_eq!(compare, 2, "Compare with… and Compare with example-session.ron");
    assert_eq!(after.top(), before.top(), "Save did not move down: {before:?} -> {after:?}");
}

/// An opened recording is shown in its own panes, and the user's stay aside: the settings keep
/// them, and the next live run comes back to them. (The recording's panes were kept: a live run
/// of ComputeBasic after a RenderBasic recording, or at the next launch, started under panes
/// saying "RenderBasic of ze-sim GPU is not in the data shown".)
#[test]
fn a_recordings_panes_are_its_own_and_the_next_live_run_comes_back_to_the_users() {
    let key = crate::support::gpu_key;
    let mut settings = Settings::default();
    settings.arrangement.assign(&key("ComputeBasic", "GpuFrequency"), None);
    settings.arrangement.assign(&key("ComputeBasic", "GpuPower"), None);
    let own = settings.arrangement.clone();
    let file = crate::support::example_session();
    let theirs = zescope_model::session::load(&file).unwrap().view;
    let sim = crate::support::sim(|_| {});
    let mut app = crate::support::app_on(&sim, settings);
    app.files.dialogs = Box::new(Arc::new(ScriptedDialogs::answering([Some(file)])));
    let mut h = crate::support::with_inventory(app, crate::support::WINDOW);
    let open = h.state_mut().files.ask_open();
    h.state_mut().perform(open);
    pump(&mut h, "the recording", |a| a.files.recording.is_some() && !a.opening());
    let names = |k: (&str, &str, &str)| format!("{}/{}/{}", k.0, k.1, k.2);
    let shown: Vec<Vec<String>> = (h.state().panes.arrangement.panes.iter())
        .map(|p| p.series.iter().map(|k| names((&k.device, &k.group, &k.metric))).collect())
        .collect();
    let saved: Vec<Vec<String>> = (theirs.panes.iter())
        .map(|p| p.series.iter().map(|k| names((&k.device, &k.group, &k.metric))).collect())
        .collect();
    assert_eq!(shown, saved, "the recording's panes");
    assert_eq!(h.state().settings().arrangement, own, "the settings keep the user's own");

    h.get_by_label("Start").click();
    pump(&mut h, "a live run", |a| a.state.ingest.run.is_some() && a.state.ingest.samples_total > 5);
    h.step();
    let panes = &h.state().panes.arrangement.panes;
    let first: Vec<&str> = panes[0].series.iter().map(|k| k.metric.as_str()).collect();
    let second: Vec<&str> = panes[1].series.iter().map(|k| k.metric.as_str()).collect();
    assert_eq!((first[0], second[0]), ("GpuFrequency", "GpuPower"), "the user's panes are back: {panes:?}");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// A recording opened is shown from its first pane, whatever the panes shown before were
/// scrolled to (a recording opened after another scrolled to its third pane opened in the middle,
/// and so did the window at launch, from egui's remembered state).
#[test]
fn a_recording_opens_at_its_first_pane() {
    let file = crate::support::example_session();
    let mut h = crate::support::showing(&file, Settings::default(), [900.0, 600.0], Some(0.05));
    h.step();
    let first_top = |h: &egui_kittest::Harness<'_, ZescopeApp>| {
        let id = h.state().panes.arrangement.panes[0].id;
        h.state().plot_frames.iter().find(|(p, _)| *p == id).and_then(|(_, r)| r.map(|r| r.top()))
    };
    let top = first_top(&h).expect("the first pane's plot is drawn");
    assert!(h.state().panes.arrangement.panes.len() > 2, "panes to scroll through");
    // Scroll the panes down (the wheel over the first pane's legend, not a plot, which zooms).
    let plot = h.state().plot_frames.iter().find_map(|(_, r)| *r).unwrap();
    crate::support::wheel(&mut h, egui::pos2(plot.center().x, plot.bottom() + 40.0), -1200.0, egui::Modifiers::NONE);
    h.run();
    assert!(first_top(&h).is_none_or(|t| t < top - 100.0), "scrolled down: {:?} from {top}", first_top(&h));
    // The same recording opened again: from its first pane.
    h.state_mut().files.dialogs = Box::new(Arc::new(ScriptedDialogs::answering([Some(file.clone())])));
    let open = h.state_mut().files.ask_open();
    h.state_mut().perform(open);
    pump(&mut h, "the recording", |a| a.files.recording.is_some() && !a.opening());
    h.run();
    assert_eq!(first_top(&h), Some(top), "the first pane where it was at the first opening");
}

/// A file dialog starts where the user works: in the folder of the recording shown (Compare
/// with…, Export), and once saved elsewhere in that session's folder; the built-in path prompt
/// is filled in there too. Before, the prompt was filled in with the directory the window was
/// started from, and the native dialog started wherever the desktop chose.
#[test]
fn file_dialogs_start_in_the_folder_of_the_session_worked_on() {
    let recordings = tempfile::tempdir().unwrap();
    let saves = tempfile::tempdir().unwrap();
    let shown = recordings.path().join("run.ron");
    std::fs::copy(crate::support::example_session(), &shown).unwrap();
    let copy = saves.path().join("copy.ron");
    let dialogs = Arc::new(ScriptedDialogs::answering([Some(shown.clone()), None, Some(copy.clone()), None]));
    // Nothing worked on yet when it opens: the dialog's own choice.
    let mut h = opened(Box::new(dialogs.clone()));
    let compare = h.state_mut().files.ask_compare();
    assert!(compare.is_none(), "cancelled");
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::S);
    pump(&mut h, "the save", |a| a.files.current.as_deref() == Some(copy.as_path()) && a.files.saving().is_none());
    let export = h.state_mut().files.ask_write(FileKind::File(&zescope_model::write::Png), None, false);
    assert!(export.is_none(), "cancelled");
    let dirs = dialogs.dirs.lock().unwrap().clone();
    let (r, s) = (Some(recordings.path().to_path_buf()), Some(saves.path().to_path_buf()));
    assert_eq!(dirs, [None, r.clone(), r, s], "open, compare, save as, export");

    // Without a dialog, the prompt is filled in with the same folder.
    h.state_mut().files.dialogs = Box::new(zescope_window::dialogs::NoDialogs);
    let compare = h.state_mut().files.ask_compare();
    assert!(compare.is_none(), "the prompt opened instead");
    h.step();
    h.step();
    h.get_by_label("Compare with a session");
    let field = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Path of the session file (.ron) to open:");
    let typed = format!("{}/", saves.path().display());
    assert_eq!(field.value().as_deref(), Some(typed.as_str()), "the prompt starts in the session's folder");
}

/// A dialog's answer named for another format than the one written (a PNG export answered with
/// plot.svg) is not written under it: the path prompt opens holding it, saying why, and takes a
/// right name. Before, the PNG was written as plot.svg.
#[test]
fn an_export_answered_with_another_formats_name_asks_again() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("plot.svg");
    let mut h = opened(Box::new(Arc::new(ScriptedDialogs::answering([
        Some(crate::support::example_session()),
        Some(wrong.clone()),
    ]))));
    let png = FileKind::File(&zescope_model::write::Png);
    let export = h.state_mut().files.ask_write(png, None, false);
    assert!(export.is_none(), "not written under plot.svg");
    h.step();
    h.step();
    h.get_by_label_contains("plot.svg is a .svg name: this writes a .png");
    let field = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Path of the file to write:");
    assert_eq!(field.value().as_deref(), Some(wrong.display().to_string().as_str()), "the answer, to change");
    let right = dir.path().join("plot.png");
    field.set_text_value_accesskit(&right.display().to_string());
    h.step();
    h.step();
    h.get_by_label("OK").click();
    pump(&mut h, "the export", |a| right.exists() && a.files.writing().is_none());
    assert!(!wrong.exists(), "nothing under the wrong name");
    assert_eq!(&std::fs::read(&right).unwrap()[1..4], b"PNG");
}
