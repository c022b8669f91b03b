//! A recording as a Perfetto trace (`zescope export --perfetto`, File → Export → Perfetto trace…,
//! `zescope record --perfetto`), written through `zescope-perfetto` as it goes: nothing of the
//! trace is held, so a session of any length exports in the memory of one packet.
//!
//! What the trace holds (`docs/architecture.md`, "Perfetto traces"):
//! - a track per device (its description: PCI address, UUID, driver version), under it a track
//!   per metric group, under that one counter track per series named `device/group/metric`,
//!   its unit in the counter descriptor. Values are the stored ones, as in CSV: a running total
//!   stays a running total (Perfetto's counter tracks show it as a rate on request);
//! - throttle reasons (a telemetry series whose description names the bits of its mask) as
//!   slices on a track beside the group's counters, one per run of one non-zero mask, named by
//!   the reasons, lasting until the next sample that changed it;
//! - markers under a `markers` track: instants on `instants`, ranges as slices on `ranges`
//!   tracks (a range goes to the first whose previous range ended before it began, so slices on
//!   a track never overlap); a range still open has a begin and no end;
//! - the session's metadata as the arguments of an instant `zescope session` on a `zescope`
//!   track at the first time: zescope's version, host, source, wall-clock start, and per device
//!   its name, kind, PCI address, UUID, driver version and whether it is simulated;
//! - every timestamp on `CLOCK_MONOTONIC`, the samples' clock, with a clock snapshot (monotonic,
//!   boot time and wall-clock time read together when recording started) so the trace merges
//!   with other traces of the same machine and boot.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

use super::{Format, Input, Scope};
use zescope_perfetto::{Clock, CounterSet, TraceWriter, TrackId, Value};
use zescope_store::{Store, StreamId};

use crate::session::{
    ClockRecord, DeviceRecord, Marker, Recorded, RunHistory, SeriesMeta, Session, SourceRecord, SpanRecord, StreamMeta,
};

/// What the trace says of the recording: its metadata and clocks.
#[derive(Clone, Debug, Default)]
pub struct TraceHead {
    /// When, where and by which zescope it was recorded (with its clocks, if known).
    pub recorded: Recorded,
    /// The source the samples came from.
    pub source: SourceRecord,
    /// The devices sampled.
    pub devices: Vec<DeviceRecord>,
    /// The time of the metadata instant (ns, `CLOCK_MONOTONIC`): the first sample's, or the
    /// recording's start.
    pub at_ns: i64,
}

/// A Perfetto trace being written: [`PerfettoTrace::stream`] declares a stream's tracks,
/// [`PerfettoTrace::row`] writes one of its samples, the marker calls write markers, and
/// [`PerfettoTrace::finish`] ends the throttle bands still open.
pub struct PerfettoTrace<W: Write> {
    w: TraceWriter<W>,
    head: TraceHead,
    devices: HashMap<String, TrackId>,
    groups: HashMap<(String, String), TrackId>,
    streams: Vec<StreamOut>,
    markers: Option<MarkerTracks>,
}

/// One stream's counter set and its throttle series.
struct StreamOut {
    set: CounterSet,
    throttles: Vec<Throttle>,
    last_ns: Option<i64>,
}

/// A throttle reasons series: its column, reason names, track and the band open now.
struct Throttle {
    column: usize,
    names: Vec<(u32, String)>,
    track: TrackId,
    /// The mask and start of the band being drawn.
    open: Option<(u32, i64)>,
}

/// The markers' tracks.
struct MarkerTracks {
    parent: TrackId,
    instants: Option<TrackId>,
    /// Range tracks, each with when its last range ended (`None`: one is open on it).
    lanes: Vec<(TrackId, Option<i64>)>,
}

/// A range begun with [`PerfettoTrace::range_begin`]: its track and start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenRange {
    lane: usize,
    t_ns: i64,
}

/// A time as the trace takes it; a negative one (before the clock's zero) is refused.
fn ns(t: i64) -> io::Result<u64> {
    u64::try_from(t).map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidData, format!("time {t} ns is before the monotonic clock's zero"))
    })
}

/// Clamps a clock reading into the trace's unsigned range.
fn clamp(t: i64) -> u64 {
    t.max(0) as u64
}

/// The mask a throttle series' value holds (0 where it is not a positive number).
fn mask(v: f64) -> u32 {
    if v.is_finite() && v > 0.0 { v.min(u32::MAX as f64) as u32 } else { 0 }
}

/// The names of the bits set in `mask`, joined; "throttled" when no bit has a name.
fn reasons(mask: u32, names: &[(u32, String)]) -> String {
    let set: Vec<&str> = names.iter().filter(|(b, _)| mask & (1 << b) != 0).map(|(_, n)| n.as_str()).collect();
    if set.is_empty() { "throttled".to_owned() } else { set.join(", ") }
}

