//! View files in the window (File → Views, `zescope --view FILE`): the user's views (in the
//! config folder, `views/`) and the shipped ones (`/usr/share/zescope/views`, or `assets/views`
//! of the source tree) listed to load; "Save current view" writes the panes, colours, held
//! ranges, window length and triggers as a view (`viewfile::ViewFile`). A view loaded waits for
//! the run's (or recording's) series, then lays the panes out for them; what it names that the
//! devices lack is said in a banner, and the rest is shown.

use std::path::{Path, PathBuf};

use egui::Ui;

use zescope_model::viewfile::ViewFile;

use super::ZescopeApp;
use super::banner::{UiError, UiErrorKind};

/// The folder the package installs the shipped views into.
pub const SHIPPED: &str = "/usr/share/zescope/views";

/// The window's view files: one waiting for series, and the name to save under.
#[derive(Default)]
pub struct Views {
    /// A view to lay out once the series it is for are known.
    pub pending: Option<ViewFile>,
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

impl ZescopeApp {
    /// Loads a view onto what is shown (now if its series are known, else when they are).
    pub fn load_view(&mut self, view: ViewFile) {
        self.views.pending = Some(view);
        self.apply_pending_view();
    }

    /// The device kind (`gpu`, `npu`, …) of a series' device, by its name in the inventory.
    fn kind_of(&self, device: &str) -> Option<String> {
        let inv = self.state.inventory.as_ref()?;
        let d = inv.devices.iter().find(|d| d.name == device || device.starts_with(&format!("{} (", d.name)))?;
        Some(format!("{:?}", d.kind).to_lowercase())
    }

    /// Lays out the waiting view once series are known; says what it names that is missing.
    pub(crate) fn apply_pending_view(&mut self) {
        if self.views.pending.is_none() || self.state.ingest.order.is_empty() {
            return;
        }
        let Some(view) = self.views.pending.take() else { return };
        let applied = view.apply(&self.state.ingest.order, |d| self.kind_of(d));
        let mut panes = super::panes::Panes::with_layout(applied.layout);
        panes.y_lock = applied.y_lock.into_iter().collect();
        self.panes = panes;
        if let Some(w) = applied.window {
            self.view.set_window(w);
        }
        // The view's triggers join the user's (theirs and their firings stay).
        let run = self.state.ingest.run.as_ref().map(|r| &r.info);
        let offered = applied.triggers.len();
        let added = self.state.triggers.merge(applied.triggers, run);
        let name = if view.name.is_empty() { "the view".to_owned() } else { format!("the view \"{}\"", view.name) };
        if !applied.missing.is_empty() {
            self.state.push_error(UiError::new(
                UiErrorKind::Settings,
                format!("{name} names series these devices lack: {}; the rest is shown", applied.missing.join(", ")),
                "tick the groups on the left that have them, or pick another view",
            ));
        }
        self.views.said = Some(match (offered, added) {
            (0, _) => format!("{name} is shown"),
            (n, a) if a == n => format!("{name} is shown, with its {n} trigger(s) added to yours"),
            (n, a) => format!("{name} is shown; {a} of its {n} triggers added ({} you had already)", n - a),
        });
    }

    /// What is shown as a view file.
    pub fn current_view(&self, name: &str) -> ViewFile {
        let locks = self.panes.y_lock.iter().map(|(&k, &v)| (k, v)).collect();
        ViewFile::from_layout(
            name,
            &self.panes.layout,
            &locks,
            self.view.window,
            self.state.triggers.eval.triggers(),
            |d| self.kind_of(d),
        )
    }

    /// File → Views.
    pub(crate) fn views_menu(&mut self, ui: &mut Ui) {
        ui.menu_button("Views", |ui| {
            let files = list(&dirs());
            if files.is_empty() {
                ui.label(egui::RichText::new("no view files yet").weak());
            }
            for f in files {
                // Listed by the name the view gives itself; a file that does not load by its name.
                let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let label = ViewFile::load(&f).ok().map(|v| v.name).filter(|n| !n.trim().is_empty()).unwrap_or(stem);
                if ui.button(&label).on_hover_text(f.display().to_string()).clicked() {
                    match ViewFile::load(&f) {
                        Ok(v) => self.load_view(v),
                        Err(e) => self.state.push_error(UiError::new(UiErrorKind::Open, e, "fix or remove the file")),
                    }
                    ui.close();
                }
            }
            ui.separator();
            ui.horizontal(|ui| {
                ui.add(egui::TextEdit::singleline(&mut self.views.name).hint_text("name").desired_width(140.0));
                let name = self.views.name.trim().to_owned();
                let ok = !name.is_empty() && !name.contains(['/', '\0']);
                if ui.add_enabled(ok, egui::Button::new("Save current view")).clicked() {
                    self.save_view(&name);
                    ui.close();
                }
            });
            if let Some(s) = &self.views.said {
                ui.label(egui::RichText::new(s).weak());
            }
        });
    }

    /// Saves what is shown as the user's view `name`.
    pub fn save_view(&mut self, name: &str) {
        let Some(dir) = user_dir() else { return };
        let path = dir.join(format!("{name}.ron"));
        let saved = std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))
            .and_then(|()| self.current_view(name).save(&path));
        match saved {
            Ok(()) => self.views.said = Some(format!("saved {}", path.display())),
            Err(e) => self.state.push_error(UiError::new(UiErrorKind::Save, e, "check the folder's permissions")),
        }
    }
}
