//! `zescope doctor` as a user runs it: the simulated path passes with at most warnings, a
//! missing loader or driver is a FAIL with its fix and a non-zero exit, and the real loader with
//! `libze_sim.so` reports its version and the simulated driver behind it.

use std::process::Output;

use ze_sim::testing;

fn doctor(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = crate::support::zescope();
    cmd.arg("doctor")
        .args(args)
        .env_remove("ZE_ENABLE_ALT_DRIVERS")
        .env_remove("ZE_SIM_CONFIG")
        .env_remove("ZET_ENABLE_METRICS")
        .env_remove("ZESCOPE_LEVEL_ZERO_LOADER")
        .env("RUST_BACKTRACE", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run zescope doctor")
}

/// stdout, after checking the shape every report has: a title, one status-first line per check,
/// every WARN/FAIL followed by its fix, a summary whose counts match, and an exit code that is
/// non-zero exactly when something FAILed.
fn report(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.first().is_some_and(|l| l.starts_with("zescope doctor (--source ")), "{out}");
    let (mut ok, mut warn, mut fail) = (0, 0, 0);
    for (i, l) in lines.iter().enumerate() {
        let status = ["OK    ", "WARN  ", "FAIL  "].iter().position(|p| l.starts_with(p));
        match status {
            Some(0) => ok += 1,
            Some(s) => {
                if s == 1 {
                    warn += 1
                } else {
                    fail += 1
                }
                let fix = lines[i + 1..].iter().find(|l| !l.starts_with("        "));
                assert!(fix.is_some_and(|f| f.starts_with("      fix: ")), "no fix after {l:?} in:\n{out}");
            }
            None => {}
        }
    }
    let summary = lines.last().unwrap();
    assert!(summary.starts_with(&format!("{fail} FAIL, {warn} WARN, {ok} OK")), "{summary:?} in:\n{out}");
    assert!(ok + warn + fail >= 7, "too few checks:\n{out}");
    assert_eq!(o.status.success(), fail == 0, "exit code {:?} with {fail} FAIL:\n{out}", o.status.code());
    out
}

fn line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no line starting {prefix:?} in:\n{out}"))
}

#[test]
fn the_simulated_path_has_no_failures() {
    let o = doctor(&["--source", "sim"], &[("ZESCOPE_LEVEL_ZERO_LOADER", "/nonexistent/libze_loader.so.1")]);
    let out = report(&o);
    assert!(o.status.success(), "{out}");
    assert!(!out.contains("\nFAIL"), "{out}");
    line(&out, "OK    simulated device: zescope will show the built-in simulated device [SIMULATED]");
    line(&out, "OK    metrics enabled: ZET_ENABLE_METRICS=1 (set by zescope)");
    assert!(line(&out, "OK    metric groups of ze-sim GPU:").contains("5 of 5 groups can be sampled"), "{out}");
    assert!(out.contains("KernelTrace: tracer-based; read with the metric tracer"), "{out}");
    assert!(out.contains("ComputeBasic: exports one DMA-BUF for the group, layout \"ze-sim ComputeBasic\""), "{out}");
    // The streamer's timestamp metric of the (also time-based) group exports nothing.
    assert!(out.contains("MemoryTraffic: 3 of 4 metrics export DMA-BUF, layout"), "{out}");
    assert!(out.contains("EuStallSampling: exports no memory; read with the time-based metric streamer"), "{out}");
    line(&out, "OK    metric groups of ze-sim NPU:");
    // the missing loader is reported, but cannot fail the simulated path
    let loader = line(&out, "WARN  Level Zero loader: /nonexistent/libze_loader.so.1 could not be opened");
    assert!(loader.contains("--source sim does not need it"), "{loader}");
    // every other check ran
    for name in ["device nodes", "capabilities", "display", "file dialogs", "layouts"] {
        assert!(out.lines().any(|l| l[6.min(l.len())..].starts_with(&format!("{name}: "))), "no {name} in:\n{out}");
    }
    assert!(out.contains("perf_stream_paranoid") && out.contains("observation_paranoid"), "{out}");
}

#[test]
fn no_loader_fails_with_the_fix_and_a_non_zero_exit() {
    let o = doctor(&["--source", "level-zero"], &[("ZESCOPE_LEVEL_ZERO_LOADER", "/nonexistent/libze_loader.so.1")]);
    let out = report(&o);
    assert!(!o.status.success(), "{out}");
    line(&out, "FAIL  Level Zero loader: /nonexistent/libze_loader.so.1 could not be opened");
    assert!(out.contains("fix: ZESCOPE_LEVEL_ZERO_LOADER=/nonexistent/libze_loader.so.1 names no loadable library"));
    assert!(line(&out, "FAIL  Level Zero devices:").contains("only the built-in simulated device is available"));
    // level-zero does not fall back: no simulated groups are reported
    assert!(!out.contains("ze-sim"), "{out}");
}

