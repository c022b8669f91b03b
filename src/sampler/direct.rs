//! A run driven synchronously on the caller's thread, without the sampler thread: the same
//! setup, reads and teardown. For benchmarks and for embedding zescope's reading path; like the
//! sampler's, its state is neither `Send` nor `Sync`, so it stays on the thread that made it.

use crate::layout::LayoutSet;
use crate::ze::Loader;

use super::protocol::{RunConfig, RunInfo, SampleBatch, SamplerError};
use super::run::{ReadOutcome, Run};
use super::setup;

/// A run read on the caller's thread; dropping it runs the teardown (failures are logged).
pub struct DirectRun {
    run: Option<Run>,
}

impl DirectRun {
    /// Sets up a run of `cfg` (run number 1) on the caller's thread; fails like `Command::Start`
    /// would.
    pub fn start(loader: &Loader, layouts: &LayoutSet, cfg: &RunConfig) -> Result<DirectRun, SamplerError> {
        let mut pending = Vec::new();
        let run = setup::start(loader, layouts, cfg, 1, &mut pending);
        let mut errors = Vec::new();
        for p in pending {
            let _ = p.retry(&mut errors);
        }
        Ok(DirectRun { run: Some(run?) })
    }

    /// What the run samples (as `Event::RunStarted` would carry it).
    pub fn info(&self) -> &RunInfo {
        &self.run.as_ref().expect("live").info
    }

    /// One tick: snapshot and decode every stream. An error means a buffer cannot be read any
    /// more (stop the run).
    pub fn read(&mut self) -> Result<ReadOutcome, SamplerError> {
        self.run.as_mut().expect("live").read()
    }

    /// The samples read since the last call, per stream, as the sampler thread would send them.
    pub fn take_batches(&mut self) -> Vec<SampleBatch> {
        self.run.as_mut().expect("live").take_batches()
    }

    /// The one teardown; returns what failed.
    pub fn stop(mut self) -> Vec<String> {
        self.finish()
    }

    fn finish(&mut self) -> Vec<String> {
        let Some(run) = self.run.take() else { return Vec::new() };
        let t = run.stop();
        let mut errors = t.errors;
        for p in t.pending {
            let _ = p.retry(&mut errors);
        }
        errors
    }
}

impl Drop for DirectRun {
    fn drop(&mut self) {
        for e in self.finish() {
            log::error!("teardown: {e}");
        }
    }
}
