//! `zescope list` as a user runs it: on the built-in simulated device, through the real Level
//! Zero loader with `libze_sim.so`, and the clear one-line errors when something is missing.

use std::process::Output;

use ze_sim::testing;

fn zescope(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = crate::support::zescope();
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run zescope")
}

/// The first line of `out` that holds `needle`.
fn line_with<'a>(out: &'a str, needle: &str) -> &'a str {
    out.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no line with {needle:?} in:\n{out}"))
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn lists_the_simulated_device_marked_as_simulated() {
    let o = zescope(&["list", "--source", "sim", "--metrics"], &[]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("built-in simulated driver"), "{out}");
    assert!(out.contains("ze-sim GPU") && out.contains("[SIMULATED]"), "{out}");
    // Exported and time-based (the streamer's timestamp last, exporting nothing): auto reads the memory.
    assert!(
        out.contains(
            "group ComputeBasic: domain 0, time+event, 6 metrics, exports: DMA-BUF (whole group), read by: exported memory"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "group MemoryTraffic: domain 1, time+event, 4 metrics, exports: DMA-BUF per metric (3 of 4 metrics)"
        ),
        "{out}"
    );
    // The IP-sampling group, as compute-runtime publishes it: time-based only, read by the streamer.
    assert!(
        out.contains("group EuStallSampling: domain 100, time-based, 10 metrics, exports: none, read by: streamer"),
        "{out}"
    );
    assert!(line_with(&out, " IP ").split_whitespace().take(4).eq(["IP", "Address", "ip", "u64"]), "{out}");
    assert!(
        out.contains("group RenderBasic: domain 3, time-based, 6 metrics, exports: none, read by: streamer"),
        "{out}"
    );
    // The tracer-based group exports the memory its events go into: read with the metric tracer.
    assert!(
        out.contains(
            "group KernelTrace: domain 100, tracer-based, 4 metrics, exports: DMA-BUF (whole group), read by: tracer \
             (the metric tracer and its decoder: each event a sample at its own time)"
        ),
        "{out}"
    );
    assert!(!out.contains("read by: neither"), "every built-in group can be read: {out}");
    // The telemetry each device offers, and how Sysman was reached.
    assert!(
        out.contains("telemetry: frequency ×1, power ×1, temperature ×2, engines ×2, memory ×1 (through zesInit)"),
        "{out}"
    );
    assert!(
        line_with(&out, "QueryBeginTime").split_whitespace().eq([
            "QueryBeginTime",
            "ns",
            "timestamp",
            "u64",
            "Device",
            "time",
            "at",
            "the",
            "end",
            "of",
            "the",
            "report's",
            "period"
        ]),
        "{out}"
    );
    assert!(out.contains("Sub-device 0: ze-sim GPU tile 0"), "{out}");
    // Each device's PCI address, as lspci prints it; a tile has its root's.
    assert!(out.contains("MHz, uuid ") && out.contains(", PCI 0000:03:00.0]  [SIMULATED]"), "{out}");
    assert_eq!(out.matches("PCI 0000:03:00.0").count(), 2, "the GPU and its tile: {out}");
    assert!(out.contains(", PCI 0000:00:0b.0]"), "{out}");
    assert!(
        line_with(&out, "BytesRead ").split_whitespace().take(4).eq(["BytesRead", "bytes", "export-dma-buf", "u64"]),
        "{out}"
    );
}

/// A group no way reads (the simulated driver's test-only group) is listed, saying why.
#[test]
fn a_group_no_way_reads_is_listed_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("unreadable.ron");
    std::fs::write(&cfg, "(unreadable_group: true)").unwrap();
    let o = zescope(&["list", "--source", "sim"], &[("ZE_SIM_CONFIG", cfg.to_str().unwrap())]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        line_with(&out, " Unreadable ").split_whitespace().eq([
            "Unreadable",
            "5",
            "event-based",
            "1",
            "none",
            "neither"
        ]),
        "{out}"
    );
    let o = zescope(&["list", "--source", "sim", "--metrics"], &[("ZE_SIM_CONFIG", cfg.to_str().unwrap())]);
    let (out, _) = text(&o);
    assert!(
        line_with(&out, "group Unreadable").contains(
            "domain 5, event-based, 1 metrics, exports: none, read by: neither (no exported memory, no time-based \
             sampling)"
        ),
        "{out}"
    );
}

#[test]
fn lists_the_simulated_driver_through_the_real_loader() {
    if let Err(why) = testing::loader_available() {
        return testing::skip("zescope list through the real loader", &why);
    }
    let so = match testing::cdylib() {
        Ok(so) => so,
        Err(why) => return testing::skip("zescope list through the real loader", &why),
    };
    let o = zescope(&["list", "--source", "level-zero"], &[("ZE_ENABLE_ALT_DRIVERS", so.to_str().unwrap())]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.starts_with("Source: Level Zero loader"), "{out}");
    assert!(out.contains("Device 0: ze-sim GPU") && out.contains("[SIMULATED]"), "{out}");
    assert!(line_with(&out, "MemoryTraffic").trim().starts_with("MemoryTraffic "), "one table row per group: {out}");
    assert!(out.contains("telemetry: frequency ×1, power ×1"), "Sysman through the loader: {out}");
    assert!(out.contains(", PCI 0000:03:00.0]"), "the PCI address through the loader: {out}");
}

#[test]
fn a_missing_driver_is_a_clear_error_not_a_result_code() {
    if let Err(why) = testing::loader_available() {
        return testing::skip("the no-driver message", &why);
    }
    let o = zescope(&["list", "--source", "level-zero"], &[("ZE_ENABLE_ALT_DRIVERS", "/nonexistent/libze_sim.so")]);
    let (out, err) = text(&o);
    assert!(!o.status.success());
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    for needle in ["no Level Zero driver was found", "ZE_ENABLE_ALT_DRIVERS", "libze1", "/dev/dri/renderD*"] {
        assert!(err.contains(needle), "missing {needle:?} in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_missing_loader_library_names_it_and_how_to_install_it() {
    let o = zescope(
        &["list", "--source", "level-zero"],
        &[("ZESCOPE_LEVEL_ZERO_LOADER", "/nonexistent/libze_loader.so.1")],
    );
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("/nonexistent/libze_loader.so.1") && err.contains("apt install libze1"), "{err}");
    // auto falls back to the simulated device and says why
    let o = zescope(&["list"], &[("ZESCOPE_LEVEL_ZERO_LOADER", "/nonexistent/libze_loader.so.1")]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("built-in simulated driver") && out.contains("could not be opened"), "{out}");
}

#[test]
fn a_malformed_sim_config_is_one_line_naming_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.ron");
    std::fs::write(&path, "(\n  seed: 1,\n  faults: (import_fails: maybe),\n)\n").unwrap();
    let o = zescope(&["list", "--source", "sim"], &[("ZE_SIM_CONFIG", path.to_str().unwrap())]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("bad.ron") && err.contains("3:"), "names the file and line: {err}");
    assert!(!err.contains("panicked"), "{err}");
}
