//! The exporter's HTTP client: one blocking HTTP/1.1 POST per export over std's `TcpStream`,
//! so the export needs none of reqwest, hyper or tokio (docs/dependencies.md). Plain `http://`
//! only (a collector on the host or its network, as OTel deployments run an agent); an
//! `https://` endpoint is refused when the exporter starts.
//!
//! Every connect, write and read is bounded by the export timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`),
//! so a collector that is down or stalls holds up the exporter's own thread at most that long,
//! never the sampler. One connection per export (`Connection: close`): an export a second is
//! nothing to keep alive for, and a collector restarted between two exports is simply reached
//! anew.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Largest answer read (a collector answers an `ExportMetricsServiceResponse`, a few bytes).
const MAX_ANSWER: u64 = 1 << 20;

/// An `http://host[:port][/path]` URL, split.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Url {
    host: String,
    port: u16,
    path: String,
}

impl Url {
    /// `url` split; errs on another scheme or no host.
    pub(crate) fn parse(url: &str) -> Result<Url, String> {
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            format!("{url}: only http:// endpoints are supported (a collector on the host or its network)")
        })?;
        let (authority, path) = rest.find('/').map_or((rest, "/"), |i| rest.split_at(i));
        let (host, port) = match authority.rsplit_once(':').filter(|(h, _)| !h.ends_with(':')) {
            Some((h, p)) if !authority.ends_with(']') => {
                (h, p.parse().map_err(|_| format!("{url}: the port {p:?} is not a number"))?)
            }
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(format!("{url}: no host"));
        }
        Ok(Url { host: host.to_owned(), port, path: path.to_owned() })
    }
}

/// A collector's answer.
#[derive(Debug, PartialEq)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
}

/// POSTs `body` to `url` with `headers`, every step bounded by `timeout`.
pub(crate) fn post(url: &Url, headers: &[(String, String)], body: &[u8], timeout: Duration) -> Result<Answer, String> {
    let (host, port) = (&url.host, url.port);
    let addrs = (host.trim_start_matches('[').trim_end_matches(']'), port)
        .to_socket_addrs()
        .map_err(|e| format!("{host}:{port}: {e}"))?;
    let mut last = format!("{host}:{port}: no address");
    let mut stream = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("{addr}: {e}"),
        }
    }
    let mut stream = stream.ok_or(last)?;
    let io = |e: std::io::Error| format!("{host}:{port}: {e}");
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    let _ = stream.set_nodelay(true);
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\nContent-Type: application/x-protobuf\r\n\
         User-Agent: zescope/{}\r\n",
        url.path,
        env!("CARGO_PKG_VERSION")
    );
    for (k, v) in headers {
        if k.contains(['\r', '\n', ':']) || v.contains(['\r', '\n']) {
            return Err(format!("header {k:?}: not a header name and value"));
        }
        head += &format!("{k}: {v}\r\n");
    }
    head += &format!("Content-Length: {}\r\n\r\n", body.len());
    stream.write_all(head.as_bytes()).map_err(io)?;
    stream.write_all(body).map_err(io)?;
    stream.flush().map_err(io)?;
    let mut answer = Vec::new();
    stream.take(MAX_ANSWER).read_to_end(&mut answer).map_err(io)?;
    parse(&answer)
}

/// An HTTP/1.1 answer: its status and body (by `Content-Length`, or to the end).
fn parse(answer: &[u8]) -> Result<Answer, String> {
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n").ok_or("an incomplete HTTP answer")?;
    let head = std::str::from_utf8(&answer[..end]).map_err(|_| "an HTTP answer's head is not text")?;
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an HTTP status line: {:?}", head.lines().next()))?;
    let mut body = &answer[end + 4..];
    let length = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case("content-length").then(|| v.trim().parse::<usize>().ok()).flatten()
    });
    if let Some(n) = length {
        body = &body[..n.min(body.len())];
    }
    Ok(Answer { status, body: body.to_vec() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_by_status_and_length() {
        let r =
            parse(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 2\r\n\r\nabcd").unwrap();
        assert_eq!(r, Answer { status: 200, body: b"ab".to_vec() });
        let r = parse(b"HTTP/1.0 503 Busy\r\n\r\nlater").unwrap();
        assert_eq!(r, Answer { status: 503, body: b"later".to_vec() });
        assert!(parse(b"HTTP/1.1 200 OK\r\n").is_err(), "no end of head");
        assert!(parse(b"garbage\r\n\r\n").is_err());
    }

    #[test]
    fn urls_split_and_only_http() {
        let u = |host: &str, port, path: &str| Url { host: host.into(), port, path: path.into() };
        assert_eq!(Url::parse("http://c:4318/v1/metrics"), Ok(u("c", 4318, "/v1/metrics")));
        assert_eq!(Url::parse("http://c"), Ok(u("c", 80, "/")));
        assert_eq!(Url::parse("http://[::1]:9/x"), Ok(u("[::1]", 9, "/x")));
        assert_eq!(Url::parse("http://[::1]/x"), Ok(u("[::1]", 80, "/x")));
        assert!(Url::parse("https://c:4318/v1/metrics").unwrap_err().contains("only http://"));
        assert!(Url::parse("http://c:port/").unwrap_err().contains("not a number"));
        assert!(Url::parse("http:///v1").unwrap_err().contains("no host"));
    }

    #[test]
    fn a_collector_that_is_not_there_is_an_error_not_a_wait() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let url = Url::parse(&format!("http://{addr}/v1/metrics")).unwrap();
        assert!(post(&url, &[], b"x", Duration::from_secs(5)).is_err());
    }
}
