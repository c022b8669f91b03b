//! `zescope record` through two real Level Zero loaders — Debian's 1.8.12 and the upstream
//! release v1.32.0 built from `third_party/` (see `support/loaders.rs`) — with `libze_sim.so` as the
//! driver, in the same modes for both: direct, loader intercept, validation layer with parameter
//! validation, tracing layer, and two drivers at once (`libze_sim.so` plus a copy
//! `libze_sim_npu.so` with its own config and report, as on a laptop with a GPU and an NPU),
//! each device alone and both in one run.
//!
//! Each case is a whole run of the binary: start, record for a moment, stop, teardown. The
//! driver enables metrics only at run time (`metrics: RuntimeOnly`), so every run goes through
//! `zetDeviceEnableMetricsExp`/`zetDeviceDisableMetricsExp`: the loader v1.32.0 exports them
//! itself, and a wrong handle there crashed zescope (issue 19). Asserted: the exit status, that
//! samples were written, and that every driver's report has no violation and no leak.
//!
//! A second test runs `record` with every optional entry point of the driver left empty
//! (`SimConfig::optional_entry_points`) in the four single-driver modes through both loaders: the
//! run must still reach its end (issue 10).
//!
//! A third records a group read with the time-based metric streamer (`RenderBasic`, which exports
//! nothing) together with an exported group of the same device, in the four modes through both
//! loaders, until the file holds enough samples of both (then SIGINT ends it): the driver's report
//! is clean, and reports sit one sampling period apart although the device's global timer counts
//! 19.2 MHz ticks.
//!
//! A fourth lists and records two drivers of which one predates `zeInitDrivers` (API 1.10): a
//! copy `libze_other.so` with other names, UUIDs and driver version, its device at the same PCI
//! address as ze-sim's GPU, in either order in `ZE_ENABLE_ALT_DRIVERS`. The upstream loader's
//! `zeInitDrivers` skips such a driver (issue 41: it vanished from `list` and `record`); every
//! driver and device must be listed and the other driver's device recorded.
//!
//! A missing loader or driver skips loudly, or fails with `ZESCOPE_STRICT_TESTS=1`. A test's runs
//! go four at a time (`support::each_case`), each with files of its own; the first two tests
//! record for 1 s a run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::loaders::LoaderUnderTest;
use ze_sim::config::SimConfig;

const MODES: [(&str, &[(&str, &str)]); 4] = [
    ("direct", &[]),
    ("intercept", &[("ZE_ENABLE_LOADER_INTERCEPT", "1")]),
    ("validation", &[("ZE_ENABLE_VALIDATION_LAYER", "1"), ("ZE_ENABLE_PARAMETER_VALIDATION", "1")]),
    ("tracing", &[("ZE_ENABLE_TRACING_LAYER", "1")]),
];

/// The GPU driver: the default devices, metrics only after run-time enable.
const GPU_CONFIG: &str = "(metrics: RuntimeOnly)";

/// The GPU with an Intel-like global timer counting 19.2 MHz ticks (its wrap is exercised by
/// tests/sampler_streamer.rs).
const TICKING_GPU_CONFIG: &str = "(metrics: RuntimeOnly, quirks: (timer_hz: Some(19200000)))";

/// The NPU copy: one NPU device of its own, metrics only after run-time enable.
const NPU_CONFIG: &str = r#"(
    metrics: RuntimeOnly,
    devices: [(name: "ze-sim NPU copy", kind: Npu, device_id: 0x5a5f, groups: [
        (name: "NpuOnly", metrics: [(name: "Inferences", signal: Inferences), (name: "NpuPower", signal: PowerWatts)]),
    ])],
)"#;

