//! Between the in-memory [`Session`] and the [`SessionFile`] on disk: encoding
//! the data columns (on all cores) and, on the way in, checking every field
//! before anything is allocated for it.
//!
//! The caps below bound what a file can make zescope allocate: counts are
//! checked against them, and the samples a stream claims are checked against
//! the length of the text that is supposed to hold them (every sample costs at
//! least one byte per value and one per timestamp), so a short file cannot
//! claim a huge allocation. A [`Budget`] adds the memory cap: what the streams
//! decode to, summed, with what the input already holds, must stay within it.
//! Every check over a file's items is one pass (sets, not scans of what came
//! before).
//!
//! Version 4 seals every data chunk (raw chunks in the data section, coarse
//! chunks in the RON text) with its CRC-32C (`crc.rs`); decoding checks it
//! first, so a damaged chunk is an error naming it, not other values.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use zescope_sampler::ReadPath;
use zescope_store::par::map_weighted;
use zescope_store::{RawData, SeriesDesc, SeriesKind, StreamData, StreamDesc};

use super::chunks::packed_chunks;
pub(super) use super::chunks::{Chunk, DataSection, SEALED_VERSION, StreamChunks, zeroed};
use super::codec::{self, CHUNK, COARSE_CHUNK};
use super::error::SessionError;
use super::format::*;
use super::{Session, SessionStream};
use super::{crc, packed};

/// Most streams a session may hold.
pub(super) const MAX_STREAMS: usize = 4096;
/// Most series a stream may have.
pub(super) const MAX_SERIES: usize = 4096;
/// Most entries in any metadata list (runs, devices, panes, markers, gaps...
/// gaps are also bounded by the samples).
pub(super) const MAX_ITEMS: usize = 1 << 20;
/// Most values (samples x series) a session may hold: 64 GiB of `f64`s.
pub(super) const MAX_VALUES: u64 = 1 << 33;

/// Shared progress of an encode: samples done of the total, and a cancel flag.
#[derive(Debug, Default)]
pub struct Progress {
    /// Samples encoded so far, summed over streams.
    pub(crate) done: AtomicU64,
    /// Samples to encode in all (at least 1 once encoding started; 0 before).
    pub(crate) total: AtomicU64,
    /// Set to ask the encode to stop: it then fails with `SessionError::Cancelled`.
    pub(crate) cancel: AtomicBool,
}

impl Progress {
    /// `done / total` in 0.0..=1.0; 0.0 before the total is known.
    pub(crate) fn fraction(&self) -> f32 {
        let total = self.total.load(Ordering::Relaxed);
        if total == 0 { 0.0 } else { (self.done.load(Ordering::Relaxed) as f64 / total as f64).min(1.0) as f32 }
    }
}

/// Sizes of the chunks of `samples` samples starting at ordinal `first`.
pub(super) fn chunk_sizes(first: u64, samples: u64) -> impl Iterator<Item = usize> {
    let mut at = first;
    let end = first.saturating_add(samples);
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let next = (at / CHUNK + 1).saturating_mul(CHUNK).min(end);
        let n = (next - at) as usize;
        at = next;
        Some(n)
    })
}

/// One raw chunk of one stream, as a save encodes it.
struct RawChunk<'a> {
    /// Index of the stream in the session.
    stream: usize,
    ts: &'a [i64],
    /// Row-major, `width` values per timestamp.
    values: &'a [f64],
    width: usize,
}

/// Every stream's raw chunks in file order, each weighted by its samples; sets the save's
/// total on `progress`. The one chunk loop of both writers ([`encode`], [`write_chunks`]).
fn raw_chunks<'a>(session: &'a Session, progress: &Progress) -> Vec<(u64, RawChunk<'a>)> {
    let total: u64 = session.streams.iter().map(|s| s.data.raw.timestamps.len() as u64).sum();
    progress.total.store(total.max(1), Ordering::Relaxed);
    let mut jobs = Vec::new();
    for (stream, s) in session.streams.iter().enumerate() {
        let width = s.data.desc.series.len();
        let raw = &s.data.raw;
        let mut at = 0;
        for size in chunk_sizes(raw.first_ordinal, raw.timestamps.len() as u64) {
            let (ts, values) = (&raw.timestamps[at..at + size], &raw.values[at * width..(at + size) * width]);
            jobs.push((size as u64, RawChunk { stream, ts, values, width }));
            at += size;
        }
    }
    jobs
}

