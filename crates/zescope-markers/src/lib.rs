//! Mark what a workload is doing, for zescope: instants (`instant("checkpoint")`) and named ranges
//! (`begin("phase 2")` … `end("phase 2")`), shown on zescope's plots on the same time axis as the
//! GPU's counters and saved with its sessions.
//!
//! Each marker is one datagram of the text protocol in [`protocol`], sent over a non-blocking Unix
//! datagram socket to the path in `ZESCOPE_MARKERS` (zescope sets it for programs it starts), else
//! to `$XDG_RUNTIME_DIR/zescope/markers.sock` (where zescope listens by default). Sending never
//! blocks and never fails the caller. When zescope's queue is full (the kernel queues only
//! `net.unix.max_dgram_qlen` datagrams, often 10) up to [`PENDING`] markers wait in the sender and
//! go out in order, with the time they were stamped, before the next marker or on
//! [`Sender::flush`]; past that, and when nobody listens, markers are dropped and counted
//! ([`Sender::counts`]). When nobody listens a send costs a clock read and a compare (it tries to
//! connect again at most every 100 ms).
//!
//! ```no_run
//! let m = zescope_markers::Sender::connect();
//! m.begin("solve");
//! // ... the work ...
//! m.end("solve");
//! m.instant("converged");
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod clock;
pub mod protocol;

use std::collections::VecDeque;
use std::io;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

pub use clock::monotonic_ns;
pub use protocol::Kind;

/// The environment variable naming the socket.
pub const ENV: &str = "ZESCOPE_MARKERS";

/// Markers that wait in the sender, at most, while zescope's queue is full.
pub const PENDING: usize = 256;

/// How long a sender waits before trying to connect again after nobody listened.
const RETRY_NS: u64 = 100_000_000;

/// Where markers go: `$ZESCOPE_MARKERS` if set and not empty, else
/// `$XDG_RUNTIME_DIR/zescope/markers.sock`, else `/tmp/zescope-<uid>/markers.sock` (the same
/// rule zescope uses to choose where to listen). `None` only when the user id cannot be read.
pub fn socket_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(d).join("zescope").join("markers.sock"));
    }
    use std::os::unix::fs::MetadataExt as _;
    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    Some(PathBuf::from(format!("/tmp/zescope-{uid}/markers.sock")))
}

/// What happened to markers sent so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendCounts {
    /// Handed to zescope's socket.
    pub sent: u64,
    /// Dropped because nobody listened (no socket, or nobody behind it).
    pub not_listening: u64,
    /// Dropped because zescope's queue was full and [`PENDING`] markers waited already.
    pub queue_full: u64,
    /// Waiting for room in zescope's queue now.
    pub pending: u64,
    /// Not sent: the name was empty or held control characters.
    pub bad_name: u64,
}

/// A sender of markers; cheap to share between threads (`&self` methods, atomic counters).
pub struct Sender {
    path: Option<PathBuf>,
    sock: Option<UnixDatagram>,
    connected: AtomicBool,
    retry_at: AtomicU64,
    sent: AtomicU64,
    not_listening: AtomicU64,
    queue_full: AtomicU64,
    bad_name: AtomicU64,
    /// Encoded markers waiting for room, oldest first; `waiting` is their number, read without
    /// the lock on the fast path.
    queue: Mutex<VecDeque<([u8; protocol::MAX_MESSAGE], usize)>>,
    waiting: AtomicUsize,
}

impl Sender {
    /// A sender to [`socket_path`]. Never fails: without a path or a socket, markers are dropped
    /// and counted.
    pub fn connect() -> Sender {
        Sender::connect_to(socket_path())
    }

    /// A sender to `path` (`None`: drop everything).
    pub fn connect_to(path: Option<PathBuf>) -> Sender {
        let sock = UnixDatagram::unbound().and_then(|s| s.set_nonblocking(true).map(|()| s)).ok();
        let m = Sender {
            path,
            sock,
            connected: AtomicBool::new(false),
            retry_at: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            not_listening: AtomicU64::new(0),
            queue_full: AtomicU64::new(0),
            bad_name: AtomicU64::new(0),
            queue: Mutex::new(VecDeque::new()),
            waiting: AtomicUsize::new(0),
        };
        m.try_connect(monotonic_ns());
        m
    }

