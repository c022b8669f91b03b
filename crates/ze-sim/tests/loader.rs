//! The REAL Level Zero loader (Debian's libze1) loads `libze_sim.so` through
//! `ZE_ENABLE_ALT_DRIVERS`, in four modes: direct, loader intercept, validation layer with
//! parameter validation, and tracing layer. Loader state is per process, so each run is a child
//! process of this test binary (`harness = false`: `main` is the parent, and
//! `ZE_SIM_LOADER_SCENARIO=<scenario>:<mode>` makes it the child).
//!
//! Scenarios (bodies in `loader/scenarios.rs`), each in every mode:
//! - `basic`: the tour of export, import, refusals while imported, run-time enable/disable;
//! - `empty`: every optional entry point left empty (`SimConfig::optional_entry_points`): the
//!   loader answers for them and the spec's sample path (query before activation) still works;
//! - `empty-extension`: one extension function emptied is no longer returned by name;
//! - `stream`: the time-based streamer (`common::stream::stream_tour`, one deliberate refusal
//!   while a streamer is open) and a streamer on the NPU;
//! - `two-copies`: `libze_sim.so` and a copy `libze_sim_npu.so`, each with its own config and
//!   report (`ZE_SIM_CONFIG_ZE_SIM_NPU`, `ZE_SIM_REPORT_ZE_SIM_NPU`).
//!
//! The parent checks each child's exit status and every driver's report file.

mod common;
#[path = "loader/scenarios.rs"]
mod scenarios;

use std::path::Path;
use std::process::Command;

use ze_sim::config::SimConfig;
use ze_sim::{Report, testing};

const MODES: [(&str, &[(&str, &str)]); 4] = [
    ("direct", &[]),
    ("intercept", &[("ZE_ENABLE_LOADER_INTERCEPT", "1")]),
    ("validation", &[("ZE_ENABLE_VALIDATION_LAYER", "1"), ("ZE_ENABLE_PARAMETER_VALIDATION", "1")]),
    ("tracing", &[("ZE_ENABLE_TRACING_LAYER", "1")]),
];

/// The NPU copy's configuration: one NPU device, `zeDeviceGetStatus` left empty.
const NPU_CONFIG: &str = r#"(
    empty_entry_points: ["zeDeviceGetStatus"],
    devices: [(name: "ze-sim NPU copy", kind: Npu, device_id: 0x5a5f, groups: [
        (name: "NpuOnly", metrics: [(name: "Inferences", signal: Inferences), (name: "NpuPower", signal: PowerWatts)]),
    ])],
)"#;

fn main() {
    if let Ok(which) = std::env::var("ZE_SIM_LOADER_SCENARIO") {
        let (scenario, mode) = which.split_once(':').expect("<scenario>:<mode>");
        match scenario {
            "basic" => scenarios::basic(mode),
            "empty" => scenarios::empty(mode),
            "empty-extension" => scenarios::empty_extension(mode),
            "two-copies" => scenarios::two_copies(mode),
            "stream" => scenarios::stream(mode),
            other => panic!("unknown scenario {other}"),
        }
        println!("scenario {which}: ok");
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test -- --list` asks harness-less tests for nothing
    }
    if let Err(why) = testing::loader_available() {
        return testing::skip("the real-loader tests", &why);
    }
    let so = match testing::cdylib() {
        Ok(so) => so,
        Err(why) => return testing::skip("the real-loader tests", &why),
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let npu_so = dir.join("libze_sim_npu.so");
    std::fs::copy(&so, &npu_so).expect("copy libze_sim.so to libze_sim_npu.so");
    let empty_cfg = dir.join("empty.ron");
    let all: Vec<String> = SimConfig::optional_entry_points().iter().map(|n| format!("{n:?}")).collect();
    std::fs::write(&empty_cfg, format!("(empty_entry_points: [{}])", all.join(", "))).unwrap();
    let ext_cfg = dir.join("empty-extension.ron");
    std::fs::write(&ext_cfg, r#"(empty_entry_points: ["zetDeviceEnableMetricsExp"])"#).unwrap();
    let npu_cfg = dir.join("npu.ron");
    std::fs::write(&npu_cfg, NPU_CONFIG).unwrap();

    let mut failures = Vec::new();
    for (mode, env) in MODES {
        for scenario in ["basic", "empty", "empty-extension", "two-copies", "stream"] {
            let report = dir.join(format!("{scenario}-{mode}.ron"));
            let npu_report = dir.join(format!("{scenario}-{mode}-npu.ron"));
            let mut cmd = Command::new(std::env::current_exe().unwrap());
            cmd.env("ZE_SIM_LOADER_SCENARIO", format!("{scenario}:{mode}"))
                .env("ZET_ENABLE_METRICS", "1")
                .env("ZE_SIM_REPORT", &report)
                .env_remove("ZE_SIM_CONFIG")
                .env_remove("ZE_SIM_CONFIG_ZE_SIM")
                .env_remove("ZE_SIM_REPORT_ZE_SIM");
            for (k, v) in env {
                cmd.env(k, v);
            }
            let mut reports = vec![(report, expect_clean as fn(&Report) -> bool)];
            match scenario {
                "basic" => reports[0].1 = expect_two_refusals,
                "stream" => reports[0].1 = expect_one_streamer_refusal,
                "empty" => drop(cmd.env("ZE_SIM_CONFIG", &empty_cfg)),
                "empty-extension" => drop(cmd.env("ZE_SIM_CONFIG", &ext_cfg)),
                _ => {
                    cmd.env("ZE_SIM_CONFIG_ZE_SIM_NPU", &npu_cfg).env("ZE_SIM_REPORT_ZE_SIM_NPU", &npu_report);
                    reports.push((npu_report, expect_clean));
                }
            }
            let alt = if scenario == "two-copies" {
                format!("{},{}", so.display(), npu_so.display())
            } else {
                so.display().to_string()
            };
            cmd.env("ZE_ENABLE_ALT_DRIVERS", alt);
            let out = cmd.output().expect("spawn the scenario");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let before = failures.len();
            if !out.status.success() {
                failures.push(format!("{scenario}/{mode}: child failed ({}):\n{stdout}\n{stderr}", out.status));
            } else {
                for (path, expect) in &reports {
                    if let Err(why) = check_report(path, *expect) {
                        failures.push(format!("{scenario}/{mode}: {why}\n{stderr}"));
                    }
                }
            }
            println!("loader {scenario}/{mode}: {}", if failures.len() == before { "ok" } else { "FAILED" });
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn expect_clean(r: &Report) -> bool {
    r.is_clean()
}

/// The basic scenario provokes exactly two refusals while its import is alive.
fn expect_two_refusals(r: &Report) -> bool {
    r.violation_kinds() == ["teardown_with_live_import", "teardown_with_live_import"] && r.leaks.is_empty()
}

/// The stream scenario provokes one refusal: deactivation while its streamer is open.
fn expect_one_streamer_refusal(r: &Report) -> bool {
    r.violation_kinds() == ["teardown_with_open_streamer"] && r.leaks.is_empty()
}

fn check_report(path: &Path, expect: fn(&Report) -> bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("no report at {}: {e}", path.display()))?;
    let r: Report = ron::from_str(&text).map_err(|e| format!("unreadable report {}: {e}\n{text}", path.display()))?;
    if expect(&r) { Ok(()) } else { Err(format!("unexpected report {}:\n{text}", path.display())) }
}
