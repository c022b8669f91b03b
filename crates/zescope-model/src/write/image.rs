//! PNG and SVG of plot panes, drawn with plotters from store envelopes.
//!
//! Each pane is one chart, stacked top to bottom: a title with the pane's units, time on x
//! (seconds since the session's first sample), the plotted unit on y, a legend where it hides
//! no data (`legend.rs`), and each visible series in its screen colour. A series is drawn like
//! on screen, from its envelope at one column per pixel of the plot area: one polyline per
//! gap-free run through each column's min and max, so a dense stretch reads as the min..max
//! band and a sparse one as a line through the samples, and spikes survive at any width.
//!
//! Lines stay inside their plot area, in PNG and SVG alike: every point is clamped to the area.
//! In a PNG a line is stroked as 1-pixel paths side by side rather than as one wide path:
//! plotters' bitmap backend turns a wide path into a polygon whose joins, at the sharp turns of
//! a column's min..max, reach far outside the plot (spikes through the titles and into the pane
//! above). An SVG keeps one 2-pixel polyline per run, whose joins the viewer draws within its
//! miter limit (at most 4 pixels past a point).
//!
//! Text uses DejaVu Sans, bundled (`assets/fonts`, licence beside it) and
//! registered with plotters' ab_glyph backend: no system font is needed, so
//! this works headless on any machine.
//!
//! Markers are drawn on every pane behind the series: ranges as shaded bands, instants as
//! lines, in the window's colours, each named at the top over the series, on a patch of the
//! background (left of its line near the right edge), as on screen. A marker that would cover
//! the same pixel columns in the same colour as one drawn already is not drawn again, so an
//! image holds at most one instant per pixel column however many markers fall there (an SVG
//! stays bounded by its width, not by the markers' number).

use std::io::BufWriter;
use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::view::Mark;
use crate::view::runs::{column_span, gap_free_runs};
use crate::view::text::{si, time_label};
use zescope_store::{Envelope, EnvelopeColumn, SeriesKind, Store};

use super::legend::Placement;
use super::{Format, Input, Scope, WriteError, WritePane, WriteSpec};
use crate::view::TimeAxis;

/// DejaVu Sans, bundled: the exported images' text, and the window's fallback for the glyphs
/// its default fonts lack ("→", "›").
pub static FONT: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

const MARGIN: u32 = 12;
const X_LABELS: u32 = 44;
const Y_LABELS: u32 = 110;
/// Smallest image side accepted, in pixels.
pub const MIN_SIDE: u32 = 64;
/// Largest image side accepted, in pixels.
pub const MAX_SIDE: u32 = 16384;
/// Smallest height a pane is drawn at: its title, axis labels and margins take
/// [`PANE_CHROME`] pixels, and a plot needs room left for its lines to read.
pub(super) const MIN_PANE_HEIGHT: u32 = 150;
/// A pane's title, x axis labels and margins, pixels.
const PANE_CHROME: u32 = 96;
/// Pixels between value labels on the y axis, at least.
const Y_LABEL_PITCH: u32 = 28;
/// A pane's height when the image's is not given, unless its legend needs more.
const DEFAULT_PANE_HEIGHT: u32 = 320;

/// The height pane `pane` needs to be read: [`MIN_PANE_HEIGHT`], or more for a legend that would
/// not fit its plot (seven series' names need about 225 pixels: drawn in 160, the names past the
/// fourth ran out of the legend's box over the axis below).
pub(super) fn pane_height(pane: &WritePane) -> u32 {
    register();
    let labels: Vec<&str> = pane.series.iter().filter(|s| s.visible).map(|s| s.label.as_str()).collect();
    if labels.is_empty() {
        return MIN_PANE_HEIGHT;
    }
    let (_, legend) = super::legend::size(&labels, &("sans-serif", LEGEND_FONT).into_font().into());
    MIN_PANE_HEIGHT.max(PANE_CHROME + legend.ceil() as u32 + 2 * super::legend::INSET as u32)
}