impl<W: Write> PerfettoTrace<W> {
    /// Starts a trace on `out`: the clock snapshot, the metadata and the device tracks. Without
    /// recorded clocks the snapshot is estimated from the recording's wall-clock start at
    /// `head.at_ns` (no boot time: the trace's timeline is then `CLOCK_MONOTONIC`).
    pub fn new(out: W, head: TraceHead) -> io::Result<PerfettoTrace<W>> {
        let mut w = TraceWriter::new(out);
        match head.recorded.clocks {
            Some(ClockRecord { monotonic_ns, boottime_ns, realtime_ns }) => w.clock_snapshot(
                &[
                    (Clock::Monotonic, clamp(monotonic_ns)),
                    (Clock::Boottime, clamp(boottime_ns)),
                    (Clock::Realtime, clamp(realtime_ns)),
                ],
                None,
            )?,
            None => {
                let mut clocks = vec![(Clock::Monotonic, clamp(head.at_ns))];
                if head.recorded.started_unix_ms > 0 {
                    clocks.push((Clock::Realtime, clamp(head.recorded.started_unix_ms.saturating_mul(1_000_000))));
                }
                w.clock_snapshot(&clocks, Some(Clock::Monotonic))?
            }
        }
        let mut t = PerfettoTrace {
            w,
            head,
            devices: HashMap::new(),
            groups: HashMap::new(),
            streams: Vec::new(),
            markers: None,
        };
        t.metadata()?;
        for d in t.head.devices.clone() {
            t.device(&d.name)?;
        }
        Ok(t)
    }

    /// The `zescope session` instant and its arguments.
    fn metadata(&mut self) -> io::Result<()> {
        let h = &self.head;
        let text = |s: &str| Value::Text(s.to_owned());
        let mut args = vec![
            ("zescope_version".to_owned(), text(&h.recorded.zescope_version)),
            ("host".to_owned(), text(&h.recorded.host)),
            ("started_unix_ms".to_owned(), Value::Int(h.recorded.started_unix_ms)),
            ("source".to_owned(), text(&h.source.description)),
            ("simulated".to_owned(), Value::Bool(h.source.simulated)),
        ];
        for (i, d) in h.devices.iter().enumerate() {
            let mut entries = vec![
                ("name".to_owned(), text(&d.name)),
                ("kind".to_owned(), text(&d.kind)),
                ("uuid".to_owned(), text(&d.uuid)),
                ("driver_version".to_owned(), Value::Int(i64::from(d.driver_version))),
                ("vendor_id".to_owned(), Value::Int(i64::from(d.vendor_id))),
                ("device_id".to_owned(), Value::Int(i64::from(d.device_id))),
                ("simulated".to_owned(), Value::Bool(d.simulated)),
            ];
            if let Some(p) = &d.pci_bdf {
                entries.push(("pci_bdf".to_owned(), text(p)));
            }
            args.push((format!("device{i}"), Value::Dict(entries)));
        }
        let at = clamp(h.at_ns);
        let track = self.w.track(None, "zescope", "")?;
        self.w.instant(track, at, "zescope session", &args)
    }

    /// The track of device `name`, made on first use.
    fn device(&mut self, name: &str) -> io::Result<TrackId> {
        if let Some(&t) = self.devices.get(name) {
            return Ok(t);
        }
        let description = match self.head.devices.iter().find(|d| d.name == name) {
            Some(d) => {
                let mut parts = Vec::new();
                if let Some(p) = &d.pci_bdf {
                    parts.push(format!("PCI {p}"));
                }
                if !d.uuid.is_empty() {
                    parts.push(format!("UUID {}", d.uuid));
                }
                if d.driver_version != 0 {
                    parts.push(format!("driver {}", d.driver_version));
                }
                if d.simulated {
                    parts.push("simulated".to_owned());
                }
                parts.join(", ")
            }
            None => String::new(),
        };
        let t = self.w.track(None, name, &description)?;
        self.devices.insert(name.to_owned(), t);
        Ok(t)
    }

    /// Declares a stream (one metric group of one device in one run): its counter tracks, and
    /// a throttle track for each throttle series; returns its number for [`PerfettoTrace::row`].
    /// A group of the same device seen again (a later run) shares its group track. A stream of no
    /// series is refused.
    pub fn stream(&mut self, device: &str, group: &str, series: &[SeriesMeta]) -> io::Result<usize> {
        let dev = self.device(device)?;
        let key = (device.to_owned(), group.to_owned());
        let group_track = match self.groups.get(&key) {
            Some(&t) => t,
            None => {
                let t = self.w.track(Some(dev), group, "")?;
                self.groups.insert(key, t);
                t
            }
        };
        let mut tracks = Vec::with_capacity(series.len());
        let mut throttles = Vec::new();
        for (column, s) in series.iter().enumerate() {
            let name = format!("{device}/{group}/{}", s.metric);
            tracks.push(self.w.counter_track(Some(group_track), &name, &s.unit, &s.description)?);
            let names = zescope_sampler::telemetry::throttle_names(&s.description);
            if !names.is_empty() {
                let track = self.w.track(Some(group_track), &format!("{name} (reasons)"), "")?;
                throttles.push(Throttle { column, names, track, open: None });
            }
        }
        let set = self.w.counter_set(&tracks)?;
        self.streams.push(StreamOut { set, throttles, last_ns: None });
        Ok(self.streams.len() - 1)
    }

