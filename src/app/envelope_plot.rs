//! Plotting store series through envelopes, never through raw points.
//!
//! egui_plot draws what it is given, point by point: 16 series of 1M points
//! cost hundreds of milliseconds a frame. Here every series is first reduced by
//! the store to one [`EnvelopeColumn`] per physical pixel column (or a coarser
//! bucket in coarsened history) and drawn as one [`EnvelopeItem`]:
//!
//! - the **envelope band**: an egui [`Mesh`] strip through each column's min
//!   and max, in the series colour, widened to the line width so a flat signal
//!   reads as an ordinary line. One strip per gap-free run: a `Polygon` would
//!   need to be convex, a mesh does not. A single-sample spike is the max of
//!   its column, so it reaches the band's edge in full colour at any zoom.
//!   The mesh goes to the GPU as is (tessellating it is a copy; a path through
//!   the same points with egui's anti-aliasing feathering costs about ten times
//!   more per point). Columns are one physical pixel apart, so the band is not
//!   feathered: that would double its vertices and the frame's tessellation
//!   time for a sub-pixel softening of the top and bottom edges;
//! - a **line** through the column means, added only where columns are more
//!   than 2 px apart (zoomed in past one sample per pixel). There each column
//!   is typically one exact sample and a band of constant vertical thickness
//!   would make steep segments look thin; an anti-aliased stroke doesn't, and
//!   with that few points it is cheap. Further in (columns more than 8 px apart) each sample
//!   also gets a dot.
//!
//! Gap-free runs, column spans and the vertical edges joining a step follow `view::runs`, as
//! exported images do:
//! a wide column (coarsened history, sparse data) is drawn flat across its
//! whole time span rather than at its middle, so coarse buckets read as steps
//! of their real width; columns with no finite value (only NaN/inf, or rates
//! that don't exist) and gaps break the band and the line: nothing is drawn
//! across a pause. The column means are the hover points
//! ([`PlotItem::geometry`]), so egui_plot's tooltip reads a column mean; exact
//! readouts come from `Store::nearest`.
//!
//! Columns that lie wholly above or below the plot, with both neighbours on the same side, are
//! left out of the band (the strip restarts after them): every triangle touching them would be
//! clipped away, so nothing inside the plot changes, and a pane of counters far apart in
//! magnitude does not mesh the ones out of view (`envelope_plot/tests.rs` compares the pixels).
//! A series whose whole envelope lies on one side of the plot is not walked column by column.
//!
//! [`EnvelopePlot`] is kept per plot pane across frames. Its items share one
//! state: the first item egui_plot initialises with the frame's final x range
//! queries the store for *all* series at once (`Store::draw_envelopes`: one column
//! layout per stream, then a cheap pass per series over the pyramid's compact
//! drawing bands, whose min and max enclose the exact ones) at the plot's width in
//! physical pixels; the others find it done. Those columns carry no means: where a
//! run is sparse enough for a line through them, and for hover points, the item
//! asks the store for its exact envelope. The envelope buffers and the band
//! meshes are reused from frame to frame.
//!
//! A view at raw samples or the finest pyramid nodes (which have no drawing bands) keeps its
//! columns from frame to frame instead (`grid.rs`): columns on a fixed time grid, of which a
//! sliding live view computes only the newest; those columns are exact.

use std::cell::{OnceCell, RefCell};
use std::ops::RangeInclusive;
use std::sync::Arc;

use egui::epaint::{Mesh, PathStroke, Vertex, WHITE_UV};
use egui::{Color32, Pos2, Shape, Ui, pos2};
use egui_plot::{PlotBounds, PlotGeometry, PlotItem, PlotItemBase, PlotPoint, PlotTransform, PlotUi};

use crate::store::{Envelope, EnvelopeColumn, SeriesId, Store};
use crate::view::runs::{column_span, gap_free_runs, join_before};

mod grid;
#[cfg(test)]
mod grid_tests;

/// A series to plot, with how to draw it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotSeries {
    /// The store series whose samples are drawn.
    pub series: SeriesId,
    /// Legend and hover name; also the item's id within the plot, so keep it
    /// unique and stable.
    pub name: String,
    /// Colour of the band and line.
    pub color: Color32,
}

/// Line width in points.
const LINE_WIDTH: f32 = 1.5;
/// Columns further apart than this (in points) also get a stroked line.
const SPARSE_PX: f32 = 2.0;
/// Columns further apart than this (in points) also get a dot at each sample.
const POINT_PX: f32 = 8.0;

