//! `zescope list` on a realistic catalogue (ze-sim's `catalog: Realistic`: dozens of groups,
//! over a thousand metrics per GPU): the compact default is one table row per group and says a
//! sub-device repeats its root; `--metrics` is a table per group; `--group GLOB` narrows both,
//! and a pattern that matches nothing is an error naming it.

use ze_sim::catalog::realistic_groups;

fn list(args: &[&str]) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::support::realistic_catalog(dir.path());
    let o = crate::support::zescope()
        .arg("list")
        .args(["--source", "sim"])
        .args(args)
        .env("ZE_SIM_CONFIG", &config)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The lines from the one holding `start` up to (not including) the next holding `end`.
fn section<'a>(out: &'a str, start: &str, end: &str) -> Vec<&'a str> {
    out.lines().skip_while(|l| !l.contains(start)).skip(1).take_while(|l| !l.contains(end)).collect()
}

#[test]
fn the_default_listing_is_one_row_per_group() {
    let (ok, out, err) = list(&[]);
    assert!(ok, "{err}");
    let groups = realistic_groups();
    let metrics: usize = groups.iter().map(|g| g.metrics.len() + usize::from(g.has_stream_timestamp())).sum();
    assert!(out.contains(&format!("{} metric groups, {metrics} metrics:", groups.len())), "{out}");
    let rows = section(&out, "Device 0: ze-sim GPU", "Sub-device 0");
    let header = rows.iter().position(|l| l.split_whitespace().next() == Some("GROUP")).expect("a table header");
    let table = &rows[header + 1..];
    assert_eq!(table.len(), groups.len(), "one row per group:\n{out}");
    for (row, g) in table.iter().zip(&groups) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        let n = g.metrics.len() + usize::from(g.has_stream_timestamp());
        assert_eq!(
            (cells[0], cells[1], cells[3]),
            (g.name.as_str(), g.domain.to_string().as_str(), n.to_string().as_str()),
            "{row}"
        );
        assert!(row.len() < 120, "a row fits a terminal: {row}");
    }
    let compute = table.iter().find(|r| r.trim_start().starts_with("ComputeBasic ")).unwrap();
    assert!(compute.ends_with("streamer") && compute.contains("time-based"), "{compute}");
    let engine = table.iter().find(|r| r.trim_start().starts_with("EngineActivity ")).unwrap();
    assert!(engine.contains("DMA-BUF (whole group)") && engine.ends_with("exported memory"), "{engine}");
    // The tile's groups are the root's: said in one line.
    assert!(out.contains("the same metric groups as Device 0"), "{out}");
    assert!(out.lines().count() < 2 * groups.len() + 20, "compact: {} lines", out.lines().count());
}

#[test]
fn the_full_listing_is_a_table_of_metrics_per_group() {
    let (ok, out, err) = list(&["--metrics", "--group", "ComputeBasic"]);
    assert!(ok, "{err}");
    assert!(out.contains(&format!("1 of {} metric groups, 45 metrics:", realistic_groups().len())), "{out}");
    let rows = section(&out, "group ComputeBasic: domain 0, time-based, 45 metrics", "Sub-device 0");
    assert_eq!(rows[0].trim(), "Compute Metrics Basic set");
    assert_eq!(rows[1].split_whitespace().collect::<Vec<_>>(), ["METRIC", "UNIT", "TYPE", "RESULT", "DESCRIPTION"]);
    let table = &rows[2..];
    assert_eq!(table.len(), 45, "{out}");
    // Columns line up: every row's type starts where the header's TYPE does.
    let at = rows[1].find("TYPE").unwrap();
    let types = ["timestamp", "duration", "event", "throughput", "ratio", "raw"];
    for row in table {
        assert!(types.iter().any(|t| row[at..].starts_with(t)), "misaligned or unknown type: {row}");
    }
    let cells = |name: &str| -> Vec<String> {
        let row = table.iter().find(|r| r.split_whitespace().next() == Some(name)).unwrap();
        row.split_whitespace().take(4).map(str::to_owned).collect()
    };
    assert_eq!(cells("GpuTime"), ["GpuTime", "ns", "duration", "u64"]);
    assert_eq!(cells("GpuBusy"), ["GpuBusy", "%", "ratio", "f32"]);
    assert_eq!(cells("GtiReadThroughput"), ["GtiReadThroughput", "bytes", "throughput", "u64"]);
    assert_eq!(cells("ReportReason"), ["ReportReason", "-", "raw", "u32"], "no unit shows as -");
    assert!(out.contains("the same metric groups and metrics as Device 0"), "{out}");
    assert!(out.contains("none of its 2 metric groups matches --group"), "the NPU: {out}");
}

#[test]
fn group_globs_narrow_the_listing_and_one_matching_nothing_is_named() {
    let (ok, out, err) = list(&["--group", "L3_?", "--group", "Engine*"]);
    assert!(ok, "{err}");
    let rows: Vec<&str> = section(&out, "Device 0: ze-sim GPU", "Sub-device 0").into_iter().skip(3).collect();
    let names: Vec<&str> = rows.iter().filter_map(|r| r.split_whitespace().next()).collect();
    assert_eq!(names, ["L3_1", "L3_2", "L3_3", "L3_4", "EngineActivity"], "{out}");
    let (ok, out, err) = list(&["--group", "ComputeBasic", "--group", "Nope*"]);
    assert!(!ok && out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("zescope: --group \"Nope*\" matches no metric group; groups: "), "{err}");
    assert!(err.contains("more; `zescope list` shows them all"), "a long list is cut: {err}");
}
