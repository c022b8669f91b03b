//! The frame's contract (module docs): what [`EnvelopePlot`] prepares before `Plot::show` is what
//! its items hand over while egui_plot settles on the predicted bounds, and where it does not (a
//! drag inside `show`, a resize) each item draws its own series for the final bounds, in the same
//! frame.

use std::sync::Arc;

use egui::epaint::Mesh;
use egui::{Context, Event, Modifiers, PointerButton, RawInput, Rect, Shape, pos2, vec2};
use egui_plot::{Plot, PlotUi};

use super::draw::{Drawn, Style};
use super::*;
use zescope_model::view::TimeAxis;
use zescope_store::{SeriesDesc, SeriesKind, StreamDesc};

const MS: i64 = 1_000_000;
const COLORS: [Color32; 2] = [Color32::from_rgb(200, 30, 30), Color32::from_rgb(30, 30, 200)];

/// Two gauges of `n` samples at 1 kHz: a slow wave and a saw.
fn store(n: usize) -> (Store, Vec<PlotSeries>) {
    let mut store = Store::new(1 << 30);
    let desc = |s: usize| SeriesDesc { name: format!("s{s}"), unit: "u".into(), kind: SeriesKind::Gauge };
    let id = store.begin_stream(StreamDesc { name: "t".into(), series: (0..2).map(desc).collect() });
    let (mut ts, mut vals) = (Vec::new(), Vec::new());
    for i in 0..n {
        ts.push(i as i64 * MS);
        vals.extend([(i as f64 * 3e-3).sin() * 10.0 + 20.0, (i % 97) as f64 * 0.1]);
        if ts.len() == 65_536 || i + 1 == n {
            store.append(id, &ts, &vals).unwrap();
            ts.clear();
            vals.clear();
        }
    }
    let series = (0..2)
        .map(|s| PlotSeries {
            series: store.series_id(id, s).unwrap(),
            name: format!("s{s}"),
            color: COLORS[s],
            steps: false,
            identifier: false,
        })
        .collect();
    (store, series)
}

/// What a frame painted of the series, and the transform egui_plot settled on.
struct Shown {
    meshes: Vec<Arc<Mesh>>,
    lines: Vec<Shape>,
    transform: PlotTransform,
}

/// One frame `size` points large: `plot` prepared for `frame` before `Plot::show`; inside it,
/// `bounds` sets the plot's bounds (as the window sets the time view's range) before the items
/// are added. `events` are the frame's input.
fn show(
    ctx: &Context,
    plot: &mut EnvelopePlot,
    (store, series): (&Store, &[PlotSeries]),
    size: egui::Vec2,
    frame: PlotFrame,
    events: Vec<Event>,
) -> Shown {
    let input =
        RawInput { screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), size)), events, ..RawInput::default() };
    let mut transform = None;
    let mut out = ctx.run_ui(input, |ui| {
        plot.prepare(store, series, frame);
        let r = Plot::new("p").allow_scroll(false).show(ui, |pu: &mut PlotUi<'_>| {
            if let Some((a, b)) = frame.x {
                pu.set_plot_bounds_x(a..=b);
            }
            // As the window's panes do (`plots/envelopes.rs`).
            match frame.y.or_else(|| fixed_y_range(&plot.data_bounds())) {
                Some((lo, hi)) => {
                    pu.set_auto_bounds([false, false]);
                    pu.set_plot_bounds_y(lo..=hi);
                }
                None => pu.set_auto_bounds([false, true]),
            }
            plot.add_to(pu, store);
        });
        transform = Some(r.transform);
    });
    out.textures_delta.clear();
    fn flatten(s: Shape, out: &mut Vec<Shape>) {
        match s {
            Shape::Vec(v) => v.into_iter().for_each(|s| flatten(s, out)),
            s => out.push(s),
        }
    }
    let mut shapes = Vec::new();
    out.shapes.into_iter().for_each(|c| flatten(c.shape, &mut shapes));
    let ours = |c: Color32| COLORS.contains(&c);
    let mut shown = Shown { meshes: Vec::new(), lines: Vec::new(), transform: transform.expect("the plot was shown") };
    for s in shapes {
        match s {
            Shape::Mesh(m) if m.vertices.iter().any(|v| ours(v.color)) => shown.meshes.push(m),
            Shape::Path(ref p) if matches!(p.stroke.color, egui::epaint::ColorMode::Solid(c) if ours(c)) => {
                shown.lines.push(s)
            }
            Shape::Circle(ref c) if ours(c.fill) => shown.lines.push(s),
            _ => {}
        }
    }
    shown
}

