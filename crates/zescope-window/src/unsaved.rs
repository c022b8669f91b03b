//! Asking before recorded data that was never saved is thrown away. Open (which replaces what is
//! shown), Connect (which replaces the source), Start over an opened recording (which replaces
//! the recording) and Quit (Ctrl+Q, the
//! menu, the window's close button) first show a modal: Save, Discard or Cancel. Save goes
//! through the save dialog (or the path prompt) and carries on once the file is written; a save
//! that fails or is cancelled carries on with nothing. SIGINT and SIGTERM never ask.
//!
//! "Saved" means: the samples and markers are those of the file last saved or opened
//! (`Files::is_clean`); a recovered checkpoint is unsaved.

use std::path::PathBuf;

use egui::{Id, RichText};

use zescope_sampler::Command;

use super::ZescopeApp;
use super::files::{FileAction, Fingerprint};
use zescope_model::view::TimeAxis;

/// What waits for the user's answer (or for the save they chose).
#[derive(Clone, Debug)]
pub enum Pending {
    /// Open this session file (replacing what is shown).
    Open(PathBuf),
    /// Send this `Command::Start` (replacing an opened recording).
    Start(Command),
    /// Quit the window.
    Quit,
    /// Watch this server's run instead (File → Connect…).
    Connect(crate::settings::Remote),
}

impl Pending {
    fn verb(&self) -> &'static str {
        match self {
            Pending::Open(_) => "Opening a session",
            Pending::Start(_) => "Starting a new run",
            Pending::Quit => "Quitting",
            Pending::Connect(_) => "Connecting to a server",
        }
    }
}

/// The modal's state.
#[derive(Default)]
pub struct Unsaved {
    /// The modal is open, for this.
    pub asking: Option<Pending>,
    /// The user chose Save: this follows once the save succeeded.
    pub(crate) after_save: Option<Pending>,
}

impl ZescopeApp {
    /// The samples and markers shown now, to compare with what was saved.
    pub(crate) fn fingerprint(&self) -> Fingerprint {
        Fingerprint {
            samples: self.state.ingest.samples_total,
            markers: self.markers.revision(),
            marker_count: self.markers.len(),
            newest_ns: self.store.total_time_range().map(|r| r.1),
        }
    }

    /// What no file holds ("the 1200 samples recorded after 2:14 (the last save)", "1 new
    /// marker"), joined for a sentence; `None` when everything shown is saved.
    pub fn unsaved_summary(&self) -> Option<String> {
        let parts = self
            .files
            .unsaved(self.fingerprint(), |t| zescope_model::view::text::time_label(TimeAxis::of(&self.store).x(t)));
        match parts.len() {
            0 => None,
            1 => Some(parts[0].clone()),
            _ => Some(format!("{} and {}", parts[..parts.len() - 1].join(", "), parts[parts.len() - 1])),
        }
    }

    /// Is there recorded data that no file holds? Not while a session opens: what it shows
    /// is in its file.
    pub fn has_unsaved(&self) -> bool {
        !self.opening() && !self.files.is_clean(self.fingerprint())
    }

    /// Does `what` now, or first asks when it would discard unsaved data.
    pub(super) fn guarded(&mut self, what: Pending) {
        let discards = match &what {
            Pending::Open(_) | Pending::Quit | Pending::Connect(_) => true,
            Pending::Start(_) => self.files.recording.is_some(),
        };
        if discards && self.has_unsaved() {
            self.unsaved.asking = Some(what);
        } else {
            self.proceed(what);
        }
    }

    fn proceed(&mut self, what: Pending) {
        match what {
            Pending::Open(path) => self.open(path),
            Pending::Start(c) => self.start(c),
            Pending::Quit => self.quit(),
            Pending::Connect(r) => self.connect_to(r),
        }
    }

    /// A new run: it replaces an opened recording and follows live data.
    pub(super) fn start(&mut self, c: Command) {
        self.leave_recording();
        self.view.follow();
        self.send(c);
    }

    /// A save the user chose in the modal finished: carry on, or not.
    pub(super) fn saved_for_pending(&mut self, ok: bool) {
        if let Some(what) = self.unsaved.after_save.take()
            && ok
        {
            self.proceed(what);
        }
    }

    /// The Save / Discard / Cancel modal, while it is asked for.
    pub(super) fn unsaved_modal(&mut self, ctx: &egui::Context) {
        let Some(what) = self.unsaved.asking.clone() else { return };
        let Some(unsaved) = self.unsaved_summary() else {
            // Saved meanwhile (a save in flight finished): nothing to ask.
            self.unsaved.asking = None;
            return self.proceed(what);
        };
        let mut choice = None;
        let modal = egui::Modal::new(Id::unique("zescope-unsaved")).show(ctx, |ui| {
            // The sentence changes while a live run adds samples: the modal keeps one size (as
            // wide as the sentence may wrap, as tall as two of its lines), so it stays centred
            // in one place and its buttons do not move under the pointer.
            ui.set_width(QUESTION_WIDTH);
            ui.label(RichText::new("Unsaved data").strong());
            let lines = 2.0 * ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
            ui.allocate_ui(egui::vec2(QUESTION_WIDTH, lines), |ui| {
                ui.set_min_height(lines);
                ui.label(format!("{} discards what no file holds: {unsaved}.", what.verb()));
            });
            ui.horizontal(|ui| {
                if ui.button("Save…").clicked() {
                    choice = Some(Choice::Save);
                }
                if ui.button("Discard").clicked() {
                    choice = Some(Choice::Discard);
                }
                if ui.button("Cancel").clicked() {
                    choice = Some(Choice::Cancel);
                }
            });
        });
        if choice.is_none() && modal.should_close() {
            choice = Some(Choice::Cancel);
        }
        let Some(choice) = choice else { return };
        self.unsaved.asking = None;
        match choice {
            Choice::Cancel => {}
            Choice::Discard => self.proceed(what),
            Choice::Save => {
                let action = self.files.ask_save();
                let saving = matches!(action, Some(FileAction::Save(_)));
                self.perform(action);
                // Carry on after the save, or after the path prompt's save; not when cancelled
                // or when the save could not start.
                if (saving && self.files.saving().is_some()) || self.files.prompt.is_some() {
                    self.unsaved.after_save = Some(what);
                }
            }
        }
    }
}

/// The unsaved-data question's width, in points.
const QUESTION_WIDTH: f32 = 420.0;

enum Choice {
    Save,
    Discard,
    Cancel,
}
