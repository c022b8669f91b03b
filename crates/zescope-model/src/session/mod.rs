//! Session files: everything needed to reopen a recording as it was, in one
//! RON file (`docs/session-format.md` documents it).
//!
//! - [`Session`] is a session in memory: metadata (when, where, which source
//!   and devices, how each run was configured), the view (panes, colours,
//!   visibility, window, follow/pause, zoom), markers, and each stream's whole
//!   history as the store exports it ([`StreamData`]).
//! - [`Session::capture`] takes one from the store and the UI's plain state;
//!   [`Session::restore_into`] rebuilds store streams from one and returns
//!   what the UI needs to show it again.
//! - [`save`] writes one atomically (never leaving a half-written file where
//!   the previous one was); [`SaveJob`] does it on a thread with progress.
//! - [`load`] reads one, refusing anything malformed with an error that names
//!   the field (and the line/column where RON gives one); nothing in a file
//!   can make it panic or allocate beyond caps and what the file really holds.
//! - [`LoadJob`] opens one on a thread progressively: the head first, then the samples in
//!   time order, a chunk at a time.
//! - [`autosave`] checkpoints a running session for crash recovery.
//! - [`journal`] keeps a recording's file recoverable while it records (format version 5),
//!   each checkpoint appending what is new.
//!
//! Why the data is not plain RON numbers: see `codec.rs`.

pub mod autosave;
mod capture;
mod chunks;
pub mod codec;
mod convert;
mod crc;
mod error;
pub mod format;
mod history;
mod io;
mod job;
pub mod journal;
mod journal_read;
mod load_job;
mod markers;
mod open;
mod packed;
mod processes;
mod recorder;

use std::path::Path;

pub use capture::{Capture, Restored};
pub(crate) use convert::Progress;
pub use crc::crc32c;
pub use error::SessionError;
pub use format::{
    ClockRecord, ComparisonRef, DevicePathRecord, DeviceRecord, KindRecord, Marker, ModeRecord, PaneRecord,
    RangeRecord, Recorded, RunRecord, SeriesMeta, SeriesRef, SourceRecord, SpanRecord, StreamMeta, ViewRecord,
    WindowRecord,
};
pub use history::RunHistory;
pub use history::unix_ms_now;
pub use io::{MAX_FILE_BYTES, check_writable, write_atomic};
pub use job::SaveJob;
pub use load_job::{
    HELD_CHUNK_BYTES, IN_FLIGHT, IN_FLIGHT_BYTES, LoadEvent, LoadHead, LoadJob, MAX_PIECE_BYTES, MIN_STORE,
    PIECE_BYTES, Piece,
};
pub use markers::{markers_from_file, markers_to_file};
pub use open::{Opened, open_into};
pub use processes::ProcessRecord;
pub use recorder::Recorder;

use zescope_store::StreamData;

/// A session in memory (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    /// When, on which host and by which zescope the session was recorded.
    pub recorded: Recorded,
    /// Where the samples came from (a Level Zero driver, the simulated device, a file).
    pub source: SourceRecord,
    /// The devices sampled; streams refer to them by index.
    pub devices: Vec<DeviceRecord>,
    /// Each start-to-stop run, with the configuration it was started with.
    pub runs: Vec<RunRecord>,
    /// How the window showed the data: panes, colours, visibility, time window, zoom.
    pub view: ViewRecord,
    /// Markers placed on the time axis.
    pub markers: Vec<Marker>,
    /// Time zero of the plots (ns on the recording's clock).
    pub origin_ns: Option<i64>,
    /// Another session to show beside this one (a reference to its file and time shift).
    pub comparison: Option<ComparisonRef>,
    /// The processes that used the devices (`processes.rs`), in the order first seen.
    pub processes: Vec<ProcessRecord>,
    /// Every stream's description and history, in the order the file holds them.
    pub streams: Vec<SessionStream>,
}

/// One stream: what it is and everything the store held of it.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionStream {
    /// What the stream is: device, group, series, units, kinds.
    pub meta: StreamMeta,
    /// Everything the store held of it (coarse history and full-resolution samples).
    pub data: StreamData,
}

impl Session {
    /// Values (samples x series) at full resolution, over all streams.
    pub fn raw_values(&self) -> u64 {
        self.streams.iter().map(|s| s.data.raw.values.len() as u64).sum()
    }
}

/// Save `session` to `path` atomically (see `io.rs`).
pub fn save(path: &Path, session: &Session) -> Result<(), SessionError> {
    save_with_progress(path, session, &Progress::default())
}

/// [`save`], reporting progress and honouring cancellation through `progress`.
pub fn save_with_progress(path: &Path, session: &Session, progress: &Progress) -> Result<(), SessionError> {
    io::write_atomic(path, |f| {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        write(session, progress, &mut w)?;
        std::io::Write::flush(&mut w).map_err(|e| SessionError::Encode(e.to_string()))
    })
}

