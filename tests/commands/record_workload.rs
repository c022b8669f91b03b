//! `zescope record -- COMMAND`: the workload it runs, looked for before anything is sampled or
//! written, and its status, which `record` exits with.

use std::path::Path;
use std::process::Command;

/// `zescope --source sim record --out CSV` on the simulated device.
fn record(csv: &Path) -> Command {
    let mut c = crate::support::zescope();
    c.args(["--source", "sim", "record", "--out"]).arg(csv).env_remove("ZE_SIM_CONFIG");
    c
}

/// A workload after `--` that cannot be started is refused before anything is sampled or
/// written: the output an earlier recording left at `--out` stays (it was truncated, and the new
/// run's two samples written over it).
#[test]
fn a_workload_that_cannot_start_leaves_the_earlier_output_alone() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    let earlier = "time_s,a\n0,1\n";
    for (program, why) in [
        ("/nonexistent/prog", "cannot start /nonexistent/prog: No such file or directory"),
        ("zescope-no-such-program", "cannot start zescope-no-such-program: no such program in PATH"),
    ] {
        std::fs::write(&csv, earlier).unwrap();
        let out = record(&csv).args(["--duration", "5s", "--"]).arg(program).output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{err}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("recorded"), "nothing was sampled");
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), earlier, "{program}: the earlier CSV is kept");
    }
}

/// `record` exits with its workload's status: a script tests the workload through zescope.
#[test]
fn record_exits_with_the_workloads_status() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    for (script, code) in [("exit 0", 0), ("exit 3", 3), ("kill -KILL $$", 128 + 9)] {
        let out = record(&csv).args(["--duration", "20s", "--", "sh", "-c", script]).output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(code), "{script}: {said}{}", String::from_utf8_lossy(&out.stderr));
        assert!(said.contains("wrote "), "{script}: the recording is written whatever the workload's status: {said}");
    }
}
