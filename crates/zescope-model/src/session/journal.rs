//! A recording's journal (session format version 5, `docs/session-format.md`): how a recording
//! (`zescope record --out run.ron`, `serve --save`) keeps its session file recoverable while it
//! records, each checkpoint costing what is new since the last one, never the whole store.
//!
//! The file is a session file whose RON text says only `version: 5`, followed by frames, each
//! appended once and never changed: a frame is its kind (`C` a raw chunk, `H` a head), its
//! payload's length (u64, little-endian), the payload and the CRC-32C of all of that. A chunk
//! frame holds the bytes a data section (version 4 and later) holds for one chunk (packed columns
//! and their CRC-32C); a head frame holds the session's RON head of the current file version (6)
//! and, per stream, the offsets of the chunk frames that make its raw samples. A checkpoint appends the chunks sealed since
//! the last one (written once), the growing last chunk of each stream (again each time, the old
//! copy left behind) and a head; then it syncs the file. The session is the last head such that
//! it and every frame before it are whole and check: a checkpoint cut short at any byte (`kill -9`,
//! a full disk, a crash) leaves the one before it (`journal_read.rs`, which every reader of
//! session files goes through).
//!
//! What a checkpoint costs: the caller's thread copies out of the store only the samples of the
//! chunks not yet in the file (`Store::raw_between`: their blocks alone are decoded) and encodes
//! them, and copies the head (metadata and coarse history); a background thread serialises the
//! head, writes and syncs. The first checkpoint writes a new file beside the target and renames
//! it over it (as every save does), so a recording never starts by destroying what was there
//! before it has something to put there. When what the file holds that no head names any more
//! (older copies of growing chunks and heads, chunks the memory cap coarsened away) outgrows what
//! it names and [`COMPACT_MIN`], the next checkpoint writes the file anew the same way, copying
//! the chunks it keeps as they are (no decoding): the file stays within about twice its session.
//!
//! At the end ([`Journal::finish`]) the recording is written as an ordinary version 7 file
//! (atomically, as a save), its chunks copied from the journal as they are and only the samples
//! since the last checkpoint encoded.
//!
//! A test hook, `ZESCOPE_CHECKPOINT_HOOK=DIR` (`tests/commands/record_kill.rs`): a recorder that
//! finds it checkpoints at every chance, and each checkpoint `n` waits twice in the middle of its
//! writing — half of its frames written (`DIR/n-mid`), and all of it written and synced
//! (`DIR/n-done`) — until `DIR/n-mid.go` (`DIR/n-done.go`) exists or `DIR` is gone.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};
use zescope_store::{Store, StreamId};

use super::codec::CHUNK;
use super::convert::{self, chunk_sizes};
use super::format::SessionFile;
use super::io::{self, DATA_LINE, FILE_COMMENT};
use super::{Capture, Session, SessionError, crc};

/// A journal's RON text: the format and version (5), nothing else.
pub(super) const STUB: &str = "(format: \"zescope-session\", version: 5)\n";
/// A frame holding a raw chunk.
pub(super) const CHUNK_FRAME: u8 = b'C';
/// A frame holding a head.
pub(super) const HEAD_FRAME: u8 = b'H';
/// A frame's kind and length.
pub(super) const FRAME_HEAD: usize = 9;
/// What a frame takes besides its payload: kind, length and checksum.
pub(super) const FRAME_EXTRA: u64 = FRAME_HEAD as u64 + crc::CRC_BYTES as u64;
/// Bytes no head names any more before a checkpoint writes the file anew (see the module docs).
pub const COMPACT_MIN: u64 = 16 << 20;
/// The environment variable of the test hook (module docs).
pub const HOOK_ENV: &str = "ZESCOPE_CHECKPOINT_HOOK";

/// The bytes before a journal's first frame.
pub(super) fn prelude() -> String {
    format!("{FILE_COMMENT}{DATA_LINE}{}\n{STUB}", STUB.len())
}

/// Whether a file's text part (as `io::split` gives it) is a journal's.
pub(super) fn is_journal(text: &str) -> bool {
    text.len() == prelude().len() && text == prelude()
}