/// Another vendor's driver (a copy of `libze_sim.so`): an older API without `zeInitDrivers`,
/// its own driver UUID and version, a GPU of another name and PCI ids at the PCI address of
/// ze-sim's GPU (two devices of two drivers are never one device, whatever they report).
const OTHER_CONFIG: &str = r#"(
    empty_entry_points: ["zeInitDrivers"],
    driver_uuid_tag: 0x0dd1,
    driver_version: 0x20005,
    devices: [(name: "Other vendor GPU", kind: Gpu, vendor_id: 0x1234, device_id: 0x0042, core_clock_mhz: 900,
        pci_bdf: Some("0000:03:00.0"),
        groups: [(name: "OtherCounters", metrics: [(name: "Busy", signal: GpuTime), (name: "Power", signal: PowerWatts)])],
    )],
)"#;

fn setup(what: &str) -> Option<(Vec<LoaderUnderTest>, PathBuf)> {
    crate::support::loaders::with_driver(what)
}

/// One `zescope record` run; its files live in `dir`.
#[derive(Clone, Copy)]
struct Run<'a> {
    loader: &'a LoaderUnderTest,
    mode: &'a str,
    env: &'a [(&'a str, &'a str)],
    dir: &'a Path,
}

/// How a run must end.
#[derive(Clone, Copy)]
enum Expect<'a> {
    /// Exit status 0 and samples in the CSV.
    Samples,
    /// A non-zero exit whose message contains this text.
    Refused(&'a str),
}

/// How long a run stopped by [`Run::record_until`] may take to meet its condition.
const UNTIL_LIMIT: Duration = Duration::from_secs(60);

