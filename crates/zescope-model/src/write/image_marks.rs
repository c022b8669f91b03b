//! Markers in an exported image (`image.rs`): ranges as shaded bands and instants as lines behind
//! the series, their names over the series on a patch of the background.

use plotters::prelude::*;

use super::{Chart, draw_err};
use crate::view::{Mark, TimeAxis};
use crate::write::WriteError;
use zescope_store::Store;

/// Markers behind the series: ranges as shaded bands, instants as lines; the names to draw at
/// the top over the series (a name that would overlap the last one on its row takes a second
/// row of its kind, and is left out where that is taken too).
pub(super) fn draw_marks<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    store: &Store,
    marks: &[Mark],
    (t0, t1): (i64, i64),
    (x0, x1): (f64, f64),
    (lo, hi): (f64, f64),
    px_per_s: f64,
) -> Result<Vec<Name>, WriteError> {
    let now = store.total_time_range().map_or(t1, |(_, last)| last);
    // The right edge of the last name in each row: instants', ranges', then a second of each.
    let mut label_end = [f64::NEG_INFINITY; 4];
    let mut names = Vec::new();
    // (instant, colour, first and last pixel column) of what is drawn.
    let mut drawn = std::collections::HashSet::new();
    for m in marks {
        let (start, end) = (m.t_ns, m.end_ns(now));
        if end < t0 || start > t1 {
            continue;
        }
        let (a, b) = (TimeAxis::of(store).x(start).max(x0), TimeAxis::of(store).x(end).min(x1));
        let [r, g, bl] = crate::view::markers::mark_rgb(m);
        let pixels = (((a - x0) * px_per_s).floor() as i64, ((b - x0) * px_per_s).ceil() as i64);
        if !drawn.insert((m.is_instant(), [r, g, bl], pixels)) {
            continue;
        }
        let color = RGBColor(r, g, bl);
        let row = if m.is_instant() {
            chart.draw_series(std::iter::once(PathElement::new(vec![(a, lo), (a, hi)], color.stroke_width(1))))
        } else {
            chart.draw_series(std::iter::once(Rectangle::new([(a, lo), (b, hi)], color.mix(0.16).filled())))
        };
        row.map_err(draw_err)?;
        let px = (a - x0) * px_per_s;
        let (w, h) = chart
            .plotting_area()
            .estimate_text_size(&m.label, &name_font(color))
            .unwrap_or((7 * m.label.chars().count() as u32, 11));
        // Near the right edge the name goes left of its line rather than being cut, as on screen.
        let left = px + f64::from(w) + 4.0 > (x1 - x0) * px_per_s;
        let start = if left { px - f64::from(w) - 3.0 } else { px + 2.0 };
        // Its kind's row, or where that is taken the row below the other kind's (an image has no
        // pointer to hover the names it leaves out, as the window's readout does).
        let kind = usize::from(!m.is_instant());
        let Some(row) = [kind, kind + 2].into_iter().find(|&r| start >= label_end[r]) else { continue };
        label_end[row] = start + f64::from(w) + 4.0;
        names.push(Name { text: m.label.clone(), x: a, row, color, size: (w, h), left });
    }
    Ok(names)
}

/// A marker's name, drawn over the series once they are drawn ([`draw_names`]).
pub(super) struct Name {
    text: String,
    /// Its line (the range's start), in plot x.
    x: f64,
    /// 0 for an instant's, 1 for a range's (one row below); 2 and 3 where those are taken.
    row: usize,
    color: RGBColor,
    /// Its size in pixels.
    size: (u32, u32),
    /// Drawn left of its line (near the right edge).
    left: bool,
}

/// The font of markers' names.
fn name_font(color: RGBColor) -> TextStyle<'static> {
    ("sans-serif", 11).into_font().color(&color)
}

/// Paints `names` at the top of the plot, each on a patch of the background, as on screen: a
/// name over a series of a close colour (a busy share near 100 % runs along the top, where the
/// names are) reads all the same.
pub(super) fn draw_names<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    names: &[Name],
    (lo, hi): (f64, f64),
    px_per_s: f64,
) -> Result<(), WriteError> {
    let per_px = (hi - lo) / f64::from(chart.plotting_area().dim_in_pixel().1.max(1));
    for n in names {
        let (w, h) = (f64::from(n.size.0), f64::from(n.size.1));
        let y = hi - (hi - lo) * (0.01 + 0.07 * n.row as f64);
        let start = if n.left { n.x - (w + 3.0) / px_per_s } else { n.x + 2.0 / px_per_s };
        let patch = [(start - 1.0 / px_per_s, y + per_px), (start + (w + 1.0) / px_per_s, y - (h + 1.0) * per_px)];
        chart.draw_series(std::iter::once(Rectangle::new(patch, WHITE.mix(0.85).filled()))).map_err(draw_err)?;
        let text = Text::new(n.text.clone(), (start, y), name_font(n.color));
        chart.draw_series(std::iter::once(text)).map_err(draw_err)?;
    }
    Ok(())
}
