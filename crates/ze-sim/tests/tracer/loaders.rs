//! The tracer through the real loaders, each run in a child process (loader state is per
//! process): the test re-runs itself (`--exact`) with `ZE_SIM_TRACER_CHILD` set, the child does
//! the calls and its checks, the parent checks the child's exit, its summary line and the
//! driver's report.
//!
//! - the upstream loader v1.32 (built by `ze_sim::testing::upstream_loader`) in direct mode, and
//!   in intercept mode with the validation layer and parameter validation: the whole order, every
//!   entry equal to the event the workload wrote into the exported memory (read from a mapping of
//!   it) and to the seed's event, a clean report;
//! - Debian's loader 1.8.12: it has none of the tracer's entry points, so a client sees them as
//!   absent (`None`, and not offered by name either) and still reads the group's exported memory.

use std::path::{Path, PathBuf};
use std::process::Command;

use level_zero_sys::*;
use ze_sim::{Report, testing};

use super::common::tracer::{check_entries, events_in_mapping};
use super::common::{Raw, close, dup, ok};

/// Set in a child: the loader library to load, or "system" for the default one.
const CHILD: &str = "ZE_SIM_TRACER_CHILD";

const INTERCEPT_WITH_VALIDATION: [(&str, &str); 3] =
    [("ZE_ENABLE_LOADER_INTERCEPT", "1"), ("ZE_ENABLE_VALIDATION_LAYER", "1"), ("ZE_ENABLE_PARAMETER_VALIDATION", "1")];

/// Runs test `name` of this binary again as a child with `env`, `libze_sim.so` as the driver and
/// its own report; returns (stdout, report), or None after a loud skip.
fn in_child(name: &str, loader: &str, layer_dir: Option<&Path>, env: &[(&str, &str)]) -> Option<(String, Report)> {
    let so = match testing::cdylib() {
        Ok(so) => so,
        Err(why) => {
            testing::skip("the tracer through the loader", &why);
            return None;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.ron");
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, loader)
        .env("ZE_ENABLE_ALT_DRIVERS", &so)
        .env("ZET_ENABLE_METRICS", "1")
        .env("ZE_SIM_REPORT", &report)
        .env_remove("ZE_SIM_CONFIG")
        .env_remove("ZE_SIM_CONFIG_ZE_SIM")
        .env_remove("ZE_SIM_REPORT_ZE_SIM");
    match layer_dir {
        Some(d) => cmd.env("LD_LIBRARY_PATH", d),
        None => cmd.env_remove("LD_LIBRARY_PATH"),
    };
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("spawn the child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name} child failed ({}):\n{stdout}\n{stderr}", out.status);
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("no report ({e}):\n{stderr}"));
    Some((stdout, ron::from_str(&text).unwrap_or_else(|e| panic!("unreadable report {e}:\n{text}"))))
}

/// The parent side of an upstream-loader test: the child must have checked entries and left a
/// clean report.
fn through_upstream(name: &str, mode: &str, env: &[(&str, &str)]) {
    let (lib, _) = match testing::upstream_loader() {
        Ok(dirs) => dirs,
        Err(why) => return testing::skip("the tracer through the upstream loader", &why),
    };
    let loader = lib.join("libze_loader.so.1");
    let Some((out, report)) = in_child(name, loader.to_str().unwrap(), Some(&lib), env) else { return };
    let line = out.lines().find(|l| l.contains("tracer tour through")).unwrap_or_else(|| panic!("no summary:\n{out}"));
    assert!(line.contains(mode), "{line}");
    assert!(report.is_clean(), "{report:?}");
}

#[test]
fn through_the_upstream_loader_in_direct_mode() {
    match std::env::var(CHILD) {
        Ok(loader) => tour(&loader, "direct"),
        Err(_) => through_upstream("loaders::through_the_upstream_loader_in_direct_mode", "direct", &[]),
    }
}

#[test]
fn through_the_upstream_loader_in_intercept_mode_with_validation() {
    match std::env::var(CHILD) {
        Ok(loader) => tour(&loader, "intercept+validation"),
        Err(_) => through_upstream(
            "loaders::through_the_upstream_loader_in_intercept_mode_with_validation",
            "intercept+validation",
            &INTERCEPT_WITH_VALIDATION,
        ),
    }
}

fn load(loader: &str) -> Raw {
    // SAFETY: a Level Zero loader (the upstream build or the system's), kept loaded by the table
    // for the whole child.
    let api = unsafe { if loader == "system" { Api::load() } else { Api::load_from(loader) } };
    let raw = Raw { api: api.expect("load the loader") };
    // SAFETY: plain call.
    ok(unsafe { (raw.api.zeInit)(0) }).expect("zeInit through the loader");
    raw
}

