//! Help → Keyboard shortcuts: every key and gesture the window takes, in a table.

use egui::Ui;

use super::{Shared, Window};

/// Help → Keyboard shortcuts: (keys, what they do), in the order shown.
pub const SHORTCUTS: [(&str, &str); 13] = [
    ("Space", "pause / resume the view (sampling continues)"),
    ("End", "follow live data"),
    (
        "M",
        "add a marker at the hovered time (or the newest sample) and name it (Enter keeps the name, Esc the default)",
    ),
    ("A / B", "set cursor A / B at the hovered time"),
    ("Shift+click on a plot", "set cursor A, then B, then move the nearer one; drag a cursor's line to move it"),
    ("Ctrl+O / Ctrl+S / Ctrl+Shift+S", "open / save / save as"),
    ("Ctrl+F", "search groups and metrics"),
    ("Ctrl+Q", "quit"),
    ("Ctrl + / Ctrl −", "zoom the interface in / out"),
    ("Ctrl+0", "reset the interface zoom"),
    ("wheel on a plot", "zoom the time axis about the pointer (leaves live mode)"),
    ("Shift+wheel / drag on a plot", "pan the time axis (leaves live mode)"),
    ("wheel elsewhere", "scroll the pane list"),
];

/// The shortcuts window.
#[derive(Default)]
pub struct Shortcuts {
    /// Shown.
    pub open: bool,
}

impl Window for Shortcuts {
    fn title(&self) -> &'static str {
        "Keyboard shortcuts"
    }

    fn is_open(&self, _: &Shared<'_>) -> bool {
        self.open
    }

    fn close(&mut self, _: &mut Shared<'_>) {
        self.open = false;
    }

    fn frame(&self, _: &egui::Context) -> egui::Window<'static> {
        egui::Window::new(self.title()).resizable(false)
    }

    fn ui(&mut self, ui: &mut Ui, _: &mut Shared<'_>) {
        egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
            for (k, what) in SHORTCUTS {
                ui.monospace(k);
                // Wrapped to the window (kept inside the central area): cut off at 900x600.
                ui.add(egui::Label::new(what).wrap());
                ui.end_row();
            }
        });
    }
}
