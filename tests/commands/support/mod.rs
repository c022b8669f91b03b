//! Helpers for the command-line tests: the one way to start `zescope` (with none of the
//! environment that would change what it opens), the Level Zero loaders under test
//! (`loaders`), `record` with a markers socket (`markers`), and `zescope serve` as a child with its
//! HTTP client and promtool (`serve`).
#![allow(dead_code, reason = "each test module uses a part")]

pub mod loaders;
pub mod markers;
pub mod serve;

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
    "ZET_ENABLE_METRICS",
    "ZES_ENABLE_SYSMAN",
    "RUST_LOG",
];

/// Clears what [`CHOSEN_BY_TESTS`] lists from `c`'s environment and asks for backtraces.
pub fn clean_env(c: &mut Command) -> &mut Command {
    for var in CHOSEN_BY_TESTS {
        c.env_remove(var);
    }
    c.env("RUST_BACKTRACE", "1")
}

/// `zescope`, with a clean environment (the arguments and variables are the caller's).
pub fn zescope() -> Command {
    let mut c = Command::new(BIN);
    clean_env(&mut c);
    c
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
