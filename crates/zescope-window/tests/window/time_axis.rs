//! Moving the time axis without the wheel, driven through egui_kittest on an opened recording:
//! the overview strip marks exactly the range the panes show and a click or a drag on it moves
//! the view there; a double-click on a plot fits the axis to all the data, a single click does not.

use egui::{Modifiers, PointerButton, Pos2, Rect};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use zescope_model::view::timeview::Mode;
use zescope_model::view::{TimeView, data_x};
use zescope_window::ZescopeApp;
use zescope_window::overview::LABEL;
use zescope_window::settings::{Settings, Shown};

/// Seconds between frames: two clicks in a row are well within egui's double-click delay
/// (0.3 s), which kittest's default step (0.25 s a frame, two frames a click) is not.
const STEP_S: f32 = 0.05;

/// An app showing the example recording, fitted whole.
fn opened(settings: Settings) -> Harness<'static, ZescopeApp> {
    let mut h =
        crate::support::showing(&crate::support::example_session(), settings, crate::support::WINDOW, Some(STEP_S));
    h.step();
    h
}

fn range(a: &ZescopeApp) -> (f64, f64) {
    TimeView::range(&a.view, data_x(&a.store)).expect("data is shown")
}

fn data(a: &ZescopeApp) -> (f64, f64) {
    data_x(&a.store).expect("the recording has data")
}

fn press(h: &mut Harness<'_, ZescopeApp>, pos: Pos2, pressed: bool) {
    h.event(egui::Event::PointerButton { pos, button: PointerButton::Primary, pressed, modifiers: Modifiers::NONE });
    h.step();
}

fn click(h: &mut Harness<'_, ZescopeApp>, pos: Pos2) {
    h.hover_at(pos);
    h.step();
    press(h, pos, true);
    press(h, pos, false);
}

/// Screen x of time `x` on the strip, from the strip's rectangle and the data's extent alone.
fn strip_x(strip: Rect, (first, last): (f64, f64), x: f64) -> f32 {
    strip.left() + ((x - first) / (last - first)) as f32 * strip.width()
}

/// The strip's marked range is the time view's, to within a pixel (clamped to the strip).
fn assert_marked_is_the_view(h: &Harness<'_, ZescopeApp>) {
    let a = h.state();
    let strip = h.get_by_label(LABEL).rect();
    let marked = a.overview.marked.expect("a marked range");
    let (x0, x1) = range(a);
    let want = |x| strip_x(strip, data(a), x).clamp(strip.left(), strip.right());
    assert!(
        (marked.left() - want(x0)).abs() <= 1.0 && (marked.right() - want(x1)).abs() <= 1.0,
        "marked {:?} for the view {:?} on the strip {:?}",
        marked.x_range(),
        (x0, x1),
        strip.x_range()
    );
}

/// The strip is drawn over the plots' time axis as drawn the frame before; a resize moves the
/// axis, and the frames that follow it (a recording shown repaints on input only) draw the strip
/// over the axis where it is now: it read 87 % of the plots' width after the window grew.
#[test]
fn after_a_resize_the_overview_strip_spans_the_plots_axis_again() {
    let mut h = opened(Settings::default());
    h.run();
    let axis = |h: &Harness<'_, ZescopeApp>| {
        h.state().plot_frames.iter().find_map(|(_, r)| *r).expect("a plot drawn").x_range()
    };
    for width in [1100.0, 1500.0, 900.0] {
        h.set_size(egui::vec2(width, crate::support::WINDOW[1]));
        h.run();
        let (strip, plots) = (h.get_by_label(LABEL).rect().x_range(), axis(&h));
        assert!(
            (strip.min - plots.min).abs() <= 0.5 && (strip.max - plots.max).abs() <= 0.5,
            "at {width} px: the strip {strip:?}, the plots' axis {plots:?}"
        );
    }
}

