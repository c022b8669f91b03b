//! Helpers for the command-line tests: the one way to start `zescope` (with none of the
//! environment that would change what it opens), the Level Zero loaders under test
//! (`loaders`), `record` with a markers socket (`markers`), `zescope serve` as a child with its
//! HTTP client and promtool (`serve`), a real Prometheus (`prometheus`), a private X server
//! (`xvfb`) and a test host in a network namespace of its own (`netns`). Nothing a test starts takes a fixed or guessed display, port or folder.
#![allow(dead_code, reason = "each test module uses a part")]

pub mod loaders;
pub mod markers;
pub mod netns;
pub mod prometheus;
pub mod serve;
pub mod xvfb;

use std::process::{Command, Output};

/// The `zescope` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_zescope");

/// Variables that choose or configure a driver, a loader, a markers socket or a file dialog:
/// a test sets those it means, and no other test's or the developer's leaks in.
const CHOSEN_BY_TESTS: &[&str] = &[
    "ZE_SIM_CONFIG",
    "ZE_SIM_REPORT",
    "ZE_SIM_CONFIG_ZE_SIM_NPU",
    "ZE_SIM_REPORT_ZE_SIM_NPU",
    "ZE_ENABLE_ALT_DRIVERS",
    "ZESCOPE_LEVEL_ZERO_LOADER",
    "ZESCOPE_MARKERS",
    "ZESCOPE_FILE_DIALOG",
    "ZESCOPE_CHECKPOINT_HOOK",
    "ZET_ENABLE_METRICS",
    "ZES_ENABLE_SYSMAN",
    "RUST_LOG",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_METRIC_EXPORT_INTERVAL",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_SERVICE_NAME",
];

/// Clears what [`CHOSEN_BY_TESTS`] lists from `c`'s environment and asks for backtraces.
pub fn clean_env(c: &mut Command) -> &mut Command {
    for var in CHOSEN_BY_TESTS {
        c.env_remove(var);
    }
    c.env("RUST_BACKTRACE", "1")
}

/// `zescope`, with a clean environment and folders of its own (the arguments and variables are
/// the caller's; a variable the caller sets wins).
pub fn zescope() -> Command {
    let mut c = Command::new(BIN);
    clean_env(&mut c);
    private_dirs(&mut c);
    c
}

/// Gives the command `XDG_RUNTIME_DIR`, `XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `XDG_STATE_HOME` and
/// `XDG_CACHE_HOME` of its own, fresh folders (mode 0700) under this test process's temporary
/// folder: no two commands share a markers socket, a checkpoint, a setting or a layout, and none
/// sees the developer's.
pub fn private_dirs(c: &mut Command) -> &mut Command {
    use std::os::unix::fs::DirBuilderExt as _;
    static ROOT: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let root = ROOT.get_or_init(|| {
        sweep_dead_roots();
        let prefix = format!("{ROOT_PREFIX}{}-", std::process::id());
        tempfile::Builder::new().prefix(&prefix).tempdir().expect("a temporary folder")
    });
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    for (var, name) in [
        ("XDG_RUNTIME_DIR", "runtime"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
    ] {
        let dir = root.path().join(n.to_string()).join(name);
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).expect("a private folder");
        c.env(var, dir);
    }
    c
}

/// The name of a test process's folder of private folders starts with this, then its pid and `-`.
/// (A static is never dropped, so the folder outlives its process; the next process removes it.)
const ROOT_PREFIX: &str = "zescope-tests-";

/// Removes the private folders of test processes that have ended.
fn sweep_dead_roots() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name.strip_prefix(ROOT_PREFIX).and_then(|r| r.split_once('-')).map(|(pid, _)| pid.to_owned());
        if let Some(pid) = pid.filter(|p| p.parse::<u32>().is_ok())
            && !std::path::Path::new("/proc").join(&pid).exists()
        {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Is `cmd` on the PATH?
pub fn have(cmd: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {cmd}")).output().is_ok_and(|o| o.status.success())
}

/// Runs `check` on every case, `width` at a time on threads of their own (a case is a `zescope`
/// child that mostly waits: a recording of fixed length, a loader starting), and returns what
/// each gave, in the cases' order.
pub fn each_case<T: Sync, R: Send>(cases: &[T], width: usize, check: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::with_capacity(cases.len()));
    std::thread::scope(|s| {
        for _ in 0..width.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let r = check(case);
                    done.lock().unwrap_or_else(|p| p.into_inner()).push((i, r));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Runs `zescope ARGS` to its end.
pub fn run(args: &[&str]) -> Output {
    zescope().args(args).output().expect("run zescope")
}

/// What a run printed, stdout then stderr.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The name the test harness gives test `name` of the module whose `module_path!()` is
/// `module` (its path without the binary's own name): what `--exact` takes when a test runs
/// another of its binary's tests as a child process.
pub fn test_name(module: &str, name: &str) -> String {
    let module = module.split_once("::").map_or("", |(_, m)| m);
    format!("{module}::{name}")
}

/// Writes a ze-sim configuration with the realistic catalogue (`catalog: Realistic`: every GPU
/// reports a real GPU's dozens of groups and over a thousand metrics) into `dir`; its path is
/// what `ZE_SIM_CONFIG` takes.
pub fn realistic_catalog(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("realistic.ron");
    std::fs::write(&path, "(catalog: Realistic)\n").expect("write the ze-sim configuration");
    path
}

/// Whether a `record` asked to last `duration` kept sampling: at least 5 rows with values,
/// spread over at least half of it (`times_s`: their times in seconds, in order). How many rows a
/// `record` gets depends on the CPU its sampler got — with 16 test threads on 2 cores a 10 ms
/// tick came a tenth as often — so a test that means "the counters are recorded" asks this
/// instead of a rate; a `record` that stops early or stalls fails it as it failed a count.
pub fn kept_sampling(times_s: &[f64], duration: std::time::Duration) -> Result<(), String> {
    let span = match (times_s.first(), times_s.last()) {
        (Some(a), Some(b)) => b - a,
        _ => 0.0,
    };
    if times_s.len() >= 5 && span >= duration.as_secs_f64() / 2.0 {
        Ok(())
    } else {
        Err(format!("{} rows over {span:.3} s of a {:?} record", times_s.len(), duration))
    }
}