/// An image's size when none is asked for: 1600 wide, 320 high a pane (more where a pane's
/// legend needs it: `pane_height`) and 120 more.
pub fn default_size(spec: &WriteSpec) -> (u32, u32) {
    let each = spec.panes.iter().map(pane_height).max().unwrap_or(0).max(DEFAULT_PANE_HEIGHT);
    let n = u32::try_from(spec.panes.len().max(1)).unwrap_or(u32::MAX);
    (1600, n.saturating_mul(each).saturating_add(120).clamp(480, MAX_SIDE))
}

fn register() {
    REGISTER.call_once(|| {
        if register_font("sans-serif", FontStyle::Normal, FONT).is_err() {
            log::error!("the bundled font could not be read; exported images will lack text");
        }
    });
}

pub(super) fn draw_err(e: impl std::fmt::Display) -> WriteError {
    WriteError::Draw(e.to_string())
}

fn check_size((w, h): (u32, u32)) -> Result<(), WriteError> {
    if (MIN_SIDE..=MAX_SIDE).contains(&w) && (MIN_SIDE..=MAX_SIDE).contains(&h) {
        Ok(())
    } else {
        Err(WriteError::Draw(format!("image size {w}x{h} is outside {MIN_SIDE}..={MAX_SIDE} per side")))
    }
}

/// Write the panes of `spec` as a PNG of `size` pixels.
pub fn png(store: &Store, spec: &WriteSpec, path: &Path, size: (u32, u32)) -> Result<(), WriteError> {
    check_size(size)?;
    let buf = rgb(store, spec, size)?.0;
    let io = |e: std::io::Error| WriteError::Io { path: path.to_owned(), source: e };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut enc = png::Encoder::new(BufWriter::new(file), size.0, size.1);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(draw_err)?;
    w.write_image_data(&buf).map_err(draw_err)?;
    w.finish().map_err(draw_err)
}

/// A plot area's pixels: x range and y range, ends included.
pub(super) type PlotArea = (std::ops::Range<i32>, std::ops::Range<i32>);

/// The panes of `spec` drawn into RGB bytes of `size`, with each pane's plot area.
pub(super) fn rgb(store: &Store, spec: &WriteSpec, size: (u32, u32)) -> Result<(Vec<u8>, Vec<PlotArea>), WriteError> {
    let mut buf = vec![255u8; size.0 as usize * size.1 as usize * 3];
    let areas = {
        let root = BitMapBackend::with_buffer(&mut buf, size).into_drawing_area();
        let areas = draw(&root, store, spec, Stroke::Passes)?;
        root.present().map_err(draw_err)?;
        areas
    };
    Ok((buf, areas))
}

/// Write the panes of `spec` as an SVG of `size` pixels.
pub fn svg(store: &Store, spec: &WriteSpec, path: &Path, size: (u32, u32)) -> Result<(), WriteError> {
    check_size(size)?;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        draw(&root, store, spec, Stroke::Wide)?;
        root.present().map_err(draw_err)?;
    }
    std::fs::write(path, text).map_err(|e| WriteError::Io { path: path.to_owned(), source: e })
}

/// How a series' 2-pixel line is stroked (module docs).
#[derive(Clone, Copy, PartialEq)]
enum Stroke {
    /// One 2-pixel path (SVG).
    Wide,
    /// 1-pixel paths, shifted a pixel right and up (PNG).
    Passes,
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    store: &Store,
    spec: &WriteSpec,
    stroke: Stroke,
) -> Result<Vec<PlotArea>, WriteError> {
    register();
    if spec.panes.is_empty() {
        return Err(WriteError::Empty("no pane to draw".into()));
    }
    let (w, h) = root.dim_in_pixel();
    let n = spec.panes.len() as u32;
    let need = spec.panes.iter().map(pane_height).max().unwrap_or(MIN_PANE_HEIGHT);
    if h / n < need {
        let why = if need > MIN_PANE_HEIGHT { " (its title, axes and legend)" } else { "" };
        return Err(WriteError::Draw(format!(
            "{w}x{h} leaves {} pixels for each of {n} panes, fewer than the {need} a pane needs to be read{why}: \
             make the image at least {} high, or export fewer panes",
            h / n,
            need.saturating_mul(n).min(MAX_SIDE)
        )));
    }
    let (t0, t1) = spec.resolved_range(store).ok_or(WriteError::Empty("the session holds no samples".into()))?;
    root.fill(&WHITE).map_err(draw_err)?;
    let areas = root.split_evenly((spec.panes.len(), 1));
    spec.panes
        .iter()
        .zip(areas)
        .map(|(pane, area)| draw_pane(&area, store, pane, &spec.markers, (t0, t1), stroke))
        .collect()
}

