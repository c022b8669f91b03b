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
