//! The mouse wheel, driven through egui_kittest against a sampler on a private simulated driver:
//! over a plot it zooms the time axis (and the pane list stays put), Shift+wheel over a plot pans
//! in time, and over a legend it scrolls the pane list (and the time axis stays put).

use crate::support::{pump, wheel};

use egui::{Modifiers, MouseWheelSource, MouseWheelUnit, TouchPhase, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use zescope_model::view::timeview::Mode;
use zescope_model::view::{TimeView, data_x};
use zescope_window::ZescopeApp;
use zescope_window::settings::Settings;

fn range(a: &ZescopeApp) -> (f64, f64) {
    TimeView::range(&a.view, data_x(&a.store)).expect("data is shown")
}

/// Where the first pane's title is: it moves only when the pane list scrolls.
fn title_y(h: &Harness<'_, ZescopeApp>) -> f32 {
    h.get_by_label("Pane 1").rect().min.y
}

#[test]
fn the_wheel_zooms_over_a_plot_pans_with_shift_and_scrolls_the_panes_elsewhere() {
    let sim = crate::support::sim(|_| {});
    // Low enough that the panes do not fit: the pane list can scroll.
    let mut h = crate::support::with_inventory(crate::support::app_on(&sim, Settings::default()), [1280.0, 600.0]);
    h.get_by_label("Start").click();
    pump(&mut h, "panes with data", |a| a.state.ingest.samples_total > 50 && !a.panes.arrangement.panes.is_empty());
    h.step();
    // Pause, so the range only moves when the wheel moves it.
    h.key_press(egui::Key::Space);
    h.step();
    assert_eq!(h.state().view.mode, Mode::Paused);

    let title = h.get_by_label("Pane 1").rect();
    let close = h.get_all_by_label("x").map(|n| n.rect()).find(|r| (r.center().y - title.center().y).abs() < 10.0);
    let right = close.expect("pane 1's close button").max.x;
    let over_plot = egui::pos2((title.min.x + right) / 2.0, title.max.y + 70.0);

    let (a0, b0) = range(h.state());
    let y0 = title_y(&h);
    wheel(&mut h, over_plot, 120.0, Modifiers::NONE);
    let (a1, b1) = range(h.state());
    assert_eq!(h.state().view.mode, Mode::Zoomed, "a wheel over a plot zooms");
    assert!(b1 - a1 < 0.8 * (b0 - a0), "wheel up zooms in: {:?} -> {:?}", (a0, b0), (a1, b1));
    assert_eq!(title_y(&h), y0, "the pane list did not scroll under a plot");

    wheel(&mut h, over_plot, -120.0, Modifiers::NONE);
    let (a2, b2) = range(h.state());
    assert!(b2 - a2 > 1.2 * (b1 - a1), "wheel down zooms out: {:?} -> {:?}", (a1, b1), (a2, b2));

    wheel(&mut h, over_plot, 120.0, Modifiers::SHIFT);
    let (a3, b3) = range(h.state());
    let span = b2 - a2;
    assert!((a3 - a2).abs() > span * 0.01, "Shift+wheel pans: {:?} -> {:?}", (a2, b2), (a3, b3));
    assert!(((b3 - a3) - span).abs() < span * 1e-6, "panning keeps the span");
    assert_eq!(title_y(&h), y0, "the pane list did not scroll under a plot");

    // Over the first legend (its "mean" header): the pane list scrolls, the time axis stays, also
    // when the scrolling brings the next plot under the pointer before the wheel comes to rest.
    let legend = h.get_all_by_label("mean").next().expect("a legend").rect().center();
    wheel(&mut h, legend, -120.0, Modifiers::NONE);
    assert!(title_y(&h) < y0 - 20.0, "the wheel over a legend scrolls the pane list ({} vs {y0})", title_y(&h));
    assert_eq!(range(h.state()), (a3, b3), "the time axis did not move");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// A window at `dt` seconds a frame, paused, showing more panes than fit.
fn paused_at(sim: &std::sync::Arc<ze_sim::Sim>, dt: f32) -> Harness<'static, ZescopeApp> {
    let app = crate::support::app_on(sim, Settings::default());
    let mut h = crate::support::builder()
        .with_size([1280.0, 600.0])
        .with_step_dt(dt)
        .build_ui_state(|ui, a: &mut ZescopeApp| a.ui(ui), app);
    pump(&mut h, "the inventory", |a| a.state.inventory.is_some());
    h.get_by_label("Start").click();
    pump(&mut h, "panes with data", |a| a.state.ingest.samples_total > 50 && a.panes.arrangement.panes.len() > 3);
    h.step();
    h.key_press(egui::Key::Space);
    h.step();
    h
}

/// Twelve wheel notches over the first legend, `frames` frames apart, the pointer held still.
fn scroll_from_the_legend(h: &mut Harness<'_, ZescopeApp>, frames: usize) {
    let legend = h.get_all_by_label("mean").next().expect("a legend").rect().center();
    h.hover_at(legend);
    h.step();
    for _ in 0..12 {
        h.event(egui::Event::MouseWheel {
            unit: MouseWheelUnit::Point,
            delta: vec2(0.0, -50.0),
            phase: TouchPhase::Move,
            source: MouseWheelSource::Wheel,
            modifiers: Modifiers::NONE,
        });
        for _ in 0..frames {
            h.step();
        }
    }
    for _ in 0..30 {
        h.step();
    }
}

/// A wheel gesture begun over a legend goes on scrolling the pane list however many plots pass
/// under the pointer, notch after notch, at 60 frames a second or at a slow 0.4 s a frame;
/// zooming out never shows time before the first sample.
#[test]
fn a_scroll_begun_on_the_list_stays_a_scroll_and_zoom_keeps_to_the_data() {
    let sim = crate::support::sim(|_| {});
    for (dt, frames) in [(0.4, 1), (1.0 / 60.0, 5)] {
        let mut h = paused_at(&sim, dt);
        let before = range(h.state());
        let y0 = title_y(&h);
        scroll_from_the_legend(&mut h, frames);
        assert!(title_y(&h) < y0 - 200.0, "{dt} s frames: the list scrolled on ({} vs {y0})", title_y(&h));
        assert_eq!(h.state().view.mode, Mode::Paused, "{dt} s frames: no plot took the wheel on the way");
        assert_eq!(range(h.state()), before, "{dt} s frames: the time axis did not move");
        if frames == 1 {
            crate::support::quit_discarding(&mut h);
            continue;
        }
        // Zoomed in, then out far over a plot: never before the first sample, nor past what was
        // shown (the minute of the live window, longer than the run so far).
        let plot = h.state().plot_frames.iter().find_map(|(_, r)| *r).expect("a plot");
        for dy in [300.0, 300.0, -400.0, -400.0, -400.0, -400.0] {
            wheel(&mut h, plot.center(), dy, Modifiers::NONE);
        }
        let (a, b) = range(h.state());
        let (first, last) = data_x(&h.state().store).expect("data");
        let end = last.max(before.1);
        assert!(a >= first - 1e-9 && b <= end + 1e-9, "{:?} within {:?}", (a, b), (first, end));
        assert!(b - a > 0.99 * (end - first), "zoomed out to all of it: {:?} of {:?}", (a, b), (first, end));
        crate::support::quit_discarding(&mut h);
    }
}
