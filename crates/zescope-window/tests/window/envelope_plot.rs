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
        let mut shapes = Vec::new();
        let mut to_screen = None;
        for _ in 0..2 {
            let input = RawInput {
                screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(800.0, 400.0))),
                ..RawInput::default()
            };
            let out = ctx.run_ui(input, |ui| {
                plot.prepare(&store, &series, shows(x, (0.0, 100.0)));
                let r = Plot::new("gaps").show(ui, |pu| {
                    pu.set_plot_bounds_x(x.0..=x.1);
                    pu.set_plot_bounds_y(0.0..=100.0);
                    plot.add_to(pu, &store);
                });
                to_screen = Some(r.transform);
            });
            shapes = painted(out);
        }
        let t = to_screen.unwrap();
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

/// Distance from `p` to the polyline through `pts`.
fn distance_to_line(p: (f32, f32), pts: &[(f32, f32)]) -> f32 {
    pts.windows(2)
        .map(|w| {
            let ((ax, ay), (bx, by)) = (w[0], w[1]);
            let (dx, dy) = (bx - ax, by - ay);
            let len2 = dx * dx + dy * dy;
            let k = if len2 > 0.0 { (((p.0 - ax) * dx + (p.1 - ay) * dy) / len2).clamp(0.0, 1.0) } else { 0.0 };
            ((p.0 - ax - k * dx).powi(2) + (p.1 - ay - k * dy).powi(2)).sqrt()
        })
        .fold(f32::MAX, f32::min)
}

/// Zoomed in past a sample per pixel column, a quantity is drawn as the line through its samples,
/// nothing else: no vertical edge at a sample back toward the previous sample's value (a
/// monotonic counter got a downward needle at every sample, a power step one back to the old
/// level), as exported images draw it. A state keeps its steps: its value holds, then steps.
#[test]
fn zoomed_in_a_quantity_draws_only_its_line_a_state_its_steps() {
    for kind in [SeriesKind::Gauge, SeriesKind::State] {
        let mut store = Store::new(1 << 30);
        let id = store.begin_stream(StreamDesc {
            name: "t".into(),
            series: vec![SeriesDesc { name: "s".into(), unit: "u".into(), kind }],
        });
        // An energy counter rising 10 per 100 ms sample, then a power step down from 180 to 60.
        let value = |i: i64| {
            if i < 15 {
                10.0 * i as f64
            } else if i < 25 {
                180.0
            } else {
                60.0
            }
        };
        for i in 0..40i64 {
            store.append(id, &[i * 100 * MS], &[value(i)]).unwrap();
        }
        let series = vec![plotted(store.series_id(id, 0).unwrap(), "s", RED, kind == SeriesKind::State)];
        let ctx = Context::default();
        let mut plot = EnvelopePlot::new();
        let x = (0.0, 4.0);
        let (mut shapes, mut to_screen) = (Vec::new(), None);
        for _ in 0..2 {
            let input = RawInput {
                screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(800.0, 400.0))),
                ..RawInput::default()
            };
            let out = ctx.run_ui(input, |ui| {
                plot.prepare(&store, &series, shows(x, (0.0, 200.0)));
                let r = Plot::new("needles").show(ui, |pu| {
                    pu.set_plot_bounds_x(x.0..=x.1);
                    pu.set_plot_bounds_y(0.0..=200.0);
                    plot.add_to(pu, &store);
                });
                to_screen = Some(r.transform);
            });
            shapes = painted(out);
        }
        let t = to_screen.unwrap();
        let at = |i: i64, v: f64| {
            (t.position_from_point_x(TimeAxis::of(&store).x(i * 100 * MS)), t.position_from_point_y(v))
        };
        // The line a user expects: through the samples (a quantity), or holding each value until
        // the next sample and stepping there (a state).
        let mut line = Vec::new();
        for i in 0..40i64 {
            if kind == SeriesKind::State && i > 0 {
                line.push(at(i, value(i - 1)));
            }
            line.push(at(i, value(i)));
        }
        let pixels: Vec<(f32, f32)> = our_meshes(&shapes).iter().flat_map(|m| covered_pixels(m)).collect();
        assert!(pixels.len() > 500, "{kind:?}: the band is drawn ({} pixels)", pixels.len());
        let stray: Vec<_> = pixels.iter().filter(|&&p| distance_to_line(p, &line) > 2.5).collect();
        assert!(
            stray.is_empty(),
            "{kind:?}: {} pixels off the line, e.g. {:?}",
            stray.len(),
            &stray[..stray.len().min(5)]
        );
        if kind == SeriesKind::State {
            // The step from 180 to 60 at sample 25 is drawn as a vertical edge.
            let (sx, top) = at(25, 180.0);
            let (_, bottom) = at(25, 60.0);
            let edge = pixels.iter().filter(|&&(px, py)| (px - sx).abs() < 2.0 && py > top + 5.0 && py < bottom - 5.0);
            assert!(edge.count() > 20, "{kind:?}: the step's vertical edge is drawn");
        }
    }
}

