//! Culling: columns above or below the plot change nothing that is drawn inside it.

use egui::epaint::Mesh;
use egui::{Pos2, Shape, pos2};

use super::draw::{ScreenMap, Style, run};
use super::*;
use zescope_model::view::TimeAxis;
use zescope_model::view::runs::gap_free_runs;
use zescope_store::EnvelopeColumn;

const STYLE: Style = Style { color: Color32::RED, width: LINE_WIDTH, steps: false, lane: None };

/// `n` columns `spacing` ns apart (`span` ns wide each) of a walk that wanders far above and below
/// the view, with jumps.
fn columns(n: usize, spacing: i64, span: i64) -> Vec<EnvelopeColumn> {
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut v = 50.0;
    (0..n)
        .map(|i| {
            let r = next();
            v += if r % 29 == 0 { (r % 1000) as f64 - 500.0 } else { (r % 41) as f64 - 20.0 };
            v = v.clamp(-600.0, 700.0);
            let spread = (next() % 30) as f64;
            let t = i as i64 * spacing;
            EnvelopeColumn {
                t_start: t,
                t_end: t + span,
                min: v,
                max: v + spread,
                mean: v + 0.5 * spread,
                count: 1,
                non_finite: 0,
                samples: 1,
                break_before: r % 97 == 0,
            }
        })
        .collect()
}

/// The band mesh of `cols` with the plot's visible y range `y_clip`: values 0..100 are screen
/// y 200..100, one screen point per 1000 ns.
fn band(cols: &[EnvelopeColumn], y_clip: (f32, f32)) -> Mesh {
    let map = ScreenMap { t_ref: 0, x_ref: 0.0, x_scale: 1e-3, v_ref: 0.0, y_ref: 200.0, y_scale: -1.0, y_clip };
    let (mut mesh, mut shapes, mut joins) = (Mesh::default(), Vec::new(), Vec::new());
    for r in gap_free_runs(cols) {
        assert!(run(STYLE, r, true, false, &map, &mut mesh, &mut shapes, &mut joins));
    }
    mesh
}

