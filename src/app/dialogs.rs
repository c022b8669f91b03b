//! File dialogs behind a trait: rfd's native dialogs in the window (xdg-desktop-portal, or
//! zenity when there is no portal), scripted answers in tests so nothing real opens.

use std::path::PathBuf;

/// What a dialog is for, which decides its title, filters and default name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Session,
    Png,
    Svg,
    Csv,
}

impl FileKind {
    pub fn extension(self) -> &'static str {
        match self {
            FileKind::Session => "ron",
            FileKind::Png => "png",
            FileKind::Svg => "svg",
            FileKind::Csv => "csv",
        }
    }

    fn filter_name(self) -> &'static str {
        match self {
            FileKind::Session => "zescope session",
            FileKind::Png => "PNG image",
            FileKind::Svg => "SVG image",
            FileKind::Csv => "CSV table",
        }
    }
}

pub trait Dialogs {
    /// A file to open, or `None` if the user cancelled.
    fn open(&self, kind: FileKind) -> Option<PathBuf>;
    /// Where to save, or `None` if the user cancelled. `suggested` is a file name.
    fn save(&self, kind: FileKind, suggested: &str) -> Option<PathBuf>;
}

/// Native dialogs through rfd.
pub struct NativeDialogs;

impl Dialogs for NativeDialogs {
    fn open(&self, kind: FileKind) -> Option<PathBuf> {
        rfd::FileDialog::new()
            .set_title("Open a zescope session")
            .add_filter(kind.filter_name(), &[kind.extension()])
            .pick_file()
    }

    fn save(&self, kind: FileKind, suggested: &str) -> Option<PathBuf> {
        let path = rfd::FileDialog::new()
            .set_title(match kind {
                FileKind::Session => "Save the session",
                _ => "Export",
            })
            .add_filter(kind.filter_name(), &[kind.extension()])
            .set_file_name(suggested)
            .save_file()?;
        // Add the extension when the user typed a bare name.
        Some(if path.extension().is_none() { path.with_extension(kind.extension()) } else { path })
    }
}

/// Answers prepared by a test, in order; `None` answers act as "cancelled".
#[derive(Default)]
pub struct ScriptedDialogs {
    pub answers: std::sync::Mutex<std::collections::VecDeque<Option<PathBuf>>>,
    /// What was asked, for assertions: (kind, "open" or "save").
    pub asked: std::sync::Mutex<Vec<(FileKind, &'static str)>>,
}

impl ScriptedDialogs {
    pub fn answering(answers: impl IntoIterator<Item = Option<PathBuf>>) -> ScriptedDialogs {
        ScriptedDialogs { answers: std::sync::Mutex::new(answers.into_iter().collect()), asked: Default::default() }
    }

    fn next(&self, kind: FileKind, what: &'static str) -> Option<PathBuf> {
        self.asked.lock().unwrap_or_else(|e| e.into_inner()).push((kind, what));
        self.answers.lock().unwrap_or_else(|e| e.into_inner()).pop_front().flatten()
    }
}

impl Dialogs for ScriptedDialogs {
    fn open(&self, kind: FileKind) -> Option<PathBuf> {
        self.next(kind, "open")
    }

    fn save(&self, kind: FileKind, _suggested: &str) -> Option<PathBuf> {
        self.next(kind, "save")
    }
}

impl<T: Dialogs + ?Sized> Dialogs for std::sync::Arc<T> {
    fn open(&self, kind: FileKind) -> Option<PathBuf> {
        (**self).open(kind)
    }

    fn save(&self, kind: FileKind, suggested: &str) -> Option<PathBuf> {
        (**self).save(kind, suggested)
    }
}
