//! The ONE teardown of a sampling run, and the types that make its order the only possible one.
//!
//! A run's Level Zero state is four layers, released strictly inside-out:
//! 0. the ways' own objects ([`Way`]s, `read/`): metric streamers with their events and
//!    event pools (close every streamer, then destroy the events, then the pools), then metric
//!    tracers with their decoders (disable every tracer, then destroy the decoders, then the
//!    tracers) — `read::release` releases every way and alone makes the [`WaysReleased`]
//!    proof;
//! 1. [`Buffers`]: mappings and imports of exported memory (unmap, then `zeMemFree`), which the
//!    export and tracer ways made on the device — releasing them requires the [`WaysReleased`]
//!    proof;
//! 2. [`Activation`]: activated groups and groups created at run time — releasing it requires the
//!    [`WaysReleased`] proof and the [`BuffersReleased`] proof that only `Buffers::release` can
//!    make, and only when every import was freed;
//! 3. [`DeviceContext`]: metrics enabled at run time and the context — releasing it requires
//!    the [`Deactivated`] proof that only `Activation::release` can make.
//!
//! A run over several devices holds layers 1–3 once per device ([`DeviceParts`]) and releases
//! each layer on every device before the next: every streamer and tracer of every device is
//! closed, and every import of every device freed, before any group is deactivated; every
//! device's groups are deactivated before metrics are disabled on any (a root device and its
//! sub-device may be recorded together, and the tile's groups are the root's too).
//!
//! [`RunParts`] owns all of them: the devices' parts, and the ways (which own their objects
//! for every device of the run). Stop, shutdown, device or group change, every setup or read
//! error and a panic in the sampler all end in [`RunParts::finish`] (explicitly, or from `Drop`
//! while unwinding). Within a layer every step is attempted; across layers the order is strict:
//! when an unmap or a free fails, deactivation and disable wait — the whole remainder comes back
//! as [`Pending::Run`], retried at the next stop, start and at exit. A disable the driver
//! refused comes back as [`Pending::Disable`]. A panic while a device's buffers are released is
//! caught there and counts as a failed free. What is still left when the sampler exits is said
//! ([`Pending::describe`]) and then given up ([`Pending::abandon`]): never torn down under a
//! live import.

use std::panic::AssertUnwindSafe;

use zescope_ze::{Context, CreatedGroup, Device};

use super::claims::Claim;
use super::dmabuf::{Buffers, BuffersReleased, ImportError};
use super::protocol::DevicePath;
#[cfg(doc)]
use super::read::Way;
use super::read::{self, WaysReleased};

/// Groups activated on the device, and groups zescope created for the run.
pub(crate) struct Activation {
    pub activated: bool,
    pub created: Vec<CreatedGroup>,
}

/// Proof that groups are deactivated and created groups destroyed.
pub(crate) struct Deactivated(());

