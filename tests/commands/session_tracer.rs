//! A session recorded with the metric tracer (`record --group KernelTrace` on the simulated
//! device, a tracer-based group) saves and reopens with the way it was read ("tracer"), and its
//! exports name it: the CSV has the kernel events' columns, `export --openmetrics` labels them
//! `source="tracer"` as `serve` does (one planner for both).

use zescope_model::session;
use zescope_sampler::ReadPath;

use crate::support::run as zescope;

#[test]
fn a_traced_session_keeps_the_tracer_and_its_exports_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let args = ["--source", "sim", "record", "--group", "KernelTrace", "--no-telemetry", "--duration", "1s"];
    let out = zescope(&[&args[..], &["--interval", "10ms", "--out", &p("t.ron")]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = session::load(&dir.path().join("t.ron")).expect("record wrote a session");
    assert_eq!(s.runs[0].groups, ["KernelTrace"]);
    assert!(s.runs[0].layouts[0].starts_with("tracer ("), "{:?}", s.runs[0].layouts);
    assert_eq!(s.streams[0].meta.read_path(), ReadPath::Tracer, "the way is saved and read back");
    let n = s.streams[0].data.raw.timestamps.len();
    assert!(n > 1000, "kernel events, each a sample: {n}");

    let out = zescope(&["export", &p("t.ron"), "--csv", &p("d.csv"), "--openmetrics", &p("t.om")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(dir.path().join("d.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.contains("KernelTrace/KernelStart") && header.contains("KernelTrace/KernelEnd"), "{header}");
    let om = std::fs::read_to_string(dir.path().join("t.om")).unwrap();
    let start = om.lines().find(|l| l.starts_with("zescope_kernel_start")).unwrap_or_else(|| panic!("{om:.2000}"));
    assert!(start.contains("source=\"tracer\""), "{start}");
    assert!(start.contains("group=\"KernelTrace\""), "{start}");
}