#[test]
fn the_overview_strip_marks_the_view_and_moves_it_where_clicked_or_dragged() {
    let mut h = opened(Settings::default());
    let (first, last) = data(h.state());
    let len = last - first;
    assert_eq!(range(h.state()), (first, last), "fitted whole");
    assert_marked_is_the_view(&h);
    let strip = h.get_by_label(LABEL).rect();
    assert!(strip.width() > 500.0 && strip.height() < 60.0, "a thin strip across the panes: {strip:?}");

    // Zoomed in on the first tenth: the mark shrinks to it.
    h.state_mut().view.user_moved((first, first + 0.1 * len));
    h.step();
    assert_marked_is_the_view(&h);
    let marked = h.state().overview.marked.unwrap();
    assert!(marked.width() < 0.2 * strip.width(), "{marked:?} of {strip:?}");

    // A click at three quarters of the strip centres the view there, keeping its span. (The
    // strip spans the plots' time axis, which moves when the zoom widens the value labels: read
    // where it is now, once the labels settled: a frame for the labels, one for the strip.)
    for _ in 0..3 {
        h.step();
    }
    let strip = h.get_by_label(LABEL).rect();
    let at = |f: f32| Pos2::new(strip.left() + f * strip.width(), strip.center().y);
    click(&mut h, at(0.75));
    let (a, b) = range(h.state());
    let px = len / f64::from(strip.width());
    assert!(((a + b) / 2.0 - (first + 0.75 * len)).abs() <= 1.5 * px, "centred at 3/4: {:?}", (a, b));
    assert!(((b - a) - 0.1 * len).abs() < 1e-9 * len, "the span is kept: {:?}", (a, b));
    assert_eq!(h.state().view.mode, Mode::Zoomed);
    h.step();
    assert_marked_is_the_view(&h);

    // Dragging along it moves the view with the pointer.
    h.hover_at(at(0.75));
    h.step();
    press(&mut h, at(0.75), true);
    for f in [0.6, 0.45, 0.3] {
        h.hover_at(at(f));
        h.step();
    }
    press(&mut h, at(0.3), false);
    let (a, b) = range(h.state());
    assert!(((a + b) / 2.0 - (first + 0.3 * len)).abs() <= 1.5 * px, "dragged to 0.3: {:?}", (a, b));
    h.step();
    assert_marked_is_the_view(&h);
}

#[test]
fn the_overview_strip_is_hidden_when_the_settings_say_so() {
    let mut h = opened(Settings { overview: Shown::No, ..Settings::default() });
    assert!(h.query_by_label(LABEL).is_none(), "hidden as remembered");
    assert!(h.state().overview.marked.is_none());
    h.get_by_label("View").click();
    h.step();
    h.step();
    h.get_by_label("Overview strip").click();
    h.step();
    h.step();
    assert!(h.state().overview.shown, "View → Overview strip shows it again");
    h.get_by_label(LABEL);
}

#[test]
fn a_double_click_on_a_plot_fits_the_time_axis_a_single_click_does_not() {
    let mut h = opened(Settings::default());
    let all = data(h.state());
    let len = all.1 - all.0;
    let part = (all.0 + 0.4 * len, all.0 + 0.5 * len);
    h.state_mut().view.user_moved(part);
    h.step();
    let plot = h.state().plot_frames.iter().find_map(|(_, r)| *r).expect("a plot");
    let p = plot.center();

    click(&mut h, p);
    h.step();
    assert_eq!(range(h.state()), part, "one click leaves the axis alone");

    // Well after that click, two in a row.
    for _ in 0..10 {
        h.step();
    }
    click(&mut h, p);
    press(&mut h, p, true);
    press(&mut h, p, false);
    h.step();
    assert_eq!(range(h.state()), all, "fitted to all the data");
}

#[test]
fn the_overview_strip_draws_a_band_per_pane_across_the_plots_time_axis() {
    let mut h = opened(Settings::default());
    for _ in 0..3 {
        h.step();
    }
    let a = h.state();
    let strip = a.overview.strip.expect("drawn");
    let plot = a.plot_frames.iter().find_map(|(_, r)| *r).expect("a plot");
    assert_eq!((strip.left(), strip.right()), (plot.left(), plot.right()), "over the plots' time axis");
    let drawn =
        a.panes.arrangement.panes.iter().filter(|p| p.series.iter().any(|k| a.panes.arrangement.is_visible(k))).count();
    assert_eq!(a.overview.bands.len(), drawn, "one lane per pane with a visible series");
    for (lane, rects) in a.overview.bands.iter().enumerate() {
        assert!(!rects.is_empty(), "lane {lane} is drawn");
        // Its series together cover the strip's width without holes: bands, not dots.
        let mut xs: Vec<(f32, f32)> = rects.iter().map(|r| (r.left(), r.right())).collect();
        xs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (mut covered, mut end) = (0.0, f32::NEG_INFINITY);
        for (l, r) in xs {
            covered += (r - l.max(end)).max(0.0);
            end = end.max(r);
        }
        assert!(covered > 0.97 * strip.width(), "lane {lane} covers {covered} of {}", strip.width());
        // Within the lane's own height.
        let h = strip.height() / a.overview.bands.len() as f32;
        let (top, bottom) = (strip.top() + lane as f32 * h, strip.top() + (lane + 1) as f32 * h);
        assert!(
            rects.iter().all(|r| r.top() >= top - 0.01 && r.bottom() <= bottom + 0.01),
            "lane {lane} stays in its lane"
        );
    }
}
