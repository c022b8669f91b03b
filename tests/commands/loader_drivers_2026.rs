//! zescope through the upstream loader v1.32.0 on drivers as they are in 2026 (issue 41), each a
//! `libze_sim.so` (`ZE_ENABLE_ALT_DRIVERS`) configured with a ze-sim profile:
//!
//! - the NPU driver, which allows one open metric streamer per device: `record` of two streamed
//!   groups keeps the first streaming and leaves the second out with ONE notice on stderr, and the
//!   session's run record lists the group read and keeps the notice;
//! - a driver of the 2026 specification (refused size queries, refused counter-based
//!   notification events, the global timestamp in host ns): exported memory, the streamer and
//!   the tracer all read, no read asks its size, streamer reports one period apart, in direct and
//!   intercept mode;
//! - compute-runtime (group types as combined bits; engine groups only for a privileged user)
//!   and a driver that does not list `ZET_experimental_metric_export_memory` although its groups
//!   set the bit: `list` and `record` read the exported groups, one telemetry notice says why
//!   there is no engine utilisation, and `doctor` names the extensions, the export support and
//!   the privilege that enables engine utilisation.
//!
//! Every driver's report is clean. A missing loader or driver skips loudly, or fails with
//! `ZESCOPE_STRICT_TESTS=1`.

use std::path::{Path, PathBuf};
use std::process::Output;

use ze_sim::config::{Profile, SimConfig};

use crate::support::loaders::LoaderUnderTest;

const INTERCEPT: &[(&str, &str)] = &[("ZE_ENABLE_LOADER_INTERCEPT", "1")];

/// The upstream loader and `libze_sim.so`, or None (skipped loudly).
fn setup(what: &str) -> Option<(LoaderUnderTest, PathBuf)> {
    let so = match ze_sim::testing::cdylib() {
        Ok(so) => so,
        Err(why) => {
            ze_sim::testing::skip(what, &why);
            return None;
        }
    };
    match crate::support::loaders::upstream() {
        Ok(l) => Some((l, so)),
        Err(why) => {
            ze_sim::testing::skip(what, &why);
            None
        }
    }
}

/// `zescope ARGS` through `loader` on `so` configured with `cfg` (and `env`): its output and the
/// driver's report, checked clean.
fn run(
    (loader, so): (&LoaderUnderTest, &Path),
    dir: &Path,
    label: &str,
    cfg: &SimConfig,
    env: &[(&str, &str)],
    args: &[&str],
) -> (Output, ze_sim::Report) {
    let config = dir.join(format!("{label}.ron"));
    std::fs::write(&config, ron::to_string(cfg).unwrap()).unwrap();
    let report = dir.join(format!("{label}-report.ron"));
    let mut cmd = crate::support::zescope();
    cmd.args(args);
    loader.apply(&mut cmd);
    cmd.env("ZE_ENABLE_ALT_DRIVERS", so).env("ZE_SIM_CONFIG", &config).env("ZE_SIM_REPORT", &report);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run zescope");
    let text = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("{label}: no driver report ({e}):\n{}", crate::support::text(&out)));
    let r: ze_sim::Report = ron::from_str(&text).unwrap();
    assert!(r.is_clean(), "{label}: violations or leaks:\n{text}\n{}", crate::support::text(&out));
    (out, r)
}

fn lines(text: &str, part: &str) -> usize {
    text.lines().filter(|l| l.contains(part)).count()
}