impl Activation {
    pub(crate) fn release(
        self,
        _: &WaysReleased,
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
pub(crate) struct DeviceContext {
    pub device: Device,
    /// Where `device` is, to tell which later runs a leftover of this one stands in the way of.
    pub path: DevicePath,
    pub ctx: Context,
    pub enabled_metrics: bool,
    /// The device's root, held by this thread until the context is gone (and any disable left
    /// to retry is done).
    pub claim: Claim,
}

impl DeviceContext {
    /// Disables metrics if zescope enabled them, then destroys the context. A refused disable
    /// comes back as a `PendingDisable` to retry later.
    pub(crate) fn release(self, _: Deactivated, errors: &mut Vec<String>) -> Option<PendingDisable> {
        let mut pending = None;
        if self.enabled_metrics {
            pending = PendingDisable::new(self.device.clone(), self.path, self.claim.again()).retry(errors);
        }
        if let Err(e) = self.ctx.destroy() {
            errors.push(format!("destroying the context: {e}"));
        }
        pending
    }
}

/// Metrics zescope enabled on a device and still has to disable (a driver refused once).
pub(crate) struct PendingDisable {
    device: Device,
    path: DevicePath,
    /// No other thread touches the device until the disable is done.
    _claim: Claim,
}

impl PendingDisable {
    pub(crate) fn new(device: Device, path: DevicePath, claim: Claim) -> PendingDisable {
        PendingDisable { device, path, _claim: claim }
    }

    /// Tries again (no run holds the device: runs are torn down before retries); gives itself
    /// back if the driver still refuses.
    pub(crate) fn retry(self, errors: &mut Vec<String>) -> Option<PendingDisable> {
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
pub(crate) enum Pending {
    /// An unmap or free failed: the buffers left, the activation and the device context all
    /// wait, in order.
    Run(RunParts),
    /// Only disabling run-time-enabled metrics is left.
    Disable(PendingDisable),
}

impl Pending {
    /// Tries again; gives back what is still left.
    pub(crate) fn retry(self, errors: &mut Vec<String>) -> Vec<Pending> {
        match self {
            Pending::Run(parts) => {
                let t = parts.finish();
                errors.extend(t.errors);
                t.pending
            }
            Pending::Disable(d) => d.retry(errors).map(Pending::Disable).into_iter().collect(),
        }
    }
}

impl Pending {
    /// What is left, for a user: the device and what still waits on it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Pending::Run(parts) => {
                let names: Vec<&str> = parts.devices.iter().map(|p| p.dc.device.info.name.as_str()).collect();
                format!(
                    "exported memory on {} could not be freed; its metric groups stay active and metrics enabled",
                    names.join(" and ")
                )
            }
            Pending::Disable(d) => {
                format!("metrics stay enabled on {}: the driver refused to disable them", d.device.info.name)
            }
        }
    }

    /// Gives up on this leftover (the sampler is exiting): a run whose imports are alive is
    /// forgotten as it is — never torn down under them, never tried again — and a refused
    /// disable is dropped. The caller says so with [`Pending::describe`] first.
    pub(crate) fn abandon(self) {
        match self {
            Pending::Run(mut parts) => {
                // Nothing is left to retry in `Drop`: what it holds stays for the driver's exit.
                for p in std::mem::take(&mut parts.devices) {
                    std::mem::forget(p.buffers);
                }
            }
            Pending::Disable(_) => {}
        }
    }

    /// Does this leftover stand in the way of a run on `path`? Memory that could not be freed
    /// blocks its whole root device: a new run there would deactivate or disable under it.
    pub(crate) fn blocks(&self, path: DevicePath) -> bool {
        match self {
            Pending::Run(parts) => {
                parts.devices.iter().any(|p| p.dc.path.driver == path.driver && p.dc.path.device == path.device)
            }
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
/// waits while memory on its root device is still not freed — in `pending` or in `held`: the
/// leftovers of a run just torn down, not retried now but holding memory all the same.
pub(crate) fn retry_all(pending: &mut Vec<Pending>, held: &[Pending], errors: &mut Vec<String>) {
    let (runs, disables): (Vec<Pending>, Vec<Pending>) =
        std::mem::take(pending).into_iter().partition(|p| matches!(p, Pending::Run(_)));
    pending.extend(runs.into_iter().flat_map(|p| p.retry(errors)));
    for d in disables {
        let waits = match &d {
            Pending::Disable(pd) => pending.iter().chain(held).any(|p| p.blocks(pd.path)),
            Pending::Run(_) => false,
        };
        if waits {
            pending.push(d);
        } else {
            pending.extend(d.retry(errors));
        }
    }
}

/// One device of a run: its context, its activation, its imports of exported memory.
pub(crate) struct DeviceParts {
    pub dc: DeviceContext,
    pub activation: Activation,
    pub buffers: Buffers,
}

impl DeviceParts {
    /// Imports the buffer behind `fd` into the device's context (once per file); its index.
    pub(crate) fn import(&mut self, fd: i32, size: usize) -> Result<usize, ImportError> {
        self.buffers.import(&self.dc.ctx, &self.dc.device, fd, size)
    }
}

/// Everything a run holds on the driver: per device its context, activation and imports, and
/// the ways with what they opened.
pub(crate) struct RunParts {
    pub devices: Vec<DeviceParts>,
    /// Released first, before any import is freed (`read::release`); empty of driver objects for
    /// a run that reads exported memory only.
    pub ways: Vec<Box<dyn read::Way>>,
}

impl RunParts {
    /// No device yet; every way of [`read::ways`].
    pub(crate) fn new() -> RunParts {
        RunParts { devices: Vec::new(), ways: read::ways() }
    }

    /// Adds a device of the run (its context created); its index.
    pub(crate) fn add_device(&mut self, dc: DeviceContext) -> usize {
        let activation = Activation { activated: false, created: Vec::new() };
        self.devices.push(DeviceParts { dc, activation, buffers: Buffers::new() });
        self.devices.len() - 1
    }

    /// Imports made on every device.
    pub(crate) fn imports(&self) -> usize {
        self.devices.iter().map(|p| p.buffers.len()).sum()
    }

    /// The teardown: every way releases what it opened (close every streamer → destroy their
    /// events and pools → disable every tracer → destroy their decoders → destroy the tracers)
    /// → on every device unmap and free → on every device deactivate and destroy created groups
    /// → on every device disable metrics and destroy the context. Returns what failed and what
    /// is left to retry.
    pub(crate) fn finish(mut self) -> Teardown {
        self.teardown()
    }

    fn teardown(&mut self) -> Teardown {
        let mut devices = std::mem::take(&mut self.devices);
        let mut errors = Vec::new();
        let released = read::release(std::mem::take(&mut self.ways), &mut errors);
        if devices.is_empty() {
            return Teardown { errors, pending: Vec::new() };
        }
        let several = devices.len() > 1;
        let mut freed = Vec::new();
        for p in &mut devices {
            let mut e = Vec::new();
            // A panic part way through leaves every import not yet freed in `buffers` (the
            // release works in place): it counts as a failed free, and the rest waits.
            let (buffers, dc) = (&mut p.buffers, &p.dc);
            let r = std::panic::catch_unwind(AssertUnwindSafe(|| buffers.release(&released, &dc.ctx, &mut e)))
                .unwrap_or_else(|_| {
                    e.push("an internal error interrupted freeing the exported memory".into());
                    None
                });
            freed.push(r);
            errors.extend(e.into_iter().map(|e| on_device(several, &p.dc, e)));
        }
        let missing: Vec<&str> = devices
            .iter()
            .zip(&freed)
            .filter(|(_, r)| r.is_none())
            .map(|(p, _)| p.dc.device.info.name.as_str())
            .collect();
        let Some(freed) = freed.into_iter().collect::<Option<Vec<BuffersReleased>>>() else {
            errors.push(format!(
                "the metric groups on {} stay active until their exported memory is freed (zescope retries at the \
                 next stop, start and at exit)",
                missing.join(" and ")
            ));
            // Nothing is deactivated while any import is left: the devices released so far
            // hold no imports and release at once at the retry.
            let rest = RunParts { devices, ways: Vec::new() };
            return Teardown { errors, pending: vec![Pending::Run(rest)] };
        };
        // Every device's groups deactivated before metrics are disabled on any: a sub-device's
        // groups are its root device's too (recording "0" and "0.0" disabled metrics on the root
        // while the tile's group was still active).
        let mut deactivated = Vec::new();
        for (p, r) in devices.into_iter().zip(freed) {
            let mut e = Vec::new();
            let proof = p.activation.release(&released, r, &p.dc, &mut e);
            errors.extend(e.into_iter().map(|e| on_device(several, &p.dc, e)));
            deactivated.push((p.dc, proof));
        }
        let mut pending = Vec::new();
        for (dc, proof) in deactivated {
            let mut e = Vec::new();
            let name = dc.device.info.name.clone();
            pending.extend(dc.release(proof, &mut e).map(Pending::Disable));
            errors.extend(e.into_iter().map(|e| if several { format!("{name}: {e}") } else { e }));
        }
        Teardown { errors, pending }
    }
}

/// `e`, naming the device when a run has several.
fn on_device(several: bool, dc: &DeviceContext, e: String) -> String {
    if several { format!("{}: {e}", dc.device.info.name) } else { e }
}

/// What a teardown could not do.
pub(crate) struct Teardown {
    pub errors: Vec<String>,
    pub pending: Vec<Pending>,
}

impl Drop for RunParts {
    fn drop(&mut self) {
        // Reached only when `finish` was not called: while unwinding from a panic.
        let t = self.teardown();
        for e in &t.errors {
            log::error!("teardown after a failure: {e}");
        }
        for p in t.pending {
            match p {
                Pending::Disable(p) => {
                    let _ = p.retry(&mut Vec::new());
                }
                Pending::Run(rest) => {
                    // Its exporters must not be torn down under a live import, and dropping it
                    // would only try again: leave it to the driver's own cleanup at exit.
                    log::error!("exported memory could not be freed; its metric groups are left active");
                    std::mem::forget(rest);
                }
            }
        }
    }
}