/// One visible series' envelopes (one per run), with its legend entry.
struct Drawn<'a> {
    label: &'a str,
    color: RGBColor,
    envs: Vec<Envelope>,
    /// A state: drawn as steps.
    steps: bool,
    /// An identifier: a lane at mid-height where it has samples (`view::series::is_identifier`).
    lane: bool,
}

fn draw_pane<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    store: &Store,
    pane: &WritePane,
    marks: &[Mark],
    (t0, t1): (i64, i64),
    stroke: Stroke,
) -> Result<PlotArea, WriteError> {
    let (w, _) = area.dim_in_pixel();
    let columns = w.saturating_sub(2 * MARGIN + Y_LABELS).max(1) as usize;
    let mut drawn = Vec::new();
    for s in pane.series.iter().filter(|s| s.visible) {
        let mut envs = vec![Envelope::new(); s.ids.len()];
        store.envelopes(&s.ids, t0, t1, columns, &mut envs);
        let [r, g, b] = crate::view::contrast::on_background(s.color, crate::view::contrast::WHITE);
        let steps = s.ids.iter().any(|&id| store.series_desc(id).is_some_and(|d| d.kind == SeriesKind::State));
        let lane = s.ids.iter().any(|&id| store.series_desc(id).is_some_and(crate::view::series::is_identifier));
        drawn.push(Drawn { label: &s.label, color: RGBColor(r, g, b), envs, steps, lane });
    }
    let cols = || drawn.iter().flat_map(|d| d.envs.iter().flat_map(Envelope::columns)).filter(|c| c.count > 0);
    let ids_only = !drawn.is_empty() && drawn.iter().all(|d| d.lane);
    let data = if ids_only {
        (0.25, 0.75)
    } else {
        cols().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| (lo.min(c.min), hi.max(c.max)))
    };
    let (lo, mut hi) = match data {
        (lo, hi) if !(lo.is_finite() && hi.is_finite()) => (0.0, 1.0),
        (lo, hi) if hi - lo <= f64::EPSILON * hi.abs().max(1.0) => {
            (lo - lo.abs().max(1.0) * 0.1, hi + hi.abs().max(1.0) * 0.1)
        }
        (lo, hi) => (lo - (hi - lo) * 0.05, hi + (hi - lo) * 0.05),
    };
    let (x0, mut x1) = (TimeAxis::of(store).x(t0), TimeAxis::of(store).x(t1));
    if x1 <= x0 {
        x1 = x0 + 1e-6;
    }
    let px_per_s = columns as f64 / (x1 - x0);
    let axes = Axes { store, pane, marks, columns, t: (t0, t1), x: (x0, x1), values: !ids_only };
    let (mut chart, mut names) = axes.chart(area, (lo, hi))?;
    let lines = |(lo, hi): (f64, f64)| -> Vec<Vec<Vec<(f64, f64)>>> {
        drawn
            .iter()
            .map(|d| {
                d.envs
                    .iter()
                    .flat_map(|e| runs(store, e.columns(), d.steps, px_per_s, (x0, x1), (lo, hi)))
                    .map(|mut run| {
                        if d.lane {
                            run.iter_mut().for_each(|p| p.1 = 0.5 * (lo + hi));
                        }
                        run
                    })
                    .collect()
            })
            .collect()
    };
    let mut drawn_lines = lines((lo, hi));
    // The legend where it hides no data (`legend.rs`).
    let mut position = SeriesLabelPosition::UpperRight;
    if !drawn.is_empty() {
        let labels: Vec<&str> = drawn.iter().map(|d| d.label).collect();
        let size = super::legend::size(&labels, &("sans-serif", LEGEND_FONT).into_font().into());
        let (pw, ph) = chart.plotting_area().dim_in_pixel();
        let (pw, ph) = (f64::from(pw), f64::from(ph));
        let to_px = |&(x, y): &(f64, f64)| ((x - x0) / (x1 - x0) * pw, (hi - y) / (hi - lo) * ph);
        let px: Vec<Vec<(f64, f64)>> = drawn_lines.iter().flatten().map(|l| l.iter().map(to_px).collect()).collect();
        match super::legend::place(size, (pw, ph), &px, data, (lo, hi)) {
            Placement::Clear(p) | Placement::Least(p) => position = p,
            Placement::Raise(top) => {
                // Drawn again on a taller y range, the data under the legend.
                hi = top;
                area.fill(&WHITE).map_err(draw_err)?;
                (chart, names) = axes.chart(area, (lo, hi))?;
                drawn_lines = lines((lo, hi));
            }
        }
    }
    let plot = chart.plotting_area();
    let (pw, ph) = plot.dim_in_pixel();
    let (ax, ay) = plot.get_pixel_range();
    // One pixel of the plot area in plot coordinates, each way.
    let (px, py) = ((x1 - x0) / f64::from(pw.max(1)), (hi - lo) / f64::from(ph.max(1)));
    for (d, runs) in drawn.iter().zip(&drawn_lines) {
        // Two pixels wide: the path, and the path a pixel right and a pixel up, each 1 pixel
        // wide (module docs) and clamped to the area again.
        let style = d.color.stroke_width(if stroke == Stroke::Wide { 2 } else { 1 });
        let shifted = |(dx, dy): (f64, f64)| {
            let shift = move |&(x, y): &(f64, f64)| ((x + dx).clamp(x0, x1), (y + dy).clamp(lo, hi));
            runs.iter().map(move |pts| PathElement::new(pts.iter().map(shift).collect::<Vec<_>>(), style))
        };
        let color = d.color;
        chart
            .draw_series(passes(stroke, px, py).iter().copied().flat_map(shifted))
            .map_err(draw_err)?
            .label(d.label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 16, y + 4)], color.filled()));
    }
    draw_names(&mut chart, &names, (lo, hi), px_per_s)?;
    if !drawn.is_empty() {
        chart
            .configure_series_labels()
            .position(position)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .label_font(("sans-serif", LEGEND_FONT))
            .draw()
            .map_err(draw_err)?;
    }
    Ok((ax, ay))
}

