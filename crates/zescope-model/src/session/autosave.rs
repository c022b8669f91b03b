//! Autosave and crash recovery: a running session is checkpointed to the XDG
//! state directory (`~/.local/state/zescope/autosave/`), and after a crash
//! the next start finds the checkpoint and offers to recover it.
//!
//! Checkpoints are incremental, so one every ~30 s stays cheap however long
//! the session: raw data is cut into chunks aligned to 4096-sample ordinals
//! (as in session files), each chunk is a file of its own, and a chunk whose
//! samples are all in is written once and never again (the growing last chunk
//! is written again under a new name while it grows). A checkpoint copies out
//! of the store only the samples not yet in a file
//! (`Store::stream_data_from`; the caller's thread pays for those and for the
//! coarse summaries, not for the whole history), then a background thread
//! encodes them, writes the new chunk files (fsynced) and finally replaces
//! `checkpoint.ron` atomically. Chunk files no longer referenced (coarsened
//! away, or a last chunk that grew) are deleted.
//!
//! The format is the session file's current one (`docs/session-format.md`): each chunk file
//! holds exactly the bytes a session's data section holds for that chunk (packed columns and
//! their CRC-32C), and `checkpoint.ron` is a session head (coarse chunks sealed) wrapped with
//! the list of each stream's chunk files; recovery joins the chunk files into a data section and
//! loads it through the same checks as a session file. Checkpoints of version 1 (chunk files of
//! base64 text before inline chunks), as older zescope versions wrote them, still recover.
//!
//! Each running zescope has its own directory (`<pid>-<ms>/`) holding a
//! `lock` file it keeps locked; a directory whose lock can be taken belongs to
//! a zescope that is gone, so its checkpoint is recoverable. A clean exit
//! calls [`Autosaver::discard`].
//!
//! The autosave root lives in a user-writable place, so the recovery scan treats what it finds
//! there as untrusted:
//! - the root must belong to the current user and not be writable by group or others (it is
//!   created `0700`); otherwise the scan and the autosaver refuse it with a message, since
//!   anybody who can write there could swap entries between a check and a use;
//! - an entry is used only when it is a real directory (`symlink_metadata`) owned by the user;
//!   links and anything else are skipped, never followed, and no `lock` is created in them; the
//!   `lock`, `checkpoint.ron` and chunk files are opened with `O_NOFOLLOW`, so a link planted
//!   inside an entry is refused, not followed, and with `O_NONBLOCK`, so a FIFO planted there is
//!   refused instead of blocking the scan;
//! - reading a checkpoint checks each size before reading: `checkpoint.ron` at most
//!   [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES), one chunk file at most 64 MiB, all chunk files
//!   together at most [`MAX_CHUNK_BYTES`]; a chunk file named twice (in one stream or across
//!   streams) is refused. Memory: the checkpoint text and its chunk texts (at most
//!   `MAX_FILE_BYTES + MAX_CHUNK_BYTES`), then what decoding a session of that size takes (see
//!   `io.rs`: about 9× the text plus a constant).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};

use zescope_store::{Store, StreamId};

use super::convert::{self, chunk_sizes};
use super::format::SessionFile;
use super::{Capture, Session, SessionError, io};

const CHECKPOINT: &str = "checkpoint.ron";
const LOCK: &str = "lock";
const AUTOSAVE_FORMAT: &str = "zescope-autosave";
/// Largest chunk file read back.
const MAX_CHUNK_FILE: u64 = 64 << 20;
/// Most bytes all the chunk files of one checkpoint may hold together.
pub const MAX_CHUNK_BYTES: u64 = 16 << 30;

/// Refuse an autosave root that someone else could write to (see the module docs).
pub fn check_root(root: &Path) -> Result<(), SessionError> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(root).map_err(io_err(root, "cannot stat"))?;
    let field = || root.display().to_string();
    if !m.is_dir() {
        return Err(SessionError::invalid(field(), "is not a directory"));
    }
    let me = current_uid();
    if m.uid() != me {
        return Err(SessionError::invalid(
            field(),
            format!("belongs to user {}, not to you (user {me}); autosave and recovery are off", m.uid()),
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(SessionError::invalid(
            field(),
            format!(
                "is writable by group or others (mode {:o}); autosave and recovery are off until `chmod go-w` on it",
                m.mode() & 0o7777
            ),
        ));
    }
    Ok(())
}

/// The effective user id, from the owner of `/proc/self` (no `unsafe` needed).
fn current_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid())
}

