//! What is remembered between launches (eframe persistence): theme, window length, the source
//! selection, the pane arrangement and the servers connected to, each with the panes last used
//! while watching it. UI zoom is egui's own and is reset
//! with View → Reset layout.

use serde::{Deserialize, Serialize};

use super::state::Selection;
use zescope_model::view::Arrangement;
use zescope_model::view::ViewLength;

/// The key the settings are stored under in eframe's storage; versioned (`-v1`) so that an
/// incompatible format can take a new key.
pub(crate) const STORAGE_KEY: &str = "zescope-settings-v1";

/// View → Theme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Theme {
    /// Follow the desktop's light or dark preference.
    #[default]
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

impl Theme {
    /// The egui preference applied at the first frame and when the user picks a theme.
    pub(crate) fn preference(self) -> egui::ThemePreference {
        match self {
            Theme::System => egui::ThemePreference::System,
            Theme::Light => egui::ThemePreference::Light,
            Theme::Dark => egui::ThemePreference::Dark,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
/// Everything remembered between launches; missing fields take their defaults, so settings of an
/// older version still load.
pub struct Settings {
    /// The colour theme.
    pub theme: Theme,
    /// How much history a live view shows.
    pub window: ViewLength,
    /// The device, groups, metrics and interval picked last; checked against the devices found
    /// at start (`reconcile.rs`).
    pub selection: Selection,
    /// The panes and their series; series of devices or groups this machine lacks are dropped
    /// once the devices are found.
    #[serde(rename = "layout")]
    pub arrangement: Arrangement,
    /// Sessions opened or saved lately, newest first.
    pub recent: Vec<std::path::PathBuf>,
    /// The most frames a second a live view paints (View → Frame rate).
    pub frame_cap: super::repaint::FrameCap,
    /// Whether the overview strip of the whole history is shown (View → Overview strip).
    pub overview: Shown,
    /// How many markers the workload may send: rate, burst, count per session
    /// (`zescope_model::markers::Limits`; only in this file, no menu).
    pub markers: zescope_model::markers::Limits,
    /// Servers connected to lately (File → Connect…), newest first.
    pub recent_remotes: Vec<Remote>,
}

/// A server to watch (File → Connect…): its address, beyond loopback its token's file, and the
/// panes the user last had while watching it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Remote {
    /// `HOST:PORT` of the server's listener.
    pub addr: String,
    /// The file whose first line is the server's token.
    pub token_file: Option<std::path::PathBuf>,
    /// The panes and their series as they were when the window last watched this server: the
    /// server's next run starts in them (series it no longer serves leave, new ones are placed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<Arrangement>,
}

/// A part of the window the user may hide; shown unless hidden.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Shown {
    /// Shown (the default).
    #[default]
    Yes,
    /// Hidden by the user.
    No,
}

/// Zoom factors outside this range are treated as stale (fonts unusably large or small).
pub(crate) const ZOOM_RANGE: std::ops::RangeInclusive<f32> = 0.5..=3.0;

#[cfg(test)]
mod tests {
    use super::Settings;

    /// Settings written before the code said "arrangement" and "per session" (the keys users have
    /// in their settings file, `layout` and `per_recording`) load with their panes and marker cap,
    /// and are written back under the same keys.
    #[test]
    fn the_keys_users_already_have_still_load_and_are_written_back() {
        let text = r#"(
            layout: (panes: [(id: 1, series: [(device: "GPU", group: "G", metric: "M")])], next_id: 1, hidden: [], colors: {}),
            markers: (per_second: 10, burst: 20, per_recording: 7),
        )"#;
        let s: Settings = ron::from_str(text).expect("an older settings file");
        assert_eq!(s.arrangement.panes.len(), 1, "the panes of `layout`");
        assert_eq!(s.arrangement.panes[0].series[0].metric, "M");
        assert_eq!(s.markers.per_session, 7, "the cap of `per_recording`");
        let out = ron::to_string(&s).unwrap();
        assert!(out.contains("layout:") && out.contains("per_recording:"), "{out}");
        assert!(!out.contains("arrangement") && !out.contains("per_session"), "{out}");
    }
}
