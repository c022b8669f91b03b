//! Derived series in the headless commands (`record --derive`, `serve --derive`): a [`Handler`]
//! around the command's own that adds the derived streams to the run it hands on and, after
//! each batch, the derived batch it drives (`zescope_model::derive`), so the command files,
//! serves and writes them as series like any other (and its triggers can test them).

use zescope_model::derive::{Derivation, Deriver};
use zescope_model::markers::Received;
use zescope_sampler::{Health, RunInfo, SampleBatch, StopReason};

use std::time::Duration;

use super::{Flow, Handler};

/// `inner` with the derived series of its derivations (see the module docs).
pub struct Derived<'h, H: Handler> {
    deriver: Deriver,
    inner: &'h mut H,
}

impl<'h, H: Handler> Derived<'h, H> {
    /// `inner`, handed the series `defs` derive too.
    pub fn new(defs: Vec<Derivation>, inner: &'h mut H) -> Self {
        Derived { deriver: Deriver::new(defs), inner }
    }
}

impl<H: Handler> Handler for Derived<'_, H> {
    /// A derivation that names a series the run does not have is fatal: the message names what
    /// it could mean.
    fn started(&mut self, mut info: RunInfo) -> Result<Flow, String> {
        self.deriver.run_started(&mut info)?;
        self.inner.started(info)
    }

    fn samples(&mut self, batch: SampleBatch) -> Result<(), String> {
        let derived = self.deriver.samples(&batch);
        self.inner.samples(batch)?;
        derived.into_iter().try_for_each(|d| self.inner.samples(d))
    }

    fn health(&mut self, health: Health) {
        self.inner.health(health)
    }

    fn processes(&mut self, snapshot: zescope_sampler::processes::ProcessSnapshot) {
        self.inner.processes(snapshot)
    }

    fn notice(&mut self, run: u64, message: String) {
        self.inner.notice(run, message)
    }

    fn error(&mut self, message: &str) {
        self.inner.error(message)
    }

    fn markers(&mut self, markers: Vec<Received>) {
        self.inner.markers(markers)
    }

    fn stopped(&mut self, run: u64, reason: StopReason) -> Flow {
        self.inner.stopped(run, reason)
    }

    fn tick(&mut self) -> Result<Flow, String> {
        self.inner.tick()
    }

    fn pace(&self) -> Option<Duration> {
        self.inner.pace()
    }

    fn due_in(&self) -> Option<Duration> {
        self.inner.due_in()
    }

    fn ending(&mut self) {
        self.inner.ending()
    }

    fn finish(&mut self) -> Result<(), String> {
        self.inner.finish()
    }
}
