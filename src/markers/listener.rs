//! The listener thread: reads datagrams, parses them, hands markers over a bounded channel and
//! counts what it drops. A flood cannot take more than its share of a CPU: while datagrams keep
//! coming it drains the socket every `BATCH` instead of being woken for each, and per 100 ms
//! window it accepts at most `ACCEPT_PER_WINDOW` markers and reads at most `READ_PER_WINDOW`
//! datagrams, then sleeps to the window's end (the kernel's queue fills meanwhile and senders
//! queue, drop and count on their side).

use std::os::unix::fs::MetadataExt as _;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use zescope_markers::protocol::{self, Kind, MAX_MESSAGE};

/// The accounting window (long enough for a workload's burst to fit in one).
const WINDOW: Duration = Duration::from_millis(100);
/// Markers accepted per window at most (20 000 per second: a marker every 50 µs, more than a
/// plot can show apart).
const ACCEPT_PER_WINDOW: u64 = 2000;
/// Datagrams read per window at most (20 000 per second: a flood costs a few percent of a core);
/// past it the thread sleeps to the window's end.
const READ_PER_WINDOW: u64 = 2000;
/// Markers waiting for the consumer at most.
const QUEUE: usize = 1 << 16;
/// While datagrams keep coming, the queue is drained this often (the kernel queues few datagrams
/// per socket, `net.unix.max_dgram_qlen`, often 10; senders queue the rest and resend).
const BATCH: Duration = Duration::from_micros(500);
/// How often the thread looks at its stop flag when nothing arrives.
const POLL: Duration = Duration::from_millis(100);

/// A marker as it arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// Instant, begin or end.
    pub kind: Kind,
    /// The sender's `CLOCK_MONOTONIC` time, ns (the samples' clock).
    pub t_ns: i64,
    /// Its name.
    pub name: String,
}

/// What the listener did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Markers handed over.
    pub accepted: u64,
    /// Datagrams that were not markers (malformed, oversized), dropped.
    pub malformed: u64,
    /// Markers dropped because they came faster than 20 000 per second.
    pub over_rate: u64,
    /// Markers dropped because the consumer's queue was full.
    pub queue_full: u64,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    accepted: AtomicU64,
    malformed: AtomicU64,
    over_rate: AtomicU64,
    queue_full: AtomicU64,
}

/// A running listener; dropping it stops the thread and removes the socket.
pub struct Listener {
    path: PathBuf,
    /// The socket file's identity, to remove only ours.
    ino: (u64, u64),
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    rx: Receiver<Received>,
}

impl Listener {
    /// Listens at `path` ([`super::bind`]'s rules); the error is for the user.
    pub fn start(path: &Path) -> Result<Listener, String> {
        let sock = super::bind(path)?;
        sock.set_read_timeout(Some(POLL)).map_err(|e| format!("cannot set up the markers socket: {e}"))?;
        let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let shared = Arc::new(Shared::default());
        let (tx, rx) = crossbeam_channel::bounded(QUEUE);
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("zescope-markers".into())
            .spawn(move || run(&sock, &tx, &s))
            .map_err(|e| format!("cannot start the markers thread: {e}"))?;
        Ok(Listener { path: path.to_owned(), ino: (meta.dev(), meta.ino()), shared, thread: Some(thread), rx })
    }

    /// Listens at [`super::socket_path`]; when another zescope listens there already, at
    /// `markers-<pid>.sock` beside it (programs this zescope starts learn it from
    /// `ZESCOPE_MARKERS`; others are told the path).
    pub fn start_default() -> Result<Listener, String> {
        let path = super::socket_path().ok_or("cannot tell where to listen for markers (no user id)")?;
        match Listener::start(&path) {
            Err(e) if e.contains("another zescope listens") && std::env::var_os(super::ENV).is_none() => {
                let own = path.with_file_name(format!("markers-{}.sock", std::process::id()));
                Listener::start(&own).map_err(|e2| format!("{e}; {e2}"))
            }
            r => r,
        }
    }

    /// The socket's path: what `ZESCOPE_MARKERS` should say.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The channel markers arrive on, in arrival order.
    pub fn receiver(&self) -> &Receiver<Received> {
        &self.rx
    }

    /// Takes the markers that arrived, at most `max`.
    pub fn drain(&self, max: usize) -> Vec<Received> {
        self.rx.try_iter().take(max).collect()
    }