/// Create `dir` (and missing parents) readable and writable by the user only.
fn create_private_dir(dir: &Path) -> Result<(), SessionError> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(io_err(dir, "cannot create"))
}

/// Open (creating) `dir/lock` without following a link there. Non-blocking, and only a regular
/// file: a FIFO planted as `lock` would otherwise block the open until a reader came.
fn open_lock(dir: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(dir.join(LOCK))?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "lock is not a regular file"));
    }
    Ok(f)
}

/// The autosave root: `$XDG_STATE_HOME/zescope/autosave` (or the platform's equivalent).
pub fn autosave_root() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "zescope")?;
    let base = dirs.state_dir().unwrap_or_else(|| dirs.data_local_dir());
    Some(base.join("autosave"))
}

/// `checkpoint.ron`: a session head plus each stream's chunk files, in order (version 1: the
/// chunk files that come before each stream's inline raw chunks).
#[derive(Serialize, Deserialize)]
struct Checkpoint {
    format: String,
    saved_unix_ms: i64,
    chunk_files: Vec<Vec<String>>,
    session: SessionFile,
}

/// A chunk already in a file: `(first ordinal, samples)` and the file name.
type Cached = ((u64, usize), String);

/// What a background checkpoint gives back: each stream's chunk files.
type Outcome = Result<BTreeMap<StreamId, Vec<Cached>>, SessionError>;

/// What a background checkpoint writes.
struct Work {
    dir: PathBuf,
    session: Session,
    /// Per stream: chunk files kept, and where the copied samples start among the chunks.
    kept: Vec<Vec<Cached>>,
    /// Per stream: a key for file names.
    keys: Vec<u64>,
    old_files: Vec<String>,
}

/// Checkpoints one running session (see the module docs).
pub struct Autosaver {
    dir: PathBuf,
    _lock: File,
    /// Per store stream: its chunk files, in order.
    cache: BTreeMap<StreamId, Vec<Cached>>,
    job: Option<JoinHandle<Outcome>>,
    /// Distinguishes this autosaver's files from an earlier one's in the same directory.
    epoch: u64,
}

fn io_err<'a>(path: &'a Path, what: &'static str) -> impl FnOnce(std::io::Error) -> SessionError + 'a {
    move |e| SessionError::io(path, what, e)
}

impl Autosaver {
    /// An autosaver in [`autosave_root`].
    pub fn new() -> Result<Autosaver, SessionError> {
        let root = autosave_root().ok_or(SessionError::invalid("autosave", "no home or state directory"))?;
        Autosaver::in_root(&root)
    }

    /// An autosaver with its directory under `root`.
    pub fn in_root(root: &Path) -> Result<Autosaver, SessionError> {
        create_private_dir(root)?;
        check_root(root)?;
        let dir = root.join(format!("{}-{}", std::process::id(), super::unix_ms_now()));
        std::fs::DirBuilder::new().mode(0o700).create(&dir).map_err(io_err(&dir, "cannot create"))?;
        let lock_path = dir.join(LOCK);
        let lock = open_lock(&dir).map_err(io_err(&lock_path, "cannot create"))?;
        lock.try_lock().map_err(|e| SessionError::invalid(lock_path.display().to_string(), e.to_string()))?;
        Ok(Autosaver { dir, _lock: lock, cache: BTreeMap::new(), job: None, epoch: 0 })
    }

    /// This instance's checkpoint directory (one per running zescope, inside the autosave root).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The outcome of the last background checkpoint, once it is over.
    pub fn poll(&mut self) -> Option<Result<(), SessionError>> {
        if !self.job.as_ref().is_some_and(JoinHandle::is_finished) {
            return None;
        }
        let outcome = self.job.take()?.join().unwrap_or_else(|_| Err(SessionError::Encode("autosave panicked".into())));
        Some(match outcome {
            Ok(cache) => {
                self.cache = cache;
                Ok(())
            }
            Err(e) => {
                // Start over at the next checkpoint.
                self.cache.clear();
                self.epoch += 1;
                Err(e)
            }
        })
    }

