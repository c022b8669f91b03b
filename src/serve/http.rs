//! The HTTP side of `zescope serve`: `/metrics`, `/` and `/healthz`, over HTTP/1.1 with one
//! request per connection (`Connection: close`, as Prometheus is happy to use).
//!
//! One thread accepts; each connection is then served by a thread of its own, at most
//! [`MAX_CONNECTIONS`] at once (one more is answered `503` at once and closed). A connection has
//! [`DEADLINE`] in all to send its request head (at most [`MAX_HEAD`] bytes) and read the answer;
//! past it, it is dropped. So clients that send nothing, trickle bytes, read nothing or vanish
//! mid-response cost one capped thread for at most the deadline, and the other scrapes are
//! answered meanwhile. Each answer reads the newest published
//! [`Snapshot`](super::snapshot::Snapshot) and encodes it: a scrape never waits for the sampler
//! and the sampler never waits for a scrape.
//!
//! Not `tiny_http` (docs/dependencies.md): version 0.12 sets no timeouts on connections and its
//! accept thread stops for good at the first failed `accept` (as when the process runs out of file
//! descriptors), after which the port refuses every scrape.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::snapshot::{Format, Published, encode};

/// Connections served at once; more are answered `503 Service Unavailable`.
pub const MAX_CONNECTIONS: usize = 32;
/// How long a connection may take, from accept to the last byte of the answer.
pub const DEADLINE: Duration = Duration::from_secs(10);
/// The longest request head read (request line and headers).
pub const MAX_HEAD: usize = 8192;

/// The running server; [`Http::stop`] ends it.
pub struct Http {
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
    /// The address it listens on (with the port the OS chose for port 0).
    pub addr: SocketAddr,
}

/// What `/healthz` and `/` need besides the snapshot.
#[derive(Clone, Debug)]
pub struct Health {
    /// Longer than this without a sample is unhealthy (a few intervals).
    pub max_age: Duration,
}