/// The legend's font size.
const LEGEND_FONT: u32 = 12;

/// A pane's chart: plot x (seconds) against the value.
pub(super) type Chart<'b, DB> = ChartContext<'b, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// What a pane's axes, grid, throttle bands and markers are drawn from.
struct Axes<'a> {
    store: &'a Store,
    pane: &'a WritePane,
    marks: &'a [Mark],
    columns: usize,
    t: (i64, i64),
    x: (f64, f64),
    /// The y axis is labelled with values (not for a pane of identifiers only).
    values: bool,
}

impl Axes<'_> {
    /// The pane's chart on the y range `lo..hi`: title, axes, grid, throttle bands and markers
    /// drawn; and the markers' names, to draw over the series.
    fn chart<'b, DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        (lo, hi): (f64, f64),
    ) -> Result<(Chart<'b, DB>, Vec<Name>), WriteError> {
        let Axes { store, pane, marks, columns, t: (t0, t1), x: (x0, x1), values } = *self;
        let units = pane.units();
        // The title and the axis name the unit as the axis's largest ticks print it ("GHz" over
        // ticks of 2.1 GHz, not the driver's "MHz"), as the window's pane header does.
        let shown = if units.is_empty() || units.contains(", ") {
            units.clone()
        } else {
            crate::view::text::row_scale(&[lo, hi], &units).1
        };
        let title = if shown.is_empty() { pane.title.clone() } else { format!("{} — {shown}", pane.title) };
        let mut chart = ChartBuilder::on(area)
            .margin(MARGIN)
            .caption(title, ("sans-serif", 18))
            .x_label_area_size(X_LABELS)
            .y_label_area_size(Y_LABELS)
            .build_cartesian_2d(x0..x1, lo..hi)
            .map_err(draw_err)?;
        let y_unit = if units.contains(", ") { String::new() } else { units.clone() };
        let x_fmt = |x: &f64| time_label(*x);
        let y_fmt = |y: &f64| if values { si(*y, &y_unit) } else { String::new() };
        // As many value labels as stand apart (12-pixel text about 28 pixels apart), at most
        // plotters' ten: a low pane's ten overlapped into one smudge.
        let (_, ph) = chart.plotting_area().dim_in_pixel();
        chart
            .configure_mesh()
            .y_labels((ph / Y_LABEL_PITCH).clamp(2, 10) as usize)
            .light_line_style(BLACK.mix(0.06))
            .bold_line_style(BLACK.mix(0.15))
            .x_desc("time since the first sample")
            .y_desc(if shown.is_empty() { "value".to_owned() } else { shown.clone() })
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .label_style(("sans-serif", 12))
            .axis_desc_style(("sans-serif", 14))
            .draw()
            .map_err(draw_err)?;
        let px_per_s = columns as f64 / (x1 - x0);
        draw_throttle(&mut chart, store, pane, columns, (t0, t1), (x0, x1), (lo, hi))?;
        let names = draw_marks(&mut chart, store, marks, (t0, t1), (x0, x1), (lo, hi), px_per_s)?;
        Ok((chart, names))
    }
}

