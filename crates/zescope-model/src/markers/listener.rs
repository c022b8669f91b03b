//! The listener thread: reads datagrams, checks their sender ([`super::sender`]: the same user,
//! else dropped and counted), parses them, hands markers over a bounded channel and counts what
//! it drops. Markers past the rate of its [`Limits`] (a token bucket) are dropped and counted.
//! A flood cannot take more than its share of a CPU: while datagrams keep coming it drains the
//! socket every `BATCH` instead of being woken for each, and per 100 ms window it reads at most
//! `READ_PER_WINDOW` datagrams, then sleeps to the window's end (the kernel's queue fills
//! meanwhile and senders queue, drop and count on their side).

use std::os::unix::fs::MetadataExt as _;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use zescope_markers::protocol::{self, Kind, MAX_MESSAGE};

use super::bind::PathLock;
use super::limits::{Bucket, Limits};
use super::sender;

/// The window datagrams are counted in, to bound the reading.
const WINDOW: Duration = Duration::from_millis(100);
/// Datagrams read per window at most (20 000 per second: a flood costs a few percent of a core);
/// past it the thread sleeps to the window's end.
const READ_PER_WINDOW: u64 = 2000;
/// Markers waiting for the consumer at most.
const QUEUE: usize = 1 << 16;
/// While datagrams keep coming, the queue is drained this often (the kernel queues few datagrams
/// per socket, `net.unix.max_dgram_qlen`, often 10; senders queue the rest and resend).
const BATCH: Duration = Duration::from_micros(500);
/// How often the thread looks at its stop flag when nothing arrives, should the stop's wake-up
/// (shutting the socket's reading down) not reach it: it is woken when stopped, so this is a
/// safety net, not a poll.
const POLL: Duration = Duration::from_secs(1);
/// How long the thread waits after a read of the socket failed before it reads again.
const RETRY: Duration = Duration::from_millis(100);

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
    /// Markers dropped because they came faster than the rate limit ([`Limits`]).
    pub over_rate: u64,
    /// Markers dropped because the consumer's queue was full.
    pub queue_full: u64,
    /// Datagrams dropped because another user sent them.
    pub other_user: u64,
    /// Datagrams dropped because no credentials came with them.
    pub no_credentials: u64,
}

impl Counts {
    /// Everything dropped, whatever the reason.
    pub fn dropped(&self) -> u64 {
        self.malformed + self.over_rate + self.queue_full + self.other_user + self.no_credentials
    }
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    /// Times the idle wait returned (a datagram, the safety net's timeout, an error, the stop).
    wakes: AtomicU64,
    accepted: AtomicU64,
    malformed: AtomicU64,
    over_rate: AtomicU64,
    queue_full: AtomicU64,
    other_user: AtomicU64,
    no_credentials: AtomicU64,
}

/// A running listener; dropping it stops the thread and removes the socket.
pub struct Listener {
    path: PathBuf,
    /// The socket file's identity, to remove only ours.
    ino: (u64, u64),
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// The socket (another descriptor of it): stopping shuts its reading down, which wakes the
    /// thread from its wait.
    waker: UnixDatagram,
    rx: Receiver<Received>,
    limits: Limits,
    /// The path's lock, released (and its file removed) after the socket is removed.
    _lock: PathLock,
}

impl Listener {
    /// Listens at `path` ([`super::bind`]'s rules) within `limits`; the error is for the user.
    pub fn start(path: &Path, limits: Limits) -> Result<Listener, String> {
        let (sock, lock) = super::bind(path)?;
        let setup = |e: std::io::Error| format!("cannot set up the markers socket: {e}");
        sock.set_read_timeout(Some(POLL)).map_err(setup)?;
        let waker = sock.try_clone().map_err(setup)?;
        let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let shared = Arc::new(Shared::default());
        let (tx, rx) = crossbeam_channel::bounded(QUEUE);
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("zescope-markers".into())
            .spawn(move || run(&sock, &tx, &s, &limits))
            .map_err(|e| format!("cannot start the markers thread: {e}"))?;
        Ok(Listener {
            path: path.to_owned(),
            ino: (meta.dev(), meta.ino()),
            shared,
            thread: Some(thread),
            waker,
            rx,
            limits,
            _lock: lock,
        })
    }

    /// Listens at [`super::socket_path`]; when another zescope listens there already, at
    /// `markers-<pid>.sock` beside it (programs this zescope starts learn it from
    /// `ZESCOPE_MARKERS`; others are told the path).
    pub fn start_default(limits: Limits) -> Result<Listener, String> {
        let path = super::socket_path().ok_or("cannot tell where to listen for markers (no user id)")?;
        match Listener::start(&path, limits) {
            Err(e) if e.contains(super::bind::TAKEN) && std::env::var_os(super::ENV).is_none() => {
                let own = path.with_file_name(format!("markers-{}.sock", std::process::id()));
                Listener::start(&own, limits).map_err(|e2| format!("{e}; {e2}"))
            }
            r => r,
        }
    }