/// Encode a session for writing (the data columns on all cores).
pub(super) fn encode(session: &Session, progress: &Progress) -> Result<SessionFile, SessionError> {
    let texts = map_weighted(raw_chunks(session, progress), |c| {
        if progress.cancel.load(Ordering::Relaxed) {
            return (c.stream, None);
        }
        let text = codec::encode_raw(c.ts, c.values, c.width);
        progress.done.fetch_add(c.ts.len() as u64, Ordering::Relaxed);
        (c.stream, Some(text))
    });
    let mut chunks: Vec<Vec<String>> = vec![Vec::new(); session.streams.len()];
    for (k, text) in texts {
        chunks[k].push(text.ok_or(SessionError::Cancelled)?);
    }
    let streams = session.streams.iter().zip(chunks).map(|(s, chunks)| encode_stream(s, chunks, 1)).collect();
    Ok(file_of(session, 1, streams))
}

/// A session's file form for the current version: the metadata, with every raw chunk left to
/// the data section ([`write_chunks`]) and every coarse chunk sealed with its checksum.
pub(super) fn encode_head(session: &Session) -> SessionFile {
    let streams = session.streams.iter().map(|s| encode_stream(s, Vec::new(), CURRENT_VERSION)).collect();
    file_of(session, CURRENT_VERSION, streams)
}

/// Chunks encoded at a time before they are written: bounds what a save holds in memory.
const WRITE_BATCH: usize = 64;

/// Writes the data section of the current version (`packed.rs`): every stream's raw chunks in
/// order, each followed by its CRC-32C, encoded on all cores a batch at a time and written as
/// each batch is done.
pub(super) fn write_chunks(
    session: &Session,
    progress: &Progress,
    w: &mut impl std::io::Write,
) -> Result<(), SessionError> {
    let mut jobs = raw_chunks(session, progress).into_iter().peekable();
    let mut len = Vec::new();
    while jobs.peek().is_some() {
        let batch: Vec<_> = jobs.by_ref().take(WRITE_BATCH).collect();
        let bytes = map_weighted(batch, |c| {
            if progress.cancel.load(Ordering::Relaxed) {
                return None;
            }
            let mut b = Vec::with_capacity(c.ts.len() * (1 + 3 * c.width));
            encode_chunk(c.ts, c.values, c.width, &mut b);
            progress.done.fetch_add(c.ts.len() as u64, Ordering::Relaxed);
            Some(b)
        });
        for b in bytes {
            let b = b.ok_or(SessionError::Cancelled)?;
            len.clear();
            zescope_store::bits::put_varint(&mut len, b.len() as u64);
            w.write_all(&len).and_then(|_| w.write_all(&b)).map_err(|e| SessionError::Encode(e.to_string()))?;
        }
    }
    Ok(())
}

/// One raw chunk as the data section of the current version holds it (after its length): the
/// packed columns (`packed.rs`) and their CRC-32C, appended to `out`. Autosave's chunk files hold
/// the same bytes.
pub(super) fn encode_chunk(ts: &[i64], values: &[f64], width: usize, out: &mut Vec<u8>) {
    let from = out.len();
    packed::encode_chunk(ts, values, width, out);
    crc::seal(out, from);
}

