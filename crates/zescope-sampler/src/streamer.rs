//! The time-based metric streamer's mechanics, for its read path (`read/streamer.rs`). On the
//! sampler thread, like everything else: a host-visible event pool and event,
//! `zetMetricStreamerOpen` (period and reports per notification as the driver writes them back),
//! then at each tick (or once the event says reports wait) `zetMetricStreamerReadData` and
//! Calculate; each report becomes one sample stamped with the report's own time (its timestamp
//! metric, mapped onto the host clock through `zeDeviceGetGlobalTimestamps`).
//!
//! Values: each report's values are about that report alone, and become samples by metric type
//! (`report_plan.rs`: counts become per-second rates, busy time a share in %, ratios and states
//! stay as they are, the timestamp is the time). `ZE_RESULT_WARNING_DROPPED_DATA` is counted
//! and starts a new piece of the plot (a gap), never ends the run.
//!
//! [`Streamers`] owns the streamers, events and pools of a run; the teardown releases it with
//! the other paths, before any import is freed or group deactivated (close the streamers, then
//! destroy events, then pools).

use level_zero_sys::*;

use zescope_ze::streamer::{EventPool, NotifyEvent, Streamer, calculate};
use zescope_ze::{Context, Device, MetricGroup, ZeError};

use super::host::monotonic_ns;
use super::report_plan::{Column, ReportPlan};
use super::report_time::ReportClock;
use super::run::Pieces;

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
        for o in &mut open {
            if let Some(s) = o.streamer.take()
                && let Err(e) = s.close()
            {
                errors.push(format!("closing a metric streamer: {e}"));
            }
        }
        for o in &mut open {
            if let Some(ev) = o.event.take()
                && let Err(e) = ev.destroy()
            {
                errors.push(format!("destroying a streamer's event: {e}"));
            }
        }
        for o in &mut open {
            if let Some(p) = o.pool.take()
                && let Err(e) = p.destroy()
            {
                errors.push(format!("destroying a streamer's event pool: {e}"));
            }
        }
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
                    Err(e) if super::optional::is_fatal(&e) => return Err(e),
                    Err(e) => notices.push(super::optional::off("the streamer's notification event", &e)),
                }
                self.open[i].pool = Some(pool);
            }
            Err(e) if super::optional::is_fatal(&e) => return Err(e),
            Err(e) => notices.push(super::optional::off("the streamer's notification event", &e)),
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

    fn streamer(&self, i: usize) -> &Streamer {
        self.open[i].streamer.as_ref().expect("an opened streamer stays open until the teardown")
    }

    /// (period ns, reports per notification) the driver wrote back for streamer `i`.
    pub(crate) fn granted(&self, i: usize) -> (u32, u32) {
        let s = self.streamer(i);
        (s.period_ns, s.notify_every)
    }
}

