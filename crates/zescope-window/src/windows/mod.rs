//! The floating windows: one file each, each a [`Window`] drawn from plain state.
//!
//! A window owns what is its own (whether it is open, its sorting, its column widths) and reads
//! and changes the rest through [`Shared`]: the store, the window's state, the time view, the
//! cursors. [`Windows`] holds one of each; [`show_all`], called once a frame by the frame
//! (`frame.rs`), draws those that are open; menus and buttons open them by their field. A new window is a file here, a field of
//! [`Windows`] with its line in [`Windows::each`], and the menu item that opens it
//! (`docs/architecture.md`, "Adding a window").
//!
//! The dialogs that answer a question of the window's (the path prompt, the unsaved-data
//! question, the offer to recover a crashed session) are not windows in this sense: they block
//! what they ask about, and live with it (`path_prompt.rs`, `unsaved.rs`, `menu.rs`); the frame
//! shows them over everything after the windows.

mod about;
mod cursors;
mod diagnostics;
mod phase_table;
mod processes;
mod recording_info;
mod shortcuts;
mod triggers;

pub use about::About;
pub use cursors::CursorReadout;
pub use diagnostics::Diagnostics;
pub use phase_table::PhasePanel;
pub use processes::{PLOTTED, ProcessPanel};
pub use recording_info::RecordingInfo;
pub use shortcuts::Shortcuts;
pub use triggers::TriggersWindow;

use egui::Ui;

use zescope_model::view::cursors::Cursors;
use zescope_model::view::phases::PhaseRange;
use zescope_model::view::{Markers, TimeView};
use zescope_store::Store;
use zescope_ze::Source;

use crate::compare::Comparison;
use crate::state::AppState;

/// What the windows read and change besides their own state, borrowed from the app for a frame.
pub struct Shared<'a> {
    /// The samples.
    pub store: &'a Store,
    /// The window's state: inventory, ingest, run history, triggers, notices.
    pub state: &'a mut AppState,
    /// The time axis.
    pub view: &'a mut TimeView,
    /// The A/B cursors.
    pub cursors: &'a mut Cursors,
    /// The markers shown.
    pub markers: &'a Markers,
    /// A session file is shown (not a live run).
    pub showing_file: bool,
    /// The source the user asked for (what diagnostics check).
    pub source: Source,
    /// The recording compared with, if any.
    pub comparison: Option<&'a Comparison>,
    /// The phases of the phase table: the visible range, the cursors' span, each marked range
    /// (computed only while the table is open).
    pub phase_ranges: Vec<PhaseRange>,
}

/// One floating window.
pub trait Window {
    /// Its title, which is also its egui id.
    fn title(&self) -> &'static str;
    /// Whether it is shown this frame (some follow state elsewhere: the cursors' readout shows
    /// while a cursor is set).
    fn is_open(&self, shared: &Shared<'_>) -> bool;
    /// Its close button was pressed.
    fn close(&mut self, shared: &mut Shared<'_>);
    /// The egui window it is drawn in (title, size), before it is opened.
    fn frame(&self, ctx: &egui::Context) -> egui::Window<'static>;
    /// Its contents.
    fn ui(&mut self, ui: &mut Ui, shared: &mut Shared<'_>);
}

/// Draws `window` if it is open; its close button closes it. The first time it opens, it opens
/// inside `area` (the central panel: clear of the menu bar, whose items it would hide, and of the
/// source panel), a little down and right of its top-left corner and of the window before it in
/// [`Windows::each`] (`slot`), and no larger than `area`; after that where the user put it within
/// `area`, which egui remembers (between launches too, with the window's other settings).
pub fn show(window: &mut dyn Window, ctx: &egui::Context, shared: &mut Shared<'_>, area: egui::Rect, slot: usize) {
    if !window.is_open(shared) {
        return;
    }
    let mut open = true;
    let step = 24.0 * (slot % 6) as f32;
    let pos = area.min + egui::vec2(16.0 + step, 16.0 + step);
    // Kept inside the central area and no wider or taller than it, so that it covers neither the
    // menu bar nor the source panel, in a small window too (egui would otherwise push a window
    // wider than the screen's rest to the screen's left edge, over the panel).
    let (w, h) = ((area.width() - 32.0 - step).max(200.0), (area.height() - 32.0 - step).max(120.0));
    window
        .frame(ctx)
        .default_pos(pos)
        .constrain_to(area)
        .max_width(w)
        .max_height(h)
        .open(&mut open)
        .show(ctx, |ui| window.ui(ui, shared));
    if !open {
        window.close(shared);
    }
}

/// Draws every open window of `windows`, in [`Windows::each`]'s order, inside `area` (see
/// [`show`]): the one loop that draws the floating windows, once a frame.
pub fn show_all(windows: &mut Windows, ctx: &egui::Context, shared: &mut Shared<'_>, area: egui::Rect) {
    for (slot, w) in windows.each().into_iter().enumerate() {
        show(w, ctx, shared, area, slot);
    }
}

/// One of each floating window.
#[derive(Default)]
pub struct Windows {
    /// Help → Keyboard shortcuts.
    pub shortcuts: Shortcuts,
    /// View → Recording info (a shown file's metadata).
    pub info: RecordingInfo,
    /// View → Phase table.
    pub phases: PhasePanel,
    /// View → Processes.
    pub processes: ProcessPanel,
    /// View → Triggers.
    pub triggers: TriggersWindow,
    /// The A/B cursors' readout.
    pub cursors: CursorReadout,
    /// Help → Diagnostics.
    pub diagnostics: Diagnostics,
    /// Help → About zescope.
    pub about: About,
}

impl Windows {
    /// Every window, in the order they are drawn (a later one over an earlier one).
    pub fn each(&mut self) -> [&mut dyn Window; 8] {
        [
            &mut self.shortcuts,
            &mut self.info,
            &mut self.phases,
            &mut self.processes,
            &mut self.triggers,
            &mut self.cursors,
            &mut self.diagnostics,
            &mut self.about,
        ]
    }
}
