//! `zescope list` and `record` through the upstream loader v1.32.0 on drivers that behave as the
//! public ones do: copies of `libze_sim.so` named as Intel's drivers (`libze_intel_npu.so.1`,
//! `libze_intel_gpu.so.1`) in a folder on the library path, found by the loader's own discovery
//! (no `ZE_ENABLE_ALT_DRIVERS`), which takes their type from their name, each configured with a
//! ze-sim profile (`docs/ze-sim.md`).
//!
//! - Both drivers at once: `list` shows the GPU and the NPU. The loader loads a typed driver only
//!   when `zeInitDrivers` asks for its type, and each driver refuses flags without its type, so a
//!   GPU-only ask would find the GPU alone (with no reason to fall back to `zeInit`).
//! - The NPU driver: `record --group NocTraffic --interval 1ms` runs to its end (the driver
//!   refuses the 100 µs period asked first; zescope streams at its 1 ms floor and says so once),
//!   reports 1 ms apart, one notice for each Sysman piece the driver lacks.
//! - compute-runtime: `record --group RenderBasic --interval 1ms` runs to its end while the energy
//!   counter falls to ~200 J and comes back: every power value within the simulated 8..=180 W,
//!   the fall a gap; one notice each for the missing temperature sensors and the zero memory
//!   bandwidth, one for the counter.
//!
//! Every driver's report is clean. A missing loader or driver skips loudly, or fails with
//! `ZESCOPE_STRICT_TESTS=1`.

use std::path::{Path, PathBuf};

use ze_sim::config::Profile;

use crate::support::loaders::LoaderUnderTest;

/// The upstream loader and a folder holding the named driver copies, or None (skipped loudly).
fn setup(what: &str, dir: &Path) -> Option<(LoaderUnderTest, PathBuf)> {
    let so = match ze_sim::testing::cdylib() {
        Ok(so) => so,
        Err(why) => {
            ze_sim::testing::skip(what, &why);
            return None;
        }
    };
    let loader = match crate::support::loaders::upstream() {
        Ok(l) => l,
        Err(why) => {
            ze_sim::testing::skip(what, &why);
            return None;
        }
    };
    let drivers = dir.join("drivers");
    std::fs::create_dir_all(&drivers).unwrap();
    for name in ["libze_intel_npu.so.1", "libze_intel_gpu.so.1"] {
        std::fs::copy(&so, drivers.join(name)).unwrap();
    }
    Some((loader, drivers))
}

/// The driver copy of `profile` and the suffix of its `ZE_SIM_CONFIG`/`ZE_SIM_REPORT` variables.
fn copy_of(profile: Profile) -> (&'static str, &'static str) {
    match profile {
        Profile::NpuDriverLike => ("libze_intel_npu.so.1", "_ZE_INTEL_NPU"),
        Profile::ComputeRuntimeLike | Profile::Spec2026 => ("libze_intel_gpu.so.1", "_ZE_INTEL_GPU"),
    }
}

/// `zescope ARGS` through `loader` with the driver copies of `profiles` on the library path (the
/// others removed), each configured with its profile; returns (exit ok, stdout, stderr) after
/// checking every driver's report.
fn run(
    loader: &LoaderUnderTest,
    drivers: &Path,
    dir: &Path,
    label: &str,
    profiles: &[Profile],
    args: &[&str],
) -> (bool, String, String) {
    let only = dir.join(format!("{label}-drivers"));
    std::fs::create_dir_all(&only).unwrap();
    let mut cmd = crate::support::zescope();
    cmd.args(args);
    cmd.env_remove("ZET_ENABLE_METRICS").env_remove("ZES_ENABLE_SYSMAN").env_remove("ZE_ENABLE_ALT_DRIVERS");
    loader.apply(&mut cmd);
    let lib = format!("{}:{}", loader.layer_dir.as_ref().unwrap().display(), only.display());
    cmd.env("LD_LIBRARY_PATH", lib);
    let mut reports = Vec::new();
    for &p in profiles {
        let (name, suffix) = copy_of(p);
        let _ = std::fs::remove_file(only.join(name));
        std::fs::hard_link(drivers.join(name), only.join(name)).unwrap();
        let config = dir.join(format!("{label}-{name}.ron"));
        std::fs::write(&config, ron::to_string(&p.config()).unwrap()).unwrap();
        let report = dir.join(format!("{label}-{name}-report.ron"));
        cmd.env(format!("ZE_SIM_CONFIG{suffix}"), &config).env(format!("ZE_SIM_REPORT{suffix}"), &report);
        reports.push(report);
    }
    let out = cmd.output().expect("run zescope");
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    for report in reports {
        let text = std::fs::read_to_string(&report)
            .unwrap_or_else(|e| panic!("{label}: no driver report at {}: {e}\n{stderr}", report.display()));
        let r: ze_sim::Report = ron::from_str(&text).unwrap();
        assert!(r.is_clean(), "{label}: violations or leaks:\n{text}\n{stderr}");
    }
    (out.status.success(), stdout, stderr)
}

/// The CSV `path`: header and rows.
fn csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("").split(',').map(str::to_owned).collect();
    (header, lines.map(|l| l.split(',').map(str::to_owned).collect()).collect())
}

