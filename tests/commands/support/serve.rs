//! `zescope serve` run as a child process on the simulated device, for the serve tests: start it
//! on a free loopback port, ask it over HTTP, lint a scrape with promtool, stop it with SIGTERM.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ze_sim::testing;

/// A `zescope serve --source sim` on a free loopback port.
pub struct Serve {
    pub child: Child,
    pub addr: SocketAddr,
    /// The rest of its standard output (its summary comes at the end).
    out: BufReader<std::process::ChildStdout>,
    report: PathBuf,
    _dir: tempfile::TempDir,
}

impl Serve {
    pub fn start(extra: &[&str]) -> Serve {
        Serve::start_with(extra, None)
    }

    /// With `config` (RON) as the simulated driver's ZE_SIM_CONFIG.
    pub fn start_with(extra: &[&str], config: Option<&str>) -> Serve {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.ron");
        let mut child = super::zescope();
        child
            .args(["--source", "sim", "serve", "--listen", "127.0.0.1:0", "--interval", "10ms"])
            .args(extra)
            .env("ZE_SIM_REPORT", &report)
            .env_remove("ZE_SIM_CONFIG")
            .env_remove("ZE_ENABLE_ALT_DRIVERS")
            .stdout(Stdio::piped());
        if let Some(text) = config {
            let path = dir.path().join("sim.ron");
            std::fs::write(&path, text).unwrap();
            child.env("ZE_SIM_CONFIG", path);
        }
        let mut child = child.spawn().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let addr = address_in(&mut out);
        let s = Serve { child, addr, out, report, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while get(s.addr, "/healthz", None).0 != 200 {
            assert!(Instant::now() < deadline, "/healthz never said ok");
            std::thread::sleep(Duration::from_millis(50));
        }
        s
    }

    /// SIGTERM, then the exit status and the driver's report; what serve said as it ended.
    pub fn stop(mut self) -> String {
        assert!(Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().unwrap().success());
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "serve did not end within 10 s of SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "serve ended with {status}");
        let text = std::fs::read_to_string(&self.report).expect("the driver wrote ZE_SIM_REPORT at exit");
        let r: ze_sim::Report = ron::from_str(&text).unwrap();
        assert!(r.is_clean(), "{text}");
        let mut said = String::new();
        self.out.read_to_string(&mut said).unwrap();
        said
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request; (status, headers, body).
/// The address a starting `serve` names on its first line of standard output (piped).
pub fn served_at(child: &mut Child) -> SocketAddr {
    address_in(&mut BufReader::new(child.stdout.take().unwrap()))
}

/// The address on the first line of `out`, a starting `serve`'s standard output.
fn address_in(out: &mut impl BufRead) -> SocketAddr {
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    line.trim()
        .strip_prefix("zescope: serving http://")
        .and_then(|a| a.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("serve's first line names its address: {line:?}"))
        .parse()
        .unwrap()
}

pub fn request(addr: SocketAddr, raw: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(raw.as_bytes()).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

/// The `Accept` Prometheus scrapes with (2.x): OpenMetrics first.
pub const OPENMETRICS: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;\
                               q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

pub fn get(addr: SocketAddr, path: &str, accept: Option<&str>) -> (u16, String, String) {
    let accept = accept.map(|a| format!("Accept: {a}\r\n")).unwrap_or_default();
    request(addr, &format!("GET {path} HTTP/1.1\r\nHost: zescope\r\n{accept}Connection: close\r\n\r\n"))
}

pub fn tool(name: &str) -> Option<PathBuf> {
    let found =
        std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|f| f.is_file()));
    if found.is_none() {
        testing::skip(&format!("this test needs {name}"), "not on PATH (apt install prometheus)");
    }
    found
}

/// What `promtool check metrics` says about `text` (Prometheus text): empty when it finds
/// nothing; a failing run is a failed test.
pub fn check_metrics(promtool: &Path, text: &str) -> String {
    let mut check = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = check.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "promtool check metrics: {said}\non\n{text}");
    said.trim().to_owned()
}

/// The textfile `file` once it holds `needle` (serve rewrites it every interval); fails after 10 s.
pub fn textfile_with(file: &Path, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        assert!(Instant::now() < deadline, "no {needle:?} in {} after 10 s:\n{text}", file.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}
