//! Writing a file for the window: [`WriteJob`] runs one [`Format`] on a thread of its own, from
//! a copy of the session, with progress, so a large file never holds the window up.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;

use zescope_store::Store;

use super::{Format, Input, WriteSpec};
use crate::session::{self, Session};
use crate::view::{Arrangement, default_arrangement};

/// What the window asks a [`WriteJob`] to write.
#[derive(Clone, Debug)]
pub struct WriteRequest {
    /// What to write.
    pub format: &'static dyn Format,
    /// Where.
    pub path: PathBuf,
    /// One pane (its index in the session's arrangement), or all.
    pub pane: Option<usize>,
    /// The time range (store ns), or everything.
    pub range: Option<(i64, i64)>,
}

/// A file being written on its own thread (see the module docs).
pub struct WriteJob {
    path: PathBuf,
    progress: Arc<AtomicU32>,
    handle: Option<JoinHandle<Result<String, String>>>,
}

impl WriteJob {
    /// Starts writing `req` from `session` (a capture of what the window shows: its panes,
    /// colours, hidden series and markers) on a new thread.
    pub fn spawn(session: Session, req: WriteRequest) -> WriteJob {
        let progress = Arc::new(AtomicU32::new(0));
        let p = Arc::clone(&progress);
        let path = req.path.clone();
        let handle = std::thread::Builder::new()
            .name("zescope-export".into())
            .spawn(move || run(session, &req, &|f| p.store(f.to_bits(), Ordering::Relaxed)))
            .map_err(|e| log::error!("cannot start the export thread: {e}"))
            .ok();
        WriteJob { path, progress, handle }
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The share written, 0.0 to 1.0 (an image says 0 until it is done).
    pub fn progress(&self) -> f32 {
        f32::from_bits(self.progress.load(Ordering::Relaxed))
    }

    /// What was written, or why not, once it is over; `None` while it runs.
    pub fn try_finish(&mut self) -> Option<Result<String, String>> {
        match &self.handle {
            Some(h) if !h.is_finished() => None,
            Some(_) => {
                let h = self.handle.take()?;
                Some(h.join().unwrap_or_else(|_| Err("the export thread failed".into())))
            }
            None => Some(Err("cannot start the export thread".into())),
        }
    }

    /// Waits for it to end (at quit: a file being written is finished, not cut short).
    pub fn wait(mut self) -> Result<String, String> {
        match self.handle.take() {
            Some(h) => h.join().unwrap_or_else(|_| Err("the export thread failed".into())),
            None => Err("cannot start the export thread".into()),
        }
    }
}

/// The thread: the session into a store of its own, then the format writes it.
fn run(mut session: Session, req: &WriteRequest, progress: &dyn Fn(f32)) -> Result<String, String> {
    let mut store = Store::new(usize::MAX);
    let restored = session.restore_into(&mut store).map_err(|e| e.to_string())?;
    // The samples are in the store now; the session keeps what describes them.
    for s in &mut session.streams {
        s.data.raw = Default::default();
        s.data.coarse = Vec::new();
    }
    let arrangement: Arrangement = if restored.arrangement.panes.is_empty() {
        default_arrangement(&restored.keys_in_order(), &restored.series)
    } else {
        restored.arrangement.clone()
    };
    let which = req.pane.map(|p| vec![p]);
    let mut spec = WriteSpec::from_arrangement(&arrangement, &restored.series, which.as_deref(), req.range);
    spec.markers = session::markers_from_file(&restored.markers).marks().to_vec();
    let input = Input {
        store: &store,
        spec: &spec,
        session: &session,
        streams: &restored.streams,
        series: &restored.series,
        size: None,
    };
    req.format.write(&input, &req.path, progress)
}
