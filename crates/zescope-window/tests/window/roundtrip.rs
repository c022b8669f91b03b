//! Sessions round-trip through the window: a session opened in the app and captured back is the
//! same session; files written before markers had ranges still load. (A recording written by
//! `zescope record`'s code, saved, loaded and restored: the root package's `tests/window/roundtrip.rs`.)

use zescope_model::session;
use zescope_store::Store;

#[test]
fn a_session_opens_in_the_app_and_saves_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = crate::support::example_session();
    let s = session::load(&path).unwrap();
    let mut app =
        zescope_window::ZescopeApp::new(Box::new(crate::support::NoSampler), Default::default(), Store::new(1 << 30));
    let markers = zescope_window::session::open_in_app(&mut app, &s).expect("open");
    assert_eq!(app.panes.arrangement.panes.len(), s.view.panes.len());
    assert_eq!(app.state.ingest.series.len(), s.streams[0].meta.series.len());
    assert!(app.state.ingest.samples_total > 0);
    let back = zescope_window::session::capture_app(&app, &markers);
    assert_eq!(back, s, "what is shown is what was opened");
    let spec = zescope_window::session::write_spec(&app, Some(0), false);
    assert_eq!(spec.panes.len(), 1);
    let png = dir.path().join("pane.png");
    zescope_model::write::png(&app.store, &spec, &png, (640, 400)).unwrap();
}

/// Files written before markers had ranges (`(t_ns, label)` only) still load, as instants; a
/// range that ends before it starts is refused, naming the marker.
#[test]
fn old_markers_load_as_instants_and_backwards_ranges_are_refused() {
    let example = std::fs::read_to_string(crate::support::example_session()).unwrap();
    assert!(example.contains("markers: [],"), "the example session has no markers");
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.ron");
    std::fs::write(&old, example.replace("markers: [],", "markers: [(t_ns: 5, label: \"start\")],")).unwrap();
    let s = session::load(&old).unwrap();
    assert_eq!(s.markers[0].span, session::SpanRecord::Instant);
    assert_eq!(session::markers_from_file(&s.markers).marks()[0].label, "start");
    let bad = dir.path().join("bad.ron");
    let text = "markers: [(t_ns: 50, label: \"p\", span: Range(end_ns: 40))],";
    std::fs::write(&bad, example.replace("markers: [],", text)).unwrap();
    let e = session::load(&bad).unwrap_err().to_string();
    assert!(e.contains("markers[0].span") && e.contains("before it starts"), "{e}");
}