    /// What the listener did so far.
    pub fn counts(&self) -> Counts {
        let s = &self.shared;
        Counts {
            accepted: s.accepted.load(Relaxed),
            malformed: s.malformed.load(Relaxed),
            over_rate: s.over_rate.load(Relaxed),
            queue_full: s.queue_full.load(Relaxed),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.shared.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // Only our socket: another zescope may have replaced a socket it thought stale.
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.ino) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn run(sock: &UnixDatagram, tx: &Sender<Received>, s: &Shared) {
    // One byte more than a message may hold: a datagram that fills it was too long.
    let mut buf = [0u8; MAX_MESSAGE + 1];
    let mut rate = Rate { window: Instant::now(), read: 0, accepted: 0 };
    while !s.stop.load(Relaxed) {
        // Idle: block until a datagram comes (or it is time to look at the stop flag).
        match sock.recv(&mut buf) {
            Ok(n) => {
                if !take(&buf[..n], tx, s, &mut rate) {
                    return;
                }
            }
            Err(e) if is_nothing(&e) => continue,
            Err(e) => {
                log::warn!("markers socket: {e}");
                std::thread::sleep(POLL);
                continue;
            }
        }
        // Busy: drain what is queued every BATCH, never woken per datagram (a flood would wake
        // this thread hundreds of thousands of times a second, preempting the sampler), until a
        // batch finds nothing.
        if sock.set_nonblocking(true).is_err() {
            continue;
        }
        loop {
            let mut got = 0;
            loop {
                match sock.recv(&mut buf) {
                    Ok(n) => {
                        got += 1;
                        if !take(&buf[..n], tx, s, &mut rate) {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
                if rate.read >= READ_PER_WINDOW {
                    std::thread::sleep(WINDOW.saturating_sub(rate.window.elapsed()));
                    break;
                }
            }
            if got == 0 || s.stop.load(Relaxed) {
                break;
            }
            std::thread::sleep(BATCH);
        }
        let _ = sock.set_nonblocking(false);
    }
}

/// No datagram arrived within the read timeout.
fn is_nothing(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted)
}

/// Reads and acceptances in the current window.
struct Rate {
    window: Instant,
    read: u64,
    accepted: u64,
}

/// One datagram: parsed, counted, handed over; `false` when the consumer has gone.
fn take(msg: &[u8], tx: &Sender<Received>, s: &Shared, rate: &mut Rate) -> bool {
    let now = Instant::now();
    if now.duration_since(rate.window) >= WINDOW {
        *rate = Rate { window: now, read: 0, accepted: 0 };
    }
    rate.read += 1;
    match protocol::parse(msg) {
        Err(_) => {
            s.malformed.fetch_add(1, Relaxed);
        }
        Ok(_) if rate.accepted >= ACCEPT_PER_WINDOW => {
            s.over_rate.fetch_add(1, Relaxed);
        }
        Ok(m) => {
            rate.accepted += 1;
            let r = Received { kind: m.kind, t_ns: m.t_ns as i64, name: m.name.to_owned() };
            match tx.try_send(r) {
                Ok(()) => s.accepted.fetch_add(1, Relaxed),
                Err(TrySendError::Full(_)) => s.queue_full.fetch_add(1, Relaxed),
                Err(TrySendError::Disconnected(_)) => return false,
            };
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(path: &Path, msg: &[u8]) {
        UnixDatagram::unbound().unwrap().send_to(msg, path).unwrap();
    }

    fn wait_for(l: &Listener, f: impl Fn(Counts) -> bool) -> Counts {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !f(l.counts()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        l.counts()
    }

    #[test]
    fn past_the_rate_limit_markers_are_counted_and_dropped_and_a_new_window_takes_more() {
        let s = Shared::default();
        let (tx, rx) = crossbeam_channel::bounded(QUEUE);
        let mut rate = Rate { window: Instant::now(), read: 0, accepted: 0 };
        for _ in 0..ACCEPT_PER_WINDOW + 500 {
            assert!(take(b"zm1 I 1 x\n", &tx, &s, &mut rate));
        }
        assert_eq!((s.accepted.load(Relaxed), s.over_rate.load(Relaxed)), (ACCEPT_PER_WINDOW, 500));
        rate.window -= WINDOW;
        assert!(take(b"zm1 I 2 x\n", &tx, &s, &mut rate));
        assert_eq!(s.accepted.load(Relaxed), ACCEPT_PER_WINDOW + 1);
        assert_eq!(rx.len() as u64, ACCEPT_PER_WINDOW + 1);
        drop(rx);
        assert!(!take(b"zm1 I 3 x\n", &tx, &s, &mut rate), "the consumer has gone");
    }

    #[test]
    fn markers_arrive_in_order_and_bad_datagrams_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.sock");
        let l = Listener::start(&path).unwrap();
        send(&path, b"zm1 B 10 phase\n");
        send(&path, b"not a marker");
        send(&path, &[b'z'; 1000]);
        send(&path, b"zm1 E 20 phase\n");
        let c = wait_for(&l, |c| c.accepted == 2 && c.malformed == 2);
        assert_eq!(c, Counts { accepted: 2, malformed: 2, over_rate: 0, queue_full: 0 });
        let got = l.drain(10);
        assert_eq!(got[0], Received { kind: Kind::Begin, t_ns: 10, name: "phase".into() });
        assert_eq!(got[1], Received { kind: Kind::End, t_ns: 20, name: "phase".into() });
        drop(l);
        assert!(!path.exists(), "the socket is removed at exit");
    }
}
