//! The one way a file is written from a session's data, for `zescope export` and the window alike:
//! [`write_file`] writes one [`Output`] (an image, the CSV with its markers file beside it, a
//! Perfetto trace); [`WriteJob`] runs it on a thread of its own for the window, from a copy of
//! the session, with progress, so a large export never holds the window up.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;

use zescope_store::{Store, StreamId};

use super::WriteSpec;
use crate::session::{self, Session};
use crate::view::{PaneLayout, default_layout};

/// What is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The panes as a PNG image.
    Png,
    /// The panes as an SVG image.
    Svg,
    /// The samples as CSV, with `NAME.markers.csv` beside it when markers touch the range.
    Csv,
    /// Every sample, the markers and the metadata as a Perfetto trace.
    Perfetto,
}

/// An image's size when none is asked for: 1600 wide, 320 high a pane and 120 more.
pub fn default_size(panes: usize) -> (u32, u32) {
    let n = u32::try_from(panes.max(1)).unwrap_or(u32::MAX);
    (1600, n.saturating_mul(320).saturating_add(120).clamp(480, super::image::MAX_SIDE))
}

/// Writes `what` of `spec` from `store` to `path`; `head` and `streams` (the session the store
/// holds, and its streams in the session's order) are what a Perfetto trace describes. Returns
/// what was written, for the user: "a.png (1600x800)", "a.csv (1200 rows), a.markers.csv (3
/// markers)". `progress` hears the share done (0.0 to 1.0) now and then.
pub fn write_file(
    store: &Store,
    spec: &WriteSpec,
    (head, streams): (&Session, &[StreamId]),
    what: Output,
    path: &Path,
    size: Option<(u32, u32)>,
    progress: &dyn Fn(f32),
) -> Result<String, String> {
    let size = size.unwrap_or_else(|| default_size(spec.panes.len()));
    match what {
        Output::Png => super::png(store, spec, path, size).map_err(|e| e.to_string())?,
        Output::Svg => super::svg(store, spec, path, size).map_err(|e| e.to_string())?,
        Output::Csv => {
            let rows = super::csv::csv_with_progress(store, spec, path, progress).map_err(|e| e.to_string())?;
            let mut said = format!("{} ({rows} rows)", path.display());
            // The markers that touch the exported range, in a file beside it.
            let (a, b) = spec.resolved_range(store).unwrap_or((i64::MIN, i64::MAX));
            let now = store.total_time_range().map_or(b, |r| r.1);
            let marks: Vec<_> = spec.markers.iter().filter(|m| m.end_ns(now) >= a && m.t_ns <= b).cloned().collect();
            if !marks.is_empty() {
                let mp = super::markers_path(path);
                super::write_markers_csv(&mp, &marks, store.origin_ns())
                    .map_err(|e| format!("{}: {e}", mp.display()))?;
                said += &format!(", {} ({} markers)", mp.display(), marks.len());
            }
            return Ok(said);
        }
        Output::Perfetto => {
            let w = super::perfetto(head, store, streams, path).map_err(|e| format!("{}: {e}", path.display()))?;
            return Ok(format!("{} ({} samples, {} values, {} markers)", path.display(), w.rows, w.values, w.markers));
        }
    }
    Ok(format!("{} ({}x{})", path.display(), size.0, size.1))
}

/// What the window asks an [`WriteJob`] to write.
#[derive(Clone, Debug)]
pub struct WriteRequest {
    /// What to write.
    pub what: Output,
    /// Where.
    pub path: PathBuf,
    /// One pane (its index in the session's layout), or all.
    pub pane: Option<usize>,
    /// The time range (store ns), or everything.
    pub range: Option<(i64, i64)>,
}

/// An export running on its own thread (see the module docs).
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

/// The thread: the session into a store of its own, then [`write_file`].
fn run(mut session: Session, req: &WriteRequest, progress: &dyn Fn(f32)) -> Result<String, String> {
    let mut store = Store::new(usize::MAX);
    let restored = session.restore_into(&mut store).map_err(|e| e.to_string())?;
    // The samples are in the store now; the session keeps what describes them.
    for s in &mut session.streams {
        s.data.raw = Default::default();
        s.data.coarse = Vec::new();
    }
    let layout: PaneLayout = if restored.layout.panes.is_empty() {
        default_layout(&restored.keys_in_order(), &restored.series)
    } else {
        restored.layout.clone()
    };
    let which = req.pane.map(|p| vec![p]);
    let mut spec = WriteSpec::from_layout(&layout, &restored.series, which.as_deref(), req.range);
    spec.markers = session::markers_from_file(&restored.markers).marks().to_vec();
    write_file(&store, &spec, (&session, &restored.streams), req.what, &req.path, None, progress)
}
