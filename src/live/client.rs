//! zescope's own client of the live feed: connects, decodes, and hands over what came as the
//! sampler's own events (`RunInfo`, `SampleBatch`, `Health`, ...), so the model's one ingest
//! files a remote run as it files a local one. It reconnects by itself, with backoff, and resumes
//! from the event after the last it holds.
//!
//! - [`Follower::next`] returns the next [`Got`]; `None` once the feed ended (the server closed
//!   with 1000 after the run's `stopped`) or `stop` said so.
//! - When the link drops (an error, a close other than 1000), it says so once
//!   ([`Got::Link`]), waits ([`BACKOFF_FIRST`], doubling up to [`BACKOFF_MOST`]) and reconnects
//!   with `?from=NEXT&feed=ID`. What the server no longer holds is a gap: the next batch of each
//!   stream whose ordinal does not follow the last one held is marked `gap_before`.
//! - A try to connect that fails says why ([`Got::Unreachable`]), once per reason, so a server
//!   that refuses the viewer (no token, loopback only) is not silently tried forever.
//! - With [`Follower::follow_restarts`] (the window) the run ending is not the end: it keeps
//!   reconnecting, and follows the next server that serves on the address.
//! - A server that restarted has another feed: its run is announced as a new run
//!   ([`Got::Started`] again, after [`Got::Stopped`] of the old one); run numbers are the
//!   client's own, counted from 1, so two servers' "run 1" never mix.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use tungstenite::{Message, WebSocket};
use zescope_sampler::{DeviceEntry, Health, RunInfo, SampleBatch, StopReason};

use super::wire::{self, Event, Text};

/// The first wait before a reconnect.
pub const BACKOFF_FIRST: Duration = Duration::from_millis(100);
/// The longest.
pub const BACKOFF_MOST: Duration = Duration::from_secs(5);
/// How often the link's round trip is measured.
const PING: Duration = Duration::from_secs(1);
/// How long a read waits before `stop` is asked again.
const POLL: Duration = Duration::from_millis(100);

/// What came from the feed, as the sampler's events.
#[derive(Clone, Debug)]
pub enum Got {
    /// A run started (or, after a server restart, another one).
    Started(Box<RunInfo>, Vec<DeviceEntry>),
    /// Samples of the run.
    Samples(SampleBatch),
    /// A workload's marker.
    Marker(zescope_markers::Kind, i64, String),
    /// The server's sampler health.
    Health(Health),
    /// A notice of the run.
    Notice(u64, String),
    /// An error of the server's sampler.
    Error(String),
    /// The run stopped.
    Stopped(u64, StopReason),
    /// The link's state changed: `Some(why)` it dropped (reconnecting), `None` it is back.
    Link(Option<String>),
    /// A try to connect failed, and why (the server refused the viewer: a token wanted, loopback
    /// only; or nothing answered): said once per reason until a try gets through.
    Unreachable(String),
}

/// Where to connect and with what.
#[derive(Clone, Debug)]
pub struct Target {
    /// `HOST:PORT`.
    pub addr: String,
    /// The server's token (beyond loopback).
    pub token: Option<String>,
}

/// A connected feed, followed across reconnects.
pub struct Follower {
    target: Target,
    ws: Option<WebSocket<TcpStream>>,
    /// The feed and the next event wanted from it.
    feed: Option<String>,
    next: u64,
    /// The server's run number and ours.
    server_run: Option<u64>,
    run: u64,
    /// The run's `stopped` came.
    stopped: bool,
    /// Per stream: the ordinal the next row should have.
    ordinals: Vec<u64>,
    backoff: Duration,
    down: bool,
    /// Why the last try to connect failed, once said ([`Got::Unreachable`]); `None` once one got
    /// through.
    unreachable: Option<String>,
    /// What was decoded and not yet returned.
    queue: std::collections::VecDeque<Got>,
    ended: bool,
    /// Bytes received (frames' payloads).
    pub bytes: u64,
    /// The link's round trip: the newest WebSocket ping's time to its pong (`None` before the
    /// first pong, or while the link is down).
    pub rtt: Option<Duration>,
    /// When the ping in flight was sent, and when the last was.
    ping: (Option<Instant>, Option<Instant>),
    /// The server's run ending is not the end: keep reconnecting, and follow the next server on
    /// the address (the window); `false` (the default): the feed ends with its run (`record`).
    pub follow_restarts: bool,
}

