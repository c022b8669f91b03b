//! `zescope record --out run.ron` killed with SIGKILL in the middle of writing a checkpoint: the
//! file opens (`zescope export`, and a session load) with every sample of the checkpoint before,
//! as it was. The moment is made exact by the checkpoint test hook
//! (`ZESCOPE_CHECKPOINT_HOOK`, `crates/zescope-model/src/session/journal.rs`): each checkpoint
//! waits half-written and again when whole until the test lets it go.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use zescope_model::session::{self, Session};

/// Waits (at most 60 s: the checkpoint comes within a second or two of the last) until the
/// recorder reached point `at` of checkpoint `n`.
fn reached(hook: &Path, n: u32, at: &str, child: &mut std::process::Child) {
    let flag = hook.join(format!("{n}-{at}"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !flag.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("zescope record ended ({status}) before checkpoint {n} reached {at}");
        }
        assert!(Instant::now() < deadline, "checkpoint {n} did not reach {at} within 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn go(hook: &Path, n: u32, at: &str) {
    std::fs::write(hook.join(format!("{n}-{at}.go")), b"").unwrap();
}

/// Per stream: its name, timestamps and values (bits).
fn samples(s: &Session) -> Vec<(String, Vec<i64>, Vec<u64>)> {
    s.streams
        .iter()
        .map(|s| {
            let raw = &s.data.raw;
            (s.meta.name.clone(), raw.timestamps.clone(), raw.values.iter().map(|v| v.to_bits()).collect())
        })
        .collect()
}

#[test]
fn a_recording_killed_mid_checkpoint_keeps_every_sample_of_the_checkpoint_before() {
    let dir = tempfile::tempdir().unwrap();
    let (out, hook): (PathBuf, PathBuf) = (dir.path().join("run.ron"), dir.path().join("hook"));
    std::fs::create_dir(&hook).unwrap();
    let mut child = crate::support::zescope()
        .args(["--source", "sim", "record", "--interval", "1ms", "--telemetry", "--duration", "300s", "--out"])
        .arg(&out)
        .env(zescope_model::session::journal::HOOK_ENV, &hook)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Checkpoint 1 writes the file; 2 appends to it. Both let through; 2's whole file copied.
    for n in 1..=2 {
        reached(&hook, n, "mid", &mut child);
        go(&hook, n, "mid");
        reached(&hook, n, "done", &mut child);
        if n == 2 {
            std::fs::copy(&out, dir.path().join("checkpoint-2.ron")).unwrap();
        }
        go(&hook, n, "done");
    }
    // Checkpoint 3: killed with half of its frames appended.
    reached(&hook, 3, "mid", &mut child);
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "killed: {status}");

    let before = std::fs::read(dir.path().join("checkpoint-2.ron")).unwrap();
    let after = std::fs::read(&out).unwrap();
    assert!(after.len() > before.len() && after.starts_with(&before), "checkpoint 3 appended, and was cut short");
    let kept = session::load(&dir.path().join("checkpoint-2.ron")).unwrap();
    let recovered = session::load(&out).unwrap_or_else(|e| panic!("the killed recording does not open: {e}"));
    let (kept, recovered) = (samples(&kept), samples(&recovered));
    assert!(kept.len() >= 2, "the group and the telemetry: {:?}", kept.iter().map(|k| &k.0).collect::<Vec<_>>());
    assert!(kept.iter().all(|k| k.1.len() >= 2), "checkpoint 2 holds samples of every stream");
    for ((name, ts, values), (name2, ts2, values2)) in kept.iter().zip(&recovered) {
        assert_eq!(name, name2);
        assert!(
            ts2.len() >= ts.len() && ts2[..ts.len()] == ts[..] && values2[..values.len()] == values[..],
            "{name}: {} samples of checkpoint 2, {} recovered, the first ones different",
            ts.len(),
            ts2.len()
        );
    }

    // The recovery a user has: `zescope export` opens it like any session.
    let csv = dir.path().join("recovered.csv");
    let o = crate::support::zescope().arg("export").arg(&out).arg("--csv").arg(&csv).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count();
    let first_stream = kept.iter().map(|k| k.1.len()).max().unwrap();
    assert!(rows > first_stream, "{rows} CSV rows for {first_stream} samples of checkpoint 2");
}