/// What the items of one plot share.
#[derive(Default)]
struct Shared {
    series: Vec<SeriesId>,
    envs: Vec<Envelope>,
    /// Last frame's band meshes, reused once egui has dropped its handle.
    meshes: Vec<Option<Arc<Mesh>>>,
    /// `(t0, t1, columns, store version)` the envelopes hold.
    key: Option<(i64, i64, usize, u64)>,
    /// Nothing after this time is drawn (a paused view).
    limit: Option<i64>,
    /// Columns kept across frames (`grid.rs`).
    kept: grid::KeptColumns,
}

impl Shared {
    fn ensure(&mut self, store: &Store, x: &RangeInclusive<f64>, pixels: usize) {
        let (t0, mut t1) = (store.from_plot_x(*x.start()), store.from_plot_x(*x.end()));
        let full = t1;
        let mut columns = pixels;
        if let Some(limit) = self.limit
            && limit < t1
        {
            // Same pixel columns, only fewer of them: up to the limit.
            let keep = (limit.saturating_sub(t0)) as f64 / (t1.saturating_sub(t0)).max(1) as f64;
            columns = ((columns as f64 * keep).round() as usize).max(1);
            t1 = limit.max(t0);
        }
        let key = (t0, t1, columns, store.version());
        if self.key != Some(key) {
            self.envs.resize_with(self.series.len(), Envelope::new);
            if !self.kept.fill(store, &self.series, (t0, full), pixels, self.limit, &mut self.envs) {
                store.draw_envelopes(&self.series, key.0, key.1, columns, &mut self.envs);
            }
            self.key = Some(key);
        }
    }
}

/// The envelope path of one plot pane; keep it across frames.
#[derive(Default)]
pub struct EnvelopePlot {
    shared: RefCell<Shared>,
}

impl EnvelopePlot {
    /// A plot with nothing cached yet: the first frame queries the store.
    pub fn new() -> EnvelopePlot {
        EnvelopePlot::default()
    }

    /// Add one [`EnvelopeItem`] per series to the plot. The envelopes are
    /// computed for the plot's final visible x range (seconds since the store
    /// origin) at its width in physical pixels.
    pub fn add_to<'a>(&'a self, plot_ui: &mut PlotUi<'a>, store: &'a Store, series: &[PlotSeries]) {
        let columns = pixel_columns(plot_ui.transform().frame().width(), plot_ui.ctx().pixels_per_point());
        {
            let mut sh = self.shared.borrow_mut();
            if sh.series.len() != series.len() || sh.series.iter().zip(series).any(|(a, b)| *a != b.series) {
                sh.series = series.iter().map(|s| s.series).collect();
                sh.key = None;
            }
            sh.meshes.resize_with(series.len(), || None);
            if sh.key.is_none() {
                // First frame: compute now so that `bounds()` (auto-bounds)
                // has something to go by before `initialize` runs.
                sh.ensure(store, &plot_ui.plot_bounds().range_x(), columns);
            }
        }
        for (index, s) in series.iter().enumerate() {
            plot_ui.add(EnvelopeItem {
                base: PlotItemBase::new(s.name.clone()),
                shared: &self.shared,
                index,
                store,
                color: s.color,
                columns,
                points: OnceCell::new(),
            });
        }
    }

    /// Draw nothing after `t` (ns): a paused view keeps showing exactly what it showed, even
    /// where its range reaches past the data of the moment it was paused.
    pub(crate) fn set_time_limit(&self, t: Option<i64>) {
        let mut sh = self.shared.borrow_mut();
        if sh.limit != t {
            sh.limit = t;
            sh.key = None;
        }
    }

    /// `(t0, t1, columns)` of the envelopes last computed (what the last frame
    /// drew), if any.
    pub fn last_query(&self) -> Option<(i64, i64, usize)> {
        self.shared.borrow().key.map(|(t0, t1, columns, _)| (t0, t1, columns))
    }
}

/// Pixel columns of a plot `width_points` wide.
pub fn pixel_columns(width_points: f32, pixels_per_point: f32) -> usize {
    let px = (width_points * pixels_per_point).round();
    if px.is_finite() && px >= 1.0 { px as usize } else { 1 }
}

/// One series drawn from its envelope (see the module docs).
pub struct EnvelopeItem<'a> {
    base: PlotItemBase,
    shared: &'a RefCell<Shared>,
    index: usize,
    store: &'a Store,
    color: Color32,
    columns: usize,
    /// Column means, for hover: built only if egui_plot asks (pointer over
    /// the plot).
    points: OnceCell<Vec<PlotPoint>>,
}

