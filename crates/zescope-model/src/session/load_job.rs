//! Opening a session on a background thread, progressively, so a large one shows its first
//! frame long before all of it is decoded.
//!
//! The thread reads the file's head (never its data section whole: `chunks.rs`), parses and
//! checks it (everything but the raw samples:
//! streams, series, runs, arrangement, markers, comparison; the coarse history is decoded with it)
//! and hands that over first ([`LoadEvent::Head`]), with the session's whole time range, taken
//! from the coarse history and the first and last raw chunk of each stream. Then it decodes the
//! raw chunks a batch at a time on all cores, in time order (the streams' chunks merged by
//! their estimated start time, each stream's in file order), and hands them over a piece at a
//! time ([`LoadEvent::Piece`]: whole blocks of 256 samples of one chunk, about [`PIECE_BYTES`]
//! decoded, never more than one block of the widest stream, 8 MiB) through a bounded channel:
//! it waits while the receiver is [`IN_FLIGHT`] pieces behind, so what is decoded and not yet
//! taken is at most [`IN_FLIGHT_BYTES`] however large or wide the file is. Every chunk is
//! checked as the one-shot [`load`](super::load) checks it; the first problem ends the job
//! with [`LoadEvent::Failed`] naming the stream and chunk, after the pieces before it.
//! Progress is the data section's bytes decoded (a version 1 file's chunk text).
//!
//! Version 1 files go the same way (their chunks are inline text, parsed with the head, then
//! decoded chunk by chunk). Autosave checkpoints keep the one-shot path
//! ([`Recoverable::load`](super::autosave::Recoverable::load)): they are assembled from a
//! directory of pieces, and recovering one is rare and small next to opening a file.
//!
//! Memory: the thread holds the file's head, parsed (each stream's coarse history decoded), the
//! chunks it has read to decode ([`HELD_CHUNK_BYTES`]) and the pieces in flight;
//! [`LoadHead::held`] says what the first three take, so that a reader
//! keeping a memory cap for the whole open ([`super::open_into`]) leaves that much of it out of
//! its store (down to [`MIN_STORE`]). Every buffer sized by the file's numbers is allocated
//! fallibly: an allocation that fails ends the job with an error naming what it was for.
//!
//! Dropping the job (or [`LoadJob::cancel`]) stops the thread at the next batch; nothing waits
//! for it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::time::Duration;

use zescope_store::RawData;

use super::chunks::{ChunkCursor, Extent, FileScan, read_chunk};
use super::codec::CHUNK;
use super::convert::{self, Checked, Chunk, DataSection, Progress, SEALED_VERSION, StreamChunks, chunk_sizes, zeroed};
use super::io::{self, MAX_FILE_BYTES};
use super::{Session, SessionError, journal, journal_read, packed};

/// Pieces decoded ahead of the receiver at most (the channel's length).
pub const IN_FLIGHT: usize = 4;
/// Pieces decoded at a time, across the cores.
const BATCH: usize = 4;
/// Decoded bytes a piece holds about: as many whole blocks of a chunk as fit, at least one.
pub const PIECE_BYTES: usize = 4 << 20;
/// The most one piece takes decoded: [`PIECE_BYTES`], or one block (256 samples) of a stream
/// of the most series a file may hold (4096, and a timestamp), whichever is more.
pub const MAX_PIECE_BYTES: usize = {
    let block = packed::BLOCK * (convert::MAX_SERIES + 1) * 8;
    if block > PIECE_BYTES { block } else { PIECE_BYTES }
};
/// Decoded samples an open holds besides its file, head and the receiver's store at most: the
/// pieces in the channel, the batch being decoded and the one being taken in.
pub const IN_FLIGHT_BYTES: usize = (IN_FLIGHT + BATCH + 1) * MAX_PIECE_BYTES;
/// The least store an open into a store keeps while it holds the file's head
/// (`super::open_into`).
pub const MIN_STORE: u64 = 8 << 20;
/// Encoded chunks read from the file and held while their pieces are decoded: at most this
/// many bytes, or one chunk if a single one is larger (a chunk takes about what its samples
/// decode to at most; a file's usual chunks take far less).
pub const HELD_CHUNK_BYTES: u64 = 8 << 20;

/// Samples a piece of a stream of `n` series holds (a whole chunk holds at most 4096).
fn piece_rows(n: usize) -> usize {
    let rows = PIECE_BYTES / ((n + 1) * 8) / packed::BLOCK * packed::BLOCK;
    rows.clamp(packed::BLOCK, CHUNK as usize)
}

