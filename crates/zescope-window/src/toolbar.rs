//! The toolbar over the panes: the window's one state as a badge with what fits it (Pause,
//! Follow live, Fit, the recording's Info), the live window length, "+ Pane" and "+ Marker".

use egui::{RichText, Ui};

use zescope_model::view::{Activity, ViewLength, data_x};

use super::ZescopeApp;

impl ZescopeApp {
    /// The window's one state (see [`Activity`]): the toolbar and the status bar both show it.
    pub fn activity(&self) -> Activity {
        Activity::of(self.files.recording.is_some(), self.state.ingest.run.is_some(), self.view.mode)
    }

    /// The toolbar. Its controls keep their places whatever the state: the badge and the one
    /// button the state offers (Pause, Follow live, Info) have slots as wide as their widest
    /// text, Fit is always there (greyed while live), and what varies in length — the file
    /// shown, the count of new samples — comes last.
    pub(super) fn toolbar(&mut self, ui: &mut Ui) {
        let activity = self.activity();
        ui.horizontal_wrapped(|ui| {
            let height = ui.spacing().interact_size.y;
            let widest = |ui: &Ui, texts: &[&str], strong: bool| {
                let font = egui::TextStyle::Button.resolve(ui.style());
                let w = texts
                    .iter()
                    .map(|t| {
                        let t = if strong { format!(" {t} ") } else { (*t).to_owned() };
                        ui.fonts_mut(|f| f.layout_no_wrap(t, font.clone(), egui::Color32::WHITE).size().x)
                    })
                    .fold(0.0, f32::max);
                w + 2.0 * ui.spacing().button_padding.x
            };
            let badges = ["LIVE", "PAUSED", "ZOOMED", "STOPPED", "FILE"];
            let badge_w = widest(ui, &badges, true);
            let badge = RichText::new(format!(" {} ", activity.badge())).strong();
            let (badge, hover) = match activity {
                Activity::File => (
                    badge.color(egui::Color32::BLACK).background_color(egui::Color32::from_rgb(150, 170, 240)),
                    "This is a saved session, not live data. Start begins a new live run.",
                ),
                Activity::Live => (badge.color(egui::Color32::from_rgb(60, 170, 60)), "sampling, the view follows"),
                Activity::Paused { .. } => {
                    (badge.color(ui.visuals().warn_fg_color), "sampling goes on; the view is frozen")
                }
                Activity::Stopped => {
                    (badge.color(ui.visuals().weak_text_color()), "not sampling: Start on the left begins a run")
                }
            };
            ui.add_sized([badge_w, height], egui::Label::new(badge)).on_hover_text(hover);
            let button_w = widest(ui, &["Pause", "Follow live", "Info"], false);
            let (text, hover, enabled) = match activity {
                Activity::File => ("Info", "when, where and what was recorded", true),
                Activity::Live => ("Pause", "freeze the view; sampling continues (Space)", true),
                Activity::Paused { .. } => ("Follow live", "back to live data (End)", true),
                Activity::Stopped => ("Pause", "nothing is sampled", false),
            };
            let button = ui.add_enabled(enabled, egui::Button::new(text).min_size(egui::vec2(button_w, height)));
            if button.on_hover_text(hover).clicked() {
                match activity {
                    Activity::File => self.windows.info.open = true,
                    Activity::Live => self.view.toggle_pause(data_x(&self.store)),
                    Activity::Paused { .. } => self.view.follow(),
                    Activity::Stopped => {}
                }
            }
            let fit = ui.add_enabled(!activity.can_pause(), egui::Button::new("Fit"));
            if fit.on_hover_text("show all the data (double-click a plot does the same)").clicked() {
                self.view.fit(data_x(&self.store));
            }
            ui.separator();
            ui.label("Window:");
            for w in ViewLength::ALL {
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
            // Last: what grows and shrinks moves nothing else.
            if activity == Activity::File {
                let path = self.files.recording.clone().unwrap_or_default();
                ui.label(super::dialogs::file_name(&path)).on_hover_text(path.display().to_string());
            }
            if matches!(activity, Activity::Paused { .. }) && self.view.new_since_frozen > 0 {
                ui.label(format!("{} new samples", self.view.new_since_frozen));
            }
        });
    }
}