/// Linear map from (time, value) to screen position for one frame. Both axes are anchored
/// at a reference inside the view and scaled in f64: values like 1e9 ns/s over a 100 px
/// axis are 1e-7 px per unit, which an f32 difference of two screen positions rounds to 0.
struct ScreenMap {
    t_ref: i64,
    x_ref: f32,
    /// Screen points per nanosecond.
    x_scale: f64,
    v_ref: f64,
    y_ref: f32,
    /// Screen points per unit of value (negative: screen y grows downwards).
    y_scale: f64,
    /// Screen y range of the plot area (top, bottom).
    y_clip: (f32, f32),
}

/// Where a column lies against the plot's visible y range.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Above,
    Inside,
    Below,
}

impl ScreenMap {
    fn new(store: &Store, transform: &PlotTransform, t_ref: i64) -> ScreenMap {
        let v_ref = transform.bounds().min()[1];
        ScreenMap {
            t_ref,
            x_ref: transform.position_from_point_x(store.to_plot_x(t_ref)),
            x_scale: transform.dpos_dvalue_x() * 1e-9,
            v_ref,
            y_ref: transform.position_from_point_y(v_ref),
            y_scale: transform.dpos_dvalue_y(),
            y_clip: (transform.frame().top(), transform.frame().bottom()),
        }
    }

    #[inline]
    fn x(&self, t: i64) -> f32 {
        let dt = match t.checked_sub(self.t_ref) {
            Some(d) => d as f64,
            None => t as f64 - self.t_ref as f64,
        };
        self.x_ref + (dt * self.x_scale) as f32
    }

    #[inline]
    fn y(&self, v: f64) -> f32 {
        self.y_ref + ((v - self.v_ref) * self.y_scale) as f32
    }

    /// Screen rows `(top, bottom)` of a band from value `lo` to `hi` (`lo <= hi`). [`Self::y`]
    /// is monotonic (decreasing unless the axis is inverted), so ordering the two needs no
    /// comparison of positions.
    #[inline]
    fn rows(&self, lo: f64, hi: f64) -> (f32, f32) {
        let (a, b) = (self.y(hi), self.y(lo));
        if self.y_scale <= 0.0 { (a, b) } else { (b, a) }
    }

    /// Where a band from value `lo` to `hi` (`lo <= hi`, `half_width` added above and below)
    /// lies against the plot's visible y range.
    #[inline]
    fn side(&self, lo: f64, hi: f64, half_width: f32) -> Side {
        let (top, bottom) = self.rows(lo, hi);
        self.side_of(top, bottom, half_width)
    }

    /// [`Self::side`] of a band already on screen, from `top` to `bottom` (`top <= bottom`).
    #[inline]
    fn side_of(&self, top: f32, bottom: f32, half_width: f32) -> Side {
        if bottom + half_width < self.y_clip.0 {
            Side::Above
        } else if top - half_width > self.y_clip.1 {
            Side::Below
        } else {
            Side::Inside
        }
    }

    /// Screen x range of a column (`view::runs::column_span`): a point at its middle, or its
    /// whole span when that is wide.
    #[inline]
    fn column_xs(&self, c: &EnvelopeColumn) -> (f32, f32) {
        let (a, b) = column_span(c, self.x_scale);
        (self.x(a), self.x(b))
    }
}

/// Appends a band strip to a mesh, one column edge at a time.
struct Strip<'m> {
    mesh: &'m mut Mesh,
    color: Color32,
    half_width: f32,
    started: bool,
}

impl Strip<'_> {
    /// The edge at `x` of a band from screen row `top` to `bottom` (`top <= bottom`,
    /// [`ScreenMap::rows`]).
    #[inline]
    fn edge(&mut self, x: f32, top: f32, bottom: f32) {
        let (top, bottom) = (top - self.half_width, bottom + self.half_width);
        let i = self.mesh.vertices.len() as u32;
        let v = |y| Vertex { pos: pos2(x, y), uv: WHITE_UV, color: self.color };
        self.mesh.vertices.extend_from_slice(&[v(top), v(bottom)]);
        if self.started {
            self.mesh.indices.extend_from_slice(&[i - 2, i - 1, i, i - 1, i, i + 1]);
        }
        self.started = true;
    }
}

/// Are the columns of a run further apart than [`SPARSE_PX`] on average (then a line through
/// their means is drawn too)?
fn sparse(run: &[EnvelopeColumn], map: &ScreenMap) -> bool {
    let (first, last) = (map.x(run[0].t_start), map.x(run[run.len() - 1].t_end));
    run.len() > 1 && (last - first).abs() > SPARSE_PX * (run.len() - 1) as f32
}

