//! Reading a device's tracer, for the tracer's way (`mod.rs`): at each tick the tracer's data is
//! read (no size query: the buffer grows when the driver says it is too small) and decoded; each
//! entry becomes a sample at its own time (the device timestamp mapped onto the host clock as
//! streamer reports are, `read/report_time.rs`), its metric's series set to its value and the
//! others keeping theirs (an event's value holds until the next: states are drawn as steps).
//! An event that carries only its time (EVENT_EXP_TIMESTAMP, whose value means nothing) is kept
//! as the number of such events since the run started, in "events": a state that steps up by one
//! at each, rather than a value the driver never meant. It counts the events read: where the
//! driver dropped events (its read said so, and the next sample is marked as after a gap), the
//! count goes on from what was read, so it is then lower than the events the workload wrote.
//! Entries of one time share a sample. At a stop the tracer is read one last time before the
//! teardown disables it, so the events written up to the stop are kept.

use level_zero_sys::ZET_METRIC_TYPE_EVENT_EXP_TIMESTAMP;
use zescope_ze::tracer::Entry;
use zescope_ze::{Device, Metric, ZeError};

use super::open::Tracers;
use crate::host::monotonic_ns;
use crate::layout::kinds;
use crate::protocol::SeriesInfo;
use crate::read::batch::{Pieces, Reports};
use crate::read::report_time::ReportClock;

/// Where a decodable metric's entries go: its series' column, and whether the column counts
/// the entries (a timestamp-only event) rather than holding their values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Column {
    pub at: usize,
    pub counts: bool,
}

/// The series of a tracer's decodable metrics (`wanted` by name; empty: all), and for each
/// decodable metric its series' column.
pub(crate) fn plan(decodable: &[Metric], wanted: &[String]) -> (Vec<SeriesInfo>, Vec<Option<Column>>) {
    let mut series = Vec::new();
    let columns = decodable
        .iter()
        .map(|m| {
            if !wanted.is_empty() && !wanted.contains(&m.info.name) {
                return None;
            }
            let (kind, wrap) = kinds::tracer_kind(m.info.metric_type, &m.info.units, m.info.value_type);
            let counts = m.info.metric_type == ZET_METRIC_TYPE_EVENT_EXP_TIMESTAMP;
            series.push(SeriesInfo {
                name: m.info.name.clone(),
                description: m.info.description.clone(),
                unit: if counts { "events".to_owned() } else { kinds::plain_unit(&m.info.units) },
                kind,
                wrap,
            });
            Some(Column { at: series.len() - 1, counts })
        })
        .collect();
    (series, columns)
}

/// Reads one device's tracer at each tick and turns its entries into samples.
pub(crate) struct TracerReader {
    index: usize,
    device: Device,
    /// Per decodable metric, its column in a sample (None: not plotted).
    columns: Vec<Option<Column>>,
    /// Each series' latest value (NaN before its first event).
    row: Vec<f64>,
    raw: Vec<u8>,
    entries: Vec<Entry>,
    clock: ReportClock,
}

impl TracerReader {
    /// A reader of tracer `index`, its entries going to `columns` (see [`plan`]).
    pub(crate) fn new(index: usize, device: Device, columns: Vec<Option<Column>>) -> TracerReader {
        let series = columns.iter().flatten().count();
        // Entry timestamps are device time in ns of the global timer, as a streamer report's
        // timestamp metric.
        let clock = ReportClock::new(device.timer(), "ns");
        TracerReader {
            index,
            device,
            columns,
            row: vec![f64::NAN; series],
            raw: Vec::new(),
            entries: Vec::new(),
            clock,
        }
    }

    /// Reads what the tracer collected, decodes it and appends one sample per entry time to
    /// `pieces` (after a gap when the driver dropped events).
    pub(crate) fn read(
        &mut self,
        tracers: &mut Tracers,
        notices: &mut Vec<String>,
        pieces: &mut Pieces,
    ) -> Result<Reports, ZeError> {
        let Some((tracer, decoder)) = tracers.parts(self.index) else { return Ok(Reports::default()) };
        let data = tracer.read(&mut self.raw).map_err(|e| e.ze())?;
        let now = monotonic_ns().max(0) as u64;
        let mut out = Reports::begin(data.dropped, pieces);
        if data.bytes == 0 {
            return Ok(out);
        }
        decoder.decode(&mut self.raw[..data.bytes], &mut self.entries).map_err(|e| e.ze())?;
        // Sets come one after another (one per sub-device): one timeline.
        self.entries.sort_by_key(|e| e.timestamp);
        self.clock.refresh(&self.device, now, notices);
        let mut at: Option<i64> = None;
        for e in &self.entries {
            let Some(Some(col)) = self.columns.get(e.metric as usize).copied() else { continue };
            let ts = self.clock.map(Some(e.timestamp), now).unwrap_or(now as i64);
            if at != Some(ts) {
                if let Some(t) = at {
                    out.push(pieces, t, &self.row);
                }
                at = Some(ts);
            }
            // A count starts at 0 (NaN before its first event: `max` takes the 0).
            self.row[col.at] = if col.counts { self.row[col.at].max(0.0) + 1.0 } else { e.value };
        }
        if let Some(t) = at {
            out.push(pieces, t, &self.row);
        }
        if let Some(newest) = self.entries.last() {
            self.clock.placed_up_to(newest.timestamp);
        }
        Ok(out)
    }
}
