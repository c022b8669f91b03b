//! Reading a metric group with the time-based metric streamer, for groups whose
//! sampling type says TIME_BASED (what today's Intel GPUs and NPUs offer). Per group: the report
//! plan (`plan.rs`), the period asked of the driver, the streamer opened after the activation
//! (`open.rs`, [`Streamers`]: pool, event, streamer), its reader (`reader.rs`,
//! [`StreamerReader`]: reports through Calculate into samples) and the stream it announces. At
//! the teardown every streamer closes, then the events and pools are destroyed.
//!
//! A refused open: a driver that allows one open metric streamer per device (Intel's NPU driver:
//! one kernel metric stream per device) answers `zetMetricStreamerOpen` for the second streamed
//! group of a device with ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE. That group is left out of the
//! run with ONE notice naming the reason (the window's banner, `record`/`serve` stderr, the
//! session's run record), and the first keeps streaming. The same answer while no streamer of
//! the run is open on the device means another process (a profiler, another zescope) holds the
//! device's stream: the group is left out the same way, with a notice saying so, when the run
//! reads anything else; only when it is all the run would read does the refusal end the setup,
//! as an error with a hint.

mod open;
mod plan;
mod reader;

use level_zero_sys::*;
use zescope_ze::{Device, MetricGroup, ZeError};

use super::batch::ReadOutcome;
use super::{Claim, Dev, Group, Io, Opened, Way};
use crate::errors;
use crate::protocol::{ErrorKind, GroupEntry, ReadPath, SamplerError, Via};
use crate::timing::notify_span;
use open::{DEFAULT_PERIOD_NS, MIN_PERIOD_NS, Streamers};
use reader::StreamerReader;

/// The time-based streamer, for a whole run: every streamer, event and pool it opened, and a
/// reader per stream.
#[derive(Default)]
pub(crate) struct Streamer {
    streamers: Streamers,
    readers: Vec<StreamerReader>,
}

impl Way for Streamer {
    /// A time-based group (not tracer-based) under `streamer`.
    fn via(&self) -> Option<Via> {
        Some(Via::Streamer)
    }

    fn lists(&self, g: &GroupEntry) -> Option<Via> {
        (g.streamable && !g.tracer).then_some(Via::Streamer)
    }

    /// Time-based groups, under `auto` (after exported memory) or `streamer`; another group is
    /// refused under `streamer` (and passed by under `auto`, saying why).
    fn claim(&self, _dev: &Dev<'_>, g: &Group<'_>, via: Via) -> Claim {
        if g.group.info.tracer_based() {
            return Claim::Passes(None);
        }
        let name = &g.group.info.name;
        let time = g.group.info.sampling & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0;
        match (via, time) {
            (Via::Auto | Via::Streamer, true) => Claim::Reads,
            (Via::Streamer, false) => Claim::Refuses(errors::config(
                format!("metric group {name} has no time-based sampling: the metric streamer cannot read it"),
                Some("read it through its exported memory (`--via export` or auto)"),
            )),
            (Via::Auto, false) => {
                Claim::Passes(Some(errors::config("it has no time-based sampling for the metric streamer", None)))
            }
            _ => Claim::Passes(None),
        }
    }

    /// Opens the group's streamer and builds its reader and stream; nothing when no metric of
    /// it is plotted, or when the driver refused the open with HANDLE_OBJECT_IN_USE while the
    /// run reads something else (then the group is left out and a notice says why).
    fn open(&mut self, dev: &mut Dev<'_>, g: &Group<'_>) -> Result<Opened, SamplerError> {
        let group = g.group;
        let Some(plan) = plan::plan(g.metrics, dev.wanted(), value_sets(dev.device, group)) else {
            return Ok(Opened::default());
        };
        // It is all the run reads: no other group on any device, no telemetry.
        let cfg = dev.cfg;
        let alone = !cfg.telemetry && cfg.targets.iter().map(|t| t.groups.len()).sum::<usize>() == 1;
        let span = notify_span(dev.batch);
        let request = streamer_request(cfg.interval, span);
        let open = &mut self.streamers;
        let i = match open.open(&dev.parts.dc.ctx, dev.device, group, request, dev.d, dev.notices) {
            Ok(i) => i,
            Err(e)
                if e.code == ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE && (open.streaming_on(dev.d).is_some() || !alone) =>
            {
                let why = match open.streaming_on(dev.d) {
                    Some(first) => format!(
                        "the driver allows one open metric streamer per device and {first} streams on {} already",
                        dev.name
                    ),
                    None => format!(
                        "another process (a profiler, another zescope) holds the metric stream of {}; close it to \
                         read this group",
                        dev.name
                    ),
                };
                dev.notices.push(format!(
                    "metric group {} is left out of this run: {why} (zetMetricStreamerOpen answered {}); the rest of \
                     the run goes on",
                    group.info.name,
                    e.name()
                ));
                let all_refused = errors::config(
                    format!(
                        "every metric group chosen on {} was refused: its metric stream is held elsewhere",
                        dev.name
                    ),
                    Some(
                        "close the profiler (or the other zescope) holding it, or read this device through its \
                         exported memory",
                    ),
                );
                return Ok(Opened { refused: Some(all_refused), ..Opened::default() });
            }
            Err(e) => return Err(streamer_open_error(&group.info.name, &e)),
        };
        let (period, notify) = open.granted(i);
        let series = plan.series.clone();
        let reader = StreamerReader::new(i, open, group.clone(), dev.device.clone(), (plan, span), dev.notices);
        let info = dev.stream(group.info.name.clone(), open::describe(period, notify), series, ReadPath::Streamer);
        self.readers.push(reader);
        Ok(Opened::stream(self.readers.len() - 1, info))
    }