/// What the thread hands over before the samples.
#[derive(Debug)]
pub struct LoadHead {
    /// The session without its raw samples: each stream's coarse history, its raw part's
    /// `first_block` and `first_ordinal`, nothing else of it, and not ended (see `ended`).
    pub session: Session,
    /// Per stream: its run had ended; true once its last piece is in.
    pub ended: Vec<bool>,
    /// Per stream: the raw samples to come.
    pub samples: Vec<u64>,
    /// Pieces to come, over all streams.
    pub pieces: u64,
    /// The whole session's time range (ns), when it holds any data.
    pub span: Option<(i64, i64)>,
    /// The time origin a one-shot load gives: the saved one, else the first stream's start.
    pub origin_ns: Option<i64>,
    /// Bytes the open holds until it ends besides the pieces in flight: the head, the strings it
    /// was parsed into (at most its text again), the coarse history decoded and the chunks read
    /// to decode ([`HELD_CHUNK_BYTES`]).
    pub held: u64,
}

/// Decoded samples of one stream: whole blocks of one raw chunk (all of a narrow stream's chunk).
#[derive(Debug)]
pub struct Piece {
    /// The stream's index in the session.
    pub stream: usize,
    /// The samples; `gaps` index these. On the stream's first piece (`first`) the raw part's
    /// `first_block`, `first_ordinal`, `first_gap` and `first_rates` are the file's; on later
    /// ones they are left at their defaults.
    pub raw: RawData,
    /// The stream's first piece.
    pub first: bool,
    /// The stream's last piece.
    pub last: bool,
}

/// What the thread hands over, in this order: a head, pieces, then `Done`; or `Failed` at any
/// point (after the head: the pieces before it were good).
#[derive(Debug)]
pub enum LoadEvent {
    /// The session without its samples.
    Head(Box<LoadHead>),
    /// Decoded samples (a chunk, or part of a wide one).
    Piece(Piece),
    /// Every sample was handed over.
    Done,
    /// The file is unreadable or malformed (the error names where); nothing follows.
    Failed(SessionError),
}

/// An open in progress (see the module docs).
pub struct LoadJob {
    path: PathBuf,
    rx: Receiver<LoadEvent>,
    progress: Arc<Progress>,
    /// `Done` or `Failed` was received.
    over: bool,
}

impl LoadJob {
    /// Start opening `path` on a new thread.
    pub fn spawn(path: PathBuf) -> LoadJob {
        let progress = Arc::new(Progress::default());
        let (tx, rx) = std::sync::mpsc::sync_channel(IN_FLIGHT);
        let (p, target, thread_tx) = (Arc::clone(&progress), path.clone(), tx.clone());
        let spawned = std::thread::Builder::new().name("zescope-open".into()).spawn(move || {
            let tx = thread_tx;
            if let Err(e) = run(&target, &tx, &p) {
                // The receiver may be gone (cancelled): nobody to tell then.
                let _ = tx.send(LoadEvent::Failed(e));
            }
        });
        if let Err(e) = spawned {
            let _ = tx.try_send(LoadEvent::Failed(SessionError::io(&path, "cannot start the open thread", e)));
        }
        LoadJob { path, rx, progress, over: false }
    }

    /// The file being opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Share of the data section decoded, 0.0 to 1.0.
    pub fn progress(&self) -> f32 {
        self.progress.fraction()
    }

    /// Ask the thread to stop (it does at its next batch).
    pub fn cancel(&self) {
        self.progress.cancel.store(true, Ordering::Relaxed);
    }

    /// Is everything handed over (`Done` or `Failed` received)?
    pub fn is_over(&self) -> bool {
        self.over
    }

    /// The next event, waiting up to `wait` for it; `None` when none came in that time or the
    /// job is over. A thread that ended without saying why gives `Failed`.
    pub fn next(&mut self, wait: Duration) -> Option<LoadEvent> {
        if self.over {
            return None;
        }
        let got = if wait.is_zero() {
            self.rx.try_recv().map_err(|e| e == TryRecvError::Disconnected)
        } else {
            self.rx.recv_timeout(wait).map_err(|e| e == RecvTimeoutError::Disconnected)
        };
        let event = match got {
            Ok(e) => e,
            Err(false) => return None,
            Err(true) => LoadEvent::Failed(SessionError::invalid("file", "the open thread stopped unexpectedly")),
        };
        self.over = matches!(event, LoadEvent::Done | LoadEvent::Failed(_));
        Some(event)
    }
}

