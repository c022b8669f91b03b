//! Help → About zescope: the version and what zescope reads.

use egui::Ui;

use super::{Shared, Window};

/// The About window.
#[derive(Default)]
pub struct About {
    /// Shown.
    pub open: bool,
}

impl Window for About {
    fn title(&self) -> &'static str {
        "About zescope"
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
        ui.label(format!("zescope {}", env!("CARGO_PKG_VERSION")));
        ui.label("Live metrics from Level Zero drivers' exported memory (ZET_experimental_metric_export_memory).");
    }
}