/// Write a session as [`save`] does (the current version: the RON text, then the data section), streamed:
/// the samples are encoded a batch of chunks at a time.
fn write(session: &Session, progress: &Progress, w: &mut impl std::io::Write) -> Result<(), SessionError> {
    io::write_text_head(&convert::encode_head(session), w)?;
    convert::write_chunks(session, progress, w)
}

/// The bytes [`save`] writes.
pub fn to_bytes(session: &Session) -> Result<Vec<u8>, SessionError> {
    let mut out = Vec::new();
    write(session, &Progress::default(), &mut out)?;
    Ok(out)
}

/// A session as version 1 text: every chunk inline as base64 (what autosave checkpoints hold,
/// and what zescope wrote before version 2).
pub fn to_v1_string(session: &Session) -> Result<String, SessionError> {
    io::to_ron_string(&convert::encode(session, &Progress::default())?)
}

/// The memory cap a one-shot load holds to unless told another: the store's default cap (a
/// quarter of the smallest of physical memory, the address-space limit and the control group's
/// memory limit, at most 1 GiB), which the window and the commands use.
pub fn default_memory_cap() -> u64 {
    zescope_store::default_cap() as u64
}

/// Load and check a session file within [`default_memory_cap`] (see [`load_with_cap`]).
pub fn load(path: &Path) -> Result<Session, SessionError> {
    load_with_cap(path, default_memory_cap())
}

/// Load and check a session file within a memory cap of `cap` bytes (see
/// [`load_reporting`]); what the cap made it coarsen goes to the log.
pub fn load_with_cap(path: &Path, cap: u64) -> Result<Session, SessionError> {
    let (session, notice) = load_reporting(path, cap)?;
    if let Some(n) = notice {
        log::warn!("{}: {n}", path.display());
    }
    Ok(session)
}

/// Load and check a session file, holding at most about `cap` bytes for its samples. A file
/// whose samples fit is read whole and decoded at once: the file, its parsed text and its
/// decoded samples and coarse history within `cap`. A larger one — any file the format allows
/// — is opened as the window opens it ([`open_into`]), into a store of that cap, and its
/// oldest history coarsened until the decoded samples fit `cap`; the notice says what was.
/// `docs/untrusted-input.md` states the bounds; `tests/commands/hostile_bounds.rs` measures them.
pub fn load_reporting(path: &Path, cap: u64) -> Result<(Session, Option<String>), SessionError> {
    match io::read_bytes(path, MAX_FILE_BYTES.min(cap), true) {
        Ok(bytes) => match from_slice_with_cap(&bytes, cap) {
            Err(SessionError::OverCap { .. }) => {
                drop(bytes);
                load_coarsened(path, cap)
            }
            r => r.map(|s| (s, None)),
        },
        Err(SessionError::TooLarge { size, .. }) if size <= MAX_FILE_BYTES => load_coarsened(path, cap),
        Err(e) => Err(e),
    }
}

/// [`load_reporting`] for a file past the cap: through a store of that cap.
fn load_coarsened(path: &Path, cap: u64) -> Result<(Session, Option<String>), SessionError> {
    let mut store = zescope_store::Store::new(usize::try_from(cap).unwrap_or(usize::MAX));
    let mut opened = open_into(path, &mut store)?;
    let more = open::within_decoded(&mut store, cap);
    let mut session = opened.head;
    for (s, id) in session.streams.iter_mut().zip(&opened.restored.streams) {
        if let Some(data) = store.stream_data(*id) {
            s.data = data;
        }
    }
    if more {
        opened.notice = open::notice(&store, &opened.restored.streams, &opened.expected);
    }
    Ok((session, opened.notice))
}

/// Parse and check session text (a version 1 file, or a version 2 file without samples).
pub fn from_str(text: &str) -> Result<Session, SessionError> {
    from_slice(text.as_bytes())
}

/// Parse and check a session file's bytes (what [`load`] does after reading; the fuzz target's
/// entry), within [`default_memory_cap`].
pub fn from_slice(bytes: &[u8]) -> Result<Session, SessionError> {
    from_slice_with_cap(bytes, default_memory_cap())
}

/// [`from_slice`] within a memory cap of `cap` bytes, which `bytes` count against (as in
/// [`load_with_cap`]).
pub fn from_slice_with_cap(bytes: &[u8], cap: u64) -> Result<Session, SessionError> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(SessionError::TooLarge { file: "input".into(), size: bytes.len() as u64, max: MAX_FILE_BYTES });
    }
    let (text, data) = io::split(bytes)?;
    if data.is_some() && journal::is_journal(text) {
        // A recording's journal: its last whole checkpoint, as the version 7 file it stands for.
        let max = cap.saturating_sub(bytes.len() as u64);
        let image = journal_read::image(bytes, text.len() as u64, bytes.len() as u64, max)?;
        let (text, data) = io::split(&image)?;
        let held = (bytes.len() + image.len() + text.len()) as u64;
        return convert::decode(io::parse(text)?, data, convert::Budget { cap, held });
    }
    // The bytes, and the strings parsing the RON text makes (at most its length again).
    let held = (bytes.len() + text.len()) as u64;
    convert::decode(io::parse(text)?, data, convert::Budget { cap, held })
}
