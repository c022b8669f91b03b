//! Saving on a background thread, so a long session does not freeze the UI:
//! the UI captures the session (a copy of the store's data), hands it to a
//! [`SaveJob`] and polls [`SaveJob::progress`] / [`SaveJob::try_finish`]
//! each frame.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use super::{Progress, Session, SessionError};

/// A save in progress.
pub struct SaveJob {
    path: PathBuf,
    progress: Arc<Progress>,
    handle: Option<JoinHandle<Result<(), SessionError>>>,
    /// The thread could not be started.
    failed: Option<SessionError>,
}

/// Share of the progress bar for encoding; the rest is writing.
const ENCODE_SHARE: f32 = 0.9;

impl SaveJob {
    /// Start saving `session` to `path` on a new thread.
    pub fn spawn(session: Session, path: PathBuf) -> SaveJob {
        let progress = Arc::new(Progress::default());
        let (p, target) = (Arc::clone(&progress), path.clone());
        let spawned = std::thread::Builder::new()
            .name("zescope-save".into())
            .spawn(move || super::save_with_progress(&target, &session, &p));
        match spawned {
            Ok(h) => SaveJob { path, progress, handle: Some(h), failed: None },
            Err(e) => {
                let failed = Some(SessionError::io(&path, "cannot start the save thread", e));
                SaveJob { path, progress, handle: None, failed }
            }
        }
    }

    /// The file being saved.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// 0.0 to 1.0.
    pub fn progress(&self) -> f32 {
        if self.is_finished() { 1.0 } else { self.progress.fraction() * ENCODE_SHARE }
    }

    /// Ask the save to stop; the previous file stays as it was.
    pub fn cancel(&self) {
        self.progress.cancel.store(true, Ordering::Relaxed);
    }

    /// Is the save over (written, failed or cancelled)? Then [`SaveJob::try_finish`] returns
    /// its outcome without waiting. True at once when the thread could not be started.
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// The outcome once the save is over (`None` while it runs). Returns it
    /// once; later calls return `None`.
    pub fn try_finish(&mut self) -> Option<Result<(), SessionError>> {
        if !self.is_finished() {
            return None;
        }
        match self.handle.take() {
            Some(h) => Some(join(h)),
            None => self.failed.take().map(Err),
        }
    }

    /// Wait for the outcome.
    pub fn wait(mut self) -> Result<(), SessionError> {
        match (self.handle.take(), self.failed.take()) {
            (Some(h), _) => join(h),
            (None, Some(e)) => Err(e),
            (None, None) => Err(SessionError::Cancelled),
        }
    }
}

fn join(h: JoinHandle<Result<(), SessionError>>) -> Result<(), SessionError> {
    h.join().unwrap_or_else(|_| Err(SessionError::Encode("the save thread panicked".into())))
}
