//! What each kind of series is drawn as, zoomed in and across holes: a quantity as the line
//! through its samples, a state in steps, identifiers in lanes (`envelope_plot.rs` has the
//! helpers and the band tests).

use super::*;

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
        let (shapes, t) = settled(&ctx, &mut plot, &store, &series, x, (0.0, 200.0));
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
    let (shapes, t) = settled(&ctx, &mut plot, &store, &series, x, (0.0, 200.0));
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
        let (shapes, t) = settled(&ctx, &mut plot, &store, &series, x, (4_000.0, 16_000.0));
        let mid = t.frame().center().y;
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
    let (shapes, t) = settled(&ctx, &mut plot, &store, &series, (0.0, 4.0), (0.0, 1.0));
    let f = *t.frame();
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