/// A head frame's payload.
#[derive(Serialize, Deserialize)]
pub(super) struct JournalHead {
    /// Per stream of `session`, in order: the offsets in the file of its chunk frames.
    pub chunks: Vec<Vec<u64>>,
    /// The session's head, of the current file version (6), its raw chunks left to the chunk
    /// frames.
    pub session: SessionFile,
}

/// A chunk in the file: its place in the stream and its frame.
#[derive(Clone, Copy, Debug)]
struct Written {
    /// Offset of its frame in the file.
    at: u64,
    /// Its payload's length.
    len: u64,
}

impl Written {
    fn frame_len(&self) -> u64 {
        self.len + FRAME_EXTRA
    }

    /// Its payload, read from `file`.
    fn read(&self, file: &File) -> std::io::Result<Vec<u8>> {
        let mut b = vec![0u8; usize::try_from(self.len).map_err(std::io::Error::other)?];
        file.read_exact_at(&mut b, self.at + FRAME_HEAD as u64)?;
        Ok(b)
    }
}

/// One chunk of a checkpoint's plan: in the file already, or encoded now.
enum Piece {
    /// Under its key in the file's whole chunks.
    Old { key: (u64, usize), w: Written },
    /// Bytes `from..from + len` of the plan's `fresh`; `key`: the chunk is whole, so the file
    /// keeps it under this key for later checkpoints.
    New { from: usize, len: usize, key: Option<(u64, usize)> },
}

/// What the file holds, as the last checkpoint left it.
#[derive(Default)]
struct State {
    /// The journal, open; `None` before the first checkpoint or after a failed one.
    file: Option<File>,
    /// Where the next frame goes.
    end: u64,
    /// Per stream: its whole chunks in the file, by `(first ordinal, samples)`.
    sealed: HashMap<StreamId, HashMap<(u64, usize), Written>>,
    /// Bytes of the frames the last head names, the head included.
    live: u64,
    /// Checkpoints written.
    count: u64,
}

/// A checkpoint's plan, made on the caller's thread: what to write.
struct Plan {
    ids: Vec<StreamId>,
    pieces: Vec<Vec<Piece>>,
    fresh: Vec<u8>,
    head: SessionFile,
}

/// A recording's journal (see the module docs).
pub struct Journal {
    path: PathBuf,
    state: Option<State>,
    /// The writer thread, started with the first checkpoint: one for the journal's life, so
    /// what it allocates stays in one heap (a thread per checkpoint left the allocator holding
    /// ~60 MB of freed memory after an hour, `benches/record_hour.rs`).
    worker: Option<Worker>,
    /// A checkpoint was handed to the worker and its outcome not yet taken.
    pending: bool,
    hook: Option<PathBuf>,
    /// [`COMPACT_MIN`] (tests lower it).
    compact_min: u64,
}

/// What the writer thread is given and gives back.
type Job = Box<(State, Plan)>;
type Outcome = (State, Result<(), SessionError>);

/// The writer thread and its two channels.
struct Worker {
    tx: Option<std::sync::mpsc::Sender<Job>>,
    rx: std::sync::mpsc::Receiver<Outcome>,
    /// The last outcome, received by [`Journal::busy`] before it was asked for.
    ready: Option<Outcome>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Journal {
    /// A journal for `path`; nothing is written before the first checkpoint.
    pub fn new(path: PathBuf) -> Journal {
        let hook = std::env::var_os(HOOK_ENV).map(PathBuf::from);
        Journal { path, state: Some(State::default()), worker: None, pending: false, hook, compact_min: COMPACT_MIN }
    }

    /// The test hook's directory, when set (a recorder then checkpoints at every chance).
    pub fn hooked(&self) -> bool {
        self.hook.is_some()
    }

    /// A checkpoint is being written.
    pub fn busy(&mut self) -> bool {
        if !self.pending {
            return false;
        }
        let Some(w) = self.worker.as_mut() else { return false };
        if w.ready.is_none() {
            match w.rx.try_recv() {
                Ok(o) => w.ready = Some(o),
                Err(std::sync::mpsc::TryRecvError::Empty) => return true,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    w.ready = Some((State::default(), Err(SessionError::Encode("checkpoint panicked".into()))));
                }
            }
        }
        false
    }

