//! Recording a session headless: sampler events in (through the view's [`Ingest`]), a session
//! file out.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::view::{Ingest, TimeView, default_arrangement};
use zescope_sampler::{Inventory, RunInfo, SampleBatch};
use zescope_store::Store;

use super::{Capture, RunHistory, SaveJob, Session};

/// A session built from sampler events without a window (`zescope record --out run.ron`): the
/// same store, run history and default pane arrangement the window would have, saved atomically every
/// `SESSION_CHECKPOINT` (in the background) and at the end.
pub struct Recorder {
    path: PathBuf,
    inventory: Inventory,
    store: Store,
    history: RunHistory,
    ingest: Ingest,
    job: Option<SaveJob>,
    last_save: Instant,
    /// How long until the next checkpoint may start: [`SESSION_CHECKPOINT`], or longer once a
    /// save takes a noticeable share of it.
    every: Duration,
    markers: crate::view::Markers,
}

const SESSION_CHECKPOINT: Duration = Duration::from_secs(30);

/// A checkpoint rewrites the whole file (and copies the store's data to do so): the time until
/// the next is at least this many times what the last took, so a long recording spends at most
/// about a twentieth of its time (and of its CPU) checkpointing rather than ever more of it.
const CHECKPOINT_SHARE: u32 = 20;

impl Recorder {
    /// A recorder that will save to `path` and describe devices from `inventory` (the sampler's
    /// `Event::Inventory`). Nothing is written until [`Recorder::checkpoint`] or
    /// [`Recorder::finish`].
    pub fn new(path: PathBuf, inventory: Inventory) -> Recorder {
        Recorder {
            path,
            inventory,
            store: Store::with_default_cap(),
            history: Default::default(),
            ingest: Ingest::default(),
            job: None,
            last_save: Instant::now(),
            every: SESSION_CHECKPOINT,
            markers: Default::default(),
        }
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
        let arrangement = default_arrangement(&self.ingest.order, &self.ingest.series);
        let view = TimeView::default();
        let markers = super::markers_to_file(&self.markers);
        let ui = Capture { history: &self.history, arrangement: &arrangement, view: &view, markers: &markers };
        Session::capture(&self.store, ui)
    }

    /// Called often: starts a background save when the last one is over and
    /// `SESSION_CHECKPOINT` has passed since it started. Errs with the previous background
    /// save's error, if it failed.
    pub fn checkpoint(&mut self) -> Result<(), String> {
        if let Some(result) = self.job.as_mut().and_then(|j| j.try_finish()) {
            // Finished: the next waits for this one's cost times the share, or the base period.
            self.every = SESSION_CHECKPOINT.max(self.last_save.elapsed() * CHECKPOINT_SHARE);
            result.map_err(|e| e.to_string())?;
        }
        if self.job.as_ref().is_some_and(|j| !j.is_finished()) || self.last_save.elapsed() < self.every {
            return Ok(());
        }
        self.last_save = Instant::now();
        self.job = Some(SaveJob::spawn(self.session(), self.path.clone()));
        Ok(())
    }

    /// Waits for a background save, then saves the whole recording atomically; errs with what
    /// kept the file from being written.
    pub fn finish(&mut self) -> Result<(), String> {
        if let Some(job) = self.job.take() {
            let _ = job.wait();
        }
        super::save(&self.path, &self.session()).map_err(|e| e.to_string())
    }
}