    /// The socket's path: what `ZESCOPE_MARKERS` should say.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bounds it listens within (the count per session is its consumer's to keep).
    pub fn limits(&self) -> Limits {
        self.limits
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
            other_user: s.other_user.load(Relaxed),
            no_credentials: s.no_credentials.load(Relaxed),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.shared.stop.store(true, Relaxed);
        // A reader waiting on a socket whose reading is shut down returns at once.
        let _ = self.waker.shutdown(std::net::Shutdown::Read);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // Only our socket (a zescope from before the lock file may have replaced it); the lock
        // goes after it, with the fields.
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.ino) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn run(sock: &UnixDatagram, tx: &Sender<Received>, s: &Shared, limits: &Limits) {
    // One byte more than a message may hold: a datagram that fills it was too long.
    let mut buf = [0u8; MAX_MESSAGE + 1];
    let now = Instant::now();
    let mut rate = Rate { window: now, read: 0, bucket: Bucket::new(limits, now), me: super::folder::my_uid() };
    while !s.stop.load(Relaxed) {
        // Idle: block until a datagram comes or the listener stops.
        let got = sender::recv(sock, &mut buf);
        s.wakes.fetch_add(1, Relaxed);
        if s.stop.load(Relaxed) {
            return;
        }
        match got {
            Ok((n, uid)) => {
                if !take(&buf[..n], uid, tx, s, &mut rate) {
                    return;
                }
            }
            Err(e) if is_nothing(&e) => continue,
            Err(e) => {
                log::warn!("markers socket: {e}");
                std::thread::sleep(RETRY);
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
                match sender::recv(sock, &mut buf) {
                    _ if s.stop.load(Relaxed) => return,
                    Ok((n, uid)) => {
                        got += 1;
                        if !take(&buf[..n], uid, tx, s, &mut rate) {
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

/// Reads in the current window, the rate's bucket, and the user whose markers are taken.
struct Rate {
    window: Instant,
    read: u64,
    bucket: Bucket,
    me: u32,
}

/// One datagram from the sender `uid`: checked, parsed, counted, handed over; `false` when the
/// consumer has gone.
fn take(msg: &[u8], uid: Option<u32>, tx: &Sender<Received>, s: &Shared, rate: &mut Rate) -> bool {
    let now = Instant::now();
    if now.duration_since(rate.window) >= WINDOW {
        (rate.window, rate.read) = (now, 0);
    }
    rate.read += 1;
    match sender::check(uid, rate.me) {
        sender::Sender::Mine => {}
        sender::Sender::OtherUser(_) => {
            s.other_user.fetch_add(1, Relaxed);
            return true;
        }
        sender::Sender::Unknown => {
            s.no_credentials.fetch_add(1, Relaxed);
            return true;
        }
    }
    match protocol::parse(msg) {
        Err(_) => {
            s.malformed.fetch_add(1, Relaxed);
        }
        Ok(_) if !rate.bucket.take(now) => {
            s.over_rate.fetch_add(1, Relaxed);
        }
        Ok(m) => {
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

    /// A temporary folder the markers socket may live in (tempfile's are 0755 here).
    fn private_tempdir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        dir
    }

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

    fn rate(limits: &Limits) -> Rate {
        let now = Instant::now();
        Rate { window: now, read: 0, bucket: Bucket::new(limits, now), me: 1000 }
    }

    #[test]
    fn past_the_burst_markers_are_counted_and_dropped() {
        let s = Shared::default();
        let (tx, rx) = crossbeam_channel::bounded(QUEUE);
        let limits = Limits { per_second: 0, burst: 300, per_session: 10 };
        let mut rate = rate(&limits);
        for _ in 0..800 {
            assert!(take(b"zm1 I 1 x\n", Some(1000), &tx, &s, &mut rate));
        }
        assert_eq!((s.accepted.load(Relaxed), s.over_rate.load(Relaxed)), (300, 500));
        assert_eq!(rx.len(), 300);
        drop(rx);
        rate.bucket = Bucket::new(&limits, Instant::now());
        assert!(!take(b"zm1 I 3 x\n", Some(1000), &tx, &s, &mut rate), "the consumer has gone");
    }

    #[test]
    fn datagrams_of_another_user_or_without_credentials_are_dropped_and_counted() {
        let s = Shared::default();
        let (tx, rx) = crossbeam_channel::bounded(QUEUE);
        let mut rate = rate(&Limits::default());
        assert!(take(b"zm1 I 1 theirs\n", Some(1001), &tx, &s, &mut rate));
        assert!(take(b"zm1 I 1 root's\n", Some(0), &tx, &s, &mut rate));
        assert!(take(b"zm1 I 1 nobody's\n", None, &tx, &s, &mut rate));
        assert!(take(b"zm1 I 2 mine\n", Some(1000), &tx, &s, &mut rate));
        assert_eq!((s.other_user.load(Relaxed), s.no_credentials.load(Relaxed), s.accepted.load(Relaxed)), (2, 1, 1));
        assert_eq!(rx.try_iter().map(|r| r.name).collect::<Vec<_>>(), vec!["mine"]);
    }

    #[test]
    fn markers_arrive_in_order_and_bad_datagrams_are_counted() {
        let dir = private_tempdir();
        let path = dir.path().join("m.sock");
        let l = Listener::start(&path, Limits::default()).unwrap();
        send(&path, b"zm1 B 10 phase\n");
        send(&path, b"not a marker");
        send(&path, &[b'z'; 1000]);
        send(&path, b"zm1 E 20 phase\n");
        let c = wait_for(&l, |c| c.accepted == 2 && c.malformed == 2);
        assert_eq!(c, Counts { accepted: 2, malformed: 2, ..Counts::default() });
        let got = l.drain(10);
        assert_eq!(got[0], Received { kind: Kind::Begin, t_ns: 10, name: "phase".into() });
        assert_eq!(got[1], Received { kind: Kind::End, t_ns: 20, name: "phase".into() });
        drop(l);
        assert!(!path.exists(), "the socket is removed at exit");
        assert!(!super::super::bind::lock_path(&path).exists(), "and its lock file");
    }

    #[test]
    fn an_idle_listener_sleeps_until_a_marker_or_its_stop_comes() {
        let dir = private_tempdir();
        let path = dir.path().join("m.sock");
        let l = Listener::start(&path, Limits::default()).unwrap();
        // Woken by nothing for longer than the old 100 ms poll (which woke it 3 times here).
        std::thread::sleep(Duration::from_millis(350));
        assert_eq!(l.shared.wakes.load(Relaxed), 0, "no wake-up while nothing arrives");
        send(&path, b"zm1 I 1 one\n");
        assert_eq!(wait_for(&l, |c| c.accepted == 1).accepted, 1);
        assert_eq!(l.shared.wakes.load(Relaxed), 1, "one wake-up for the marker");
        // The stop wakes it: dropping returns well before the safety net's second.
        let t = Instant::now();
        drop(l);
        assert!(t.elapsed() < POLL / 2, "the stop took {:?}", t.elapsed());
        assert!(!path.exists());
    }

    #[test]
    fn a_flood_past_the_burst_is_held_to_it_and_counted() {
        let dir = private_tempdir();
        let path = dir.path().join("m.sock");
        let l = Listener::start(&path, Limits { per_second: 0, burst: 50, per_session: 10 }).unwrap();
        let tx = UnixDatagram::unbound().unwrap();
        // Paced so the kernel's small queue never refuses one: every datagram reaches the listener.
        for k in 0..200 {
            tx.send_to(format!("zm1 I {k} m{k}\n").as_bytes(), &path).unwrap();
            let _ = wait_for(&l, |c| c.accepted + c.over_rate > k);
        }
        let c = wait_for(&l, |c| c.accepted + c.over_rate == 200);
        assert_eq!((c.accepted, c.over_rate), (50, 150));
        assert_eq!(l.drain(1000).len(), 50);
    }

    #[test]
    fn of_listeners_racing_for_one_path_with_a_stale_socket_exactly_one_wins_and_is_reachable() {
        let dir = private_tempdir();
        for round in 0..60 {
            let path = dir.path().join(format!("race{round}.sock"));
            drop(UnixDatagram::bind(&path).unwrap()); // a dead listener's socket
            let gate = std::sync::Barrier::new(4);
            let results: Vec<Result<Listener, String>> = std::thread::scope(|sc| {
                let hs: Vec<_> = (0..4)
                    .map(|_| {
                        sc.spawn(|| {
                            gate.wait();
                            Listener::start(&path, Limits::default())
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let won: Vec<&Listener> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
            assert_eq!(
                won.len(),
                1,
                "round {round}: {:?}",
                results.iter().filter_map(|r| r.as_ref().err()).collect::<Vec<_>>()
            );
            for e in results.iter().filter_map(|r| r.as_ref().err()) {
                assert!(e.contains(super::super::bind::TAKEN), "{e}");
            }
            send(&path, b"zm1 I 1 reached\n");
            let c = wait_for(won[0], |c| c.accepted == 1);
            assert_eq!(c.accepted, 1, "round {round}: the winner's socket is the one at the path");
        }
    }
}