fn connect(target: &Target, feed: Option<&str>, from: u64) -> Result<WebSocket<TcpStream>, String> {
    use std::net::ToSocketAddrs;
    use tungstenite::client::IntoClientRequest;
    let addr = target.addr.to_socket_addrs().map_err(|e| format!("{}: {e}", target.addr))?.next();
    let addr = addr.ok_or_else(|| format!("{}: no address", target.addr))?;
    let stream =
        TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| format!("{}: {e}", target.addr))?;
    let _ = stream.set_nodelay(true);
    stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    let query = match feed {
        Some(f) => format!("?protocol={}&from={from}&feed={f}", wire::PROTOCOL),
        None => format!("?protocol={}", wire::PROTOCOL),
    };
    let mut request = format!("ws://{}/live{query}", target.addr).into_client_request().map_err(|e| e.to_string())?;
    if let Some(t) = &target.token {
        let value = format!("Bearer {t}").parse().map_err(|_| "the token is not a header value".to_owned())?;
        request.headers_mut().insert("authorization", value);
    }
    let config = tungstenite::protocol::WebSocketConfig::default().max_message_size(Some(256 << 20));
    let (ws, _) = tungstenite::client::client_with_config(request, stream, Some(config))
        .map_err(|e| handshake_error(&target.addr, e))?;
    ws.get_ref().set_read_timeout(Some(POLL)).map_err(|e| e.to_string())?;
    Ok(ws)
}

/// What a failed handshake with `addr` says: a zescope `serve`'s refusal is its one line of plain
/// text (too many viewers, a token wanted); any other answer (a web page, another protocol) says
/// that `addr` is not a zescope `serve`, without the page.
fn handshake_error(addr: &str, e: tungstenite::HandshakeError<tungstenite::ClientHandshake<TcpStream>>) -> String {
    let not_serve = |what: String| format!("{addr} is not a zescope serve's live feed: {what}");
    match e {
        tungstenite::HandshakeError::Failure(tungstenite::Error::Http(r)) => {
            let plain = r
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/plain"));
            let body = r.body().as_ref().map(|b| String::from_utf8_lossy(b).trim().to_owned()).unwrap_or_default();
            if plain && !body.is_empty() && body.len() <= 300 && !body.contains('\n') {
                format!("{addr} refused: {} {body}", r.status())
            } else {
                not_serve(format!("/live answered {}", r.status()))
            }
        }
        tungstenite::HandshakeError::Failure(tungstenite::Error::Protocol(p)) => not_serve(p.to_string()),
        e => format!("{addr}: {e}"),
    }
}

impl Target {
    /// `addr`, with the token of `token_file` (its first line) if one is given.
    pub fn new(addr: String, token_file: Option<&std::path::Path>) -> Result<Target, String> {
        let token = match token_file {
            Some(f) => {
                let text = std::fs::read_to_string(f).map_err(|e| format!("--token-file {}: {e}", f.display()))?;
                Some(text.lines().next().unwrap_or("").trim().to_owned())
            }
            None => None,
        };
        Ok(Target { addr, token })
    }
}

impl Follower {
    /// Connects to `target` (the first connection must succeed: its error is the caller's).
    pub fn connect(target: Target) -> Result<Follower, String> {
        let ws = connect(&target, None, 0)?;
        let mut f = Follower::new(target);
        f.ws = Some(ws);
        Ok(f)
    }

    /// A follower of `target` that connects in [`Follower::next`] (and keeps trying, with
    /// backoff, until it gets through).
    pub fn new(target: Target) -> Follower {
        Follower {
            target,
            ws: None,
            feed: None,
            next: 0,
            server_run: None,
            run: 0,
            stopped: false,
            ordinals: Vec::new(),
            backoff: BACKOFF_FIRST,
            down: false,
            unreachable: None,
            queue: Default::default(),
            ended: false,
            bytes: 0,
            rtt: None,
            ping: (None, None),
            follow_restarts: false,
        }
    }