fn x_frame(x: (f64, f64), y: Option<(f64, f64)>) -> PlotFrame {
    PlotFrame { x: Some(x), y, limit: None }
}

/// Did every item hand over the mesh its plot made before `show`?
fn handed_over(plot: &EnvelopePlot, shown: &Shown) -> bool {
    shown.meshes.len() == plot.drawn.len()
        && shown.meshes.iter().zip(&plot.drawn).all(|(m, d)| d.mesh.as_ref().is_some_and(|d| Arc::ptr_eq(m, d)))
}

/// What each series of `envs` draws against `transform`, drawn alone.
fn drawn_alone(store: &Store, series: &[PlotSeries], envs: &mut [Envelope], transform: &PlotTransform) -> Shown {
    let mut want = Shown { meshes: Vec::new(), lines: Vec::new(), transform: *transform };
    for (s, env) in series.iter().zip(envs) {
        let mut d = Drawn::default();
        let style = Style { color: s.color, width: LINE_WIDTH, steps: s.steps, lane: None };
        draw::series(store, TimeAxis::of(store), s.series, env, style, transform, &mut d);
        want.meshes.extend(d.mesh.filter(|m| !m.is_empty()));
        want.lines.append(&mut d.lines);
    }
    want
}

fn assert_same_drawing(got: &Shown, want: &Shown, what: &str) {
    assert_eq!(got.meshes.len(), want.meshes.len(), "{what}: band meshes");
    for (a, b) in got.meshes.iter().zip(&want.meshes) {
        assert_eq!(a.indices, b.indices, "{what}");
        assert_eq!(a.vertices.len(), b.vertices.len(), "{what}");
        assert!(a.vertices.iter().zip(&b.vertices).all(|(p, q)| p.pos == q.pos && p.color == q.color), "{what}");
    }
    assert_eq!(got.lines, want.lines, "{what}: lines and dots");
}

#[test]
fn items_hand_over_what_was_meshed_before_show_when_the_prediction_holds() {
    let (store, series) = store(20_000);
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let size = vec2(800.0, 400.0);
    // Fitted to the data (egui_plot's auto bounds), then held at a y range; zoomed in far enough
    // for lines and dots.
    for (x, y) in [((2.0, 12.0), None), ((2.0, 12.0), Some((-5.0, 40.0))), ((3.0, 3.05), None)] {
        for _ in 0..2 {
            show(&ctx, &mut plot, (&store, &series), size, x_frame(x, y), Vec::new());
        }
        let shown = show(&ctx, &mut plot, (&store, &series), size, x_frame(x, y), Vec::new());
        assert!(handed_over(&plot, &shown), "x {x:?}, y {y:?}: an item drew for itself");
        let meshed = plot.meshed.expect("meshed before show");
        assert!(item::same_transform(&meshed, &shown.transform), "{meshed:?} / {:?}", shown.transform);
        if y.is_none() {
            // Auto bounds fit this frame's envelopes, with egui_plot's margin (for data that
            // never is below 0, a sliver below 0 of the top instead: `fixed_y_range`).
            let (d, b) = (plot.data_bounds(), shown.transform.bounds());
            let pad = f64::from(AUTO_MARGIN) * d.height();
            let top = d.max()[1] + pad;
            let lo = if d.min()[1] >= 0.0 && d.min()[1] - pad < 0.0 { -0.03 * top } else { d.min()[1] - pad };
            assert!(d.height() > 1.0 && b.min()[1] == lo && b.max()[1] == top, "{b:?}");
        }
        assert_eq!(
            plot.last_query().map(|q| (q.0, q.1)),
            Some((TimeAxis::of(&store).ns(x.0), TimeAxis::of(&store).ns(x.1)))
        );
        if x.1 - x.0 < 1.0 {
            assert!(shown.lines.len() > 2 * 50, "a line and a dot per sample: {}", shown.lines.len());
        }
    }
}

