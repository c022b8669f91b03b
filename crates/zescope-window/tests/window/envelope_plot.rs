//! The plot path draws what the store's envelopes say, in real headless egui
//! frames: spikes reach the band's edge, pauses leave a hole, zoomed-in views
//! get a line through the exact samples, and each frame queries the range
//! egui_plot settles on.

use egui::epaint::{Mesh, Shape};
use egui::{Color32, Context, RawInput, Rect, pos2, vec2};
use egui_plot::Plot;
use zescope_model::view::TimeAxis;
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};
use zescope_window::envelope_plot::{EnvelopePlot, PlotFrame, PlotSeries, pixel_columns};

const MS: i64 = 1_000_000;
const RED: Color32 = Color32::from_rgb(200, 30, 30);

/// A series of the test drawn at its values (not an identifier's lane).
fn plotted(series: zescope_store::SeriesId, name: &str, color: Color32, steps: bool) -> PlotSeries {
    PlotSeries { series, name: name.into(), color, steps, identifier: false }
}

/// 20k samples at 1 kHz of a flat 1.0 with a 100.0 spike at sample 5000,
/// and a 5 s pause after sample 12000.
fn store() -> (Store, Vec<PlotSeries>) {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(StreamDesc {
        name: "t".into(),
        series: vec![SeriesDesc { name: "s".into(), unit: "u".into(), kind: SeriesKind::Gauge }],
    });
    let mut t = 0;
    for i in 0..20_000 {
        if i == 12_000 {
            store.mark_gap(id);
            t += 5_000 * MS;
        }
        store.append(id, &[t], &[if i == 5_000 { 100.0 } else { 1.0 }]).unwrap();
        t += MS;
    }
    let series = vec![plotted(store.series_id(id, 0).unwrap(), "s", RED, false)];
    (store, series)
}

/// What a plot over `x` seconds and `y` shows, decided before `Plot::show`.
fn shows(x: (f64, f64), y: (f64, f64)) -> PlotFrame {
    PlotFrame { x: Some(x), y: Some(y), limit: None }
}

/// Run one 800 x 400 frame of a plot over `x` seconds (and tessellate it);
/// returns the shapes it painted.
fn frame(ctx: &Context, plot: &mut EnvelopePlot, store: &Store, series: &[PlotSeries], x: (f64, f64)) -> Vec<Shape> {
    let input =
        RawInput { screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(800.0, 400.0))), ..RawInput::default() };
    let out = ctx.run_ui(input, |ui| {
        plot.prepare(store, series, shows(x, (-10.0, 110.0)));
        Plot::new("t").show(ui, |pu| {
            pu.set_plot_bounds_x(x.0..=x.1);
            pu.set_plot_bounds_y(-10.0..=110.0);
            plot.add_to(pu, store);
        });
    });
    painted(out)
}

/// Two 800 x 400 frames of a plot over `x` seconds and `y` (the second laid out as the first
/// settled it): the shapes the second painted, and where its plot maps data on screen.
fn settled(
    ctx: &Context,
    plot: &mut EnvelopePlot,
    store: &Store,
    series: &[PlotSeries],
    x: (f64, f64),
    y: (f64, f64),
) -> (Vec<Shape>, egui_plot::PlotTransform) {
    let (mut shapes, mut to_screen) = (Vec::new(), None);
    for _ in 0..2 {
        let input = RawInput {
            screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(800.0, 400.0))),
            ..RawInput::default()
        };
        let out = ctx.run_ui(input, |ui| {
            plot.prepare(store, series, shows(x, y));
            let r = Plot::new("settled").show(ui, |pu| {
                pu.set_plot_bounds_x(x.0..=x.1);
                pu.set_plot_bounds_y(y.0..=y.1);
                plot.add_to(pu, store);
            });
            to_screen = Some(r.transform);
        });
        shapes = painted(out);
    }
    (shapes, to_screen.expect("a frame ran"))
}

/// The shapes of a frame's output, nested `Shape::Vec`s flattened.
fn painted(mut out: egui::FullOutput) -> Vec<Shape> {
    out.textures_delta.clear();
    fn flatten(s: Shape, out: &mut Vec<Shape>) {
        match s {
            Shape::Vec(v) => v.into_iter().for_each(|s| flatten(s, out)),
            s => out.push(s),
        }
    }
    let mut shapes = Vec::new();
    out.shapes.into_iter().for_each(|c| flatten(c.shape, &mut shapes));
    shapes
}

fn our_meshes(shapes: &[Shape]) -> Vec<&Mesh> {
    shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Mesh(m) if m.vertices.iter().any(|v| v.color == RED) => Some(&**m),
            _ => None,
        })
        .collect()
}

