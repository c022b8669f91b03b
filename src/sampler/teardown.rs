//! The ONE teardown of a sampling run, and the types that make its order the only possible one.
//!
//! A run's Level Zero state is three layers, released strictly inside-out:
//! 1. [`Buffers`]: mappings and imports of exported memory (unmap, then `zeMemFree`);
//! 2. [`Activation`]: activated groups and groups created at run time — releasing it requires the
//!    [`BuffersReleased`] proof that only `Buffers::release` can make;
//! 3. [`Session`]: metrics enabled at run time and the context — releasing it requires the
//!    [`Deactivated`] proof that only `Activation::release` can make.
//!
//! [`RunParts`] owns all three. Stop, shutdown, device or group change, every setup or read
//! error and a panic in the sampler all end in [`RunParts::finish`] (explicitly, or from `Drop`
//! while unwinding). A failing step does not stop the later ones; its error is returned.

use crate::ze::{Context, Device, MetricGroup};

use super::export::{Buffers, BuffersReleased};

/// Groups activated on the device, and groups zescope created for the run.
pub struct Activation {
    pub activated: bool,
    pub created: Vec<MetricGroup>,
}

/// Proof that groups are deactivated and created groups destroyed.
pub struct Deactivated(());

impl Activation {
    pub fn release(self, _: BuffersReleased, session: &Session, errors: &mut Vec<String>) -> Deactivated {
        if self.activated
            && let Err(e) = session.ctx.activate(&session.device, &[])
        {
            errors.push(format!("deactivating metric groups: {e}"));
        }
        for g in self.created {
            // After deactivation and after every import of its memory was freed.
            if let Err(e) = g.destroy_created() {
                errors.push(format!("destroying metric group {}: {e}", g.info.name));
            }
        }
        Deactivated(())
    }
}

/// The device, its context, and whether zescope enabled metrics on it at run time.
pub struct Session {
    pub device: Device,
    pub ctx: Context,
    pub enabled_metrics: bool,
}

/// Metrics zescope enabled on a device and still has to disable (a driver refused once).
pub struct PendingDisable {
    device: Device,
}

impl PendingDisable {
    pub fn new(device: Device) -> PendingDisable {
        PendingDisable { device }
    }

    /// Tries again (no run holds the device: runs are torn down before retries); gives itself
    /// back if the driver still refuses.
    pub fn retry(self, errors: &mut Vec<String>) -> Option<PendingDisable> {
        match self.device.disable_metrics() {
            Ok(()) => None,
            Err(e) => {
                errors.push(format!(
                    "disabling metrics on {}: {e} (zescope retries at the next stop and at exit)",
                    self.device.info.name
                ));
                Some(self)
            }
        }
    }
}

impl Session {
    /// Disables metrics if zescope enabled them, then destroys the context. A refused disable
    /// comes back as a `PendingDisable` to retry later.
    pub fn release(self, _: Deactivated, errors: &mut Vec<String>) -> Option<PendingDisable> {
        let mut pending = None;
        if self.enabled_metrics {
            pending = PendingDisable::new(self.device.clone()).retry(errors);
        }
        if let Err(e) = self.ctx.destroy() {
            errors.push(format!("destroying the context: {e}"));
        }
        pending
    }
}

/// Everything a run holds on the driver.
pub struct RunParts {
    inner: Option<(Session, Activation, Buffers)>,
}

impl RunParts {
    pub fn new(session: Session) -> RunParts {
        let buffers = Buffers::new(session.ctx.clone());
        RunParts { inner: Some((session, Activation { activated: false, created: Vec::new() }, buffers)) }
    }

    pub fn session(&self) -> &Session {
        &self.inner.as_ref().expect("live run").0
    }

    pub fn activation_mut(&mut self) -> &mut Activation {
        &mut self.inner.as_mut().expect("live run").1
    }

    pub fn buffers_mut(&mut self) -> &mut Buffers {
        &mut self.inner.as_mut().expect("live run").2
    }

    /// The teardown: unmap → free → deactivate → destroy created groups → disable metrics →
    /// destroy the context. Returns what failed (everything is attempted) and a disable the
    /// driver refused, to retry later.
    pub fn finish(mut self) -> Teardown {
        self.teardown()
    }

    fn teardown(&mut self) -> Teardown {
        let mut errors = Vec::new();
        let mut pending = None;
        if let Some((session, activation, buffers)) = self.inner.take() {
            let released = buffers.release(&mut errors);
            let deactivated = activation.release(released, &session, &mut errors);
            pending = session.release(deactivated, &mut errors);
        }
        Teardown { errors, pending }
    }
}

/// What a teardown could not do.
pub struct Teardown {
    pub errors: Vec<String>,
    pub pending: Option<PendingDisable>,
}

impl Drop for RunParts {
    fn drop(&mut self) {
        // Reached only when `finish` was not called: while unwinding from a panic.
        let t = self.teardown();
        for e in t.errors {
            log::error!("teardown after a failure: {e}");
        }
        if let Some(p) = t.pending {
            let mut errors = Vec::new();
            let _ = p.retry(&mut errors);
        }
    }
}
