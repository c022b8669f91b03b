//! What is remembered between launches (eframe persistence): theme, window length, the source
//! selection and the pane layout. UI zoom is egui's own and is reset with the layout.

use serde::{Deserialize, Serialize};

use super::state::Selection;
use crate::view::PaneLayout;
use crate::view::Window;

pub const STORAGE_KEY: &str = "zescope-settings-v1";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Theme {
    #[default]
    System,
    Light,
    Dark,
}

impl Theme {
    pub fn preference(self) -> egui::ThemePreference {
        match self {
            Theme::System => egui::ThemePreference::System,
            Theme::Light => egui::ThemePreference::Light,
            Theme::Dark => egui::ThemePreference::Dark,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub theme: Theme,
    pub window: Window,
    pub selection: Selection,
    pub layout: PaneLayout,
    /// Sessions opened or saved lately, newest first.
    pub recent: Vec<std::path::PathBuf>,
}

/// Zoom factors outside this range are treated as stale (fonts unusably large or small).
pub const ZOOM_RANGE: std::ops::RangeInclusive<f32> = 0.5..=3.0;