/// The shifts (plot units) a series' line is stroked at: none for one wide path, else none, a
/// pixel right and a pixel up.
fn passes(stroke: Stroke, px: f64, py: f64) -> Vec<(f64, f64)> {
    match stroke {
        Stroke::Wide => vec![(0.0, 0.0)],
        Stroke::Passes => vec![(0.0, 0.0), (px, 0.0), (0.0, py)],
    }
}

/// Throttle reasons of the pane's visible throttle series behind everything, as the window draws
/// them (`view::throttle`): a translucent amber band over the pane's height where a mask is set,
/// its opacity the share of the time it is set, named at the bottom where it is wide enough; in
/// a pane of several devices the name starts with the device.
fn draw_throttle<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    store: &Store,
    pane: &WritePane,
    columns: usize,
    (t0, t1): (i64, i64),
    (x0, x1): (f64, f64),
    (lo, hi): (f64, f64),
) -> Result<(), WriteError> {
    let px_per_s = columns as f64 / (x1 - x0);
    let mut env = Envelope::new();
    for s in pane.series.iter().filter(|s| s.visible && !s.throttle.is_empty()) {
        // "device/group/metric" when the pane's export names devices.
        let device = (s.label.matches('/').count() >= 2).then(|| s.label.split('/').next().unwrap_or_default());
        for &id in &s.ids {
            for b in crate::view::throttle::bands(store, id, t0, t1, columns, &mut env) {
                let (a, e) = (TimeAxis::of(store).x(b.from).clamp(x0, x1), TimeAxis::of(store).x(b.to).clamp(x0, x1));
                let e = e.max(a + 1.0 / px_per_s);
                let fill = THROTTLE.mix(0.22 * f64::from(b.share)).filled();
                chart.draw_series(std::iter::once(Rectangle::new([(a, lo), (e, hi)], fill))).map_err(draw_err)?;
                if (e - a) * px_per_s > 40.0 && b.share >= 1.0 {
                    let reasons = crate::view::throttle::label(b.mask, &s.throttle);
                    let text = match device {
                        Some(d) => format!("{d} · {reasons}"),
                        None => reasons,
                    };
                    let at = (a + 3.0 / px_per_s, lo + (hi - lo) * 0.02);
                    let style = ("sans-serif", 11).into_font().color(&THROTTLE_TEXT);
                    chart.draw_series(std::iter::once(Text::new(text, at, style))).map_err(draw_err)?;
                }
            }
        }
    }
    Ok(())
}

