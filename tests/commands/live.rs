//! `serve`'s live feed (`/live`, docs/live-protocol.md) read by a client in another language:
//! `live_client.py`, written from the protocol's document with the stock `websockets` package
//! (PyPI). What it received is compared value for value with the session the same `serve` saved
//! (`--save`); a viewer that joins late and one that reconnects miss nothing; a viewer that stops
//! reading is dropped with its reason while the others get every event; the ninth viewer is told
//! why; beyond loopback only the token gets in.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::netns::TestHost;
use crate::support::zescope;

const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/commands/live_client.py");

/// A `zescope serve --source sim` whose stderr is kept.
pub(crate) struct Serve {
    child: Child,
    pub(crate) addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Serve {
    pub(crate) fn start(listen: &str, extra: &[&str]) -> Serve {
        Serve::start_env(listen, extra, &[])
    }

    /// As `start`, with these environment variables.
    pub(crate) fn start_env(listen: &str, extra: &[&str], env: &[(&str, &Path)]) -> Serve {
        let mut child = zescope()
            .args(["--source", "sim", "serve", "--listen", listen, "--interval", "1ms"])
            .args(extra)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let addr = crate::support::serve::served_at(&mut child);
        let stderr = Arc::new(Mutex::new(String::new()));
        let (pipe, keep) = (child.stderr.take().unwrap(), Arc::clone(&stderr));
        std::thread::spawn(move || {
            for l in BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut s = keep.lock().unwrap();
                s.push_str(&l);
                s.push('\n');
            }
        });
        Serve { child, addr, stderr }
    }

    fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/live", self.addr.port())
    }

    fn said(&self, what: &str) -> bool {
        self.stderr.lock().unwrap().contains(what)
    }

    /// SIGTERM; it must end cleanly within 15 s. Returns what it wrote to stderr.
    pub(crate) fn stop(mut self) -> String {
        assert!(Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().unwrap().success());
        let deadline = Instant::now() + Duration::from_secs(15);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "serve did not end within 15 s of SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "serve ended with {status}: {}", self.stderr.lock().unwrap());
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `live_client.py URL OUT ARGS...` started; `None` (after a loud skip) without python3 or
/// `websockets`.
struct Client {
    child: Child,
    out: PathBuf,
    lines: std::sync::mpsc::Receiver<String>,
}

fn client(url: &str, out: &Path, args: &[&str]) -> Option<Client> {
    client_with(Command::new("python3"), url, out, args)
}

/// [`client`] run by `python3` (a command that runs python3, such as one inside a namespace).
fn client_with(mut python3: Command, url: &str, out: &Path, args: &[&str]) -> Option<Client> {
    let mut child =
        match python3.arg(CLIENT).arg(url).arg(out).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn() {
            Ok(c) => c,
            Err(e) => {
                ze_sim::testing::skip("the live feed's Python client", &format!("python3 cannot run: {e}"));
                return None;
            }
        };
    let (tx, lines) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    Some(Client { child, out: out.to_owned(), lines })
}

impl Client {
    /// Waits for a line starting with `what`; `None` (after a loud skip) when the client says
    /// it has no `websockets`.
    fn wait_line(&mut self, what: &str) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match self.lines.recv_timeout(Duration::from_millis(100)) {
                Ok(l) if l.starts_with(what) => return Some(l),
                Ok(_) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    assert!(Instant::now() < deadline, "the client never said {what:?}");
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    let out = self.finish_raw();
                    if out.status.code() == Some(3) {
                        let why = String::from_utf8_lossy(&out.stderr).into_owned();
                        ze_sim::testing::skip(
                            "the live feed's Python client",
                            &format!("{why} (pip install websockets)"),
                        );
                        return None;
                    }
                    panic!("the client ended before {what:?}: {out:?}");
                }
            }
        }
    }

    fn finish_raw(&mut self) -> std::process::Output {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the client did not end");
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut stderr = String::new();
        let _ = std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut stderr);
        std::process::Output { status: self.child.wait().unwrap(), stdout: Vec::new(), stderr: stderr.into_bytes() }
    }

    /// Waits for the client to end (successfully) and returns what it wrote.
    fn result(mut self) -> Value {
        let out = self.finish_raw();
        assert!(out.status.success(), "live_client.py failed: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&std::fs::read(&self.out).unwrap()).unwrap()
    }
}