fn file_of(session: &Session, version: u32, streams: Vec<StreamFile>) -> SessionFile {
    SessionFile {
        format: FORMAT_NAME.to_owned(),
        version,
        recorded: session.recorded.clone(),
        source: session.source.clone(),
        devices: session.devices.clone(),
        runs: session.runs.clone(),
        view: session.view.clone(),
        markers: session.markers.clone(),
        origin_ns: session.origin_ns,
        comparison: session.comparison.clone(),
        processes: session.processes.clone(),
        streams,
    }
}

/// A stream's file form around its already encoded raw chunks, its coarse chunks as the format's
/// `version` has them ([`codec::encode_coarse`]).
pub(super) fn encode_stream(s: &SessionStream, chunks: Vec<String>, version: u32) -> StreamFile {
    let d = &s.data;
    StreamFile {
        meta: s.meta.clone(),
        ended: d.ended,
        evicted_samples: d.evicted_samples,
        coarse: CoarseFile {
            buckets: d.coarse.len() as u64,
            chunks: d.coarse.chunks(COARSE_CHUNK).map(|c| codec::encode_coarse(c, version)).collect(),
        },
        raw: RawFile {
            first_block: d.raw.first_block,
            first_ordinal: d.raw.first_ordinal,
            first_gap: d.raw.first_gap,
            first_rates: d.raw.first_rates.clone(),
            samples: d.raw.timestamps.len() as u64,
            gaps: d.raw.gaps.iter().map(|&g| g as u64).collect(),
            chunks,
        },
    }
}

fn check_len(field: &str, len: usize, max: usize) -> Result<(), SessionError> {
    if len > max {
        return Err(SessionError::invalid(field, format!("{len} entries, more than the {max} allowed")));
    }
    Ok(())
}

fn check_metadata(f: &SessionFile) -> Result<(), SessionError> {
    check_len("devices", f.devices.len(), MAX_ITEMS)?;
    check_len("runs", f.runs.len(), MAX_ITEMS)?;
    check_len("markers", f.markers.len(), MAX_ITEMS)?;
    check_len("view.panes", f.view.panes.len(), MAX_ITEMS)?;
    for (i, m) in f.markers.iter().enumerate() {
        if let SpanRecord::Range { end_ns } = m.span
            && end_ns < m.t_ns
        {
            let msg = format!("the range ends at {end_ns} ns, before it starts at {} ns", m.t_ns);
            return Err(SessionError::invalid(format!("markers[{i}].span"), msg));
        }
    }
    check_len("streams", f.streams.len(), MAX_STREAMS)?;
    super::processes::check(&f.processes, MAX_ITEMS)?;
    if let Some(c) = &f.comparison {
        check_len("comparison.path", c.path.len(), 4096)?;
        check_len("comparison.align_marker", c.align_marker.as_ref().map_or(0, String::len), 4096)?;
        if !c.offset_s.is_finite() {
            return Err(SessionError::invalid("comparison.offset_s", "not a finite number of seconds"));
        }
    }
    for (i, r) in f.runs.iter().enumerate() {
        if r.device as usize >= f.devices.len() {
            return Err(SessionError::invalid(
                format!("runs[{i}].device"),
                format!("device {} does not exist ({} devices)", r.device, f.devices.len()),
            ));
        }
        check_len(&format!("runs[{i}].notices"), r.notices.len(), MAX_STREAMS)?;
        check_len(&format!("runs[{i}].derived"), r.derived.len(), MAX_STREAMS)?;
        for (k, d) in r.derived.iter().enumerate() {
            check_len(&format!("runs[{i}].derived[{k}]"), d.len(), 4096)?;
        }
        if r.layouts.len() > r.groups.len() + r.telemetry as usize {
            return Err(SessionError::invalid(format!("runs[{i}].layouts"), "more layouts than groups"));
        }
    }
    let v = &f.view;
    let mut ids = HashSet::with_capacity(v.panes.len());
    for (i, p) in v.panes.iter().enumerate() {
        if !ids.insert(p.id) {
            return Err(SessionError::invalid(format!("view.panes[{i}].id"), format!("pane id {} repeats", p.id)));
        }
        if p.id > v.next_pane_id {
            return Err(SessionError::invalid("view.next_pane_id", format!("below pane id {}", p.id)));
        }
    }
    for (k, c) in &v.colors {
        if parse_color(c).is_none() {
            let field = format!("view.colors[{}/{}/{}]", k.device, k.group, k.metric);
            return Err(SessionError::invalid(field, format!("{c:?} is not a colour like \"#1f77b4\"")));
        }
    }
    match (v.mode, v.range) {
        (ModeRecord::Live, _) => {}
        (_, None) => return Err(SessionError::invalid("view.range", "a paused or zoomed view needs its range")),
        (_, Some(r)) if !(r.start_s.is_finite() && r.end_s.is_finite() && r.start_s < r.end_s) => {
            return Err(SessionError::invalid("view.range", format!("{}..{} is not a time range", r.start_s, r.end_s)));
        }
        _ => {}
    }
    Ok(())
}

