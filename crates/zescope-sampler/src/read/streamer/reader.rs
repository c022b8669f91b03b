//! Reading one streamed group, for the streamer's way (`mod.rs`): once its notification event
//! says reports wait, or its notification span (`timing::notify_span` of the batch interval)
//! after its last read when it has said nothing (a driver
//! without the event, or one that notifies seldom), `zetMetricStreamerReadData` and Calculate;
//! a tick in between asks the event (timeout 0) and reads nothing more. A wake that finds many
//! reports reads them in parts of about [`PART_VALUES`] values (the read's `maxReportCount`),
//! each calculated and converted before the next is read, while parts come full: the raw reports
//! and Calculate's values of a part stay within a core's L2 cache, where a batch interval of a
//! group of 200 metrics at 100 000 reports a second would be 32 MB at once (a part boundary is
//! a read boundary like any other: a driver carries what it needs from one read to the next).
//! Reports with no time of their own are read whole (they are stamped back from the read's
//! time). Each report becomes one
//! sample stamped with the report's own time (its timestamp metric, mapped onto the host clock
//! through `zeDeviceGetGlobalTimestamps`, `read/report_time.rs`), so when it is read changes no
//! sample.
//!
//! Values: each report's values are about that report alone, and become samples by metric type
//! (`plan.rs`: counts become per-second rates, busy time a share in %, ratios and states stay as
//! they are, the timestamp is the time). `ZE_RESULT_WARNING_DROPPED_DATA` is counted and starts a
//! new piece of the plot (a gap), never ends the run.

use level_zero_sys::*;

use zescope_ze::streamer::calculate;
use zescope_ze::{Device, MetricGroup, ZeError};

use std::time::Instant;

use super::open::{Streamers, period_text};
use super::plan::{Column, Conv, ReportPlan, per_second};
use crate::host::monotonic_ns;
use crate::read::batch::{Pieces, Reports};
use crate::read::report_time::ReportClock;

/// Reads one streamed group at each tick and turns its reports into samples.
pub(crate) struct StreamerReader {
    index: usize,
    group: MetricGroup,
    device: Device,
    /// The values of a report (a value set's length).
    width: usize,
    /// Where in a value set the report's time is, and each plotted value with its conversion.
    time_col: Option<usize>,
    series_cols: Vec<(usize, Conv)>,
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
    /// Value counts per set of the last Calculate and where each set starts: kept from read to
    /// read (a read allocates nothing once they are large enough).
    counts: Vec<u32>,
    starts: Vec<(usize, usize)>,
    clock: ReportClock,
    /// The driver's set count differed from `sets` (said once).
    told_sets: bool,
    /// When the reports were last read (`None`: not yet).
    last_read: Option<Instant>,
    /// The notification event's wait failed (the driver lacks it): reads are paced by time.
    notify_off: bool,
    /// The time's worth of reports a notification stands for: the longest between reads when
    /// none comes.
    span: std::time::Duration,
    /// Reports a part of a read asks for at most: about [`PART_VALUES`] values.
    part_reports: u32,
}

/// The values (of every set) a part of a read holds about: 8 192 values are 128 KiB of
/// Calculate's typed values, the raw reports beside them less, within a core's L2 cache.
const PART_VALUES: usize = 8192;

/// Parts one read takes at most (a driver that keeps giving full parts is read again next tick).
const MAX_PARTS: usize = 4096;

impl StreamerReader {
    /// A reader of streamer `index` of `streams`, decoding as `plan` says; a notice when its
    /// report times cannot be mapped onto the host clock.
    pub(crate) fn new(
        index: usize,
        streams: &Streamers,
        group: MetricGroup,
        device: Device,
        (plan, span): (ReportPlan, std::time::Duration),
        notices: &mut Vec<String>,
    ) -> Self {
        let (period, _) = streams.granted(index);
        let series = plan.columns.iter().filter(|c| matches!(c, Column::Series(_))).count();
        let (metric, unit) = plan.time.unwrap_or_default();
        let clock = ReportClock::new(device.timer(), &unit);
        if !metric.is_empty() {
            notices.extend(clock.unit_notice(&metric, &unit));
        }
        let per_s = per_second(period.max(1) as u64);
        let time_col = plan.columns.iter().position(|c| matches!(c, Column::Time));
        let series_cols = (plan.columns.iter().enumerate())
            .filter_map(|(i, c)| match c {
                Column::Series(conv) => Some((i, conv.at(per_s))),
                _ => None,
            })
            .collect();
        StreamerReader {
            index,
            group,
            device,
            width: plan.columns.len(),
            time_col,
            series_cols,
            told_out_of_range: vec![false; plan.names.len()],
            names: plan.names,
            period_ns: period.max(1) as u64,
            series,
            sets: plan.sets,
            raw: Vec::new(),
            values: Vec::new(),
            counts: Vec::new(),
            starts: Vec::new(),
            clock,
            told_sets: false,
            last_read: None,
            notify_off: streams.event(index).is_none(),
            span,
            part_reports: (PART_VALUES / (plan.columns.len() * plan.sets).max(1)).clamp(64, 1 << 16) as u32,
        }
    }

