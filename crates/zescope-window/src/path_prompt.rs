//! The built-in path prompt: a small window with the path in a text field, OK and Cancel, used
//! instead of a file dialog when there is no dialog backend (see `dialogs.rs` for when). A path
//! that cannot work (no such file to open, no such folder to save into, a folder where a file is
//! wanted) is refused inline, in the prompt, before anything is tried.

use std::path::{Path, PathBuf};

use egui::{Key, RichText};

use super::dialogs::FileKind;

/// What the path is for, which decides the title, the checks and what OK does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PromptPurpose {
    Open,
    Save,
    Compare,
    Write { kind: FileKind, pane: Option<usize>, shown_only: bool },
}

impl PromptPurpose {
    fn title(self) -> &'static str {
        match self {
            PromptPurpose::Open => "Open a session",
            PromptPurpose::Compare => "Compare with a session",
            PromptPurpose::Save => "Save the session",
            PromptPurpose::Write { .. } => "Export",
        }
    }

    /// Whether the path is one to write (save or export), not one to open.
    pub(crate) fn writes(self) -> bool {
        !matches!(self, PromptPurpose::Open | PromptPurpose::Compare)
    }

    fn kind(self) -> FileKind {
        match self {
            PromptPurpose::Open | PromptPurpose::Save | PromptPurpose::Compare => FileKind::Session,
            PromptPurpose::Write { kind, .. } => kind,
        }
    }
}

/// An open path prompt.
#[derive(Clone, Debug)]
pub struct PathPrompt {
    pub(crate) purpose: PromptPurpose,
    text: String,
    /// Why the last OK was refused.
    pub(crate) error: Option<String>,
    /// Why the prompt is shown instead of a dialog.
    pub(crate) reason: String,
    focus: bool,
    /// A file to write that exists already, which the next OK on the same path replaces.
    replacing: Option<PathBuf>,
}

/// What the prompt decided this frame.
pub(crate) enum PromptOutcome {
    Pending,
    Cancelled,
    Chosen(PathBuf),
}

impl PathPrompt {
    /// A prompt for `purpose`, prefilled with `suggested` in `dir` (else the current directory).
    pub(crate) fn new(purpose: PromptPurpose, suggested: &str, reason: String, dir: Option<PathBuf>) -> PathPrompt {
        let dir = dir.or_else(|| std::env::current_dir().ok()).unwrap_or_default();
        let text = if suggested.is_empty() {
            format!("{}/", dir.display())
        } else {
            dir.join(suggested).display().to_string()
        };
        PathPrompt { purpose, text, error: None, reason, focus: true, replacing: None }
    }

    /// A prompt for `purpose` holding `path`, a file dialog's answer that [`named_for`] refused
    /// with `error`: the user types another.
    pub(crate) fn refused(purpose: PromptPurpose, path: &Path, error: String) -> PathPrompt {
        let reason = "The file dialog's answer cannot be used: change it here.".to_owned();
        let text = path.display().to_string();
        PathPrompt { purpose, text, error: Some(error), reason, focus: true, replacing: None }
    }

    /// Draws the prompt; Enter is OK, Escape is Cancel.
    pub(crate) fn show(&mut self, ctx: &egui::Context) -> PromptOutcome {
        let mut outcome = PromptOutcome::Pending;
        let mut open = true;
        egui::Window::new(self.purpose.title())
            .id(egui::Id::unique("zescope-path-prompt"))
            .collapsible(false)
            .resizable(false)
            .open(&mut open)
            .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
            .show(ctx, |ui| {
                ui.label(RichText::new(&self.reason).weak());
                let label = ui.label(match self.purpose {
                    PromptPurpose::Open | PromptPurpose::Compare => "Path of the session file (.ron) to open:",
                    _ => "Path of the file to write:",
                });
                let width = (ctx.content_rect().width() * 0.6).clamp(200.0, 640.0);
                let edit =
                    ui.add(egui::TextEdit::singleline(&mut self.text).desired_width(width)).labelled_by(label.id);
                if self.focus {
                    edit.request_focus();
                    self.focus = false;
                }
                if edit.changed() {
                    self.error = None;
                }
                let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
                if let Some(e) = &self.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                ui.horizontal(|ui| {
                    if ui.button("OK").clicked() || enter {
                        let writes = self.purpose.writes();
                        match check_path(self.purpose, &self.text) {
                            // Writing over a file asks once: OK again on the same path replaces it.
                            Ok(p) if writes && p.is_file() && self.replacing.as_ref() != Some(&p) => {
                                self.error = Some(format!("{} exists: OK again replaces it", p.display()));
                                self.replacing = Some(p);
                                self.focus = true;
                            }
                            Ok(p) => outcome = PromptOutcome::Chosen(p),
                            Err(e) => {
                                self.error = Some(e);
                                self.focus = true;
                            }
                        }
                    }
                    if ui.button("Cancel").clicked() || ui.input(|i| i.key_pressed(Key::Escape)) {
                        outcome = PromptOutcome::Cancelled;
                    }
                });
            });
        if !open {
            outcome = PromptOutcome::Cancelled;
        }
        outcome
    }
}