    /// The next thing the feed said; `None` once it ended or `stop()`.
    pub fn next(&mut self, stop: &dyn Fn() -> bool) -> Option<Got> {
        loop {
            if let Some(g) = self.queue.pop_front() {
                return Some(g);
            }
            if self.ended || stop() {
                return None;
            }
            let Some(ws) = self.ws.as_mut() else {
                self.reconnect(stop);
                continue;
            };
            // The link's latency: one ping in flight, one a second; the server's WebSocket
            // answers it with a pong as it reads.
            if self.ping.0.is_none() && self.ping.1.is_none_or(|t| t.elapsed() >= PING) {
                let now = Instant::now();
                if ws.send(Message::Ping(Vec::new().into())).is_ok() {
                    self.ping = (Some(now), Some(now));
                }
            }
            let read = match ws.read() {
                Ok(Message::Binary(b)) => {
                    self.bytes += b.len() as u64;
                    self.up();
                    self.batch(&b)
                }
                Ok(Message::Text(t)) => {
                    self.bytes += t.len() as u64;
                    self.up();
                    self.text(t.as_str())
                }
                Ok(Message::Pong(_)) => {
                    if let Some(sent) = self.ping.0.take() {
                        self.rtt = Some(sent.elapsed());
                    }
                    Ok(())
                }
                Ok(Message::Close(f)) => {
                    let (code, reason) =
                        f.map(|f| (u16::from(f.code), f.reason.to_string())).unwrap_or((1005, String::new()));
                    if code == 1000 && !self.follow_restarts {
                        self.ended = true;
                        continue;
                    }
                    Err(format!("the server closed the link ({code}: {reason})"))
                }
                Ok(_) => Ok(()),
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
                {
                    Ok(())
                }
                Err(e) => Err(format!("the link dropped: {e}")),
            };
            if let Err(why) = read {
                self.ws = None;
                (self.rtt, self.ping.0) = (None, None);
                if !self.down {
                    self.down = true;
                    self.queue.push_back(Got::Link(Some(why)));
                }
            }
        }
    }

    /// A frame came: the link is up (said once after it was down).
    fn up(&mut self) {
        if self.down {
            self.down = false;
            self.backoff = BACKOFF_FIRST;
            self.queue.push_back(Got::Link(None));
        }
    }

    /// Waits the backoff, then tries once to reconnect.
    fn reconnect(&mut self, stop: &dyn Fn() -> bool) {
        let until = Instant::now() + self.backoff;
        while Instant::now() < until && !stop() {
            std::thread::sleep(POLL.min(until.saturating_duration_since(Instant::now())));
        }
        self.backoff = (self.backoff * 2).min(BACKOFF_MOST);
        match connect(&self.target, self.feed.as_deref(), self.next) {
            Ok(ws) => {
                self.ws = Some(ws);
                self.unreachable = None;
            }
            Err(e) => {
                log::info!("live: reconnecting: {e}");
                if self.unreachable.as_ref() != Some(&e) {
                    self.queue.push_back(Got::Unreachable(e.clone()));
                    self.unreachable = Some(e);
                }
            }
        }
    }

    fn batch(&mut self, bytes: &[u8]) -> Result<(), String> {
        let wire::Batch { seq, first, mut samples } = wire::decode_batch(bytes)?;
        if self.server_run.is_none() {
            return Err("a batch before the hello".into());
        }
        self.next = seq + 1;
        let Some(expected) = self.ordinals.get_mut(samples.stream) else {
            return Err(format!("a batch of stream {} the hello did not announce", samples.stream));
        };
        // Rows the server no longer held, or that were never sent: a gap, never joined over.
        samples.gap_before |= first != *expected;
        *expected = first + samples.timestamps.len() as u64;
        samples.run = self.run;
        self.queue.push_back(Got::Samples(samples));
        Ok(())
    }

    fn text(&mut self, frame: &str) -> Result<(), String> {
        match wire::decode_text(frame)? {
            Text::Hello(h) => {
                if self.feed.as_deref() == Some(h.feed.as_str()) && self.server_run == Some(h.info.run) {
                    return Ok(()); // the same run, resumed
                }
                if self.server_run.is_some() && !self.stopped {
                    self.queue.push_back(Got::Stopped(self.run, StopReason::Replaced));
                }
                self.stopped = false;
                let wire::Hello { feed, mut info, devices } = *h;
                self.run += 1;
                self.server_run = Some(info.run);
                self.feed = Some(feed);
                self.next = 0;
                self.ordinals = vec![0; info.streams.len()];
                info.run = self.run;
                self.queue.push_back(Got::Started(Box::new(info), devices));
            }
            Text::Gap(_, to) => self.next = to,
            Text::Event(seq, e) => {
                self.next = seq + 1;
                let run = self.run;
                let got = match e {
                    Event::Marker { kind, t_ns, name } => Got::Marker(kind, t_ns, name),
                    Event::Notice(m) => Got::Notice(run, m),
                    Event::Error(m) => Got::Error(m),
                    Event::Health(h) => Got::Health(Health { run, ..h }),
                    Event::Stopped(r) => {
                        self.stopped = true;
                        Got::Stopped(run, r)
                    }
                    Event::Firing { .. } => return Ok(()),
                };
                self.queue.push_back(got);
            }
            Text::Unknown => {}
        }
        Ok(())
    }
}