/// Throttle bands' colour (amber, drawn translucent) and their labels', as on screen.
const THROTTLE: RGBColor = RGBColor(230, 150, 0);
const THROTTLE_TEXT: RGBColor = RGBColor(160, 100, 10);

/// Polylines through each column's min and max, one per gap-free run (`view::runs`: the same
/// runs and column spans as the screen). A state (`steps`) holds each column's last value until
/// the next column and steps there, as the screen draws it. Every point is clipped to the plot
/// area `(x0, x1)` × `(y0, y1)`: plotters draws a path wherever its points fall, even over the
/// pane above. The lines are horizontal and vertical steps or pass within the area, so clamping
/// is clipping.
fn runs(
    store: &Store,
    cols: &[EnvelopeColumn],
    steps: bool,
    px_per_s: f64,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Vec<Vec<(f64, f64)>> {
    let clamp = |t: i64| TimeAxis::of(store).x(t).clamp(x0, x1);
    let y = |v: f64| v.clamp(y0, y1);
    let px_per_ns = px_per_s * 1e-9;
    gap_free_runs(cols)
        .map(|run| {
            let mut pts = Vec::with_capacity(run.len() * 2);
            for c in run {
                let (a, b) = column_span(c, px_per_ns);
                let (xa, xb) = (clamp(a), clamp(b));
                if steps && let Some(&(_, held)) = pts.last() {
                    // The previous value holds up to this column, which steps from it.
                    pts.push((xa, held));
                }
                if a != b {
                    pts.extend([(xa, y(c.min)), (xa, y(c.max)), (xb, y(c.max)), (xb, y(c.min))]);
                } else {
                    pts.push((xa, y(c.min)));
                    if c.max != c.min {
                        pts.push((xa, y(c.max)));
                    }
                }
            }
            pts
        })
        .collect()
}

/// The panes as a PNG image (`--png`).
pub struct Png;

impl Format for Png {
    fn key(&self) -> &'static str {
        "png"
    }
    fn value_name(&self) -> &'static str {
        "PNG"
    }
    fn help(&self) -> &'static str {
        "Write a PNG image here"
    }
    fn extension(&self) -> &'static str {
        "png"
    }
    fn name(&self) -> &'static str {
        "PNG"
    }
    fn title(&self) -> &'static str {
        "PNG image"
    }
    fn scope(&self) -> Scope {
        Scope::Picture
    }
    fn write(&self, input: &Input<'_>, path: &Path, _progress: &dyn Fn(f32)) -> Result<String, String> {
        let size = input.size.unwrap_or_else(|| default_size(input.spec));
        png(input.store, input.spec, path, size).map_err(|e| e.to_string())?;
        Ok(format!("{} ({}x{})", path.display(), size.0, size.1))
    }
}

/// The panes as an SVG image (`--svg`).
pub struct Svg;

impl Format for Svg {
    fn key(&self) -> &'static str {
        "svg"
    }
    fn value_name(&self) -> &'static str {
        "SVG"
    }
    fn help(&self) -> &'static str {
        "Write an SVG image here"
    }
    fn extension(&self) -> &'static str {
        "svg"
    }
    fn name(&self) -> &'static str {
        "SVG"
    }
    fn title(&self) -> &'static str {
        "SVG image"
    }
    fn scope(&self) -> Scope {
        Scope::Picture
    }
    fn write(&self, input: &Input<'_>, path: &Path, _progress: &dyn Fn(f32)) -> Result<String, String> {
        let size = input.size.unwrap_or_else(|| default_size(input.spec));
        svg(input.store, input.spec, path, size).map_err(|e| e.to_string())?;
        Ok(format!("{} ({}x{})", path.display(), size.0, size.1))
    }
}

#[path = "image_marks.rs"]
mod marks;
use marks::{Name, draw_marks, draw_names};

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "image_ids_tests.rs"]
mod ids_tests;
