//! The ONE teardown of a sampling run, and the types that make its order the only possible one.
//!
//! A run's Level Zero state is four layers, released strictly inside-out:
//! 0. [`Streams`]: metric streamers, their events and event pools (close every streamer, then
//!    destroy the events, then the pools);
//! 1. [`Buffers`]: mappings and imports of exported memory (unmap, then `zeMemFree`);
//! 2. [`Activation`]: activated groups and groups created at run time — releasing it requires the
//!    [`StreamsClosed`] proof of `Streams::release` and the [`BuffersReleased`] proof that only
//!    `Buffers::release` can make, and only when every import was freed;
//! 3. [`DeviceContext`]: metrics enabled at run time and the context — releasing it requires
//!    the [`Deactivated`] proof that only `Activation::release` can make.
//!
//! [`RunParts`] owns all three. Stop, shutdown, device or group change, every setup or read
//! error and a panic in the sampler all end in [`RunParts::finish`] (explicitly, or from `Drop`
//! while unwinding). Within a layer every step is attempted; across layers the order is strict:
//! when an unmap or a free fails, deactivation and disable wait — the whole remainder comes back
//! as [`Pending::Run`], retried at the next stop, start and at exit. A disable the driver
//! refused comes back as [`Pending::Disable`].

use crate::ze::{Context, CreatedGroup, Device};

use super::dmabuf::{Buffers, BuffersReleased, ImportError};
use super::protocol::DevicePath;
use super::streams::{Streams, StreamsClosed};

/// Groups activated on the device, and groups zescope created for the run.
pub struct Activation {
    pub activated: bool,
    pub created: Vec<CreatedGroup>,
}

/// Proof that groups are deactivated and created groups destroyed.
pub struct Deactivated(());

impl Activation {
    pub fn release(
        self,
        _: StreamsClosed,
        _: BuffersReleased,
        dc: &DeviceContext,
        errors: &mut Vec<String>,
    ) -> Deactivated {
        if self.activated
            && let Err(e) = dc.ctx.activate(&dc.device, &[])
        {
            errors.push(format!("deactivating metric groups: {e}"));
        }
        for g in self.created {
            // After deactivation and after every import of its memory was freed.
            let name = g.group().info.name.clone();
            if let Err(e) = g.destroy() {
                errors.push(format!("destroying metric group {name}: {e}"));
            }
        }
        Deactivated(())
    }
}

/// The device of a run, its context, and whether zescope enabled metrics on it at run time.
pub struct DeviceContext {
    pub device: Device,
    /// Where `device` is, to tell which later runs a leftover of this one stands in the way of.
    pub path: DevicePath,
    pub ctx: Context,
    pub enabled_metrics: bool,
}

impl DeviceContext {
    /// Disables metrics if zescope enabled them, then destroys the context. A refused disable
    /// comes back as a `PendingDisable` to retry later.
    pub fn release(self, _: Deactivated, errors: &mut Vec<String>) -> Option<PendingDisable> {
        let mut pending = None;
        if self.enabled_metrics {
            pending = PendingDisable::new(self.device.clone(), self.path).retry(errors);
        }
        if let Err(e) = self.ctx.destroy() {
            errors.push(format!("destroying the context: {e}"));
        }
        pending
    }
}

/// Metrics zescope enabled on a device and still has to disable (a driver refused once).
pub struct PendingDisable {
    device: Device,
    path: DevicePath,
}

