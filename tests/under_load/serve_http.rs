//! `zescope serve`'s HTTP side against hostile and odd clients, over loopback, with the server
//! in-process (`serve::http::Http` over an empty snapshot: the page is small, the rules the same):
//! well-behaved scrapes are answered before any client's deadline while 40 idle or slow-drip clients hold
//! connections; an over-long head gets its 414/431 rather than a reset; bare LF, a bare CR, bad
//! versions, a missing `Host` are answered at once; absolute-form targets are routed by their path,
//! asterisk-form refused; a scrape without `Accept` gets Prometheus text 0.0.4.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use zescope::commands::serve::Published;
use zescope::commands::serve::http::{Health, Http};

fn server() -> Http {
    let health = Health { max_age: Duration::from_secs(5) };
    Http::start("127.0.0.1:0".parse().unwrap(), Published::default(), health).unwrap()
}

/// Sends `raw` and reads the answer until the server closes, for at most `wait`:
/// (status, head, body); status 0 when no answer came (a reset, a timeout, a bare close).
fn exchange(addr: SocketAddr, raw: &[u8], wait: Duration) -> (u16, String, String) {
    let (status, head, body, _) = exchange_all(addr, raw, wait);
    (status, head, body)
}

/// As [`exchange`], and whether the request was sent whole and the answer ended in a clean close
/// (not a reset, not a timeout).
fn exchange_all(addr: SocketAddr, raw: &[u8], wait: Duration) -> (u16, String, String, bool) {
    let Ok(mut s) = TcpStream::connect(addr) else { return (0, String::new(), String::new(), false) };
    s.set_read_timeout(Some(wait)).unwrap();
    s.set_write_timeout(Some(wait)).unwrap();
    // A server that answers before reading everything may make this fail: the answer is what counts.
    let sent = s.write_all(raw);
    let mut bytes = Vec::new();
    let read = s.read_to_end(&mut bytes);
    let clean = sent.is_ok() && read.is_ok();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.strip_prefix("HTTP/1.1 ").and_then(|r| r.get(..3)).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, head.to_owned(), body.to_owned(), clean)
}

fn get(addr: SocketAddr, target: &str, accept: Option<&str>) -> (u16, String, String) {
    let accept = accept.map(|a| format!("Accept: {a}\r\n")).unwrap_or_default();
    let raw = format!("GET {target} HTTP/1.1\r\nHost: zescope\r\n{accept}Connection: close\r\n\r\n");
    exchange(addr, raw.as_bytes(), Duration::from_secs(1))
}