/// Every sample of the saved session's streams equals what the viewer received: the same
/// streams, from ordinal 0, the same timestamps, the same bits.
fn same_as_session(got: &Value, session: &zescope_model::session::Session) {
    let hello = &got["hello"]["streams"];
    assert_eq!(hello.as_array().unwrap().len(), session.streams.len(), "one stream per session stream");
    let mut values = 0;
    for (i, h) in hello.as_array().unwrap().iter().enumerate() {
        let s = session
            .streams
            .iter()
            .find(|s| s.meta.device == h["device"] && s.meta.group == h["group"])
            .unwrap_or_else(|| panic!("the session has no stream {h}"));
        let raw = &s.data.raw;
        assert!(s.data.coarse.is_empty() && raw.first_ordinal == 0, "a short run is held whole");
        let g = &got["streams"][i.to_string()];
        assert_eq!(g["first"], 0, "stream {i} from its first sample");
        let ts: Vec<i64> = g["timestamps"].as_array().unwrap().iter().map(|t| t.as_i64().unwrap()).collect();
        assert_eq!(ts.len(), raw.timestamps.len(), "stream {i}: as many samples as the session holds");
        assert_eq!(ts, raw.timestamps, "stream {i}: the same timestamps");
        let k = h["series"].as_array().unwrap().len();
        let cols = g["columns"].as_array().unwrap();
        assert_eq!(cols.len(), k);
        for (c, col) in cols.iter().enumerate() {
            for (r, bits) in col.as_array().unwrap().iter().enumerate() {
                let want = raw.values[r * k + c];
                let have = f64::from_bits(bits.as_u64().unwrap());
                assert!(
                    have.to_bits() == want.to_bits() || (have.is_nan() && want.is_nan()),
                    "stream {i} series {c} row {r}: {have} received, {want} saved"
                );
                values += 1;
            }
        }
    }
    assert!(values > 1000, "the run gave something to compare ({values} values)");
}

#[test]
fn a_python_viewer_receives_every_sample_of_the_session_the_server_saved() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("run.ron");
    let serve = Serve::start("127.0.0.1:0", &["--save", saved.to_str().unwrap()]);
    // One viewer from the start, one that drops its link and resumes from where it was.
    let Some(mut early) = client(&serve.url(), &dir.path().join("early.json"), &[]) else { return };
    let Some(_) = early.wait_line("hello") else { return };
    // It speaks protocol 1 (plain f64 batches, what a viewer gets that asks for no version); the
    // others protocol 2 (packed batches).
    let args = ["--resume-after", "200", "--protocol", "1"];
    let mut resumed = client(&serve.url(), &dir.path().join("resumed.json"), &args).unwrap();
    resumed.wait_line("hello");
    // A late joiner, once the run has a history.
    std::thread::sleep(Duration::from_secs(2));
    let mut late = client(&serve.url(), &dir.path().join("late.json"), &[]).unwrap();
    late.wait_line("hello");
    // The resuming viewer is back before the run ends (on a loaded machine it may take a while).
    resumed.wait_line("resumed");
    std::thread::sleep(Duration::from_millis(500));
    serve.stop();
    let session = zescope_model::session::load(&saved).unwrap();
    for (who, c) in [("early", early), ("resumed", resumed), ("late", late)] {
        let got = c.result();
        assert_eq!(got["close"]["code"], 1000, "{who}: {}", got["close"]);
        assert_eq!(got["close"]["reason"], "the run ended", "{who}");
        assert_eq!(got["gaps"], serde_json::json!([]), "{who}: nothing was missing");
        assert_eq!(got["events"]["stopped"].as_array().map(Vec::len), Some(1), "{who}");
        same_as_session(&got, &session);
        let protocol = if who == "resumed" { 1 } else { 2 };
        assert_eq!(got["hello"]["protocol"], protocol, "{who}");
        if who == "resumed" {
            assert_eq!(got["connects"], 2, "it reconnected");
        }
        let per_value = got["binary_bytes"].as_f64().unwrap() / got["values"].as_f64().unwrap();
        eprintln!("{who}: protocol {protocol}, {per_value:.2} bytes of batch frames a value");
    }
}