    /// The socket markers go to.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Marks an instant, now.
    pub fn instant(&self, name: &str) {
        self.send(Kind::Instant, monotonic_ns(), name);
    }

    /// Begins the range `name`, now.
    pub fn begin(&self, name: &str) {
        self.send(Kind::Begin, monotonic_ns(), name);
    }

    /// Ends the newest open range `name`, now.
    pub fn end(&self, name: &str) {
        self.send(Kind::End, monotonic_ns(), name);
    }

    /// Sends a marker stamped `t_ns` (ns of `CLOCK_MONOTONIC`, as [`monotonic_ns`] reads it);
    /// `true` when the socket took it or it waits its turn (see the crate docs). A name longer
    /// than [`protocol::MAX_NAME`] bytes is cut.
    pub fn send(&self, kind: Kind, t_ns: u64, name: &str) -> bool {
        if self.sock.is_none() {
            self.not_listening.fetch_add(1, Relaxed);
            return false;
        }
        if name.is_empty() || name.chars().any(char::is_control) {
            self.bad_name.fetch_add(1, Relaxed);
            return false;
        }
        if !self.connected.load(Relaxed) && !self.try_connect(t_ns) {
            self.not_listening.fetch_add(1, Relaxed);
            return false;
        }
        let mut buf = [0u8; protocol::MAX_MESSAGE];
        let n = protocol::encode(&mut buf, kind, t_ns, name);
        if self.waiting.load(Relaxed) == 0
            && let Some(sent) = self.send_or_count(&buf[..n])
        {
            return sent;
        }
        // The queue is full, or others wait: in line behind them.
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        self.flush_locked(&mut q);
        if q.is_empty()
            && self.connected.load(Relaxed)
            && let Some(sent) = self.send_or_count(&buf[..n])
        {
            return sent;
        }
        if q.len() >= PENDING || !self.connected.load(Relaxed) {
            self.queue_full.fetch_add(1, Relaxed);
            return false;
        }
        q.push_back((buf, n));
        self.waiting.store(q.len(), Relaxed);
        true
    }

    /// [`Sender::try_send`] with nobody listening counted: `Some(true)` sent, `Some(false)` nobody
    /// listens (counted), `None` the socket's queue is full (the marker may wait its turn).
    fn send_or_count(&self, msg: &[u8]) -> Option<bool> {
        match self.try_send(msg) {
            Some(true) => Some(true),
            Some(false) => None,
            None => {
                self.not_listening.fetch_add(1, Relaxed);
                Some(false)
            }
        }
    }

