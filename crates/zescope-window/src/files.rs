//! Files in the window: open (menu, Open Recent, or a `.ron` dropped on the window), save and
//! save-as in the background with progress, export of panes and data, autosave of a running
//! session and the offer to recover one after a crash. Dialogs go through [`Dialogs`], so tests
//! answer them; when no dialog can be shown, the built-in [`PathPrompt`] asks instead, and its
//! answer is acted on in a later frame (`Files::show_prompt`).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zescope_model::session::autosave::{Autosaver, Recoverable};
use zescope_model::session::{self, SaveJob};

use super::banner::{UiError, UiErrorKind};
use super::dialogs::{DialogAnswer, Dialogs, FileKind, NativeDialogs, file_name};
use super::path_prompt::{PathPrompt, PromptOutcome, PromptPurpose};
use zescope_model::write::Scope;

/// Recent files remembered.
const RECENT: usize = 8;
/// How often a running session is checkpointed.
pub(crate) const AUTOSAVE_EVERY: Duration = Duration::from_secs(30);

/// What a file action asks the app to do next.
pub enum FileAction {
    /// Open this session (the app stops a run first).
    Open(PathBuf),
    /// Capture the app and save it here in the background.
    Save(PathBuf),
    /// Show this session beside the data as a comparison.
    Compare(PathBuf),
    /// Write an image or table of the panes here.
    Write {
        /// PNG, SVG or CSV.
        kind: FileKind,
        /// Where to write, extension included.
        path: PathBuf,
        /// The pane's index in the arrangement; `None`: all panes.
        pane: Option<usize>,
        /// Only the time range shown (else all the data held).
        shown_only: bool,
    },
}

/// The window's files: what is being worked on, the save in flight, autosave and recovery,
/// and how the user is asked for paths.
pub struct Files {
    /// How paths are asked for; tests replace it with scripted answers.
    pub dialogs: Box<dyn Dialogs>,
    /// The session file being worked on (last opened or saved).
    pub current: Option<PathBuf>,
    /// Set while the window shows an opened recording rather than live data.
    pub recording: Option<PathBuf>,
    /// Sessions opened or saved lately, newest first (at most 8; remembered in the settings).
    pub(crate) recent: Vec<PathBuf>,
    save: Option<SaveJob>,
    /// The session being opened, until all of it is in (`opening.rs`).
    pub(crate) opening: Option<super::opening::Opening>,
    /// Last outcome to show in the status bar ("saved …").
    pub note: Option<String>,
    /// A session to open once the run has stopped.
    pub(crate) pending_open: Option<PathBuf>,
    /// This session's checkpoints; `None` when the autosave folder is unusable (a banner says
    /// so) and when none was set up (tests).
    pub(crate) autosave: Option<Autosaver>,
    last_checkpoint: Option<Instant>,
    /// A crashed session's checkpoint, offered at start.
    pub recover: Option<Recoverable>,
    /// The checkpoint that was recovered: held (so no other zescope offers it) until a clean
    /// exit deletes it.
    pub(crate) recovered: Option<Recoverable>,
    /// The path prompt, while one is open.
    pub prompt: Option<PathPrompt>,
    /// What the data looked like when last saved or opened (see [`Files::is_clean`]).
    clean: Option<Fingerprint>,
    /// The fingerprint of the save in flight.
    saving_fp: Option<Fingerprint>,
    /// Exports being written, oldest first.
    pub writes: Vec<zescope_model::write::WriteJob>,
}

/// What decides whether the data shown was saved: samples taken and markers set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    /// Samples stored since the data shown began (`Ingest::samples_total`).
    pub(crate) samples: u64,
    /// The markers' revision (`Markers::revision`).
    pub(crate) markers: u64,
    /// Markers held.
    pub(crate) marker_count: usize,
    /// The newest sample's time (store ns), if any.
    pub(crate) newest_ns: Option<i64>,
}

impl Default for Files {
    fn default() -> Self {
        Files::new(Box::new(NativeDialogs::default()))
    }
}

/// What the path prompt gave this frame.
pub(crate) enum PromptAnswer {
    /// No prompt open.
    None,
    Pending,
    Cancelled,
    Chosen(FileAction),
}