impl EnvelopeItem<'_> {
    fn line_width(&self) -> f32 {
        if self.highlighted() { 2.0 * LINE_WIDTH } else { LINE_WIDTH }
    }

    /// Band (and, where sparse, line) of one gap-free run of columns. False, having drawn
    /// nothing, when the run needs a line through column means that `exact` columns do not
    /// have (`Envelope::is_exact`).
    fn run(
        &self,
        run: &[EnvelopeColumn],
        exact: bool,
        map: &ScreenMap,
        mesh: &mut Mesh,
        shapes: &mut Vec<Shape>,
        joins: &mut Vec<egui::Rect>,
    ) -> bool {
        let width = self.line_width();
        let (first, last) = (map.x(run[0].t_start), map.x(run[run.len() - 1].t_end));
        let sparse = sparse(run, map);
        if sparse && !exact {
            return false;
        }
        let mut strip = Strip { mesh, color: self.color, half_width: 0.5 * width, started: false };
        // Step edges of wide or sparse columns: drawn after the strip (a strip's triangles join
        // consecutive vertices). `joins` is reused from run to run.
        joins.clear();
        let hw = 0.5 * width;
        // A column's reach on screen (top, bottom, side): its min..max and the step edge joining
        // it to the previous column, which is min(min, previous max)..max(max, previous min)
        // whether or not the two overlap. Each value is mapped to the screen once.
        let reach = |i: usize| {
            let c: &EnvelopeColumn = &run[i];
            let (lo, hi) = match i.checked_sub(1) {
                Some(p) => {
                    let p = &run[p];
                    (if p.max < c.min { p.max } else { c.min }, if p.min > c.max { p.min } else { c.max })
                }
                None => (c.min, c.max),
            };
            let (top, bottom) = map.rows(lo, hi);
            (top, bottom, map.side_of(top, bottom, hw))
        };
        let (mut prev, mut here) = (None, reach(0));
        for (i, c) in run.iter().enumerate() {
            let next = (i + 1 < run.len()).then(|| reach(i + 1));
            let (top, bottom, side) = here;
            let culled = side != Side::Inside && prev.unwrap_or(side) == side && next.map_or(side, |n| n.2) == side;
            prev = Some(side);
            if let Some(n) = next {
                here = n;
            }
            if culled {
                // The column and both its neighbours reach no further than above (or below) the
                // plot: every triangle touching its edges, and its step edge, would be clipped
                // away. The strip starts afresh after it.
                strip.started = false;
                continue;
            }
            let (xa, xb) = map.column_xs(c);
            if sparse || xb != xa {
                if let Some((lo, hi)) = i.checked_sub(1).and_then(|p| join_before(&run[p], c)) {
                    // A step: its vertical edge, one line wide, at the column's start.
                    let (top, bottom) = map.rows(lo, hi);
                    joins.push(egui::Rect::from_x_y_ranges(xa - hw..=xa + hw, top - hw..=bottom + hw));
                }
                let (top, bottom) = map.rows(c.min, c.max);
                strip.edge(xa, top, bottom);
                if xb != xa {
                    strip.edge(xb, top, bottom);
                }
            } else {
                // Columns about a pixel apart: the strip's edge itself reaches over the step
                // (two vertices instead of a rectangle's four).
                strip.edge(xa, top, bottom);
            }
        }
        for r in joins.drain(..) {
            strip.mesh.add_colored_rect(r, self.color);
        }
        if let [c] = run
            && map.side(c.min, c.max, 0.5 * width) == Side::Inside
        {
            // A lone column: widen it to a bar so a strip of one edge shows.
            let (xa, xb) = map.column_xs(c);
            let (top, bottom) = map.rows(c.min, c.max);
            let rect = egui::Rect::from_min_max(
                pos2(xa.min(xb) - 0.5 * width, top - 0.5 * width),
                pos2(xa.max(xb) + 0.5 * width, bottom + 0.5 * width),
            );
            strip.mesh.add_colored_rect(rect, self.color);
        }
        if sparse {
            let mut pts: Vec<Pos2> = Vec::with_capacity(run.len() * 2);
            for c in run {
                let (xa, xb) = map.column_xs(c);
                let y = map.y(c.mean);
                pts.push(pos2(xa, y));
                if xb != xa {
                    pts.push(pos2(xb, y));
                }
            }
            if (last - first).abs() > POINT_PX * (run.len() - 1) as f32 {
                // Zoomed in far: each column is a sample or two; mark them.
                for c in run.iter().filter(|c| c.samples <= 2) {
                    let (xa, xb) = map.column_xs(c);
                    shapes.push(Shape::circle_filled(pos2(0.5 * (xa + xb), map.y(c.mean)), 1.5 * width, self.color));
                }
            }
            shapes.push(Shape::line(pts, PathStroke::new(width, self.color)));
        }
        true
    }

    /// This item's envelope with exact columns (computed now if the frame's are banded).
    fn exact_envelope<'e>(&self, sh: &'e mut Shared) -> Option<&'e Envelope> {
        let series = *sh.series.get(self.index)?;
        let env = sh.envs.get_mut(self.index)?;
        if !env.is_exact() {
            let (t0, t1, columns) = env.request();
            self.store.envelope(series, t0, t1, columns, env);
        }
        Some(env)
    }
}