#[test]
fn auto_without_a_real_device_says_so_and_fails() {
    let o = doctor(&[], &[("ZESCOPE_LEVEL_ZERO_LOADER", "/nonexistent/libze_loader.so.1")]);
    let out = report(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.starts_with("zescope doctor (--source auto)"), "{out}");
    line(&out, "FAIL  Level Zero devices: no real device can be found without the loader");
    // what zescope will show instead
    let sim = line(&out, "OK    simulated device: zescope will show the built-in simulated device [SIMULATED]");
    assert!(
        sim.ends_with("(auto: no real device was found): ze-sim GPU (0000:03:00.0), ze-sim NPU (0000:00:0b.0)"),
        "{sim}"
    );
}

#[test]
fn no_driver_behind_the_real_loader_names_the_alt_driver_and_the_driver_packages() {
    if let Err(why) = testing::loader_available() {
        return testing::skip("zescope doctor with the real loader and no driver", &why);
    }
    let o = doctor(&["--source", "level-zero"], &[("ZE_ENABLE_ALT_DRIVERS", "/nonexistent/libze_sim.so")]);
    let out = report(&o);
    assert!(!o.status.success(), "{out}");
    assert!(line(&out, "OK    Level Zero loader: libze_loader.so.1 (").contains("libze_loader.so.1."), "{out}");
    let devices = line(&out, "FAIL  Level Zero devices: no Level Zero driver found a device");
    assert!(devices.contains("only the built-in simulated device is available"), "{devices}");
    assert!(out.contains("fix: ZE_ENABLE_ALT_DRIVERS=/nonexistent/libze_sim.so names a file that does not exist"));
    assert!(out.contains("libze-intel-gpu1"), "{out}");
}

#[test]
fn the_real_loader_with_the_simulated_driver_reports_versions_devices_and_groups() {
    if let Err(why) = testing::loader_available() {
        return testing::skip("zescope doctor through the real loader", &why);
    }
    let so = match testing::cdylib() {
        Ok(so) => so,
        Err(why) => return testing::skip("zescope doctor through the real loader", &why),
    };
    let o = doctor(&["--source", "level-zero"], &[("ZE_ENABLE_ALT_DRIVERS", so.to_str().unwrap())]);
    let out = report(&o);
    assert!(line(&out, "OK    Level Zero loader:").contains("zelLoaderGetVersions: loader "), "{out}");
    let devices = line(&out, "WARN  Level Zero devices: the loader found only zescope's simulated driver");
    assert!(devices.contains("no real device"), "{devices}");
    assert!(
        out.contains(
            "zescope's simulated driver, exports metric memory): ze-sim GPU [Gpu, 1 sub-devices, PCI 0000:03:00.0]"
        ),
        "{out}"
    );
    assert!(out.contains("fix: unset ZE_ENABLE_ALT_DRIVERS"), "{out}");
    // The system's loader (Debian's 1.8.12) has no metric tracer: the tracer-based group is not read.
    assert!(line(&out, "OK    metric groups of ze-sim GPU:").contains("4 of 5 groups can be sampled"), "{out}");
    assert!(
        out.contains("KernelTrace: tracer-based, but the Level Zero loader lacks zetMetricTracerCreateExp"),
        "{out}"
    );
    line(&out, "OK    metrics enabled: ZET_ENABLE_METRICS=1 (set by zescope); run-time enable");
    assert!(!out.contains("simulated device: zescope will show the built-in"), "not the built-in one:\n{out}");
}

#[test]
fn a_users_zet_enable_metrics_0_is_reported_with_the_fix() {
    let o = doctor(
        &["--source", "sim"],
        &[("ZET_ENABLE_METRICS", "0"), ("ZESCOPE_LEVEL_ZERO_LOADER", "/nonexistent/libze_loader.so.1")],
    );
    let out = report(&o);
    // the simulated driver enables metrics at run time, so this is a warning, not a failure
    let l = line(&out, "WARN  metrics enabled: ZET_ENABLE_METRICS=\"0\": drivers hide metric groups");
    assert!(l.contains("zescope enables them at run time instead"), "{l}");
    assert!(out.contains("fix: unset ZET_ENABLE_METRICS (zescope then sets it to 1 for itself)"), "{out}");
    line(&out, "WARN  metric groups of ze-sim GPU: no metric groups");
    assert!(o.status.success(), "{out}");
}

