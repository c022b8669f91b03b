//! The time-based metric streamer's driver objects, for its way (`mod.rs`): per streamed group a
//! host-visible event pool and event, then `zetMetricStreamerOpen` (period and reports per
//! notification as the driver writes them back; a refused period followed by longer ones).
//! [`Streamers`] owns the streamers, events and pools of a run; the teardown releases it with the
//! other ways, before any import is freed or group deactivated (close the streamers, then
//! destroy events, then pools).

use level_zero_sys::*;

use zescope_ze::streamer::{EventPool, NotifyEvent, Streamer};
use zescope_ze::{Context, Device, MetricGroup, ZeError};

use super::super::release;
use crate::optional;

/// Longest sampling period asked of the driver (ns): ten reports per interval up to this.
pub(crate) const DEFAULT_PERIOD_NS: u32 = 1_000_000;
/// Shortest sampling period asked of the driver (ns).
pub(crate) const MIN_PERIOD_NS: u32 = 10_000;

/// Periods (ns) tried, in order, after the driver refused a shorter one with
/// ZE_RESULT_ERROR_INVALID_ARGUMENT: 1 ms is the floor of Intel's NPU driver (and of its kernel
/// driver), the others are for drivers with coarser floors. The API has no query for the floor.
pub(crate) const FALLBACK_PERIODS_NS: [u32; 3] = [1_000_000, 10_000_000, 100_000_000];

/// One streamer of a run and what it needs released after it.
struct Open {
    streamer: Option<Streamer>,
    event: Option<NotifyEvent>,
    pool: Option<EventPool>,
    /// The run's index of its device, and its group's name.
    device: usize,
    group: String,
}

/// Every streamer, event and pool of a run.
#[derive(Default)]
pub(crate) struct Streamers {
    open: Vec<Open>,
}

impl Streamers {
    /// Closes every streamer, then destroys events, then pools. Each value is consumed by its
    /// call (a handle is never released twice), so a failure is reported and the teardown goes
    /// on: a driver that refuses a deactivation afterwards says so itself.
    pub(crate) fn release(self, errors: &mut Vec<String>) {
        let mut open = self.open;
        release::each(&mut open, "closing a metric streamer", errors, |o| o.streamer.take().map(Streamer::close));
        release::each(&mut open, "destroying a streamer's event", errors, |o| o.event.take().map(NotifyEvent::destroy));
        release::each(&mut open, "destroying a streamer's event pool", errors, |o| {
            o.pool.take().map(EventPool::destroy)
        });
    }

    /// Opens a streamer on `group` (already activated): pool, event, then the streamer. What
    /// was created stays in `self` for the teardown even when a later step fails. A pool or
    /// event the driver does not offer only turns the notification off (reads happen at the
    /// tick); the notice says so. A period the driver refuses with INVALID_ARGUMENT (some refuse
    /// periods under their floor) is followed by the longer ones of [`FALLBACK_PERIODS_NS`], the
    /// reports per notification scaled to keep one notification per interval; a notice says
    /// which period was refused and which one is used. If none is accepted, the first refusal is
    /// the error.
    pub(crate) fn open(
        &mut self,
        ctx: &Context,
        device: &Device,
        group: &MetricGroup,
        (period_ns, notify_every): (u32, u32),
        d: usize,
        notices: &mut Vec<String>,
    ) -> Result<usize, ZeError> {
        let i = self.open.len();
        self.open.push(Open { streamer: None, event: None, pool: None, device: d, group: group.info.name.clone() });
        match EventPool::create(ctx, device) {
            Ok(pool) => {
                match pool.event() {
                    Ok(ev) => self.open[i].event = Some(ev),
                    Err(e) if optional::is_fatal(&e) => return Err(e),
                    Err(e) => notices.push(optional::off("the streamer's notification event", &e)),
                }
                self.open[i].pool = Some(pool);
            }
            Err(e) if optional::is_fatal(&e) => return Err(e),
            Err(e) => notices.push(optional::off("the streamer's notification event", &e)),
        }
        let event = self.open[i].event.as_ref();
        let first = match Streamer::open(ctx, device, group, period_ns, notify_every, event) {
            Ok(s) => {
                self.open[i].streamer = Some(s);
                return Ok(i);
            }
            Err(e) if e.code == ZE_RESULT_ERROR_INVALID_ARGUMENT => e,
            Err(e) => return Err(e),
        };
        for period in FALLBACK_PERIODS_NS.into_iter().filter(|&p| p > period_ns) {
            let notify = ((notify_every as u64 * period_ns as u64) / period as u64).max(1) as u32;
            match Streamer::open(ctx, device, group, period, notify, event) {
                Ok(s) => {
                    notices.push(format!(
                        "metric group {}: the driver refused a sampling period of {} ({} answered {}); streaming \
                         every {} instead",
                        group.info.name,
                        period_text(period_ns),
                        first.call,
                        first.name(),
                        period_text(s.period_ns)
                    ));
                    self.open[i].streamer = Some(s);
                    return Ok(i);
                }
                Err(e) if e.code == ZE_RESULT_ERROR_INVALID_ARGUMENT => {}
                Err(e) => return Err(e),
            }
        }
        Err(first)
    }

    /// The group of the first streamer open on the run's device `d`, if any.
    pub(crate) fn streaming_on(&self, d: usize) -> Option<&str> {
        self.open.iter().find(|o| o.device == d && o.streamer.is_some()).map(|o| o.group.as_str())
    }

    pub(super) fn streamer(&self, i: usize) -> &Streamer {
        self.open[i].streamer.as_ref().expect("an opened streamer stays open until the teardown")
    }

    /// Streamer `i`'s notification event, when the driver offered one.
    pub(super) fn event(&self, i: usize) -> Option<&NotifyEvent> {
        self.open[i].event.as_ref()
    }

    /// (period ns, reports per notification) the driver wrote back for streamer `i`.
    pub(crate) fn granted(&self, i: usize) -> (u32, u32) {
        let s = self.streamer(i);
        (s.period_ns, s.notify_every)
    }
}

/// "1.28 ms", "100 µs", "500 ns": a sampling period.
pub(super) fn period_text(period_ns: u32) -> String {
    let p = period_ns as f64;
    if p >= 1e6 {
        format!("{} ms", p / 1e6)
    } else if p >= 1e3 {
        format!("{} µs", p / 1e3)
    } else {
        format!("{p} ns")
    }
}

/// "streamer (1.28 ms, 4 reports per notification)": how a streamed group is read.
pub(crate) fn describe(period_ns: u32, notify_every: u32) -> String {
    let n = if notify_every == 1 { "1 report".to_owned() } else { format!("{notify_every} reports") };
    format!("streamer ({}, {n} per notification)", period_text(period_ns))
}
