//! Where an exported image's legend goes, so that it hides no data: the first corner of the plot
//! area (upper right, upper left, lower right, lower left) whose legend box no line of the pane
//! crosses. When every corner is crossed, the y range is raised until the data stays below a
//! legend in the upper right ([`headroom`]); when even that would leave the data too little of
//! the plot (a legend taller than a quarter of it), the corner crossed least.
//!
//! Geometry is in pixels of the plot area (origin at its top left, y down), as plotters lays the
//! legend out: its text block, a 30-pixel swatch column and a 10-pixel margin all round, 5
//! pixels in from the area's edges.

use plotters::element::MultiLineText;
use plotters::prelude::*;

/// Pixels between the legend and the plot area's edges (as plotters places it).
pub(super) const INSET: f64 = 5.0;
/// Pixels kept clear around the legend box.
const CLEAR: f64 = 2.0;

/// The corners tried, in order.
const CORNERS: [SeriesLabelPosition; 4] = [
    SeriesLabelPosition::UpperRight,
    SeriesLabelPosition::UpperLeft,
    SeriesLabelPosition::LowerRight,
    SeriesLabelPosition::LowerLeft,
];

/// The legend box of `labels` in `font` (width, height), as plotters draws it.
pub(super) fn size(labels: &[&str], font: &TextStyle<'_>) -> (f64, f64) {
    let mut text = MultiLineText::<_, &str>::new((0, 0), font);
    for l in labels {
        text.push_line(*l);
    }
    let (w, h) = text.estimate_dimension().unwrap_or((12 * labels.len() as i32, 15 * labels.len() as i32));
    (f64::from(w + 30 + 20), f64::from(h + 20))
}

/// The box (left, top, right, bottom) a legend of `size` takes at `corner` of a `plot` area.
fn rect(corner: &SeriesLabelPosition, (w, h): (f64, f64), (pw, ph): (f64, f64)) -> [f64; 4] {
    use SeriesLabelPosition::*;
    let left = match corner {
        UpperLeft | LowerLeft => INSET,
        _ => pw - w - INSET,
    };
    let top = match corner {
        UpperLeft | UpperRight => INSET,
        _ => ph - h - INSET,
    };
    [left - CLEAR, top - CLEAR, left + w + CLEAR, top + h + CLEAR]
}

/// Does the segment from `a` to `b` cross the box `r` (Liang–Barsky clipping)?
fn crosses((ax, ay): (f64, f64), (bx, by): (f64, f64), r: [f64; 4]) -> bool {
    let (dx, dy) = (bx - ax, by - ay);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, ax - r[0]), (dx, r[2] - ax), (-dy, ay - r[1]), (dy, r[3] - ay)] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
            if t0 > t1 {
                return false;
            }
        }
    }
    true
}

/// Segments (and lone points) of `lines` that cross `r`.
fn crossings(lines: &[Vec<(f64, f64)>], r: [f64; 4]) -> usize {
    lines
        .iter()
        .map(|l| match l.as_slice() {
            [p] => usize::from(crosses(*p, *p, r)),
            l => l.windows(2).filter(|w| crosses(w[0], w[1], r)).count(),
        })
        .sum()
}

/// Where the legend goes.
#[derive(Debug, PartialEq)]
pub(super) enum Placement {
    /// At this corner it hides nothing.
    Clear(SeriesLabelPosition),
    /// Every corner hides data: raise the top of the y range to this, and put the legend at the
    /// upper right, above the data.
    Raise(f64),
    /// No room above the data either: the corner that hides the least.
    Least(SeriesLabelPosition),
}

/// Where a legend of `size` goes in a plot area of `plot` pixels whose `lines` (pixels of the
/// area) span `data` (lowest and highest value) on a y range `lo..hi`.
pub(super) fn place(
    size: (f64, f64),
    plot: (f64, f64),
    lines: &[Vec<(f64, f64)>],
    data: (f64, f64),
    (lo, hi): (f64, f64),
) -> Placement {
    let counts: Vec<usize> = CORNERS.iter().map(|c| crossings(lines, rect(c, size, plot))).collect();
    if let Some(i) = counts.iter().position(|&n| n == 0) {
        return Placement::Clear(CORNERS[i].clone());
    }
    match headroom(size.1, plot.1, data.1, lo) {
        Some(top) if top > hi => Placement::Raise(top),
        _ => {
            let least = (0..CORNERS.len()).min_by_key(|&i| counts[i]).unwrap_or(0);
            Placement::Least(CORNERS[least].clone())
        }
    }
}