/// The path typed for `purpose`, checked: `~/` expanded, a missing extension added when writing.
pub(crate) fn check_path(purpose: PromptPurpose, text: &str) -> Result<PathBuf, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("type a path".into());
    }
    let mut path = expand_home(text);
    if path.is_relative() {
        path = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?.join(path);
    }
    match purpose {
        PromptPurpose::Open | PromptPurpose::Compare => match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => Err(format!("{} is a folder: type the path of a session file", path.display())),
            Ok(_) => Ok(path),
            Err(e) => Err(format!("cannot open {}: {}", path.display(), io_reason(&e))),
        },
        PromptPurpose::Save | PromptPurpose::Write { .. } => {
            if text.ends_with('/') || path.is_dir() {
                return Err(format!("{} is a folder: add a file name", path.display()));
            }
            if path.extension().is_none() {
                path.set_extension(purpose.kind().extension());
            }
            named_for(purpose, &path)?;
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("/"));
            match std::fs::metadata(parent) {
                Ok(m) if m.is_dir() => Ok(path),
                Ok(_) => Err(format!("{} is not a folder", parent.display())),
                Err(e) => Err(format!("cannot write into {}: {}", parent.display(), io_reason(&e))),
            }
        }
    }
}

/// Refuses writing `purpose`'s file under a name of another format zescope writes (a session or
/// an export format): it would hold this one's bytes (a PNG named .svg), as `zescope export`
/// refuses. Any other name is taken.
pub(crate) fn named_for(purpose: PromptPurpose, path: &Path) -> Result<(), String> {
    let own = purpose.kind().extension();
    let Some(ext) = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()) else { return Ok(()) };
    let other = ext == "ron" || zescope_model::write::formats_named(&ext).next().is_some();
    if ext != own && other {
        return Err(format!("{} is a .{ext} name: this writes a .{own}", path.display()));
    }
    Ok(())
}

pub(crate) fn expand_home(text: &str) -> PathBuf {
    match (text.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(text),
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_needs_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.ron");
        std::fs::write(&f, "x").unwrap();
        assert_eq!(check_path(PromptPurpose::Open, &format!(" {} ", f.display())), Ok(f));
        let e = check_path(PromptPurpose::Open, &dir.path().join("none.ron").display().to_string()).unwrap_err();
        assert!(e.contains("none.ron") && e.contains("no such file"), "{e}");
        let e = check_path(PromptPurpose::Open, &dir.path().display().to_string()).unwrap_err();
        assert!(e.contains("is a folder"), "{e}");
        assert_eq!(check_path(PromptPurpose::Open, "  "), Err("type a path".into()));
    }

    #[test]
    fn writing_needs_an_existing_folder_and_gets_an_extension() {
        let dir = tempfile::tempdir().unwrap();
        let export =
            PromptPurpose::Write { kind: FileKind::File(&zescope_model::write::Csv), pane: None, shown_only: true };
        let p = check_path(export, &dir.path().join("data").display().to_string()).unwrap();
        assert_eq!(p, dir.path().join("data.csv"));
        let p = check_path(PromptPurpose::Save, &dir.path().join("run.ron").display().to_string()).unwrap();
        assert_eq!(p, dir.path().join("run.ron"));
        let e = check_path(PromptPurpose::Save, &dir.path().join("no/such/run.ron").display().to_string()).unwrap_err();
        assert!(e.contains("no/such") && e.contains("no such file or folder"), "{e}");
        let e = check_path(PromptPurpose::Save, &format!("{}/", dir.path().display())).unwrap_err();
        assert!(e.contains("add a file name"), "{e}");
    }

    /// A name of another format zescope writes is refused (a PNG under an SVG's name, a session
    /// under a CSV's), as `zescope export` refuses it; any other name is taken.
    #[test]
    fn writing_refuses_a_name_of_another_format() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name).display().to_string();
        let png =
            PromptPurpose::Write { kind: FileKind::File(&zescope_model::write::Png), pane: None, shown_only: false };
        let e = check_path(png, &at("plot.svg")).unwrap_err();
        assert!(e.ends_with("plot.svg is a .svg name: this writes a .png"), "{e}");
        let e = check_path(PromptPurpose::Save, &at("run.csv")).unwrap_err();
        assert!(e.ends_with("run.csv is a .csv name: this writes a .ron"), "{e}");
        assert_eq!(check_path(png, &at("plot.PNG")), Ok(dir.path().join("plot.PNG")));
        assert_eq!(check_path(png, &at("plot.image")), Ok(dir.path().join("plot.image")));
    }
}
