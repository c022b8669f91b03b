//! A session recorded with telemetry keeps it: `record --out run.ron` on the simulated device,
//! then the file loads with its Telemetry stream, `export --csv` writes its columns with units
//! and `export --png` draws every pane (telemetry panes included); `--no-telemetry` leaves it out.

use crate::support::{run as zescope, text};

#[test]
fn a_session_keeps_telemetry_and_export_writes_and_draws_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let out =
        zescope(&["--source", "sim", "record", "--duration", "1500ms", "--interval", "10ms", "--out", &p("run.ron")]);
    assert!(out.status.success(), "{}", text(&out));
    let s = zescope_model::session::load(&dir.path().join("run.ron")).expect("a loadable session");
    assert!(s.runs[0].telemetry, "the run record says telemetry was read");
    assert_eq!(s.runs[0].layouts.last().map(String::as_str), Some("sysman"));
    let t = s.streams.iter().find(|x| x.meta.group == "Telemetry").expect("a Telemetry stream");
    assert!(t.data.raw.timestamps.len() >= 5, "{} telemetry samples", t.data.raw.timestamps.len());
    let power = t.meta.series.iter().find(|x| x.metric == "Package power").expect("package power");
    assert_eq!(power.unit, "W");

    let out = zescope(&["export", &p("run.ron"), "--pane", "all", "--csv", &p("all.csv"), "--png", &p("all.png")]);
    assert!(out.status.success(), "{}", text(&out));
    let csv = std::fs::read_to_string(dir.path().join("all.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for col in ["Telemetry/Package power [W]", "Telemetry/GPU frequency actual [MHz]", "Telemetry/GPU temperature [°C]"]
    {
        assert!(header.contains(col), "{col} in {header}");
    }
    assert!(std::fs::metadata(dir.path().join("all.png")).unwrap().len() > 1000);

    let out = zescope(&["--source", "sim", "record", "--no-telemetry", "--duration", "300ms", "--out", &p("no.csv")]);
    assert!(out.status.success(), "{}", text(&out));
    let header = std::fs::read_to_string(dir.path().join("no.csv")).unwrap();
    assert!(!header.lines().next().unwrap().contains("Telemetry/"), "{header}");
}
