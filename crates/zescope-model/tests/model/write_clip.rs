//! Exported images draw each series inside its own plot area: the step edges of a stepping
//! frequency and of a 0/1 flag, and lines of a range cut out of the middle of the data, never
//! reach into the pane above or past the axes; and a line breaks exactly at a gap.

use std::collections::BTreeMap;

use zescope_model::view::panes::{Arrangement, PaneSpec};
use zescope_model::view::series::{SeriesEntry, SeriesKey};
use zescope_model::write::{self, WriteSpec};
use zescope_sampler::SeriesInfo;
use zescope_sampler::layout::Kind;
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};

const MS: i64 = 1_000_000;

fn key(m: &str) -> SeriesKey {
    SeriesKey { device: "dev".into(), group: "g".into(), metric: m.into() }
}

/// A frequency stepping between 300 and 1600 MHz every 40 ms and a busy flag toggling every
/// 7 ms, 1 ms apart, with a gap (sampling paused) between 2 s and 2.5 s.
fn fixture() -> (Store, Arrangement, BTreeMap<SeriesKey, SeriesEntry>) {
    let mut store = Store::new(usize::MAX);
    let gauge = |n: &str, u: &str| SeriesDesc { name: n.into(), unit: u.into(), kind: SeriesKind::Gauge };
    let a = store.begin_stream(StreamDesc { name: "a".into(), series: vec![gauge("freq", "MHz"), gauge("busy", "")] });
    for i in (0..4000i64).filter(|i| !(2000..2500).contains(i)) {
        if i == 2500 {
            store.mark_gap(a);
        }
        let freq = if (i / 40) % 2 == 0 { 300.0 } else { 1600.0 };
        let busy = if (i / 7) % 2 == 0 { 0.0 } else { 1.0 };
        store.append(a, &[i * MS], &[freq, busy]).unwrap();
    }
    let info = |n: &str, u: &str| SeriesInfo {
        name: n.into(),
        description: String::new(),
        unit: u.into(),
        kind: Kind::Gauge,
        wrap: None,
    };
    let mut series = BTreeMap::new();
    for (i, (n, u)) in [("freq", "MHz"), ("busy", "")].into_iter().enumerate() {
        series.insert(key(n), SeriesEntry { info: info(n, u), ids: vec![store.series_id(a, i).unwrap()] });
    }
    let arrangement = Arrangement {
        panes: vec![PaneSpec { id: 1, series: vec![key("freq")] }, PaneSpec { id: 2, series: vec![key("busy")] }],
        next_id: 2,
        hidden: Default::default(),
        colors: [(key("freq"), [200, 10, 10]), (key("busy"), [10, 10, 200])].into_iter().collect(),
    };
    (store, arrangement, series)
}

/// The points of every polyline drawn in `stroke`.
fn polylines(doc: &roxmltree::Document, stroke: &str) -> Vec<Vec<(f64, f64)>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some(stroke))
        .map(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').expect("x,y");
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// The plot area of the pane spanning `band` (y pixels): the box of its axis lines and grid.
fn plot_area(doc: &roxmltree::Document, band: (f64, f64)) -> (f64, f64, f64, f64) {
    let mut b = (f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
    for n in doc.descendants().filter(|n| n.has_tag_name("line")) {
        let f = |a: &str| n.attribute(a).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
        let (x1, y1, x2, y2) = (f("x1"), f("y1"), f("x2"), f("y2"));
        if [y1, y2].iter().all(|y| (band.0..=band.1).contains(y)) {
            b = (b.0.min(x1.min(x2)), b.1.min(y1.min(y2)), b.2.max(x1.max(x2)), b.3.max(y1.max(y2)));
        }
    }
    b
}

#[test]
fn step_edges_stay_inside_their_plot_area_and_lines_break_at_the_gap() {
    let (store, arrangement, series) = fixture();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("steps.svg");
    // A range that cuts through the data, so columns reach past both ends.
    let spec = WriteSpec::from_arrangement(&arrangement, &series, None, Some((333 * MS, 3777 * MS)));
    write::svg(&store, &spec, &path, (1200, 700)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    for (stroke, band) in [("#C80A0A", (0.0, 350.0)), ("#0A0AC8", (350.0, 700.0))] {
        let (x0, y0, x1, y1) = plot_area(&doc, band);
        assert!(x1 - x0 > 500.0 && y1 - y0 > 100.0, "a plot area found in {band:?}: {:?}", (x0, y0, x1, y1));
        let lines = polylines(&doc, stroke);
        assert_eq!(lines.len(), 2, "{stroke}: one line before the gap, one after");
        for (x, y) in lines.iter().flatten() {
            assert!((x0 - 0.5..=x1 + 0.5).contains(x), "{stroke}: x {x} outside {x0}..{x1}");
            assert!(
                (y0 - 0.5..=y1 + 0.5).contains(y),
                "{stroke}: y {y} outside {y0}..{y1} (pane above starts at {})",
                band.0
            );
        }
        // Nothing is drawn across the gap: the first line ends before the second begins, with
        // room for 0.5 s of the 3.44 s range between them.
        let end = lines[0].iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
        let start = lines[1].iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let gap_px = (x1 - x0) * 0.5 / 3.444;
        assert!(start - end > 0.8 * gap_px, "{stroke}: the gap is {} px wide, want ~{gap_px}", start - end);
    }
}
