//! One viewer of the live feed, on the thread of the HTTP connection it upgraded.
//!
//! [`upgrade`] answers a request for `/live`: `426` unless it is a WebSocket upgrade (RFC 6455:
//! `GET`, `Upgrade: websocket`, `Connection: Upgrade`, version 13, a key), `401`/`403` when
//! [`access`](super::access) refuses it, else `101` and [`watch`] on the connection.
//!
//! [`watch`] sends the hello, then the feed's events from the one the viewer asked for
//! (`?from=SEQ`, with `&feed=ID` the feed it came from: another feed's `from` counts from 0). Its
//! socket is non-blocking with a small send buffer ([`SEND_BUFFER`]), and it takes more from the
//! feed only once what it wrote is flushed: what one viewer has in flight is bounded by that
//! buffer and one take ([`TAKE_BYTES`]). A viewer is dropped with a close frame that says why:
//! - when nothing it was sent could be written for [`STALL`] (it stopped reading): `4001`;
//! - when it fell so far behind that the feed no longer holds what it needs next (a viewer that
//!   starts behind the history is told with a `gap` frame instead): `4002`;
//! - when [`MAX_VIEWERS`](super::MAX_VIEWERS) watch already: `1013`.
//!
//! The close frame queues behind what is in flight; the thread tries for [`CLOSE_GRACE`] to get
//! it out (a viewer that reads again gets it), then shuts the socket. The run ending closes with
//! `1000` once everything was sent. Anything a viewer sends is read and ignored (pings are
//! answered): the feed is read-only. Between events the thread waits on the viewer's socket and
//! the feed's bell ([`Feed::bell`]) at once, so a ping is answered as it comes (the window's
//! "rtt" is the link's), not after the feed's next event.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

use super::Feed;
use crate::commands::serve::http::{Answer, Head, pages::PLAIN};
use crate::live::wire;

/// The viewer's socket send buffer.
pub const SEND_BUFFER: usize = 256 << 10;
/// About how much one take from the feed writes before the viewer flushes.
pub const TAKE_BYTES: usize = 1 << 20;
/// A viewer whose socket takes nothing for this long is dropped.
pub const STALL: Duration = Duration::from_secs(5);
/// How long a dropped viewer's close frame may take to get out.
pub const CLOSE_GRACE: Duration = Duration::from_secs(10);
/// The longest a viewer's thread waits for the feed or its socket before it looks again.
const WAIT: Duration = Duration::from_millis(50);
/// The largest message a viewer may send (they are ignored anyway).
const MAX_INCOMING: usize = 64 << 10;

/// Close code: the viewer did not read for [`STALL`].
pub const TOO_SLOW: u16 = 4001;
/// Close code: the viewer fell behind the feed's history.
pub const FELL_BEHIND: u16 = 4002;

/// What a viewer asked for in its request's query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The first event wanted.
    pub from: u64,
    /// The feed `from` is of.
    pub feed: Option<String>,
    /// The protocol version asked for (`protocol=`; 1 when not asked).
    pub protocol: u64,
}

impl Default for Request {
    fn default() -> Request {
        Request { from: 0, feed: None, protocol: 1 }
    }
}

impl Request {
    /// From a request's query (`from=SEQ&feed=ID&protocol=N`; anything else ignored).
    pub fn parse(query: &str) -> Result<Request, String> {
        let mut r = Request::default();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match k {
                "from" => r.from = v.parse().map_err(|_| format!("from={v:?} is not an event number"))?,
                "feed" => r.feed = Some(v.to_owned()),
                "protocol" => {
                    r.protocol = v.parse().ok().filter(|p| wire::PROTOCOLS.contains(p)).ok_or_else(|| {
                        format!("protocol={v:?} is not served: this server speaks live protocol 1 and 2")
                    })?
                }
                _ => {}
            }
        }
        Ok(r)
    }
}

/// What [`upgrade`] makes of a request for `/live`.
pub enum Upgrade {
    /// Answer this and close.
    Refused(Answer),
    /// Write this `101` head, then hand the connection to [`watch`].
    Accepted {
        /// The whole response head, blank line included.
        response: String,
        /// What was asked.
        request: Request,
    },
}

fn header<'h>(head: &'h Head, name: &str) -> Option<&'h str> {
    head.fields.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