impl LoadJob {
    /// Cancel and wait for the thread to end (what it still sends is dropped).
    pub fn stop(mut self) {
        self.cancel();
        while self.rx.recv().is_ok() {}
        self.over = true;
    }
}

impl Drop for LoadJob {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// The thread: read, check, hand over the head, then the pieces.
fn run(path: &Path, tx: &SyncSender<LoadEvent>, progress: &Progress) -> Result<(), SessionError> {
    // The head only: the data section stays in the file, scanned for where each stream's
    // chunks are, each chunk read (and its checksum checked) when its samples are decoded.
    let (f, size) = io::open_bounded(path, MAX_FILE_BYTES, true)?;
    let head_bytes = io::read_head(&f, size, path)?;
    let (text, data) = io::split(&head_bytes)?;
    // A recording's journal: its last whole checkpoint, as the version 7 file it stands for, in
    // memory (`journal_read.rs`).
    let image = match data {
        Some(_) if journal::is_journal(text) => {
            Some(journal_read::image(&f, head_bytes.len() as u64, size, MAX_FILE_BYTES)?)
        }
        _ => None,
    };
    let (text, data) = match &image {
        Some(i) => io::split(i)?,
        None => (text, data),
    };
    // The head's bytes and the strings parsing them makes (at most as many again), and a
    // journal's image.
    let parsed = 2 * head_bytes.len() as u64 + image.as_ref().map_or(0, |i| 2 * i.len() as u64);
    let file = io::parse(text)?;
    let sealed = file.version >= SEALED_VERSION;
    let section = match (data, &image) {
        (Some(d), Some(_)) => Some(DataSection::Bytes(d)),
        (Some(_), None) => {
            let scan = f.try_clone().and_then(|c| FileScan::new(c, head_bytes.len() as u64, size));
            Some(DataSection::File(scan.map_err(|e| SessionError::io(path, "cannot read", e))?))
        }
        (None, _) => None,
    };
    let Checked { mut session, samples, chunks } = convert::check(&file, section, convert::Budget::NONE)?;
    let coarse: u64 = session
        .streams
        .iter()
        .map(|s| convert::coarse_bytes(s.data.coarse.len() as u64, s.data.desc.series.len()))
        .fold(0, u64::saturating_add);
    let held = parsed.saturating_add(coarse).saturating_add(HELD_CHUNK_BYTES);
    let total: u64 = chunks.iter().map(|c| c.bytes()).sum();
    progress.total.store(total.max(1), Ordering::Relaxed);
    let mut raws = Vec::with_capacity(session.streams.len());
    let mut ended = Vec::with_capacity(session.streams.len());
    for s in &mut session.streams {
        let raw = &mut s.data.raw;
        let head = RawData { first_block: raw.first_block, first_ordinal: raw.first_ordinal, ..RawData::default() };
        raws.push(std::mem::replace(raw, head));
        ended.push(std::mem::replace(&mut s.data.ended, false));
    }
    let raw_spans: Vec<Option<(i64, i64)>> =
        (0..chunks.len()).map(|i| raw_span(&session, &samples, &chunks, (&f, sealed), i)).collect();
    let spans: Vec<Option<(i64, i64)>> =
        raw_spans.iter().enumerate().map(|(i, &r)| stream_span(&session, i, r)).collect();
    let span = spans.iter().flatten().copied().reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
    let origin_ns = session.origin_ns.or_else(|| spans.iter().flatten().next().map(|s| s.0));
    let order = time_order(&session, &samples, &raw_spans);
    let pieces: u64 = order.iter().map(|p| p.size.div_ceil(piece_rows(p.n)) as u64).sum();
    let head = LoadHead { session, ended, samples: samples.clone(), pieces, span, origin_ns, held };
    if tx.send(LoadEvent::Head(Box::new(head))).is_err() {
        return Ok(());
    }
    // Per stream: samples handed over, and the last timestamp.
    let mut at = vec![0u64; raws.len()];
    let mut last_t: Vec<Option<i64>> = vec![None; raws.len()];
    let all = order.iter().flat_map(|&c| {
        let rows = piece_rows(c.n);
        (0..c.size).step_by(rows).map(move |from| (c, from, rows.min(c.size - from)))
    });
    let mut all = all.peekable();
    // Chunks of streams left in the file: each stream's read in order, the next one's extent
    // once looked at, and those read for the pieces being decoded.
    let mut cursors: Vec<Option<ChunkCursor>> =
        chunks.iter().map(|c| if let StreamChunks::InFile(s) = c { Some(ChunkCursor::new(s)) } else { None }).collect();
    let mut peeked: Vec<Option<Extent>> = vec![None; chunks.len()];
    let mut held: Vec<((usize, usize), Vec<u8>)> = Vec::new();
    while let Some(&(next, _, _)) = all.peek() {
        if progress.cancel.load(Ordering::Relaxed) {
            return Ok(());
        }
        // A batch: up to BATCH pieces, whose chunks read from the file take HELD_CHUNK_BYTES at
        // most (or one chunk, if larger). A chunk whose pieces go on stays held.
        held.retain(|(k, _)| *k == (next.stream, next.chunk));
        let mut bytes_held: u64 = held.iter().map(|h| h.1.len() as u64).sum();
        let mut jobs = Vec::new();
        while jobs.len() < BATCH {
            let Some(&(c, from, rows)) = all.peek() else { break };
            let key = (c.stream, c.chunk);
            if let Some(cursor) = cursors[c.stream].as_mut()
                && !held.iter().any(|h| h.0 == key)
            {
                let field = format!("streams[{}].raw.chunks[{}]", c.stream, c.chunk);
                let e = match peeked[c.stream] {
                    Some(e) => e,
                    None => cursor.next_extent(&f).map_err(|e| SessionError::invalid(&field, e.to_string()))?,
                };
                peeked[c.stream] = Some(e);
                if !jobs.is_empty() && bytes_held.saturating_add(e.len) > HELD_CHUNK_BYTES {
                    break;
                }
                let bytes = read_chunk(&f, e, sealed, &field)?;
                peeked[c.stream] = None;
                bytes_held += bytes.len() as u64;
                held.push((key, bytes));
            }
            all.next();
            jobs.push(((rows * (c.n + 1)) as u64, (c, from, rows)));
        }
        let held = &held;
        let decoded = zescope_store::par::map_weighted(jobs, |(c, from, rows)| {
            let field = || format!("streams[{}].raw.chunks[{}]", c.stream, c.chunk);
            let out =
                zeroed(rows, field).and_then(|ts| Ok((ts, zeroed(rows * c.n, field)?))).and_then(|(mut ts, mut v)| {
                    let chunk = match &chunks[c.stream] {
                        StreamChunks::Listed(list) => list[c.chunk],
                        // Read with its checksum checked (`read_chunk`).
                        StreamChunks::InFile(_) => match held.iter().find(|h| h.0 == (c.stream, c.chunk)) {
                            Some(h) => Chunk::Packed(&h.1),
                            None => return Err(SessionError::invalid(field(), "internal: the chunk was not read")),
                        },
                    };
                    chunk
                        .decode_rows(c.size, c.n, from, &mut ts, &mut v)
                        .map_err(|e| SessionError::invalid(field(), e.0))?;
                    Ok((ts, v))
                });
            (c, from, rows, out)
        });
        for (c, from, rows, result) in decoded {
            let (i, field) = (c.stream, format!("streams[{}].raw.chunks[{}]", c.stream, c.chunk));
            let (ts, values) = result?;
            let before = last_t[i].into_iter().chain(ts.iter().copied());
            if let Some((k, (a, b))) = before.clone().zip(before.skip(1)).enumerate().find(|(_, (a, b))| b <= a) {
                let k = from + if last_t[i].is_some() { k } else { k + 1 };
                return Err(SessionError::invalid(field, format!("sample {k} at {b} ns does not come after {a} ns")));
            }
            last_t[i] = ts.last().copied().or(last_t[i]);
            let from_at = at[i] as usize;
            let to = from_at + ts.len();
            let whole = &raws[i];
            // The gaps increase (checked): the piece's are one slice of them, found by bisection.
            let (lo, hi) = (whole.gaps.partition_point(|&g| g < from_at), whole.gaps.partition_point(|&g| g < to));
            let gaps = whole.gaps[lo..hi].iter().map(|g| g - from_at).collect();
            let first = from_at == 0;
            let mut raw = RawData { timestamps: ts, values, gaps, ..RawData::default() };
            if first {
                raw.first_block = whole.first_block;
                raw.first_ordinal = whole.first_ordinal;
                raw.first_gap = whole.first_gap;
                raw.first_rates = whole.first_rates.clone();
            }
            at[i] = to as u64;
            let last = at[i] == samples[i];
            let bytes = match &chunks[i] {
                StreamChunks::Listed(list) => list[c.chunk].len() as u64,
                StreamChunks::InFile(_) => held.iter().find(|h| h.0 == (i, c.chunk)).map_or(0, |h| h.1.len() as u64),
            };
            progress.done.fetch_add(bytes * rows as u64 / c.size.max(1) as u64, Ordering::Relaxed);
            if tx.send(LoadEvent::Piece(Piece { stream: i, raw, first, last })).is_err() {
                return Ok(());
            }
        }
    }
    let _ = tx.send(LoadEvent::Done);
    Ok(())
}

/// A time range (ns) widened to take in `a..=b`.
fn widen(span: Option<(i64, i64)>, (a, b): (i64, i64)) -> Option<(i64, i64)> {
    Some(span.map_or((a, b), |(x, y)| (x.min(a), y.max(b))))
}

/// Stream `i`'s time range: its coarse history and `raw`, its raw samples' ([`raw_span`]).
fn stream_span(session: &Session, i: usize, raw: Option<(i64, i64)>) -> Option<(i64, i64)> {
    let s = &session.streams[i];
    let coarse = s.data.coarse.first().zip(s.data.coarse.last()).map(|(f, l)| (f.t_first, l.t_last));
    raw.map_or(coarse, |r| widen(coarse, r))
}

/// The time range of stream `i`'s raw samples, from its first and last chunks (decoded here
/// once more; a chunk that does not decode is left out and refused in its turn).
/// Chunks left in the file are read for it (`file`, `sealed`: with their checksums), one at a
/// time.
fn raw_span(
    session: &Session,
    samples: &[u64],
    chunks: &[StreamChunks<'_>],
    (file, sealed): (&std::fs::File, bool),
    i: usize,
) -> Option<(i64, i64)> {
    let s = &session.streams[i];
    let n = s.data.desc.series.len();
    let mut span = None;
    let first_size = chunk_sizes(s.data.raw.first_ordinal, samples[i]).next();
    let last_size = chunk_sizes(s.data.raw.first_ordinal, samples[i]).last();
    let (first, last) = match &chunks[i] {
        StreamChunks::Listed(list) => (list.first().copied().map(Ok), list.last().copied().map(Ok)),
        StreamChunks::InFile(f) => (f.first.map(Err), f.last.map(Err)),
    };
    // The first block of the first chunk and the last block of the last one.
    for (chunk, size, last_block) in [(first, first_size, false), (last, last_size, true)] {
        let (Some(chunk), Some(size)) = (chunk, size) else { continue };
        let bytes;
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => match read_chunk(file, e, sealed, "") {
                Ok(b) => {
                    bytes = b;
                    Chunk::Packed(&bytes)
                }
                Err(_) => continue,
            },
        };
        let from = if last_block { (size - 1) / packed::BLOCK * packed::BLOCK } else { 0 };
        let rows = (size - from).min(packed::BLOCK);
        let (mut ts, mut values) = (vec![0; rows], vec![0.0; rows * n]);
        if chunk.decode_rows(size, n, from, &mut ts, &mut values).is_ok()
            && let (Some(&a), Some(&b)) = (ts.first(), ts.last())
        {
            span = widen(span, (a, b));
        }
    }
    span
}

/// One raw chunk to decode: its stream and index, samples and the stream's series.
#[derive(Clone, Copy, Debug)]
struct ChunkRef {
    stream: usize,
    chunk: usize,
    size: usize,
    n: usize,
}

/// The chunks in the order they are decoded, merged over the streams by each chunk's start
/// time estimated from its stream's raw span (a stream's own chunks stay in order).
fn time_order(session: &Session, samples: &[u64], raw_spans: &[Option<(i64, i64)>]) -> Vec<ChunkRef> {
    let mut out = Vec::new();
    for (i, s) in session.streams.iter().enumerate() {
        let n = s.data.desc.series.len();
        let (a, b) = raw_spans[i].unwrap_or((i64::MAX, i64::MAX));
        let mut at = 0u64;
        for (c, size) in chunk_sizes(s.data.raw.first_ordinal, samples[i]).enumerate() {
            let share = at as f64 / samples[i].max(1) as f64;
            let t = a as f64 + (b as f64 - a as f64) * share;
            out.push((t, ChunkRef { stream: i, chunk: c, size, n }));
            at += size as u64;
        }
    }
    out.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.stream.cmp(&y.1.stream)).then(x.1.chunk.cmp(&y.1.chunk)));
    out.into_iter().map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests;
