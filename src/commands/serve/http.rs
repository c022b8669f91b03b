//! The HTTP side of `zescope serve`: `/metrics`, `/` and `/healthz` ([`pages`]), over HTTP/1.1
//! with one request per connection (`Connection: close`, as Prometheus is happy to use).
//!
//! The contract, against clients that misbehave by accident or on purpose:
//! - One thread accepts; each admitted connection is served by a thread of its own. Connections
//!   hold [`slots`]: at most [`MAX_CONNECTIONS`] at once, at most [`MAX_PER_PEER`] per peer
//!   address (IPv6: per /64). A connection that has not yet sent a whole request head is *idle*;
//!   when the slots it could have are all taken, a new connection displaces the longest idle one
//!   (closed at once) and is answered `503` only when all of them are busy answering. So silent or
//!   trickling clients are shed first and cannot keep a scrape out. Not covered: a flood of new
//!   connections from the scrape's own address (a client reconnecting in a tight loop each time
//!   it is shed) makes a scrape whose head has not arrived yet the longest idle within a few
//!   connects, and sheds it; per-peer limits cannot tell the two apart.
//! - The request head (at most [`MAX_HEAD`] bytes: `414` when the request line alone is longer,
//!   else `431`) must arrive within [`HEAD_DEADLINE`] of the accept (a partial head then gets
//!   `408`, nothing at all a close); the answer must be written within [`DEADLINE`] of the accept,
//!   else the connection is dropped.
//! - Heads are parsed strictly ([`request`]: CRLF only, a bare LF or CR is answered `400` as soon
//!   as it arrives; `HTTP/1.0` or `HTTP/1.1`; origin- or absolute-form targets).
//! - After the answer the write side is shut down (FIN) and what the client sent beyond the head
//!   is read and dropped, up to [`DRAIN_BYTES`] or [`DRAIN_TIME`] (within [`DEADLINE`]), before the
//!   close: closing a socket with unread data sends a reset, which can destroy the answer (a `431`
//!   to a client still sending its over-long head) before the client reads it.
//! - A slot is a guard ([`slots::Slot`]) that is given back when its thread ends, panics included.
//! - A `GET` the site takes over ([`Site::upgrade`]: the live feed's WebSocket at `/live`) gets
//!   its `101` within [`DEADLINE`]; the connection then gives its slot back (it is no longer this
//!   server's to count or shed: the live feed has limits of its own) and the site serves it on
//!   the connection's thread.
//!
//! Each answer reads the newest published [`Latest`](super::latest::Latest) and encodes it:
//! a scrape never waits for the sampler and the sampler never waits for a scrape.
//!
//! Not `tiny_http` (docs/dependencies.md): version 0.12 sets no timeouts on connections and its
//! accept thread stops for good at the first failed `accept` (as when the process runs out of file
//! descriptors), after which the port refuses every scrape.

pub mod pages;
pub mod request;
pub mod slots;

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use pages::{Health, Pages};
pub use request::{Head, negotiate, parse_head};

use super::latest::Published;
use slots::{Slot, Slots};

/// Connections held at once (idle ones are displaced for new ones; busy ones are not).
pub const MAX_CONNECTIONS: usize = 32;
/// Connections held at once from one peer address (an IPv6 /64).
pub const MAX_PER_PEER: usize = 8;
/// How long a connection may take from accept to the end of its request head.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(2);
/// How long a connection may take, from accept to the last byte of the answer.
pub const DEADLINE: Duration = Duration::from_secs(10);
/// The longest request head read (request line, headers and the blank line).
pub const MAX_HEAD: usize = 8192;
/// At most this much of what a client sent beyond its head is read (and dropped) after the answer.
pub const DRAIN_BYTES: usize = 4 << 20;
/// For at most this long.
pub const DRAIN_TIME: Duration = Duration::from_secs(1);

/// What a server answers to a request whose head parsed; the server does the rest (slots,
/// deadlines, syntax, methods: only GET and HEAD reach a site, HEAD answered without the body).
pub trait Site: Send + Sync + 'static {
    /// The answer to `head`.
    fn answer(&self, head: &Head) -> Answer;

    /// What to do with a `GET` from `peer` before it is answered: switch protocols (the live
    /// feed's WebSocket) or refuse; [`Upgraded::No`] (the default) answers it with
    /// [`Site::answer`].
    fn upgrade(&self, _head: &Head, _peer: SocketAddr) -> Upgraded {
        Upgraded::No
    }
}