/// About a sample per pixel, with a stretch of no samples (the sampler late, no gap marked) that
/// ends in a column holding a step: the stretch is crossed by a line, not by a filled wedge from
/// the last value to the step's whole height (exported images draw the line).
#[test]
fn a_hole_in_dense_samples_is_crossed_by_a_line_not_a_wedge() {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(StreamDesc {
        name: "t".into(),
        series: vec![SeriesDesc { name: "s".into(), unit: "u".into(), kind: SeriesKind::Gauge }],
    });
    // 1 kHz at 170 until 3 s, nothing until 5.5 s, then 50 (a step inside the first column) on.
    let mut value = Vec::new();
    for i in 0..8000i64 {
        if (3000..5500).contains(&i) {
            continue;
        }
        let v = if i < 3000 { 170.0 } else { 50.0 };
        store.append(id, &[i * MS], &[v]).unwrap();
        value.push((i, v));
    }
    let series = vec![plotted(store.series_id(id, 0).unwrap(), "s", RED, false)];
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let x = (0.0, 8.0);
    let (mut shapes, mut to_screen) = (Vec::new(), None);
    for _ in 0..2 {
        let input = RawInput {
            screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(800.0, 400.0))),
            ..RawInput::default()
        };
        let out = ctx.run_ui(input, |ui| {
            plot.prepare(&store, &series, shows(x, (0.0, 200.0)));
            let r = Plot::new("hole").show(ui, |pu| {
                pu.set_plot_bounds_x(x.0..=x.1);
                pu.set_plot_bounds_y(0.0..=200.0);
                plot.add_to(pu, &store);
            });
            to_screen = Some(r.transform);
        });
        shapes = painted(out);
    }
    let t = to_screen.unwrap();
    let pt = |i: i64, v: f64| (t.position_from_point_x(TimeAxis::of(&store).x(i * MS)), t.position_from_point_y(v));
    // The line a user expects: 170 up to 3 s, straight across the hole to 50 at 5.5 s, 50 on.
    let line = [pt(0, 170.0), pt(2999, 170.0), pt(5500, 50.0), pt(7999, 50.0)];
    let pixels: Vec<(f32, f32)> = our_meshes(&shapes).iter().flat_map(|m| covered_pixels(m)).collect();
    assert!(pixels.len() > 300, "the band is drawn ({} pixels)", pixels.len());
    let (hole_a, hole_b) = (pt(3100, 0.0).0, pt(5400, 0.0).0);
    let wedge: Vec<_> =
        pixels.iter().filter(|&&p| p.0 > hole_a && p.0 < hole_b && distance_to_line(p, &line) > 3.0).collect();
    assert!(
        wedge.is_empty(),
        "{} pixels of a wedge over the hole, e.g. {:?}",
        wedge.len(),
        &wedge[..wedge.len().min(5)]
    );
}