/// A WebSocket viewer of `serve` whose socket takes at most a few KiB before it reads (a small
/// receive buffer, set before the connect), connected and then left unread.
fn unread_viewer(serve: &Serve) -> tungstenite::WebSocket<TcpStream> {
    use rustix::net::{AddressFamily, SocketType, connect, socket, sockopt};
    let fd = socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
    sockopt::set_socket_recv_buffer_size(&fd, 4096).unwrap();
    connect(&fd, &SocketAddr::from(([127, 0, 0, 1], serve.addr.port()))).unwrap();
    let stream = TcpStream::from(fd);
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let (ws, response) = tungstenite::client(serve.url(), stream).unwrap();
    assert_eq!(response.status(), 101);
    ws
}

/// Reads until the server's close frame: (code, reason).
fn close_of(ws: &mut tungstenite::WebSocket<TcpStream>) -> (u16, String) {
    loop {
        match ws.read() {
            Ok(tungstenite::Message::Close(Some(f))) => return (f.code.into(), f.reason.to_string()),
            Ok(tungstenite::Message::Close(None)) => panic!("a close without a reason"),
            Ok(_) => {}
            Err(e) => panic!("no close frame: {e}"),
        }
    }
}

#[test]
fn a_viewer_that_stops_reading_is_dropped_with_its_reason_and_the_others_miss_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("run.ron");
    let serve = Serve::start("127.0.0.1:0", &["--save", saved.to_str().unwrap()]);
    let Some(mut reader) = client(&serve.url(), &dir.path().join("reader.json"), &[]) else { return };
    let Some(_) = reader.wait_line("hello") else { return };
    let mut stalled = unread_viewer(&serve);
    // Once its socket is full, the stalled viewer is dropped within the stall time.
    let deadline = Instant::now() + Duration::from_secs(180);
    while !serve.said("dropped: it read nothing") {
        assert!(Instant::now() < deadline, "the stalled viewer was never dropped");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Reading again, it gets what was in flight, then the close frame that says why.
    let (code, reason) = close_of(&mut stalled);
    assert_eq!(code, 4001, "{reason}");
    assert!(reason.contains("read nothing for 5 s"), "{reason}");
    serve.stop();
    let got = reader.result();
    assert_eq!(got["close"]["code"], 1000, "the reader kept its place: {}", got["close"]);
    same_as_session(&got, &zescope_model::session::load(&saved).unwrap());
    // The sampler lost nothing while a viewer stalled (its outbox never blocked on serve).
    let health = got["events"]["health"].as_array().unwrap();
    let last = health.last().expect("health reports came");
    assert_eq!((&last["dropped_samples"], &last["dropped_batches"]), (&Value::from(0), &Value::from(0)), "{last}");
}

#[test]
fn the_ninth_viewer_is_told_why_and_gets_in_once_a_place_is_free() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start("127.0.0.1:0", &[]);
    let mut eight: Vec<_> = (0..8).map(|_| unread_viewer(&serve)).collect();
    for v in &mut eight {
        // Each got its hello: each holds a place.
        assert!(matches!(v.read().unwrap(), tungstenite::Message::Text(t) if t.contains("\"hello\"")));
    }
    let Some(mut ninth) = client(&serve.url(), &dir.path().join("ninth.json"), &[]) else { return };
    let Some(line) = ninth.wait_line("closed") else { return };
    assert_eq!(line, "closed 1013 8 viewers watch already, the most this server takes");
    assert_eq!(ninth.result()["hello"], Value::Null, "it was told before any frame");
    drop(eight.pop());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut again = client(&serve.url(), &dir.path().join("again.json"), &["--stop-after", "10"]).unwrap();
        let l = again.wait_line("").unwrap();
        if l == "hello" {
            again.wait_line("closed");
            break;
        }
        // The server may not have seen the eighth go yet.
        assert!(Instant::now() < deadline, "no place came back: {l}");
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(eight);
    serve.stop();
}