    /// One datagram: `Some(true)` sent, `Some(false)` the queue is full, `None` nobody listens
    /// any more (then the next marker connects again, to whoever listens at the path by then).
    fn try_send(&self, msg: &[u8]) -> Option<bool> {
        match self.sock.as_ref()?.send(msg) {
            Ok(_) => {
                self.sent.fetch_add(1, Relaxed);
                Some(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Some(false),
            Err(_) => {
                self.connected.store(false, Relaxed);
                self.retry_at.store(0, Relaxed);
                None
            }
        }
    }

    fn flush_locked(&self, q: &mut VecDeque<([u8; protocol::MAX_MESSAGE], usize)>) {
        while let Some((buf, n)) = q.front() {
            if !self.connected.load(Relaxed) || self.try_send(&buf[..*n]) != Some(true) {
                break;
            }
            q.pop_front();
        }
        self.waiting.store(q.len(), Relaxed);
    }

    /// Sends the markers that wait, in order, until zescope's queue is full again; returns how
    /// many still wait (call it again later, before exiting, if the last markers matter).
    pub fn flush(&self) -> usize {
        if self.waiting.load(Relaxed) == 0 {
            return 0;
        }
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        self.flush_locked(&mut q);
        q.len()
    }

    /// Connects when it is time to try again; whether the socket is connected afterwards.
    fn try_connect(&self, now: u64) -> bool {
        if now < self.retry_at.load(Relaxed) {
            return false;
        }
        let ok = match (&self.sock, &self.path) {
            (Some(s), Some(p)) => s.connect(p).is_ok(),
            _ => false,
        };
        self.connected.store(ok, Relaxed);
        if !ok {
            self.retry_at.store(now.saturating_add(RETRY_NS), Relaxed);
        }
        ok
    }

    /// What happened to the markers sent so far.
    pub fn counts(&self) -> SendCounts {
        SendCounts {
            sent: self.sent.load(Relaxed),
            not_listening: self.not_listening.load(Relaxed),
            queue_full: self.queue_full.load(Relaxed),
            bad_name: self.bad_name.load(Relaxed),
            pending: self.waiting.load(Relaxed) as u64,
        }
    }
}

impl Drop for Sender {
    /// One last try for the markers that wait (without waiting for room).
    fn drop(&mut self) {
        self.flush();
    }
}

/// The process's shared sender, connected on first use: for `zescope_markers::instant("x")`
/// without keeping a [`Sender`] around.
pub fn global() -> &'static Sender {
    static GLOBAL: OnceLock<Sender> = OnceLock::new();
    GLOBAL.get_or_init(Sender::connect)
}

/// Marks an instant through [`global`].
pub fn instant(name: &str) {
    global().instant(name);
}

/// Begins a range through [`global`].
pub fn begin(name: &str) {
    global().begin(name);
}

/// Ends a range through [`global`].
pub fn end(name: &str) {
    global().end(name);
}

/// Sends one marker to `path` now and says why not when it could not: for a command line
/// (`zescope mark`), which should tell its user that nobody listens rather than drop silently.
pub fn send_once(path: &Path, kind: Kind, name: &str) -> io::Result<()> {
    if let Some(problem) = protocol::name_problem(name) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("the name {problem}")));
    }
    let sock = UnixDatagram::unbound()?;
    sock.set_nonblocking(true)?;
    sock.connect(path)?;
    let mut buf = [0u8; protocol::MAX_MESSAGE];
    let n = protocol::encode(&mut buf, kind, monotonic_ns(), name);
    sock.send(&buf[..n])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_reach_a_listener_in_order_and_drops_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.sock");
        let _ = std::fs::remove_file(&path);
        // Nobody listens yet: dropped and counted, without an error.
        let m = Sender::connect_to(Some(path.clone()));
        m.instant("lost");
        assert_eq!(m.counts().not_listening, 1);
        let rx = UnixDatagram::bind(&path).unwrap();
        // The sender tries again only after RETRY_NS.
        std::thread::sleep(std::time::Duration::from_nanos(RETRY_NS + 1_000_000));
        let before = monotonic_ns();
        m.begin("a b");
        m.end("a b");
        assert!(!m.send(Kind::Instant, 1, "bad\nname"));
        let mut buf = [0u8; 512];
        let n = rx.recv(&mut buf).unwrap();
        let first = protocol::parse(&buf[..n]).unwrap();
        assert_eq!((first.kind, first.name), (Kind::Begin, "a b"));
        assert!(first.t_ns >= before && first.t_ns <= monotonic_ns());
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(protocol::parse(&buf[..n]).unwrap().kind, Kind::End);
        assert_eq!(m.counts(), SendCounts { sent: 2, not_listening: 1, queue_full: 0, bad_name: 1, pending: 0 });
        // A full queue: markers wait in the sender, then are dropped, never blocking.
        let mut i = 0u64;
        while m.send(Kind::Instant, i, "x") {
            i += 1;
            assert!(i < 100_000, "the receive queue never filled");
        }
        let s = m.counts();
        assert_eq!((s.queue_full, s.pending), (1, PENDING as u64));
        // Drained, they follow in order, with their own times.
        let mut next = 0u64;
        let mut n_read = 0;
        while m.flush() > 0 || n_read < i {
            let n = rx.recv(&mut buf).unwrap();
            let msg = protocol::parse(&buf[..n]).unwrap();
            assert_eq!(msg.t_ns, next);
            next += 1;
            n_read += 1;
        }
        assert_eq!((m.counts().pending, n_read), (0, i));
        drop(rx);
        std::fs::remove_file(&path).unwrap();
        assert!(send_once(&path, Kind::Instant, "x").is_err());
    }
}
