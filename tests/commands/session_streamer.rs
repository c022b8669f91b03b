//! A session recorded with the time-based metric streamer (`record --via streamer`) saves,
//! reopens and exports like one read from exported memory: the run says how its group was read
//! ("streamer (period, N reports per notification)"), the samples come back bit for bit, saving
//! again gives the same bytes, and `zescope export` writes images and a CSV of it.

use zescope_model::session::{self, Capture};
use zescope_store::Store;

use crate::support::run as zescope;

#[test]
fn a_streamed_session_saves_reopens_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let args = ["--source", "sim", "record", "--via", "streamer", "--group", "RenderBasic"];
    let out = zescope(&[&args[..], &["--duration", "1s", "--interval", "10ms", "--out", &p("s.ron")]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = session::load(&dir.path().join("s.ron")).expect("record wrote a session");
    assert_eq!(s.runs[0].groups, ["RenderBasic"]);
    // The streamed group, then the device's telemetry (recorded by default); a notification per
    // 80 ms of 1 ms reports asked (`record`'s 100 ms batch interval).
    assert_eq!(s.runs[0].layouts, ["streamer (1.28 ms, 80 reports per notification)", "sysman"]);
    assert!(s.runs[0].telemetry);
    let n = s.streams[0].data.raw.timestamps.len();
    assert!(n > 500, "about 780 reports in 1 s, got {n}");

    let mut store = Store::new(usize::MAX);
    let r = s.restore_into(&mut store).expect("restore");
    assert!(r.series.keys().any(|k| k.metric == "RenderUtilization"));
    let again = session::Session::capture(
        &store,
        Capture { history: &r.history, arrangement: &r.arrangement, view: &r.view, markers: &r.markers },
    );
    session::save(&dir.path().join("again.ron"), &again).unwrap();
    session::save(&dir.path().join("same.ron"), &s).unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("again.ron")).unwrap(),
        std::fs::read(dir.path().join("same.ron")).unwrap(),
        "restored and captured again, same bytes"
    );

    let out = zescope(&[
        "export",
        &p("s.ron"),
        "--pane",
        "1",
        "--png",
        &p("p.png"),
        "--csv",
        &p("d.csv"),
        "--csv-shown",
        &p("shown.csv"),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(dir.path().join("d.csv")).unwrap();
    // Busy time (a DURATION) is kept as exported memory keeps it: stored, its running total in
    // ns; shown, its busy share in % beside the utilisation.
    let header = csv.lines().next().unwrap();
    assert!(header.contains("RenderBasic/RenderBusyTime [ns]"), "{header}");
    let shown = std::fs::read_to_string(dir.path().join("shown.csv")).unwrap();
    let head: Vec<&str> = shown.lines().next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| h.starts_with(name)).unwrap_or_else(|| panic!("{name}: {head:?}"));
    let (busy, util) = (col("RenderBasic/RenderBusyTime [%]"), col("RenderBasic/RenderUtilization [%]"));
    let mut compared = 0;
    for line in shown.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let (Ok(b), Ok(u)) = (cells[busy].parse::<f64>(), cells[util].parse::<f64>()) else { continue };
        // The same workload, each with its own noise: the share is the utilisation's.
        assert!((0.0..=100.0).contains(&b) && (b - u).abs() <= 10.5, "busy {b} % against utilisation {u} %");
        compared += 1;
    }
    assert!(compared > 500, "{compared} reports' busy shares");
    assert!(csv.lines().count() > 500);
    assert!(std::fs::metadata(dir.path().join("p.png")).unwrap().len() > 1000);
}

/// The cells of column `name` (a header starting so) of a CSV, keyed by the row's time (the
/// text of its first cell), where the cell holds a number.
fn by_time(csv: &str, name: &str) -> std::collections::BTreeMap<String, f64> {
    let head: Vec<&str> = csv.lines().next().unwrap_or_default().split(',').collect();
    let c = head.iter().position(|h| h.starts_with(name)).unwrap_or_else(|| panic!("{name}: {head:?}"));
    let cell = |line: &str| {
        let cells: Vec<&str> = line.split(',').collect();
        Some((cells[0].to_owned(), cells.get(c)?.parse::<f64>().ok().filter(|v| v.is_finite())?))
    };
    csv.lines().skip(1).filter_map(cell).collect()
}

#[test]
fn a_streamers_counts_are_running_totals_as_exported_memorys_in_files_phases_and_derived_series() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let out = zescope(&[
        "--source",
        "sim",
        "record",
        "--via",
        "streamer",
        "--group",
        "RenderBasic",
        "--no-telemetry",
        "--interval",
        "10ms",
        "--duration",
        "1s",
        "--derive",
        "bw=rate(RenderBasic/L3BytesRead)",
        "--out",
        &p("s.ron"),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = zescope(&[
        "export",
        &p("s.ron"),
        "--csv",
        &p("d.csv"),
        "--csv-shown",
        &p("shown.csv"),
        "--phases",
        &p("phases.csv"),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stored = std::fs::read_to_string(dir.path().join("d.csv")).unwrap();
    let shown = std::fs::read_to_string(dir.path().join("shown.csv")).unwrap();
    // Stored: the running totals in the count's unit, never going down, as exported memory's.
    for name in ["RenderBasic/L3BytesRead [bytes]", "RenderBasic/RenderBusyCycles [cycles]"] {
        let totals: Vec<f64> = by_time(&stored, name).into_values().collect();
        assert!(totals.len() > 500, "{name}: {} values", totals.len());
        assert!(totals.windows(2).all(|w| w[1] > w[0]), "{name}: a running total");
    }
    // Shown: the rate per second, within what the simulated device reads (0.1 to 40 GB/s, ±5 %).
    let rates = by_time(&shown, "RenderBasic/L3BytesRead [bytes/s]");
    assert!(rates.len() > 500 && rates.values().all(|r| (0.9e8..=4.3e10).contains(r)), "{rates:?}");
    // A derived rate() of a count is the count's rate, as for exported memory's counters (it
    // was the rate of a rate, "bytes/s/s", when the streamer gave rates).
    let derived = by_time(&shown, "Derived/bw [bytes/s]");
    let mut compared = 0;
    for (t, d) in &derived {
        if let Some(r) = rates.get(t) {
            assert!((d - r).abs() <= 1e-9 * r, "at {t} s: rate() {d} against the shown rate {r}");
            compared += 1;
        }
    }
    assert!(compared > 500, "{compared} derived values compared");
    // The phase table has the count's total, as it has exported memory's: the last total less
    // the first, in bytes.
    let phases = std::fs::read_to_string(dir.path().join("phases.csv")).unwrap();
    let head: Vec<&str> = phases.lines().next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}: {head:?}"));
    let row = phases.lines().find(|l| l.contains(",RenderBasic/L3BytesRead,")).expect("a row of L3BytesRead");
    let cells: Vec<&str> = row.split(',').collect();
    let totals: Vec<f64> = by_time(&stored, "RenderBasic/L3BytesRead [bytes]").into_values().collect();
    let want = totals[totals.len() - 1] - totals[0];
    assert_eq!(cells[col("total_unit")], "bytes", "{row}");
    let total: f64 = cells[col("total")].parse().unwrap_or_else(|_| panic!("a total: {row}"));
    assert!((total - want).abs() <= 1e-9 * want, "{total} bytes against {want}: {row}");
}