fn lists(value: Option<&str>, token: &str) -> bool {
    value.is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
}

/// The answer to a request for `/live` from `peer`.
pub fn upgrade(feed: &Feed, head: &Head, peer: SocketAddr) -> Upgrade {
    let refuse = |status, text: &str| Upgrade::Refused(Answer::new(status, PLAIN, format!("{text}\n")));
    if head.method != "GET"
        || !lists(header(head, "upgrade"), "websocket")
        || !lists(header(head, "connection"), "upgrade")
    {
        let a = Answer::new(426, PLAIN, "the live feed is a WebSocket: see docs/live-protocol.md\n");
        return Upgrade::Refused(Answer { headers: "Upgrade: websocket\r\n", ..a });
    }
    if header(head, "sec-websocket-version") != Some("13") {
        let a = Answer::new(426, PLAIN, "WebSocket version 13 only\n");
        return Upgrade::Refused(Answer { headers: "Sec-WebSocket-Version: 13\r\n", ..a });
    }
    let Some(key) = header(head, "sec-websocket-key") else {
        return refuse(400, "no Sec-WebSocket-Key");
    };
    if let Err(r) = feed.access.check(peer.ip(), header(head, "authorization")) {
        log::info!("serve: live viewer {peer} refused: {}", r.message());
        return refuse(r.status(), r.message());
    }
    let request = match Request::parse(head.query.as_deref().unwrap_or("")) {
        Ok(r) => r,
        Err(e) => return refuse(400, &e),
    };
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
    );
    Upgrade::Accepted { response, request }
}

/// A viewer's connection after the `101`.
struct Viewer {
    ws: WebSocket<TcpStream>,
    peer: SocketAddr,
    /// Since when something written waits to get out.
    blocked_since: Option<Instant>,
}

/// The connection cannot go on (closed by the viewer, or an error).
struct Gone;

fn would_block(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(io) if matches!(io.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted))
}

impl Viewer {
    /// Queues `m`; false once the socket is full (the message is still queued).
    fn write(&mut self, m: Message) -> Result<bool, Gone> {
        match self.ws.write(m) {
            Ok(()) => Ok(true),
            Err(e) if would_block(&e) => {
                self.blocked_since.get_or_insert_with(Instant::now);
                Ok(false)
            }
            Err(_) => Err(Gone),
        }
    }

    /// Reads what the viewer sent (ignored) and writes what is queued.
    fn pump(&mut self) -> Result<(), Gone> {
        loop {
            match self.ws.read() {
                Ok(_) => {}
                Err(e) if would_block(&e) => break,
                Err(_) => return Err(Gone),
            }
        }
        match self.ws.flush() {
            Ok(()) => self.blocked_since = None,
            Err(e) if would_block(&e) => {
                self.blocked_since.get_or_insert_with(Instant::now);
            }
            Err(_) => return Err(Gone),
        }
        Ok(())
    }

    /// Waits until the viewer sent something (a ping is answered as it comes, not after the
    /// feed's next event), the feed rang `bell`, or `timeout` passed; then quiets the bell.
    fn wait(&self, bell: &OwnedFd, timeout: Duration) {
        let timeout = rustix::event::Timespec {
            tv_sec: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: timeout.subsec_nanos().into(),
        };
        let mut fds = [PollFd::new(self.ws.get_ref(), PollFlags::IN), PollFd::new(bell, PollFlags::IN)];
        let _ = rustix::event::poll(&mut fds, Some(&timeout));
        let mut count = [0u8; 8];
        let _ = rustix::io::read(bell, &mut count);
    }

