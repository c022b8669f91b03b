//! A private X server for a test: Xvfb picks a free display itself and says which
//! (`-displayfd`), so tests running side by side — in one process or in several — never share one
//! and never guess. The server ends when the value is dropped.
//!
//! The server runs with `-noreset`. Without it, an X server resets when its last client leaves,
//! and a client that connects during the reset is dropped: a test's `xdotool search`, polling for
//! the window before the window had connected, left, and the window's own connection — in the
//! reset — failed (`XOpenDisplay`; Xvfb's audit log: "client 2 disconnected" with no "connected").
//! Seen in about one run in seven of the smoke test beside the two-servers test, and in CI.
//!
//! A server is ended with SIGTERM first, so it removes its socket and lock files.
#![allow(dead_code)]

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running Xvfb and the `DISPLAY` value it serves.
pub struct Xvfb {
    child: Child,
    /// `:N`, as `DISPLAY` takes it.
    pub display: String,
}

impl Xvfb {
    /// Starts Xvfb with one screen of `width`x`height` at 24 bits; the error says why not.
    pub fn start(width: u32, height: u32) -> Result<Xvfb, String> {
        let mut child = Command::new("Xvfb")
            // fd 1 is the pipe below: Xvfb writes the display it bound there once it accepts
            // connections.
            .args(["-displayfd", "1", "-nolisten", "tcp", "-noreset", "-screen", "0"])
            .arg(format!("{width}x{height}x24"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start Xvfb: {e}"))?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next());
            // Keep the pipe open (and drained) for the server's life.
            lines.for_each(drop);
        });
        let number = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(Some(Ok(line))) => line.trim().parse::<u32>().map_err(|_| format!("Xvfb said {line:?}, not a display")),
            Ok(_) => Err("Xvfb ended without naming a display".to_owned()),
            Err(_) => Err("Xvfb named no display within 20 s".to_owned()),
        };
        match number {
            Ok(n) => Ok(Xvfb { child, display: format!(":{n}") }),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(e)
            }
        }
    }
}

impl Xvfb {
    /// Whether the server still runs and answers, for a test's failure message ("alive and
    /// answering", "ended with …", "alive, not answering"): a window that could not connect, or
    /// a screen that read nothing, says whether the server under it was there.
    pub fn health(&mut self) -> String {
        match self.child.try_wait() {
            Ok(Some(status)) => return format!("the X server {} ended with {status}", self.display),
            Err(e) => return format!("the X server {}: {e}", self.display),
            Ok(None) => {}
        }
        let answers = Command::new("xdpyinfo").env("DISPLAY", &self.display).output();
        match answers {
            Ok(o) if o.status.success() => format!("the X server {} is alive and answering", self.display),
            Ok(o) => format!(
                "the X server {} is alive, not answering: {}",
                self.display,
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => format!("the X server {} is alive (xdpyinfo: {e})", self.display),
        }
    }
}

impl Drop for Xvfb {
    /// SIGTERM first, so the server removes its socket and lock files (SIGKILL leaves them for
    /// the next server on that display to find); SIGKILL after 2 s.
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while matches!(self.child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn two_servers_side_by_side_serve_two_displays() {
    for tool in ["Xvfb", "xdpyinfo"] {
        if !super::have(tool) {
            let why = format!("{tool} is not installed (apt install xvfb x11-utils)");
            return ze_sim::testing::skip("the Xvfb helper's test", &why);
        }
    }
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| Xvfb::start(320, 200));
        let b = s.spawn(|| Xvfb::start(320, 200));
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    assert_ne!(a.display, b.display, "each test gets a display of its own");
    // Both answer, and ending one leaves the other serving.
    let answers = |d: &str| Command::new("xdpyinfo").env("DISPLAY", d).output().is_ok_and(|o| o.status.success());
    assert!(answers(&a.display) && answers(&b.display));
    let kept = b.display.clone();
    drop(a);
    assert!(answers(&kept), "{kept} still serves after the other server ended");
}