    /// The outcome of the last background checkpoint, once it is over (then once).
    pub fn poll(&mut self) -> Option<Result<(), SessionError>> {
        if !self.pending || self.busy() {
            return None;
        }
        Some(self.join())
    }

    /// Waits for the checkpoint in progress, if any: its outcome.
    fn join(&mut self) -> Result<(), SessionError> {
        if !self.pending {
            return Ok(());
        }
        self.pending = false;
        let Some(w) = self.worker.as_mut() else { return Ok(()) };
        let (state, result) = match w.ready.take() {
            Some(o) => o,
            None => {
                w.rx.recv()
                    .unwrap_or_else(|_| (State::default(), Err(SessionError::Encode("checkpoint panicked".into()))))
            }
        };
        // A failed checkpoint leaves the file as the last good one; the next starts a new file.
        self.state = Some(if result.is_ok() { state } else { State { count: state.count, ..State::default() } });
        result
    }

    /// Starts a checkpoint of `store` described by `ui` on a background thread (see the module
    /// docs); false, doing nothing, while the last one is still being written.
    pub fn checkpoint(&mut self, store: &Store, ui: Capture<'_>) -> bool {
        if self.busy() {
            return false;
        }
        if let Some(Err(e)) = self.poll() {
            log::warn!("{}: a checkpoint failed: {e}", self.path.display());
        }
        let Some(state) = self.state.take() else { return false };
        let plan = plan(&state, store, ui);
        let worker = self.worker.get_or_insert_with(|| {
            let (tx, jobs) = std::sync::mpsc::channel::<Job>();
            let (done, rx) = std::sync::mpsc::channel::<Outcome>();
            let (path, hook, compact_min) = (self.path.clone(), self.hook.clone(), self.compact_min);
            let thread = std::thread::Builder::new().name("checkpoint".into()).spawn(move || {
                for job in jobs {
                    let (mut state, plan) = *job;
                    let result = write_checkpoint(&mut state, plan, &path, (hook.as_deref(), compact_min));
                    if done.send((state, result)).is_err() {
                        return;
                    }
                }
            });
            Worker { tx: Some(tx), rx, ready: None, thread: thread.ok() }
        });
        match worker.tx.as_ref().map(|tx| tx.send(Box::new((state, plan))).is_ok()) {
            Some(true) => {
                self.pending = true;
                true
            }
            // No thread: the next checkpoint tries again, on a new file.
            _ => {
                self.worker = None;
                self.state = Some(State::default());
                log::warn!("{}: cannot start the checkpoint thread", self.path.display());
                false
            }
        }
    }

    /// Waits for the checkpoint in progress, then writes the whole recording to the path as a
    /// version 7 file (atomically): the chunks in the journal copied, the rest encoded from the
    /// store a chunk at a time. Errs with what kept the file from being written.
    pub fn finish(&mut self, store: &Store, ui: Capture<'_>) -> Result<(), SessionError> {
        if let Err(e) = self.join() {
            log::warn!("{}: the last checkpoint failed: {e}", self.path.display());
        }
        let state = self.state.take().unwrap_or_default();
        let plan = plan(&state, store, ui);
        let result = io::write_atomic(&self.path, |f| {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            let enc = |e: std::io::Error| SessionError::Encode(e.to_string());
            io::write_text_head(&plan.head, &mut w)?;
            let mut len = Vec::new();
            for p in plan.pieces.iter().flatten() {
                let old;
                let bytes = match p {
                    Piece::Old { w: c, .. } => {
                        let file = state.file.as_ref().ok_or_else(|| SessionError::Encode("no journal".into()))?;
                        old = c.read(file).map_err(|e| SessionError::io(&self.path, "cannot read the journal", e))?;
                        &old[..]
                    }
                    Piece::New { from, len, .. } => &plan.fresh[*from..from + len],
                };
                len.clear();
                zescope_store::bits::put_varint(&mut len, bytes.len() as u64);
                w.write_all(&len).and_then(|_| w.write_all(bytes)).map_err(enc)?;
            }
            w.flush().map_err(enc)
        });
        self.state = Some(State::default());
        result
    }
}