fn action(purpose: PromptPurpose, path: PathBuf) -> FileAction {
    match purpose {
        PromptPurpose::Open => FileAction::Open(path),
        PromptPurpose::Save => FileAction::Save(path),
        PromptPurpose::Compare => FileAction::Compare(path),
        PromptPurpose::Write { kind, pane, shown_only } => FileAction::Write { kind, path, pane, shown_only },
    }
}

impl Files {
    pub(crate) fn new(dialogs: Box<dyn Dialogs>) -> Files {
        Files {
            dialogs,
            current: None,
            recording: None,
            recent: Vec::new(),
            save: None,
            opening: None,
            note: None,
            pending_open: None,
            autosave: None,
            last_checkpoint: None,
            recover: None,
            recovered: None,
            prompt: None,
            clean: None,
            saving_fp: None,
            writes: Vec::new(),
        }
    }

    /// Has the data with fingerprint `now` been saved (or was it opened from a file as it is)?
    /// No data counts as saved.
    pub(crate) fn is_clean(&self, now: Fingerprint) -> bool {
        now.samples == 0 || self.saved().is_some_and(|c| c.samples == now.samples && c.markers == now.markers)
    }

    /// The fingerprint of what the newest file holds: the save in flight's (it finishes whatever
    /// happens next, and quitting waits for it), else the last saved or opened.
    fn saved(&self) -> Option<Fingerprint> {
        self.saving_fp.or(self.clean)
    }

    /// What of the data with fingerprint `now` no file holds, for the user ("the 1200 samples
    /// recorded after 2:14", "1 new marker", "2 markers removed"); empty when it is all saved.
    /// `time` turns a store time into the plots' time label.
    pub(crate) fn unsaved(&self, now: Fingerprint, time: impl Fn(i64) -> String) -> Vec<String> {
        if self.is_clean(now) {
            return Vec::new();
        }
        use zescope_model::view::text::plural;
        let mut out = Vec::new();
        // The saved data is a prefix of what is shown while the same data goes on (a run after
        // its save, markers added or removed); anything else is unsaved as a whole.
        let base = self.saved().filter(|c| c.samples <= now.samples);
        match base {
            Some(c) if now.samples > c.samples => {
                let after = c.newest_ns.map_or_else(String::new, |t| format!(" after {} (the last save)", time(t)));
                out.push(format!("the {} recorded{after}", plural(now.samples - c.samples, "sample", "samples")));
            }
            Some(_) => {}
            None => out.push(format!("the {} shown", plural(now.samples, "recorded sample", "recorded samples"))),
        }
        match base {
            Some(c) if c.markers != now.markers => {
                out.push(match now.marker_count.cmp(&c.marker_count) {
                    Ordering::Greater => {
                        plural((now.marker_count - c.marker_count) as u64, "new marker", "new markers")
                    }
                    Ordering::Less => {
                        plural((c.marker_count - now.marker_count) as u64, "marker removed", "markers removed")
                    }
                    Ordering::Equal => "changes to markers".into(),
                });
            }
            None if now.marker_count > 0 => out.push(plural(now.marker_count as u64, "marker", "markers")),
            _ => {}
        }
        out
    }

    /// The data with fingerprint `now` is what a file holds.
    pub(crate) fn mark_clean(&mut self, now: Option<Fingerprint>) {
        self.clean = now;
    }

    pub(crate) fn with_recent(mut self, recent: Vec<PathBuf>) -> Files {
        self.recent = recent;
        self.recent.truncate(RECENT);
        self
    }

    pub(crate) fn remember(&mut self, p: &Path) {
        self.recent.retain(|r| r != p);
        self.recent.insert(0, p.to_path_buf());
        self.recent.truncate(RECENT);
    }

    /// The progress of the save in flight, 0.0 to 1.0; `None` when no save is running.
    pub fn saving(&self) -> Option<f32> {
        self.save.as_ref().map(SaveJob::progress)
    }