/// What a [`Site`] makes of a request it may take over.
pub enum Upgraded {
    /// Nothing: [`Site::answer`] answers it.
    No,
    /// Answer this, as any answer.
    Refused(Answer),
    /// Write `response` (a whole `101` head) within the deadline, give the connection's slot back
    /// (a switched connection is no longer the HTTP server's to count or shed) and hand the
    /// socket to `then`, on the connection's thread.
    Switch {
        /// The response head, blank line included.
        response: String,
        /// What serves the connection from then on.
        then: Box<dyn FnOnce(TcpStream) + Send>,
    },
}

/// An answer, as a [`Site`] gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// More header lines, each ending in CRLF.
    pub headers: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// An answer with no extra headers.
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Answer {
        Answer { status, content_type, headers: "", body: body.into() }
    }

    fn error(status: u16) -> Answer {
        Answer::new(status, pages::PLAIN, format!("{status} {}\n", reason(status)))
    }
}

/// The running server; [`Http::stop`] ends it.
pub struct Http {
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
    /// The address it listens on (with the port the OS chose for port 0).
    pub addr: SocketAddr,
}

impl Http {
    /// Listens on `addr` and serves zescope's [`Pages`] of `published`.
    pub fn start(addr: SocketAddr, published: Published, health: Health) -> Result<Http, String> {
        Http::start_site(addr, Arc::new(Pages::new(published, health)))
    }

    /// Listens on `addr` and serves `site`.
    pub fn start_site(addr: SocketAddr, site: Arc<dyn Site>) -> Result<Http, String> {
        let listener = TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let accept = std::thread::Builder::new()
            .name("zescope-http".into())
            .spawn(move || accept_loop(&listener, &flag, &site))
            .map_err(|e| format!("cannot start the HTTP server: {e}"))?;
        Ok(Http { stop, accept: Some(accept), addr: local })
    }

    /// Stops accepting (connections in hand finish within their deadline, on their own).
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept with a connection of our own.
        let ip = match self.addr.ip() {
            IpAddr::V4(a) if a.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(a) if a.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        let woke = TcpStream::connect_timeout(&SocketAddr::new(ip, self.addr.port()), Duration::from_secs(1)).is_ok();
        if let Some(t) = self.accept.take()
            && woke
        {
            let _ = t.join();
        }
    }
}

/// The address slots are counted by: IPv4 (also IPv4-mapped IPv6) as is, IPv6 by its /64.
fn peer_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(a) => IpAddr::V6(Ipv6Addr::from(a.to_bits() & !u128::from(u64::MAX))),
        v4 => v4,
    }
}

fn accept_loop(listener: &TcpListener, stop: &AtomicBool, site: &Arc<dyn Site>) {
    let slots = Slots::new(MAX_CONNECTIONS, MAX_PER_PEER);
    let mut last_error: Option<Instant> = None;
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let accepted = conn.and_then(|s| Ok((s.peer_addr()?, s)));
        let (peer, stream) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of file descriptors, a connection reset before accept, ...: say so (at most
                // once a second) and go on accepting.
                if last_error.is_none_or(|t| t.elapsed() > Duration::from_secs(1)) {
                    log::warn!("serve: accepting a connection failed: {e}");
                    last_error = Some(Instant::now());
                }
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let slot = match slots.admit(peer_key(peer.ip()), &stream) {
            Ok(slot) => slot,
            Err(why) => {
                log::debug!("serve: no slot for {peer}: {why:?}");
                busy(stream);
                continue;
            }
        };
        let site = Arc::clone(site);
        // On failure the closure, slot and socket with it, is dropped: the slot comes back.
        let spawned = std::thread::Builder::new()
            .name("zescope-http-conn".into())
            .spawn(move || connection(stream, slot, peer, &*site));
        if let Err(e) = spawned {
            log::warn!("serve: cannot start a thread for a connection: {e}");
        }
    }
}

