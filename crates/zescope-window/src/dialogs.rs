//! File dialogs behind a trait: rfd's native dialogs in the window (xdg-desktop-portal, or
//! zenity when there is no portal), scripted answers in tests so nothing real opens. When no
//! dialog can be shown, the answer says so and the window asks with its own path prompt
//! (`path_prompt.rs`).

use std::path::{Path, PathBuf};

use zescope_model::write::Format;

/// What a dialog is for, which decides its title, filters and default name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A zescope session (`.ron`).
    Session,
    /// A file written in one of zescope's formats (`zescope_model::write::FORMATS`).
    File(&'static dyn Format),
}

impl FileKind {
    /// The file name extension, without the dot; added to a written path that has none.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            FileKind::Session => "ron",
            FileKind::File(f) => f.extension(),
        }
    }

    fn filter_name(self) -> &'static str {
        match self {
            FileKind::Session => "zescope session",
            FileKind::File(f) => f.title(),
        }
    }
}

/// What a dialog answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DialogAnswer {
    /// The user chose this path.
    Picked(PathBuf),
    /// The user closed the dialog without choosing.
    Cancelled,
    /// No dialog could be shown; the reason, for the built-in path prompt that replaces it.
    Unavailable(String),
}

impl From<Option<PathBuf>> for DialogAnswer {
    fn from(p: Option<PathBuf>) -> DialogAnswer {
        p.map_or(DialogAnswer::Cancelled, DialogAnswer::Picked)
    }
}

/// Asks the user for a file: native dialogs in the window, scripted answers in tests. Called on
/// the UI thread and may block it while a native dialog is open.
pub trait Dialogs {
    /// A file to open; the dialog starts in `dir` where one is given.
    fn open(&self, kind: FileKind, dir: Option<&Path>) -> DialogAnswer;
    /// Where to save. `suggested` is a file name; the dialog starts in `dir` where one is given.
    fn save(&self, kind: FileKind, suggested: &str, dir: Option<&Path>) -> DialogAnswer;
}

/// The variable that chooses between native dialogs and the built-in path prompt.
pub(crate) const DIALOG_ENV: &str = "ZESCOPE_FILE_DIALOG";

/// How [`NativeDialogs`] decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DialogMode {
    /// Native dialogs when a backend (portal or zenity) is found, else the prompt.
    Auto,
    /// Always try the native dialog (the prompt still replaces one that fails).
    Native,
    /// Always the built-in path prompt.
    Prompt,
}

impl DialogMode {
    /// From `ZESCOPE_FILE_DIALOG` (`auto`, `native`, `prompt`; unset is `auto`).
    pub(crate) fn from_env() -> DialogMode {
        match std::env::var(DIALOG_ENV).ok().as_deref().map(str::trim) {
            None | Some("" | "auto") => DialogMode::Auto,
            Some("native") => DialogMode::Native,
            Some("prompt") => DialogMode::Prompt,
            Some(other) => {
                log::warn!("{DIALOG_ENV}={other:?} is not auto, native or prompt; using auto");
                DialogMode::Auto
            }
        }
    }
}

/// Native dialogs through rfd (xdg-desktop-portal, or zenity without a portal), replaced by the
/// built-in path prompt when there is no backend, when rfd reports an error, or when
/// `ZESCOPE_FILE_DIALOG=prompt`. Once a native dialog failed, the prompt is used for the rest of
/// the session.
pub(crate) struct NativeDialogs {
    mode: DialogMode,
    failed: std::cell::Cell<bool>,
}

impl NativeDialogs {
    pub(crate) fn new(mode: DialogMode) -> NativeDialogs {
        NativeDialogs { mode, failed: std::cell::Cell::new(false) }
    }

    /// Why the prompt must be used instead of a native dialog, if it must.
    fn unavailable(&self) -> Option<String> {
        if self.failed.get() {
            return Some("The file dialog failed earlier; type the path instead.".into());
        }
        match self.mode {
            DialogMode::Prompt => Some(format!("{DIALOG_ENV}=prompt: type the path.")),
            DialogMode::Native => None,
            DialogMode::Auto => (!zescope_doctor::dialog_backend_found())
                .then(|| "No file dialog backend (xdg-desktop-portal or zenity): type the path.".to_owned()),
        }
    }

    /// Runs an rfd dialog; an error rfd logged means no dialog was shown.
    fn run(&self, dialog: impl FnOnce() -> Option<PathBuf>) -> DialogAnswer {
        if let Some(why) = self.unavailable() {
            return DialogAnswer::Unavailable(why);
        }
        let errors = crate::logwatch::dialog_errors();
        let picked = dialog();
        if picked.is_none() && crate::logwatch::dialog_errors() > errors {
            self.failed.set(true);
            return DialogAnswer::Unavailable(
                "The file dialog could not be shown (see the log); type the path.".into(),
            );
        }
        picked.into()
    }
}