/// Runs 30 scrapes one after the other, 50 ms apart; each must be a whole `200` before the
/// server's head deadline: a server that waited on one of the idle or dripping clients before
/// taking the scrape would answer only when that client's deadline dropped it (`HEAD_DEADLINE`,
/// 2 s, for an idle one; `DEADLINE` for a drip), so the bound is the behaviour, not a speed.
fn thirty_scrapes(addr: SocketAddr, beside: &str) {
    use zescope::commands::serve::http::HEAD_DEADLINE;
    for i in 0..30 {
        let started = Instant::now();
        let accept = "GET /metrics HTTP/1.1\r\nHost: zescope\r\nConnection: close\r\n\r\n";
        let (status, head, body) = exchange(addr, accept.as_bytes(), HEAD_DEADLINE);
        let took = started.elapsed();
        assert_eq!(status, 200, "scrape {i} beside {beside}: {head}");
        assert!(body.contains("zescope_sampler_running"), "scrape {i}: {body}");
        assert!(took < HEAD_DEADLINE, "scrape {i} beside {beside} waited {took:?}, as long as a client's deadline");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn scrapes_are_answered_while_40_idle_sockets_hold_connections() {
    let _alone = crate::alone();
    let http = server();
    let idle: Vec<TcpStream> = (0..40).map(|_| TcpStream::connect(http.addr).unwrap()).collect();
    // Let the server take them all in.
    std::thread::sleep(Duration::from_millis(200));
    thirty_scrapes(http.addr, "40 idle sockets");
    drop(idle);
    http.stop();
}

#[test]
fn scrapes_are_answered_while_40_clients_drip_bytes() {
    let _alone = crate::alone();
    let http = server();
    let stop = Arc::new(AtomicBool::new(false));
    // Each sends a request one byte every 200 ms and connects again, at that pace, whenever it is
    // dropped. (Reconnecting in a tight loop is a flood of connections from the scrape's own
    // address, not a slow client: the slots shed the longest idle connection, so a flood of
    // new ones makes a scrape whose head is a millisecond late the longest idle: see the
    // contract in `src/commands/serve/http.rs`.)
    let drips: Vec<_> = (0..40)
        .map(|_| {
            let (stop, addr) = (Arc::clone(&stop), http.addr);
            std::thread::spawn(move || {
                let line =
                    b"GET /metrics HTTP/1.1\r\nHost: zescope\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
                while !stop.load(Ordering::SeqCst) {
                    let Ok(mut s) = TcpStream::connect(addr) else {
                        std::thread::sleep(Duration::from_millis(200));
                        continue;
                    };
                    for b in line.iter().cycle() {
                        if stop.load(Ordering::SeqCst) || s.write_all(&[*b]).is_err() {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(200));
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    thirty_scrapes(http.addr, "40 dripping clients");
    stop.store(true, Ordering::SeqCst);
    for d in drips {
        d.join().unwrap();
    }
    http.stop();
}

#[test]
fn an_overlong_head_gets_its_answer_not_a_reset() {
    let _alone = crate::alone();
    let http = server();
    let mut line = b"GET /".to_vec();
    line.resize(2 << 20, b'a');
    line.extend_from_slice(b" HTTP/1.1\r\nHost: zescope\r\n\r\n");
    // The whole request is read (and dropped) before the close, so the client's send does not
    // fail and the answer is not lost to a reset.
    let (status, head, _, clean) = exchange_all(http.addr, &line, Duration::from_secs(5));
    assert_eq!((status, clean), (414, true), "a 2 MiB request line: {head:?}");
    let mut header = b"GET /metrics HTTP/1.1\r\nHost: zescope\r\nX-Big: ".to_vec();
    header.resize(2 << 20, b'b');
    header.extend_from_slice(b"\r\n\r\n");
    let (status, head, _, clean) = exchange_all(http.addr, &header, Duration::from_secs(5));
    assert_eq!((status, clean), (431, true), "a 2 MiB header: {head:?}");
    assert_eq!(get(http.addr, "/metrics", None).0, 200);
    http.stop();
}

#[test]
fn bare_line_feeds_and_carriage_returns_are_answered_400_at_once() {
    let _alone = crate::alone();
    let http = server();
    for raw in [
        &b"GET /metrics HTTP/1.1\nHost: zescope\n\n"[..],
        b"GET /metrics HTTP/1.1\r\nHost: zescope\n\r\n",
        b"GET /metrics HTTP/1.1\n",
        b"GET /metrics HTTP/1.1\r\nHost: zes\rcope\r\n\r\n",
    ] {
        // No blank line that ends a head, or not a CRLF one: answered without waiting for more.
        let (status, head, _) = exchange(http.addr, raw, Duration::from_secs(1));
        assert_eq!(status, 400, "{:?}: {head:?}", String::from_utf8_lossy(raw));
    }
    http.stop();
}

#[test]
fn only_http_1_0_and_1_1_are_served() {
    let _alone = crate::alone();
    let http = server();
    let ask = |line: &str, host: bool| {
        let host = if host { "Host: zescope\r\n" } else { "" };
        exchange(http.addr, format!("{line}\r\n{host}\r\n").as_bytes(), Duration::from_secs(1)).0
    };
    assert_eq!(ask("GET /metrics HTTP/1.1", true), 200);
    assert_eq!(ask("GET /metrics HTTP/1.0", false), 200, "HTTP/1.0 needs no Host");
    for bad in ["GET /metrics HTTP/1.banana", "GET /metrics http/1.1", "GET /metrics HTTP/1.1x", "GET /metrics HTTP/11"]
    {
        assert_eq!(ask(bad, true), 400, "{bad}");
    }
    for newer in ["GET /metrics HTTP/2.0", "GET /metrics HTTP/1.2", "GET /metrics HTTP/0.9"] {
        assert_eq!(ask(newer, true), 505, "{newer}");
    }
    assert_eq!(ask("GET /metrics HTTP/1.1", false), 400, "HTTP/1.1 without Host");
    assert_eq!(ask("GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b", false), 400, "two Hosts");
    assert_eq!(ask("GET  /metrics HTTP/1.1", true), 400, "two spaces");
    assert_eq!(ask("GET /metrics HTTP/1.1\r\nAccept : text/plain", true), 400, "space before the colon");
    assert_eq!(ask("GET /metrics HTTP/1.1\r\nAccept: text/plain\r\n folded", true), 400, "obs-fold");
    http.stop();
}

#[test]
fn absolute_form_is_routed_by_its_path_and_asterisk_form_refused() {
    let _alone = crate::alone();
    let http = server();
    let target = format!("http://{}/metrics", http.addr);
    let (status, _, body) = get(http.addr, &target, None);
    assert_eq!(status, 200, "{target}");
    assert!(body.contains("zescope_sampler_running"), "{body}");
    assert_eq!(get(http.addr, "HTTP://zescope/metrics?x=1", None).0, 200);
    assert_eq!(get(http.addr, "http://zescope/nowhere", None).0, 404);
    assert_eq!(get(http.addr, "http://zescope", None).0, 200, "an empty path is /");
    assert_eq!(get(http.addr, "*", None).0, 400);
    let (status, _, _) = exchange(http.addr, b"OPTIONS * HTTP/1.1\r\nHost: zescope\r\n\r\n", Duration::from_secs(1));
    assert_eq!(status, 400);
    assert_eq!(get(http.addr, "zescope:9464", None).0, 400, "authority-form");
    http.stop();
}

#[test]
fn a_scrape_without_openmetrics_in_accept_gets_prometheus_text() {
    let _alone = crate::alone();
    let http = server();
    let text = "text/plain; version=0.0.4; charset=utf-8";
    let om = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,\
                      text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    for (accept, want) in [
        (None, text),
        (Some("*/*"), text),
        (Some("text/plain"), text),
        (Some(prometheus), om),
        (Some("application/openmetrics-text"), om),
        (Some("application/openmetrics-text;q=0, text/plain"), text),
        (Some("application/openmetrics-text;q=0"), text),
        (Some("text/plain;q=0.9, application/openmetrics-text;q=0.5"), text),
    ] {
        let (status, head, body) = get(http.addr, "/metrics", accept);
        assert_eq!(status, 200);
        assert!(head.to_ascii_lowercase().contains(&format!("content-type: {want}\r\n")), "{accept:?}: {head}");
        assert_eq!(body.ends_with("# EOF\n"), want == om, "{accept:?}: {body}");
    }
    http.stop();
}