impl Http {
    /// Listens on `addr` and starts accepting.
    pub fn start(addr: SocketAddr, published: Published, health: Health) -> Result<Http, String> {
        let listener = TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let accept = std::thread::Builder::new()
            .name("zescope-http".into())
            .spawn(move || accept_loop(&listener, &flag, &published, &health))
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

fn accept_loop(listener: &TcpListener, stop: &AtomicBool, published: &Published, health: &Health) {
    let open = Arc::new(AtomicUsize::new(0));
    let mut last_error: Option<Instant> = None;
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let stream = match conn {
            Ok(s) => s,
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
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            busy(stream);
            continue;
        }
        let (open2, published, health) = (Arc::clone(&open), published.clone(), health.clone());
        let spawned = std::thread::Builder::new().name("zescope-http-conn".into()).spawn(move || {
            connection(stream, &published, &health);
            open2.fetch_sub(1, Ordering::SeqCst);
        });
        if let Err(e) = spawned {
            open.fetch_sub(1, Ordering::SeqCst);
            log::warn!("serve: cannot start a thread for a connection: {e}");
        }
    }
}

/// `503` to a connection over the cap, without waiting for it.
fn busy(mut s: TcpStream) {
    let _ = s.set_write_timeout(Some(Duration::from_millis(100)));
    let _ = s.write_all(
        b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
}

/// A parsed request head.
#[derive(Debug, PartialEq)]
pub struct Head {
    /// `GET`, `HEAD`, ...
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The `Accept` header, if any.
    pub accept: Option<String>,
}

/// Parses a request head (up to, not including, the blank line); `Err` is the status to answer.
pub fn parse_head(head: &[u8]) -> Result<Head, u16> {
    let text = std::str::from_utf8(head).map_err(|_| 400u16)?;
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (Some(method), Some(target), Some(version), None) = (first.next(), first.next(), first.next(), first.next())
    else {
        return Err(400);
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) || !target.starts_with('/') {
        return Err(400);
    }
    if !version.starts_with("HTTP/1.") {
        return Err(505);
    }
    let mut accept = None;
    for line in lines {
        let (name, value) = line.split_once(':').ok_or(400u16)?;
        if name.trim().eq_ignore_ascii_case("accept") {
            accept = Some(value.trim().to_owned());
        }
    }
    let path = target.split('?').next().unwrap_or("").to_owned();
    Ok(Head { method: method.to_owned(), path, accept })
}

/// Reads the request head within the deadline: `Ok(None)` when the client sent nothing usable
/// in time (or left), `Err(status)` for a head that is too long.
fn read_head(s: &mut TcpStream, deadline: Instant) -> Result<Option<Vec<u8>>, u16> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.truncate(end);
            return Ok(Some(buf));
        }
        if buf.len() >= MAX_HEAD {
            return Err(431);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return Ok(None);
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return Ok(None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

fn connection(mut s: TcpStream, published: &Published, health: &Health) {
    let deadline = Instant::now() + DEADLINE;
    let _ = s.set_nodelay(true);
    let head = match read_head(&mut s, deadline).map(|h| h.map(|h| parse_head(&h))) {
        Ok(None) => return,
        Ok(Some(Ok(h))) => h,
        Ok(Some(Err(status))) | Err(status) => {
            return send(&mut s, deadline, status, "text/plain; charset=utf-8", "", reason(status).as_bytes(), false);
        }
    };
    let is_head = head.method == "HEAD";
    if head.method != "GET" && !is_head {
        let body = b"only GET and HEAD\n";
        return send(&mut s, deadline, 405, "text/plain; charset=utf-8", "Allow: GET, HEAD\r\n", body, false);
    }
    let (status, body, content_type) = answer(&head, published, health);
    send(&mut s, deadline, status, content_type, "", body.as_bytes(), is_head);
}

fn send(s: &mut TcpStream, deadline: Instant, status: u16, content_type: &str, extra: &str, body: &[u8], head: bool) {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() || s.set_write_timeout(Some(left)).is_err() {
        return;
    }
    let mut out = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
        reason(status),
        body.len()
    )
    .into_bytes();
    if !head {
        out.extend_from_slice(body);
    }
    // A client that went away or stopped reading: its loss.
    if let Err(e) = s.write_all(&out).and_then(|()| s.flush()) {
        log::debug!("serve: answering a request failed: {e}");
    }
}

fn answer(head: &Head, published: &Published, health: &Health) -> (u16, String, &'static str) {
    let snap = published.get();
    let plain = "text/plain; charset=utf-8";
    match head.path.as_str() {
        "/metrics" => {
            let format = negotiate(head.accept.as_deref());
            (200, encode(&snap, Instant::now(), format), format.content_type())
        }
        "/healthz" => match snap.last_sample.map(|t| t.elapsed()) {
            Some(a) if snap.running && a <= health.max_age => (200, "ok\n".to_owned(), plain),
            Some(a) if snap.running => (503, format!("no sample for {:.1} s\n", a.as_secs_f64()), plain),
            _ if snap.running => (503, "no sample yet\n".to_owned(), plain),
            _ => (503, "the sampler is not running\n".to_owned(), plain),
        },
        "/" => (200, index_page(&snap), "text/html; charset=utf-8"),
        _ => (404, "not found: try /metrics, /healthz or /\n".to_owned(), plain),
    }
}

/// Picks the format for an `Accept` header: OpenMetrics unless the client prefers `text/plain`
/// (by a higher q value, or by not accepting OpenMetrics at all).
pub fn negotiate(accept: Option<&str>) -> Format {
    let Some(accept) = accept else { return Format::OpenMetrics };
    let (mut om, mut text) = (None::<f64>, None::<f64>);
    for part in accept.split(',') {
        let mut fields = part.split(';').map(str::trim);
        let media = fields.next().unwrap_or("").to_ascii_lowercase();
        let q = fields
            .filter_map(|f| f.strip_prefix("q="))
            .find_map(|q| q.parse::<f64>().ok())
            .filter(|q| q.is_finite())
            .unwrap_or(1.0);
        let slot = match media.as_str() {
            "application/openmetrics-text" => &mut om,
            "text/plain" => &mut text,
            _ => continue,
        };
        *slot = Some(slot.map_or(q, |old: f64| old.max(q)));
    }
    match (om, text) {
        (None, Some(t)) if t > 0.0 => Format::PrometheusText,
        (Some(o), Some(t)) if t > o => Format::PrometheusText,
        _ => Format::OpenMetrics,
    }
}

fn index_page(snap: &super::snapshot::Snapshot) -> String {
    let names: Vec<String> = snap
        .layout
        .iter()
        .flat_map(|l| &l.devices)
        .filter_map(|d| d.iter().find(|(k, _)| k == "device").map(|(_, v)| html_escape(v)))
        .collect();
    let device = if names.is_empty() { "(no run yet)".to_owned() } else { names.join(", ") };
    let state = if snap.running { "sampling" } else { "not sampling" };
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>zescope serve</title></head><body>\n\
         <h1>zescope serve</h1>\n<p>{device}: {state}, {} samples so far.</p>\n\
         <ul><li><a href=\"/metrics\">/metrics</a> (OpenMetrics; Prometheus text for clients that ask for it)</li>\n\
         <li><a href=\"/healthz\">/healthz</a></li></ul>\n</body></html>\n",
        snap.samples
    )
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_heads_parse_or_name_the_status_to_answer() {
        let h = parse_head(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\naccept: text/plain;version=0.0.4").unwrap();
        assert_eq!((h.method.as_str(), h.path.as_str()), ("GET", "/metrics"));
        assert_eq!(h.accept.as_deref(), Some("text/plain;version=0.0.4"));
        assert_eq!(parse_head(b"GET /metrics HTTP/2.0"), Err(505));
        for bad in [
            &b"\x00\x01garbage"[..],
            b"GET",
            b"GET metrics HTTP/1.1",
            b"GET / HTTP/1.1\r\nno colon",
            b"\xff / HTTP/1.1",
        ] {
            assert_eq!(parse_head(bad), Err(400), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn openmetrics_unless_plain_text_is_preferred() {
        assert_eq!(negotiate(None), Format::OpenMetrics);
        assert_eq!(negotiate(Some("*/*")), Format::OpenMetrics);
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,\
                          text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(negotiate(Some(prometheus)), Format::OpenMetrics);
        assert_eq!(negotiate(Some("text/plain;version=0.0.4")), Format::PrometheusText);
        assert_eq!(negotiate(Some("text/plain;q=0.9, application/openmetrics-text;q=0.5")), Format::PrometheusText);
        assert_eq!(negotiate(Some("text/plain;q=0")), Format::OpenMetrics);
        assert_eq!(negotiate(Some("text/plain;q=nonsense")), Format::PrometheusText);
    }
}
