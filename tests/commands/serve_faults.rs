//! `zescope serve`'s HTTP side when its own code fails, over loopback with the server in-process:
//! a handler that panics gives its connection slot back (more panics than there are slots, and
//! the server still answers), and a page that cannot be encoded is a `500` naming the problem,
//! not an empty `200`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zescope::commands::serve::http::{Answer, Head, Health, Http, MAX_CONNECTIONS, Pages, Site};
use zescope::commands::serve::{Format, Latest, Published};

fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: zescope\r\n\r\n").as_bytes()).unwrap();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    let status = text.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, text)
}

/// zescope's pages, and a `/panic` whose handler panics.
struct Panicky(Pages);

impl Site for Panicky {
    fn answer(&self, head: &Head) -> Answer {
        assert!(head.path != "/panic", "a handler's bug");
        self.0.answer(head)
    }
}

#[test]
fn a_handler_that_panics_gives_its_slot_back() {
    let pages = Pages::new(Published::default(), Health { max_age: Duration::from_secs(5) });
    let http = Http::start_site("127.0.0.1:0".parse().unwrap(), Arc::new(Panicky(pages))).unwrap();
    // Twice as many panics as slots, one after the other: each connection is closed unanswered.
    for i in 0..2 * MAX_CONNECTIONS {
        let (status, text) = get(http.addr, "/panic");
        assert_eq!(status, 0, "panic {i}: {text}");
    }
    // Every slot came back (a slot kept by a dead busy connection is never shed: a leak would
    // make this a 503).
    let (status, text) = get(http.addr, "/metrics");
    assert_eq!(status, 200, "{text}");
    http.stop();
}

fn failing(_: &Arc<Latest>, _: Instant, format: Format) -> Result<String, String> {
    Err(format!("encoding the metrics as {} failed", format.name()))
}

#[test]
fn a_page_that_cannot_be_encoded_is_a_500_naming_the_problem() {
    let pages = Pages::with_encoder(Published::default(), Health { max_age: Duration::from_secs(5) }, failing);
    let http = Http::start_site("127.0.0.1:0".parse().unwrap(), Arc::new(pages)).unwrap();
    let (status, text) = get(http.addr, "/metrics");
    assert_eq!(status, 500, "{text}");
    let body = text.split_once("\r\n\r\n").unwrap().1;
    assert_eq!(body, "500 Internal Server Error: encoding the metrics as Prometheus text 0.0.4 failed\n");
    assert!(text.contains("Content-Type: text/plain; charset=utf-8\r\n"), "{text}");
    // The other pages are unaffected.
    assert_eq!(get(http.addr, "/healthz").0, 503);
    http.stop();
}