#[test]
fn one_streamer_per_device_leaves_the_second_group_out_with_one_notice() {
    let Some((loader, so)) = setup("one streamer per device through the upstream loader") else { return };
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("npu.ron");
    let s = session.display().to_string();
    let args = [
        "record",
        "--source",
        "level-zero",
        "--group",
        "NocTraffic",
        "--group",
        "NpuActivity",
        "--interval",
        "1ms",
        "--duration",
        "2s",
        "--out",
        &s,
    ];
    let (out, _) = run((&loader, &so), dir.path(), "npu", &Profile::NpuDriverLike.config(), &[], &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run goes on:\n{stderr}");
    let notice = "metric group NpuActivity is left out of this run: the driver allows one open metric streamer per \
                  device and NocTraffic streams on ze-sim NPU already";
    assert_eq!(lines(&stderr, "left out"), 1, "ONE notice:\n{stderr}");
    assert_eq!(lines(&stderr, notice), 1, "naming the reason:\n{stderr}");
    let s = zescope_model::session::load(&session).expect("record wrote a session");
    assert_eq!(s.runs[0].groups, ["NocTraffic"], "the run record lists what was read");
    assert_eq!(s.runs[0].notices.iter().filter(|n| n.contains(notice)).count(), 1, "{:?}", s.runs[0].notices);
    let reports = s.streams.iter().find(|x| x.meta.group == "NocTraffic").map(|x| x.data.raw.timestamps.len());
    assert!(reports.is_some_and(|n| n >= 500), "the first group streams on: {reports:?} reports in 2 s");
    assert!(!s.streams.iter().any(|x| x.meta.group == "NpuActivity"));
}

#[test]
fn a_driver_of_the_2026_spec_is_read_every_way_without_size_queries() {
    let Some((loader, so)) = setup("a driver of the 2026 specification through the upstream loader") else { return };
    let dir = tempfile::tempdir().unwrap();
    let cfg = Profile::Spec2026.config();
    for (mode, env) in [("direct", &[][..]), ("intercept", INTERCEPT)] {
        let csv = dir.path().join(format!("{mode}.csv"));
        let c = csv.display().to_string();
        let groups = ["--group", "ComputeBasic", "--group", "RenderBasic", "--group", "KernelTrace"];
        let args = [
            &["record", "--source", "level-zero"][..],
            &groups,
            &["--interval", "10ms", "--duration", "2s", "--out", &c],
        ]
        .concat();
        let (out, report) = run((&loader, &so), dir.path(), mode, &cfg, env, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{mode}:\n{stderr}");
        assert_eq!(report.size_queries, 0, "{mode}: no read asks its size");
        assert_eq!(lines(&stderr, "notification event"), 0, "{mode}: the streamer took zescope's event:\n{stderr}");
        let times = crate::loader_matrix::times_of(&csv, "RenderBasic");
        assert!(times.len() >= 500, "{mode}: {} streamer reports:\n{stderr}", times.len());
        // The global timestamp in host ns, reports in 19.2 MHz ticks: one 1.28 ms period apart.
        let off: Vec<i64> = times.windows(2).map(|w| w[1] - w[0] - 1_280_000).filter(|d| d.abs() > 5_000).collect();
        assert!(off.is_empty(), "{mode}: {} report steps off the period: {off:?}", off.len());
        for group in ["ComputeBasic", "KernelTrace"] {
            let times: Vec<f64> =
                crate::loader_matrix::times_of(&csv, group).iter().map(|&ns| ns as f64 * 1e-9).collect();
            let kept = crate::support::kept_sampling(&times, std::time::Duration::from_secs(2));
            assert!(kept.is_ok(), "{mode}: {group}: {}:\n{stderr}", kept.unwrap_err());
        }
    }
}

#[test]
fn combined_group_bits_and_an_unlisted_extension_still_export_and_the_doctor_says_so() {
    let Some((loader, so)) = setup("group-type bits and the extension's name through the upstream loader") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Profile::ComputeRuntimeLike.config();
    cfg.quirks.export_extension_unlisted = true;
    let l = (&loader, so.as_path());
    let (out, _) = run(l, dir.path(), "list", &cfg, &[], &["list", "--source", "level-zero"]);
    let listing = crate::support::text(&out);
    assert!(out.status.success(), "{listing}");
    let compute = listing.lines().find(|l| l.trim_start().starts_with("ComputeBasic ")).unwrap_or_default();
    assert!(compute.contains("DMA-BUF (whole group)"), "the EXPORT_DMA_BUF bit among others:\n{listing}");
    assert!(listing.contains("engines: privileged only"), "{listing}");

    let csv = dir.path().join("gpu.csv");
    let c = csv.display().to_string();
    let args = ["record", "--source", "level-zero", "--group", "ComputeBasic", "--duration", "1s", "--out", &c];
    let (out, _) = run(l, dir.path(), "record", &cfg, &[], &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let times: Vec<f64> =
        crate::loader_matrix::times_of(&csv, "ComputeBasic").iter().map(|&ns| ns as f64 * 1e-9).collect();
    let kept = crate::support::kept_sampling(&times, std::time::Duration::from_secs(1));
    assert!(kept.is_ok(), "{}:\n{stderr}", kept.unwrap_err());
    assert_eq!(lines(&stderr, "telemetry of engine groups is off for this run"), 1, "{stderr}");
    assert_eq!(lines(&stderr, "only to a privileged user"), 1, "{stderr}");

    let (out, _) = run(l, dir.path(), "doctor", &cfg, &[], &["doctor", "--source", "level-zero"]);
    let report = crate::support::text(&out);
    assert!(
        report.contains(
            "groups set the EXPORT_DMA_BUF bit; the driver does not list ZET_experimental_metric_export_memory"
        ),
        "{report}"
    );
    assert!(report.contains("extensions: ZET_experimental_metrics_runtime_enable_disable 1.0"), "{report}");
    let telemetry = report.lines().find(|l| l.contains("telemetry of ze-sim GPU:")).unwrap_or_default();
    assert!(telemetry.starts_with("WARN") && telemetry.contains("engine groups"), "{report}");
    assert!(report.contains("run zescope as root, or give it CAP_SYS_ADMIN"), "{report}");
}