/// "1.28 ms", "100 µs", "500 ns": a sampling period.
fn period_text(period_ns: u32) -> String {
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

/// Reads one streamed group at each tick and turns its reports into samples.
pub(crate) struct StreamerReader {
    index: usize,
    group: MetricGroup,
    device: Device,
    columns: Vec<Column>,
    /// The metric name of each plotted column.
    names: Vec<String>,
    /// Per plotted column: a value out of what it can be was told already.
    told_out_of_range: Vec<bool>,
    period_ns: u64,
    /// Series of one value set.
    series: usize,
    /// Value sets per report the run plots.
    sets: usize,
    raw: Vec<u8>,
    values: Vec<zet_typed_value_t>,
    /// Value counts per set of the last Calculate, where each set starts, and the row being
    /// filled: kept from read to read (a read allocates nothing once they are large enough).
    counts: Vec<u32>,
    starts: Vec<(usize, usize)>,
    row: Vec<f64>,
    clock: ReportClock,
    has_event: bool,
    /// The driver's set count differed from `sets` (said once).
    told_sets: bool,
}

/// What one read of a streamer gave.
#[derive(Default)]
pub(crate) struct StreamRead {
    /// Reports decoded into samples.
    pub reports: u64,
    /// Reports whose time did not follow the previous sample's (not stored).
    pub out_of_order: u64,
    /// The driver said reports were dropped before these.
    pub dropped: bool,
}

impl StreamerReader {
    /// A reader of streamer `index` of `streams`, decoding as `plan` says; a notice when its
    /// report times cannot be mapped onto the host clock.
    pub(crate) fn new(
        index: usize,
        streams: &Streamers,
        group: MetricGroup,
        device: Device,
        plan: ReportPlan,
        notices: &mut Vec<String>,
    ) -> Self {
        let (period, _) = streams.granted(index);
        let series = plan.columns.iter().filter(|c| matches!(c, Column::Series(_))).count();
        let has_event = streams.open[index].event.is_some();
        let (metric, unit) = plan.time.unwrap_or_default();
        let clock = ReportClock::new(device.timer(), &unit);
        if !metric.is_empty() {
            notices.extend(clock.unit_notice(&metric, &unit));
        }
        StreamerReader {
            index,
            group,
            device,
            columns: plan.columns,
            told_out_of_range: vec![false; plan.names.len()],
            names: plan.names,
            period_ns: period.max(1) as u64,
            series,
            sets: plan.sets,
            raw: Vec::new(),
            values: Vec::new(),
            counts: Vec::new(),
            starts: Vec::new(),
            row: Vec::new(),
            clock,
            has_event,
            told_sets: false,
        }
    }

    /// Reads what the streamer holds and appends one sample per report to `pieces` (after a
    /// gap when the driver dropped reports). A notice is added when the clock pair turns out
    /// to be unavailable, or the driver's value sets are not the sub-devices expected.
    pub(crate) fn read(
        &mut self,
        streams: &Streamers,
        notices: &mut Vec<String>,
        pieces: &mut Pieces,
    ) -> Result<StreamRead, ZeError> {
        let s = streams.streamer(self.index);
        if self.has_event {
            // Only asks (timeout 0): the tick is the wait's upper bound; a signaled event is
            // reset before the read so a notification during it is not lost.
            if streams.open[self.index].event.as_ref().expect("has_event").wait(0)? {
                streams.open[self.index].event.as_ref().expect("has_event").reset()?;
            }
        }
        let data = s.read(&mut self.raw)?;
        let now = monotonic_ns().max(0) as u64;
        let mut out = StreamRead { dropped: data.dropped, ..Default::default() };
        if data.dropped {
            pieces.break_batch();
        }
        if data.bytes == 0 {
            return Ok(out);
        }
        calculate(&self.group, &self.raw[..data.bytes], &mut self.values, &mut self.counts)?;
        let counts = &self.counts;
        let n = self.columns.len();
        let first = counts.first().copied().unwrap_or(0) as usize;
        if n == 0 || !first.is_multiple_of(n) {
            return Ok(out);
        }
        if counts.len() != self.sets && !self.told_sets {
            self.told_sets = true;
            notices.push(format!(
                "metric group {}: Calculate gave {} value set(s) where the device has {} sub-device(s); the \
                 series of a missing set stay empty",
                self.group.info.name,
                counts.len(),
                self.sets
            ));
        }
        // Where each plotted set starts in `values`, and how many reports it holds.
        let mut starts = std::mem::take(&mut self.starts);
        starts.clear();
        let mut at = 0usize;
        for k in 0..self.sets {
            let c = counts.get(k).copied().unwrap_or(0) as usize;
            starts.push((at, if c.is_multiple_of(n) { c / n } else { 0 }));
            at += c;
        }
        self.clock.refresh(&self.device, now, notices);
        let reports = first / n;
        let mut row = std::mem::take(&mut self.row);
        row.clear();
        row.resize(self.series * self.sets, f64::NAN);
        let period_s = self.period_ns as f64 / 1e9;
        for r in 0..reports {
            let mut device_ts = None;
            for (k, &(start, held)) in starts.iter().enumerate() {
                let part = &mut row[k * self.series..(k + 1) * self.series];
                if r >= held {
                    part.fill(f64::NAN);
                    continue;
                }
                let vals = &self.values[start + r * n..start + (r + 1) * n];
                let mut j = 0;
                for (v, c) in vals.iter().zip(&self.columns) {
                    match *c {
                        Column::Time if k == 0 => device_ts = v.as_u64(),
                        Column::Series(conv) => {
                            let (x, odd) = conv.apply(v.as_f64().unwrap_or(f64::NAN), period_s);
                            part[j] = x;
                            if odd && !self.told_out_of_range[j] {
                                self.told_out_of_range[j] = true;
                                notices.push(format!(
                                    "metric group {}: {} reported {} busy in a report of {}, which is not a share of \
                                     its time; its busy share is drawn clamped to 0..100 %",
                                    self.group.info.name,
                                    self.names[j],
                                    v.as_f64().unwrap_or(f64::NAN),
                                    period_text(self.period_ns as u32),
                                ));
                            }
                            j += 1;
                        }
                        _ => {}
                    }
                }
            }
            let back = (reports - 1 - r) as u64 * self.period_ns;
            let ts = self.clock.map(device_ts, now).unwrap_or(now.saturating_sub(back) as i64);
            if pieces.push(ts, &row) {
                out.reports += 1;
            } else {
                out.out_of_order += 1;
            }
        }
        self.starts = starts;
        self.row = row;
        Ok(out)
    }
}
