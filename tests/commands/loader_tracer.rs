//! `zescope record` of the simulated driver's tracer-based group `KernelTrace` (beside the
//! exported group `ComputeBasic`) through the real loaders, with `libze_sim.so` as the driver:
//!
//! - the upstream loader v1.32.0, direct and in intercept mode: the metric tracer and decoder
//!   reach the driver through the loader's exports; the kernel events are recorded (kernel ids,
//!   one after another) beside ComputeBasic's counters, and the driver's report is clean (the
//!   tracer disabled, its decoder and itself destroyed before the import is freed and the groups
//!   deactivated);
//! - Debian's loader 1.8.12, which lacks the tracer's entry points: one notice says the tracer is
//!   off, and the run goes on with ComputeBasic to its end.
//!
//! A missing loader or driver skips loudly, or fails with `ZESCOPE_STRICT_TESTS=1`.

use std::path::Path;

use crate::support::loaders::LoaderUnderTest;

/// The GPU driver: the default devices (KernelTrace among them), metrics enabled at run time.
const GPU_CONFIG: &str = "(metrics: RuntimeOnly)";

/// `zescope record --group ComputeBasic --group KernelTrace` for 1 s through `loader` with `env`;
/// returns (exit ok, stderr, CSV header, CSV rows) after checking the driver's report is clean.
fn record(
    loader: &LoaderUnderTest,
    so: &Path,
    dir: &Path,
    label: &str,
    env: &[(&str, &str)],
) -> (bool, String, Vec<String>, Vec<Vec<String>>) {
    let config = dir.join(format!("{label}.ron"));
    std::fs::write(&config, GPU_CONFIG).unwrap();
    let report = dir.join(format!("{label}-report.ron"));
    let csv = dir.join(format!("{label}.csv"));
    let mut cmd = crate::support::zescope();
    cmd.args(["record", "--source", "level-zero", "--group", "ComputeBasic", "--group", "KernelTrace"])
        .args(["--no-telemetry", "--interval", "1ms", "--duration", "1s", "--out"])
        .arg(&csv);
    cmd.env_remove("ZET_ENABLE_METRICS").env("RUST_BACKTRACE", "1");
    loader.apply(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.env("ZE_ENABLE_ALT_DRIVERS", so).env("ZE_SIM_CONFIG", &config).env("ZE_SIM_REPORT", &report);
    let out = cmd.output().expect("run zescope");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let case = format!("{} / {label}", loader.name);
    let text = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("{case}: no driver report at {}: {e}\n{stderr}", report.display()));
    let r: ze_sim::Report = ron::from_str(&text).unwrap();
    assert!(r.is_clean(), "{case}: violations or leaks:\n{text}\n{stderr}");
    let body = std::fs::read_to_string(&csv).unwrap_or_default();
    let mut lines = body.lines();
    let header: Vec<String> = lines.next().unwrap_or("").split(',').map(str::to_owned).collect();
    let rows = lines.map(|l| l.split(',').map(str::to_owned).collect()).collect();
    (out.status.success(), stderr, header, rows)
}

/// The numbers of the column whose header starts with `prefix` (empty cells left out).
fn numbers(header: &[String], rows: &[Vec<String>], prefix: &str) -> Option<Vec<f64>> {
    let c = header.iter().position(|h| h.starts_with(prefix))?;
    Some(rows.iter().filter_map(|r| r.get(c).and_then(|v| v.parse().ok())).collect())
}

#[test]
fn record_reads_the_tracer_through_the_upstream_loader_direct_and_intercepted() {
    let what = "record of a tracer-based group through the upstream loader";
    let Ok(so) = ze_sim::testing::cdylib().map_err(|why| ze_sim::testing::skip(what, &why)) else { return };
    let Ok(loader) = crate::support::loaders::upstream().map_err(|why| ze_sim::testing::skip(what, &why)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (mode, env) in [("direct", &[][..]), ("intercept", &[("ZE_ENABLE_LOADER_INTERCEPT", "1")][..])] {
        let (ok, stderr, header, rows) = record(&loader, &so, dir.path(), mode, env);
        assert!(ok, "{mode}: {stderr}");
        assert!(!stderr.contains("metric tracer is off"), "{mode}: the loader has the tracer:\n{stderr}");
        let starts = numbers(&header, &rows, "KernelTrace/KernelStart")
            .unwrap_or_else(|| panic!("{mode}: no KernelTrace column in {header:?}\n{stderr}"));
        assert!(starts.len() >= 50, "{mode}: {} kernel events in 1 s:\n{stderr}", starts.len());
        // Kernel ids: whole numbers from 1, each kernel after the one before.
        assert!(starts.iter().all(|v| v.fract() == 0.0 && *v >= 1.0), "{mode}: {starts:?}");
        assert!(starts.windows(2).all(|w| w[1] >= w[0]), "{mode}: kernel ids go forward");
        assert!(starts.last().unwrap() - starts[0] >= 10.0, "{mode}: many kernels: {starts:?}");
        let busy = numbers(&header, &rows, "ComputeBasic/").unwrap_or_default();
        // However many ticks the machine gave the sampler (kept_sampling: 16 test threads on 2 cores).
        assert!(busy.len() >= 5, "{mode}: ComputeBasic is recorded beside it:\n{stderr}");
    }
}

#[test]
fn record_on_debians_loader_without_the_tracer_says_so_once_and_goes_on() {
    let what = "record of a tracer-based group through Debian's loader";
    let Ok(so) = ze_sim::testing::cdylib().map_err(|why| ze_sim::testing::skip(what, &why)) else { return };
    let Ok(loader) = crate::support::loaders::debian().map_err(|why| ze_sim::testing::skip(what, &why)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (ok, stderr, header, rows) = record(&loader, &so, dir.path(), "debian", &[]);
    assert!(ok, "the run goes on to its end:\n{stderr}");
    let notices: Vec<&str> = stderr.lines().filter(|l| l.contains("metric tracer is off")).collect();
    assert_eq!(notices.len(), 1, "{stderr}");
    assert!(notices[0].contains("KernelTrace"), "{stderr}");
    assert!(!header.iter().any(|h| h.starts_with("KernelTrace/")), "{header:?}");
    let busy = numbers(&header, &rows, "ComputeBasic/").unwrap_or_default();
    assert!(busy.len() >= 5, "ComputeBasic is recorded:\n{stderr}");
}
