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
//! (`plan.rs`: counts become the running total of the reports' counts, busy time that of their
//! busy time, ratios and states stay as they are, the timestamp is the time).
//! `ZE_RESULT_WARNING_DROPPED_DATA` is counted and starts a new piece of the plot (a gap), never
//! ends the run.

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
    /// Per plotted column of each value set (set after set): the running total of a count or
    /// busy time column (`Conv::Count`, `Conv::Busy`) since the run began; unused for the others.
    totals: Vec<f64>,
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
    /// The converted rows of the last read and their times (kept from read to read, as `counts`).
    rows: Vec<f64>,
    times: Vec<i64>,
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
            totals: vec![0.0; series * plan.sets],
            names: plan.names,
            period_ns: period.max(1) as u64,
            series,
            sets: plan.sets,
            raw: Vec::new(),
            values: Vec::new(),
            counts: Vec::new(),
            starts: Vec::new(),
            rows: Vec::new(),
            times: Vec::new(),
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
        // The samples' rows, converted column by column (one conversion chosen per column, not
        // per value), NaN where a set ended.
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        rows.resize(reports * row_len, f64::NAN);
        for (k, &(start, held)) in starts.iter().enumerate() {
            for (j, &(c, conv)) in self.series_cols.iter().enumerate() {
                let column = self.values.get(start + c..).unwrap_or(&[]).iter().step_by(n).take(held.min(reports));
                let out = rows.get_mut(k * series + j..).unwrap_or(&mut []).iter_mut().step_by(row_len);
                let total = &mut self.totals[k * series + j];
                let Some(v) = convert(column, conv, per_s, out, total) else { continue };
                if !self.told_out_of_range[j] {
                    self.told_out_of_range[j] = true;
                    let (group, name, period) =
                        (&self.group.info.name, &self.names[j], period_text(self.period_ns as u32));
                    notices.push(match conv {
                        Conv::Count => format!(
                            "metric group {group}: {name} reported a count of {v} in a report of {period}, below \
                             zero: that report counts nothing (a gap in its rate), the running total goes on"
                        ),
                        _ => format!(
                            "metric group {group}: {name} reported {v} busy in a report of {period}, which is not \
                             busy time of the report; it counts as busy for none (below 0) or all of the report, its \
                             busy share drawn within 0..100 %"
                        ),
                    });
                }
            }
        }
        pieces.reserve(reports, row_len);
        // The reports' times are the first set's time values (the first set holds them all).
        let first_set = starts.first().map_or(0, |&(start, _)| start);
        let mut times = std::mem::take(&mut self.times);
        times.clear();
        times.extend((0..reports).map(|r| {
            let device_ts = self.time_col.and_then(|c| self.values[first_set + r * n + c].as_u64());
            let back = (reports - 1 - r) as u64 * self.period_ns;
            self.clock.map(device_ts, now).unwrap_or(now.saturating_sub(back) as i64)
        }));
        let newest =
            self.time_col.zip(reports.checked_sub(1)).and_then(|(c, r)| self.values.get(first_set + r * n + c));
        if let Some(newest) = newest.and_then(|v| v.as_u64()) {
            self.clock.placed_up_to(newest);
        }
        out.push_rows(pieces, &times, &rows, row_len);
        (self.rows, self.times) = (rows, times);
        self.starts = starts;
        Ok((out, reports >= most as usize || data.more))
    }
}

