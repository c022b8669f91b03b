//! Sysman telemetry through the two real Level Zero loaders (Debian's 1.8.12, which has no
//! `zesInit`, and the upstream v1.32.0, which has) with `libze_sim.so` as the driver, in the four
//! single-driver modes of `loader_matrix.rs`: `zescope record` for 2 s must write a "Telemetry"
//! stream with plausible clocks, temperatures and utilisation, and watts from the energy counter
//! within 1 % of the power the driver simulates (`sysman.fixed_power_w`).
//!
//! With `ZES_ENABLE_SYSMAN` unset (zescope sets it) and set to 1 both loaders reach Sysman; set to
//! 0, only `zesInit` (loader v1.32.0) does, and with loader 1.8.12 the run records its counters
//! and names what is off. Missing pieces (every zes entry point empty, a failing domain, a driver
//! without Sysman) never stop the counters; a wrapping energy counter never gives negative or
//! huge watts.
//!
//! A missing loader or driver skips loudly, or fails with `ZESCOPE_STRICT_TESTS=1`.

use std::path::{Path, PathBuf};

use crate::support::loaders::LoaderUnderTest;

const MODES: [(&str, &[(&str, &str)]); 4] = [
    ("direct", &[]),
    ("intercept", &[("ZE_ENABLE_LOADER_INTERCEPT", "1")]),
    ("validation", &[("ZE_ENABLE_VALIDATION_LAYER", "1"), ("ZE_ENABLE_PARAMETER_VALIDATION", "1")]),
    ("tracing", &[("ZE_ENABLE_TRACING_LAYER", "1")]),
];

/// How long `record` records.
const RECORDED: std::time::Duration = std::time::Duration::from_secs(2);

/// The power the driver simulates, W.
const WATTS: f64 = 150.0;

fn setup(what: &str) -> Option<(Vec<LoaderUnderTest>, PathBuf)> {
    crate::support::loaders::with_driver(what)
}

/// A finished `zescope record`: its CSV (header, rows) and stderr.
struct Recorded {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    stderr: String,
}

impl Recorded {
    /// The values of the column whose header starts with `prefix` (empty cells and NaN, a
    /// value that could not be had, left out).
    fn column(&self, prefix: &str) -> Option<Vec<f64>> {
        Some(self.cells(prefix)?.into_iter().filter(|v| !v.is_nan()).collect())
    }

    /// Every number of the column, NaN included.
    fn cells(&self, prefix: &str) -> Option<Vec<f64>> {
        let c = self.header.iter().position(|h| h.starts_with(prefix))?;
        Some(self.rows.iter().filter_map(|r| r.get(c)?.parse::<f64>().ok()).collect())
    }

    /// The times (s, the first column) of the rows with a value in any column of `group`.
    fn times_of(&self, group: &str) -> Vec<f64> {
        let cols: Vec<usize> = (0..self.header.len()).filter(|&i| self.header[i].starts_with(group)).collect();
        self.rows
            .iter()
            .filter(|r| cols.iter().any(|&c| r.get(c).is_some_and(|v| !v.is_empty())))
            .filter_map(|r| r.first()?.parse().ok())
            .collect()
    }
}

