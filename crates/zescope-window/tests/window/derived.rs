//! Derived series in the window: one started from a legend row's "Moving average…" is offered
//! with its series, a definition is checked as it is typed (a misspelt series names what it could
//! mean, a syntax error its column), and once added the series is filed into the store from the
//! run's start and as the run goes on, placed in a pane and listed in its legend, its values those
//! of its definition.

use egui_kittest::kittest::Queryable;

use crate::support::pump;

const SERIES: &str = "ComputeBasic/GpuUtilization";

#[test]
fn a_derived_series_from_the_legend_is_plotted_and_listed() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.get_by_label("Start").click();
    pump(&mut h, "samples in a pane", |a| a.state.ingest.samples_total > 20 && !a.panes.arrangement.panes.is_empty());

    h.step();
    h.get_by_label(SERIES).click_secondary();
    h.step();
    h.step();
    h.get_by_label("Moving average…").click();
    h.step();
    h.step();
    assert!(h.state().windows.derived.open, "the derived series' window opened");
    assert_eq!(h.state().state.derived.text, format!("avg_GpuUtilization=avg({SERIES}, 1s)"));

    // Checked as typed: a misspelt series, then a syntax error.
    h.state_mut().state.derived.text = "twice=ComputeBasic/GpuUtilisation * 2".into();
    h.step();
    h.step();
    h.get_by_label_contains("it could mean ComputeBasic/GpuUtilization");
    h.state_mut().state.derived.text = "twice=ComputeBasic/GpuUtilization *".into();
    h.step();
    h.step();
    h.get_by_label_contains("column 36: expected a series, a number or a function");

    h.state_mut().state.derived.text = format!("twice={SERIES} * 2");
    h.step();
    h.step();
    h.get_by_label("Add").click();
    h.step();
    h.step();
    assert_eq!(h.state().state.derived.deriver.derivations().len(), 1, "{:?}", h.state().state.derived.said);

    // Filed as the run goes on, in a pane and its legend.
    pump(&mut h, "derived samples", |a| {
        a.state
            .ingest
            .series
            .iter()
            .any(|(k, e)| k.group == "Derived" && e.ids.iter().any(|id| a.store.sample_count(id.stream()) > 20))
    });
    h.step();
    h.get_by_label("Derived/twice");
    let a = h.state();
    let run = a.state.ingest.run.as_ref().unwrap();
    let (cb, dv) = (
        run.info.streams.iter().position(|s| s.group == "ComputeBasic").unwrap(),
        run.info.streams.iter().position(|s| s.group == "Derived").unwrap(),
    );
    let col = run.info.streams[cb].series.iter().position(|s| s.name == "GpuUtilization").unwrap();
    let mut util = std::collections::HashMap::new();
    a.store.for_each_raw_row(run.streams[cb], |t, row| {
        util.insert(t, row[col]);
    });
    let (mut checked, mut last) = (0, i64::MIN);
    a.store.for_each_raw_row(run.streams[dv], |t, row| {
        let u = util[&t];
        assert!((row[0] - 2.0 * u).abs() <= 1e-9 * u.abs().max(1.0), "at {t}: {} vs 2 × {u}", row[0]);
        checked += 1;
        last = t;
    });
    // Added after 20 samples, derived from the run's start: a value for every sample up to
    // its newest, those before it was added too.
    let before_add = util.keys().filter(|&&t| t <= last).count();
    assert_eq!(checked, before_add, "derived from the run's start");
    assert!(checked > 20, "{checked}");
    assert!(
        a.panes.arrangement.panes.iter().any(|p| p.series.iter().any(|k| k.group == "Derived")),
        "placed in a pane"
    );
}

/// Every stored value of `Derived/NAME` is `f` of GpuUtilization's at the same time; how many.
/// Enter pressed in the frame that also brings the definition's last keystroke adds it: the
/// definition is checked as it stands after the edit (it was checked before it, so "twice=… * "
/// refused the Enter that came with its "2").
#[test]
fn enter_with_the_last_keystroke_adds_the_definition() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.get_by_label("Start").click();
    pump(&mut h, "samples", |a| a.state.ingest.samples_total > 20);
    h.state_mut().windows.derived.open = true;
    h.state_mut().state.derived.text = format!("twice={SERIES} * ");
    h.step();
    h.step();
    h.get_by_label_contains("column 36: expected a series, a number or a function");
    // One frame's input, as a fast typist's or a paste's: kittest's queued events take a frame
    // each.
    let key = |pressed| egui::Event::Key {
        key: egui::Key::Enter,
        physical_key: None,
        pressed,
        repeat: false,
        modifiers: egui::Modifiers::NONE,
    };
    h.input_mut().events.extend([egui::Event::Text("2".into()), key(true), key(false)]);
    h.step();
    h.step();
    assert_eq!(h.state().state.derived.text, "");
    let added: Vec<String> = h.state().state.derived.deriver.derivations().iter().map(|d| d.definition()).collect();
    assert_eq!(added, [format!("twice={SERIES} * 2")], "{:?}", h.state().state.derived.said);
    crate::support::quit_discarding(&mut h);
}

fn check_against_util(a: &zescope_window::ZescopeApp, name: &str, f: impl Fn(f64) -> f64) -> usize {
    let util = &a.state.ingest.series[&key("ComputeBasic", "GpuUtilization")];
    let derived = &a.state.ingest.series[&key("Derived", name)];
    let mut values = std::collections::HashMap::new();
    for id in &util.ids {
        a.store.for_each_raw_row(id.stream(), |t, row| {
            values.insert(t, row[id.index()]);
        });
    }
    let mut checked = 0;
    for id in &derived.ids {
        a.store.for_each_raw_row(id.stream(), |t, row| {
            let want = f(values[&t]);
            assert!((row[id.index()] - want).abs() <= 1e-9 * want.abs().max(1.0), "at {t}: {} vs {want}", row[0]);
            checked += 1;
        });
    }
    checked
}

