//! Recording a session headless: sampler events in (through the view's [`Ingest`]), a session
//! file out: checkpointed as a journal while it records (`journal.rs`: each checkpoint appends
//! what is new, and the file recovers after a kill at any moment), written as an ordinary
//! session file at the end.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::view::{Ingest, TimeView, default_arrangement};
use zescope_sampler::{Inventory, RunInfo, SampleBatch};
use zescope_store::Store;

use super::journal::Journal;
use super::{Capture, Marker, RunHistory, Session};
use crate::view::Arrangement;

/// A session built from sampler events without a window (`zescope record --out run.ron`): the
/// same store, run history and default pane arrangement the window would have, checkpointed every
/// `SESSION_CHECKPOINT` (in the background, appending what is new) and saved at the end.
pub struct Recorder {
    inventory: Inventory,
    store: Store,
    history: RunHistory,
    ingest: Ingest,
    journal: Journal,
    last_save: Instant,
    /// How long until the next checkpoint may start: [`SESSION_CHECKPOINT`], or longer once a
    /// save takes a noticeable share of it.
    every: Duration,
    markers: crate::view::Markers,
}

const SESSION_CHECKPOINT: Duration = Duration::from_secs(30);

/// The time until the next checkpoint is at least this many times what the last took, so a
/// recording spends at most about a twentieth of its time writing checkpoints, whatever the disk.
const CHECKPOINT_SHARE: u32 = 20;

impl Recorder {
    /// A recorder that will save to `path` and describe devices from `inventory` (the sampler's
    /// `Event::Inventory`). Nothing is written until [`Recorder::checkpoint`] or
    /// [`Recorder::finish`].
    pub fn new(path: PathBuf, inventory: Inventory) -> Recorder {
        Recorder::with_store(path, inventory, Store::with_default_cap())
    }

    /// [`Recorder::new`] into `store` (a fresh one: benchmarks give it their memory cap).
    pub fn with_store(path: PathBuf, inventory: Inventory, store: Store) -> Recorder {
        let journal = Journal::new(path);
        // The test hook checkpoints at every chance (`journal.rs`).
        let every = if journal.hooked() { Duration::ZERO } else { SESSION_CHECKPOINT };
        Recorder {
            inventory,
            store,
            history: Default::default(),
            ingest: Ingest::default(),
            journal,
            last_save: Instant::now(),
            every,
            markers: Default::default(),
        }
    }

    /// The store the recording goes to.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// A run started (`Event::RunStarted`): opens its streams and records its configuration.
    pub fn started(&mut self, info: &RunInfo) {
        let run = self.ingest.run_started(&mut self.store, info.clone());
        self.history.run_started(info, Some(&self.inventory), &run.streams);
    }

    /// Stores a batch (`Event::Samples`); a batch of a run not in progress is ignored. Errs when
    /// the store refuses the batch, naming why.
    pub fn samples(&mut self, b: &SampleBatch) -> Result<(), String> {
        self.ingest.samples(&mut self.store, b).map(|_| ()).map_err(|e| format!("samples could not be stored: {e}"))
    }

    /// Files a process snapshot (`Event::Processes`) of the run in progress; others are ignored.
    pub fn processes(&mut self, snap: &zescope_sampler::processes::ProcessSnapshot) {
        let info = self.ingest.run.as_ref().map(|r| &r.info);
        self.history.processes.ingest_of_run(snap, info, &crate::view::processes::ProcFs);
    }

    /// Keeps at most `cap` markers (`view::Markers::with_cap`); call before the first marker.
    pub fn set_marker_cap(&mut self, cap: usize) {
        self.markers = crate::view::Markers::with_cap(cap);
    }

    /// The markers so far (and how many were refused).
    pub fn markers(&self) -> &crate::view::Markers {
        &self.markers
    }

    /// A marker from the workload, stamped on the samples' clock.
    pub fn marker(&mut self, kind: zescope_markers::Kind, t_ns: i64, name: &str) {
        self.markers.apply(kind, t_ns, name);
    }

    /// Run `run` stopped (`Event::RunStopped`): its streams take no more samples.
    pub fn stopped(&mut self, run: u64) {
        self.ingest.run_stopped(&mut self.store, run);
        self.history.processes.run_stopped(run);
    }

    /// The session as recorded so far, with the default pane arrangement and a live view.
    pub fn session(&self) -> Session {
        let (arrangement, view, markers) = self.ui();
        let ui = Capture { history: &self.history, arrangement: &arrangement, view: &view, markers: &markers };
        Session::capture(&self.store, ui)
    }

    /// What the session shows besides the store: the default arrangement, a live view, the markers.
    fn ui(&self) -> (Arrangement, TimeView, Vec<Marker>) {
        (
            default_arrangement(&self.ingest.order, &self.ingest.series),
            TimeView::default(),
            super::markers_to_file(&self.markers),
        )
    }

    /// Called often: starts a background checkpoint when the last one is over and
    /// `SESSION_CHECKPOINT` has passed since it started. Errs with the previous background
    /// checkpoint's error, if it failed.
    pub fn checkpoint(&mut self) -> Result<(), String> {
        self.checkpoint_if(false)
    }

    /// [`Recorder::checkpoint`], now (`now`: whatever the time since the last; still not while
    /// one is being written). Benchmarks drive a simulated hour this way.
    pub fn checkpoint_if(&mut self, now: bool) -> Result<(), String> {
        if let Some(result) = self.journal.poll() {
            // Finished: the next waits for this one's cost times the share, or the base period.
            if !self.every.is_zero() {
                self.every = SESSION_CHECKPOINT.max(self.last_save.elapsed() * CHECKPOINT_SHARE);
            }
            result.map_err(|e| e.to_string())?;
        }
        if self.journal.busy() || (!now && self.last_save.elapsed() < self.every) {
            return Ok(());
        }
        self.last_save = Instant::now();
        let (arrangement, view, markers) = self.ui();
        let ui = Capture { history: &self.history, arrangement: &arrangement, view: &view, markers: &markers };
        self.journal.checkpoint(&self.store, ui);
        Ok(())
    }

    /// Whether a checkpoint is being written.
    pub fn checkpointing(&mut self) -> bool {
        self.journal.busy()
    }

    /// Waits for a background checkpoint, then saves the whole recording atomically as an
    /// ordinary session file (from the journal's chunks and the samples since); errs with what
    /// kept the file from being written.
    pub fn finish(&mut self) -> Result<(), String> {
        let (arrangement, view, markers) = self.ui();
        let ui = Capture { history: &self.history, arrangement: &arrangement, view: &view, markers: &markers };
        self.journal.finish(&self.store, ui).map_err(|e| e.to_string())
    }
}
