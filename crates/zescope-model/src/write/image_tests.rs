//! Tests of a pane's drawing (`image.rs`): a state in steps and a quantity with slopes, lines
//! kept inside their plot areas, markers' names over the series.

use super::*;
use zescope_store::{SeriesDesc, StreamDesc};

#[test]
fn a_state_is_drawn_in_steps_and_a_quantity_with_slopes() {
    // A context id 7, 7, 9 sampled 10 ms apart, drawn 1 pixel per ms.
    let mut store = Store::new(usize::MAX);
    let desc = SeriesDesc { name: "ContextId".into(), unit: String::new(), kind: SeriesKind::State };
    let s = store.begin_stream(StreamDesc { name: "g".into(), series: vec![desc] });
    store.append(s, &[0, 10_000_000, 20_000_000], &[7.0, 7.0, 9.0]).unwrap();
    let id = store.series_id(s, 0).unwrap();
    let mut env = Envelope::new();
    store.envelope(id, 0, 20_000_000, 21, &mut env);
    let px_per_s = 1000.0;
    let x = |t: i64| TimeAxis::of(&store).x(t);
    let area = ((x(0), x(20_000_000)), (0.0, 10.0));
    let stepped = runs(&store, env.columns(), true, px_per_s, area.0, area.1);
    let pts = &stepped[0];
    assert!(pts.windows(2).all(|w| w[0].0 == w[1].0 || w[0].1 == w[1].1), "flat or upright only: {pts:?}");
    assert!(pts.contains(&(x(20_000_000), 7.0)), "7 holds until the sample that is 9: {pts:?}");
    let sloped = runs(&store, env.columns(), false, px_per_s, area.0, area.1);
    assert!(sloped[0].windows(2).any(|w| w[0].0 != w[1].0 && w[0].1 != w[1].1), "{:?}", sloped[0]);
}

/// Three panes of sharp steps (a counter flipping between 0 and 100 every sample, a state,
/// and big steps between long flat stretches), in colours found nowhere else in the image.
fn steep() -> (Store, WriteSpec) {
    let mut store = Store::new(usize::MAX);
    let gauge = |name: &str| SeriesDesc { name: name.into(), unit: "%".into(), kind: SeriesKind::Gauge };
    let state = SeriesDesc { name: "state".into(), unit: String::new(), kind: SeriesKind::State };
    let s = store.begin_stream(StreamDesc { name: "g".into(), series: vec![gauge("flip"), state, gauge("step")] });
    let n = 5_000usize;
    let ts: Vec<i64> = (0..n as i64).map(|i| i * 1_000_000).collect();
    let mut vals = Vec::with_capacity(3 * n);
    for i in 0..n {
        vals.extend([(i % 2) as f64 * 100.0, ((i / 7) % 5) as f64, if (i / 400) % 2 == 0 { 1.0 } else { 1e6 }]);
    }
    store.append(s, &ts, &vals).unwrap();
    let colors = [[220, 0, 0], [0, 0, 230], [0, 150, 0]];
    let panes = (0..3)
        .map(|k| WritePane {
            title: format!("Pane {}", k + 1),
            series: vec![super::super::WriteSeries {
                label: format!("s{k}"),
                unit: "%".into(),
                raw_unit: "%".into(),
                color: colors[k],
                visible: true,
                ids: vec![store.series_id(s, k).unwrap()],
                throttle: Vec::new(),
            }],
        })
        .collect();
    (store, WriteSpec { panes, range: None, markers: Vec::new() })
}

#[test]
fn lines_stay_inside_their_plot_areas() {
    let (store, spec) = steep();
    let drawn: Vec<[u8; 3]> = spec
        .panes
        .iter()
        .map(|p| crate::view::contrast::on_background(p.series[0].color, crate::view::contrast::WHITE))
        .collect();
    for size in [(1600, 1200), (900, 600), (300, 450), (2000, 450)] {
        let (buf, areas) = rgb(&store, &spec, size).unwrap();
        assert_eq!(areas.len(), 3);
        let (mut inside, mut outside) = (0usize, Vec::new());
        for (i, px) in buf.chunks_exact(3).enumerate() {
            if !drawn.iter().any(|c| c == px) {
                continue;
            }
            let (x, y) = ((i % size.0 as usize) as i32, (i / size.0 as usize) as i32);
            // The legend's swatches are inside the plot area too.
            if areas.iter().any(|(ax, ay)| (ax.start..=ax.end).contains(&x) && (ay.start..=ay.end).contains(&y)) {
                inside += 1;
            } else {
                outside.push((x, y));
            }
        }
        assert!(inside > 1_000, "{size:?}: the series are drawn ({inside} pixels)");
        assert!(
            outside.is_empty(),
            "{size:?}: {} series pixels outside the plots, e.g. {:?}",
            outside.len(),
            &outside[..outside.len().min(8)]
        );
    }
}