/// The child: the whole order through the loader at `loader`, with every entry checked.
fn tour(loader: &str, mode: &str) {
    let raw = load(loader);
    let drv = raw.drivers().unwrap()[0];
    let d = raw.devices(drv).unwrap()[0];
    if mode.starts_with("intercept") {
        let translated = raw.translate(ZEL_HANDLE_DEVICE, d.cast()).unwrap();
        assert_ne!(translated, d.cast(), "the loader wraps handles in intercept mode");
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(maps.contains("libze_validation_layer.so"), "the validation layer is loaded");
    }
    let g = raw.tracer_group(d).expect("a tracer-based group exporting DMA-BUF");
    let e = raw.group(g).unwrap().export;
    assert!(e.fd >= 0 && e.size > 0, "{mode}: export before activation");
    let c = raw.context(drv).unwrap();
    let fd = dup(e.fd);
    let p = raw.import(c, d, fd, e.size).unwrap();
    raw.activate(c, d, &[g]).unwrap();
    let pool = raw.event_pool(c, ZE_EVENT_POOL_FLAG_HOST_VISIBLE).unwrap();
    let ev = raw.event(pool).unwrap();
    let (t, notify) = raw.tracer_create(c, d, &[g], 2048, ev).unwrap();
    raw.tracer_enable(t, true).unwrap();
    assert_eq!(raw.wait(ev, 5_000_000_000), ZE_RESULT_SUCCESS, "{mode}: notified");
    let (r, first) = raw.tracer_read(t).unwrap();
    assert!(r == ZE_RESULT_SUCCESS && first.len() >= notify as usize, "{mode}: {r:#x}, {} bytes", first.len());
    let dec = raw.decoder_create(t).unwrap();
    let decodable = raw.decodable(dec).unwrap();
    assert_eq!(decodable.len(), 4, "{mode}");
    let signals = super::kernel_trace_signals();
    let mut checked = 0;
    let mut check = |bytes: &[u8]| {
        let got = raw.decode(dec, bytes, &decodable).unwrap();
        checked += check_entries(bytes, &got.entries, &events_in_mapping(fd, e.size), 1, &signals);
    };
    check(&first);
    raw.tracer_disable(t, true).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (r, bytes) = raw.tracer_read_into(t, 1 << 20);
        if r == ZE_RESULT_NOT_READY {
            break;
        }
        assert_eq!(r, ZE_RESULT_SUCCESS, "{mode}");
        check(&bytes);
        assert!(std::time::Instant::now() < deadline, "{mode}: a disabled tracer still reads data after 20 s");
    }
    raw.decoder_destroy(dec).unwrap();
    raw.tracer_destroy(t).unwrap();
    raw.destroy_event(ev).unwrap();
    raw.destroy_pool(pool).unwrap();
    raw.free(c, p).unwrap();
    close(fd);
    raw.activate(c, d, &[]).unwrap();
    raw.device_exp(drv, zetDeviceDisableMetricsExp_NAME, d).unwrap();
    raw.destroy_context(c).unwrap();
    assert!(checked >= notify as usize / 32, "{mode}: {checked} entries");
    println!("tracer tour through {mode}: {checked} entries match the workload");
}

#[test]
fn debians_loader_lacks_the_tracer_and_a_client_sees_it_absent() {
    if let Ok(loader) = std::env::var(CHILD) {
        return absent(&loader);
    }
    if let Err(why) = testing::loader_available() {
        return testing::skip("the tracer through Debian's loader", &why);
    }
    let name = "loaders::debians_loader_lacks_the_tracer_and_a_client_sees_it_absent";
    let Some((out, report)) = in_child(name, "system", None, &[]) else { return };
    assert!(out.contains("tracer entry points absent: 9"), "{out}");
    assert!(report.is_clean(), "{report:?}");
}

/// The child: no tracer entry point through the system loader; the exported memory still works.
fn absent(loader: &str) {
    let raw = load(loader);
    let a = &raw.api;
    let absent = [
        a.zetMetricTracerCreateExp.is_none(),
        a.zetMetricTracerDestroyExp.is_none(),
        a.zetMetricTracerEnableExp.is_none(),
        a.zetMetricTracerDisableExp.is_none(),
        a.zetMetricTracerReadDataExp.is_none(),
        a.zetMetricDecoderCreateExp.is_none(),
        a.zetMetricDecoderDestroyExp.is_none(),
        a.zetMetricDecoderGetDecodableMetricsExp.is_none(),
        a.zetMetricTracerDecodeExp.is_none(),
    ];
    assert!(absent.iter().all(|&x| x), "the loader exports a tracer entry point: {absent:?}");
    let drv = raw.drivers().unwrap()[0];
    assert!(raw.extension(drv, c"zetMetricTracerCreateExp").is_err(), "not offered by name either");
    let d = raw.devices(drv).unwrap()[0];
    let g = raw.tracer_group(d).expect("the group is listed, tracer-based");
    let e = raw.group(g).unwrap().export;
    let c = raw.context(drv).unwrap();
    let fd = dup(e.fd);
    let p = raw.import(c, d, fd, e.size).unwrap();
    raw.activate(c, d, &[g]).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while events_in_mapping(fd, e.size).is_empty() {
        assert!(std::time::Instant::now() < deadline, "the workload writes its ring all the same (20 s)");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    raw.free(c, p).unwrap();
    close(fd);
    raw.activate(c, d, &[]).unwrap();
    raw.destroy_context(c).unwrap();
    println!("tracer entry points absent: {}", absent.len());
}

/// Where the tests find the upstream build (for the C client).
pub fn upstream_dirs() -> Option<(PathBuf, PathBuf)> {
    match testing::upstream_loader() {
        Ok(dirs) => Some(dirs),
        Err(why) => {
            testing::skip("the tracer C client", &why);
            None
        }
    }
}
