//! Errors from the sampler as dismissible banners: what happened, what to try. Never a crash;
//! a new run can be started right away.

use egui::{Color32, RichText, Ui};

use crate::sampler::ErrorKind;

use super::state::AppState;

/// Draws the banners; returns true if the user asked for the diagnostics window.
pub fn show(ui: &mut Ui, state: &mut AppState) -> bool {
    let mut dismissed = Vec::new();
    let mut diagnostics = false;
    for b in &state.banners {
        let fill =
            if ui.visuals().dark_mode { Color32::from_rgb(90, 30, 30) } else { Color32::from_rgb(255, 225, 220) };
        egui::Frame::new().fill(fill).inner_margin(6.0).corner_radius(4.0).show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                let title = match b.error.kind {
                    ErrorKind::DeviceLost => "Device lost",
                    ErrorKind::Permission => "Permission problem",
                    ErrorKind::Source => "Cannot open the source",
                    ErrorKind::Layout => "Cannot decode the exported memory",
                    ErrorKind::Export => "Exported memory unusable",
                    ErrorKind::Config => "Cannot start",
                    ErrorKind::Teardown => "Release problem",
                    ErrorKind::Driver => "Driver error",
                    ErrorKind::Internal => "Internal error",
                };
                ui.label(RichText::new(title).strong());
                ui.label(&b.error.message);
                if b.count > 1 {
                    ui.label(RichText::new(format!("(×{})", b.count)).weak());
                }
                if let Some(h) = &b.error.hint {
                    ui.label(RichText::new(format!("Try: {h}")).italics());
                }
                if b.error.kind == ErrorKind::Permission && ui.button("Diagnostics…").clicked() {
                    diagnostics = true;
                }
                if ui.small_button("x").on_hover_text("dismiss").clicked() {
                    dismissed.push(b.id);
                }
            });
        });
    }
    for id in dismissed {
        state.dismiss(id);
    }
    diagnostics
}
