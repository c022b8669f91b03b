//! What file commands do to the app: open a session (after stopping a run; asking first when it
//! would discard unsaved data, `unsaved.rs`; progressively, as `opening.rs` describes: the
//! pieces a frame moves into the store, here), save one in the background, export, recover a
//! crashed session, autosave a running one, leave a recording when a new run starts, and load,
//! apply and save view files (`views.rs`).

use std::time::{Duration, Instant};

use zescope_model::derive::GROUP as DERIVED;
use zescope_model::session::{self, LoadEvent, LoadHead, LoadJob, Piece};
use zescope_model::view::TimeAxis;
use zescope_model::viewfile::ViewFile;
use zescope_sampler::Command;
use zescope_store::Store;

use super::ZescopeApp;
use super::banner::{UiError, UiErrorKind};
use super::dialogs::FileKind;
use super::dialogs::file_name;
use super::files::FileAction;
use super::opening::{Opening, PIECES_PER_FRAME, WAIT};
use super::session::{app_capture, capture_app, open_in_app};
use super::unsaved::Pending;
use super::views::user_dir;

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
                let session = capture_app(self, &session::markers_to_file(&self.markers));
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
        let session = capture_app(self, &session::markers_to_file(&self.markers));
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
                    format!("{}: {e}", job.path().display()),
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
                self.markers = session::markers_from_file(&markers);
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

    /// A new run replaces an opened recording: a fresh store, the user's own panes back.
    pub(crate) fn leave_recording(&mut self) {
        self.files.opening = None;
        // Derived series computed over what was shown stop (its store may be replaced below).
        self.state.derived.stop_computing();
        if self.files.recording.take().is_none() {
            return;
        }
        self.panes.leave_file();
        self.store = Store::new(self.store.memory_cap());
        self.state.ingest = Default::default();
        self.state.history = Default::default();
        self.files.current = None;
        self.markers = zescope_model::view::Markers::with_cap(self.marker_limits.per_session);
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
                e.to_string(),
                "save the session by hand (Ctrl+S)",
            ));
        }
        let now = Instant::now();
        if self.state.ingest.run.is_some() && self.files.checkpoint_due(now) {
            let markers = session::markers_to_file(&self.markers);
            if let Some(mut a) = self.files.autosave.take() {
                a.checkpoint(&self.store, app_capture(self, &markers));
                self.files.autosave = Some(a);
            }
            self.files.checkpointed(now);
        }
    }

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
                self.markers = session::markers_from_file(&markers);
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
                // Under the banner's title "Cannot open": the file and why, not "cannot open" again.
                format!("{}: {e}", path.display()),
                "check that it is a zescope session file (.ron); nothing shown was changed",
            )
        };
        self.state.push_error(UiError::new(UiErrorKind::Open, msg, hint));
    }

    /// Loads a view onto what is shown (now if its series are known, else when they are).
    pub fn load_view(&mut self, view: ViewFile) {
        // Nothing shown yet: its derived series are bound to the first run from its start.
        if self.state.ingest.order.is_empty() && self.state.ingest.run.is_none() {
            for def in zescope_model::viewfile::derivations(&view) {
                let _ = self.state.derived.deriver.define(def);
            }
        }
        self.views.pending = Some(view);
        self.apply_pending_view();
    }

    /// A banner's "Sample …": ticks `groups` (`sources::tick_groups`: on the picked devices that
    /// have them, else the first that does), restarts a run going on with them, and lays the
    /// view that named them out again once the new run's series are known.
    pub(crate) fn sample_groups(&mut self, groups: &[String]) {
        super::sources::tick_groups(&mut self.state, groups);
        let run = self.state.ingest.run.as_ref().map(|r| r.info.run);
        if let Some(view) = self.views.partial.take() {
            self.views.pending = Some(view);
            self.views.after_run = Some(run);
        }
        if run.is_some() {
            match self.state.run_config() {
                // As the source panel's ticks restart a run.
                Ok(cfg) => self.guarded(super::unsaved::Pending::Start(Command::Start(cfg))),
                Err(why) => self.state.push_error(UiError::new(
                    UiErrorKind::Stopped,
                    format!("cannot sample {}: {why}", groups.join(", ")),
                    "tick the groups on the left and Start",
                )),
            }
        }
    }

    /// The groups of this machine's devices that hold a metric `p` names (in their catalogues,
    /// sampled or not), by name.
    fn groups_of(&self, p: &zescope_model::viewfile::SeriesPattern) -> Vec<String> {
        let devices = self.state.inventory.as_ref().map_or(&[][..], |i| &i.devices[..]);
        let mut names = Vec::new();
        for d in devices {
            let kind = format!("{:?}", d.kind).to_lowercase();
            for g in &d.groups {
                if g.metrics.iter().any(|m| p.names(&g.name, &m.name, Some(&kind))) && !names.contains(&g.name) {
                    names.push(g.name.clone());
                }
            }
        }
        names
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
        // Derived series are computed over a recording once all of it is in.
        if self.opening() && self.views.pending.as_ref().is_some_and(|v| !v.derived.is_empty()) {
            return;
        }
        let run = self.state.ingest.run.as_ref().map(|r| r.info.run);
        if self.views.after_run.is_some_and(|old| run.is_none() || run == old) {
            return;
        }
        self.views.after_run = None;
        let Some(view) = self.views.pending.take() else { return };
        self.view_derived(&view);
        let applied = view.apply(&self.state.ingest.order, |d| self.kind_of(d));
        // What the banners say of the rest: shown, or (a view of a device not sampled) nothing.
        let rest = match applied.arrangement.panes.iter().any(|p| !p.series.is_empty()) {
            true => "the rest is shown",
            false => "none of its series is sampled now",
        };
        let mut panes = super::panes::Panes::with_arrangement(applied.arrangement);
        panes.y_lock = applied.y_lock.into_iter().collect();
        // A view put on a remote run is that run's panes: the user's own stay aside.
        (panes.own, panes.remote_layout, panes.of_file) =
            (self.panes.own.take(), self.panes.remote_layout.take(), self.panes.of_file);
        self.panes = panes;
        if let Some(w) = applied.window {
            self.view.set_window(w);
        }
        // The view's triggers join the user's (theirs and their firings stay).
        let run = self.state.ingest.run.as_ref().map(|r| &r.info);
        let offered = applied.triggers.len();
        let added = self.state.triggers.merge(applied.triggers, run);
        let name = if view.name.is_empty() { "the view".to_owned() } else { format!("the view \"{}\"", view.name) };
        // What the view names and nothing shows: groups a device has but no run sampled yet
        // (the user ticks them), or that no device here has.
        let (mut unsampled, mut lacking, mut groups) = (Vec::new(), Vec::new(), Vec::<String>::new());
        for p in &applied.missing {
            let has = self.groups_of(p);
            if has.is_empty() {
                lacking.push(p.shown());
            } else {
                unsampled.push(p.shown());
                for g in has {
                    if !groups.contains(&g) {
                        groups.push(g);
                    }
                }
            }
        }
        if !unsampled.is_empty() {
            let them = if groups.len() == 1 { "it" } else { "them" };
            let error = UiError::new(
                UiErrorKind::View,
                format!("{name} names series of groups not sampled now: {}; {rest}", unsampled.join(", ")),
                &format!("tick {} on the left: the device has {them}", groups.join(", ")),
            );
            // A remote run is the server's: nothing to tick here.
            let remote =
                self.state.inventory.as_ref().and_then(|i| i.source.as_ref()).is_some_and(super::status::is_remote);
            self.state.push_error(if remote { error } else { error.offering(groups) });
            self.views.partial = Some(view.clone());
        }
        if !lacking.is_empty() {
            self.state.push_error(UiError::new(
                UiErrorKind::View,
                format!("{name} names series these devices lack: {}; {rest}", lacking.join(", ")),
                "pick another view, or open it where its devices are",
            ));
        }
        self.views.said = Some(match (offered, added) {
            (0, _) => format!("{name} is shown"),
            (n, a) if a == n => format!("{name} is shown, with its {n} trigger(s) added to yours"),
            (n, a) => format!("{name} is shown; {a} of its {n} triggers added ({} you had already)", n - a),
        });
    }

    /// Re-creates the derived series of `view` that are not there yet (`Derived::create`: in the
    /// run in progress, over the recording shown, or from the next run on); a banner names
    /// those refused and why.
    fn view_derived(&mut self, view: &ViewFile) {
        let mut refused = Vec::new();
        for def in zescope_model::viewfile::derivations(view) {
            if self.state.ingest.series.keys().any(|k| k.group == DERIVED && k.metric == def.name) {
                continue;
            }
            // Defined when the view was loaded, before what it is put onto was known.
            let state = &mut self.state;
            state.derived.deriver.remove(&def.name);
            if let Err(e) = state.derived.create(def, &mut state.ingest, &mut self.store, &mut state.history) {
                refused.push(e);
            }
        }
        if !refused.is_empty() {
            self.state.push_error(UiError::new(
                UiErrorKind::View,
                format!("the view's derived series: {}", refused.join("; ")),
                "View → New derived series… to write them for these devices",
            ));
        }
    }

    /// What is shown as a view file, with the derived series' definitions.
    pub fn current_view(&self, name: &str) -> ViewFile {
        let locks = self.panes.y_lock.iter().map(|(&k, &v)| (k, v)).collect();
        ViewFile::from_arrangement(
            name,
            &self.panes.arrangement,
            &locks,
            self.view.window,
            self.state.triggers.eval.triggers(),
            |d| self.kind_of(d),
        )
        .with_derived(self.state.derived.deriver.derivations())
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
