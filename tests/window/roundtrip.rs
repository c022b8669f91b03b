//! Sessions round-trip: a recording from the simulated device written by `zescope record`'s code
//! (the root package's `commands::record`), saved, loaded and restored, gives back the same
//! samples and the same view; saving the same session twice, or saving what was restored, gives
//! the same bytes; a background save of it reports progress and its outcome.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use zescope::commands::record::{RecordArgs, record};
use zescope::signals::Termination;
use zescope_model::session::{self, Capture, Restored, Session};
use zescope_model::view::timeview::{Mode, TimeView, ViewLength};
use zescope_store::Store;
use zescope_ze::Source;

/// Record `duration` of the simulated device into a session file through `zescope record`'s code.
/// One at a time: the built-in simulated driver is one per process.
fn record_session(path: &Path, duration: Duration) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let args = RecordArgs {
        source: Source::Sim,
        devices: Vec::new(),
        groups: vec![],
        metrics: vec![],
        custom_group: false,
        interval: Duration::from_millis(1),
        via: Default::default(),
        telemetry: false,
        duration,
        out: Some(path.to_owned()),
        perfetto: None,
        command: vec![],
        markers: Default::default(),
        triggers: vec![],
        derive: vec![],
        pre: Duration::ZERO,
        post: Duration::ZERO,
        view: None,
        connect: None,
        otlp: None,
        token_file: None,
        memory_cap: None,
    };
    let summary = record(&args, &Termination::install()).expect("record");
    assert!(summary.rows.samples > 100, "{summary}");
}

fn restore(s: &Session) -> (Store, Restored) {
    let mut store = Store::new(usize::MAX);
    let r = s.restore_into(&mut store).expect("restore");
    (store, r)
}

fn capture(store: &Store, r: &Restored) -> Session {
    let ui = Capture { history: &r.history, arrangement: &r.arrangement, view: &r.view, markers: &r.markers };
    Session::capture(store, ui)
}

#[test]
fn a_recording_round_trips_with_its_data_and_view() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = dir.path().join("run.ron");
    record_session(&recorded, Duration::from_millis(1500));
    let first = session::load(&recorded).expect("load the recording");
    assert_eq!(first.source.requested, "sim");
    assert!(first.devices[0].simulated && !first.devices[0].uuid.is_empty(), "{:?}", first.devices);
    assert_eq!(first.runs[0].interval_ns, 1_000_000);
    assert!(!first.runs[0].layouts[0].is_empty(), "the layout used is recorded");

    // Change the view as a user would: pause on a range, hide a series, recolour one.
    let (store, mut r) = restore(&first);
    let keys: Vec<_> = r.series.keys().cloned().collect();
    r.arrangement.hidden.insert(keys[0].clone());
    r.arrangement.colors.insert(keys[1].clone(), [1, 2, 3]);
    r.view = TimeView::restored(Mode::Zoomed, ViewLength::Sec10, (0.25, 0.75));
    r.markers.push(session::Marker {
        t_ns: store.total_time_range().unwrap().0 + 1000,
        label: "spike".into(),
        span: Default::default(),
    });
    // The workload's ranges: one closed, one still open when saved.
    let t0 = store.total_time_range().unwrap().0;
    r.markers.push(session::Marker {
        t_ns: t0 + 2000,
        label: "phase 1".into(),
        span: session::SpanRecord::Range { end_ns: t0 + 900_000 },
    });
    r.markers.push(session::Marker { t_ns: t0 + 950_000, label: "phase 2".into(), span: session::SpanRecord::Open });
    let edited = capture(&store, &r);
    let saved = dir.path().join("edited.ron");
    session::save(&saved, &edited).unwrap();

    let loaded = session::load(&saved).unwrap();
    assert_eq!(loaded, edited, "load gives back what was saved");
    let (store2, r2) = restore(&loaded);
    assert_eq!(r2.arrangement, r.arrangement, "panes, colours, visibility");
    assert_eq!((r2.view.mode, r2.view.window, r2.view.frozen_range()), (Mode::Zoomed, ViewLength::Sec10, (0.25, 0.75)));
    assert_eq!(r2.markers, r.markers);
    assert_eq!(r2.series.keys().collect::<BTreeSet<_>>(), r.series.keys().collect::<BTreeSet<_>>());
    for (key, entry) in &r.series {
        let (a, b) = (entry.ids[0], r2.series[key].ids[0]);
        assert_eq!(store.time_range(a.stream()), store2.time_range(b.stream()));
        assert_eq!(store.series_desc(a), store2.series_desc(b));
    }
    let rows = |s: &Store| {
        let mut v = Vec::new();
        for info in s.streams() {
            s.for_each_raw_row(info.id, |t, row| v.push((t, row.iter().map(|x| x.to_bits()).collect::<Vec<_>>())));
        }
        v
    };
    assert_eq!(rows(&store2), rows(&store), "every sample, bit for bit");
    assert_eq!(store2.origin_ns(), store.origin_ns());

    // Determinism: the same session twice, and the restored session again, give the same bytes.
    let again = dir.path().join("again.ron");
    session::save(&again, &loaded).unwrap();
    let bytes = std::fs::read(&saved).unwrap();
    assert_eq!(std::fs::read(&again).unwrap(), bytes, "same session, same bytes");
    session::save(&again, &capture(&store2, &r2)).unwrap();
    assert_eq!(std::fs::read(&again).unwrap(), bytes, "restored and captured again, same bytes");
}

#[test]
fn a_background_save_reports_progress_and_its_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bg.ron");
    record_session(&path, Duration::from_millis(500));
    let s = session::load(&path).unwrap();
    let target = dir.path().join("copy.ron");
    let mut job = session::SaveJob::spawn(s.clone(), target.clone());
    let outcome = loop {
        let p = job.progress();
        assert!((0.0..=1.0).contains(&p), "{p}");
        if let Some(r) = job.try_finish() {
            break r;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    outcome.expect("saved");
    assert!(job.try_finish().is_none(), "the outcome is handed out once");
    assert_eq!(session::load(&target).unwrap(), s);

    let bad = session::SaveJob::spawn(s, dir.path().join("no/such/dir/x.ron"));
    let e = bad.wait().unwrap_err();
    assert!(e.to_string().contains("no/such/dir"), "names the path: {e}");
}