/// A pane of seven series is drawn at least as tall as its legend needs (drawn in 160 pixels, the
/// names past the fourth ran out of the legend's box over the axis below), or refused with the
/// height it needs; the default size gives every pane that much.
#[test]
fn a_pane_is_drawn_tall_enough_for_its_legend_or_refused_saying_how_tall() {
    let mut store = Store::new(usize::MAX);
    let names: Vec<String> = (0..7).map(|k| format!("ze-sim GPU/Telemetry/Compute engines utilisation {k}")).collect();
    let desc = |n: &String| SeriesDesc { name: n.clone(), unit: "%".into(), kind: SeriesKind::Gauge };
    let s = store.begin_stream(StreamDesc { name: "g".into(), series: names.iter().map(desc).collect() });
    for i in 0..100i64 {
        store.append(s, &[i * 1_000_000], &[(i % 50) as f64; 7]).unwrap();
    }
    let series = (0..7)
        .map(|k| super::super::WriteSeries {
            label: names[k].clone(),
            unit: "%".into(),
            raw_unit: "%".into(),
            color: [(30 * k) as u8, 0, 200],
            visible: true,
            ids: vec![store.series_id(s, k).unwrap()],
            throttle: Vec::new(),
        })
        .collect();
    let spec =
        WriteSpec { panes: vec![WritePane { title: "Pane 1".into(), series }], range: None, markers: Vec::new() };
    let need = pane_height(&spec.panes[0]);
    assert!(need > MIN_PANE_HEIGHT, "seven names need more than the least pane: {need}");
    let labels: Vec<&str> = names.iter().map(String::as_str).collect();
    let (_, legend) = super::super::legend::size(&labels, &("sans-serif", LEGEND_FONT).into_font().into());
    let (_, areas) = rgb(&store, &spec, (1600, need)).unwrap();
    let plot = (areas[0].1.end - areas[0].1.start) as f64;
    assert!(plot >= legend + 2.0 * super::super::legend::INSET, "a {plot}-pixel plot holds a {legend}-pixel legend");
    let refused = rgb(&store, &spec, (1600, need - 1)).map(|_| ()).expect_err("refused").to_string();
    assert!(refused.contains(&format!("fewer than the {need} a pane needs")), "{refused}");
    assert!(default_size(&spec).1 >= need, "{:?} for {need}", default_size(&spec));
}

/// A marker's name is drawn over the series on a patch of the background (a series along the
/// top ran through it, pink on pink), one at the right edge left of its line, not cut off, and
/// one that would overlap another in the row below (it was left out).
#[test]
fn markers_names_read_over_the_series_and_at_the_right_edge() {
    use crate::view::markers::{INSTANT_RGB, Mark, Span};
    let mut store = Store::new(usize::MAX);
    let desc = SeriesDesc { name: "busy".into(), unit: "%".into(), kind: SeriesKind::Gauge };
    let s = store.begin_stream(StreamDesc { name: "g".into(), series: vec![desc] });
    // 0 for the first tenth, then 100: the line runs along the top, where the names are.
    let ts: Vec<i64> = (0..1000i64).map(|i| i * 1_000_000).collect();
    let vals: Vec<f64> = (0..1000).map(|i| if i < 100 { 0.0 } else { 100.0 }).collect();
    store.append(s, &ts, &vals).unwrap();
    let color = [220, 0, 0];
    let series = super::super::WriteSeries {
        label: "busy".into(),
        unit: "%".into(),
        raw_unit: "%".into(),
        color,
        visible: true,
        ids: vec![store.series_id(s, 0).unwrap()],
        throttle: Vec::new(),
    };
    let instant = |t_ns: i64, label: &str| Mark { t_ns, label: label.into(), span: Span::Instant };
    let markers =
        vec![instant(500_000_000, "MMMMMMMM"), instant(501_000_000, "MMMMMMMM"), instant(999_000_000, "WWWWWWWW")];
    let spec = WriteSpec { panes: vec![WritePane { title: "P".into(), series: vec![series] }], range: None, markers };
    let size = (1000, 320);
    let (buf, areas) = rgb(&store, &spec, size).unwrap();
    let (ax, ay) = areas[0].clone();
    let x_of = |t_ns: i64| ax.start + ((ax.end - ax.start) as f64 * t_ns as f64 / 999e6).round() as i32;
    let line = crate::view::contrast::on_background(color, crate::view::contrast::WHITE);
    // Pixels of `rgb` (or within 60 of it each way: text is anti-aliased) in columns `xs`, in
    // the plot's rows `ys` from its top (the first 16 unless said).
    let count_in = |xs: std::ops::Range<i32>, ys: std::ops::Range<i32>, rgb: [u8; 3]| {
        let near = |p: &[u8]| p.iter().zip(rgb).all(|(&a, b)| a.abs_diff(b) <= 60);
        xs.flat_map(|x| ys.clone().map(move |y| (x, ay.start + y)))
            .filter(|&(x, y)| near(&buf[3 * (y as usize * size.0 as usize + x as usize)..][..3]))
            .count()
    };
    let count = |xs, rgb| count_in(xs, 0..16, rgb);
    let middle = x_of(500_000_000);
    let name = middle + 4..middle + 50;
    assert!(count(name.clone(), INSTANT_RGB) > 20, "the name is drawn");
    assert_eq!(count(name.clone(), line), 0, "the series does not run through the name");
    assert!(count(middle + 60..middle + 120, line) > 40, "the series runs along the top beside it");
    let edge = x_of(999_000_000);
    assert!(count(edge - 50..edge - 4, INSTANT_RGB) > 20, "the last name is left of its line");
    // The second name, a millisecond on, two rows below (the row between is ranges').
    let pitch = (0.07 * f64::from(ay.end - ay.start)) as i32;
    let second = x_of(501_000_000) + 4..x_of(501_000_000) + 50;
    assert!(count_in(second, 2 * pitch..2 * pitch + 16, INSTANT_RGB) > 20, "the name that overlapped is drawn");
}