impl Run<'_> {
    /// Runs `record` with `Expect::Samples`.
    fn record(&self, label: &str, args: &[&str], drivers: &[(&Path, &Path, &str)]) -> Result<(), String> {
        self.record_expecting(label, args, drivers, Expect::Samples)
    }

    /// Runs `record` and checks how it ended and that every driver's report is clean; `drivers`
    /// are (file, config file, suffix of its `ZE_SIM_CONFIG`/`ZE_SIM_REPORT` variables).
    fn record_expecting(
        &self,
        label: &str,
        args: &[&str],
        drivers: &[(&Path, &Path, &str)],
        expect: Expect,
    ) -> Result<(), String> {
        let (mut cmd, reports) = self.command(label, args, drivers);
        if !args.contains(&"--duration") {
            cmd.args(["--duration", "1s"]);
        }
        let out = cmd.output().map_err(|e| format!("cannot run zescope: {e}"))?;
        self.check(label, &out, &reports, expect)
    }

    /// Runs `record` until the CSV so far satisfies `done` (polled as it is flushed, at most
    /// [`UNTIL_LIMIT`]), then ends it with SIGINT, and checks it as [`Run::record`] does: the
    /// recording holds what a loaded machine needs however long it takes to sample it.
    fn record_until(
        &self,
        label: &str,
        args: &[&str],
        drivers: &[(&Path, &Path, &str)],
        done: impl Fn(&Path) -> bool,
    ) -> Result<(), String> {
        let (mut cmd, reports) = self.command(label, args, drivers);
        let (stdout, stderr) = (self.dir.join(format!("{label}.stdout")), self.dir.join(format!("{label}.stderr")));
        let file = |p: &Path| std::fs::File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()));
        cmd.args(["--duration", "1h"]).stdout(file(&stdout)?).stderr(file(&stderr)?);
        let mut child = cmd.spawn().map_err(|e| format!("cannot run zescope: {e}"))?;
        let csv = self.csv(label);
        let start = Instant::now();
        // Until the condition holds, zescope ends on its own (an error: checked below), or the limit.
        while !done(&csv) && start.elapsed() < UNTIL_LIMIT && child.try_wait().is_ok_and(|s| s.is_none()) {
            std::thread::sleep(Duration::from_millis(50));
        }
        if child.try_wait().is_ok_and(|s| s.is_none()) {
            let signalled = Command::new("kill").arg("-INT").arg(child.id().to_string()).status();
            if !signalled.is_ok_and(|s| s.success()) {
                let _ = child.kill();
                return Err(format!("{label}: cannot send SIGINT to zescope"));
            }
        }
        let status = child.wait().map_err(|e| format!("waiting for zescope: {e}"))?;
        let read = |p: &Path| std::fs::read(p).unwrap_or_default();
        let out = Output { status, stdout: read(&stdout), stderr: read(&stderr) };
        self.check(label, &out, &reports, Expect::Samples)
    }

    /// `zescope list --source level-zero` with `drivers` (as for [`Run::record`]): its output.
    fn list(&self, label: &str, drivers: &[(&Path, &Path, &str)]) -> Result<String, String> {
        let (cmd, _) = self.command(label, &[], drivers);
        let mut list = crate::support::zescope();
        list.args(["list", "--source", "level-zero"]);
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => list.env(k, v),
                None => list.env_remove(k),
            };
        }
        let out = list.output().map_err(|e| format!("cannot run zescope list: {e}"))?;
        let text = crate::support::text(&out);
        if !out.status.success() {
            return Err(format!(
                "{} / {}: zescope list exited with {}:\n{text}",
                self.loader.name, self.mode, out.status
            ));
        }
        Ok(text)
    }

    fn csv(&self, label: &str) -> PathBuf {
        self.dir.join(format!("{label}.csv"))
    }

    /// The `record` command of a run, and the driver reports it is to write.
    fn command(&self, label: &str, args: &[&str], drivers: &[(&Path, &Path, &str)]) -> (Command, Vec<PathBuf>) {
        let mut cmd = crate::support::zescope();
        cmd.args(["record", "--source", "level-zero", "--out"]).arg(self.csv(label)).args(args);
        for var in ["ZE_SIM_CONFIG", "ZE_SIM_REPORT", "ZE_SIM_CONFIG_ZE_SIM_NPU", "ZE_SIM_REPORT_ZE_SIM_NPU"] {
            cmd.env_remove(var);
        }
        cmd.env_remove("ZET_ENABLE_METRICS").env("RUST_BACKTRACE", "1");
        self.loader.apply(&mut cmd);
        for (k, v) in self.env {
            cmd.env(k, v);
        }
        let mut reports = Vec::new();
        let alt: Vec<String> = drivers.iter().map(|(so, _, _)| so.display().to_string()).collect();
        cmd.env("ZE_ENABLE_ALT_DRIVERS", alt.join(","));
        for (i, (_, config, suffix)) in drivers.iter().enumerate() {
            let report = self.dir.join(format!("{label}-report-{i}.ron"));
            let _ = std::fs::remove_file(&report);
            cmd.env(format!("ZE_SIM_CONFIG{suffix}"), config).env(format!("ZE_SIM_REPORT{suffix}"), &report);
            reports.push(report);
        }
        (cmd, reports)
    }

    /// How the run ended, its samples and its drivers' reports.
    fn check(&self, label: &str, out: &Output, reports: &[PathBuf], expect: Expect) -> Result<(), String> {
        let csv = self.csv(label);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let case = format!("{} / {} / {label}", self.loader.name, self.mode);
        let rows = std::fs::read_to_string(&csv).unwrap_or_default().lines().count().saturating_sub(1);
        match expect {
            Expect::Samples if !out.status.success() => {
                return Err(format!("{case}: zescope record exited with {}:\n{stdout}\n{stderr}", out.status));
            }
            Expect::Samples if rows < 50 => {
                return Err(format!("{case}: only {rows} samples in {}:\n{stdout}\n{stderr}", csv.display()));
            }
            Expect::Refused(why) if out.status.success() || out.status.code().is_none() || !stderr.contains(why) => {
                return Err(format!(
                    "{case}: expected a refusal naming {why:?}, got {}:\n{stdout}\n{stderr}",
                    out.status
                ));
            }
            _ => {}
        }
        for report in reports {
            let text = std::fs::read_to_string(report)
                .map_err(|e| format!("{case}: no driver report at {}: {e}\n{stderr}", report.display()))?;
            let r: ze_sim::Report =
                ron::from_str(&text).map_err(|e| format!("{case}: unreadable report {}: {e}", report.display()))?;
            if !r.is_clean() {
                return Err(format!("{case}: violations or leaks in {}:\n{text}\n{stderr}", report.display()));
            }
        }
        println!("{case}: ok ({rows} samples, {})", out.status);
        Ok(())
    }
}

