//! Several devices in recordings written by the `zescope` binary (`zescope record --device 0,1`,
//! a child process: the window crate's tests cannot run the binary): a session from before runs
//! had several devices and a two-device session both open, each legend heading its device's rows;
//! the phase table and the A/B window name each row's device.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use zescope_window::ZescopeApp;
use zescope_window::settings::Settings;

/// Opens `path` in a window with no sampler; the harness once the recording is shown.
fn open(path: &std::path::Path) -> Harness<'static, ZescopeApp> {
    let mut h = crate::support::showing(path, Settings::default(), [1280.0, 900.0], None);
    h.get_by_label("Info").click();
    h.step();
    h.step();
    h
}

#[test]
fn a_one_device_session_from_before_and_a_two_device_session_both_open() {
    // Written before runs had several devices: one run record, legends without the device.
    let example = crate::support::example_session();
    let h = open(&example);
    assert_eq!(h.state().state.history.runs.len(), 1);
    h.get_by_label_contains("ComputeBasic/GpuTime");
    assert!(h.query_by_label("ze-sim GPU").is_none(), "no device heading");
    h.get_by_label_contains("ze-sim GPU · ComputeBasic: exported memory, layout ");

    // Recorded from both devices: one run, a record per device, legends with the device.
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.ron");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zescope"))
        .args(["--source", "sim", "record", "--device", "0,1", "--duration", "300ms", "--out"])
        .arg(&two)
        .env_remove("ZE_SIM_CONFIG")
        .env_remove("ZESCOPE_MARKERS")
        // Its markers socket and the layouts it reads are this test's, not the developer's.
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let h = open(&two);
    let runs: Vec<u64> = h.state().state.history.runs.iter().map(|r| r.run).collect();
    assert_eq!(runs, [1, 1]);
    crate::support::legend_has(&h, "ze-sim NPU", "NpuActivity/NpuPower");
    crate::support::legend_has(&h, "ze-sim GPU", "ComputeBasic/GpuTime");
    h.get_by_label_contains("ze-sim NPU · NpuActivity: exported memory, layout ");
    assert_eq!(h.query_all_by_label("Run 1").count(), 2, "both devices' rows under the one run");
    assert!(h.query_by_label("Run 2").is_none());
}

/// With two devices' series shown, the phase table and the A/B window name each row's device:
/// no two rows of a phase read the same.
#[test]
fn tables_of_two_devices_name_each_rows_device() {
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.ron");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zescope"))
        .args(["--source", "sim", "record", "--device", "0,1", "--interval", "5ms", "--duration", "600ms", "--out"])
        .arg(&two)
        .env_remove("ZE_SIM_CONFIG")
        .env_remove("ZESCOPE_MARKERS")
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut h = open(&two);
    h.state_mut().windows.phases.open = true;
    h.run();
    let rows = h.state().windows.phases.table.rows.clone();
    let mut seen = std::collections::BTreeSet::new();
    for r in &rows {
        assert!(seen.insert((r.phase.clone(), r.series.clone())), "{} appears twice in {}", r.series, r.phase);
        assert!(r.series.starts_with(&format!("{} · ", r.key.device)), "{}", r.series);
    }
    assert!(rows.iter().any(|r| r.series.starts_with("ze-sim NPU · ")), "the NPU's rows");
    assert!(rows.iter().any(|r| r.series.starts_with("ze-sim GPU · ")), "the GPU's rows");
    // The A/B window: the same.
    h.state_mut().cursors.a = h.state().store.total_time_range().map(|r| r.0 + (r.1 - r.0) / 3);
    h.state_mut().cursors.b = h.state().store.total_time_range().map(|r| r.1 - (r.1 - r.0) / 3);
    h.run();
    let readout = h.state().cursors.readout(&h.state().store, &h.state().state.ingest.series);
    let names: std::collections::BTreeSet<&str> = readout.iter().map(|r| r.series.as_str()).collect();
    assert_eq!(names.len(), readout.len(), "each row names one series");
    assert!(names.contains("ze-sim NPU · NpuActivity/NpuPower"), "{names:?}");
    assert!(h.query_all_by_label("ze-sim NPU · NpuActivity/NpuPower").count() >= 1, "in the tables");
}
