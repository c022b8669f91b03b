//! An identifier in an exported image: a lane, not a climbing line.

use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};

use super::super::{WritePane, WriteSeries, WriteSpec};
use super::rgb;

/// The metric tracer's kernel ids, one per millisecond climbing by one, exported: every pixel of
/// the series' colour (its legend swatch aside) lies on one row band, whatever the ids' values.
#[test]
fn kernel_ids_are_exported_as_a_lane_not_a_climbing_line() {
    let mut store = Store::new(usize::MAX);
    let desc = SeriesDesc { name: "KernelStart".into(), unit: "kernel id".into(), kind: SeriesKind::State };
    let s = store.begin_stream(StreamDesc { name: "t".into(), series: vec![desc] });
    let ts: Vec<i64> = (0..4000).map(|i| i * 1_000_000).collect();
    let ids: Vec<f64> = (0..4000).map(|i| 1000.0 + f64::from(i)).collect();
    store.append(s, &ts, &ids).unwrap();
    let color = [220, 0, 0];
    let series = WriteSeries {
        label: "KernelTrace/KernelStart".into(),
        unit: "kernel id".into(),
        raw_unit: "kernel id".into(),
        color,
        visible: true,
        ids: vec![store.series_id(s, 0).unwrap()],
        throttle: Vec::new(),
    };
    let spec = WriteSpec {
        panes: vec![WritePane { title: "Pane 1".into(), series: vec![series] }],
        range: None,
        markers: Vec::new(),
    };
    let size = (900, 400);
    let (buf, areas) = rgb(&store, &spec, size).unwrap();
    let drawn = crate::view::contrast::on_background(color, crate::view::contrast::WHITE);
    let (ax, ay) = &areas[0];
    let mut rows = std::collections::BTreeMap::<i32, usize>::new();
    for y in ay.clone() {
        for x in ax.clone() {
            let i = (y as usize * size.0 as usize + x as usize) * 3;
            if buf[i..i + 3] == drawn {
                *rows.entry(y).or_default() += 1;
            }
        }
    }
    // The line's rows: those with more pixels than the legend's 16-pixel swatch.
    let line: Vec<i32> = rows.iter().filter(|&(_, &n)| n > 40).map(|(&y, _)| y).collect();
    assert!(!line.is_empty(), "the series is drawn: {rows:?}");
    assert!(line.last().unwrap() - line.first().unwrap() <= 3, "one lane, not a climbing line: rows {rows:?}");
    let covered: usize = line.iter().map(|y| rows[y]).sum();
    assert!(covered > (ax.end - ax.start) as usize, "the lane spans the plot ({covered} pixels)");
}
