//! The metric tracer's driver objects, for its way (`mod.rs`): per device one tracer on its
//! tracer-based groups (`zetMetricTracerCreate`, after the groups' exported memory was imported
//! and the groups activated, in the order Intel's conformance suite uses the extension), its
//! decoder and the decodable metrics, and the tracer enabled. [`Tracers`] owns the tracers and
//! decoders of a run; the teardown releases it with the other ways, right after the streamers
//! (disable every tracer → destroy every decoder → destroy every tracer), before any import is
//! freed (`dmabuf::Buffers::release` takes the ways' proof) or any group deactivated.

use zescope_ze::tracer::{Decoder, Tracer, TracerError};
use zescope_ze::{Context, Device, Metric, MetricGroup};

use super::super::release;

/// Raw bytes per notification asked of the driver (it rounds and caps them, and writes back
/// what it uses; zescope reads at its tick whatever the notification size).
pub(crate) const NOTIFY_BYTES: u32 = 32 << 10;

/// One device's tracer and what must be released with it.
struct Open {
    tracer: Option<Tracer>,
    decoder: Option<Decoder>,
    enabled: bool,
}

/// Every tracer and decoder of a run.
#[derive(Default)]
pub(crate) struct Tracers {
    open: Vec<Open>,
}

impl Tracers {
    /// Disables every enabled tracer, then destroys every decoder, then every tracer. Each value
    /// is consumed by its call (a handle is never released twice); a failure is reported and the
    /// teardown goes on.
    pub(crate) fn release(self, errors: &mut Vec<String>) {
        let mut open = self.open;
        release::each(&mut open, "disabling a metric tracer", errors, |o| {
            o.tracer.as_ref().filter(|_| o.enabled).map(Tracer::disable)
        });
        release::each(&mut open, "destroying a metric decoder", errors, |o| o.decoder.take().map(Decoder::destroy));
        release::each(&mut open, "destroying a metric tracer", errors, |o| o.tracer.take().map(Tracer::destroy));
    }

    /// Creates a tracer on `groups` (activated on `device` in `ctx`), its decoder, and enables
    /// it; returns its index. What was created stays in `self` for the teardown even when a later
    /// step fails.
    pub(crate) fn open(
        &mut self,
        ctx: &Context,
        device: &Device,
        groups: &[&MetricGroup],
    ) -> Result<usize, TracerError> {
        zescope_ze::tracer::available(&device.ze)?;
        let i = self.open.len();
        self.open.push(Open { tracer: None, decoder: None, enabled: false });
        let tracer = Tracer::create(ctx, device, groups, NOTIFY_BYTES)?;
        let o = &mut self.open[i];
        o.tracer = Some(tracer);
        o.decoder = Some(Decoder::create(o.tracer.as_ref().expect("just set"))?);
        o.tracer.as_ref().expect("just set").enable()?;
        o.enabled = true;
        Ok(i)
    }

    /// The metrics tracer `i`'s decoder decodes, in its order.
    pub(crate) fn decodable(&self, i: usize) -> &[Metric] {
        self.open[i].decoder.as_ref().map_or(&[], |d| &d.metrics)
    }

    /// Raw bytes per notification the driver granted tracer `i`.
    pub(crate) fn notify_bytes(&self, i: usize) -> u32 {
        self.open[i].tracer.as_ref().map_or(0, |t| t.notify_bytes)
    }

    pub(super) fn parts(&mut self, i: usize) -> Option<(&Tracer, &mut Decoder)> {
        let o = &mut self.open[i];
        match (&o.tracer, &mut o.decoder) {
            (Some(t), Some(d)) if o.enabled => Some((t, d)),
            _ => None,
        }
    }
}

/// "tracer (32 KiB per notification)": how a traced group is read.
pub(crate) fn describe(notify_bytes: u32) -> String {
    if notify_bytes >= 1024 && notify_bytes.is_multiple_of(1024) {
        format!("tracer ({} KiB per notification)", notify_bytes / 1024)
    } else {
        format!("tracer ({notify_bytes} bytes per notification)")
    }
}
