//! `zescope record` with a markers socket, for the markers tests (`tests/commands/markers.rs`)
//! and the flood test that runs alone (`tests/under_load/markers_flood.rs`).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

use super::zescope;

/// A temporary folder zescope accepts for its markers socket: a private one (0700).
pub fn private_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    dir
}

/// A `zescope record` on the simulated device with its markers socket at `socket`, after it has
/// said where it listens.
pub fn start_record(socket: &Path, out: &Path, duration: &str) -> Child {
    let mut child = zescope()
        .args(["--source", "sim", "record", "--interval", "1ms", "--duration", duration, "--out"])
        .arg(out)
        .env("ZESCOPE_MARKERS", socket)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains("ZESCOPE_MARKERS="), "{line}");
    child
}

/// Waits for a recording to end well; what it printed.
pub fn finish(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}
