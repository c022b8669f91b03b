//! Files in the window: open (menu, Open Recent, or a `.ron` dropped on the window), save and
//! save-as in the background with progress, export of panes and data, autosave of a running
//! session and the offer to recover one after a crash. Dialogs go through [`Dialogs`], so tests
//! answer them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::session::autosave::{Autosaver, Recoverable};
use crate::session::{self, Marker, SaveJob};

use super::banner::{UiError, UiErrorKind};
use super::dialogs::{Dialogs, FileKind, NativeDialogs};

/// Recent files remembered.
const RECENT: usize = 8;
/// How often a running session is checkpointed.
pub const AUTOSAVE_EVERY: Duration = Duration::from_secs(30);

/// What a file action asks the app to do next.
pub enum FileAction {
    /// Open this session (the app stops a run first).
    Open(PathBuf),
    /// Capture the app and save it here in the background.
    Save(PathBuf),
    Export {
        kind: FileKind,
        path: PathBuf,
        pane: Option<usize>,
        shown_only: bool,
    },
}

pub struct Files {
    pub dialogs: Box<dyn Dialogs>,
    /// The session file being worked on (last opened or saved).
    pub current: Option<PathBuf>,
    /// Set while the window shows an opened recording rather than live data.
    pub recording: Option<PathBuf>,
    pub recent: Vec<PathBuf>,
    pub markers: Vec<Marker>,
    save: Option<SaveJob>,
    /// Last outcome to show in the status bar ("saved …").
    pub note: Option<String>,
    /// A session to open once the run has stopped.
    pub pending_open: Option<PathBuf>,
    pub autosave: Option<Autosaver>,
    last_checkpoint: Option<Instant>,
    /// A crashed session's checkpoint, offered at start.
    pub recover: Option<Recoverable>,
}

impl Default for Files {
    fn default() -> Self {
        Files::new(Box::new(NativeDialogs))
    }
}

pub fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
}

impl Files {
    pub fn new(dialogs: Box<dyn Dialogs>) -> Files {
        Files {
            dialogs,
            current: None,
            recording: None,
            recent: Vec::new(),
            markers: Vec::new(),
            save: None,
            note: None,
            pending_open: None,
            autosave: None,
            last_checkpoint: None,
            recover: None,
        }
    }

    pub fn with_recent(mut self, recent: Vec<PathBuf>) -> Files {
        self.recent = recent;
        self.recent.truncate(RECENT);
        self
    }

    pub fn remember(&mut self, p: &Path) {
        self.recent.retain(|r| r != p);
        self.recent.insert(0, p.to_path_buf());
        self.recent.truncate(RECENT);
    }

    pub fn saving(&self) -> Option<f32> {
        self.save.as_ref().map(SaveJob::progress)
    }

    /// File → Open…
    pub fn ask_open(&self) -> Option<FileAction> {
        self.dialogs.open(FileKind::Session).map(FileAction::Open)
    }

    /// File → Save (to the current file, else as Save As).
    pub fn ask_save(&self) -> Option<FileAction> {
        match &self.current {
            Some(p) => Some(FileAction::Save(p.clone())),
            None => self.ask_save_as(),
        }
    }

    pub fn ask_save_as(&self) -> Option<FileAction> {
        self.dialogs.save(FileKind::Session, "zescope-session.ron").map(FileAction::Save)
    }

    pub fn ask_export(&self, kind: FileKind, pane: Option<usize>, shown_only: bool) -> Option<FileAction> {
        let what = match pane {
            Some(p) => format!("pane-{}", p + 1),
            None => "panes".to_owned(),
        };
        let name = format!("zescope-{what}.{}", kind.extension());
        self.dialogs.save(kind, &name).map(|path| FileAction::Export { kind, path, pane, shown_only })
    }

    /// Starts a background save of `session` to `path`. One save at a time.
    pub fn start_save(&mut self, session: session::Session, path: PathBuf) -> Result<(), UiError> {
        if self.save.is_some() {
            return Err(UiError::new(
                UiErrorKind::Save,
                "a save is already in progress".into(),
                "wait for it to finish",
            ));
        }
        self.note = Some(format!("saving {}…", file_name(&path)));
        self.save = Some(SaveJob::spawn(session, path));
        Ok(())
    }

    /// Collects a finished save: the error to show, if it failed.
    pub fn poll_save(&mut self) -> Option<UiError> {
        let job = self.save.as_mut()?;
        let result = job.try_finish()?;
        let path = job.path().to_path_buf();
        self.save = None;
        match result {
            Ok(()) => {
                self.note = Some(format!("saved {}", file_name(&path)));
                self.current = Some(path.clone());
                self.remember(&path);
                None
            }
            Err(e) => {
                self.note = None;
                Some(UiError::new(
                    UiErrorKind::Save,
                    format!("saving {} failed: {e}", path.display()),
                    "the previous file, if any, is intact; choose another place or free disk space",
                ))
            }
        }
    }

    /// Waits for a save in flight (at quit: nothing recorded may be lost).
    pub fn finish_save(&mut self) -> Option<UiError> {
        while self.save.as_ref().is_some_and(|j| !j.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.poll_save()
    }

    /// Is a checkpoint due (a run is going and the last one is old)?
    pub fn checkpoint_due(&self, now: Instant) -> bool {
        self.autosave.is_some() && self.last_checkpoint.is_none_or(|t| now.duration_since(t) >= AUTOSAVE_EVERY)
    }

    pub fn checkpointed(&mut self, now: Instant) {
        self.last_checkpoint = Some(now);
    }

    /// Forget checkpoints taken of a store that was replaced.
    pub fn reset_autosave(&mut self) {
        if let Some(a) = &mut self.autosave {
            a.reset();
        }
        self.last_checkpoint = None;
    }

    /// A clean exit: the checkpoint is not needed any more.
    pub fn discard_autosave(&mut self) {
        if let Some(a) = self.autosave.take() {
            a.discard();
        }
    }
}