/// "#rrggbb" as bytes.
pub(super) fn parse_color(s: &str) -> Option<[u8; 3]> {
    let h = s.strip_prefix('#').filter(|h| h.len() == 6 && h.is_ascii())?;
    let byte = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).ok();
    Some([byte(0)?, byte(2)?, byte(4)?])
}

fn stream_desc(field: &str, meta: &StreamMeta) -> Result<StreamDesc, SessionError> {
    check_len(&format!("{field}.meta.series"), meta.series.len(), MAX_SERIES)?;
    if let Some(p) = meta.read_path.as_deref().filter(|p| ReadPath::from_name(p).is_none()) {
        let names: Vec<&str> = ReadPath::ALL.iter().map(|p| p.name()).collect();
        let msg = format!("{p:?} is not a way of reading a group (one of {})", names.join(", "));
        return Err(SessionError::invalid(format!("{field}.meta.read_path"), msg));
    }
    let series = meta
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let check_wrap = |wrap: Option<f64>| {
                if wrap.is_some_and(|w| !(w.is_finite() && w > 0.0)) {
                    let f = format!("{field}.meta.series[{i}].kind.wrap");
                    return Err(SessionError::invalid(f, "must be a positive finite number"));
                }
                Ok(wrap)
            };
            let kind = match s.kind {
                KindRecord::Gauge => SeriesKind::Gauge,
                KindRecord::State => SeriesKind::State,
                KindRecord::Cumulative { wrap } => SeriesKind::Cumulative { wrap: check_wrap(wrap)? },
                KindRecord::Busy { wrap } => {
                    let wrap = check_wrap(wrap)?;
                    let Some(unit_s) = zescope_sampler::layout::kinds::unit_seconds(&s.unit) else {
                        let f = format!("{field}.meta.series[{i}].unit");
                        let msg = format!(
                            "{:?} is not a unit of time (\"ns\", \"us\", \"ms\", \"s\"), which busy time needs",
                            s.unit
                        );
                        return Err(SessionError::invalid(f, msg));
                    };
                    SeriesKind::BusyTime { wrap, unit_s }
                }
            };
            Ok(SeriesDesc { name: s.metric.clone(), unit: s.unit.clone(), kind })
        })
        .collect::<Result<_, _>>()?;
    Ok(StreamDesc { name: meta.name.clone(), series })
}

/// One chunk to decode: where its text is and where its samples go.
struct DecodeJob<'a> {
    field: String,
    chunk: Chunk<'a>,
    ts: &'a mut [i64],
    values: &'a mut [f64],
}

/// A checked file whose raw samples are not decoded yet ([`check`]).
pub(super) struct Checked<'a> {
    /// The session with every stream's raw samples left out: `raw.timestamps` and `raw.values`
    /// are empty; the other raw fields (gaps, first gap and rates) are as the file has them.
    pub session: Session,
    /// Per stream, the raw samples the file holds.
    pub samples: Vec<u64>,
    /// Per stream, its raw chunks, still encoded, oldest first.
    pub chunks: Vec<StreamChunks<'a>>,
}