/// `(first ordinal, samples)` of each chunk of raw samples `first..first + n`.
fn chunks_of(first: u64, n: u64) -> impl Iterator<Item = (u64, usize)> {
    let mut at = first;
    chunk_sizes(first, n).map(move |k| {
        let c = (at, k);
        at += k as u64;
        c
    })
}

/// What a checkpoint of `store` writes: the chunks the file lacks, encoded, and the head.
fn plan(state: &State, store: &Store, ui: Capture<'_>) -> Plan {
    let session: Session = Session::capture_with(store, ui, |id| store.stream_data_between(id, u64::MAX, u64::MAX));
    let mut head = convert::encode_head(&session);
    let ids: Vec<StreamId> = store.streams().map(|s| s.id).collect();
    let (mut pieces, mut fresh) = (Vec::with_capacity(ids.len()), Vec::new());
    for (&id, file) in ids.iter().zip(&mut head.streams) {
        let first = file.raw.first_ordinal;
        let count = store.sample_count(id).saturating_sub(first);
        file.raw.samples = count;
        let n = file.meta.series.len();
        let sealed = state.sealed.get(&id);
        let mut list = Vec::new();
        for (ord, k) in chunks_of(first, count) {
            if let Some(w) = sealed.and_then(|m| m.get(&(ord, k))) {
                list.push(Piece::Old { key: (ord, k), w: *w });
                continue;
            }
            let raw = store.raw_between(id, ord, ord + k as u64).unwrap_or_default();
            let from = fresh.len();
            convert::encode_chunk(&raw.timestamps, &raw.values, n, &mut fresh);
            let key = (ord + k as u64).is_multiple_of(CHUNK).then_some((ord, k));
            list.push(Piece::New { from, len: fresh.len() - from, key });
        }
        pieces.push(list);
    }
    Plan { ids, pieces, fresh, head }
}

/// Appends frames, counting where they go.
struct Frames<W: Write> {
    w: W,
    pos: u64,
}

impl<W: Write> Frames<W> {
    /// Writes one frame; its place in the file.
    fn put(&mut self, kind: u8, payload: &[u8]) -> std::io::Result<Written> {
        let mut head = [0u8; FRAME_HEAD];
        head[0] = kind;
        head[1..].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        let sum = !crc::update(crc::update(!0, &head), payload);
        self.w.write_all(&head)?;
        self.w.write_all(payload)?;
        self.w.write_all(&sum.to_le_bytes())?;
        let at = self.pos;
        self.pos += payload.len() as u64 + FRAME_EXTRA;
        Ok(Written { at, len: payload.len() as u64 })
    }
}

