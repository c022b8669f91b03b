//! The UI's ends of the sampler's channels, behind a trait so tests can drive the UI with a real
//! sampler, a scripted one, or none.

use std::time::Duration;

use zescope_sampler::{Command, Event, SamplerHandle};

/// How the app reaches the sampler: [`SamplerHandle`] in the window, a stand-in in tests. Called
/// only from the UI thread.
pub trait SamplerLink {
    /// Queues a command for the sampler; never blocks (a sampler that is gone drops it).
    fn send(&self, c: Command);
    /// The next event the sampler sent, if one is waiting; never blocks. The app drains these
    /// each frame.
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
