//! Files without a file-dialog backend, driven through egui_kittest: Open, Ctrl+S and Export
//! bring up the built-in path prompt; a path that cannot work is refused inside the prompt, and
//! a good one does what the dialog would have done.

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use zescope_store::Store;
use zescope_window::ZescopeApp;
use zescope_window::dialogs::NoDialogs;
use zescope_window::settings::Settings;

fn harness() -> Harness<'static, ZescopeApp> {
    let mut app = ZescopeApp::new(Box::new(crate::support::NoSampler), Settings::default(), Store::new(64 << 20));
    app.files.dialogs = Box::new(NoDialogs);
    app.auto_start = false;
    crate::support::harness_of(app, crate::support::WINDOW)
}

/// The prompt's path field.
fn path_field<'a>(h: &'a Harness<'_, ZescopeApp>) -> egui_kittest::Node<'a> {
    h.query_by_role_and_label(Role::TextInput, "Path of the session file (.ron) to open:")
        .or_else(|| h.query_by_role_and_label(Role::TextInput, "Path of the file to write:"))
        .expect("the path prompt's field")
}

/// Types `path` into the open prompt and presses OK.
fn answer(h: &mut Harness<'_, ZescopeApp>, path: &std::path::Path) {
    path_field(h).set_text_value_accesskit(&path.display().to_string());
    // The prompt resizes when an error line goes away: let it settle before clicking.
    h.step();
    h.step();
    h.get_by_label("OK").click();
    h.step();
    h.step();
}

#[test]
fn without_a_dialog_backend_open_save_and_export_ask_for_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let example = crate::support::example_session();
    let mut h = harness();
    h.step();

    // Ctrl+O: the prompt, not nothing.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    h.step();
    h.step();
    h.get_by_label("Open a session");
    h.get_by_label_contains("No file dialog backend");

    // A path that does not exist is refused in the prompt, which stays open.
    answer(&mut h, &dir.path().join("missing.ron"));
    h.get_by_label_contains("no such file or folder");
    assert!(h.state().files.prompt.is_some() && h.state().files.recording.is_none());

    // A session file opens.
    answer(&mut h, &example);
    assert!(h.state().files.prompt.is_none(), "the prompt closed: {:?}", h.state().files.prompt);
    assert_eq!(h.state().files.recording.as_deref(), Some(example.as_path()));
    assert!(h.query_by_label("Open a session").is_none());

    // A pane's Export → PNG: a folder that does not exist is refused; a bare name in an
    // existing folder gets the extension and is written.
    h.get_all_by_label("Export").next().expect("a pane export menu").click();
    h.step();
    h.step();
    h.get_by_label("PNG image…").click();
    h.step();
    h.step();
    h.get_by_label("Path of the file to write:");
    answer(&mut h, &dir.path().join("no/such/dir/out.png"));
    h.get_by_label_contains("cannot write into");
    answer(&mut h, &dir.path().join("panes"));
    let png = dir.path().join("panes.png");
    assert!(h.state().files.prompt.is_none(), "{:?}", h.state().files.prompt);
    crate::support::pump(&mut h, "the export", |a| a.files.writing().is_none());
    assert!(png.exists(), "exported to {}", png.display());
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");

    // Again onto the same file: the prompt asks before replacing it; OK again replaces it.
    std::fs::write(&png, b"mine").unwrap();
    h.get_all_by_label("Export").next().expect("a pane export menu").click();
    h.step();
    h.step();
    h.get_by_label("PNG image…").click();
    h.step();
    h.step();
    answer(&mut h, &png);
    h.get_by_label_contains("panes.png exists: OK again replaces it");
    assert_eq!(std::fs::read(&png).unwrap(), b"mine", "not replaced before the second OK");
    h.step();
    h.step();
    h.get_by_label("OK").click();
    h.step();
    h.step();
    crate::support::pump(&mut h, "the export", |a| a.files.writing().is_none());
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG", "replaced");

    // Save As (Ctrl+Shift+S) through the prompt; Cancel closes it and does nothing.
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::S);
    h.step();
    h.step();
    h.get_by_label("Cancel").click();
    h.step();
    assert!(h.state().files.prompt.is_none());
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::S);
    h.step();
    h.step();
    h.get_by_label("Save the session");
    let saved = dir.path().join("copy.ron");
    answer(&mut h, &saved);
    crate::support::pump(&mut h, "the save", |a| {
        a.files.saving().is_none() && a.files.current.as_deref() == Some(&saved)
    });
    assert!(zescope_model::session::load(&saved).is_ok_and(|s| s.raw_values() > 0), "a complete session was saved");
}

#[test]
fn a_failed_save_shows_a_banner() {
    let dir = tempfile::tempdir().unwrap();
    let example = crate::support::example_session();
    let mut h = harness();
    h.state_mut().perform(Some(zescope_window::files::FileAction::Open(example)));
    h.step();
    // The folder exists, so the prompt takes the path; the name is too long for the file system.
    let long = dir.path().join(format!("{}.ron", "x".repeat(300)));
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::S);
    h.step();
    h.step();
    answer(&mut h, &long);
    assert!(h.state().files.prompt.is_none(), "the prompt took the path");
    crate::support::pump(&mut h, "the failed save", |a| a.files.saving().is_none() && !a.state.banners.is_empty());
    h.step();
    h.get_by_label("Save failed");
    h.get_by_label_contains("xxxx.ron");
}

/// Enter in the path prompt opens the file and closes the prompt: the single-key shortcuts work
/// at once after it (they stayed dead until a click), while a field that stays open after its
/// Enter (the Triggers window's) still keeps them (`basics::keys_typed_after_enter_in_a_field_fire_no_shortcut`).
#[test]
fn single_key_shortcuts_work_after_the_prompts_enter() {
    let example = crate::support::example_session();
    let mut h = harness();
    h.step();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    h.step();
    h.step();
    let field = path_field(&h);
    field.focus();
    h.step();
    path_field(&h).set_text_value_accesskit(&example.display().to_string());
    h.step();
    h.key_press(egui::Key::Enter);
    h.step();
    h.step();
    crate::support::pump(&mut h, "the session", |a| a.files.recording.is_some() && !a.opening());
    assert!(h.state().files.prompt.is_none(), "Enter closed the prompt");
    let markers = h.state().markers.len();
    h.key_press(egui::Key::M);
    h.step();
    assert_eq!(h.state().markers.len(), markers + 1, "M adds a marker after the prompt's Enter");
}