#[test]
fn beyond_loopback_only_the_token_gets_in() {
    // The peer beyond loopback is a test host of this process's own: a network namespace on a
    // veth pair, the clients run inside it, serve listens on this machine's end of the pair.
    let host = match TestHost::make() {
        Ok(h) => h,
        Err(why) => {
            ze_sim::testing::skip(
                "the live feed's token off loopback",
                &format!("no test host in a network namespace (needs root and `ip netns`): {why}"),
            );
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "a-long-enough-secret\n").unwrap();
    let with_token = ["--token-file", token.to_str().unwrap()];
    let serve = Serve::start(&format!("{}:0", host.host_side), &with_token);
    let outside = format!("ws://{}:{}/live", host.host_side, serve.addr.port());
    let in_host = |args: &[&str]| {
        let python3 = host.exec(&Command::new("python3"));
        client_with(python3, &outside, &dir.path().join("outside.json"), args)
    };
    let refused = |args: &[&str]| {
        let mut c = in_host(args)?;
        c.wait_line("closed")?;
        Some(c.result())
    };
    let Some(none) = refused(&[]) else { return };
    assert_eq!(none["refused"], 401, "{none}");
    assert!(none["body"].as_str().unwrap().contains("needs the server's token"), "{none}");
    let wrong = refused(&["--token", "a-long-enough-secreT"]).unwrap();
    assert_eq!(wrong["refused"], 401, "{wrong}");
    assert!(wrong["body"].as_str().unwrap().contains("not the server's"), "{wrong}");
    let mut ok = in_host(&["--token", "a-long-enough-secret", "--stop-after", "5"]).unwrap();
    assert_eq!(ok.wait_line("").unwrap(), "hello", "beyond loopback with the token");
    ok.result();
    // On loopback the same token file asks nothing of the viewer (serve listens on one address,
    // so a second one on loopback with the same settings answers it).
    let local = Serve::start("127.0.0.1:0", &with_token);
    let mut ok = client(&local.url(), &dir.path().join("local.json"), &["--stop-after", "5"]).unwrap();
    assert_eq!(ok.wait_line("").unwrap(), "hello", "on loopback without the token");
    ok.result();
    local.stop();
    // zescope's own client, in the test host: refused without the token, recording with it.
    let (at, out) = (format!("{}:{}", host.host_side, serve.addr.port()), dir.path().join("remote.ron"));
    let record = |extra: &[&str]| {
        let mut c = zescope();
        c.args(["record", "--connect", &at, "--duration", "1s", "--out", out.to_str().unwrap()]).args(extra);
        host.exec(&c).output().unwrap()
    };
    let refused = record(&[]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && said.contains("refused: 401"), "{said}");
    let recorded = record(&with_token);
    assert!(recorded.status.success(), "{}", String::from_utf8_lossy(&recorded.stderr));
    assert!(!zescope_model::session::load(&out).unwrap().streams.is_empty());
    serve.stop();
}

/// A TCP relay to `upstream` whose connections can be cut at once (a dropped link).
pub(crate) struct Relay {
    pub(crate) addr: SocketAddr,
    open: Arc<Mutex<Vec<TcpStream>>>,
    /// While set, connections are closed as they come: the link is down.
    down: Arc<std::sync::atomic::AtomicBool>,
}

impl Relay {
    pub(crate) fn start(upstream: SocketAddr) -> Relay {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let open = Arc::new(Mutex::new(Vec::new()));
        let down = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (keep, held) = (Arc::clone(&open), Arc::clone(&down));
        std::thread::spawn(move || {
            for down in listener.incoming().map_while(Result::ok) {
                if held.load(std::sync::atomic::Ordering::SeqCst) {
                    continue;
                }
                let Ok(up) = TcpStream::connect(upstream) else { continue };
                let mut o = keep.lock().unwrap();
                o.push(down.try_clone().unwrap());
                o.push(up.try_clone().unwrap());
                for (mut from, mut to) in [(down.try_clone().unwrap(), up.try_clone().unwrap()), (up, down)] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Relay { addr, open, down }
    }

    /// Cuts the connections open now (new ones go through).
    pub(crate) fn cut(&self) {
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Cuts the link and keeps it down (`true`: new connections are closed at once), or lets
    /// connections through again (`false`).
    pub(crate) fn hold(&self, down: bool) {
        self.down.store(down, std::sync::atomic::Ordering::SeqCst);
        if down {
            self.cut();
        }
    }
}

#[test]
fn record_connect_records_the_remote_run_whole_across_a_dropped_link() {
    let dir = tempfile::tempdir().unwrap();
    let (saved, recorded) = (dir.path().join("served.ron"), dir.path().join("recorded.ron"));
    let serve = Serve::start("127.0.0.1:0", &["--save", saved.to_str().unwrap()]);
    let relay = Relay::start(serve.addr);
    let mut record = zescope()
        .args(["record", "--connect", &relay.addr.to_string(), "--out", recorded.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = BufReader::new(record.stdout.take().unwrap());
    let mut line = String::new();
    said.read_line(&mut line).unwrap();
    assert!(line.starts_with("zescope: recording the run served at"), "{line}");
    let stderr = Arc::new(Mutex::new(String::new()));
    let (pipe, keep) = (record.stderr.take().unwrap(), Arc::clone(&stderr));
    std::thread::spawn(move || {
        for l in BufReader::new(pipe).lines().map_while(Result::ok) {
            keep.lock().unwrap().push_str(&(l + "\n"));
        }
    });
    std::thread::sleep(Duration::from_secs(1));
    relay.cut();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !stderr.lock().unwrap().contains("reconnected, resuming") {
        assert!(Instant::now() < deadline, "record never reconnected: {}", stderr.lock().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(stderr.lock().unwrap().contains("reconnecting"), "the drop was said");
    // Long enough for a run worth comparing, on a loaded machine too.
    std::thread::sleep(Duration::from_millis(1500));
    serve.stop();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = record.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "record did not end with the served run");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "record: {status}: {}", stderr.lock().unwrap());
    let (served, got) =
        (zescope_model::session::load(&saved).unwrap(), zescope_model::session::load(&recorded).unwrap());
    assert_eq!(got.streams.len(), served.streams.len());
    let mut rows = 0;
    for (g, s) in got.streams.iter().zip(&served.streams) {
        assert_eq!((&g.meta.device, &g.meta.group, &g.meta.series), (&s.meta.device, &s.meta.group, &s.meta.series));
        let (g, s) = (&g.data.raw, &s.data.raw);
        let (n, m) = (g.timestamps.len(), s.timestamps.len());
        assert!(g.timestamps == s.timestamps, "every sample, none twice: {n} recorded, {m} served");
        assert_eq!(g.gaps, s.gaps, "no gap the server's run did not have");
        let same =
            g.values.iter().zip(&s.values).all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        assert!(same && g.values.len() == s.values.len(), "the same values");
        rows += s.timestamps.len();
    }
    assert!(rows > 1000, "a run worth comparing: {rows} samples");
    // The summary counts what the file holds, and says how long a stretch of the served run that
    // is (it began at the oldest sample the server held, before the recording did).
    let mut summary = String::new();
    std::io::Read::read_to_string(&mut said, &mut summary).unwrap();
    let number = |before: &str| -> f64 {
        let head = summary.split(before).next().unwrap_or("");
        head.rsplit(' ')
            .next()
            .and_then(|n| n.trim_start_matches('(').parse().ok())
            .unwrap_or_else(|| panic!("no {before:?}: {summary}"))
    };
    assert_eq!(number(" samples") + number(" telemetry reads"), rows as f64, "{summary}");
    let times = got.streams.iter().flat_map(|s| s.data.raw.timestamps.iter().copied());
    let (first, last) = times.fold((i64::MAX, i64::MIN), |(a, z), t| (a.min(t), z.max(t)));
    let span = (last - first) as f64 / 1e9;
    assert!((number(" s of the served run") - span).abs() < 0.006, "{span} s held: {summary}");
}

#[test]
fn without_a_display_the_window_says_in_one_line_how_to_watch_this_machine_remotely() {
    let out = zescope().env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    for what in ["zescope serve", "-L 9464:localhost:9464", "--connect"] {
        assert!(stderr.contains(what), "names {what}: {stderr}");
    }
    assert!(!stderr.contains(".cargo") && !stderr.contains(".rs:"), "no path into the build machine: {stderr}");
}

#[test]
fn connecting_to_a_web_server_that_is_not_zescope_says_so_in_one_line_without_its_page() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let at = listener.local_addr().unwrap().to_string();
    // A web server of another kind: an HTML page for every request, as a dashboard's port answers.
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut head = [0u8; 4096];
        let _ = s.read(&mut head);
        let page = "<!DOCTYPE html>\n<html><body><h1>Not Found</h1>\n<p>Nothing here.</p></body></html>\n";
        let answer = format!(
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{page}",
            page.len()
        );
        s.write_all(answer.as_bytes()).unwrap();
    });
    let dir = tempfile::tempdir().unwrap();
    let out = zescope()
        .args(["record", "--connect", &at, "--duration", "1s", "--out"])
        .arg(dir.path().join("r.ron"))
        .output()
        .unwrap();
    server.join().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains(&format!("{at} is not a zescope serve's live feed: /live answered 404 Not Found")), "{said}");
    assert!(!said.contains("<html") && said.trim().lines().count() == 1, "one line, not the page: {said}");
}
