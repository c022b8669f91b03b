//! Triggers in the window: one set from a legend's menu fires on the simulated workload exactly
//! where the stored data crosses its value, pause on trigger centres the view on the firing, keep
//! writes a session of the time around it that opens again, and a bad expression says its column.
//!
//! The simulated workload's GpuUtilization is ≈ 3 % idle, ≈ 95 % computing, ≈ 70 % memory-bound,
//! in an 8 s cycle: `> 80` is crossed once per cycle.

use std::time::Duration;

use egui_kittest::kittest::Queryable;
use zescope_model::view::timeview::Mode;
use zescope_store::Store;

use crate::support::pump;
use zescope_model::view::TimeAxis;

const SERIES: &str = "ComputeBasic/GpuUtilization";

/// Every time the stored GpuUtilization goes from at most `v` to above it (consecutive samples of
/// a stream, as the plot draws them), up to `until` ns.
fn crossings(app: &zescope_window::ZescopeApp, v: f64, until: i64) -> Vec<i64> {
    let run = app.state.ingest.run.as_ref().expect("a run");
    let stream = run.info.streams.iter().position(|s| s.group == "ComputeBasic").unwrap();
    let col = run.info.streams[stream].series.iter().position(|s| s.name == "GpuUtilization").unwrap();
    let mut prev = f64::NAN;
    let mut out = Vec::new();
    app.store.for_each_raw_row(run.streams[stream], |t, row| {
        let x = row[col];
        if t <= until && !prev.is_nan() && prev <= v && x > v {
            out.push(t);
        }
        if !x.is_nan() {
            prev = x;
        }
    });
    out
}

#[test]
fn a_trigger_from_the_legend_fires_where_the_data_crosses_it() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.get_by_label("Start").click();
    pump(&mut h, "samples in a pane", |a| a.state.ingest.samples_total > 20 && !a.panes.arrangement.panes.is_empty());

    h.step();
    h.get_by_label(SERIES).click_secondary();
    h.step();
    h.step();
    h.get_by_label("Trigger on this series…").click();
    h.step();
    h.step();
    let text = h.state().state.triggers.text.clone();
    assert!(h.state().windows.triggers.open, "the Triggers window opened");
    assert!(text.starts_with(&format!("{SERIES} > ")), "offered with its series and last value: {text}");

    let keep = tempfile::tempdir().unwrap();
    {
        let t = &mut h.state_mut().state.triggers;
        t.text = format!("{SERIES} > 80");
        t.pre = Duration::from_secs(1);
        t.post = Duration::from_secs(1);
        t.pause_on_trigger = true;
        t.keep = Some(keep.path().to_owned());
    }
    h.step();
    h.step();
    h.get_by_label("Add").click();
    h.step();
    h.step();
    assert_eq!(h.state().state.triggers.eval.triggers().len(), 1, "{:?}", h.state().state.triggers.error);

    // One 8 s cycle and the second after it.
    pump(&mut h, "a firing, kept", |a| !a.state.triggers.kept.is_empty());
    let a = h.state();
    let firings = a.state.triggers.firings.clone();
    let first = firings[0].t_ns;
    assert!(firings.iter().all(|f| &*f.series == SERIES && f.value > 80.0), "{firings:?}");

    // Exactly where the stored data crosses 80 since the trigger was added (the first firing is
    // the first crossing after it; every later crossing fired).
    let newest = a.store.total_time_range().unwrap().1;
    let stored: Vec<i64> = crossings(a, 80.0, newest).into_iter().filter(|&t| t >= first).collect();
    let fired: Vec<i64> = firings.iter().map(|f| f.t_ns).filter(|&t| t <= newest).collect();
    assert_eq!(fired, stored, "firings at the stored crossings");

    // Pause on trigger: the view stopped following, the firing in the middle.
    assert_eq!(a.view.mode, Mode::Zoomed);
    let (x0, x1) = a.view.range(None).unwrap();
    let at = TimeAxis::of(&a.store).x(firings.last().unwrap().t_ns);
    assert!(((x0 + x1) / 2.0 - at).abs() < 1e-6, "centred: {x0}..{x1} around {at}");
    let samples = a.state.ingest.samples_total;
    pump(&mut h, "sampling goes on", |a| a.state.ingest.samples_total > samples + 50);

    // Keep: a session of the second before and after, which loads and restores.
    let path = h.state().state.triggers.kept[0].clone();
    assert!(path.starts_with(keep.path()), "{}", path.display());
    let session = zescope_model::session::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut store = Store::new(64 << 20);
    session.restore_into(&mut store).expect("restores");
    // Exactly the samples of the second before and after: the first and last the live store
    // holds in it (how close they come to the edges depends on the sampler's ticks, which a
    // loaded machine delays), and every stored sample of that second is there.
    let (lo, hi) = (first - 1_000_000_000, first + 1_000_000_000);
    let (mut within, mut span) = (0usize, (i64::MAX, i64::MIN));
    let live = h.state();
    for s in live.store.streams() {
        live.store.for_each_raw_row(s.id, |t, _| {
            if (lo..=hi).contains(&t) {
                within += 1;
                span = (span.0.min(t), span.1.max(t));
            }
        });
    }
    assert!(within > 0, "samples in {lo}..={hi}");
    assert_eq!(store.total_time_range(), Some(span), "a second before and after");
    let kept: usize = store.streams().map(|s| s.appended as usize).sum();
    assert_eq!(kept, within, "every stored sample of those two seconds");

    // The list's Show centres the view on the first firing.
    h.state_mut().view.follow();
    h.state_mut().state.triggers.pause_on_trigger = false;
    h.step();
    h.step();
    h.get_all_by_label("Show").last().unwrap().click();
    h.step();
    h.step();
    let a = h.state();
    let (x0, x1) = a.view.range(None).unwrap();
    assert!(((x0 + x1) / 2.0 - TimeAxis::of(&a.store).x(first)).abs() < 1e-6, "Show centres the first firing");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn a_bad_expression_says_its_column() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.state_mut().windows.triggers.open = true;
    h.state_mut().state.triggers.text = format!("{SERIES} >");
    h.step();
    h.step();
    h.get_by_label("Add").click();
    h.step();
    h.step();
    h.get_by_label_contains("column 30: expected a number after '>'");
    assert!(h.state().state.triggers.eval.triggers().is_empty());
}