/// `503` to a connection with no slot, without waiting for it: what it sent so far is read first,
/// so that the close does not reset the answer away.
fn busy(mut s: TcpStream) {
    let _ = s.set_write_timeout(Some(Duration::from_millis(100)));
    let _ = s.write_all(
        b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    let _ = s.shutdown(Shutdown::Write);
    if s.set_nonblocking(true).is_ok() {
        let mut sink = [0u8; 4096];
        for _ in 0..16 {
            if !matches!(s.read(&mut sink), Ok(n) if n > 0) {
                break;
            }
        }
    }
}

/// What reading a request head came to.
enum Got {
    /// The head, without its blank line.
    Head(Vec<u8>),
    /// A status to answer at once (400, 414, 431).
    Refused(u16),
    /// Part of a head, then the head deadline.
    Late,
    /// Nothing usable: the client sent nothing in time, left, or was displaced.
    Nothing,
}

/// Reads the request head until `by`.
fn read_head(s: &mut TcpStream, by: Instant) -> Got {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    let mut scanned = 0;
    loop {
        match request::head_end(&buf, scanned) {
            Err(status) => return Got::Refused(status),
            Ok(Some(end)) => {
                buf.truncate(end);
                return Got::Head(buf);
            }
            Ok(None) => scanned = buf.len(),
        }
        if buf.len() >= MAX_HEAD {
            return Got::Refused(if buf.windows(2).any(|w| w == b"\r\n") { 431 } else { 414 });
        }
        let left = by.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return if buf.is_empty() { Got::Nothing } else { Got::Late };
        }
        let room = chunk.len().min(MAX_HEAD - buf.len());
        match s.read(&mut chunk[..room]) {
            Ok(0) => return Got::Nothing,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Got::Nothing,
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        414 => "URI Too Long",
        426 => "Upgrade Required",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

fn connection(mut s: TcpStream, slot: Slot, peer: SocketAddr, site: &dyn Site) {
    let accepted = Instant::now();
    let _ = s.set_nodelay(true);
    let got = read_head(&mut s, accepted + HEAD_DEADLINE);
    // Displaced while it waited (its socket is shut down): nothing to answer.
    if !slot.busy() {
        return;
    }
    let (answer, head_only) = match got {
        Got::Nothing => return,
        Got::Late => (Answer::error(408), false),
        Got::Refused(status) => (Answer::error(status), false),
        Got::Head(bytes) => match parse_head(&bytes) {
            Err(status) => (Answer::error(status), false),
            Ok(head) if head.method == "GET" => match site.upgrade(&head, peer) {
                Upgraded::No => (site.answer(&head), false),
                Upgraded::Refused(a) => (a, false),
                Upgraded::Switch { response, then } => return switch(s, slot, accepted + DEADLINE, &response, then),
            },
            Ok(head) if head.method == "HEAD" => (site.answer(&head), true),
            Ok(_) => {
                let a = Answer::new(405, pages::PLAIN, "only GET and HEAD\n");
                (Answer { headers: "Allow: GET, HEAD\r\n", ..a }, false)
            }
        },
    };
    if send(&mut s, accepted + DEADLINE, &answer, head_only) && slot.idle() {
        drain(&mut s, accepted + DEADLINE);
    }
}

/// Writes a `101` head by `by`, gives the slot back and hands the socket over.
fn switch(mut s: TcpStream, slot: Slot, by: Instant, response: &str, then: Box<dyn FnOnce(TcpStream) + Send>) {
    let left = by.saturating_duration_since(Instant::now());
    if left.is_zero() || s.set_write_timeout(Some(left)).is_err() {
        return;
    }
    if s.write_all(response.as_bytes()).and_then(|()| s.flush()).is_err() {
        return;
    }
    drop(slot);
    if s.set_read_timeout(None).and_then(|()| s.set_write_timeout(None)).is_ok() {
        then(s);
    }
}

/// Writes `a` (without its body for a HEAD request) by `by`; false when that failed.
fn send(s: &mut TcpStream, by: Instant, a: &Answer, head_only: bool) -> bool {
    let left = by.saturating_duration_since(Instant::now());
    if left.is_zero() || s.set_write_timeout(Some(left)).is_err() {
        return false;
    }
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n",
        a.status,
        reason(a.status),
        a.content_type,
        a.body.len(),
        a.headers,
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(&a.body);
    }
    // A client that went away or stopped reading: its loss.
    match s.write_all(&out).and_then(|()| s.flush()) {
        Ok(()) => true,
        Err(e) => {
            log::debug!("serve: answering a request failed: {e}");
            false
        }
    }
}

/// Ends the answer (FIN), then reads and drops what the client still sends, within the bounds.
fn drain(s: &mut TcpStream, by: Instant) {
    let _ = s.shutdown(Shutdown::Write);
    let until = by.min(Instant::now() + DRAIN_TIME);
    let mut sink = vec![0u8; 64 << 10];
    let mut left = DRAIN_BYTES;
    while left > 0 {
        let wait = until.saturating_duration_since(Instant::now());
        if wait.is_zero() || s.set_read_timeout(Some(wait)).is_err() {
            return;
        }
        match s.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(n) => left = left.saturating_sub(n),
        }
    }
}
