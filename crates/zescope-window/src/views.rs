//! View files in the window (File → Views, `zescope --view FILE`): the user's views (in the
//! config folder, `views/`) and the shipped ones (`/usr/share/zescope/views`, or `assets/views`
//! of the source tree) listed to load; "Save current view" writes the panes, colours, held
//! ranges, window length and triggers as a view (`viewfile::ViewFile`). A view loaded waits for
//! the run's (or recording's) series, then lays the panes out for them; what it names that the
//! devices lack is said in a banner, and the rest is shown.
//!
//! This module holds where views are and the state of the window's views ([`Views`]); loading,
//! applying and saving one is with the other file commands in `actions.rs`, the menu in
//! `menu.rs`.

use std::path::{Path, PathBuf};

use zescope_model::viewfile::ViewFile;

/// The folder the package installs the shipped views into.
pub const SHIPPED: &str = "/usr/share/zescope/views";

/// The window's view files: one waiting for series, and the name to save under.
#[derive(Default)]
pub struct Views {
    /// A view to lay out once the series it is for are known.
    pub pending: Option<ViewFile>,
    /// The last view laid out in part for groups not sampled: laid out again once they are
    /// (its banner's "Sample …").
    pub partial: Option<ViewFile>,
    /// Set while `pending` waits for a new run: the run it must not be laid out on (the one
    /// going on when the groups were ticked; `None`: there was none).
    pub after_run: Option<Option<u64>>,
    /// The name typed for "Save current view".
    pub name: String,
    /// What the last save or load said.
    pub said: Option<String>,
}

/// Where the user's views are: `views/` in zescope's config folder.
pub fn user_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("io.github", "zescope", "zescope").map(|d| d.config_dir().join("views"))
}

/// The folders views are listed from: the user's, then the shipped ones.
pub fn dirs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = user_dir().into_iter().collect();
    out.push(PathBuf::from(SHIPPED));
    out.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/views"));
    out
}

/// The `.ron` files of `dirs`, by file name (a user's view hides a shipped one of its name).
pub fn list(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(d) else { continue };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "ron") && p.is_file())
            .collect();
        files.sort();
        for f in files {
            if !out.iter().any(|o| o.file_name() == f.file_name()) {
                out.push(f);
            }
        }
    }
    out
}