#[test]
fn record_through_both_loaders_in_every_mode_and_with_two_drivers() {
    let Some((loaders, so)) = setup("the loader matrix") else { return };
    let dir = tempfile::tempdir().unwrap();
    let npu_so = dir.path().join("libze_sim_npu.so");
    std::fs::copy(&so, &npu_so).expect("copy libze_sim.so to libze_sim_npu.so");
    let gpu_cfg = dir.path().join("gpu.ron");
    std::fs::write(&gpu_cfg, GPU_CONFIG).unwrap();
    let npu_cfg = dir.path().join("npu.ron");
    std::fs::write(&npu_cfg, NPU_CONFIG).unwrap();
    let (so, gpu_cfg, npu_so, npu_cfg) = (so.as_path(), gpu_cfg.as_path(), npu_so.as_path(), npu_cfg.as_path());
    let gpu = [(so, gpu_cfg, "")];
    let drivers = [(so, gpu_cfg, ""), (npu_so, npu_cfg, "_ZE_SIM_NPU")];
    let custom = ["--custom-group", "--metric", "GpuTime", "--metric", "GpuPower"];
    let mut cases: Vec<Case> = Vec::new();
    for loader in &loaders {
        for (mode, env) in MODES {
            let run = Run { loader, mode, env, dir: dir.path() };
            cases.push(Box::new(move || run.record(&format!("{}-{mode}", loader.name), &[], &gpu)));
        }
        // A metric group created for the run: through the driver's own functions while the
        // loader does not wrap handles.
        let run = Run { loader, mode: "direct", env: &[], dir: dir.path() };
        cases.push(Box::new(move || run.record(&format!("{}-custom-group", loader.name), &custom, &gpu)));
        // With wrapped handles and no loader export that creates groups for this driver (its
        // tables predate them), the request is refused with the reason, cleanly, never a crash.
        let run = Run { loader, mode: "intercept", env: MODES[1].1, dir: dir.path() };
        cases.push(Box::new(move || {
            let label = format!("{}-custom-group-intercept", loader.name);
            let refused = Expect::Refused("the Level Zero loader wraps handles here");
            run.record_expecting(&label, &custom, &gpu, refused)
        }));
        // Two drivers, no setting: loader v1.32.0 wraps handles for this on its own.
        let run = Run { loader, mode: "two drivers", env: &[], dir: dir.path() };
        for (label, args) in [("two-gpu", &[][..]), ("two-npu", &["--device", "NPU copy"][..])] {
            cases.push(Box::new(move || run.record(&format!("{}-{label}", loader.name), args, &drivers)));
        }
        // Both drivers' devices in one run: a context on each, read on one clock, both torn down.
        cases.push(Box::new(move || {
            let label = format!("{}-gpu-and-npu", loader.name);
            run.record(&label, &["--device", "ze-sim GPU", "--device", "NPU copy"], &drivers)?;
            let csv = run.csv(&label);
            for group in ["ze-sim GPU/ComputeBasic", "ze-sim NPU copy/NpuOnly"] {
                let times: Vec<f64> = times_of(&csv, group).iter().map(|&ns| ns as f64 * 1e-9).collect();
                crate::support::kept_sampling(&times, std::time::Duration::from_secs(1))
                    .map_err(|e| format!("{label}: {group}: {e} in {}", csv.display()))?;
            }
            Ok(())
        }));
    }
    assert_all_pass(&cases);
}

/// One run of a matrix and its checks.
type Case<'a> = Box<dyn Fn() -> Result<(), String> + Sync + 'a>;