/// The cells of the column whose header starts with `prefix` (None: no such column); an empty
/// cell is NaN.
fn column(path: &Path, prefix: &str) -> Option<Vec<f64>> {
    let (header, rows) = csv(path);
    let c = header.iter().position(|h| h.starts_with(prefix))?;
    Some(rows.iter().map(|r| r.get(c).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)).collect())
}

fn notices(stderr: &str, part: &str) -> usize {
    stderr.lines().filter(|l| l.contains(part)).count()
}

#[test]
fn the_loader_starts_the_npu_driver_beside_the_gpu_driver() {
    let dir = tempfile::tempdir().unwrap();
    let Some((loader, drivers)) = setup("the NPU and GPU drivers through the loader's discovery", dir.path()) else {
        return;
    };
    let both = [Profile::ComputeRuntimeLike, Profile::NpuDriverLike];
    let (ok, stdout, stderr) = run(&loader, &drivers, dir.path(), "list", &both, &["list", "--source", "level-zero"]);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(stdout.contains("ze-sim GPU") && stdout.contains("ze-sim NPU"), "both devices listed:\n{stdout}\n{stderr}");
}

#[test]
fn record_on_the_npu_driver_streams_at_its_floor_and_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let Some((loader, drivers)) = setup("record on an NPU-driver-like driver", dir.path()) else { return };
    let out = dir.path().join("npu.csv");
    let args = ["record", "--source", "level-zero", "--group", "NocTraffic", "--interval", "1ms", "--duration", "2s"];
    let mut args: Vec<&str> = args.to_vec();
    let out_s = out.display().to_string();
    args.extend(["--out", &out_s]);
    let (ok, stdout, stderr) = run(&loader, &drivers, dir.path(), "npu", &[Profile::NpuDriverLike], &args);
    assert!(ok, "the run ends as asked, not at once:\n{stdout}\n{stderr}");
    assert_eq!(notices(&stderr, "refused a sampling period of 100 µs"), 1, "{stderr}");
    assert_eq!(notices(&stderr, "streaming every 1 ms instead"), 1, "{stderr}");
    for piece in ["frequency domains", "power domains", "temperature sensors", "memory modules"] {
        assert_eq!(notices(&stderr, piece), 1, "one notice for the missing {piece}:\n{stderr}");
    }
    let bytes = column(&out, "NocTraffic/NocBytesRead").unwrap_or_else(|| panic!("no NocTraffic column\n{stderr}"));
    let samples = bytes.iter().filter(|v| v.is_finite()).count();
    assert!(samples >= 500, "{samples} reports in 2 s at 1 ms:\n{stderr}");
    assert!(bytes.iter().filter(|v| v.is_finite()).all(|&v| v >= 0.0), "rates are never negative");
}

#[test]
fn record_on_compute_runtime_has_no_power_spike_from_the_falling_energy_counter() {
    let dir = tempfile::tempdir().unwrap();
    let Some((loader, drivers)) = setup("record on a compute-runtime-like driver", dir.path()) else { return };
    let out = dir.path().join("gpu.csv");
    let out_s = out.display().to_string();
    let args = [
        "record",
        "--source",
        "level-zero",
        "--group",
        "RenderBasic",
        "--interval",
        "1ms",
        "--duration",
        "3s",
        "--out",
        &out_s,
    ];
    let (ok, stdout, stderr) = run(&loader, &drivers, dir.path(), "gpu", &[Profile::ComputeRuntimeLike], &args);
    assert!(ok, "{stdout}\n{stderr}");
    assert_eq!(notices(&stderr, "no temperature sensors"), 1, "{stderr}");
    assert_eq!(notices(&stderr, "Memory bandwidth is off"), 1, "{stderr}");
    assert_eq!(notices(&stderr, "went backwards or leapt"), 1, "{stderr}");
    let (header, _) = csv(&out);
    assert!(!header.iter().any(|h| h.contains("temperature") || h.contains("bandwidth")), "{header:?}");
    let power = column(&out, "Telemetry/Package power [W]").unwrap_or_else(|| panic!("no power column: {header:?}"));
    // Telemetry rows carry the power; the streamer's rows leave it empty. Read at most every 100 ms.
    let energy = column(&out, "Telemetry/Package energy [J]").unwrap();
    let telemetry: Vec<f64> = power.iter().zip(&energy).filter(|(_, e)| e.is_finite()).map(|(p, _)| *p).collect();
    let watts: Vec<f64> = telemetry.iter().copied().filter(|w| w.is_finite()).collect();
    assert!(watts.len() >= 10, "{telemetry:?}");
    assert!(watts.iter().all(|w| (8.0 * 0.99..=180.0 * 1.01).contains(w)), "within the simulated power: {watts:?}");
    assert!(telemetry.iter().any(|w| w.is_nan()), "the fall is a gap: {telemetry:?}");
    let render = column(&out, "RenderBasic/RenderUtilization").unwrap();
    assert!(render.iter().filter(|v| v.is_finite()).count() >= 500, "the streamed group keeps going:\n{stderr}");
}