impl PlotItem for EnvelopeItem<'_> {
    fn shapes(&self, _ui: &Ui, transform: &PlotTransform, shapes: &mut Vec<Shape>) {
        let mut sh = self.shared.borrow_mut();
        let Some(mut handle) = sh.meshes.get_mut(self.index).map(Option::take) else {
            return;
        };
        let reused = handle.as_mut().and_then(Arc::get_mut).map(|m| {
            m.vertices.clear();
            m.indices.clear();
        });
        if reused.is_none() {
            handle = Some(Arc::new(Mesh::default()));
        }
        let arc = handle.as_mut().expect("set above");
        let mesh = Arc::get_mut(arc).expect("a fresh or unshared mesh");
        let first_shape = shapes.len();
        let mut joins = Vec::new();
        for _ in 0..2 {
            let Some(env) = sh.envs.get(self.index) else {
                break;
            };
            let (cols, exact) = (env.columns(), env.is_exact());
            let Some(first) = cols.first() else {
                break;
            };
            let map = ScreenMap::new(self.store, transform, first.t_start);
            // Every column, and so every step between two, lies above (or below) the plot: no
            // band is drawn (each column would be culled), only sparse runs' lines (clipped).
            // (Columns without a value have NaN bounds, which these comparisons pass over.) Some
            // column inside the plot settles it at once; else the columns' whole range decides.
            let hw = 0.5 * self.line_width();
            let out_of_view = !cols.iter().any(|c| c.min <= c.max && map.side(c.min, c.max, hw) == Side::Inside) && {
                let (lo, hi) = cols.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
                    (if c.min < lo { c.min } else { lo }, if c.max > hi { c.max } else { hi })
                });
                lo > hi || map.side(lo, hi, hw) != Side::Inside
            };
            if !out_of_view {
                mesh.reserve_vertices(cols.len() * 2 + 8);
                mesh.reserve_triangles(cols.len() * 2 + 4);
            }
            if gap_free_runs(cols)
                .all(|run| (out_of_view && !sparse(run, &map)) || self.run(run, exact, &map, mesh, shapes, &mut joins))
            {
                break;
            }
            // A sparse run needs column means: draw again from exact columns.
            mesh.clear();
            shapes.truncate(first_shape);
            self.exact_envelope(&mut sh);
        }
        if !mesh.is_empty() {
            // The band first, so lines are drawn over it.
            shapes.insert(first_shape, Shape::Mesh(arc.clone()));
        }
        sh.meshes[self.index] = handle;
    }

    fn initialize(&mut self, x_range: RangeInclusive<f64>) {
        self.shared.borrow_mut().ensure(self.store, &x_range, self.columns);
    }

    fn color(&self) -> Color32 {
        self.color
    }

    fn geometry(&self) -> PlotGeometry<'_> {
        PlotGeometry::Points(self.points.get_or_init(|| {
            let mut sh = self.shared.borrow_mut();
            let Some(env) = self.exact_envelope(&mut sh) else {
                return Vec::new();
            };
            env.columns()
                .iter()
                .filter(|c| c.count > 0)
                .map(|c| PlotPoint::new(self.store.to_plot_x(c.t_mid()), c.mean))
                .collect()
        }))
    }

    fn bounds(&self) -> PlotBounds {
        let mut b = PlotBounds::NOTHING;
        if let Some(env) = self.shared.borrow().envs.get(self.index) {
            for c in env.columns().iter().filter(|c| c.count > 0) {
                b.extend_with(&PlotPoint::new(self.store.to_plot_x(c.t_start), c.min));
                b.extend_with(&PlotPoint::new(self.store.to_plot_x(c.t_end), c.max));
            }
        }
        b
    }

    fn base(&self) -> &PlotItemBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut PlotItemBase {
        &mut self.base
    }
}

#[cfg(test)]
mod tests;