    /// Its streamer's index in the run's [`Streamers`].
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// Whether its notification event is waited on (the driver gave one and its wait works).
    pub(crate) fn notified(&self) -> bool {
        !self.notify_off
    }

    /// Does the streamer hold reports to read now? Its event signaled (reset here, before the
    /// read, so a notification during the read is not lost), or nothing said for
    /// its notification span since the last read, or `every_call` (the last read before a stop, and
    /// the test hook that reads on every tick). A failed wait turns the event off with a notice
    /// (DEVICE_LOST is an error).
    fn due(&mut self, streams: &Streamers, every_call: bool, notices: &mut Vec<String>) -> Result<bool, ZeError> {
        let now = Instant::now();
        let mut due = every_call || self.last_read.is_none_or(|t| now.duration_since(t) >= self.span);
        if let Some(event) = streams.event(self.index).filter(|_| !self.notify_off) {
            match event.wait(0).and_then(|ready| if ready { event.reset().map(|()| true) } else { Ok(false) }) {
                Ok(ready) => due |= ready,
                Err(e) if crate::optional::is_fatal(&e) => return Err(e),
                Err(e) => {
                    self.notify_off = true;
                    notices.push(crate::optional::off("the streamer's notification event", &e));
                    due = true;
                }
            }
        }
        if due {
            self.last_read = Some(now);
        }
        Ok(due)
    }

    /// When reports are due (see `due`; always with `every_call`), reads what the streamer
    /// holds and appends one sample per report to `pieces` (after a gap when the driver dropped
    /// reports). A notice is added when the clock pair turns out to be unavailable, or the
    /// driver's value sets are not the sub-devices expected.
    pub(crate) fn read(
        &mut self,
        streams: &Streamers,
        every_call: bool,
        notices: &mut Vec<String>,
        pieces: &mut Pieces,
    ) -> Result<Reports, ZeError> {
        if !self.due(streams, every_call, notices)? {
            return Ok(Reports::begin(false, pieces));
        }
        // In parts while they come full (the module's docs); reports without a time of their own
        // whole.
        let most = if self.time_col.is_some() { self.part_reports } else { u32::MAX };
        let mut total = Reports::default();
        for _ in 0..MAX_PARTS {
            let (part, more) = self.read_part(streams, most, notices, pieces)?;
            total.add(part);
            if !more {
                break;
            }
        }
        Ok(total)
    }

    /// One read of at most `most` reports (the driver's `maxReportCount`), appended to `pieces`;
    /// with whether the driver may hold more (it gave `most`, or filled what it was given).
    fn read_part(
        &mut self,
        streams: &Streamers,
        most: u32,
        notices: &mut Vec<String>,
        pieces: &mut Pieces,
    ) -> Result<(Reports, bool), ZeError> {
        let s = streams.streamer(self.index);
        let data = s.read_at_most(&mut self.raw, most)?;
        let now = monotonic_ns().max(0) as u64;
        let mut out = Reports::begin(data.dropped, pieces);
        if data.bytes == 0 {
            return Ok((out, false));
        }
        calculate(&self.group, &self.raw[..data.bytes], &mut self.values, &mut self.counts)?;
        let counts = &self.counts;
        let n = self.width;
        let first = counts.first().copied().unwrap_or(0) as usize;
        if n == 0 || !first.is_multiple_of(n) {
            return Ok((out, false));
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
        let (series, row_len) = (self.series, self.series * self.sets);
        let per_s = per_second(self.period_ns);
        pieces.reserve(reports, row_len);
        // The reports' times are the first set's time values (the first set holds them all).
        let first_set = starts.first().map_or(0, |&(start, _)| start);
        for r in 0..reports {
            let device_ts = self.time_col.and_then(|c| self.values[first_set + r * n + c].as_u64());
            let back = (reports - 1 - r) as u64 * self.period_ns;
            let ts = self.clock.map(device_ts, now).unwrap_or(now.saturating_sub(back) as i64);
            // Each set's series, written straight into the batch (NaN for a set that ended).
            let fill = |row: &mut [f64]| {
                for (&(start, held), part) in starts.iter().zip(row.chunks_exact_mut(series)) {
                    if r >= held {
                        part.fill(f64::NAN);
                        continue;
                    }
                    let vals = &self.values[start + r * n..start + (r + 1) * n];
                    for (j, (&(c, conv), x)) in self.series_cols.iter().zip(part).enumerate() {
                        let v = vals[c].as_f64().unwrap_or(f64::NAN);
                        let odd;
                        (*x, odd) = conv.apply(v, per_s);
                        if odd && !self.told_out_of_range[j] {
                            self.told_out_of_range[j] = true;
                            notices.push(format!(
                                "metric group {}: {} reported {v} busy in a report of {}, which is not a share of \
                                 its time; its busy share is drawn clamped to 0..100 %",
                                self.group.info.name,
                                self.names[j],
                                period_text(self.period_ns as u32),
                            ));
                        }
                    }
                }
            };
            out.push_with(pieces, ts, row_len, fill);
        }
        self.starts = starts;
        Ok((out, reports >= most as usize || data.more))
    }
}