/// Runs the cases four at a time (each is a `zescope` child that mostly waits) and fails with
/// every failure at once.
fn assert_all_pass(cases: &[Case]) {
    let failures: Vec<String> =
        crate::support::each_case(cases, 4, |case| case()).into_iter().filter_map(Result::err).collect();
    assert!(failures.is_empty(), "{} of {} failed:\n\n{}", failures.len(), cases.len(), failures.join("\n\n"));
}

#[test]
fn record_with_every_optional_entry_point_empty_through_both_loaders() {
    let Some((loaders, so)) = setup("the empty-entry-point matrix") else { return };
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, skip: &[&str]| {
        let cfg = dir.path().join(name);
        let names: Vec<String> =
            SimConfig::optional_entry_points().iter().filter(|n| !skip.contains(n)).map(|n| format!("{n:?}")).collect();
        std::fs::write(&cfg, format!("(empty_entry_points: [{}])", names.join(", "))).unwrap();
        cfg
    };
    let all = write("empty.ron", &[]);
    // Loader v1.32.0 in intercept mode calls every driver's zeDriverGetExtensionProperties from
    // its zeDriverGet without checking the slot (a null call: SIGSEGV inside the loader, before
    // zescope can do anything), so that one stays filled there.
    let but_extension_properties = write("empty-but-extension-properties.ron", &["zeDriverGetExtensionProperties"]);
    let mut cases: Vec<Case> = Vec::new();
    for loader in &loaders {
        for (mode, env) in MODES {
            let run = Run { loader, mode, env, dir: dir.path() };
            let cfg = if loader.name.starts_with("upstream") && mode == "intercept" {
                but_extension_properties.as_path()
            } else {
                all.as_path()
            };
            let so = so.as_path();
            cases.push(Box::new(move || run.record(&format!("{}-{mode}-empty", loader.name), &[], &[(so, cfg, "")])));
        }
    }
    assert_all_pass(&cases);
}

/// The time cells of the rows of `csv` with a value in a column of `group`.
fn time_cells(csv: &Path, group: &str) -> Vec<String> {
    let text = std::fs::read_to_string(csv).unwrap_or_default();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let cols: Vec<usize> =
        header.iter().enumerate().filter(|(_, h)| h.starts_with(&format!("{group}/"))).map(|(i, _)| i).collect();
    lines
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            let has = cols.iter().any(|&c| cells.get(c).is_some_and(|v| !v.is_empty()));
            has.then(|| cells[0].to_owned())
        })
        .collect()
}

/// Times (ns) of the rows of `csv` with a value in a column of `group`.
pub(crate) fn times_of(csv: &Path, group: &str) -> Vec<i64> {
    let ns = |cell: &str| {
        let (s, f) = cell.split_once('.')?;
        Some(s.parse::<i64>().ok()? * 1_000_000_000 + f.parse::<i64>().ok()?)
    };
    time_cells(csv, group).iter().filter_map(|c| ns(c)).collect()
}

/// Rows of `csv` with a value in a column of `group`.
pub(crate) fn rows_of(csv: &Path, group: &str) -> usize {
    time_cells(csv, group).len()
}