/// A window on `sim` with a run going, the Triggers window open and `text` added there.
fn added_in_a_run(
    sim: &std::sync::Arc<ze_sim::Sim>,
    text: &str,
) -> egui_kittest::Harness<'static, zescope_window::ZescopeApp> {
    let mut h = crate::support::harness_on(sim);
    h.get_by_label("Start").click();
    crate::support::pump(&mut h, "the run", |a| a.state.ingest.run.is_some());
    h.state_mut().windows.triggers.open = true;
    h.state_mut().state.triggers.text = text.into();
    h.step();
    h.step();
    h.get_by_label("Add").click();
    h.step();
    h.step();
    h
}

/// With a run going, an expression naming none of its series is refused, naming the closest.
#[test]
fn a_trigger_naming_no_series_of_the_run_is_refused() {
    let sim = crate::support::sim(|_| {});
    let mut h = added_in_a_run(&sim, "ComputeBasic/GpuBusy > 80");
    h.get_by_label_contains("names no series of this run; it could mean ComputeBasic/GpuBusyCycles");
    assert!(h.state().state.triggers.eval.triggers().is_empty());
    assert_eq!(h.state().state.triggers.text, "ComputeBasic/GpuBusy > 80", "kept to correct");
    h.state_mut().state.triggers.text = format!("{SERIES} > 80");
    h.get_by_label("Add").click();
    h.step();
    assert_eq!(h.state().state.triggers.eval.triggers().len(), 1);
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// A trigger or a derived series naming a metric of a group the run does not sample says which
/// group to tick (not the run's nearest names); ticked, the run restarts with it and both are
/// taken.
#[test]
fn a_name_of_a_group_left_out_says_what_to_tick() {
    let sim = crate::support::sim(|_| {});
    let mut h = added_in_a_run(&sim, "MemoryTraffic/BytesRead > 5");
    h.get_by_label(
        "trigger 'MemoryTraffic/BytesRead > 5' names 'MemoryTraffic/BytesRead', a metric of group MemoryTraffic of \
         ze-sim GPU, which this run does not sample: tick MemoryTraffic in the source list",
    );
    h.state_mut().windows.derived.open = true;
    h.state_mut().state.derived.text = "bw=rate(MemoryTraffic/BytesRead)".into();
    h.step();
    h.step();
    h.get_by_label_contains("derived series 'bw' names 'MemoryTraffic/BytesRead', a metric of group MemoryTraffic");
    h.get_by_label_contains("MemoryTraffic  · domain 1").click();
    crate::support::pump(&mut h, "a run of both groups", |a| {
        a.state.ingest.run.as_ref().is_some_and(|r| r.info.streams.iter().any(|s| s.group == "MemoryTraffic"))
    });
    h.step();
    assert_eq!(h.state().state.derived.check(h.state().state.ingest.run.as_ref().map(|r| &r.info), None), None);
    h.state_mut().windows.derived.open = false;
    h.step();
    h.get_by_label("Add").click();
    h.step();
    assert_eq!(h.state().state.triggers.eval.triggers().len(), 1, "the trigger is taken");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// The floating windows open inside the central area, clear of the menu bar (a click on File
/// must not land on a window's edge) and of the source panel, at 1600x1000 and at 900x600.
#[test]
fn floating_windows_open_clear_of_the_menu_bar_and_the_source_panel() {
    for size in [[1600.0, 1000.0], [900.0, 600.0]] {
        let path = crate::support::example_session();
        let mut h = crate::support::showing(&path, zescope_window::settings::Settings::default(), size, None);
        {
            let w = &mut h.state_mut().windows;
            w.triggers.open = true;
            w.phases.open = true;
            w.shortcuts.open = true;
        }
        h.step();
        h.step();
        let central = h.state().central.expect("the central panel's rect");
        assert!(central.left() > 100.0 && central.top() > 10.0, "under the menu, right of the panel: {central:?}");
        for title in ["Triggers", "Phase table", "Keyboard shortcuts"] {
            // The window's title: the top-left of the window, a frame's margin in.
            let rect = h.get_by_label(title).rect();
            assert!(
                rect.top() >= central.top() && rect.left() >= central.left() - 0.5,
                "{title} at {rect:?} reaches over the menu bar or the source panel ({central:?}) at {size:?}"
            );
        }
    }
}

/// A trigger that fired is removed only after a question (its firings go with it); one that never
/// fired goes at once. Each row counts its firings ("1 firing", "23 firings").
#[test]
fn removing_a_trigger_with_firings_asks_first() {
    let path = crate::support::example_session();
    let mut h = crate::support::showing(&path, zescope_window::settings::Settings::default(), [1280.0, 860.0], None);
    {
        let t = &mut h.state_mut().state.triggers;
        assert!(t.add("marker go", None) && t.add("marker never", None) && t.add("marker once", None));
        let mut fired = Vec::new();
        for k in 0..23 {
            t.eval.marker("go", k * 1_000_000, &mut fired);
        }
        t.eval.marker("once", 5_000_000, &mut fired);
        t.firings = fired;
    }
    h.state_mut().windows.triggers.open = true;
    h.step();
    h.step();
    h.get_by_label("23 firings");
    h.get_by_label("0 firings");
    h.get_by_label("1 firing");
    h.get_all_by_label("×").nth(1).unwrap().click();
    h.step();
    h.step();
    assert_eq!(h.state().state.triggers.eval.triggers().len(), 3, "not removed on the first click");
    h.get_by_label("Remove this trigger and its 23 firings?");
    h.get_by_label("Keep").click();
    h.step();
    h.step();
    assert_eq!(h.state().state.triggers.eval.triggers().len(), 3, "kept");
    assert_eq!(h.state().state.triggers.firings.len(), 24);
    h.get_all_by_label("×").nth(1).unwrap().click();
    h.step();
    h.step();
    h.get_by_label("Remove").click();
    h.step();
    h.step();
    let t = &h.state().state.triggers;
    assert_eq!(t.eval.triggers().len(), 2, "removed once confirmed");
    assert_eq!(t.firings.len(), 1, "with its firings, not the others'");
    // The one that never fired goes at once.
    h.get_all_by_label("×").nth(1).unwrap().click();
    h.step();
    h.step();
    let left: Vec<_> = h.state().state.triggers.eval.triggers().iter().map(|t| t.text.clone()).collect();
    assert_eq!(left, ["marker once"]);
}

/// The firing list keeps its rows still as firings come (a new one is added below, not at the top
/// pushing the others down under the pointer), and writes their times as the time axis does.
#[test]
fn the_firing_list_keeps_its_rows_still_and_writes_times_as_the_axis_does() {
    let path = crate::support::example_session();
    let mut h = crate::support::showing(&path, zescope_window::settings::Settings::default(), [1280.0, 860.0], None);
    let origin = h.state().store.origin_ns().unwrap();
    {
        let t = &mut h.state_mut().state.triggers;
        assert!(t.add("marker go", None));
        let mut fired = Vec::new();
        t.eval.marker("go", origin + 75_500_000_000, &mut fired);
        t.firings = fired;
    }
    h.state_mut().windows.triggers.open = true;
    h.step();
    h.step();
    let before = h.get_by_label("1:15.5").rect();
    {
        let t = &mut h.state_mut().state.triggers;
        let mut fired = Vec::new();
        t.eval.marker("go", origin + 80_000_000_000, &mut fired);
        t.firings.extend(fired);
    }
    h.step();
    h.step();
    h.get_by_label("1:20");
    assert_eq!(h.get_by_label("1:15.5").rect(), before, "the first firing's row did not move");
}
