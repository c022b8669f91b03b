//! Setting up one streamed group of a run (`setup::build` calls it for each group read with the
//! time-based streamer): the report plan, the period asked of the driver, the streamer opened,
//! its reader and the stream it announces.
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

use level_zero_sys::*;
use zescope_ze::{Device, Metric, MetricGroup, ZeError};

use super::errors;
use super::protocol::{ReadPath, SamplerError, StreamInfo};
use super::run::Reader;
use super::streamer::{DEFAULT_PERIOD_NS, MIN_PERIOD_NS, StreamerReader};
use super::teardown::RunParts;

/// A streamed group left out of a run: its device (index of the run's targets) and name.
pub(crate) struct Refused {
    pub(crate) target: usize,
    pub(crate) group: String,
}

/// What one streamed group is set up with.
pub(crate) struct StreamedGroup<'a> {
    /// The device's index in the run (`RunParts`, `RunConfig::targets`).
    pub(crate) d: usize,
    pub(crate) device: &'a Device,
    /// The device's name in the run.
    pub(crate) name: &'a str,
    pub(crate) group: &'a MetricGroup,
    pub(crate) metrics: &'a [Metric],
    /// The metrics chosen (empty: all).
    pub(crate) wanted: &'a [String],
    pub(crate) interval: std::time::Duration,
    /// It is all the run reads (no other group on any device, no telemetry).
    pub(crate) alone: bool,
}

/// Opens the streamer of `on.group` and builds its reader and stream; `Ok(None)` when no metric
/// of it is plotted, or when the driver refused the open with HANDLE_OBJECT_IN_USE while another
/// group of the run streams on the device (then the group is in `refused` and a notice says why).
pub(crate) fn open_streamed(
    parts: &mut RunParts,
    on: &StreamedGroup,
    notices: &mut Vec<String>,
    refused: &mut Vec<Refused>,
) -> Result<Option<(Reader, StreamInfo)>, SamplerError> {
    let g = on.group;
    let Some(plan) = super::report_plan::plan(on.metrics, on.wanted, value_sets(on.device, g)) else {
        return Ok(None);
    };
    let (open, dc) = parts.streams_mut(on.d);
    let (period, notify) = streamer_request(on.interval);
    let i = match open.open(&dc.ctx, on.device, g, (period, notify), on.d, notices) {
        Ok(i) => i,
        Err(e)
            if e.code == ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE && (open.streaming_on(on.d).is_some() || !on.alone) =>
        {
            let why = match open.streaming_on(on.d) {
                Some(first) => format!(
                    "the driver allows one open metric streamer per device and {first} streams on {} already",
                    on.name
                ),
                None => format!(
                    "another process (a profiler, another zescope) holds the metric stream of {}; close it to read \
                     this group",
                    on.name
                ),
            };
            notices.push(format!(
                "metric group {} is left out of this run: {why} (zetMetricStreamerOpen answered {}); the rest of the \
                 run goes on",
                g.info.name,
                e.name()
            ));
            refused.push(Refused { target: on.d, group: g.info.name.clone() });
            return Ok(None);
        }
        Err(e) => return Err(streamer_open_error(&g.info.name, &e)),
    };
    let (period, notify) = open.granted(i);
    let series = plan.series.clone();
    let reader = StreamerReader::new(i, open, g.clone(), on.device.clone(), plan, notices);
    let info = StreamInfo {
        index: 0,
        target: on.d,
        device: on.name.to_owned(),
        group: g.info.name.clone(),
        layout: super::streamer::describe(period, notify),
        series,
        read_path: ReadPath::Streamer,
    };
    Ok(Some((Reader::Streamer(Box::new(reader)), info)))
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
/// 1 ms apart; a notification once per interval.
fn streamer_request(interval: std::time::Duration) -> (u32, u32) {
    let interval_ns = interval.as_nanos().clamp(1, u32::MAX as u128) as u32;
    let period = (interval_ns / 10).clamp(MIN_PERIOD_NS, DEFAULT_PERIOD_NS);
    (period, (interval_ns / period).max(1))
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
            err.kind = super::protocol::ErrorKind::Permission;
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
