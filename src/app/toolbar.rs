//! The toolbar over the panes: the window's one state as a badge with what fits it (Pause,
//! Follow live, Fit, the recording's Info), the live window length, "+ Pane" and "+ Marker".

use egui::{RichText, Ui};

use crate::view::{Activity, Window, data_x};

use super::{ZescopeApp, files};

impl ZescopeApp {
    /// The window's one state (see [`Activity`]): the toolbar and the status bar both show it.
    pub fn activity(&self) -> Activity {
        Activity::of(self.files.recording.is_some(), self.state.ingest.run.is_some(), self.view.mode)
    }

    pub(super) fn toolbar(&mut self, ui: &mut Ui) {
        let activity = self.activity();
        ui.horizontal_wrapped(|ui| {
            let badge = RichText::new(format!(" {} ", activity.badge())).strong();
            match activity {
                Activity::Recording => {
                    let path = self.files.recording.clone().unwrap_or_default();
                    ui.label(
                        badge.color(egui::Color32::BLACK).background_color(egui::Color32::from_rgb(150, 170, 240)),
                    )
                    .on_hover_text(format!(
                        "{}\nThis is a saved session, not live data. Start begins a new live run.",
                        path.display()
                    ));
                    ui.label(files::file_name(&path));
                    if ui.button("Info").on_hover_text("when, where and what was recorded").clicked() {
                        self.show_info = true;
                    }
                }
                Activity::Live => {
                    ui.label(badge.color(egui::Color32::from_rgb(60, 170, 60)));
                    if ui.button("Pause").on_hover_text("freeze the view; sampling continues (Space)").clicked() {
                        self.view.toggle_pause(data_x(&self.store));
                    }
                }
                Activity::Paused { .. } => {
                    ui.label(badge.color(ui.visuals().warn_fg_color));
                    if ui.button("Follow live").on_hover_text("back to live data (End)").clicked() {
                        self.view.follow();
                    }
                }
                Activity::Stopped => {
                    ui.label(badge.color(ui.visuals().weak_text_color()))
                        .on_hover_text("not sampling: Start on the left begins a run");
                }
            }
            if !activity.can_pause()
                && ui.button("Fit").on_hover_text("show all the data (double-click a plot does the same)").clicked()
            {
                self.view.fit(data_x(&self.store));
            }
            // After the buttons: a count growing by a digit must not move them from under the
            // pointer.
            if matches!(activity, Activity::Paused { .. }) && self.view.new_since_frozen > 0 {
                ui.label(format!("{} new samples", self.view.new_since_frozen));
            }
            ui.separator();
            ui.label("Window:");
            for w in Window::ALL {
                if ui.selectable_label(self.view.window == w && self.view.is_live(), w.label()).clicked() {
                    self.view.set_window(w);
                }
            }
            ui.separator();
            if ui.button("+ Pane").on_hover_text("add an empty plot pane").clicked() {
                self.panes.add_pane();
            }
            if ui.button("+ Marker").on_hover_text("mark the newest sample (M marks the hovered time)").clicked() {
                self.add_marker();
            }
        });
    }
}
