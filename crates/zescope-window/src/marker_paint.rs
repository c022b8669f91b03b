//! Markers on a plot pane: instants as dashed vertical lines, ranges as shaded bands, each named
//! at the top of the pane. Painted over the plot's frame (plot items would count in the y bounds
//! and cost a plot item each); only markers in view are painted, and a name that would overlap
//! the one before it is left out (the hover readout names every marker under the pointer,
//! [`under`]).

use egui::{Align2, Color32, FontId, Rect, Shape, Stroke, Ui, pos2};

use zescope_model::view::TimeAxis;
use zescope_model::view::{Mark, Span};
use zescope_store::Store;

/// The colour marker `m` is drawn (and named) in.
pub(crate) fn color(m: &Mark) -> Color32 {
    let [r, g, b] = zescope_model::view::markers::mark_rgb(m);
    Color32::from_rgb(r, g, b)
}

/// The newest sample's time, where an open range ends for now.
pub(crate) fn newest(store: &Store) -> i64 {
    store.total_time_range().map_or(i64::MIN, |(_, last)| last)
}

/// How near (points) the pointer must be to an instant's line, or to a range's band, to be over
/// that marker.
const NEAR_PX: f32 = 8.0;

/// The markers of `marks` under screen x `x` (indices, in `marks`' order): an instant whose line
/// is within [`NEAR_PX`] of it, a range whose band (open: up to `now_ns`) holds it or is within
/// [`NEAR_PX`]; `x_of` maps a time (ns) to screen x.
pub(crate) fn under(marks: &[Mark], now_ns: i64, x_of: impl Fn(i64) -> f32, x: f32) -> Vec<usize> {
    (0..marks.len())
        .filter(|&i| {
            let m = &marks[i];
            let (a, b) = (x_of(m.t_ns), x_of(m.end_ns(now_ns)));
            a - NEAR_PX <= x && x <= b + NEAR_PX
        })
        .collect()
}

/// Height of the strip a trigger's firings are drawn in, at the bottom of a plot.
const STRIP: f32 = 6.0;

/// Paints trigger firings (the time kept around each) into `frame` as a strip along its bottom,
/// not over the whole plot: at a 10 s window the seconds kept around a firing would tint all of
/// it and hide the data.
pub(crate) fn paint_strip(ui: &Ui, frame: Rect, store: &Store, marks: &[Mark], to_screen_x: impl Fn(f64) -> f32) {
    let painter = ui.painter_at(frame);
    let now = newest(store);
    let strip = frame.bottom() - STRIP..=frame.bottom();
    let mut label_end = f32::NEG_INFINITY;
    for m in marks {
        let x0 = to_screen_x(TimeAxis::of(store).x(m.t_ns));
        let x1 = to_screen_x(TimeAxis::of(store).x(m.end_ns(now)));
        if x1 < frame.left() || x0 > frame.right() || !x0.is_finite() || !x1.is_finite() {
            continue;
        }
        let c = color(m);
        let (a, b) = (x0.max(frame.left()), x1.min(frame.right()).max(x0 + 1.0));
        painter.rect_filled(Rect::from_x_y_ranges(a..=b, strip.clone()), 0.0, c.gamma_multiply(0.7));
        if a >= label_end {
            let pos = pos2(a + 2.0, frame.bottom() - STRIP - 1.0);
            let r = name(ui, &painter, pos, Align2::LEFT_BOTTOM, &m.label, FontId::proportional(10.0), c);
            label_end = r.right() + 4.0;
        }
    }
}

/// Paints a marker's (or a firing's) name `text` at `pos`, on a patch of the plot's background
/// so that it reads where the data runs under it (a busy share near 100 % runs along the top of
/// its pane, where the names are); the rectangle it took.
fn name(
    ui: &Ui,
    painter: &egui::Painter,
    pos: egui::Pos2,
    align: Align2,
    text: &str,
    font: FontId,
    c: Color32,
) -> Rect {
    let galley = painter.layout_no_wrap(text.to_owned(), font, c);
    let rect = align.anchor_size(pos, galley.size());
    painter.rect_filled(rect.expand(1.0), 2.0, ui.visuals().extreme_bg_color.gamma_multiply(0.85));
    painter.galley(rect.min, galley, c);
    rect
}

/// Paints `marks` into `frame`, where plot x maps to screen x through `to_screen_x`.
pub(crate) fn paint(ui: &Ui, frame: Rect, store: &Store, marks: &[Mark], to_screen_x: impl Fn(f64) -> f32) {
    let painter = ui.painter_at(frame);
    let now = newest(store);
    let font = FontId::proportional(11.0);
    // Right edge of the last name painted, per row (ranges' names sit one row below instants').
    let mut label_end = [f32::NEG_INFINITY; 2];
    for m in marks {
        let x0 = to_screen_x(TimeAxis::of(store).x(m.t_ns));
        let x1 = to_screen_x(TimeAxis::of(store).x(m.end_ns(now)));
        if x1 < frame.left() || x0 > frame.right() || !x0.is_finite() || !x1.is_finite() {
            continue;
        }
        let (row, color, at) = match m.span {
            Span::Instant => {
                let stroke = Stroke::new(1.0, color(m));
                painter.extend(Shape::dashed_line(
                    &[pos2(x0, frame.top()), pos2(x0, frame.bottom())],
                    stroke,
                    4.0,
                    4.0,
                ));
                (0, color(m), x0)
            }
            Span::Range { .. } | Span::Open => {
                let c = color(m);
                let band =
                    Rect::from_x_y_ranges(x0.max(frame.left())..=x1.min(frame.right()).max(x0 + 1.0), frame.y_range());
                painter.rect_filled(band, 0.0, c.gamma_multiply(0.16));
                painter.vline(x0, frame.y_range(), Stroke::new(1.0, c.gamma_multiply(0.6)));
                if m.span != Span::Open {
                    painter.vline(x1, frame.y_range(), Stroke::new(1.0, c.gamma_multiply(0.6)));
                }
                (1, c, x0.max(frame.left()))
            }
        };
        if at < label_end[row] {
            continue;
        }
        // Near the right edge the name goes left of its line rather than being cut.
        let (dx, align) = if at > frame.right() - 40.0 { (-3.0, Align2::RIGHT_TOP) } else { (3.0, Align2::LEFT_TOP) };
        let y = frame.top() + 2.0 + 13.0 * row as f32;
        let r = name(ui, &painter, pos2(at + dx, y), align, &m.label, font.clone(), color);
        label_end[row] = r.right() + 4.0;
    }
}
