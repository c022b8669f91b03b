//! A real Prometheus on loopback for a test, on a port the OS gave it: started with
//! `--web.listen-address=127.0.0.1:0`, its address read from the "Listening on" line of its
//! own log, its storage in a folder of its own. Killed when dropped.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// A running Prometheus.
pub struct Prometheus {
    child: Option<Child>,
    /// Where its HTTP API answers.
    pub addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts `binary` with `config` (its YAML) and waits until it says where it listens.
    pub fn start(binary: &Path, config: &str) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("prometheus.yml");
        std::fs::write(&file, config).unwrap();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let child = Command::new(binary)
            .arg(format!("--config.file={}", file.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg("--web.listen-address=127.0.0.1:0")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut p = Prometheus { child: Some(child), addr: SocketAddr::from(([127, 0, 0, 1], 0)), dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        p.addr = loop {
            if let Some(addr) = listening_on(&p.log()) {
                break addr;
            }
            if let Some(status) = p.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("Prometheus ended with {status} before it listened; its log:\n{}", p.log());
            }
            assert!(Instant::now() < deadline, "Prometheus never said where it listens; its log:\n{}", p.log());
            std::thread::sleep(Duration::from_millis(50));
        };
        p
    }

    /// What it logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// The `http://ADDR` base URL promtool takes.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// SIGTERM, then how it ended.
    pub fn stop(mut self) -> ExitStatus {
        let mut child = self.child.take().unwrap();
        assert!(Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap().success());
        child.wait().unwrap()
    }
}

/// The address of a `msg="Listening on" address=127.0.0.1:40465` line (a listener bound to
/// port 0 logs the port it got; the configured address is logged before, as "Start listening").
fn listening_on(log: &str) -> Option<SocketAddr> {
    log.lines()
        .filter(|l| l.contains("msg=\"Listening on\""))
        .find_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix("address=")).and_then(|a| a.parse().ok()))
        .filter(|a: &SocketAddr| a.port() != 0)
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn the_listening_line_gives_the_port_the_server_got() {
    let log = "ts=1 caller=web.go:503 level=info component=web msg=\"Start listening for connections\" \
               address=127.0.0.1:0\nts=2 caller=tls_config.go:232 level=info component=web msg=\"Listening on\" \
               address=127.0.0.1:40465\n";
    assert_eq!(listening_on(log), Some("127.0.0.1:40465".parse().unwrap()));
    assert_eq!(listening_on(&log[..log.find("ts=2").unwrap()]), None, "not before it listens");
}