/// Runs `zescope record` for 2 s through `loader` in `mode` with the driver configured by
/// `config` (RON) and `ZES_ENABLE_SYSMAN` as given (None: unset); checks the exit status and the
/// driver's report.
fn record(
    loader: &LoaderUnderTest,
    (mode, env): (&str, &[(&str, &str)]),
    sysman_env: Option<&str>,
    config: &str,
    so: &Path,
    dir: &Path,
    label: &str,
) -> Result<Recorded, String> {
    let case = format!("{} / {mode} / ZES_ENABLE_SYSMAN={sysman_env:?} / {label}", loader.name);
    let csv = dir.join(format!("{label}.csv"));
    let cfg = dir.join(format!("{label}.ron"));
    let report = dir.join(format!("{label}-report.ron"));
    std::fs::write(&cfg, config).unwrap();
    let mut cmd = crate::support::zescope();
    cmd.args(["record", "--source", "level-zero", "--interval", "10ms", "--duration"])
        .arg(format!("{}s", RECORDED.as_secs()));
    cmd.arg("--out").arg(&csv);
    cmd.env_remove("ZET_ENABLE_METRICS").env_remove("ZES_ENABLE_SYSMAN").env_remove("RUST_LOG");
    loader.apply(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(v) = sysman_env {
        cmd.env("ZES_ENABLE_SYSMAN", v);
    }
    cmd.env("ZE_ENABLE_ALT_DRIVERS", so).env("ZE_SIM_CONFIG", &cfg).env("ZE_SIM_REPORT", &report);
    let out = cmd.output().map_err(|e| format!("{case}: cannot run zescope: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!("{case}: zescope record exited with {}:\n{stderr}", out.status));
    }
    let text = std::fs::read_to_string(&report).map_err(|e| format!("{case}: no driver report: {e}\n{stderr}"))?;
    let r: ze_sim::Report = ron::from_str(&text).map_err(|e| format!("{case}: unreadable report: {e}"))?;
    if !r.is_clean() {
        return Err(format!("{case}: violations or leaks:\n{text}\n{stderr}"));
    }
    let text = std::fs::read_to_string(&csv).map_err(|e| format!("{case}: no CSV: {e}"))?;
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("").split(',').map(str::to_owned).collect();
    let rows = lines.map(|l| l.split(',').map(str::to_owned).collect()).collect();
    Ok(Recorded { header, rows, stderr })
}

/// Telemetry of the default simulated device, checked for plausible values.
fn check_telemetry(r: &Recorded, case: &str) -> Result<(), String> {
    let need = |prefix: &str| r.column(prefix).ok_or_else(|| format!("{case}: no column {prefix:?} in {:?}", r.header));
    let in_range = |prefix: &str, lo: f64, hi: f64, min_count: usize| -> Result<(), String> {
        let v = need(prefix)?;
        if v.len() < min_count || v.iter().any(|x| !(lo..=hi).contains(x)) {
            return Err(format!("{case}: {prefix}: {} values, expected ≥ {min_count} in {lo}..={hi}: {v:?}", v.len()));
        }
        Ok(())
    };
    // 2 s at one read per 100 ms: about 20 samples; a loaded machine keeps fewer.
    in_range("Telemetry/GPU frequency actual [MHz]", 250.0, 2200.0, 8)?;
    in_range("Telemetry/GPU temperature [°C]", 30.0, 110.0, 8)?;
    in_range("Telemetry/Compute engines utilisation [%]", 0.0, 100.0, 8)?;
    in_range("Telemetry/Memory used [B]", 1.0, 17e9, 8)?;
    in_range("Telemetry/Memory read bandwidth [B/s]", 1e7, 1e11, 8)?;
    in_range("Telemetry/GPU throttle reasons", 0.0, 127.0, 8)?;
    // Watts from the energy counter: within 1 % of the simulated power.
    in_range("Telemetry/Package power [W]", WATTS * 0.99, WATTS * 1.01, 8)?;
    let energy = need("Telemetry/Package energy [J]")?;
    if energy.windows(2).any(|w| w[1] < w[0]) || energy.last().is_none_or(|&e| e < WATTS * 0.5) {
        return Err(format!("{case}: the energy total must grow to about {WATTS} J/s × 2 s: {energy:?}"));
    }
    if let Err(e) = crate::support::kept_sampling(&r.times_of("ComputeBasic/"), RECORDED) {
        return Err(format!("{case}: the metric group: {e}"));
    }
    Ok(())
}

#[test]
fn telemetry_records_through_both_loaders_in_every_mode() {
    let Some((loaders, so)) = setup("the telemetry matrix") else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = format!("(metrics: RuntimeOnly, sysman: (fixed_power_w: Some({WATTS})))");
    let cases: Vec<_> = loaders
        .iter()
        .flat_map(|loader| MODES.into_iter().flat_map(move |mode| [None, Some("1")].map(|env| (loader, mode, env))))
        .collect();
    let failures: Vec<String> = crate::support::each_case(&cases, 4, |&(loader, mode, sysman_env)| {
        let label = format!("{}-{}-{}", loader.name, mode.0, sysman_env.unwrap_or("unset"));
        let r = record(loader, mode, sysman_env, &config, &so, dir.path(), &label);
        r.and_then(|r| check_telemetry(&r, &label)).map(|()| println!("{label}: ok"))
    })
    .into_iter()
    .filter_map(Result::err)
    .collect();
    assert!(failures.is_empty(), "{} of {} failed:\n\n{}", failures.len(), cases.len(), failures.join("\n\n"));
}

#[test]
fn without_zes_enable_sysman_only_zes_init_reaches_telemetry() {
    let Some((loaders, so)) = setup("telemetry without ZES_ENABLE_SYSMAN") else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = format!("(metrics: RuntimeOnly, sysman: (fixed_power_w: Some({WATTS})))");
    let mut failures = Vec::new();
    for loader in &loaders {
        let label = format!("{}-sysman-0", loader.name);
        let r = match record(loader, MODES[0], Some("0"), &config, &so, dir.path(), &label) {
            Ok(r) => r,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let outcome = if loader.name.starts_with("upstream") {
            check_telemetry(&r, &label)
        } else if r.column("Telemetry/").is_some() || !r.stderr.contains("telemetry (Sysman) is off") {
            Err(format!(
                "{label}: no zesInit and no ZES_ENABLE_SYSMAN: telemetry must be off and said so:\n{}",
                r.stderr
            ))
        } else if let Err(e) = crate::support::kept_sampling(&r.times_of("ComputeBasic/"), RECORDED) {
            Err(format!("{label}: the counters must still record ({e})"))
        } else {
            Ok(())
        };
        if let Err(e) = outcome {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{} failed:\n\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn missing_telemetry_leaves_the_counters_sampled_and_says_what_is_missing() {
    let Some((loaders, so)) = setup("missing telemetry") else { return };
    let dir = tempfile::tempdir().unwrap();
    // Every zes entry point the driver implements.
    let all_empty: Vec<String> = ze_sim::config::SimConfig::implemented_entry_points()
        .iter()
        .filter(|n| n.starts_with("zes"))
        .map(|n| format!("{n:?}"))
        .collect();
    let cases: [(&str, String, &[&str], &[&str]); 4] = [
        // (label, config, columns that must exist, words the notices must contain)
        (
            "all-empty",
            format!("(metrics: RuntimeOnly, empty_entry_points: [{}])", all_empty.join(", ")),
            &[],
            &["telemetry (Sysman) is off"],
        ),
        (
            "no-sysman",
            "(metrics: RuntimeOnly, sysman: (available: false))".to_owned(),
            &[],
            &["telemetry (Sysman) is off", "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE"],
        ),
        (
            "failing-power-and-memory",
            "(metrics: RuntimeOnly, sysman: (failing: [Power, Memory]))".to_owned(),
            &["Telemetry/GPU frequency actual", "Telemetry/GPU temperature"],
            &["telemetry of Package power is off", "zesPowerGetEnergyCounter", "zesMemoryGetState"],
        ),
        (
            "empty-engines-and-temperature",
            "(metrics: RuntimeOnly, empty_entry_points: [\"zesDeviceEnumEngineGroups\", \
             \"zesDeviceEnumTemperatureSensors\"])"
                .to_owned(),
            &["Telemetry/Package power", "Telemetry/Memory used"],
            &["telemetry of engine groups is off", "telemetry of temperature sensors is off"],
        ),
    ];
    let mut failures = Vec::new();
    for loader in &loaders {
        for (label, config, columns, notices) in &cases {
            let label = format!("{}-{label}", loader.name);
            let r = match record(loader, MODES[0], None, config, &so, dir.path(), &label) {
                Ok(r) => r,
                Err(e) => {
                    failures.push(e);
                    continue;
                }
            };
            if let Err(e) = crate::support::kept_sampling(&r.times_of("ComputeBasic/"), RECORDED) {
                failures.push(format!("{label}: the counters must still record ({e})"));
            }
            for c in *columns {
                if r.column(c).is_none_or(|v| v.is_empty()) {
                    failures.push(format!("{label}: no values in {c}: {:?}", r.header));
                }
            }
            for n in *notices {
                if !r.stderr.contains(n) {
                    failures.push(format!("{label}: the diagnostics do not say {n:?}:\n{}", r.stderr));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failed:\n\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn a_wrapping_energy_counter_gives_no_negative_or_huge_watts() {
    let Some((loaders, so)) = setup("a wrapping energy counter") else { return };
    let dir = tempfile::tempdir().unwrap();
    // A µJ counter that wraps at 150 J: once a second at 150 W, so one to three times in a run
    // of 2 s, however long zescope takes to start.
    let wrap = (WATTS * 1e6) as u64;
    let config = format!("(metrics: RuntimeOnly, sysman: (fixed_power_w: Some({WATTS}), counter_wrap: Some({wrap})))");
    let mut failures = Vec::new();
    for loader in &loaders {
        let label = format!("{}-wrap", loader.name);
        let r = match record(loader, MODES[0], None, &config, &so, dir.path(), &label) {
            Ok(r) => r,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        // The read across the wrap has no value (NaN); every other is the simulated power.
        let cells = r.cells("Telemetry/Package power [W]").unwrap_or_default();
        let watts: Vec<f64> = cells.iter().copied().filter(|w| !w.is_nan()).collect();
        if watts.len() < 8 || watts.iter().any(|w| !(WATTS * 0.99..=WATTS * 1.01).contains(w)) {
            failures.push(format!("{label}: watts across the wrap must stay at {WATTS} W: {cells:?}"));
        }
        if !(1..=3).contains(&cells.iter().filter(|w| w.is_nan()).count()) {
            failures.push(format!("{label}: the counter wraps every second, one read without watts each: {cells:?}"));
        }
        let energy = r.column("Telemetry/Package energy [J]").unwrap_or_default();
        if energy.windows(2).any(|w| w[1] < w[0]) {
            failures.push(format!("{label}: the energy total went backwards: {energy:?}"));
        }
        let busy = r.column("Telemetry/Compute engines utilisation [%]").unwrap_or_default();
        if busy.iter().any(|b| !(0.0..=100.0).contains(b)) {
            failures.push(format!("{label}: utilisation out of 0..=100 %: {busy:?}"));
        }
    }
    assert!(failures.is_empty(), "{} failed:\n\n{}", failures.len(), failures.join("\n\n"));
}