    /// The folder a dialog starts in: that of the session worked on, else of the recording
    /// shown, else of the session opened or saved last (one that still exists); `None`: the
    /// dialog's own choice (the prompt's: the current directory).
    pub fn start_dir(&self) -> Option<PathBuf> {
        (self.current.iter().chain(&self.recording).chain(self.recent.first()))
            .filter_map(|p| p.parent())
            .find(|d| !d.as_os_str().is_empty() && d.is_dir())
            .map(Path::to_path_buf)
    }

    /// File → Open… (`None`: cancelled, or the path prompt opened instead).
    pub fn ask_open(&mut self) -> Option<FileAction> {
        let dir = self.start_dir();
        let answer = self.dialogs.open(FileKind::Session, dir.as_deref());
        self.answered(answer, PromptPurpose::Open, "", dir)
    }

    /// File → Compare with… (`None`: cancelled, or the path prompt opened instead).
    pub fn ask_compare(&mut self) -> Option<FileAction> {
        let dir = self.start_dir();
        let answer = self.dialogs.open(FileKind::Session, dir.as_deref());
        self.answered(answer, PromptPurpose::Compare, "", dir)
    }

    /// File → Save (to the current file, else as Save As).
    pub(crate) fn ask_save(&mut self) -> Option<FileAction> {
        match &self.current {
            Some(p) => Some(FileAction::Save(p.clone())),
            None => self.ask_save_as(),
        }
    }

    /// File → Save As… (`None`: cancelled, or the path prompt opened instead).
    pub(crate) fn ask_save_as(&mut self) -> Option<FileAction> {
        const NAME: &str = "zescope-session.ron";
        let dir = self.start_dir();
        let answer = self.dialogs.save(FileKind::Session, NAME, dir.as_deref());
        self.answered(answer, PromptPurpose::Save, NAME, dir)
    }

    /// File → Export, or a pane's context menu: asks where to write `kind` (`pane`: its index,
    /// `None`: all panes; `shown_only`: the range shown rather than all data). `None`: cancelled,
    /// or the path prompt opened instead.
    pub fn ask_write(&mut self, kind: FileKind, pane: Option<usize>, shown_only: bool) -> Option<FileAction> {
        let name = self.write_name(kind, pane, shown_only);
        let dir = self.start_dir();
        let answer = self.dialogs.save(kind, &name, dir.as_deref());
        self.answered(answer, PromptPurpose::Write { kind, pane, shown_only }, &name, dir)
    }

    /// The file name an export offers, saying what it holds: the session's name (or
    /// "zescope"), the pane, and for data the range: `run-pane-2.png`, `run-visible.csv`,
    /// `run-all.csv`, `run.pftrace`.
    pub fn write_name(&self, kind: FileKind, pane: Option<usize>, shown_only: bool) -> String {
        let stem = (self.current.as_deref().or(self.recording.as_deref()))
            .and_then(|p| p.file_stem())
            .map_or_else(|| "zescope".to_owned(), |s| s.to_string_lossy().into_owned());
        let panes = match pane {
            Some(p) => format!("-pane-{}", p + 1),
            None => String::new(),
        };
        let what = match kind {
            FileKind::File(f) => match f.scope() {
                Scope::Picture if pane.is_none() => "-panes".to_owned(),
                Scope::Picture => panes,
                Scope::Samples => format!("{panes}-{}", if shown_only { "visible" } else { "all" }),
                Scope::Session => String::new(),
            },
            FileKind::Session => String::new(),
        };
        format!("{stem}{what}.{}", kind.extension())
    }

    /// An export in flight: its file and share written.
    pub fn writing(&self) -> Option<(&std::path::Path, f32)> {
        self.writes.first().map(|j| (j.path(), j.progress()))
    }