    /// Start a checkpoint of `store` described by `ui`: copies what is new
    /// here, writes on a background thread. Returns false (doing nothing)
    /// while the previous checkpoint is still being written.
    pub fn checkpoint(&mut self, store: &Store, ui: Capture<'_>) -> bool {
        if self.job.is_some() {
            let _ = self.poll();
            if self.job.is_some() {
                return false;
            }
        }
        let mut kept = Vec::new();
        let mut keys = Vec::new();
        let mut old_files: Vec<String> = self.cache.values().flatten().map(|c| c.1.clone()).collect();
        let session = Session::capture_with(store, ui, |id| {
            let total = store.sample_count(id);
            let raw = store.retention(id)?.spans.iter().find(|s| s.level == 0).map_or(0, |s| s.samples);
            let bounds = chunks_of(total - raw, raw);
            let cached = self.cache.get(&id).map_or(&[][..], Vec::as_slice);
            // Chunks whose bounds are unchanged and complete stay in their files.
            // (Cached chunks are complete, so a match is never the growing last chunk.)
            let reuse = cached.iter().zip(&bounds).take_while(|(c, l)| c.0 == **l).count();
            let keep: Vec<Cached> = cached[..reuse].to_vec();
            let from = bounds.get(reuse).map_or(total, |l| l.0);
            kept.push(keep);
            keys.push(id_key(id, self.epoch));
            store.stream_data_from(id, from)
        });
        let still: std::collections::HashSet<&String> = kept.iter().flatten().map(|c| &c.1).collect();
        old_files.retain(|f| !still.contains(&f));
        let ids: Vec<StreamId> = store.streams().map(|s| s.id).collect();
        let work = Work { dir: self.dir.clone(), session, kept, keys, old_files };
        self.job = Some(std::thread::spawn(move || {
            let per_stream = write_checkpoint(work)?;
            Ok(ids.into_iter().zip(per_stream).collect())
        }));
        true
    }

