//! The REAL Level Zero loader (Debian's libze1) loads `libze_sim.so` through
//! `ZE_ENABLE_ALT_DRIVERS`, in four modes: direct, loader intercept, validation layer with
//! parameter validation, and tracing layer. Loader state is per process, so each mode runs as a
//! child process of this test binary (`harness = false`: `main` is the parent, and
//! `ZE_SIM_LOADER_SCENARIO=<mode>` makes it the child).
//!
//! Each child enumerates, queries export properties through a `pNext` chain that also holds an
//! unknown stype, imports a dup of the exported fd, reads a counter that advances, sees the
//! IN_USE refusals while the import is alive, frees, and runs runtime enable/disable through
//! `zeDriverGetExtensionFunctionAddress` (translating the device handle where the loader wraps
//! handles). The parent checks the child's exit status and the driver's `ZE_SIM_REPORT`.

mod common;

use std::process::Command;

use common::*;
use level_zero_sys::*;
use ze_sim::testing;

const MODES: [(&str, &[(&str, &str)]); 4] = [
    ("direct", &[]),
    ("intercept", &[("ZE_ENABLE_LOADER_INTERCEPT", "1")]),
    ("validation", &[("ZE_ENABLE_VALIDATION_LAYER", "1"), ("ZE_ENABLE_PARAMETER_VALIDATION", "1")]),
    ("tracing", &[("ZE_ENABLE_TRACING_LAYER", "1")]),
];

fn main() {
    if let Ok(mode) = std::env::var("ZE_SIM_LOADER_SCENARIO") {
        scenario(&mode);
        println!("scenario {mode}: ok");
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
    let exe = std::env::current_exe().unwrap();
    let mut failures = Vec::new();
    for (mode, env) in MODES {
        let report = std::env::temp_dir().join(format!("ze-sim-loader-{mode}-{}.ron", std::process::id()));
        let _ = std::fs::remove_file(&report);
        let mut cmd = Command::new(&exe);
        cmd.env("ZE_SIM_LOADER_SCENARIO", mode)
            .env("ZE_ENABLE_ALT_DRIVERS", &so)
            .env("ZET_ENABLE_METRICS", "1")
            .env("ZE_SIM_REPORT", &report)
            .env_remove("ZE_SIM_CONFIG");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("spawn the scenario");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            failures.push(format!("mode {mode}: child failed ({}):\n{stdout}\n{stderr}", out.status));
            continue;
        }
        let text = std::fs::read_to_string(&report).unwrap_or_default();
        let parsed: Result<ze_sim::Report, _> = ron::from_str(&text);
        match parsed {
            Ok(r) => {
                // The scenario provokes exactly two refusals while its import is alive.
                if r.violation_kinds() != ["teardown_with_live_import", "teardown_with_live_import"]
                    || !r.leaks.is_empty()
                {
                    failures.push(format!("mode {mode}: unexpected report:\n{text}"));
                }
            }
            Err(e) => failures.push(format!("mode {mode}: no readable ZE_SIM_REPORT ({e}):\n{text}\n{stderr}")),
        }
        let _ = std::fs::remove_file(&report);
        println!("loader mode {mode}: {}", if failures.is_empty() { "ok" } else { "FAILED" });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn scenario(mode: &str) {
    let api = Api::load().expect("load libze_loader.so.1");
    let raw = Raw { api };
    // SAFETY: plain call.
    ok(unsafe { (raw.api.zeInit)(0) }).expect("zeInit through the loader");
    let drivers = raw.drivers().unwrap();
    assert_eq!(drivers.len(), 1, "exactly the simulated driver");
    let drv = drivers[0];
    let devices = raw.devices(drv).unwrap();
    assert_eq!(devices.len(), 2);
    let d = devices[0];
    assert_eq!(raw.device_name(d).unwrap().0, "ze-sim GPU");
    assert_eq!(raw.sub_devices(d).unwrap().len(), 1);
    let g = raw.group_by_name(d, "ComputeBasic").unwrap();
    let info = raw.group(g).unwrap(); // chain: unknown stype → type → export
    assert_ne!(
        info.type_flags & ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF,
        0,
        "{mode}: type flag through the chain"
    );
    let c = raw.context(drv).unwrap();
    raw.activate(c, d, &[g]).unwrap();
    let e = raw.group(g).unwrap().export;
    assert!(e.fd >= 0 && e.size > 0, "{mode}: export properties fd {} size {}", e.fd, e.size);
    let dup = dup(e.fd);
    let p = raw.import(c, d, dup, e.size).expect("import a dup of the exported fd");
    let first = read_mapped_u64(dup, e.size, ze_sim::export::OFFSET_COUNTERS);
    std::thread::sleep(std::time::Duration::from_millis(50));
    let later = read_mapped_u64(dup, e.size, ze_sim::export::OFFSET_COUNTERS);
    assert!(later > first, "{mode}: the GpuTime counter advances ({first} -> {later})");
    assert_eq!(
        raw.activate(c, d, &[]),
        Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
        "{mode}: deactivation refused while imported"
    );
    assert_eq!(
        raw.device_exp(drv, zetDeviceDisableMetricsExp_NAME, d),
        Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
        "{mode}: runtime disable refused while imported"
    );
    raw.free(c, p).unwrap();
    close(dup);
    raw.activate(c, d, &[]).unwrap();
    // Runtime enable/disable through the extension functions, on the driver's device handle.
    raw.device_exp(drv, zetDeviceEnableMetricsExp_NAME, d).unwrap();
    raw.device_exp(drv, zetDeviceDisableMetricsExp_NAME, d).unwrap();
    let translated = raw.translate(ZEL_HANDLE_DEVICE, d.cast()).unwrap();
    if mode == "intercept" {
        assert_ne!(translated, d.cast(), "intercept mode wraps handles");
        // Without translation the driver rejects the loader's handle instead of misusing it.
        let f = raw.extension(drv, zetDeviceDisableMetricsExp_NAME).unwrap();
        // SAFETY: the driver's implementation of zetDeviceDisableMetricsExp.
        let f: pfn::zetDeviceDisableMetricsExp = unsafe { std::mem::transmute(f) };
        // SAFETY: any handle value is accepted and validated by the driver.
        assert_eq!(unsafe { f(d) }, ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    }
    raw.destroy_context(c).unwrap();
}