#[test]
fn the_band_reaches_the_spike_and_never_bridges_the_pause() {
    let (store, series) = store();
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let end = TimeAxis::of(&store).x(store.total_time_range().unwrap().1);
    let mut shapes = Vec::new();
    for _ in 0..2 {
        shapes = frame(&ctx, &mut plot, &store, &series, (0.0, end));
    }
    let meshes = our_meshes(&shapes);
    assert_eq!(meshes.len(), 1, "one band mesh per series");
    let mesh = meshes[0];
    let ys: Vec<f32> = mesh.vertices.iter().map(|v| v.pos.y).collect();
    let (top, bottom) = (ys.iter().cloned().fold(f32::MAX, f32::min), ys.iter().cloned().fold(f32::MIN, f32::max));
    assert!(bottom - top > 250.0, "the spike spans most of the 400 px plot: {top}..{bottom}");
    // The pause is 5 s of a 25 s view: no triangle may span it.
    let pause = (TimeAxis::of(&store).x(12_000 * MS - MS), TimeAxis::of(&store).x(12_000 * MS + 5_000 * MS));
    let xs: Vec<f32> = mesh.vertices.iter().map(|v| v.pos.x).collect();
    let x_max_before = xs.iter().cloned().filter(|&x| x < 400.0).fold(f32::MIN, f32::max);
    let x_min_after = xs.iter().cloned().filter(|&x| x > x_max_before).fold(f32::MAX, f32::min);
    assert!(x_min_after - x_max_before > 100.0, "a visible hole where the pause is ({pause:?})");
    for t in mesh.indices.chunks(3) {
        let tx: Vec<f32> = t.iter().map(|&i| mesh.vertices[i as usize].pos.x).collect();
        let (lo, hi) = (tx.iter().cloned().fold(f32::MAX, f32::min), tx.iter().cloned().fold(f32::MIN, f32::max));
        assert!(hi - lo < 20.0, "a triangle spans {lo}..{hi}");
    }
    // Dense columns: a band, no stroked path.
    assert!(
        !shapes.iter().any(|s| matches!(s, Shape::Path(p) if p.stroke.color == egui::epaint::ColorMode::Solid(RED)))
    );
}

#[test]
fn zoomed_in_it_draws_a_line_through_the_samples() {
    let (store, series) = store();
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let x = (TimeAxis::of(&store).x(4_990 * MS), TimeAxis::of(&store).x(5_010 * MS));
    let mut shapes = Vec::new();
    for _ in 0..2 {
        shapes = frame(&ctx, &mut plot, &store, &series, x);
    }
    let lines: Vec<usize> = shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Path(p) if p.stroke.color == egui::epaint::ColorMode::Solid(RED) => Some(p.points.len()),
            _ => None,
        })
        .collect();
    assert_eq!(lines, vec![23], "21 samples in view plus one either side");
    // ~30 px between samples: each sample is also a dot (those just outside the view included).
    let dots = shapes.iter().filter(|s| matches!(s, Shape::Circle(c) if c.fill == RED)).count();
    assert_eq!(dots, 23, "a dot per sample when zoomed in this far");
    // At one sample per pixel there are none.
    let wide = frame(&ctx, &mut plot, &store, &series, (TimeAxis::of(&store).x(0), TimeAxis::of(&store).x(9_000 * MS)));
    assert!(!wide.iter().any(|s| matches!(s, Shape::Circle(_))), "no dots at one sample per pixel");
}

#[test]
fn each_frame_queries_the_range_egui_plot_settles_on() {
    let (store, series) = store();
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    for (a, b) in [(0.0, 10.0), (2.0, 3.0), (1.0, 30.0)] {
        frame(&ctx, &mut plot, &store, &series, (a, b));
        let (t0, t1, columns) = plot.last_query().unwrap();
        assert_eq!((t0, t1), (TimeAxis::of(&store).ns(a), TimeAxis::of(&store).ns(b)), "the same frame's range");
        assert!((600..=800).contains(&columns), "about one column per pixel: {columns}");
    }
}

#[test]
fn pixel_columns_are_physical_pixels() {
    assert_eq!(pixel_columns(100.4, 2.0), 201);
    assert_eq!(pixel_columns(0.0, 1.0), 1);
    assert_eq!(pixel_columns(f32::NAN, 1.0), 1);
    assert_eq!(pixel_columns(f32::INFINITY, 1.0), 1);
}

#[test]
fn band_meshes_are_reused_across_frames() {
    let (store, series) = store();
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let ptr = |shapes: &[Shape]| our_meshes(shapes)[0].vertices.as_ptr();
    // The first frames settle egui_plot's axes, and so the plot's rect: a frame whose rect is not
    // the last frame's is meshed afresh, by its items (`envelope_plot`'s module docs).
    for _ in 0..2 {
        frame(&ctx, &mut plot, &store, &series, (0.0, 20.0));
    }
    let first = ptr(&frame(&ctx, &mut plot, &store, &series, (0.0, 20.0)));
    let second = ptr(&frame(&ctx, &mut plot, &store, &series, (0.0, 20.5)));
    assert_eq!(first, second, "the band mesh was reallocated");
}