#[test]
fn record_a_streamed_and_an_exported_group_together_through_both_loaders() {
    let Some((loaders, so)) = setup("the streamer matrix") else { return };
    let dir = tempfile::tempdir().unwrap();
    let gpu_cfg = dir.path().join("gpu.ron");
    std::fs::write(&gpu_cfg, TICKING_GPU_CONFIG).unwrap();
    let args = ["--group", "ComputeBasic", "--group", "RenderBasic", "--interval", "10ms"];
    // Both groups must plot: at least this many exported samples and streamer reports. About
    // 1.3 s at 10 ms and 1.28 ms a report; the run ends once the file holds them, however many of
    // its ticks a loaded machine delays (how punctual they are is the benchmarks' business).
    let (want_exported, want_streamed) = (15, 1000);
    let enough =
        |csv: &Path| rows_of(csv, "ComputeBasic") >= want_exported && rows_of(csv, "RenderBasic") >= want_streamed;
    let gpu = [(so.as_path(), gpu_cfg.as_path(), "")];
    let mut cases: Vec<Case> = Vec::new();
    for loader in &loaders {
        for (mode, env) in MODES {
            let run = Run { loader, mode, env, dir: dir.path() };
            cases.push(Box::new(move || {
                let label = format!("{}-{mode}-streamer", loader.name);
                run.record_until(&label, &args, &gpu, enough)?;
                let csv = run.csv(&label);
                let (exported, streamed) = (rows_of(&csv, "ComputeBasic"), rows_of(&csv, "RenderBasic"));
                if exported < want_exported || streamed < want_streamed {
                    return Err(format!("{label}: {exported} exported and {streamed} streamed samples"));
                }
                // Report times come through the tick pair of `zeDeviceGetGlobalTimestamps` (the
                // timer's rate from `timerResolution`), so reports sit one period apart.
                let off: Vec<i64> = times_of(&csv, "RenderBasic")
                    .windows(2)
                    .map(|w| w[1] - w[0] - 1_280_000)
                    .filter(|d| d.abs() > 5_000)
                    .collect();
                if !off.is_empty() {
                    return Err(format!("{label}: {} report steps off the 1.28 ms period: {off:?}", off.len()));
                }
                Ok(())
            }));
        }
    }
    assert_all_pass(&cases);
}

#[test]
fn list_and_record_two_drivers_one_without_init_drivers_in_either_order() {
    let Some((loaders, so)) = setup("the second-driver matrix") else { return };
    let dir = tempfile::tempdir().unwrap();
    let other_so = dir.path().join("libze_other.so");
    std::fs::copy(&so, &other_so).expect("copy libze_sim.so to libze_other.so");
    let (sim_cfg, other_cfg) = (dir.path().join("sim.ron"), dir.path().join("other.ron"));
    std::fs::write(&sim_cfg, "()").unwrap();
    std::fs::write(&other_cfg, OTHER_CONFIG).unwrap();
    let sim = (so.as_path(), sim_cfg.as_path(), "");
    let other = (other_so.as_path(), other_cfg.as_path(), "_ZE_OTHER");
    let orders = [("sim-first", [sim, other]), ("other-first", [other, sim])];
    let mut cases: Vec<Case> = Vec::new();
    for loader in &loaders {
        for (mode, env) in &MODES[..2] {
            for (order, drivers) in &orders {
                let run = Run { loader, mode, env, dir: dir.path() };
                cases.push(Box::new(move || {
                    let label = format!("{}-{mode}-{order}", loader.name);
                    let listing = run.list(&format!("{label}-list"), drivers)?;
                    let drivers_listed = listing.lines().filter(|l| l.starts_with("Driver ")).count();
                    let devices = ["Device 0: ze-sim GPU [", "Device 1: ze-sim NPU [", "Device 0: Other vendor GPU ["];
                    let missing: Vec<&str> = devices.into_iter().filter(|d| !listing.contains(d)).collect();
                    if drivers_listed != 2 || !missing.is_empty() {
                        return Err(format!(
                            "{label}: {drivers_listed} drivers listed, missing {missing:?}:\n{listing}"
                        ));
                    }
                    run.record(&format!("{label}-other"), &["--device", "Other vendor GPU"], drivers)?;
                    let header = std::fs::read_to_string(run.csv(&format!("{label}-other"))).unwrap_or_default();
                    if !header.lines().next().is_some_and(|h| h.contains("OtherCounters/Busy")) {
                        return Err(format!("{label}: the other driver's group is not in the recording"));
                    }
                    run.record(&format!("{label}-sim"), &["--device", "ze-sim GPU"], drivers)
                }));
            }
        }
    }
    assert_all_pass(&cases);
}
