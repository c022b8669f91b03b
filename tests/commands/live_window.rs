//! What the window drains when it watches a remote run (`zescope --connect HOST:PORT`): the
//! remote thread (`zescope::live::remote`) behind a sampler handle, on a `serve` whose link is cut
//! mid-run. The handle says REMOTE (with the link's bytes/s and round trip) and "reconnecting",
//! passes on the marker `zescope mark` sent to the server, and holds every sample of the run
//! across the cut: the same rows the server saved (`--save`). (The window itself draws what it drains as
//! it draws a local run; `live_xvfb` watches it do so under Xvfb.)

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use zescope::live::client::Target;
use zescope_sampler::Event;

use crate::live::{Relay, Serve};

#[test]
fn the_windows_feed_holds_every_sample_across_a_dropped_link_and_says_remote_and_reconnecting() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("served.ron");
    // The server's markers socket, where `zescope mark` on its host sends.
    // (In a folder only this user can use, as the markers socket's rules ask.)
    let folder = dir.path().join("markers");
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let marks = folder.join("markers.sock");
    let serve = Serve::start_env("127.0.0.1:0", &["--save", saved.to_str().unwrap()], &[("ZESCOPE_MARKERS", &marks)]);
    let relay = Relay::start(serve.addr);
    let mut h = zescope::live::remote::spawn(Target { addr: relay.addr.to_string(), token: None }, None);
    let mut serve = Some(serve);
    let (mut rows, mut notices, mut sources) = (0usize, Vec::<String>::new(), Vec::<String>::new());
    let mut got: BTreeMap<usize, (Vec<i64>, Vec<f64>)> = BTreeMap::new();
    let (mut cut, mut stopped, mut marked) = (false, false, Vec::<String>::new());
    let mut mark_sent = false;
    let deadline = Instant::now() + Duration::from_secs(90);
    while !stopped {
        assert!(
            Instant::now() < deadline,
            "no end of the run; notices: {notices:?}, markers {marked:?} (sent: {mark_sent})"
        );
        let Ok(ev) = h.events.recv_timeout(Duration::from_millis(100)) else { continue };
        match ev {
            Event::Inventory(i) => sources.push(i.source.map(|s| s.description).unwrap_or_default()),
            Event::Samples(b) => {
                rows += b.timestamps.len();
                let e = got.entry(b.stream).or_default();
                e.0.extend(&b.timestamps);
                e.1.extend(&b.values);
            }
            Event::Notice { message, .. } => notices.push(message),
            Event::Marker { name, .. } => marked.push(name),
            Event::RunStopped { .. } => stopped = true,
            _ => {}
        }
        // Once serve listens for markers (it says so after its address).
        if !mark_sent && rows > 100 && marks.exists() {
            let out =
                crate::support::zescope().args(["mark", "served"]).env("ZESCOPE_MARKERS", &marks).output().unwrap();
            assert!(out.status.success(), "zescope mark: {}", String::from_utf8_lossy(&out.stderr));
            mark_sent = true;
        }
        if !cut && rows > 300 {
            relay.cut();
            cut = true;
        }
        // Once reconnected, and the link's figures told since (a second of the link up).
        if notices.iter().any(|n| n.ends_with("reconnected"))
            && !marked.is_empty()
            && sources.last().is_some_and(|s| s.contains(" · rtt "))
            && let Some(s) = serve.take()
        {
            std::thread::sleep(Duration::from_millis(300));
            s.stop();
        }
    }
    assert!(h.shutdown(Duration::from_secs(5)).is_ok(), "the remote thread ends on shutdown");
    // While the link is up, the source carries its figures after the address: bytes/s and the
    // round trip of a ping.
    let figures = sources.iter().filter(|s| s.contains("/s · rtt ") && s.ends_with(" ms")).count();
    assert!(figures > 0, "the link's bytes/s and round trip: {sources:?}");
    let sources: Vec<String> = sources.iter().map(|s| s.split(" · ").next().unwrap().to_owned()).collect();
    let remote = format!("REMOTE {}", relay.addr);
    let addr = relay.addr.to_string();
    assert!(sources.iter().all(|s| s.starts_with("REMOTE ") && s.ends_with(&addr)), "{sources:?}");
    let down = format!("REMOTE reconnecting {addr}");
    assert!(sources.contains(&down), "the source says so while the link is down: {sources:?}");
    assert_eq!(sources.last(), Some(&remote), "and no more once it is back");
    assert!(notices.iter().any(|n| n.starts_with(&remote) && n.ends_with("reconnecting")), "{notices:?}");
    assert_eq!(marked, ["served"], "the server's marker came to the window, once");
    let session = zescope_model::session::load(&saved).unwrap();
    assert_eq!(got.len(), session.streams.len());
    for ((stream, (ts, values)), s) in got.iter().zip(&session.streams) {
        let raw = &s.data.raw;
        assert!(*ts == raw.timestamps, "stream {stream}: {} drained, {} saved", ts.len(), raw.timestamps.len());
        let same =
            values.iter().zip(&raw.values).all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        assert!(same && values.len() == raw.values.len(), "stream {stream}: the same values");
    }
}