/// Pixel centres inside `y_clip` (and a margin left and right) that some triangle of `mesh` covers,
/// row by row. Each triangle tests only the pixels of its bounding box.
fn coverage(mesh: &Mesh, y_clip: (f32, f32), width: f32) -> Vec<(i32, i32)> {
    let inside = |p: Pos2, [a, b, c]: [Pos2; 3]| {
        let cross = |u: Pos2, v: Pos2| (v.x - u.x) * (p.y - u.y) - (v.y - u.y) * (p.x - u.x);
        let (d1, d2, d3) = (cross(a, b), cross(b, c), cross(c, a));
        !((d1 < 0.0 || d2 < 0.0 || d3 < 0.0) && (d1 > 0.0 || d2 > 0.0 || d3 > 0.0))
    };
    let (rows, cols) = (y_clip.0 as i32..y_clip.1 as i32, -4..width as i32 + 4);
    let mut covered = std::collections::BTreeSet::new();
    for t in mesh.indices.chunks(3) {
        let tri = [0, 1, 2].map(|k| mesh.vertices[t[k] as usize].pos);
        let (lo, hi) = tri.iter().fold((tri[0], tri[0]), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
        // Pixel centres x + 0.5 within [lo.x, hi.x]; likewise y.
        let xs = ((lo.x - 0.5).ceil() as i32).max(cols.start)..((hi.x - 0.5).floor() as i32 + 1).min(cols.end);
        let ys = ((lo.y - 0.5).ceil() as i32).max(rows.start)..((hi.y - 0.5).floor() as i32 + 1).min(rows.end);
        for y in ys {
            for x in xs.clone() {
                if inside(pos2(x as f32 + 0.5, y as f32 + 0.5), tri) {
                    covered.insert((y, x));
                }
            }
        }
    }
    covered.into_iter().map(|(y, x)| (x, y)).collect()
}

#[test]
fn culled_columns_change_no_pixel_inside_the_plot() {
    let clip = (100.0, 200.0);
    let everything = (f32::NEG_INFINITY, f32::INFINITY);
    // About a pixel apart (steps widen the strip's edges), then 4 px apart and 3 px wide (steps
    // are rectangles, columns span their width).
    for (spacing, span) in [(1_000, 0), (4_000, 3_000)] {
        let cols = columns(600, spacing, span);
        let width = (600 * spacing) as f32 * 1e-3;
        let (culled, full) = (band(&cols, clip), band(&cols, everything));
        assert!(
            culled.vertices.len() * 2 < full.vertices.len(),
            "most of the walk is out of view: {} of {} vertices kept",
            culled.vertices.len(),
            full.vertices.len()
        );
        let (seen, expected) = (coverage(&culled, clip, width), coverage(&full, clip, width));
        assert!(expected.len() > 1_000, "the walk crosses the view: {} pixels", expected.len());
        assert_eq!(seen, expected, "spacing {spacing} ns");
    }
}

#[test]
fn a_run_wholly_out_of_view_draws_nothing_one_reaching_in_draws_its_edge() {
    let flat = |t: i64, v: f64| EnvelopeColumn {
        t_start: t,
        t_end: t,
        min: v,
        max: v,
        mean: v,
        count: 1,
        non_finite: 0,
        samples: 1,
        break_before: false,
    };
    let clip = (100.0, 200.0);
    let above: Vec<_> = (0..50).map(|i| flat(i * 1_000, 900.0)).collect();
    assert!(band(&above, clip).is_empty(), "nothing of a run above the plot is meshed");
    assert!(band(&above[..1], clip).is_empty(), "nor of a lone column");
    // One column steps down into view: the step edge and the strip either side of it stay.
    let mut step = above.clone();
    step[25] = flat(25_000, 50.0);
    let mesh = band(&step, clip);
    let cov = coverage(&mesh, clip, 50.0);
    assert!(cov.contains(&(25, 150)) && cov.contains(&(25, 100)), "the step reaches into view: {cov:?}");
    assert!(mesh.vertices.len() <= 3 * 2 + 8, "only the step and its neighbours: {} vertices", mesh.vertices.len());
}

#[test]
fn a_sparse_run_of_banded_columns_asks_for_exact_ones_and_draws_nothing_first() {
    let map = ScreenMap {
        t_ref: 0,
        x_ref: 0.0,
        x_scale: 1e-3,
        v_ref: 0.0,
        y_ref: 200.0,
        y_scale: -1.0,
        y_clip: (0.0, 400.0),
    };
    // Columns 10 points apart: a line through their means is drawn.
    let mut cols = columns(40, 10_000, 0);
    cols.iter_mut().for_each(|c| c.break_before = false);
    let (mut mesh, mut shapes, mut joins) = (Mesh::default(), Vec::new(), Vec::new());
    assert!(!run(STYLE, &cols, false, false, &map, &mut mesh, &mut shapes, &mut joins), "banded columns have no means");
    assert!(mesh.is_empty() && shapes.is_empty(), "nothing is drawn from them");
    assert!(run(STYLE, &cols, true, false, &map, &mut mesh, &mut shapes, &mut joins));
    assert!(!mesh.is_empty() && shapes.iter().any(|s| matches!(s, Shape::Path(_))), "band and line from exact columns");
}

#[test]
fn a_state_is_drawn_as_steps_and_a_quantity_as_a_line_through_its_means() {
    let map = ScreenMap {
        t_ref: 0,
        x_ref: 0.0,
        x_scale: 1e-3,
        v_ref: 0.0,
        y_ref: 200.0,
        y_scale: -1.0,
        y_clip: (0.0, 400.0),
    };
    // A context id 7, 7, 9, 9 sampled every 10 points, then a column holding both 7 and 9.
    let col = |t: i64, lo: f64, hi: f64| EnvelopeColumn {
        t_start: t,
        t_end: t,
        min: lo,
        max: hi,
        mean: 0.5 * (lo + hi),
        count: 1 + u64::from(lo != hi),
        non_finite: 0,
        samples: 1 + u64::from(lo != hi),
        break_before: false,
    };
    let cols =
        [col(0, 7.0, 7.0), col(10_000, 7.0, 7.0), col(20_000, 9.0, 9.0), col(30_000, 9.0, 9.0), col(40_000, 7.0, 9.0)];
    let line = |steps: bool| {
        let (mut mesh, mut shapes, mut joins) = (Mesh::default(), Vec::new(), Vec::new());
        assert!(run(STYLE, &cols, true, steps, &map, &mut mesh, &mut shapes, &mut joins));
        let path = shapes.iter().find_map(|s| if let Shape::Path(p) = s { Some(p.points.clone()) } else { None });
        (path.expect("a line where sparse"), mesh)
    };
    let (steps, mesh) = line(true);
    // Every segment is flat or upright: the id holds until the next sample, then steps.
    assert!(steps.windows(2).all(|w| w[0].x == w[1].x || w[0].y == w[1].y), "{steps:?}");
    let ys: Vec<f32> = steps.iter().map(|p| p.y).collect();
    assert!(ys.iter().all(|&y| y == 193.0 || y == 191.0), "only the values 7 and 9, never their mean 8: {ys:?}");
    assert!(steps.contains(&pos2(20.0, 193.0)) && steps.contains(&pos2(20.0, 191.0)), "the step at the third sample");
    // The band holds each value across to the next column as well.
    let cov = coverage(&mesh, (180.0, 200.0), 45.0);
    assert!(cov.contains(&(15, 193)) && !cov.contains(&(15, 191)), "7 held between the second and third samples");
    // A quantity's line slopes through the column means (8 in the last column).
    let (sloped, _) = line(false);
    assert!(sloped.windows(2).any(|w| w[0].x != w[1].x && w[0].y != w[1].y), "{sloped:?}");
    assert!(sloped.iter().any(|p| p.y == 192.0), "the mean of 7 and 9: {sloped:?}");
}

#[test]
fn series_drawn_together_on_two_threads_equal_each_drawn_alone() {
    // 9 gauges x 4.5M samples over 1,050 columns: ~4,300 samples a column (drawing bands), 9,450
    // columns, enough to draw the two halves on two threads (`zescope_store::par`).
    use zescope_store::{SeriesDesc, SeriesKind, StreamDesc};
    let (k, n, cols) = (9usize, 4_500_000usize, 1_050usize);
    let series =
        (0..k).map(|s| SeriesDesc { name: format!("s{s}"), unit: "u".into(), kind: SeriesKind::Gauge }).collect();
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(StreamDesc { name: "t".into(), series });
    let mut row = vec![0.0; k];
    let (mut ts, mut vals) = (Vec::new(), Vec::new());
    for i in 0..n {
        row.iter_mut().enumerate().for_each(|(s, v)| *v = ((i * (s + 2)) % (97 + s)) as f64 + s as f64 * 50.0);
        ts.push(i as i64 * 1_000_000);
        vals.extend_from_slice(&row);
        if ts.len() == 65_536 || i + 1 == n {
            store.append(id, &ts, &vals).unwrap();
            ts.clear();
            vals.clear();
        }
    }
    let series: Vec<PlotSeries> = (0..k)
        .map(|s| PlotSeries {
            series: store.series_id(id, s).unwrap(),
            name: format!("s{s}"),
            color: Color32::from_gray(s as u8),
            steps: false,
            identifier: false,
        })
        .collect();
    assert!(zescope_store::par::worth_it(k * cols) || zescope_store::par::cores() == 1);
    // The plot's rect, as the last frame shown left it: one pixel column per point.
    let rect = egui::Rect::from_min_size(pos2(10.0, 20.0), egui::vec2(cols as f32, 400.0));
    let mut plot = EnvelopePlot { screen: Some((rect, 1.0)), ..EnvelopePlot::default() };
    let x = (TimeAxis::of(&store).x(0), TimeAxis::of(&store).x((n as i64 - 1) * 1_000_000));
    plot.query(&store, &series, PlotFrame { x: Some(x), y: Some((-20.0, 480.0)), limit: None });
    assert!(plot.envs.iter().all(|e| !e.is_exact()), "the columns come from the drawing bands");
    assert!(plot.envs.iter().all(|e| e.request().2 == cols), "one column per pixel of the last frame's rect");
    let transform = plot.predict(plot.data_bounds()).expect("a rect and an x range");
    let want = PlotTransform::new(rect, PlotBounds::from_min_max([x.0, -20.0], [x.1, 480.0]), false);
    assert!(item::same_transform(&transform, &want), "{transform:?}");
    plot.mesh(&store, &transform);
    for (s, p) in series.iter().enumerate() {
        let got = &plot.drawn[s];
        let style = Style { color: p.color, width: LINE_WIDTH, steps: p.steps, lane: None };
        let (mut env, mut alone) = (plot.envs[s].clone(), draw::Drawn::default());
        draw::series(&store, TimeAxis::of(&store), p.series, &mut env, style, &transform, &mut alone);
        let (a, b) = (got.mesh.as_deref().expect("a band"), alone.mesh.as_deref().expect("a band"));
        assert!(a.vertices.len() > cols, "series {s}: {} vertices", a.vertices.len());
        assert_eq!(a.indices, b.indices, "series {s}");
        assert!(a.vertices.iter().zip(&b.vertices).all(|(p, q)| p.pos == q.pos && p.color == q.color), "series {s}");
        assert_eq!(a.vertices.len(), b.vertices.len());
        assert!(a.vertices.iter().all(|v| v.color == style.color));
    }
}

#[test]
fn a_flat_series_gets_an_axis_around_its_value_never_below_zero_for_a_count() {
    let flat = |v: f64| fixed_y_range(&PlotBounds::from_min_max([0.0, v], [1.0, v]));
    assert_eq!(
        flat(0.0),
        Some((-0.03, 1.0)),
        "an event count that stayed 0: 0..1 (its line above the edge), not -20..20"
    );
    assert_eq!(flat(0.5), Some((-0.045, 1.5)), "0.5 with a pad of 1: from 0");
    assert_eq!(flat(50.0), Some((45.0, 55.0)));
    // On a plot 100 pixels high the line at 0 is clear of the frame's bottom edge (its stroke
    // covered a line on the edge).
    let (lo, hi) = flat(0.0).unwrap();
    assert!((0.0 - lo) / (hi - lo) * 100.0 > 2.5, "0 is drawn {} px above the edge", (0.0 - lo) / (hi - lo) * 100.0);
    assert_eq!(flat(-3.0), Some((-4.0, -2.0)));
    assert_eq!(fixed_y_range(&PlotBounds::from_min_max([0.0, 1.0], [1.0, 2.0])), None, "data that moves");
    assert_eq!(fixed_y_range(&PlotBounds::NOTHING), None);
}

#[test]
fn data_never_below_zero_gets_no_negative_axis() {
    // (egui_plot's margin is an f32: compared to a millionth.)
    let moving = |lo: f64, hi: f64| {
        let round = |v: f64| (v * 1e6).round() / 1e6;
        fixed_y_range(&PlotBounds::from_min_max([0.0, lo], [1.0, hi])).map(|(a, b)| (round(a), round(b)))
    };
    assert_eq!(moving(0.0, 40.0), Some((-1.26, 42.0)), "a rate from 0: no '-2 GB/s' below it, 0 above the edge");
    assert_eq!(moving(1.0, 41.0), Some((-1.29, 43.0)), "its margin would reach below 0");
    assert_eq!(moving(10.0, 50.0), None, "far from 0: egui_plot's auto bounds");
    assert_eq!(moving(-5.0, 40.0), None, "data below 0 keeps its margin below");
}