/// The top of a y range from `lo` that puts `max` (the data's highest value) below a legend
/// `legend_h` pixels high at the top of a plot `plot_h` pixels high; `None` when the legend
/// would take more than a quarter of the plot.
pub(super) fn headroom(legend_h: f64, plot_h: f64, max: f64, lo: f64) -> Option<f64> {
    // Pixels from the top that must stay free, and one more for rounding.
    let k = (INSET + legend_h + 2.0 * CLEAR + 1.0) / plot_h.max(1.0);
    if !(max.is_finite() && lo.is_finite()) || k > 0.25 {
        return None;
    }
    // (top - max) / (top - lo) = k.
    let top = (max - k * lo) / (1.0 - k);
    (top > max).then_some(top)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_crossing_a_box_are_found() {
        let r = [10.0, 10.0, 20.0, 20.0];
        assert!(crosses((0.0, 15.0), (30.0, 15.0), r), "straight through");
        assert!(crosses((15.0, 15.0), (15.0, 15.0), r), "a point inside");
        assert!(!crosses((0.0, 0.0), (30.0, 5.0), r), "above");
        assert!(!crosses((0.0, 25.0), (9.0, 30.0), r), "beside, below");
        assert!(crosses((0.0, 0.0), (30.0, 30.0), r), "diagonal");
        assert!(!crosses((0.0, 12.0), (8.0, 30.0), r), "near a corner, outside");
    }

    #[test]
    fn the_first_clear_corner_wins_then_room_above_then_the_least_crossed() {
        let plot = (400.0, 200.0);
        let size = (80.0, 30.0);
        // A ramp to the upper right: the upper left is clear.
        let ramp = vec![vec![(0.0, 199.0), (400.0, 0.0)]];
        assert_eq!(place(size, plot, &ramp, (0.0, 1.0), (0.0, 1.0)), Placement::Clear(SeriesLabelPosition::UpperLeft));
        // A band over the whole area: raised so the data stays under the legend.
        let band: Vec<Vec<(f64, f64)>> = (0..400).map(|x| vec![(f64::from(x), 0.0), (f64::from(x), 199.0)]).collect();
        let Placement::Raise(top) = place(size, plot, &band, (0.0, 100.0), (-5.0, 105.0)) else { panic!() };
        let free_px = (top - 100.0) / (top - 0.0) * plot.1;
        assert!(free_px >= INSET + size.1 + 2.0 * CLEAR, "{free_px} pixels above the data");
        // A legend taller than a quarter of the plot: the corner crossed least.
        let tall = (80.0, 120.0);
        assert!(matches!(place(tall, plot, &band, (0.0, 100.0), (-5.0, 105.0)), Placement::Least(_)));
    }

    /// One pane of one series in `RED` whose value at sample `i` of 4000 (1 ms apart) is
    /// `value(i)`, with a long label.
    fn pane(value: impl Fn(usize) -> f64) -> (zescope_store::Store, super::super::WriteSpec) {
        use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};
        let mut store = Store::new(usize::MAX);
        let desc = SeriesDesc { name: "v".into(), unit: "%".into(), kind: SeriesKind::Gauge };
        let s = store.begin_stream(StreamDesc { name: "g".into(), series: vec![desc] });
        let n = 4000usize;
        let ts: Vec<i64> = (0..n as i64).map(|i| i * 1_000_000).collect();
        let vals: Vec<f64> = (0..n).map(value).collect();
        store.append(s, &ts, &vals).unwrap();
        let series = super::super::WriteSeries {
            label: "ComputeBasic/GpuUtilization of the device".into(),
            unit: "%".into(),
            raw_unit: "%".into(),
            color: RED,
            visible: true,
            ids: vec![store.series_id(s, 0).unwrap()],
            throttle: Vec::new(),
        };
        let pane = super::super::WritePane { title: "Pane 1".into(), series: vec![series] };
        (store, super::super::WriteSpec { panes: vec![pane], range: None, markers: Vec::new() })
    }

    const RED: [u8; 3] = [220, 0, 0];

    /// Per pixel column of the plot area (a few pixels in from its sides), the topmost row that
    /// shows the series' colour exactly, if any: under the legend's translucent box it is not.
    fn tops(size: (u32, u32), buf: &[u8], (ax, ay): &super::super::image::PlotArea) -> Vec<Option<i32>> {
        let drawn = crate::view::contrast::on_background(RED, crate::view::contrast::WHITE);
        let at = |x: i32, y: i32| {
            let i = (y as usize * size.0 as usize + x as usize) * 3;
            buf[i..i + 3] == drawn
        };
        (ax.start + 4..ax.end - 4).map(|x| (ay.start..=ay.end).find(|&y| at(x, y))).collect()
    }

    /// The newest data of a rising series is at the upper right, where the legend was drawn:
    /// exported, every column of the plot shows the line, none is under the legend.
    #[test]
    fn an_exported_legend_hides_no_data_of_a_rising_series() {
        let (store, spec) = pane(|i| i as f64 / 40.0);
        for size in [(1600, 1000), (900, 600), (500, 300)] {
            let (buf, areas) = super::super::image::rgb(&store, &spec, size).unwrap();
            let tops = tops(size, &buf, &areas[0]);
            let hidden: Vec<usize> = (0..tops.len()).filter(|&i| tops[i].is_none()).collect();
            assert!(
                hidden.is_empty(),
                "{size:?}: {} columns of the line hidden, e.g. {:?}",
                hidden.len(),
                &hidden[..hidden.len().min(5)]
            );
        }
    }

    /// A series that fills the plot from bottom to top (0 and 100 every other sample): no corner
    /// is free, so the y range is raised and the band's top shows in every column, under the
    /// legend.
    #[test]
    fn an_exported_legend_over_a_full_band_goes_above_the_data() {
        let (store, spec) = pane(|i| (i % 2) as f64 * 100.0);
        for size in [(1600, 1000), (900, 600)] {
            let (buf, areas) = super::super::image::rgb(&store, &spec, size).unwrap();
            let tops = tops(size, &buf, &areas[0]);
            let first = tops[0].expect("the band is drawn");
            let lower: Vec<(usize, Option<i32>)> =
                tops.iter().copied().enumerate().filter(|&(_, t)| t.is_none_or(|t| t > first + 1)).collect();
            assert!(
                lower.is_empty(),
                "{size:?}: the band's top (row {first}) hidden in {} columns, e.g. {:?}",
                lower.len(),
                &lower[..lower.len().min(5)]
            );
        }
    }
}