/// What a load may hold in memory: the memory cap, and the bytes of it the input already takes
/// (the file, and for version 1 its parsed text too). [`check`] refuses a file whose decoded
/// samples and coarse history would take the rest past the cap.
#[derive(Clone, Copy, Debug)]
pub(super) struct Budget {
    /// The memory cap in bytes (the store's cap the loading command or window uses).
    pub cap: u64,
    /// Bytes already held for the input.
    pub held: u64,
}

impl Budget {
    /// No cap: for a reader whose samples go on to a store that keeps its own cap (the
    /// progressive open), not into one allocation.
    pub(super) const NONE: Budget = Budget { cap: u64::MAX, held: 0 };
}

/// Bytes the samples of a stream of `n` series take decoded: a timestamp and `n` values each.
pub(super) fn decoded_bytes(samples: u64, n: usize) -> u64 {
    samples.saturating_mul(n as u64 + 1).saturating_mul(8)
}

/// Bytes `buckets` coarse buckets of `n` series take decoded.
pub(super) fn coarse_bytes(buckets: u64, n: usize) -> u64 {
    let per =
        std::mem::size_of::<zescope_store::CoarseBucket>() + n * std::mem::size_of::<zescope_store::BucketStats>();
    buckets.saturating_mul(per as u64)
}

/// Check and decode a parsed file; `data` is the data section of versions 2 to 4 (`None`:
/// version 1, whose chunks are inline); `budget`: what the decoded samples may take.
pub(super) fn decode(f: SessionFile, data: Option<&[u8]>, budget: Budget) -> Result<Session, SessionError> {
    let Checked { mut session, samples, chunks } = check(&f, data.map(DataSection::Bytes), budget)?;
    let mut jobs = Vec::new();
    for (i, ((out, samples), chunks)) in session.streams.iter_mut().zip(samples).zip(chunks).enumerate() {
        let n = out.data.desc.series.len();
        let raw = &mut out.data.raw;
        // Within the caps `check` applied: what the file's bytes can hold.
        let field = || format!("streams[{i}].raw");
        raw.timestamps = zeroed(samples as usize, field)?;
        raw.values = zeroed(samples as usize * n, field)?;
        let (mut ts, mut vals) = (&mut raw.timestamps[..], &mut raw.values[..]);
        let StreamChunks::Listed(chunks) = chunks else {
            return Err(SessionError::invalid(field(), "internal: chunks left in the file"));
        };
        for (c, (size, chunk)) in chunk_sizes(raw.first_ordinal, samples).zip(chunks).enumerate() {
            let (t, rest_t) = ts.split_at_mut(size);
            let (v, rest_v) = vals.split_at_mut(size * n);
            (ts, vals) = (rest_t, rest_v);
            jobs.push((
                size as u64,
                DecodeJob { field: format!("streams[{i}].raw.chunks[{c}]"), chunk, ts: t, values: v },
            ));
        }
    }
    let results =
        map_weighted(jobs, |j| j.chunk.decode(j.ts, j.values).map_err(|e| SessionError::invalid(j.field, e.0)));
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    for (i, s) in session.streams.iter().enumerate() {
        let ts = &s.data.raw.timestamps;
        if let Some(k) = ts.windows(2).position(|w| w[1] <= w[0]) {
            let msg = format!("sample {} at {} ns does not come after {} ns", k + 1, ts[k + 1], ts[k]);
            return Err(SessionError::invalid(format!("streams[{i}].raw"), msg));
        }
    }
    Ok(session)
}