    /// One sample of stream `stream` at `t_ns`: a value per series. Samples of a stream come in
    /// time order.
    pub fn row(&mut self, stream: usize, t_ns: i64, values: &[f64]) -> io::Result<()> {
        let Some(s) = self.streams.get_mut(stream) else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("no stream {stream} was declared")));
        };
        let t = ns(t_ns)?;
        self.w.counters(&s.set, t, values)?;
        s.last_ns = Some(t_ns);
        for th in &mut s.throttles {
            let m = mask(values.get(th.column).copied().unwrap_or(0.0));
            let current = th.open.map_or(0, |(m, _)| m);
            if m == current {
                continue;
            }
            if let Some((_, start)) = th.open.take() {
                // Ends where the mask changed; 1 ns earlier when another band begins there.
                let end = if m != 0 { t_ns - 1 } else { t_ns };
                self.w.slice_end(th.track, ns(end.max(start))?)?;
            }
            if m != 0 {
                self.w.slice_begin(
                    th.track,
                    t,
                    &reasons(m, &th.names),
                    &[("mask".to_owned(), Value::Int(m.into()))],
                )?;
                th.open = Some((m, t_ns));
            }
        }
        Ok(())
    }

    fn marker_tracks(&mut self) -> io::Result<&mut MarkerTracks> {
        if self.markers.is_none() {
            let parent = self.w.track(None, "markers", "")?;
            self.markers = Some(MarkerTracks { parent, instants: None, lanes: Vec::new() });
        }
        Ok(self.markers.as_mut().expect("made above"))
    }

    /// An instant marker.
    pub fn instant(&mut self, t_ns: i64, name: &str) -> io::Result<()> {
        let t = ns(t_ns)?;
        let m = self.marker_tracks()?;
        let track = match m.instants {
            Some(t) => t,
            None => {
                let parent = m.parent;
                let track = self.w.track(Some(parent), "instants", "")?;
                self.markers.as_mut().expect("made above").instants = Some(track);
                track
            }
        };
        self.w.instant(track, t, name, &[])
    }

    /// The start of a marked range; end it with [`PerfettoTrace::range_end`].
    pub fn range_begin(&mut self, t_ns: i64, name: &str) -> io::Result<OpenRange> {
        let t = ns(t_ns)?;
        let m = self.marker_tracks()?;
        let free = m.lanes.iter().position(|(_, end)| end.is_some_and(|e| e < t_ns));
        let lane = match free {
            Some(l) => l,
            None => {
                let parent = m.parent;
                let track = self.w.track(Some(parent), "ranges", "")?;
                let m = self.markers.as_mut().expect("made above");
                m.lanes.push((track, None));
                m.lanes.len() - 1
            }
        };
        let m = self.markers.as_mut().expect("made above");
        m.lanes[lane].1 = None;
        let track = m.lanes[lane].0;
        self.w.slice_begin(track, t, name, &[])?;
        Ok(OpenRange { lane, t_ns })
    }

    /// The end of a range at `t_ns` (its start, if earlier).
    pub fn range_end(&mut self, range: OpenRange, t_ns: i64) -> io::Result<()> {
        let end = t_ns.max(range.t_ns);
        let Some((track, state)) = self.markers.as_mut().and_then(|m| m.lanes.get_mut(range.lane)) else {
            return Ok(());
        };
        *state = Some(end);
        let track = *track;
        self.w.slice_end(track, ns(end)?)
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.w.bytes_written()
    }

    /// Flushes what was written to the writer underneath.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// Ends the throttle bands still open at their stream's last sample and returns the writer,
    /// flushed.
    pub fn finish(mut self) -> io::Result<W> {
        for s in &mut self.streams {
            for th in &mut s.throttles {
                if let (Some((_, start)), Some(last)) = (th.open.take(), s.last_ns) {
                    self.w.slice_end(th.track, ns(last.max(start))?)?;
                }
            }
        }
        self.w.into_inner()
    }
}

/// What [`perfetto`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerfettoSummary {
    /// Samples (rows) written, over all streams.
    pub rows: u64,
    /// Values written (rows × series).
    pub values: u64,
    /// Markers written.
    pub markers: u64,
    /// Bytes of the file.
    pub bytes: u64,
}