    /// A dialog's answer as an action; no dialog: the path prompt opens (in `dir`, where given).
    fn answered(
        &mut self,
        answer: DialogAnswer,
        purpose: PromptPurpose,
        suggested: &str,
        dir: Option<PathBuf>,
    ) -> Option<FileAction> {
        match answer {
            // A name the prompt would refuse (another format's) is refused here too.
            DialogAnswer::Picked(path) if purpose.writes() => match super::path_prompt::named_for(purpose, &path) {
                Ok(()) => Some(action(purpose, path)),
                Err(e) => {
                    self.prompt = Some(PathPrompt::refused(purpose, &path, e));
                    None
                }
            },
            DialogAnswer::Picked(path) => Some(action(purpose, path)),
            DialogAnswer::Cancelled => None,
            DialogAnswer::Unavailable(why) => {
                self.prompt = Some(PathPrompt::new(purpose, suggested, why, dir));
                None
            }
        }
    }

    /// Draws the path prompt, if one is open: the action once a usable path was given.
    pub(crate) fn show_prompt(&mut self, ctx: &egui::Context) -> PromptAnswer {
        let Some(prompt) = &mut self.prompt else { return PromptAnswer::None };
        match prompt.show(ctx) {
            PromptOutcome::Pending => PromptAnswer::Pending,
            PromptOutcome::Cancelled => {
                self.prompt = None;
                PromptAnswer::Cancelled
            }
            PromptOutcome::Chosen(path) => {
                let purpose = prompt.purpose;
                self.prompt = None;
                PromptAnswer::Chosen(action(purpose, path))
            }
        }
    }

    /// Starts a background save of `session` to `path`. One save at a time.
    pub(crate) fn start_save(
        &mut self,
        session: session::Session,
        path: PathBuf,
        fp: Fingerprint,
    ) -> Result<(), UiError> {
        if self.save.is_some() {
            return Err(UiError::new(
                UiErrorKind::Save,
                "a save is already in progress".into(),
                "wait for it to finish",
            ));
        }
        self.note = Some(format!("saving {}…", file_name(&path)));
        self.save = Some(SaveJob::spawn(session, path));
        self.saving_fp = Some(fp);
        Ok(())
    }

    /// Collects a finished save: `Ok` once saved, the error to show if it failed.
    pub(crate) fn poll_save(&mut self) -> Option<Result<(), UiError>> {
        let job = self.save.as_mut()?;
        let result = job.try_finish()?;
        let path = job.path().to_path_buf();
        self.save = None;
        let fp = self.saving_fp.take();
        match result {
            Ok(()) => {
                self.note = Some(format!("saved {}", file_name(&path)));
                self.current = Some(path.clone());
                self.remember(&path);
                self.clean = fp;
                Some(Ok(()))
            }
            Err(e) => {
                self.note = None;
                Some(Err(UiError::new(
                    UiErrorKind::Save,
                    format!("{}: {e}", path.display()),
                    "the previous file, if any, is intact; choose another place or free disk space",
                )))
            }
        }
    }

    /// Waits for a save in flight (at quit: nothing recorded may be lost).
    pub(crate) fn finish_save(&mut self) -> Option<UiError> {
        while self.save.as_ref().is_some_and(|j| !j.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.poll_save().and_then(Result::err)
    }

    /// Is a checkpoint due (a run is going and the last one is old)?
    pub(crate) fn checkpoint_due(&self, now: Instant) -> bool {
        self.autosave.is_some() && self.last_checkpoint.is_none_or(|t| now.duration_since(t) >= AUTOSAVE_EVERY)
    }

    /// A checkpoint was written at `now`: the next is due [`AUTOSAVE_EVERY`] later.
    pub(crate) fn checkpointed(&mut self, now: Instant) {
        self.last_checkpoint = Some(now);
    }

    /// Forget checkpoints taken of a store that was replaced.
    pub(crate) fn reset_autosave(&mut self) {
        if let Some(a) = &mut self.autosave {
            a.reset();
        }
        self.last_checkpoint = None;
    }

    /// A clean exit: this session's checkpoint is not needed any more, nor the crashed
    /// session's checkpoint it recovered (the user saved or chose to quit without it).
    pub(crate) fn discard_autosave(&mut self) {
        if let Some(a) = self.autosave.take() {
            a.discard();
        }
        if let Some(r) = self.recovered.take() {
            let dir = r.dir.clone();
            if let Err(e) = r.discard() {
                log::warn!("cannot remove the recovered checkpoint {}: {e}", dir.display());
            }
        }
    }
}