/// Check a parsed file and decode everything but its raw samples (see [`Checked`]); `data` and
/// `budget` as for [`decode`]. Nothing is allocated for the samples; the coarse history is
/// decoded only once its claim is within the budget.
pub(super) fn check<'a>(
    f: &'a SessionFile,
    data: Option<DataSection<'a>>,
    budget: Budget,
) -> Result<Checked<'a>, SessionError> {
    if f.format != FORMAT_NAME {
        return Err(SessionError::NotASession(format!("format is {:?}, not {FORMAT_NAME:?}", f.format)));
    }
    match (f.version, data.is_some()) {
        (1, true) => return Err(SessionError::invalid("version", "version 1 has no binary data section")),
        (v, false) if v > 1 => {
            return Err(SessionError::invalid("version", format!("version {v} needs its binary data section")));
        }
        _ => {}
    }
    check_metadata(f)?;
    let sealed = f.version >= SEALED_VERSION;
    let mut used = budget.held;
    let mut total_values = 0u64;
    let mut streams = Vec::with_capacity(f.streams.len());
    let mut samples = Vec::with_capacity(f.streams.len());
    let mut all_chunks = Vec::with_capacity(f.streams.len());
    let mut rest = data;
    for (i, s) in f.streams.iter().enumerate() {
        let field = format!("streams[{i}]");
        let desc = stream_desc(&field, &s.meta)?;
        let n = desc.series.len();
        let raw = &s.raw;
        if raw.first_ordinal.checked_add(raw.samples).is_none() {
            let msg = format!("{} samples from ordinal {} overflow", raw.samples, raw.first_ordinal);
            return Err(SessionError::invalid(format!("{field}.raw.chunks"), msg));
        }
        let (chunks, fits) = match rest.as_mut() {
            None => {
                let sizes: Vec<usize> =
                    chunk_sizes(raw.first_ordinal, raw.samples).take(raw.chunks.len() + 1).collect();
                if sizes.len() != raw.chunks.len() {
                    let msg = format!(
                        "{} chunks for {} samples from ordinal {}",
                        raw.chunks.len(),
                        raw.samples,
                        raw.first_ordinal
                    );
                    return Err(SessionError::invalid(format!("{field}.raw.chunks"), msg));
                }
                // Base64 holds 3 bytes in 4 characters; each sample needs at least a byte per
                // value and one for its timestamp.
                let bytes: u64 = raw.chunks.iter().map(|c| c.len() as u64 / 4 * 3).sum();
                let fits = raw.samples.saturating_mul(n as u64 + 1) <= bytes;
                (StreamChunks::Listed(raw.chunks.iter().map(|c| Chunk::Text(c)).collect()), fits)
            }
            Some(rest) => {
                let chunks = packed_chunks(&field, raw, rest, sealed)?;
                let bytes = chunks.data_bytes();
                // A block of up to 256 samples takes at least `MIN_COLUMN_BYTES` per column
                // (timestamps and each series): count what the bytes can hold in the same units.
                let blocks = raw.samples.div_ceil(packed::BLOCK as u64);
                let need = blocks.saturating_mul(n as u64 + 1).saturating_mul(packed::MIN_COLUMN_BYTES);
                (chunks, need <= bytes)
            }
        };
        let values = raw.samples.saturating_mul(n as u64);
        total_values = total_values.saturating_add(values);
        if !fits || total_values > MAX_VALUES {
            let msg = format!("{} samples x {n} series claimed, more than the data or the cap can hold", raw.samples);
            return Err(SessionError::invalid(format!("{field}.raw.samples"), msg));
        }
        let claim = decoded_bytes(raw.samples, n).saturating_add(coarse_bytes(s.coarse.buckets, n));
        used = used.saturating_add(claim);
        if used > budget.cap {
            let fmt = |b: u64| crate::view::text::bytes(usize::try_from(b).unwrap_or(usize::MAX));
            let msg = format!(
                "decodes to {} of samples and history ({} samples x {n} series; {} with the file and the \
                 streams before it), more than the memory cap of {} allows",
                fmt(claim),
                raw.samples,
                fmt(used),
                fmt(budget.cap)
            );
            return Err(SessionError::OverCap { field, message: msg });
        }
        if !(raw.first_rates.is_empty() || raw.first_rates.len() == n) {
            let msg = format!("{} entries for {n} series", raw.first_rates.len());
            return Err(SessionError::invalid(format!("{field}.raw.first_rates"), msg));
        }
        check_len(&format!("{field}.raw.gaps"), raw.gaps.len(), raw.samples as usize)?;
        if let Some(k) = raw
            .gaps
            .windows(2)
            .position(|w| w[1] <= w[0])
            .map(|k| k + 1)
            .or_else(|| raw.gaps.last().filter(|&&g| g >= raw.samples).map(|_| raw.gaps.len() - 1))
        {
            let msg = "gap indices must increase and lie within the samples";
            return Err(SessionError::invalid(format!("{field}.raw.gaps[{k}]"), msg));
        }
        let want = s.coarse.buckets.div_ceil(COARSE_CHUNK as u64);
        if want != s.coarse.chunks.len() as u64 {
            let msg = format!("{} chunks for {} buckets", s.coarse.chunks.len(), s.coarse.buckets);
            return Err(SessionError::invalid(format!("{field}.coarse.chunks"), msg));
        }
        let mut coarse = Vec::new();
        for (c, text) in s.coarse.chunks.iter().enumerate() {
            let got = codec::decode_coarse(text, n, f.version)
                .map_err(|e| SessionError::invalid(format!("{field}.coarse.chunks[{c}]"), e.0))?;
            let full = c + 1 < s.coarse.chunks.len();
            if got.is_empty() || got.len() > COARSE_CHUNK || full && got.len() != COARSE_CHUNK {
                let msg = format!("{} buckets: chunks hold {COARSE_CHUNK} each (fewer only in the last)", got.len());
                return Err(SessionError::invalid(format!("{field}.coarse.chunks[{c}]"), msg));
            }
            coarse.extend(got);
        }
        if coarse.len() as u64 != s.coarse.buckets {
            let msg = format!("{} buckets decoded, {} claimed", coarse.len(), s.coarse.buckets);
            return Err(SessionError::invalid(format!("{field}.coarse.buckets"), msg));
        }
        let data = StreamData {
            desc,
            ended: s.ended,
            evicted_samples: s.evicted_samples,
            coarse,
            raw: RawData {
                first_block: raw.first_block,
                first_ordinal: raw.first_ordinal,
                timestamps: Vec::new(),
                values: Vec::new(),
                gaps: raw.gaps.iter().map(|&g| g as usize).collect(),
                first_gap: raw.first_gap,
                first_rates: raw.first_rates.clone(),
            },
        };
        streams.push(SessionStream { meta: s.meta.clone(), data });
        samples.push(raw.samples);
        all_chunks.push(chunks);
    }
    if let Some(rest) = rest.map(|r| r.remaining()).filter(|&r| r > 0) {
        let msg = format!("{rest} bytes after the last stream's chunks");
        return Err(SessionError::invalid("data section", msg));
    }
    let session = Session {
        recorded: f.recorded.clone(),
        source: f.source.clone(),
        devices: f.devices.clone(),
        runs: f.runs.clone(),
        view: f.view.clone(),
        markers: f.markers.clone(),
        origin_ns: f.origin_ns,
        comparison: f.comparison.clone(),
        processes: f.processes.clone(),
        streams,
    };
    Ok(Checked { session, samples, chunks: all_chunks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_align_to_multiples_of_the_chunk_size() {
        let sizes: Vec<usize> = chunk_sizes(4000, 10_000).collect();
        assert_eq!(sizes, vec![96, 4096, 4096, 1712]);
        assert_eq!(chunk_sizes(0, 0).count(), 0);
        assert_eq!(chunk_sizes(u64::MAX - 1, 5).collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn colours_parse_strictly() {
        assert_eq!(parse_color("#0072b2"), Some([0, 114, 178]));
        assert_eq!(parse_color("0072b2"), None);
        assert_eq!(parse_color("#0072b"), None);
        assert_eq!(parse_color("#00é2b2"), None);
    }
}
