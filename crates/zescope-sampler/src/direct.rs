//! A run driven synchronously on the caller's thread, without the sampler thread: the same
//! setup, reads and teardown. For benchmarks and for embedding zescope's reading path; like the
//! sampler's, its state is neither `Send` nor `Sync`, so it stays on the thread that made it.
//!
//! What a teardown leaves (an import the driver would not free, a disable it refused) is retried
//! once more, in order, before the call returns; what is still left then is said in the errors
//! returned (or logged from `Drop`), never dropped silently.

use crate::layout::LayoutSet;
use zescope_ze::Loader;

use super::protocol::{RunConfig, RunInfo, SampleBatch, SamplerError};
use super::read::batch::ReadOutcome;
use super::run::Run;
use super::setup;
use super::teardown::{self, Pending};

/// A run read on the caller's thread; dropping it runs the teardown (failures are logged).
pub struct DirectRun {
    run: Option<Run>,
}

impl DirectRun {
    /// Sets up a run of `cfg` (run number 1) on the caller's thread; fails like `Command::Start`
    /// would, with what a failed setup's teardown left appended to the message. A device another
    /// thread of this process holds (a sampler's run) is not waited for: the start fails at once,
    /// touching nothing on it (`claims`).
    pub fn start(loader: &Loader, layouts: &LayoutSet, cfg: &RunConfig) -> Result<DirectRun, SamplerError> {
        let mut pending = Vec::new();
        let run = setup::start(
            loader,
            (layouts, crate::timing::BATCH_INTERVAL),
            cfg,
            1,
            std::time::Duration::ZERO,
            &mut pending,
        );
        let left = settle(pending);
        match run {
            Ok(run) => {
                for e in left {
                    log::error!("teardown: {e}");
                }
                Ok(DirectRun { run: Some(run) })
            }
            Err(mut e) => {
                if !left.is_empty() {
                    e.message = format!("{}; {}", e.message, left.join("; "));
                }
                Err(e)
            }
        }
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

    /// The one teardown; returns what failed, and what is still left after a retry.
    pub fn stop(mut self) -> Vec<String> {
        self.finish()
    }

    fn finish(&mut self) -> Vec<String> {
        let Some(run) = self.run.take() else { return Vec::new() };
        let t = run.stop();
        let mut errors = t.errors;
        errors.extend(settle(t.pending));
        errors
    }
}

/// Retries what a teardown left, frees before disables; returns the errors of the retry and a
/// line for each step still left. What is still left goes to the driver's own cleanup at exit
/// (a run whose imports are alive is forgotten, never torn down under them).
fn settle(mut pending: Vec<Pending>) -> Vec<String> {
    let mut errors = Vec::new();
    teardown::retry_all(&mut pending, &[], &mut errors);
    errors.extend(pending.iter().map(Pending::describe));
    errors
}

impl Drop for DirectRun {
    fn drop(&mut self) {
        for e in self.finish() {
            log::error!("teardown: {e}");
        }
    }
}