    /// Wait for the checkpoint in progress (tests, exit).
    pub fn wait(&mut self) -> Result<(), SessionError> {
        if let Some(h) = &self.job {
            while !h.is_finished() {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
        self.poll().unwrap_or(Ok(()))
    }

    /// Forget what was written (the store was replaced): the next checkpoint
    /// writes everything again. One autosaver follows one store.
    pub fn reset(&mut self) {
        let _ = self.wait();
        self.cache.clear();
        self.epoch += 1;
    }

    /// The session ended cleanly: remove its checkpoint.
    pub fn discard(mut self) {
        let _ = self.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn id_key(id: StreamId, epoch: u64) -> u64 {
    // StreamId is opaque; its debug form is stable within a run.
    let digits: String = format!("{id:?}").chars().filter(char::is_ascii_digit).collect();
    digits.parse::<u64>().unwrap_or(0) << 16 | (epoch & 0xffff)
}

/// `(first ordinal, samples)` of each chunk of raw samples `first..first + n`.
fn chunks_of(first: u64, n: u64) -> Vec<(u64, usize)> {
    let mut at = first;
    chunk_sizes(first, n)
        .map(|k| {
            let c = (at, k);
            at += k as u64;
            c
        })
        .collect()
}

/// Encode and write one checkpoint; returns each stream's chunk files.
fn write_checkpoint(w: Work) -> Result<Vec<Vec<Cached>>, SessionError> {
    let mut files_per_stream: Vec<Vec<Cached>> = Vec::new();
    let mut chunk_files = Vec::new();
    let mut streams = Vec::new();
    for ((s, keep), key) in w.session.streams.iter().zip(w.kept).zip(&w.keys) {
        let d = &s.data;
        let n = d.desc.series.len();
        let raw_first = d.raw.first_ordinal;
        let copied = d.raw.timestamps.len() as u64;
        let start = keep.last().map_or(raw_first, |c| c.0.0 + c.0.1 as u64);
        let bounds = chunks_of(start, copied);
        let mut files = keep;
        let mut at = 0usize;
        let mut bytes = Vec::new();
        for &(ord, k) in &bounds {
            bytes.clear();
            convert::encode_chunk(&d.raw.timestamps[at..at + k], &d.raw.values[at * n..(at + k) * n], n, &mut bytes);
            at += k;
            let name = format!("c-{key:x}-{ord}-{k}.bin");
            let path = w.dir.join(&name);
            let mut f = File::create(&path).map_err(io_err(&path, "cannot create"))?;
            f.write_all(&bytes).and_then(|_| f.sync_all()).map_err(io_err(&path, "cannot write"))?;
            files.push(((ord, k), name));
        }
        let mut file = convert::encode_stream(s, Vec::new(), super::format::CURRENT_VERSION);
        file.raw.samples = start - raw_first + copied;
        chunk_files.push(files.iter().map(|c| c.1.clone()).collect());
        files_per_stream.push(files);
        streams.push(file);
    }
    File::open(&w.dir).and_then(|d| d.sync_all()).map_err(io_err(&w.dir, "cannot sync"))?;
    let mut session = convert::encode_head(&Session { streams: Vec::new(), ..w.session });
    session.streams = streams;
    let cp = Checkpoint { format: AUTOSAVE_FORMAT.into(), saved_unix_ms: super::unix_ms_now(), chunk_files, session };
    let path = w.dir.join(CHECKPOINT);
    io::write_atomic(&path, |f| {
        let mut bw = std::io::BufWriter::new(f);
        ron::Options::default()
            .to_io_writer_pretty(&mut bw, &cp, ron::ser::PrettyConfig::new().escape_strings(false))
            .map_err(|e| SessionError::Encode(e.to_string()))?;
        bw.flush().map_err(|e| SessionError::Encode(e.to_string()))
    })?;
    let current: std::collections::HashSet<&String> = chunk_files_all(&files_per_stream).collect();
    for f in w.old_files.iter().filter(|f| !current.contains(f)) {
        let _ = std::fs::remove_file(w.dir.join(f));
    }
    Ok(files_per_stream)
}

fn chunk_files_all(per_stream: &[Vec<Cached>]) -> impl Iterator<Item = &String> {
    per_stream.iter().flatten().map(|c| &c.1)
}

/// A checkpoint left by a zescope that did not exit cleanly.
#[derive(Debug)]
pub struct Recoverable {
    /// The checkpoint's directory (the dead instance's entry in the autosave root).
    pub dir: PathBuf,
    /// When it was written (Unix ms).
    pub saved_unix_ms: i64,
    _lock: File,
}

/// The most recent recoverable checkpoint in [`autosave_root`]. A root that cannot be trusted
/// is logged and gives none.
pub fn find_recoverable() -> Option<Recoverable> {
    find_recoverable_in(&autosave_root()?).into_iter().next()
}

/// Recoverable checkpoints under `root`, newest first (see [`scan_recoverable`]); a missing
/// root gives none, a root that cannot be trusted is logged and gives none.
pub fn find_recoverable_in(root: &Path) -> Vec<Recoverable> {
    if !root.exists() {
        return Vec::new();
    }
    scan_recoverable(root).unwrap_or_else(|e| {
        log::warn!("crash recovery skipped: {e}");
        Vec::new()
    })
}

/// Recoverable checkpoints under `root`, newest first, after checking the root
/// ([`check_root`]). Only real directories owned by the user are looked into (see the module
/// docs); leftover directories without a checkpoint are removed.
pub fn scan_recoverable(root: &Path) -> Result<Vec<Recoverable>, SessionError> {
    use std::os::unix::fs::MetadataExt;
    check_root(root)?;
    let me = current_uid();
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root).map_err(io_err(root, "cannot list"))?.flatten() {
        let dir = entry.path();
        // `DirEntry::metadata` does not follow links.
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.file_type().is_dir() || meta.uid() != me {
            log::warn!("autosave: skipping {} (not a directory of yours)", dir.display());
            continue;
        }
        let Ok(lock) = open_lock(&dir) else { continue };
        if lock.try_lock().is_err() {
            continue; // a running zescope's
        }
        let checkpoint = dir.join(CHECKPOINT);
        match std::fs::symlink_metadata(&checkpoint) {
            Ok(m) if m.is_file() => {
                let ms = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                found.push(Recoverable { dir, saved_unix_ms: ms.map_or(0, |d| d.as_millis() as i64), _lock: lock });
            }
            Ok(_) => log::warn!("autosave: {} is not a regular file; left alone", checkpoint.display()),
            Err(_) => {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
    found.sort_by_key(|r| std::cmp::Reverse(r.saved_unix_ms));
    Ok(found)
}

/// Whether `name` can be a chunk file this module wrote: a plain name in the directory.
fn is_chunk_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name != LOCK
        && name != CHECKPOINT
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// Check a checkpoint's text and gather its chunk files through `read_chunk` (name → bytes),
/// then decode it as a session. `origin` names the checkpoint in errors. The checks: the
/// autosave format, one chunk list per stream, chunk names plain and never repeated, the
/// chunks' total size at most [`MAX_CHUNK_BYTES`], then every check of a session file.
#[doc(hidden)]
pub fn checkpoint_from_text(
    origin: &str,
    text: &str,
    mut read_chunk: impl FnMut(&str) -> Result<Vec<u8>, SessionError>,
) -> Result<Session, SessionError> {
    let mut cp: Checkpoint = ron::Options::default().from_str(text).map_err(|e| SessionError::Invalid {
        field: format!("{origin}, line {}, column {}", e.span.start.line, e.span.start.col),
        message: e.code.to_string(),
    })?;
    if cp.format != AUTOSAVE_FORMAT || cp.chunk_files.len() != cp.session.streams.len() {
        return Err(SessionError::NotASession(format!("{origin} is not a zescope checkpoint")));
    }
    let textual = cp.session.version == 1;
    let mut seen = std::collections::HashSet::new();
    let mut total = 0u64;
    // Version 2 on: the chunk files, joined as a session's data section.
    let mut data = Vec::new();
    for (i, (files, s)) in cp.chunk_files.iter().zip(&mut cp.session.streams).enumerate() {
        let field = || format!("{origin}: chunk_files[{i}]");
        if files.len() as u64 > (MAX_CHUNK_BYTES / 4).min(convert::MAX_VALUES) {
            return Err(SessionError::invalid(field(), format!("{} chunk files", files.len())));
        }
        let mut chunks = Vec::with_capacity(files.len() + s.raw.chunks.len());
        for f in files {
            if !is_chunk_name(f) {
                return Err(SessionError::invalid(field(), format!("{f:?} is not a chunk file")));
            }
            if !seen.insert(f.as_str()) {
                return Err(SessionError::invalid(field(), format!("chunk file {f:?} is named twice")));
            }
            let bytes = read_chunk(f)?;
            total += bytes.len() as u64;
            if total > MAX_CHUNK_BYTES {
                return Err(SessionError::invalid(
                    field(),
                    format!("chunk files hold more than {MAX_CHUNK_BYTES} bytes together"),
                ));
            }
            if textual {
                let text = String::from_utf8(bytes)
                    .map_err(|_| SessionError::invalid(field(), format!("chunk file {f:?} is not text")))?;
                chunks.push(text);
            } else {
                zescope_store::bits::put_varint(&mut data, bytes.len() as u64);
                data.extend_from_slice(&bytes);
            }
        }
        chunks.append(&mut s.raw.chunks);
        s.raw.chunks = chunks;
    }
    // The checkpoint's text and what parsing it made, and the chunks (read, and joined).
    let budget = convert::Budget { cap: super::default_memory_cap(), held: 2 * text.len() as u64 + 2 * total };
    let data = (!textual).then_some(&data[..]);
    convert::decode(cp.session, data, budget).map_err(|e| match e {
        SessionError::Invalid { field, message } => {
            SessionError::Invalid { field: format!("{origin}: {field}"), message }
        }
        SessionError::OverCap { field, message } => {
            SessionError::OverCap { field: format!("{origin}: {field}"), message }
        }
        SessionError::NotASession(m) => SessionError::NotASession(format!("{origin}: {m}")),
        e => e,
    })
}

impl Recoverable {
    /// Read and check the checkpoint as a session (bounds and links: see the module docs).
    pub fn load(&self) -> Result<Session, SessionError> {
        let path = self.dir.join(CHECKPOINT);
        let text = io::read_text_from(&path, super::MAX_FILE_BYTES, false)?;
        checkpoint_from_text(&path.display().to_string(), &text, |name| {
            io::read_bytes(&self.dir.join(name), MAX_CHUNK_FILE, false)
        })
    }

    /// Delete the checkpoint (recovered, or declined).
    pub fn discard(self) -> std::io::Result<()> {
        std::fs::remove_dir_all(&self.dir)
    }
}