#[test]
fn extreme_values_and_ranges_draw_without_panicking() {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(StreamDesc {
        name: "t".into(),
        series: vec![SeriesDesc { name: "s".into(), unit: "u".into(), kind: SeriesKind::Gauge }],
    });
    let vals = [f64::MAX, f64::MIN, f64::NAN, f64::INFINITY, 1e300, -1e300, 0.0];
    let ts: Vec<i64> = (0..vals.len() as i64).map(|i| i * MS).collect();
    store.append(id, &ts, &vals).unwrap();
    let series = vec![plotted(store.series_id(id, 0).unwrap(), "s", RED, false)];
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    for x in [(0.0, 0.01), (-1e12, 1e12), (f64::MIN, f64::MAX), (0.003, 0.003)] {
        for _ in 0..2 {
            frame(&ctx, &mut plot, &store, &series, x);
        }
    }
}

/// Values around 1e9 (a rate in ns/s) on an axis of a few hundred points: a unit is 1e-7 points,
/// which an f32 difference of two screen positions rounds to zero. The band must still span the
/// plot from the low values to the high ones.
#[test]
fn large_values_map_to_the_full_plot_height() {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(StreamDesc {
        name: "t".into(),
        series: vec![SeriesDesc { name: "rate".into(), unit: "ns/s".into(), kind: SeriesKind::Gauge }],
    });
    for i in 0..2000i64 {
        let v = if (i / 500) % 2 == 0 { 1.0e7 } else { 9.5e8 };
        store.append(id, &[i * MS], &[v]).unwrap();
    }
    let series = vec![plotted(store.series_id(id, 0).unwrap(), "rate", RED, false)];
    let ctx = Context::default();
    let input =
        RawInput { screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(800.0, 400.0))), ..RawInput::default() };
    let mut plot = EnvelopePlot::new();
    let mut ys = Vec::new();
    for _ in 0..2 {
        let out = ctx.run_ui(input.clone(), |ui| {
            plot.prepare(&store, &series, shows((0.0, 2.0), (0.0, 1.0e9)));
            Plot::new("big").show(ui, |pu| {
                pu.set_plot_bounds_x(0.0..=2.0);
                pu.set_plot_bounds_y(0.0..=1.0e9);
                plot.add_to(pu, &store);
            });
        });
        let shapes = painted(out);
        ys = our_meshes(&shapes).iter().flat_map(|m| m.vertices.iter().map(|v| v.pos.y)).collect();
    }
    let (lo, hi) = ys.iter().fold((f32::MAX, f32::MIN), |(a, b), &y| (a.min(y), b.max(y)));
    assert!(hi - lo > 250.0, "the band spans {} points of a ~370-point plot", hi - lo);
}

/// A view that stays put (live mode before the window is full, or zoomed over "now") must show
/// samples appended after the previous frame: the cached envelopes follow the store's version.
#[test]
fn data_appended_inside_an_unchanged_range_appears_next_frame() {
    let (mut store, series) = store();
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let x = (0.0, 40.0);
    let top = |shapes: &[Shape]| {
        our_meshes(shapes).iter().flat_map(|m| m.vertices.iter().map(|v| v.pos.y)).fold(f32::MAX, f32::min)
    };
    frame(&ctx, &mut plot, &store, &series, x);
    let before = top(&frame(&ctx, &mut plot, &store, &series, x));
    let id = series[0].series.stream();
    let (_, last) = store.time_range(id).unwrap();
    store.append(id, &[last + 10 * MS, last + 11 * MS], &[1.0, 105.0]).unwrap();
    let after = top(&frame(&ctx, &mut plot, &store, &series, x));
    assert!(after < before - 5.0, "the new, higher sample raised the band's top ({before} -> {after})");
}