fn key(group: &str, metric: &str) -> zescope_model::view::SeriesKey {
    zescope_model::view::SeriesKey { device: "ze-sim GPU".into(), group: group.into(), metric: metric.into() }
}

#[test]
fn a_view_with_a_derived_series_re_creates_it_on_a_new_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("derived.ron");
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.get_by_label("Start").click();
    pump(&mut h, "samples in a pane", |a| a.state.ingest.samples_total > 20 && !a.panes.arrangement.panes.is_empty());
    h.state_mut().state.derived.text = format!("twice={SERIES} * 2");
    h.state_mut().state.derived.requested = true;
    pump(&mut h, "Derived/twice in a pane", |a| a.panes.arrangement.contains(&key("Derived", "twice")));
    let view = h.state().current_view("derived");
    assert_eq!(view.derived, [format!("twice={SERIES} * 2")]);
    assert_eq!(view.version, 2);
    view.save(&path).unwrap();
    crate::support::quit_discarding(&mut h);

    // A new window, nothing defined: the view loaded before the run (as `zescope --view`).
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.state_mut().load_view(zescope_model::viewfile::ViewFile::load(&path).unwrap());
    h.get_by_label("Start").click();
    pump(&mut h, "derived samples in the view's pane", |a| {
        a.panes.arrangement.contains(&key("Derived", "twice"))
            && a.state
                .ingest
                .series
                .get(&key("Derived", "twice"))
                .is_some_and(|e| a.store.sample_count(e.ids[0].stream()) > 20)
    });
    h.step();
    h.get_by_label("Derived/twice");
    let a = h.state();
    assert!(check_against_util(a, "twice", |u| 2.0 * u) > 20);
    // Bound from the run's start: its first sample is the first GpuUtilization sample's.
    let first = |k| a.store.time_range(a.state.ingest.series[&k].ids[0].stream()).unwrap().0;
    assert_eq!(first(key("Derived", "twice")), first(key("ComputeBasic", "GpuUtilization")));
}

#[test]
fn over_an_opened_session_a_derived_series_is_computed_once_with_progress() {
    use zescope_model::session::{self, Capture, RunHistory, Session};
    use zescope_model::view::{Arrangement, Ingest, TimeView};
    // A recorded run of the simulated GPU's ComputeBasic, 200 000 samples (a few seconds' work
    // in a debug build: many frames).
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.get_by_label("Start").click();
    pump(&mut h, "a run", |a| a.state.ingest.run.is_some());
    let info = h.state().state.ingest.run.as_ref().unwrap().info.clone();
    crate::support::quit_discarding(&mut h);
    let cb = info.streams.iter().position(|s| s.group == "ComputeBasic").unwrap();
    let width = info.streams[cb].series.len();
    let col = info.streams[cb].series.iter().position(|s| s.name == "GpuUtilization").unwrap();
    let mut info = info;
    info.streams.truncate(cb + 1);
    let mut store = zescope_store::Store::new(1 << 30);
    let mut ingest = Ingest::default();
    let mut history = RunHistory::default();
    let streams = ingest.run_started(&mut store, info.clone()).streams.clone();
    history.run_started(&info, None, &streams);
    for start in (0..200_000i64).step_by(10_000) {
        let ts: Vec<i64> = (start..start + 10_000).map(|i| (i + 1) * 1_000_000).collect();
        let values: Vec<f64> = (start..start + 10_000)
            .flat_map(|i| (0..width).map(move |c| if c == col { (i % 101) as f64 } else { 0.0 }))
            .collect();
        let b = zescope_sampler::SampleBatch { run: info.run, stream: cb, timestamps: ts, values, gap_before: false };
        ingest.samples(&mut store, &b).unwrap();
    }
    ingest.run_stopped(&mut store, info.run);
    let (mut arrangement, view) = (Arrangement::default(), TimeView::default());
    arrangement.place_new(&ingest.order, &std::collections::BTreeMap::new());
    let s =
        Session::capture(&store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.ron");
    session::save(&path, &s).unwrap();

    let mut h = crate::support::showing(&path, zescope_window::settings::Settings::default(), [1280.0, 860.0], None);
    pump(&mut h, "opened", |a| !a.opening());
    h.state_mut().state.derived.text = format!("plus1={SERIES} + 1");
    h.state_mut().state.derived.requested = true;
    h.step();
    let (text, p) = h.state().state.derived.progress().expect("computing, with its progress");
    assert!(text.starts_with("deriving plus1 … ") && (0.0..1.0).contains(&p), "{text} {p}");
    assert!(h.state().state.ingest.series.contains_key(&key("Derived", "plus1")), "filed at once, shown as it fills");
    pump(&mut h, "computed", |a| a.state.derived.backfills.is_empty());
    let a = h.state();
    assert_eq!(check_against_util(a, "plus1", |u| u + 1.0), 200_000, "every sample derived, once");
    let id = a.state.ingest.series[&key("Derived", "plus1")].ids[0].stream();
    assert!(a.store.stream(id).unwrap().ended, "computed once: its stream is ended");
    assert!(a.state.derived.said.as_deref().unwrap_or("").contains("computed over the recording shown"));
    // Not computed again as frames go by.
    let n = a.store.sample_count(id);
    h.step();
    h.step();
    assert_eq!(h.state().store.sample_count(id), n);
}
