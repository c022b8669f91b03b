//! The exporter's HTTP client: one blocking HTTP/1.1 POST per export over std's `TcpStream`,
//! implementing the SDK's `HttpClient` so the OTLP exporter needs none of reqwest, hyper or
//! tokio (docs/dependencies.md). Plain `http://` only (a collector on the host or its network,
//! as OTel deployments run an agent); an `https://` endpoint is refused when the exporter starts.
//!
//! Every connect, write and read is bounded by the export timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`),
//! so a collector that is down or stalls holds up the exporter's own thread at most that long,
//! never the sampler. One connection per export (`Connection: close`): an export a second is
//! nothing to keep alive for, and a collector restarted between two exports is simply reached
//! anew.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// Largest answer read (a collector answers an `ExportMetricsServiceResponse`, a few bytes).
const MAX_ANSWER: u64 = 1 << 20;

/// The blocking client.
#[derive(Debug)]
pub(crate) struct Client {
    /// Bound on connecting, and on each write and read.
    pub(crate) timeout: Duration,
}

fn err(message: String) -> HttpError {
    message.into()
}

impl Client {
    fn post(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let uri = request.uri();
        if uri.scheme_str() != Some("http") {
            return Err(err(format!("{uri}: only http:// endpoints are supported")));
        }
        let host = uri.host().ok_or_else(|| err(format!("{uri}: no host")))?;
        let port = uri.port_u16().unwrap_or(80);
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let addrs = (host.trim_start_matches('[').trim_end_matches(']'), port).to_socket_addrs()?;
        let mut last = err(format!("{host}:{port}: no address"));
        let mut stream = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, self.timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = err(format!("{addr}: {e}")),
            }
        }
        let mut stream = stream.ok_or(last)?;
        stream.set_write_timeout(Some(self.timeout))?;
        stream.set_read_timeout(Some(self.timeout))?;
        let _ = stream.set_nodelay(true);
        let body = request.body();
        let mut head = format!("POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n");
        for (k, v) in request.headers() {
            let v = v.to_str().map_err(|_| err(format!("header {k} is not text")))?;
            head += &format!("{k}: {v}\r\n");
        }
        head += &format!("Content-Length: {}\r\n\r\n", body.len());
        stream.write_all(head.as_bytes())?;
        stream.write_all(body)?;
        stream.flush()?;
        let mut answer = Vec::new();
        stream.take(MAX_ANSWER).read_to_end(&mut answer)?;
        parse(&answer)
    }
}

/// An HTTP/1.1 answer: its status and body (by `Content-Length`, or to the end).
fn parse(answer: &[u8]) -> Result<Response<Bytes>, HttpError> {
    let end =
        answer.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| err("an incomplete HTTP answer".into()))?;
    let head = std::str::from_utf8(&answer[..end]).map_err(|_| err("an HTTP answer's head is not text".into()))?;
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| err(format!("not an HTTP status line: {:?}", head.lines().next())))?;
    let mut body = &answer[end + 4..];
    let length = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case("content-length").then(|| v.trim().parse::<usize>().ok()).flatten()
    });
    if let Some(n) = length {
        body = &body[..n.min(body.len())];
    }
    Response::builder().status(status).body(Bytes::copy_from_slice(body)).map_err(|e| err(format!("HTTP answer: {e}")))
}

#[async_trait::async_trait]
impl HttpClient for Client {
    /// Blocks the calling thread: the SDK's periodic reader runs exports on its own thread.
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        self.post(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_by_status_and_length() {
        let r =
            parse(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 2\r\n\r\nabcd").unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(&r.body()[..], b"ab");
        let r = parse(b"HTTP/1.0 503 Busy\r\n\r\nlater").unwrap();
        assert_eq!((r.status().as_u16(), &r.body()[..]), (503, &b"later"[..]));
        assert!(parse(b"HTTP/1.1 200 OK\r\n").is_err(), "no end of head");
        assert!(parse(b"garbage\r\n\r\n").is_err());
    }

    #[test]
    fn a_collector_that_is_not_there_is_an_error_not_a_wait() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let c = Client { timeout: Duration::from_secs(5) };
        let req = Request::post(format!("http://{addr}/v1/metrics")).body(Bytes::from_static(b"x")).unwrap();
        assert!(c.post(req).is_err());
        let req = Request::post("https://127.0.0.1:1/v1/metrics").body(Bytes::from_static(b"x")).unwrap();
        assert!(c.post(req).unwrap_err().to_string().contains("only http://"));
    }
}