#[test]
fn a_drag_inside_show_is_drawn_for_the_final_range_that_frame_and_predicted_the_next() {
    let (store, series) = store(20_000);
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let size = vec2(800.0, 400.0);
    let x = (2.0, 12.0);
    let at = pos2(400.0, 200.0);
    let press =
        |pressed| Event::PointerButton { pos: at, button: PointerButton::Primary, pressed, modifiers: Modifiers::NONE };
    let data = (&store, &series[..]);
    show(&ctx, &mut plot, data, size, x_frame(x, None), Vec::new());
    show(&ctx, &mut plot, data, size, x_frame(x, None), vec![Event::PointerMoved(at), press(true)]);
    // The pointer moves 60 points left with the button held: egui_plot pans the plot inside
    // `show`, after the series were queried and meshed for `x`.
    let dragged = show(&ctx, &mut plot, data, size, x_frame(x, None), vec![Event::PointerMoved(at - vec2(60.0, 0.0))]);
    let moved = dragged.transform.bounds().range_x();
    let moved = (*moved.start(), *moved.end());
    assert!(moved.0 > x.0 + 0.5 && (moved.1 - moved.0 - (x.1 - x.0)).abs() < 1e-9, "a pan to {moved:?}");
    assert!(!handed_over(&plot, &dragged), "the meshes made for the predicted range are not drawn");
    let (t0, t1, columns) = plot.last_query().expect("queried before show");
    assert_eq!(
        (t0, t1),
        (TimeAxis::of(&store).ns(x.0), TimeAxis::of(&store).ns(x.1)),
        "queried for the predicted range"
    );
    // Each item drew its own series for the range shown, at the same pixel columns.
    let (a, b) = (TimeAxis::of(&store).ns(moved.0), TimeAxis::of(&store).ns(moved.1));
    let mut envs = vec![Envelope::new(); series.len()];
    for (s, env) in series.iter().zip(&mut envs) {
        store.draw_envelopes(&[s.series], a, b, columns, std::slice::from_mut(env));
    }
    assert_same_drawing(&dragged, &drawn_alone(&store, &series, &mut envs, &dragged.transform), "the dragged frame");
    // The next frame's time view holds the moved range (the window's `TimeView::user_moved`):
    // the prediction holds again.
    let next = show(&ctx, &mut plot, data, size, x_frame(moved, None), vec![press(false)]);
    assert!(handed_over(&plot, &next), "the frame after the drag was meshed before show");
    assert_eq!(plot.last_query().map(|q| (q.0, q.1)), Some((a, b)));
}

#[test]
fn a_resized_plot_is_drawn_at_the_last_columns_then_at_its_new_width() {
    let (store, series) = store(20_000);
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let x = (2.0, 12.0);
    let data = (&store, &series[..]);
    // (egui_plot settles its axes' widths in the first frames.)
    let mut last = None;
    for _ in 0..3 {
        last = Some(show(&ctx, &mut plot, data, vec2(800.0, 400.0), x_frame(x, None), Vec::new()));
    }
    let wide = pixel_columns(last.expect("shown").transform.frame().width(), ctx.pixels_per_point());
    assert_eq!(plot.last_query().expect("queried").2, wide);
    let narrow = show(&ctx, &mut plot, data, vec2(500.0, 400.0), x_frame(x, None), Vec::new());
    assert!(!handed_over(&plot, &narrow), "meshed for the old rect");
    assert_eq!(plot.last_query().expect("queried").2, wide, "the columns of the last frame's width");
    // Each item meshed its envelope (the one queried before show) for the new rect.
    let mut envs = plot.envs.clone();
    assert_same_drawing(&narrow, &drawn_alone(&store, &series, &mut envs, &narrow.transform), "the resized frame");
    let after = show(&ctx, &mut plot, data, vec2(500.0, 400.0), x_frame(x, None), Vec::new());
    assert!(handed_over(&plot, &after), "the next frame predicts the new rect");
    let columns = plot.last_query().expect("queried").2;
    assert_eq!(columns, pixel_columns(after.transform.frame().width(), ctx.pixels_per_point()));
    assert!(columns + 200 < wide, "{columns} columns after {wide}");
}

