//! The metric tracer's mechanics, for its read path (`read/tracer.rs`): the tracer and its
//! decoder, for tracer-based groups (sampling type EXP_TRACER_BASED) whose exported memory the
//! workload writes events into, in the order Intel's conformance suite uses the extension. On the
//! sampler thread, like everything else: the exported memory's `fd`/`size` are queried and
//! imported BEFORE the groups are activated, then per device one tracer on its tracer-based
//! groups, its decoder and the decodable metrics, and the tracer enabled. At each tick the
//! tracer's data is read (no size query: the buffer grows when the driver says it is too small)
//! and decoded; each entry becomes a sample at its own time (the device timestamp mapped onto the
//! host clock as streamer reports are, `report_time.rs`), its metric's series set to its value
//! and the others keeping theirs (an event's value holds until the next: states are drawn as
//! steps). Entries of one time share a sample. At a stop the tracer is read one last time before
//! the teardown disables it, so the events written up to the stop are kept.
//!
//! [`Tracers`] owns the tracers and decoders of a run; the teardown releases it with the other
//! paths, right after the streamers (disable every tracer → destroy every decoder → destroy every
//! tracer), before any import is freed (`dmabuf::Buffers::release` takes the paths' proof) or
//! any group deactivated.

use zescope_ze::tracer::{Decoder, Entry, Tracer, TracerError};
use zescope_ze::{Context, Device, Metric, MetricGroup, ZeError};

use super::host::monotonic_ns;
use super::protocol::SeriesInfo;
use super::report_time::ReportClock;
use super::run::Pieces;
use super::streamer::StreamRead;
use crate::layout::kinds;

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
        for o in &mut open {
            if o.enabled
                && let Some(t) = &o.tracer
                && let Err(e) = t.disable()
            {
                errors.push(format!("disabling a metric tracer: {e}"));
            }
        }
        for o in &mut open {
            if let Some(d) = o.decoder.take()
                && let Err(e) = d.destroy()
            {
                errors.push(format!("destroying a metric decoder: {e}"));
            }
        }
        for o in &mut open {
            if let Some(t) = o.tracer.take()
                && let Err(e) = t.destroy()
            {
                errors.push(format!("destroying a metric tracer: {e}"));
            }
        }
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

    fn parts(&mut self, i: usize) -> Option<(&Tracer, &mut Decoder)> {
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

/// The series of a tracer's decodable metrics (`wanted` by name; empty: all), and for each
/// decodable metric its series' column.
pub(crate) fn plan(decodable: &[Metric], wanted: &[String]) -> (Vec<SeriesInfo>, Vec<Option<usize>>) {
    let mut series = Vec::new();
    let columns = decodable
        .iter()
        .map(|m| {
            if !wanted.is_empty() && !wanted.contains(&m.info.name) {
                return None;
            }
            let (kind, wrap) = kinds::tracer_kind(m.info.metric_type, &m.info.units, m.info.value_type);
            series.push(SeriesInfo {
                name: m.info.name.clone(),
                description: m.info.description.clone(),
                unit: kinds::plain_unit(&m.info.units),
                kind,
                wrap,
            });
            Some(series.len() - 1)
        })
        .collect();
    (series, columns)
}

/// Reads one device's tracer at each tick and turns its entries into samples.
pub(crate) struct TracerReader {
    index: usize,
    device: Device,
    /// Per decodable metric, its column in a sample (None: not plotted).
    columns: Vec<Option<usize>>,
    /// Each series' latest value (NaN before its first event).
    row: Vec<f64>,
    raw: Vec<u8>,
    entries: Vec<Entry>,
    clock: ReportClock,
}

impl TracerReader {
    /// A reader of tracer `index`, its entries going to `columns` (see [`plan`]).
    pub(crate) fn new(index: usize, device: Device, columns: Vec<Option<usize>>) -> TracerReader {
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
    ) -> Result<StreamRead, ZeError> {
        let Some((tracer, decoder)) = tracers.parts(self.index) else { return Ok(StreamRead::default()) };
        let data = tracer.read(&mut self.raw).map_err(|e| e.ze())?;
        let now = monotonic_ns().max(0) as u64;
        let mut out = StreamRead { dropped: data.dropped, ..Default::default() };
        if data.dropped {
            pieces.break_batch();
        }
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
                    push(pieces, t, &self.row, &mut out);
                }
                at = Some(ts);
            }
            self.row[col] = e.value;
        }
        if let Some(t) = at {
            push(pieces, t, &self.row, &mut out);
        }
        Ok(out)
    }
}

fn push(pieces: &mut Pieces, ts: i64, row: &[f64], out: &mut StreamRead) {
    if pieces.push(ts, row) {
        out.reports += 1;
    } else {
        out.out_of_order += 1;
    }
}