/// A run with a pause in it (0–2 s, 3–4 s at 100 ms, stepping between 10 and 20), stopped, and a
/// second run started a second later (5–7 s at 90), drawn as the window draws runs: one item each
/// in the same colour. Zoomed in (a line with a dot per sample) and out (about one sample per
/// column), no band triangle, line segment or step edge crosses either gap, and no step edge joins
/// the last value before a gap to the first after it.
#[test]
fn nothing_is_drawn_across_a_pause_or_a_stop_and_start() {
    let mut store = Store::new(1 << 30);
    let desc = || StreamDesc {
        name: "t".into(),
        series: vec![SeriesDesc { name: "s".into(), unit: "u".into(), kind: SeriesKind::Gauge }],
    };
    let run1 = store.begin_stream(desc());
    for i in 0..=30i64 {
        if i == 21 {
            store.mark_gap(run1);
        }
        let t = if i <= 20 { i * 100 * MS } else { 3_000 * MS + (i - 21) * 100 * MS };
        store.append(run1, &[t], &[if i % 2 == 0 { 10.0 } else { 20.0 }]).unwrap();
    }
    store.end_stream(run1);
    let run2 = store.begin_stream(desc());
    for i in 0..=20i64 {
        store.append(run2, &[5_000 * MS + i * 100 * MS], &[90.0]).unwrap();
    }
    let series: Vec<PlotSeries> = [run1, run2]
        .iter()
        .enumerate()
        .map(|(n, &s)| PlotSeries {
            series: store.series_id(s, 0).unwrap(),
            name: format!("s#{n}"),
            color: RED,
            steps: false,
            identifier: false,
        })
        .collect();
    // The gaps' middles, in seconds: a pause in run 1 (after 2.0 s), the stop (after 4.0 s).
    let gaps = [2.5, 4.5];
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    for (x, lines) in [((0.0, 7.0), true), ((-20.0, 27.0), false)] {
        let (shapes, t) = settled(&ctx, &mut plot, &store, &series, x, (0.0, 100.0));
        let gap_xs: Vec<f32> = gaps.iter().map(|&g| t.position_from_point_x(g)).collect();
        let crosses = |xs: &[f32]| {
            let (lo, hi) = xs.iter().fold((f32::MAX, f32::MIN), |(a, b), &x| (a.min(x), b.max(x)));
            gap_xs.iter().any(|&g| lo < g && g < hi)
        };
        let mut paths = 0;
        for s in &shapes {
            match s {
                Shape::Mesh(m) if m.vertices.iter().any(|v| v.color == RED) => {
                    for tri in m.indices.chunks(3) {
                        let xs: Vec<f32> = tri.iter().map(|&i| m.vertices[i as usize].pos.x).collect();
                        assert!(!crosses(&xs), "a band triangle or step edge over a gap at {x:?}: {xs:?}");
                    }
                }
                Shape::Path(p) if p.stroke.color == egui::epaint::ColorMode::Solid(RED) => {
                    paths += 1;
                    for seg in p.points.windows(2) {
                        assert!(!crosses(&[seg[0].x, seg[1].x]), "a line over a gap at {x:?}: {seg:?}");
                    }
                }
                _ => {}
            }
        }
        if lines {
            assert_eq!(paths, 3, "one line per gap-free stretch when zoomed in");
        }
        // And the drawing is there either side of each gap: the band reaches close to it.
        let band_xs: Vec<f32> = our_meshes(&shapes).iter().flat_map(|m| m.vertices.iter().map(|v| v.pos.x)).collect();
        for &g in &gap_xs {
            let px_per_s = (t.position_from_point_x(1.0) - t.position_from_point_x(0.0)).abs();
            let near = 0.6 * px_per_s + 2.0;
            assert!(band_xs.iter().any(|&b| b < g && g - b < near), "drawn up to the gap at {g} ({x:?})");
            assert!(band_xs.iter().any(|&b| b > g && b - g < near), "drawn from the gap at {g} on ({x:?})");
        }
    }
}

/// Pixel centres that some triangle of `mesh` covers (screen points, one pixel per point).
pub(crate) fn covered_pixels(mesh: &Mesh) -> Vec<(f32, f32)> {
    let inside = |p: egui::Pos2, [a, b, c]: [egui::Pos2; 3]| {
        let cross = |u: egui::Pos2, v: egui::Pos2| (v.x - u.x) * (p.y - u.y) - (v.y - u.y) * (p.x - u.x);
        let (d1, d2, d3) = (cross(a, b), cross(b, c), cross(c, a));
        !((d1 < 0.0 || d2 < 0.0 || d3 < 0.0) && (d1 > 0.0 || d2 > 0.0 || d3 > 0.0))
    };
    let mut out = Vec::new();
    for t in mesh.indices.chunks(3) {
        let tri = [0, 1, 2].map(|k| mesh.vertices[t[k] as usize].pos);
        let (lo, hi) = tri.iter().fold((tri[0], tri[0]), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
        for y in (lo.y - 0.5).ceil() as i32..=(hi.y - 0.5).floor() as i32 {
            for x in (lo.x - 0.5).ceil() as i32..=(hi.x - 0.5).floor() as i32 {
                let p = pos2(x as f32 + 0.5, y as f32 + 0.5);
                if inside(p, tri) {
                    out.push((p.x, p.y));
                }
            }
        }
    }
    out
}

mod shapes;
