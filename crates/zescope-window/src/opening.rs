//! Opening a session progressively ([`LoadJob`]): as soon as the file's head is read, the
//! window shows its streams, panes and markers, with the view fitted to the session's whole
//! time range; each frame then moves at most [`PIECES_PER_FRAME`] decoded pieces into the store
//! and asks for another frame until all are in. The status bar says "opening NAME … 37 %".
//!
//! A frame waits (at most [`WAIT`]) for its first piece, so every frame makes progress and the
//! pieces a frame applies do not depend on timing; decoding runs ahead of the window, so the
//! wait is short except for the head (reading and parsing the file).
//!
//! While a session opens:
//! - opening another one cancels this one and opens that;
//! - starting a run cancels it (the run replaces the recording, as it would once opened);
//! - saving is refused with a message (the file is only partly shown); writing a file (File → Export) writes
//!   what is shown;
//! - quitting or closing cancels it without asking: the data is all in its file.
//!
//! The session counts as saved (and becomes the current file) only once every sample is in.
//! A file found malformed part way keeps what was shown before the problem, with an error
//! naming it; that partial data is not the current file, so Save asks for a new name.

use std::time::Duration;

use zescope_model::session::{self, LoadEvent, LoadHead, LoadJob, Piece};
use zescope_store::StreamId;

use super::ZescopeApp;
use super::banner::{UiError, UiErrorKind};
use super::dialogs::file_name;
use super::session::open_in_app;
use zescope_model::view::TimeAxis;

/// Decoded pieces (a chunk of up to 4096 samples, or whole blocks of a wide one: about 4 MiB
/// each, 8 MiB at most: `session::PIECE_BYTES`) moved into the store per frame at most.
pub const PIECES_PER_FRAME: usize = 8;
/// Longest a frame waits for the open's next event.
pub const WAIT: Duration = Duration::from_secs(2);

/// An open in progress.
pub struct Opening {
    job: LoadJob,
    /// Store ids of the session's streams, once the head is in.
    ids: Vec<StreamId>,
    /// Per stream: it ends once its last piece is in.
    ended: Vec<bool>,
    /// Pieces still to come (`u64::MAX` until the head is in).
    left: u64,
}

impl Opening {
    /// Status bar text: "opening NAME … 37 %" (never 100 before the end).
    pub fn status(&self) -> String {
        let pct = (self.job.progress() * 100.0).floor().min(99.0);
        format!("opening {} … {pct:.0} %", file_name(self.job.path()))
    }
}

impl ZescopeApp {
    /// Start opening `path` (cancelling an open in progress) and take its first frame's share.
    pub(super) fn start_opening(&mut self, path: &std::path::Path) {
        self.files.opening = None;
        let job = LoadJob::spawn(path.to_path_buf());
        self.files.opening = Some(Opening { job, ids: Vec::new(), ended: Vec::new(), left: u64::MAX });
        self.poll_opening();
    }

    /// Is a session being opened?
    pub fn opening(&self) -> bool {
        self.files.opening.is_some()
    }

    /// Per frame: the head, then up to [`PIECES_PER_FRAME`] pieces, then the end.
    pub(super) fn poll_opening(&mut self) {
        let mut applied = 0;
        while let Some(o) = &mut self.files.opening {
            // Wait for the head and the frame's first piece; later pieces only if ready. The
            // end is waited for too once every piece is in (it follows at once).
            let wait = if applied == 0 || o.left == 0 { WAIT } else { Duration::ZERO };
            if applied == PIECES_PER_FRAME && o.left > 0 {
                return;
            }
            let Some(event) = o.job.next(wait) else {
                if o.job.is_over() {
                    self.files.opening = None;
                }
                return;
            };
            match event {
                LoadEvent::Head(head) => self.opened_head(*head),
                LoadEvent::Piece(p) => {
                    applied += 1;
                    self.opened_piece(p);
                }
                LoadEvent::Done => self.opened_all(),
                LoadEvent::Failed(e) => self.open_failed(&e),
            }
        }
    }

    fn opened_head(&mut self, head: LoadHead) {
        let Some(o) = &self.files.opening else { return };
        let path = o.job.path().to_path_buf();
        match open_in_app(self, &head.session) {
            Ok(markers) => {
                if self.store.origin_ns().is_none()
                    && let Some(t) = head.origin_ns
                {
                    self.store.set_origin(t);
                }
                self.comparison = None;
                if let Some(c) = &head.session.comparison {
                    // A relative path is relative to the session file's folder.
                    let p = path.parent().unwrap_or(std::path::Path::new(".")).join(&c.path);
                    self.compare_with(&p, c.offset_s, c.align_marker.clone());
                }
                self.files.markers = session::markers_from_file(&markers);
                self.files.recording = Some(path);
                self.files.current = None;
                self.files.note = None;
                self.files.reset_autosave();
                // A recording is shown whole, whatever view it was saved with.
                let span = head.span.map(|(a, b)| (TimeAxis::of(&self.store).x(a), TimeAxis::of(&self.store).x(b)));
                self.view.fit(span.or_else(|| zescope_model::view::data_x(&self.store)));
                // A fresh store: its streams are the session's, in order.
                let ids = self.store.streams().map(|s| s.id).collect();
                if let Some(o) = &mut self.files.opening {
                    o.left = head.pieces;
                    o.ids = ids;
                    o.ended = head.ended;
                }
            }
            Err(e) => self.open_failed(&e),
        }
    }

    fn opened_piece(&mut self, p: Piece) {
        let Some(o) = &mut self.files.opening else { return };
        o.left = o.left.saturating_sub(1);
        let Some(&id) = o.ids.get(p.stream) else { return };
        let ends = p.last && o.ended.get(p.stream).copied().unwrap_or(false);
        if let Err(e) = self.store.restore_more(id, &p.raw, p.first) {
            let e = session::SessionError::invalid(format!("streams[{}]", p.stream), e.to_string());
            return self.open_failed(&e);
        }
        if ends {
            self.store.end_stream(id);
        }
        self.state.ingest.samples_total = self.store.streams().map(|s| s.appended).sum();
    }

    fn opened_all(&mut self) {
        let Some(o) = self.files.opening.take() else { return };
        let path = o.job.path().to_path_buf();
        self.files.current = Some(path.clone());
        self.files.remember(&path);
        self.files.note = Some(format!("opened {}", file_name(&path)));
        self.files.reset_autosave();
        let fp = self.fingerprint();
        self.files.mark_clean(Some(fp));
    }

    /// The open stopped at `e`: what was shown stays, but is not the file.
    fn open_failed(&mut self, e: &session::SessionError) {
        let Some(o) = self.files.opening.take() else { return };
        let path = o.job.path();
        let shown = o.left != u64::MAX;
        let (msg, hint) = if shown {
            for &id in &o.ids {
                self.store.end_stream(id);
            }
            (
                format!("{} could not be opened completely: {e}", path.display()),
                "the part before the problem is shown; it is not saved as that file (Save asks for a new name)",
            )
        } else {
            (
                format!("cannot open {}: {e}", path.display()),
                "check that it is a zescope session file (.ron); nothing shown was changed",
            )
        };
        self.state.push_error(UiError::new(UiErrorKind::Open, msg, hint));
    }
}