impl Default for NativeDialogs {
    fn default() -> Self {
        NativeDialogs::new(DialogMode::from_env())
    }
}

impl Dialogs for NativeDialogs {
    fn open(&self, kind: FileKind, dir: Option<&Path>) -> DialogAnswer {
        self.run(|| {
            in_dir(rfd::FileDialog::new(), dir)
                .set_title("Open a zescope session")
                .add_filter(kind.filter_name(), &[kind.extension()])
                .pick_file()
        })
    }

    fn save(&self, kind: FileKind, suggested: &str, dir: Option<&Path>) -> DialogAnswer {
        let answer = self.run(|| {
            in_dir(rfd::FileDialog::new(), dir)
                .set_title(match kind {
                    FileKind::Session => "Save the session",
                    _ => "Export",
                })
                .add_filter(kind.filter_name(), &[kind.extension()])
                .set_file_name(suggested)
                .save_file()
        });
        match answer {
            // Add the extension when the user typed a bare name.
            DialogAnswer::Picked(path) if path.extension().is_none() => {
                DialogAnswer::Picked(path.with_extension(kind.extension()))
            }
            a => a,
        }
    }
}

/// `dialog` starting in `dir`, if one is given.
fn in_dir(dialog: rfd::FileDialog, dir: Option<&Path>) -> rfd::FileDialog {
    match dir {
        Some(d) => dialog.set_directory(d),
        None => dialog,
    }
}

/// No dialog backend at all (tests of the path prompt).
pub struct NoDialogs;

impl Dialogs for NoDialogs {
    fn open(&self, _: FileKind, _: Option<&Path>) -> DialogAnswer {
        DialogAnswer::Unavailable("No file dialog backend: type the path.".into())
    }

    fn save(&self, _: FileKind, _: &str, _: Option<&Path>) -> DialogAnswer {
        DialogAnswer::Unavailable("No file dialog backend: type the path.".into())
    }
}

/// Answers prepared by a test, in order; `None` answers act as "cancelled".
#[derive(Default)]
pub struct ScriptedDialogs {
    /// What the next dialogs answer, front first; once empty, every dialog is cancelled.
    pub answers: std::sync::Mutex<std::collections::VecDeque<Option<PathBuf>>>,
    /// What was asked, for assertions: (kind, "open" or "save").
    pub asked: std::sync::Mutex<Vec<(FileKind, &'static str)>>,
    /// The folder each dialog was to start in, in the same order.
    pub dirs: std::sync::Mutex<Vec<Option<PathBuf>>>,
}

impl ScriptedDialogs {
    /// Dialogs that answer `answers` in order (`None`: cancelled), then cancel.
    pub fn answering(answers: impl IntoIterator<Item = Option<PathBuf>>) -> ScriptedDialogs {
        ScriptedDialogs {
            answers: std::sync::Mutex::new(answers.into_iter().collect()),
            asked: Default::default(),
            dirs: Default::default(),
        }
    }

    fn next(&self, kind: FileKind, what: &'static str, dir: Option<&Path>) -> Option<PathBuf> {
        self.asked.lock().unwrap_or_else(|e| e.into_inner()).push((kind, what));
        self.dirs.lock().unwrap_or_else(|e| e.into_inner()).push(dir.map(Path::to_path_buf));
        self.answers.lock().unwrap_or_else(|e| e.into_inner()).pop_front().flatten()
    }
}

impl Dialogs for ScriptedDialogs {
    fn open(&self, kind: FileKind, dir: Option<&Path>) -> DialogAnswer {
        self.next(kind, "open", dir).into()
    }

    fn save(&self, kind: FileKind, _suggested: &str, dir: Option<&Path>) -> DialogAnswer {
        self.next(kind, "save", dir).into()
    }
}

impl<T: Dialogs + ?Sized> Dialogs for std::sync::Arc<T> {
    fn open(&self, kind: FileKind, dir: Option<&Path>) -> DialogAnswer {
        (**self).open(kind, dir)
    }

    fn save(&self, kind: FileKind, suggested: &str, dir: Option<&Path>) -> DialogAnswer {
        (**self).save(kind, suggested, dir)
    }
}

/// The file name of `p` for labels and notes (the whole path if it has none).
pub(crate) fn file_name(p: &std::path::Path) -> String {
    p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
}