#[test]
fn hover_points_come_from_the_exact_envelope_which_the_next_frame_draws() {
    // ~6,000 samples a pixel column: the frame's columns come from the drawing bands.
    let (store, series) = store(3_000_000);
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let size = vec2(500.0, 300.0);
    let end = TimeAxis::of(&store).x(store.total_time_range().expect("data").1);
    let frame = x_frame((0.0, end), Some((-1.0, 40.0)));
    let data = (&store, &series[..]);
    for _ in 0..2 {
        show(&ctx, &mut plot, data, size, frame, Vec::new());
    }
    assert!(plot.envs.iter().all(|e| !e.is_exact()), "banded columns");
    assert!(plot.exact.iter().all(|e| e.get().is_none()));
    // The pointer over the plot, far from both series: egui_plot asks every item for its hover
    // points.
    let pointer = Event::PointerMoved(pos2(250.0, 20.0));
    let over = show(&ctx, &mut plot, data, size, frame, vec![pointer.clone()]);
    assert!(handed_over(&plot, &over));
    for (s, (env, exact)) in series.iter().zip(plot.envs.iter().zip(&plot.exact)) {
        let exact = exact.get().expect("hover asked for the exact envelope");
        let (t0, t1, columns) = env.request();
        let mut want = Envelope::new();
        store.envelope(s.series, t0, t1, columns, &mut want);
        assert!(exact.is_exact() && exact.columns().iter().any(|c| c.mean.is_finite()));
        assert!(exact.columns().len() == want.columns().len() && !want.columns().is_empty());
        assert!(exact.columns().iter().zip(want.columns()).all(|(a, b)| a.bits() == b.bits()));
    }
    // The same view next frame is drawn from the exact columns hover read.
    show(&ctx, &mut plot, data, size, frame, vec![pointer]);
    assert!(plot.envs.iter().all(Envelope::is_exact), "drawn from the exact envelopes");
}

#[test]
fn the_newest_samples_at_a_views_right_edge_are_drawn_a_line_wide() {
    // 2 s at 6.25 kHz, the last seven samples far above the rest (a phase that began 1 ms
    // before the recording ended), the view fitted to the data: the columns holding them are
    // slivers at the plot's right edge, narrower than a pixel, which no-one would see.
    let mut store = Store::new(1 << 30);
    let desc = SeriesDesc { name: "s".into(), unit: "u".into(), kind: SeriesKind::Gauge };
    let id = store.begin_stream(StreamDesc { name: "t".into(), series: vec![desc] });
    let n = 12_500;
    let ts: Vec<i64> = (0..n).map(|i| i * 160_000).collect();
    let vals: Vec<f64> = (0..n).map(|i| if i >= n - 7 { 95.0 } else { 3.0 }).collect();
    store.append(id, &ts, &vals).unwrap();
    let series = [PlotSeries {
        series: store.series_id(id, 0).unwrap(),
        name: "s".into(),
        color: COLORS[0],
        steps: false,
        identifier: false,
    }];
    let (a, b) = store.total_time_range().unwrap();
    let axis = TimeAxis::of(&store);
    let frame = x_frame((axis.x(a), axis.x(b)), Some((0.0, 100.0)));
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    for size in [vec2(843.3, 120.0), vec2(846.0, 120.0), vec2(1600.7, 300.0)] {
        let mut shown = show(&ctx, &mut plot, (&store, &series[..]), size, frame, Vec::new());
        for _ in 0..2 {
            shown = show(&ctx, &mut plot, (&store, &series[..]), size, frame, Vec::new());
        }
        let right = shown.transform.frame().right();
        let y = |v: f64| shown.transform.position_from_point(&egui_plot::PlotPoint::new(0.0, v)).y;
        // The mesh reaches 95 at least a line's width (1.5 points) inside the right edge.
        let reach = shown.meshes.iter().flat_map(|m| m.vertices.iter()).filter(|v| v.pos.y <= y(94.0));
        let leftmost = reach.map(|v| v.pos.x).fold(f32::INFINITY, f32::min);
        assert!(leftmost <= right - 1.5, "at {size:?}: 95 is drawn from x {leftmost}, the plot ends at {right}");
    }
}
