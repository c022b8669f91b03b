//! What file commands do to the app: open a session (after stopping a run; asking first when it
//! would discard unsaved data, `unsaved.rs`; progressively, `opening.rs`), save one in the background, export, recover a
//! crashed session, autosave a running one, and leave a recording when a new run starts.

use std::time::Instant;

use zescope_model::session;
use zescope_sampler::Command;
use zescope_store::Store;

use super::ZescopeApp;
use super::banner::{UiError, UiErrorKind};
use super::dialogs::FileKind;
use super::dialogs::file_name;
use super::files::FileAction;
use super::session::{app_capture, capture_app, open_in_app};
use super::unsaved::Pending;

impl ZescopeApp {
    /// Carries out a file command (nothing when the user cancelled the dialog).
    pub fn perform(&mut self, action: Option<FileAction>) {
        let Some(action) = action else { return };
        match action {
            FileAction::Open(path) => self.guarded(Pending::Open(path)),
            FileAction::Save(_) if self.opening() => self.state.push_error(UiError::new(
                UiErrorKind::Save,
                "a session is still opening: only part of it is shown, so it cannot be saved yet".into(),
                "save once the status bar says it has opened",
            )),
            FileAction::Save(path) => {
                let session = capture_app(self, &session::markers_to_file(&self.files.markers));
                let fp = self.fingerprint();
                if let Err(e) = self.files.start_save(session, path, fp) {
                    self.state.push_error(e);
                }
            }
            FileAction::Write { kind, path, pane, shown_only } => self.write_file(kind, &path, pane, shown_only),
            FileAction::Compare(path) => self.compare_with(&path, 0.0, None),
        }
    }

    /// Shows the session at `path` beside the data, aligned on its start or on marker
    /// `align_marker`, shifted by `offset_s`; a banner says why not.
    pub fn compare_with(&mut self, path: &std::path::Path, offset_s: f64, align_marker: Option<String>) {
        match super::compare::Comparison::load(path, offset_s, align_marker, self.store.memory_cap()) {
            Ok(c) => {
                self.files.note = Some(format!("comparing with {}", file_name(path)));
                self.comparison = Some(c);
            }
            Err(e) => self.state.push_error(UiError::new(
                UiErrorKind::Open,
                e,
                "choose another session to compare with with File, Compare with…",
            )),
        }
    }

    /// Opens `path` (no questions asked): stops a run first, through the sampler's teardown,
    /// and opens when it has stopped.
    pub(super) fn open(&mut self, path: std::path::PathBuf) {
        if self.state.ingest.run.is_some() {
            self.files.pending_open = Some(path);
            self.link.send(Command::Stop);
        } else {
            self.open_now(&path);
        }
    }

    /// Opens `path` progressively (`opening.rs`), cancelling an open in progress.
    fn open_now(&mut self, path: &std::path::Path) {
        self.start_opening(path);
    }

    /// Writes `kind` in the background (`zescope_model::write::WriteJob`, the formats `zescope
    /// export` writes with):
    /// from a capture of what is shown, as a save is, with progress in the status bar.
    fn write_file(&mut self, kind: FileKind, path: &std::path::Path, pane: Option<usize>, shown_only: bool) {
        use zescope_model::write::{WriteJob, WriteRequest};
        let FileKind::File(format) = kind else { return };
        if self.store.total_time_range().is_none() {
            return self.state.push_error(UiError::new(
                UiErrorKind::Write,
                format!("nothing to export to {}: no samples are shown", path.display()),
                "start a run or open a session first",
            ));
        }
        let range = if shown_only { zescope_model::view::timeview::shown_range(&self.view, &self.store) } else { None };
        let session = capture_app(self, &session::markers_to_file(&self.files.markers));
        let req = WriteRequest { format, path: path.to_path_buf(), pane, range };
        self.files.note = Some(format!("exporting {}…", file_name(path)));
        self.files.writes.push(WriteJob::spawn(session, req));
    }

    /// Collects finished writes: a note, or a banner naming the file and the problem.
    fn poll_writes(&mut self) {
        let mut i = 0;
        while i < self.files.writes.len() {
            let Some(result) = self.files.writes[i].try_finish() else {
                i += 1;
                continue;
            };
            let job = self.files.writes.remove(i);
            match result {
                Ok(said) => self.files.note = Some(format!("exported {said}")),
                Err(e) => self.state.push_error(UiError::new(
                    UiErrorKind::Write,
                    format!("export to {} failed: {e}", job.path().display()),
                    "choose another place",
                )),
            }
        }
    }

    /// Recovery window → Recover: the crashed session's checkpoint, shown as a recording.
    pub(crate) fn recover(&mut self) {
        let Some(rec) = self.files.recover.take() else { return };
        self.files.opening = None;
        match rec.load().and_then(|s| open_in_app(self, &s)) {
            Ok(markers) => {
                self.files.markers = session::markers_from_file(&markers);
                self.files.recording = Some(rec.dir.join("recovered"));
                self.view.fit(zescope_model::view::data_x(&self.store));
                self.files.current = None;
                self.files.note = Some("recovered the last session: save it to keep it".into());
                // Unsaved until saved; the checkpoint stays (held) until a clean exit.
                self.files.mark_clean(None);
                self.files.recovered = Some(rec);
            }
            Err(e) => self.state.push_error(UiError::new(
                UiErrorKind::Recover,
                format!("the checkpoint could not be recovered: {e}"),
                "start a new run",
            )),
        }
        self.files.reset_autosave();
    }

    /// A new run replaces an opened recording: a fresh store, the same panes.
    pub(crate) fn leave_recording(&mut self) {
        self.files.opening = None;
        if self.files.recording.take().is_none() {
            return;
        }
        self.store = Store::new(self.store.memory_cap());
        self.state.ingest = Default::default();
        self.state.history = Default::default();
        self.files.current = None;
        self.files.markers = zescope_model::view::Markers::with_cap(self.files.live_marker_cap());
        self.files.reset_autosave();
    }

    /// Per frame: collect a finished save, open what waited for a run to stop, take the next
    /// share of a session being opened, checkpoint a running session when due.
    pub(super) fn file_housekeeping(&mut self) {
        self.poll_opening();
        self.poll_writes();
        match self.files.poll_save() {
            Some(Ok(())) => self.saved_for_pending(true),
            Some(Err(e)) => {
                self.state.push_error(e);
                self.saved_for_pending(false);
            }
            None => {}
        }
        if self.state.ingest.run.is_none()
            && let Some(path) = self.files.pending_open.take()
        {
            self.open_now(&path);
        }
        if let Some(a) = &mut self.files.autosave
            && let Some(Err(e)) = a.poll()
        {
            self.state.push_error(UiError::new(
                UiErrorKind::Autosave,
                format!("autosave failed: {e}"),
                "save the session by hand (Ctrl+S)",
            ));
        }
        let now = Instant::now();
        if self.state.ingest.run.is_some() && self.files.checkpoint_due(now) {
            let markers = session::markers_to_file(&self.files.markers);
            if let Some(mut a) = self.files.autosave.take() {
                a.checkpoint(&self.store, app_capture(self, &markers));
                self.files.autosave = Some(a);
            }
            self.files.checkpointed(now);
        }
    }
}