impl TraceHead {
    /// The head of a saved session restored into `store`.
    pub fn of_session(session: &Session, store: &Store) -> TraceHead {
        TraceHead {
            recorded: session.recorded.clone(),
            source: session.source.clone(),
            devices: session.devices.clone(),
            at_ns: session.origin_ns.or_else(|| store.total_time_range().map(|r| r.0)).unwrap_or(0),
        }
    }

    /// The head of what the window holds: its run history over `store`.
    pub fn of_history(history: &RunHistory, store: &Store) -> TraceHead {
        TraceHead {
            recorded: history.recorded(),
            source: history.source.clone(),
            devices: history.devices.clone(),
            at_ns: store.origin_ns().or_else(|| store.total_time_range().map(|r| r.0)).unwrap_or(0),
        }
    }
}

/// Writes `session` (restored into `store`, its streams as `streams`) to `path` as a Perfetto
/// trace: see [`perfetto_of`].
pub fn perfetto(
    session: &Session,
    store: &Store,
    streams: &[StreamId],
    path: &Path,
) -> Result<PerfettoSummary, String> {
    let metas: Vec<(StreamId, &StreamMeta)> =
        streams.iter().copied().zip(session.streams.iter().map(|s| &s.meta)).collect();
    perfetto_of(TraceHead::of_session(session, store), &metas, &session.markers, store, path)
}

/// Writes the store streams `streams` (each with what it is), `markers` and `head` to `path` as a
/// Perfetto trace, streamed and atomically (a temporary file renamed into place): every stream's
/// full-resolution samples (history the memory cap coarsened is not in the trace). A store
/// without samples is refused before anything is written.
pub fn perfetto_of(
    head: TraceHead,
    streams: &[(StreamId, &StreamMeta)],
    markers: &[Marker],
    store: &Store,
    path: &Path,
) -> Result<PerfettoSummary, String> {
    if store.total_time_range().is_none() {
        return Err("there are no samples to export".into());
    }
    let mut summary = PerfettoSummary::default();
    crate::session::write_atomic(path, |file| {
        let io = |e: io::Error| crate::session::SessionError::io(path, "cannot write", e);
        let out = io::BufWriter::with_capacity(1 << 20, file);
        let mut t = PerfettoTrace::new(out, head).map_err(io)?;
        for &(id, meta) in streams {
            if meta.series.is_empty() {
                continue;
            }
            let k = t.stream(&meta.device, &meta.group, &meta.series).map_err(io)?;
            let mut failed = None;
            store.for_each_raw_row(id, |time, row| {
                if failed.is_none() {
                    match t.row(k, time, row) {
                        Ok(()) => {
                            summary.rows += 1;
                            summary.values += row.len() as u64;
                        }
                        Err(e) => failed = Some(e),
                    }
                }
            });
            if let Some(e) = failed {
                return Err(io(e));
            }
        }
        for m in markers {
            match m.span {
                SpanRecord::Instant => t.instant(m.t_ns, &m.label),
                SpanRecord::Range { end_ns } => {
                    let r = t.range_begin(m.t_ns, &m.label).map_err(io)?;
                    t.range_end(r, end_ns)
                }
                SpanRecord::Open => t.range_begin(m.t_ns, &m.label).map(|_| ()),
            }
            .map_err(io)?;
            summary.markers += 1;
        }
        let out = t.finish().map_err(io)?;
        out.into_inner().map_err(|e| io(e.into_error())).map(|_| ())
    })
    .map_err(|e| e.to_string())?;
    summary.bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    Ok(summary)
}

/// Every sample, the markers and the metadata as a Perfetto trace (`--perfetto`).
pub struct Perfetto;

impl Format for Perfetto {
    fn key(&self) -> &'static str {
        "perfetto"
    }
    fn value_name(&self) -> &'static str {
        "OUT.pftrace"
    }
    fn help(&self) -> &'static str {
        "Write a Perfetto trace here (open it in ui.perfetto.dev): every sample as counter tracks per device \
         and group, markers and throttle reasons as slices, on CLOCK_MONOTONIC"
    }
    fn extension(&self) -> &'static str {
        "pftrace"
    }
    fn name(&self) -> &'static str {
        "Perfetto trace"
    }
    fn title(&self) -> &'static str {
        "Perfetto trace"
    }
    fn scope(&self) -> Scope {
        Scope::Session
    }
    fn write(&self, input: &Input<'_>, path: &Path, _progress: &dyn Fn(f32)) -> Result<String, String> {
        let w = perfetto(input.session, input.store, input.streams, path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let n = crate::view::text::plural;
        let (rows, values, markers) =
            (n(w.rows, "sample", "samples"), n(w.values, "value", "values"), n(w.markers, "marker", "markers"));
        Ok(format!("{} ({rows}, {values}, {markers})", path.display()))
    }
}