    /// The reports the streamer holds, one sample each (after a gap where reports were dropped),
    /// when they are due (`reader.rs`).
    fn read(&mut self, s: usize, io: Io<'_>, out: &mut ReadOutcome) -> Result<(), SamplerError> {
        self.readers[s]
            .read(&self.streamers, test_hook::polled(), io.notices, io.pieces)
            .map_err(|e| errors::ze(&format!("reading the streamer of {}", io.info.group), &e))?
            .count(out);
        Ok(())
    }

    /// One last read before a stop closes the streamer, so the reports made up to the stop are
    /// kept; a failure ends nothing (the run is stopping): it is a notice.
    fn drain(&mut self, s: usize, io: Io<'_>) {
        if let Err(e) = self.readers[s].read(&self.streamers, true, io.notices, io.pieces) {
            io.notices.push(format!(
                "the last read of the streamer of {} failed: {e}; reports after the previous read are lost",
                io.info.group
            ));
        }
    }

    /// The reports wait in the driver's buffer with their own times: a run of streamers is read in
    /// batches.
    fn buffered(&self) -> bool {
        true
    }

    /// Waits on the first streamer's notification event (`zeEventHostSynchronize` with a
    /// timeout); every streamer is read when it comes. `None` when no streamer has an event, or
    /// its wait failed (then the batch interval paces the reads; the reader says why).
    fn wait_notified(&mut self, timeout: std::time::Duration) -> Option<bool> {
        let r = self.readers.iter().find(|r| r.notified())?;
        match self.streamers.event(r.index())?.wait(timeout.as_nanos().min(u64::MAX as u128) as u64) {
            Ok(ready) => Some(ready),
            // Read at once: the reader's own wait meets the same failure and answers it (device
            // lost ends the run; any other turns the event off with a notice).
            Err(_) => Some(true),
        }
    }

    /// Closes every streamer, then destroys the events, then the pools.
    fn release(self: Box<Self>, errors: &mut Vec<String>) {
        self.streamers.release(errors);
    }
}

/// Test hook (`crates/zescope-sampler/tests/sampler/streamer_wake.rs`, through
/// `sampler::Options::poll_streamer`): the streamer read on every tick of the run's interval, as
/// before reads were apart from the sampling rate, to compare with the notification-driven
/// reads. Off unless set.
pub(crate) mod test_hook {
    use std::cell::Cell;

    thread_local!(static POLLED: Cell<bool> = const { Cell::new(false) });

    /// Read the streamer on every tick on this thread from now on.
    pub(crate) fn poll_every_tick(on: bool) {
        POLLED.with(|c| c.set(on));
    }

    /// Whether the streamer is read on every tick.
    pub(crate) fn polled() -> bool {
        POLLED.with(Cell::get)
    }
}

/// Value sets a streamed group's reports decode into: one per sub-device of a root device that
/// has several, where the driver offers `zetMetricGroupCalculateMultipleMetricValuesExp` (the
/// single Calculate gives one set); else one.
fn value_sets(device: &Device, group: &MetricGroup) -> usize {
    if device.info.sub_device.is_some() || group.ze.api.zetMetricGroupCalculateMultipleMetricValuesExp.is_none() {
        return 1;
    }
    device.sub_devices().map_or(1, |s| s.len().max(1))
}

/// The period (ns) and reports per notification to ask for at sampling interval `interval`: ten
/// reports per interval (a finer plot than one sample per tick), at least 10 µs and at most
/// 1 ms apart; a notification per `span` of reports (per interval when it is longer; `span` is
/// [`notify_span`] of the batch interval), so the sampler wakes at the batch rate however high
/// the sampling rate.
fn streamer_request(interval: std::time::Duration, span: std::time::Duration) -> (u32, u32) {
    let interval_ns = interval.as_nanos().clamp(1, u32::MAX as u128) as u32;
    let period = (interval_ns / 10).clamp(MIN_PERIOD_NS, DEFAULT_PERIOD_NS);
    let span = interval.max(span).as_nanos().min(u32::MAX as u128) as u32;
    (period, (span / period).max(1))
}

/// A refused `zetMetricStreamerOpen`, with what usually causes it and how to fix it.
fn streamer_open_error(group: &str, e: &ZeError) -> SamplerError {
    let mut err = errors::ze(&format!("opening the metric streamer of {group}"), e);
    match e.code {
        ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE => {
            err.hint = Some(
                "another process (a profiler, another zescope) holds this device's metric stream: close it, or \
                 read this device through its exported memory"
                    .into(),
            )
        }
        ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS | ZE_RESULT_ERROR_NOT_AVAILABLE => {
            err.kind = ErrorKind::Permission;
            err.hint = Some(
                "the kernel refuses performance streams to unprivileged users: `sudo sysctl dev.i915.perf_stream_paranoid=0` \
                 (i915) or `sudo sysctl dev.xe.observation_paranoid=0` (xe), or give zescope CAP_PERFMON; \
                 `zescope doctor` checks these"
                    .into(),
            )
        }
        _ => {}
    }
    err
}