impl PendingDisable {
    pub fn new(device: Device, path: DevicePath) -> PendingDisable {
        PendingDisable { device, path }
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

/// What a teardown left to do, retried at the next stop, start and at exit.
pub enum Pending {
    /// An unmap or free failed: the buffers left, the activation and the device context all
    /// wait, in order.
    Run(RunParts),
    /// Only disabling run-time-enabled metrics is left.
    Disable(PendingDisable),
}

impl Pending {
    /// Tries again; gives back what is still left.
    pub fn retry(self, errors: &mut Vec<String>) -> Option<Pending> {
        match self {
            Pending::Run(parts) => {
                let t = parts.finish();
                errors.extend(t.errors);
                t.pending
            }
            Pending::Disable(d) => d.retry(errors).map(Pending::Disable),
        }
    }
}

impl Pending {
    /// Does this leftover stand in the way of a run on `path`? Memory that could not be freed
    /// blocks its whole root device: a new run there would deactivate or disable under it.
    pub fn blocks(&self, path: DevicePath) -> bool {
        match self {
            Pending::Run(parts) => parts
                .inner
                .as_ref()
                .is_some_and(|(dc, ..)| dc.path.driver == path.driver && dc.path.device == path.device),
            Pending::Disable(_) => false,
        }
    }
}

impl From<PendingDisable> for Pending {
    fn from(p: PendingDisable) -> Pending {
        Pending::Disable(p)
    }
}

/// Retries every pending release, frees before disables; keeps what is still left. A disable
/// waits while memory on its root device is still not freed.
pub fn retry_all(pending: &mut Vec<Pending>, errors: &mut Vec<String>) {
    let (runs, disables): (Vec<Pending>, Vec<Pending>) =
        std::mem::take(pending).into_iter().partition(|p| matches!(p, Pending::Run(_)));
    pending.extend(runs.into_iter().filter_map(|p| p.retry(errors)));
    for d in disables {
        let waits = match &d {
            Pending::Disable(pd) => pending.iter().any(|p| p.blocks(pd.path)),
            Pending::Run(_) => false,
        };
        if waits {
            pending.push(d);
        } else {
            pending.extend(d.retry(errors));
        }
    }
}

/// Everything a run holds on the driver.
pub struct RunParts {
    inner: Option<(DeviceContext, Activation, Buffers)>,
    /// Closed first; empty for a run that reads exported memory only.
    streams: Streams,
}

impl RunParts {
    pub fn new(dc: DeviceContext) -> RunParts {
        let buffers = Buffers::new();
        RunParts {
            inner: Some((dc, Activation { activated: false, created: Vec::new() }, buffers)),
            streams: Streams::default(),
        }
    }

    pub fn streams(&self) -> &Streams {
        &self.streams
    }

    /// The streams and the context they are opened in.
    pub fn streams_mut(&mut self) -> (&mut Streams, &DeviceContext) {
        (&mut self.streams, &self.inner.as_ref().expect("live run").0)
    }

    pub fn device_context(&self) -> &DeviceContext {
        &self.inner.as_ref().expect("live run").0
    }

    pub fn activation_mut(&mut self) -> &mut Activation {
        &mut self.inner.as_mut().expect("live run").1
    }

    pub fn buffers_mut(&mut self) -> &mut Buffers {
        &mut self.inner.as_mut().expect("live run").2
    }

    /// Imports the buffer behind `fd` into the run's context (once per file); its index.
    pub fn import(&mut self, device: &Device, fd: i32, size: usize) -> Result<usize, ImportError> {
        let (dc, _, buffers) = self.inner.as_mut().expect("live run");
        buffers.import(&dc.ctx, device, fd, size)
    }

    /// The teardown: close streamers → destroy their events and pools → unmap → free →
    /// deactivate → destroy created groups → disable metrics → destroy the context. Returns what failed and what is left to retry.
    pub fn finish(mut self) -> Teardown {
        self.teardown()
    }

    fn teardown(&mut self) -> Teardown {
        let Some((dc, activation, mut buffers)) = self.inner.take() else {
            return Teardown { errors: Vec::new(), pending: None };
        };
        let mut errors = Vec::new();
        let closed = std::mem::take(&mut self.streams).release(&mut errors);
        let Some(released) = buffers.release(&dc.ctx, &mut errors) else {
            errors.push(format!(
                "the metric groups on {} stay active until their exported memory is freed (zescope retries at the \
                 next stop, start and at exit)",
                dc.device.info.name
            ));
            let rest = RunParts { inner: Some((dc, activation, buffers)), streams: Streams::default() };
            return Teardown { errors, pending: Some(Pending::Run(rest)) };
        };
        let deactivated = activation.release(closed, released, &dc, &mut errors);
        let pending = dc.release(deactivated, &mut errors).map(Pending::Disable);
        Teardown { errors, pending }
    }
}

/// What a teardown could not do.
pub struct Teardown {
    pub errors: Vec<String>,
    pub pending: Option<Pending>,
}

impl Drop for RunParts {
    fn drop(&mut self) {
        // Reached only when `finish` was not called: while unwinding from a panic.
        let t = self.teardown();
        for e in &t.errors {
            log::error!("teardown after a failure: {e}");
        }
        match t.pending {
            Some(Pending::Disable(p)) => {
                let _ = p.retry(&mut Vec::new());
            }
            Some(Pending::Run(rest)) => {
                // Its exporters must not be torn down under a live import, and dropping it would
                // only try again: leave it to the driver's own cleanup at exit.
                log::error!("exported memory could not be freed; its metric groups are left active");
                std::mem::forget(rest);
            }
            None => {}
        }
    }
}