#[test]
fn auto_with_a_real_device_whose_groups_export_nothing_fails_and_says_why() {
    if let Err(why) = testing::loader_available() {
        return testing::skip("zescope doctor on a device without exported memory", &why);
    }
    let so = match testing::cdylib() {
        Ok(so) => so,
        Err(why) => return testing::skip("zescope doctor on a device without exported memory", &why),
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("plain.ron");
    std::fs::write(
        &config,
        "(devices: [(name: \"plain GPU\", groups: [(name: \"Basic\", export: None, metrics: [(name: \"Ticks\")])])])",
    )
    .unwrap();
    let o =
        doctor(&[], &[("ZE_ENABLE_ALT_DRIVERS", so.to_str().unwrap()), ("ZE_SIM_CONFIG", config.to_str().unwrap())]);
    let out = report(&o);
    assert!(!o.status.success(), "{out}");
    // the loader's device has groups, so auto uses it and shows why nothing can be sampled
    let groups = line(&out, "WARN  metric groups of plain GPU: 0 of 1 groups can be sampled");
    assert!(!groups.is_empty());
    assert!(out.contains("        Basic: exports no memory (cannot be sampled)"), "{out}");
    assert!(out.contains("ZET_experimental_metric_export_memory"), "{out}");
    line(&out, "FAIL  sampleable groups: no device has a metric group that exports memory with a layout");
    assert!(!out.contains("simulated device: zescope will show"), "no fallback when the loader has metrics:\n{out}");
}

/// Loader v1.32.0 with Debian's 1.8.12 tracing and validation layers first on the library path:
/// the old tracing layer refuses the new loader's API version, `zeInitDrivers` answers
/// UNSUPPORTED_VERSION, and the doctor (and `zescope list`) must say that a layer of another
/// release is in the way, and how to put the loader's own layers first, not "no driver".
#[test]
fn a_loader_with_layers_of_another_release_is_named_with_the_library_path_fix() {
    let what = "zescope doctor with mismatched loader layers";
    let (upstream, debian) = match (crate::support::loaders::upstream(), crate::support::loaders::debian()) {
        (Ok(u), Ok(d)) => (u, d),
        (Err(why), _) | (_, Err(why)) => return testing::skip(what, &why),
    };
    let so = match testing::cdylib() {
        Ok(so) => so,
        Err(why) => return testing::skip(what, &why),
    };
    let old = tempfile::tempdir().unwrap();
    let debian_dir = debian.library.parent().unwrap();
    for layer in ["libze_tracing_layer.so.1", "libze_validation_layer.so.1"] {
        std::fs::copy(debian_dir.join(layer), old.path().join(layer)).expect("copy Debian's layer");
    }
    let lib = upstream.layer_dir.clone().unwrap();
    let library_path = format!("{}:{}", old.path().display(), lib.display());
    let env = [
        ("ZESCOPE_LEVEL_ZERO_LOADER", upstream.library.to_str().unwrap()),
        ("LD_LIBRARY_PATH", library_path.as_str()),
        ("ZE_ENABLE_ALT_DRIVERS", so.to_str().unwrap()),
    ];
    let o = doctor(&["--source", "level-zero"], &env);
    let out = report(&o);
    assert!(!o.status.success(), "{out}");
    let l = line(&out, "FAIL  Level Zero loader: the Level Zero loader ");
    assert!(
        l.contains("libze_loader.so.1.32.0 (1.32.0) loaded a layer of another release that does not match it"),
        "{l}"
    );
    assert!(l.contains(&format!("{}/libze_tracing_layer.so.1", old.path().display())), "{l}");
    assert!(l.contains("answered ZE_RESULT_ERROR_UNSUPPORTED_VERSION"), "{l}");
    let fix = format!(
        "fix: put the loader's own layers first on the library path: LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH (or remove {} from LD_LIBRARY_PATH)",
        std::fs::canonicalize(&lib).unwrap().display(),
        old.path().display()
    );
    assert!(out.contains(&fix), "no {fix:?} in:\n{out}");
    line(&out, "FAIL  Level Zero devices: no real device can be found until the loader starts");
    assert!(!out.contains("no Level Zero driver"), "not a missing driver:\n{out}");
    // `zescope list` says the same.
    let mut list = crate::support::zescope();
    list.args(["list", "--source", "level-zero"]).env_remove("ZE_SIM_CONFIG");
    for (k, v) in env {
        list.env(k, v);
    }
    let o = list.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("loaded a layer of another release that does not match it"), "{err}");
    assert!(err.contains("put the loader's own layers first on the library path"), "{err}");
    assert!(!err.contains("no Level Zero driver was found"), "{err}");
}

/// A `zeInit` failure the loader's debug trace explains: the doctor reruns discovery with
/// `ZE_ENABLE_LOADER_DEBUG_TRACE=1` and quotes the failing lines (loader v1.32.0, whose trace
/// names the driver library it could not load).
#[test]
fn a_failed_start_quotes_the_loaders_trace() {
    let upstream = match crate::support::loaders::upstream() {
        Ok(u) => u,
        Err(why) => return testing::skip("zescope doctor quoting the loader's trace", &why),
    };
    let lib = upstream.layer_dir.clone().unwrap();
    let env = [
        ("ZESCOPE_LEVEL_ZERO_LOADER", upstream.library.to_str().unwrap()),
        ("LD_LIBRARY_PATH", lib.to_str().unwrap()),
        ("ZE_ENABLE_ALT_DRIVERS", "/nonexistent/libze_sim.so"),
    ];
    let o = doctor(&["--source", "level-zero"], &env);
    let out = report(&o);
    let devices = line(&out, "FAIL  Level Zero devices: no Level Zero driver found a device");
    assert!(
        devices.contains("the loader's trace says: Load Library of /nonexistent/libze_sim.so failed with"),
        "{devices}"
    );
    assert!(devices.contains("0 Drivers Discovered"), "{devices}");
}