/// The window's Disconnect (or opening a file) sends `Stop`: the remote thread leaves the feed and
/// stops the run on the window's side (`Requested`), says so, and names its source "REMOTE
/// disconnected HOST:PORT", while the server's run goes on (its `/metrics` still counts up);
/// then it answers `Sync` and ends on `Shutdown`. Before, `Stop` was ignored, so File → Open
/// during a remote run waited for a stop that never came.
#[test]
fn stop_leaves_the_feed_and_the_servers_run_goes_on() {
    use zescope_sampler::{Command, StopReason};
    let serve = Serve::start("127.0.0.1:0", &[]);
    let h = zescope::live::remote::spawn(Target { addr: serve.addr.to_string(), token: None }, None);
    let (mut rows, mut sources, mut notices, mut reason) = (0usize, Vec::<String>::new(), Vec::<String>::new(), None);
    let mut synced = false;
    let deadline = Instant::now() + Duration::from_secs(60);
    while !synced {
        assert!(Instant::now() < deadline, "no stop; sources {sources:?}, notices {notices:?}");
        let Ok(ev) = h.events.recv_timeout(Duration::from_millis(100)) else { continue };
        match ev {
            Event::Samples(b) => {
                rows += b.timestamps.len();
                if rows > 50 && reason.is_none() {
                    h.send(Command::Stop);
                }
            }
            Event::Inventory(i) => sources.push(i.source.map(|s| s.description).unwrap_or_default()),
            Event::Notice { message, .. } => notices.push(message),
            Event::RunStopped { reason: r, .. } => {
                reason = Some(r);
                h.send(Command::Sync(7));
            }
            Event::Synced(7) => synced = true,
            _ => {}
        }
    }
    assert_eq!(reason, Some(StopReason::Requested), "the run stopped here, as asked");
    let down = format!("REMOTE disconnected {}", serve.addr);
    assert_eq!(sources.last(), Some(&down), "the source says so: {sources:?}");
    assert!(notices.iter().any(|n| n.contains("disconnected; the server's run goes on")), "{notices:?}");
    // The server's run goes on: its achieved samples keep counting.
    let count = || -> u64 {
        let (_, _, page) = crate::support::serve::get(serve.addr, "/metrics", None);
        page.lines().find_map(|l| l.strip_prefix("zescope_sampler_samples_total ")).map_or(0, |v| v.parse().unwrap())
    };
    let before = count();
    let deadline = Instant::now() + Duration::from_secs(30);
    while count() <= before {
        assert!(Instant::now() < deadline, "the server's run did not go on after the disconnect");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut h = h;
    assert!(h.shutdown(Duration::from_secs(5)).is_ok(), "the idle remote thread ends on shutdown");
    serve.stop();
}

/// A server that refuses the viewer (here: what `serve` answers beyond loopback without
/// `--token-file`) is an error the window shows, once per reason, while it keeps trying; and a
/// server nobody runs says so too. Before, the window said "connecting HOST:PORT, no run received
/// yet" for ever, the reason only in the log.
#[test]
fn a_server_that_refuses_the_viewer_is_said_once_while_the_window_keeps_trying() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let tries = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&tries);
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut head = [0u8; 4096];
            let _ = s.read(&mut head);
            let body = "the live feed is offered on loopback only: start serve with --token-file\n";
            let answer = format!(
                "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(answer.as_bytes());
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let mut h = zescope::live::remote::spawn(Target { addr: addr.to_string(), token: None }, None);
    let mut errors = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while tries.load(std::sync::atomic::Ordering::SeqCst) < 4 {
        assert!(Instant::now() < deadline, "it stopped trying: {errors:?}");
        if let Ok(Event::Error(e)) = h.events.recv_timeout(Duration::from_millis(100)) {
            errors.push(e);
        }
    }
    errors.extend(h.events.try_iter().filter_map(|e| match e {
        Event::Error(e) => Some(e),
        _ => None,
    }));
    assert_eq!(errors.len(), 1, "said once, however many tries: {errors:?}");
    let e = &errors[0];
    assert_eq!(e.kind, zescope_sampler::ErrorKind::Link);
    let said = format!("REMOTE {addr} refused: 403 Forbidden the live feed is offered on loopback only");
    assert!(e.message.starts_with(&said), "{e:?}");
    assert!(h.shutdown(Duration::from_secs(5)).is_ok());

    // Nobody listens: that is said too.
    let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut h = zescope::live::remote::spawn(Target { addr: gone.to_string(), token: None }, None);
    let e = loop {
        assert!(Instant::now() < deadline, "no error for a server nobody runs");
        if let Ok(Event::Error(e)) = h.events.recv_timeout(Duration::from_millis(100)) {
            break e;
        }
    };
    assert!(e.kind == zescope_sampler::ErrorKind::Link && e.message.starts_with(&format!("REMOTE {gone}: ")), "{e:?}");
    assert!(h.shutdown(Duration::from_secs(5)).is_ok());
}
