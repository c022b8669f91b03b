//! The HTTP side of `zescope serve`: `/metrics`, `/` and `/healthz`, on `tiny_http`.
//!
//! A fixed number of worker threads answer requests; each reads the newest published
//! [`Snapshot`](super::snapshot::Snapshot) and encodes it, so a scrape never waits for the
//! sampler and the sampler never waits for a scrape. Every connection has read and write
//! timeouts (set on the listening socket, which accepted sockets inherit), so a client that sends
//! nothing or reads nothing is dropped after [`IO_TIMEOUT`]; a client that goes away mid-response
//! costs a failed write, nothing more.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tiny_http::{Header, Method, Request, Response, Server};

use super::snapshot::{Format, Published, encode};

/// Worker threads answering requests.
pub const WORKERS: usize = 4;
/// How long a connection may take to send its request or read the answer.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// The running server; [`Http::stop`] ends its workers.
pub struct Http {
    server: Arc<Server>,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<()>>,
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
    /// Listens on `addr` and starts the workers.
    pub fn start(addr: SocketAddr, published: Published, health: Health) -> Result<Http, String> {
        let listener = TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        for (which, name) in
            [(rustix::net::sockopt::Timeout::Recv, "read"), (rustix::net::sockopt::Timeout::Send, "write")]
        {
            rustix::net::sockopt::set_socket_timeout(&listener, which, Some(IO_TIMEOUT))
                .map_err(|e| format!("cannot set the {name} timeout on {addr}: {e}"))?;
        }
        let server =
            Arc::new(Server::from_listener(listener, None).map_err(|e| format!("cannot serve on {addr}: {e}"))?);
        let stop = Arc::new(AtomicBool::new(false));
        let mut workers = Vec::with_capacity(WORKERS);
        for i in 0..WORKERS {
            let (server, stop, published, health) =
                (Arc::clone(&server), Arc::clone(&stop), published.clone(), health.clone());
            let w = std::thread::Builder::new()
                .name(format!("zescope-http-{i}"))
                .spawn(move || work(&server, &stop, &published, &health))
                .map_err(|e| format!("cannot start the HTTP workers: {e}"))?;
            workers.push(w);
        }
        Ok(Http { server, stop, workers, addr: local })
    }

    /// Stops answering: the workers finish the request in hand and end.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.server.unblock();
        for w in self.workers {
            let _ = w.join();
        }
    }
}

fn work(server: &Server, stop: &AtomicBool, published: &Published, health: &Health) {
    while !stop.load(Ordering::Relaxed) {
        match server.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(rq)) => answer(rq, published, health),
            Ok(None) => {}
            // The accept timeout and failed connections come back as errors: nothing to answer.
            Err(e) => log::debug!("serve: {e}"),
        }
    }
}

fn header(name: &str, value: &str) -> Header {
    // Both are ASCII constants or built from them; a failure would be a bug, answered without it.
    Header::from_bytes(name.as_bytes(), value.as_bytes()).unwrap_or_else(|()| {
        Header::from_bytes(&b"X-Zescope"[..], &b"invalid-header"[..]).expect("a constant header is valid")
    })
}

fn answer(rq: Request, published: &Published, health: &Health) {
    let path = rq.url().split('?').next().unwrap_or("").to_owned();
    if !matches!(rq.method(), Method::Get | Method::Head) {
        let r = Response::from_string("only GET and HEAD\n")
            .with_status_code(405)
            .with_header(header("Allow", "GET, HEAD"));
        return respond(rq, r);
    }
    let snap = published.get();
    let (status, body, content_type) = match path.as_str() {
        "/metrics" => {
            let accept = rq.headers().iter().find(|h| h.field.equiv("Accept")).map(|h| h.value.as_str().to_owned());
            let format = negotiate(accept.as_deref());
            (200, encode(&snap, Instant::now(), format), format.content_type())
        }
        "/healthz" => {
            let age = snap.last_sample.map(|t| t.elapsed());
            match age {
                Some(a) if snap.running && a <= health.max_age => (200, "ok\n".to_owned(), "text/plain; charset=utf-8"),
                Some(a) if snap.running => {
                    (503, format!("no sample for {:.1} s\n", a.as_secs_f64()), "text/plain; charset=utf-8")
                }
                _ if snap.running => (503, "no sample yet\n".to_owned(), "text/plain; charset=utf-8"),
                _ => (503, "the sampler is not running\n".to_owned(), "text/plain; charset=utf-8"),
            }
        }
        "/" => (200, index_page(&snap), "text/html; charset=utf-8"),
        _ => (404, "not found: try /metrics, /healthz or /\n".to_owned(), "text/plain; charset=utf-8"),
    };
    // tiny_http sends no body for HEAD (it keeps the Content-Length of GET).
    let r = Response::from_string(body).with_status_code(status).with_header(header("Content-Type", content_type));
    respond(rq, r);
}

fn respond<R: std::io::Read>(rq: Request, r: Response<R>) {
    // A client that went away or stopped reading: its loss.
    if let Err(e) = rq.respond(r) {
        log::debug!("serve: answering a request failed: {e}");
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
    let device = snap
        .layout
        .as_ref()
        .and_then(|l| l.device.iter().find(|(k, _)| k == "device").map(|(_, v)| html_escape(v)))
        .unwrap_or_else(|| "(no run yet)".into());
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