/// Writes the plotted values of one column (`column`, a metric's typed values report after
/// report) into `out` as `conv` says; the first value that was out of what it can be, if one was
/// ([`Conv::apply`]). A count and busy time add each report's to `total` and write the total. A
/// value of an unknown type is NaN (a count or busy time: the report's total is NaN, and the
/// running total goes on without it), as is a count below zero.
fn convert<'a>(
    column: impl Iterator<Item = &'a zet_typed_value_t>,
    conv: Conv,
    per_s: f64,
    out: impl Iterator<Item = &'a mut f64>,
    total: &mut f64,
) -> Option<f64> {
    let values = column.map(|v| v.as_f64().unwrap_or(f64::NAN));
    match conv {
        Conv::AsIs => out.zip(values).for_each(|(x, v)| *x = v),
        Conv::Count | Conv::Busy { .. } | Conv::BusyOf { .. } => {
            let (mut odd, mut sum) = (None, *total);
            for (x, v) in out.zip(values) {
                let (added, bad) = conv.apply(v, per_s);
                if bad && odd.is_none() {
                    odd = Some(v);
                }
                if added.is_nan() {
                    *x = added;
                    continue;
                }
                sum += added;
                *x = sum;
            }
            *total = sum;
            return odd;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u64s(v: &[u64]) -> Vec<zet_typed_value_t> {
        v.iter().map(|&x| zet_typed_value_t { r#type: ZET_VALUE_TYPE_UINT64, value: zet_value_t { ui64: x } }).collect()
    }

    /// Converts every `stride`-th value of `values` from `at` into every second slot of a row
    /// buffer (two series a row), as `read_part` does for one column, busy time from `total`.
    fn column(
        values: &[zet_typed_value_t],
        at: usize,
        stride: usize,
        conv: Conv,
        total: &mut f64,
    ) -> (Vec<f64>, Option<f64>) {
        let mut rows = vec![f64::NAN; values.len() / stride * 2];
        let odd = convert(values[at..].iter().step_by(stride), conv, 100_000.0, rows.iter_mut().step_by(2), total);
        (rows.iter().step_by(2).copied().collect(), odd)
    }

    #[test]
    fn a_busy_column_is_the_running_total_of_each_reports_clamped_busy_time_and_names_its_first_impossible_one() {
        // Two metrics a report: busy ns of a 10 µs report, and a count.
        let raw = u64s(&[398, 7, 10_000, 8, 10_400, 9, 12_000, 10, 10_600, 11]);
        let busy_time = Conv::Busy { unit_s: 1e-9 }.at(100_000.0);
        let mut total = 1_000.0;
        let (busy, odd) = column(&raw, 0, 2, busy_time, &mut total);
        let mut by_value = vec![];
        let mut sum = 1_000.0;
        for x in [398.0, 10_000.0, 10_400.0, 12_000.0, 10_600.0] {
            sum += busy_time.apply(x, 100_000.0).0;
            by_value.push(sum);
        }
        assert_eq!(busy, by_value, "what apply gives, added up from the total before the read");
        assert_eq!(busy[..3], [1_398.0, 11_398.0, 21_398.0], "jitter within the slack counts as the whole report");
        assert_eq!(total, 41_398.0, "the total goes on at the next read");
        assert_eq!(odd, Some(12_000.0), "the first busy time past the slack, not a later one");
        let mut counted = 100.0;
        let (counts, odd) = column(&raw, 1, 2, Conv::Count, &mut counted);
        assert_eq!((counts, odd), (vec![107.0, 115.0, 124.0, 134.0, 145.0], None), "a count's running total");
        assert_eq!(counted, 145.0, "the count's total goes on at the next read");
    }

    #[test]
    fn a_busy_time_of_an_unknown_type_is_nan_and_the_total_goes_on_without_it() {
        let mut raw = u64s(&[5, 6, 7]);
        raw[1].r#type = 0x7fff_0000;
        let mut rows = [-1.0; 3];
        let mut total = 0.0;
        convert(raw.iter(), Conv::BusyOf { units: 10.0 }, 1.0, rows.iter_mut(), &mut total);
        assert_eq!((rows[0], rows[2], total), (5.0, 12.0, 12.0));
        assert!(rows[1].is_nan());
    }

    #[test]
    fn a_count_below_zero_or_of_an_unknown_type_is_none_and_the_total_goes_on_without_it() {
        let mut raw: Vec<zet_typed_value_t> = [4.0, -2.0, 6.0, 1.0]
            .iter()
            .map(|&x| zet_typed_value_t { r#type: ZET_VALUE_TYPE_FLOAT64, value: zet_value_t { fp64: x } })
            .collect();
        raw[3].r#type = 0x7fff_0000;
        let mut rows = [-1.0; 4];
        let mut total = 10.0;
        let odd = convert(raw.iter(), Conv::Count, 1.0, rows.iter_mut(), &mut total);
        assert_eq!((rows[0], rows[2], total), (14.0, 20.0, 20.0));
        assert!(rows[1].is_nan() && rows[3].is_nan(), "{rows:?}");
        assert_eq!(odd, Some(-2.0), "the count below zero is told");
    }

    #[test]
    fn a_value_of_an_unknown_type_is_nan_and_a_short_column_leaves_the_rest() {
        let mut raw = u64s(&[5, 6, 7]);
        raw[1].r#type = 0x7fff_0000;
        let mut rows = [-1.0; 4];
        let odd = convert(raw.iter(), Conv::AsIs, 1.0, rows.iter_mut(), &mut 0.0);
        assert_eq!(odd, None);
        assert_eq!(rows[0], 5.0);
        assert!(rows[1].is_nan());
        assert_eq!(rows[2..], [7.0, -1.0], "a set that ended keeps what the rows were given (NaN in a read)");
    }
}
