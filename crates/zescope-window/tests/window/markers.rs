//! Markers named as they are set and renamed later: M (or "+ Marker") opens the toolbar's name
//! field on the new marker, its default name selected; Enter keeps what is typed, Escape keeps
//! the default; View → Rename marker opens the field on a marker already set. The names are
//! saved with the session.

use std::sync::Arc;

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use zescope_window::ZescopeApp;
use zescope_window::dialogs::ScriptedDialogs;
use zescope_window::settings::Settings;

fn labels(h: &Harness<'_, ZescopeApp>) -> Vec<String> {
    h.state().markers.marks().iter().map(|m| m.label.clone()).collect()
}

fn type_text(h: &mut Harness<'_, ZescopeApp>, text: &str) {
    h.event(egui::Event::Text(text.into()));
    h.step();
}

#[test]
fn a_marker_is_named_as_it_is_set_and_renamed_from_the_view_menu() {
    let mut h = crate::support::showing(
        &crate::support::example_session(),
        Settings::default(),
        crate::support::WINDOW,
        Some(0.05),
    );
    h.step();
    let before = labels(&h);
    let n = before.len();

    // M: a marker with the default name, and the name field on it, its text selected, so what
    // is typed replaces it; Enter keeps it.
    h.key_press(egui::Key::M);
    h.step();
    h.step();
    assert_eq!(labels(&h).len(), n + 1, "M adds a marker");
    assert!(h.state().marker_name.is_some(), "and opens its name field");
    type_text(&mut h, "warm-up");
    h.key_press(egui::Key::Enter);
    h.step();
    h.step();
    assert!(h.state().marker_name.is_none(), "Enter closes the field");
    assert_eq!(labels(&h)[n], "warm-up", "Enter keeps the name typed");

    // "+ Marker", something typed, then Escape: the default name stays.
    h.get_by_label("+ Marker").click();
    h.step();
    h.step();
    type_text(&mut h, "not this");
    h.key_press(egui::Key::Escape);
    h.step();
    h.step();
    assert!(h.state().marker_name.is_none(), "Escape closes the field");
    assert_eq!(labels(&h)[n + 1], format!("M{}", n + 2), "Escape keeps the default name");

    // After Enter, single-key shortcuts work again: M adds (and Escape keeps) a third.
    h.key_press(egui::Key::M);
    h.step();
    h.key_press(egui::Key::Escape);
    h.step();
    assert_eq!(labels(&h).len(), n + 3);

    // View → Rename marker → the first one: the field opens on it with its name.
    h.get_by_label("View").click();
    h.run();
    h.get_by_label("Rename marker").hover();
    h.run();
    h.get_by_label_contains("warm-up · ").click();
    h.run();
    assert_eq!(h.state().marker_name.as_ref().map(|m| m.text.as_str()), Some("warm-up"));
    type_text(&mut h, "compute");
    h.key_press(egui::Key::Enter);
    h.step();
    h.step();
    assert_eq!(labels(&h)[n], "compute", "renamed");
    assert_eq!(h.state().unsaved_summary().as_deref(), Some("3 new markers"));

    // Saved with the session as markers are.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("named.ron");
    h.state_mut().files.dialogs = Box::new(Arc::new(ScriptedDialogs::answering([Some(saved.clone())])));
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::S);
    crate::support::pump(&mut h, "the save", |a| {
        a.files.current.as_deref() == Some(saved.as_path()) && a.files.saving().is_none()
    });
    let file = zescope_model::session::load(&saved).unwrap();
    let names: Vec<&str> = file.markers.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(&names[n..], ["compute", &format!("M{}", n + 2), &format!("M{}", n + 3)]);
}

/// The example recording with a marker set with M (its default name kept) at the first plot's
/// centre, and that point.
fn a_marker_at_the_plots_centre() -> (Harness<'static, ZescopeApp>, egui::Pos2) {
    let mut h = crate::support::showing(
        &crate::support::example_session(),
        Settings::default(),
        crate::support::WINDOW,
        Some(0.05),
    );
    h.step();
    let plot = h.state().plot_frames.iter().find_map(|(_, r)| *r).expect("a plot");
    let at = plot.center();
    h.hover_at(at);
    h.step();
    h.key_press(egui::Key::M);
    h.step();
    h.key_press(egui::Key::Escape);
    h.step();
    (h, at)
}

/// A right-click on a plot at a marker's line offers to rename it; the pick opens the name field.
#[test]
fn a_marker_is_renamed_from_the_plots_context_menu() {
    let (mut h, at) = a_marker_at_the_plots_centre();
    let n = labels(&h).len();
    let mark = labels(&h)[n - 1].clone();
    // Right-click 3 points beside the line.
    let beside = at + egui::vec2(3.0, 0.0);
    h.hover_at(beside);
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: beside,
            button: egui::PointerButton::Secondary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
        h.step();
    }
    h.run();
    h.get_by_label(&format!("Rename marker {mark}…")).click();
    h.run();
    assert_eq!(h.state().marker_name.as_ref().map(|m| m.index), Some(n - 1), "the field opens on that marker");
    type_text(&mut h, "spike");
    h.key_press(egui::Key::Enter);
    h.step();
    h.step();
    assert_eq!(labels(&h)[n - 1], "spike");
}

/// Rests the pointer at `pos` until the plot's hover readout shows (a tooltip waits for the
/// pointer to rest).
fn hover(h: &mut Harness<'_, ZescopeApp>, pos: egui::Pos2) {
    h.hover_at(pos);
    for _ in 0..50 {
        h.step();
        if h.query_all_by_label_contains("t = ").count() > 0 {
            h.step();
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("no hover readout at {pos:?}");
}

/// The hover readout names the markers under the pointer, with their times: an instant whose
/// name the plot leaves out (it would overlap its neighbour's) is read there, and a range the
/// pointer is inside with its start, end and length; a marker away from the pointer is not listed.
#[test]
fn the_hover_readout_names_the_markers_under_the_pointer() {
    let (mut h, at) = a_marker_at_the_plots_centre();
    let set = h.state().markers.marks().last().cloned().expect("M set a marker");
    // A second instant a microsecond later (its name would overlap the first's on the plot) and
    // a range of two seconds around both.
    let beside = "a second marker beside the first, whose name the plot leaves out";
    let markers = &mut h.state_mut().markers;
    assert!(markers.instant(set.t_ns + 1_000, beside));
    assert!(markers.begin(set.t_ns - 1_000_000_000, "phase-a"));
    assert!(markers.end(set.t_ns + 1_000_000_000, "phase-a"));
    hover(&mut h, at + egui::vec2(2.0, 0.0));
    h.get_by_label(&set.label);
    h.get_by_label(beside);
    h.get_by_label("phase-a");
    let range = h.query_all_by_label_contains(" – ").filter_map(|n| n.accesskit_node().value()).collect::<Vec<_>>();
    assert!(range.iter().any(|l| l.ends_with("(2 s)")), "the range's start, end and length: {range:?}");
    let at_time = h.query_all_by_label_contains("@ ").filter_map(|n| n.accesskit_node().value()).count();
    assert!(at_time > 2, "each sample's time and each instant's");

    // Far from the instants, still inside the range: the range alone.
    hover(&mut h, at - egui::vec2(30.0, 0.0));
    assert!(h.query_by_label(beside).is_none(), "a marker away from the pointer is not listed");
    h.get_by_label("phase-a");
}