/// The metric tracer's kernel ids (a state in "kernel id", climbing by one per kernel) are
/// labels, not a quantity: drawn as one lane at the plot's mid-height where they have samples,
/// at a 10 s view and zoomed in, never as a line climbing with the ids' values.
#[test]
fn kernel_ids_are_drawn_as_a_lane_not_a_climbing_line() {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(StreamDesc {
        name: "t".into(),
        series: vec![SeriesDesc { name: "KernelStart".into(), unit: "kernel id".into(), kind: SeriesKind::State }],
    });
    for i in 0..10_000i64 {
        store.append(id, &[i * MS], &[5_000.0 + i as f64]).unwrap();
    }
    let series = vec![PlotSeries {
        series: store.series_id(id, 0).unwrap(),
        name: "s".into(),
        color: RED,
        steps: true,
        identifier: true,
    }];
    for x in [(0.0, 10.0), (4.0, 4.05)] {
        let ctx = Context::default();
        let mut plot = EnvelopePlot::new();
        let (mut shapes, mut frame) = (Vec::new(), None);
        for _ in 0..2 {
            let input = RawInput {
                screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(800.0, 400.0))),
                ..RawInput::default()
            };
            let out = ctx.run_ui(input, |ui| {
                plot.prepare(&store, &series, shows(x, (4_000.0, 16_000.0)));
                let r = Plot::new("ids").show(ui, |pu| {
                    pu.set_plot_bounds_x(x.0..=x.1);
                    pu.set_plot_bounds_y(4_000.0..=16_000.0);
                    plot.add_to(pu, &store);
                });
                frame = Some(*r.transform.frame());
            });
            shapes = painted(out);
        }
        let mid = frame.unwrap().center().y;
        let pixels: Vec<(f32, f32)> = our_meshes(&shapes).iter().flat_map(|m| covered_pixels(m)).collect();
        assert!(pixels.len() > 300, "{x:?}: drawn ({} pixels)", pixels.len());
        let off: Vec<_> = pixels.iter().filter(|p| (p.1 - mid).abs() > 2.5).collect();
        assert!(
            off.is_empty(),
            "{x:?}: {} pixels off the lane at y {mid}, e.g. {:?}",
            off.len(),
            &off[..off.len().min(5)]
        );
    }
}

/// KernelStart and KernelEnd in one pane: each its own lane (a third and two thirds down), not
/// one over the other.
#[test]
fn two_identifiers_get_two_lanes() {
    let mut store = Store::new(1 << 30);
    let desc = |n: &str| SeriesDesc { name: n.into(), unit: "kernel id".into(), kind: SeriesKind::State };
    let id = store.begin_stream(StreamDesc { name: "t".into(), series: vec![desc("KernelStart"), desc("KernelEnd")] });
    for i in 0..4_000i64 {
        store.append(id, &[i * MS], &[i as f64, i as f64]).unwrap();
    }
    let blue = Color32::from_rgb(30, 30, 200);
    let series = vec![
        PlotSeries {
            series: store.series_id(id, 0).unwrap(),
            name: "a".into(),
            color: RED,
            steps: true,
            identifier: true,
        },
        PlotSeries {
            series: store.series_id(id, 1).unwrap(),
            name: "b".into(),
            color: blue,
            steps: true,
            identifier: true,
        },
    ];
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let (mut shapes, mut frame) = (Vec::new(), None);
    for _ in 0..2 {
        let input = RawInput {
            screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(800.0, 400.0))),
            ..RawInput::default()
        };
        let out = ctx.run_ui(input, |ui| {
            plot.prepare(&store, &series, shows((0.0, 4.0), (0.0, 1.0)));
            let r = Plot::new("lanes").show(ui, |pu| {
                pu.set_plot_bounds_x(0.0..=4.0);
                pu.set_plot_bounds_y(0.0..=1.0);
                plot.add_to(pu, &store);
            });
            frame = Some(*r.transform.frame());
        });
        shapes = painted(out);
    }
    let f = frame.unwrap();
    for (color, share) in [(RED, 0.25), (blue, 0.75)] {
        let ys: Vec<f32> = shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Mesh(m) if m.vertices.iter().any(|v| v.color == color) => Some(covered_pixels(m)),
                _ => None,
            })
            .flatten()
            .map(|p| p.1)
            .collect();
        let want = f.top() + share * f.height();
        assert!(!ys.is_empty(), "{color:?} is drawn");
        assert!(ys.iter().all(|y| (y - want).abs() < 2.5), "{color:?} on its lane at {want}: {:?}", &ys[..5]);
    }
}