/// Waits at the test hook's point `at` of checkpoint `n` (module docs).
fn pause(hook: Option<&Path>, n: u64, at: &str) {
    let Some(dir) = hook else { return };
    let _ = File::create(dir.join(format!("{n}-{at}")));
    let go = dir.join(format!("{n}-{at}.go"));
    while dir.is_dir() && !go.exists() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// What writing a checkpoint's chunk frames gives: the head frame's payload, the whole chunks
/// the file keeps and the bytes of the frames the head names (without the head's).
type Written3 = (Vec<u8>, HashMap<StreamId, HashMap<(u64, usize), Written>>, u64);

/// Writes the chunk frames of `plan` to `f`: the new ones, and with `copy_from` (a new file) the
/// old ones copied out of the journal; the head's payload names them all.
fn put_chunks(
    f: &mut Frames<&mut dyn Write>,
    plan: &Plan,
    copy_from: Option<&File>,
    path: &Path,
) -> Result<Written3, SessionError> {
    let enc = |e: std::io::Error| SessionError::io(path, "cannot write", e);
    let mut offsets: Vec<Vec<u64>> = Vec::with_capacity(plan.pieces.len());
    let mut sealed: HashMap<StreamId, HashMap<(u64, usize), Written>> = HashMap::new();
    let mut live = 0u64;
    for (id, list) in plan.ids.iter().zip(&plan.pieces) {
        let mut at = Vec::with_capacity(list.len());
        for p in list {
            let (w, key) = match (p, copy_from) {
                // Kept in place when appending; copied as it is into a new file.
                (Piece::Old { key, w }, None) => (*w, Some(*key)),
                (Piece::Old { key, w }, Some(file)) => {
                    let bytes = w.read(file).map_err(|e| SessionError::io(path, "cannot read the journal", e))?;
                    (f.put(CHUNK_FRAME, &bytes).map_err(enc)?, Some(*key))
                }
                (Piece::New { from, len, key }, _) => {
                    (f.put(CHUNK_FRAME, &plan.fresh[*from..from + len]).map_err(enc)?, *key)
                }
            };
            if let Some(k) = key {
                sealed.entry(*id).or_default().insert(k, w);
            }
            live += w.frame_len();
            at.push(w.at);
        }
        offsets.push(at);
    }
    let head = HeadRef { chunks: &offsets, session: &plan.head };
    let text = ron::Options::default()
        .to_string_pretty(&head, ron::ser::PrettyConfig::new().escape_strings(false))
        .map_err(|e| SessionError::Encode(e.to_string()))?;
    Ok((text.into_bytes(), sealed, live))
}

/// [`JournalHead`] as written, borrowed.
#[derive(Serialize)]
struct HeadRef<'a> {
    chunks: &'a [Vec<u64>],
    session: &'a SessionFile,
}

/// Writes a checkpoint's frames (appended, or a new file: module docs) and updates `state`.
fn write_checkpoint(
    state: &mut State,
    plan: Plan,
    path: &Path,
    (hook, compact_min): (Option<&Path>, u64),
) -> Result<(), SessionError> {
    let n = state.count + 1;
    let start = prelude().len() as u64;
    let garbage = state.end.saturating_sub(start + state.live);
    let enc = |e: std::io::Error| SessionError::io(path, "cannot write", e);
    let (sealed, live) = match state.file.take() {
        Some(file) if garbage <= state.live.max(compact_min) => {
            // Appended: half, the hook's pause, the rest, then synced.
            let mut buf = Vec::new();
            let mut f: Frames<&mut dyn Write> = Frames { w: &mut buf, pos: state.end };
            let (head, sealed, live) = put_chunks(&mut f, &plan, None, path)?;
            let h = f.put(HEAD_FRAME, &head).map_err(enc)?;
            let end = f.pos;
            let half = buf.len() / 2;
            let written = file
                .write_all_at(&buf[..half], state.end)
                .and_then(|_| {
                    pause(hook, n, "mid");
                    file.write_all_at(&buf[half..], state.end + half as u64)
                })
                .map_err(enc)
                .and_then(|_| file.sync_data().map_err(|e| SessionError::io(path, "cannot sync", e)));
            state.file = Some(file);
            written?;
            state.end = end;
            (sealed, live + h.frame_len())
        }
        old => {
            let mut out = None;
            let file = io::replace_keeping(path, |file| {
                let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
                w.write_all(prelude().as_bytes()).map_err(enc)?;
                let mut f: Frames<&mut dyn Write> = Frames { w: &mut w, pos: start };
                let (head, sealed, live) = put_chunks(&mut f, &plan, old.as_ref(), path)?;
                let h = f.put(HEAD_FRAME, &head).map_err(enc)?;
                out = Some((f.pos, sealed, live + h.frame_len()));
                pause(hook, n, "mid");
                w.flush().map_err(enc)
            })?;
            let (end, sealed, live) = out.ok_or_else(|| SessionError::Encode("internal: nothing written".into()))?;
            state.file = Some(file);
            state.end = end;
            (sealed, live)
        }
    };
    state.sealed = sealed;
    state.live = live;
    state.count = n;
    pause(hook, n, "done");
    Ok(())
}

#[cfg(test)]
mod tests;
