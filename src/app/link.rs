//! The UI's ends of the sampler's channels, behind a trait so tests can drive the UI with a real
//! sampler, a scripted one, or none.

use std::time::Duration;

use crate::sampler::{Command, Event, SamplerHandle};

pub trait SamplerLink {
    fn send(&self, c: Command);
    fn try_recv(&self) -> Option<Event>;
    /// Shutdown with a bounded wait for the teardown; `Err(waited)` if it overran.
    fn shutdown(&mut self, timeout: Duration) -> Result<(), Duration>;
}

impl SamplerLink for SamplerHandle {
    fn send(&self, c: Command) {
        SamplerHandle::send(self, c);
    }

    fn try_recv(&self) -> Option<Event> {
        self.events.try_recv().ok()
    }

    fn shutdown(&mut self, timeout: Duration) -> Result<(), Duration> {
        SamplerHandle::shutdown(self, timeout)
    }
}