    /// Closes with `code` and `reason`, trying for at most `grace` to get the close frame out.
    fn close(mut self, code: CloseCode, reason: &str, grace: Duration) {
        let frame = CloseFrame { code, reason: reason.into() };
        let _ = self.ws.close(Some(frame));
        let until = Instant::now() + grace;
        while Instant::now() < until && self.pump().is_ok() {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.ws.get_mut().shutdown(std::net::Shutdown::Both);
    }

    /// Drops the viewer, saying why (on stderr too).
    fn drop_with(self, code: u16, reason: &str) {
        eprintln!("zescope: live viewer {} dropped: {reason}", self.peer);
        self.close(CloseCode::from(code), reason, CLOSE_GRACE);
    }
}

/// Serves the feed to a viewer whose `101` was written on `socket`.
pub fn watch(feed: &Arc<Feed>, socket: TcpStream, peer: SocketAddr, request: &Request) {
    let _ = rustix::net::sockopt::set_socket_send_buffer_size(&socket, SEND_BUFFER);
    let _ = socket.set_nodelay(true);
    if socket.set_nonblocking(true).is_err() {
        return;
    }
    let config = WebSocketConfig::default().max_message_size(Some(MAX_INCOMING)).max_frame_size(Some(MAX_INCOMING));
    let ws = WebSocket::from_raw_socket(socket, Role::Server, Some(config));
    let mut v = Viewer { ws, peer, blocked_since: None };
    let Some(_place) = feed.watch() else {
        let reason = format!("{} viewers watch already, the most this server takes", super::MAX_VIEWERS);
        log::info!("serve: live viewer {peer} refused: {reason}");
        v.close(CloseCode::Again, &reason, Duration::from_secs(1));
        return;
    };
    log::info!("serve: live viewer {peer} watching from {}", request.from);
    let hello = loop {
        if v.pump().is_err() {
            return;
        }
        if let Some(h) = feed.hello(Duration::from_millis(100), request.protocol) {
            break h;
        }
        if feed.take(u64::MAX, 0, Duration::ZERO).ended {
            return v.close(CloseCode::Away, "the server ended before its run started", Duration::from_secs(1));
        }
    };
    let mut next = match &request.feed {
        Some(id) if *id != feed.id => 0,
        _ => request.from,
    };
    if v.write(hello).is_err() {
        return;
    }
    // Waiting on the socket and the feed at once; without a bell, on the feed for at most
    // [`WAIT`] (a ping is then answered after the feed's next event).
    let bell = feed.bell();
    let mut caught_up_once = false;
    loop {
        if v.pump().is_err() {
            return;
        }
        if let Some(since) = v.blocked_since {
            if since.elapsed() >= STALL {
                return v.drop_with(TOO_SLOW, &format!("it read nothing for {} s", STALL.as_secs()));
            }
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        let taken = feed.take(next, TAKE_BYTES, if bell.is_some() { Duration::ZERO } else { WAIT });
        if let Some(bell) = &bell
            && taken.frames.is_empty()
            && taken.gap.is_none()
            && !taken.ended
        {
            v.wait(bell, feed.due_in().map_or(WAIT, |d| d.min(WAIT)));
            continue;
        }
        if let Some((from, to)) = taken.gap {
            if caught_up_once {
                return v.drop_with(
                    FELL_BEHIND,
                    &format!("it fell behind: events {from}..{to} are no longer held (reconnect with from={to})"),
                );
            }
            if v.write(Message::text(wire::gap(from, to))).is_err() {
                return;
            }
        }
        caught_up_once = true;
        next = taken.first;
        let mut all = true;
        for f in taken.frames {
            next += 1;
            let f = match f {
                Message::Binary(b) if request.protocol == 1 => match wire::decode_batch(&b) {
                    Ok(p) => Message::binary(wire::batch(p.seq, p.first, &p.samples)),
                    Err(e) => {
                        log::error!("serve: a batch of the feed does not decode: {e}");
                        return v.drop_with(1011, "the server cannot read its own history");
                    }
                },
                f => f,
            };
            match v.write(f) {
                Ok(true) => {}
                Ok(false) => {
                    all = false;
                    break;
                }
                Err(Gone) => return,
            }
        }
        if taken.ended && all {
            if v.pump().is_err() {
                return;
            }
            return v.close(CloseCode::Normal, "the run ended", CLOSE_GRACE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_names_where_to_resume() {
        assert_eq!(Request::parse("").unwrap(), Request::default());
        let r = Request::parse("from=42&feed=ab&x=1").unwrap();
        assert_eq!(r, Request { from: 42, feed: Some("ab".into()), protocol: 1 });
        assert_eq!(Request::parse("protocol=2").unwrap().protocol, 2);
        assert!(Request::parse("protocol=3").unwrap_err().contains("speaks live protocol 1 and 2"));
        assert!(Request::parse("from=-1").unwrap_err().contains("from=\"-1\""));
    }
}
