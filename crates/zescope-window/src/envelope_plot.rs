//! Plotting store series through envelopes, never through raw points.
//!
//! egui_plot draws what it is given, point by point: 16 series of 1M points
//! cost hundreds of milliseconds a frame. Here every series is first reduced by
//! the store to one [`EnvelopeColumn`] per physical pixel column (or a coarser
//! bucket in coarsened history) and drawn as one [`EnvelopeItem`]:
//!
//! - the **envelope band**: an egui [`Mesh`](egui::epaint::Mesh) strip through each column's min
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
//! ([`PlotItem::geometry`](egui_plot::PlotItem::geometry)), so egui_plot's tooltip reads a column mean; exact
//! readouts come from `Store::nearest`.
//!
//! Columns that lie wholly above or below the plot, with both neighbours on the same side, are
//! left out of the band (the strip restarts after them): every triangle touching them would be
//! clipped away, so nothing inside the plot changes, and a pane of counters far apart in
//! magnitude does not mesh the ones out of view (`envelope_plot/tests.rs` compares the pixels).
//! A series whose whole envelope lies on one side of the plot is not walked column by column.
//!
//! # Who computes what, when
//!
//! [`EnvelopePlot`] is kept per plot pane across frames. Its series are queried and meshed
//! **before** `Plot::show`, as plain data per series; inside `show` each item only hands over
//! its own series' data. No item does another's work, and nothing depends on the order in which
//! egui_plot calls its items.
//!
//! 1. Before `Plot::show`, [`EnvelopePlot::query`] asks the store for every series at once,
//!    for the x range the frame will show ([`PlotFrame::x`]: zescope's time view decides it and
//!    the caller sets it as the plot's bounds) at the plot's width in physical pixels *of the
//!    previous frame* (the rect [`EnvelopePlot::add_to`] saw last; a width change shows next
//!    frame, as egui_plot's own last transform would have it). `Store::draw_envelopes` works out
//!    one column plan per stream and then makes a cheap pass per series over the pyramid's
//!    compact drawing bands, whose min and max enclose the exact ones, on two threads for many
//!    series; a view at raw samples or the finest pyramid nodes (which have no drawing bands)
//!    keeps its columns from frame to frame instead (`grid.rs`): columns on a fixed time grid,
//!    of which a sliding live view computes only the newest; those columns are exact. A paused
//!    view's time limit ([`PlotFrame::limit`]) ends the columns: nothing after it is drawn.
//!    Each series' y extent is taken from its envelope there, once.
//! 2. [`EnvelopePlot::predict`] computes the transform egui_plot will settle on, the way it
//!    does: the previous frame's rect, x from the frame, y from the frame's fixed range or, for
//!    auto bounds, from the series' y extents (those of every plot sharing the pane, e.g. a
//!    comparison overlay) plus egui_plot's default 5 % margin. [`EnvelopePlot::mesh`] draws
//!    every series against it into its band mesh and lines (`draw.rs`); many series of banded
//!    columns are split over two threads (`zescope_store::par`) as the query was. Where a sparse run
//!    needs column means that banded columns lack, that series is queried again exactly. The
//!    envelope buffers and band meshes are reused from frame to frame.
//!    [`EnvelopePlot::prepare`] runs these steps for a plot alone in its pane.
//! 3. Inside `Plot::show`, [`EnvelopePlot::add_to`] adds one [`EnvelopeItem`] per series,
//!    each borrowing its own envelope, y extent and mesh. egui_plot asks each for its bounds
//!    (the extent of step 1, so auto bounds fit what is drawn), its shapes (the mesh, then the
//!    lines over it) and, while the pointer is over the plot, its hover points: the column means
//!    of the exact envelope, which the item asks the store for when its columns are banded (kept
//!    for that query, and drawn from next frame if it repeats).
//!
//! When egui_plot's final bounds are not the predicted ones (the user dragged, zoomed or
//! scrolled the plot, handled inside `show`; a y range held by a y lock and zoomed; the plot
//! was resized; a legend highlights the item; no x range was known before `show`), each item
//! concerned makes its own data for that frame, on the UI thread: in `initialize`, given the
//! final x range, it queries its own series if the range is not the one queried (at the same
//! pixel columns and time limit, with a fresh `Store::draw_envelopes`, not kept columns); in
//! `shapes`, given the final transform, it meshes its envelope if the transform (or its line
//! width) is not the one meshed. That frame is drawn as the final bounds say, so nothing is
//! stale and no repaint is needed; the next frame's prediction holds the new range (the time
//! view took the user's move from the frame's bounds) and the new rect. The first frame of a
//! plot has no previous rect: [`EnvelopePlot::add_to`] then queries and meshes for the rect
//! egui_plot allotted, before it creates any item.

use std::cell::{Cell, OnceCell};

use egui::{Color32, Rect, Vec2};
use egui_plot::{PlotBounds, PlotItemBase, PlotPoint, PlotTransform, PlotUi};

use draw::Style;
pub use item::EnvelopeItem;
use zescope_model::view::TimeAxis;
use zescope_store::{Envelope, EnvelopeColumn, SeriesId, Store};

mod draw;
mod grid;
#[cfg(test)]
mod grid_tests;
mod item;
#[cfg(test)]
mod prepare_tests;

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
    /// A state (an id, a flag) holds each value until the next sample: drawn as steps, no mean.
    /// From the pane's row (`ShownSeries::state`): the plot does not ask the store.
    pub steps: bool,
    /// An identifier (a kernel id: a state whose unit names an id,
    /// `view::series::is_identifier_unit`): drawn on a lane where it has samples, not at its
    /// value. From the pane's row too.
    pub identifier: bool,
}

/// What a plot shows this frame, as decided before `Plot::show`; the caller sets the same
/// bounds on the plot.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlotFrame {
    /// The x range (seconds since the store's origin) the plot is set to: the time view's.
    /// `None` when nothing decides it (live with no data yet): each item then queries the range
    /// egui_plot settles on.
    pub x: Option<(f64, f64)>,
    /// The y range the plot is set to (a y lock); `None` when egui_plot fits it to the items'
    /// bounds (auto bounds with its default margin).
    pub y: Option<(f64, f64)>,
    /// Nothing after this time (store ns) is drawn: a paused view keeps showing exactly what it
    /// showed, even where its range reaches past the data of the moment it was paused.
    pub limit: Option<i64>,
}

/// Line width in points.
const LINE_WIDTH: f32 = 1.5;

/// egui_plot's default margin around auto bounds, as a fraction of their extent.
const AUTO_MARGIN: f32 = 0.05;

/// How a frame's envelopes were asked for: the x range (plot x), the pixel columns of the plot's
/// width and the time limit. An item whose final x range differs asks for its own the same way.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Query {
    x: (f64, f64),
    pixels: usize,
    limit: Option<i64>,
}

impl Query {
    /// `(t0, t1, columns)` to ask the store for, and the unlimited end of the view: the same
    /// pixel columns, only fewer of them where a time limit ends the view early.
    fn span(&self, axis: TimeAxis) -> (i64, i64, usize, i64) {
        let (t0, mut t1) = (axis.ns(self.x.0), axis.ns(self.x.1));
        let full = t1;
        let mut columns = self.pixels;
        if let Some(limit) = self.limit
            && limit < t1
        {
            let keep = (limit.saturating_sub(t0)) as f64 / (t1.saturating_sub(t0)).max(1) as f64;
            columns = ((columns as f64 * keep).round() as usize).max(1);
            t1 = limit.max(t0);
        }
        (t0, t1, columns, full)
    }
}

/// The envelope path of one plot pane; keep it across frames (see the module docs for the order
/// of calls in a frame).
#[derive(Default)]
pub struct EnvelopePlot {
    series: Vec<PlotSeries>,
    ids: Vec<SeriesId>,
    /// Per series, this frame's data: its envelope, the envelope's y extent, what it draws (band
    /// meshes reused across frames), and the exact envelope hover asked for.
    envs: Vec<Envelope>,
    bounds: Vec<PlotBounds>,
    drawn: Vec<draw::Drawn>,
    exact: Vec<OnceCell<Envelope>>,
    /// What the last [`EnvelopePlot::query`] was told.
    frame: PlotFrame,
    /// The time axis of that query's store, read once per query: every time ↔ plot x of the
    /// plot's envelopes, extents and meshes goes through it.
    axis: TimeAxis,
    /// How this frame's envelopes were asked for (`None`: they were not).
    asked: Option<Query>,
    /// `(t0, t1, columns, store version)` the envelopes hold.
    key: Option<(i64, i64, usize, u64)>,
    /// The transform the meshes were drawn for this frame, if any.
    meshed: Option<PlotTransform>,
    /// The plot's rect and pixels per point in the last frame shown.
    screen: Option<(Rect, f32)>,
    /// Columns kept across frames (`grid.rs`).
    kept: grid::KeptColumns,
}

impl EnvelopePlot {
    /// A plot with nothing cached yet: the first frame queries the store.
    pub fn new() -> EnvelopePlot {
        EnvelopePlot::default()
    }

    /// Before `Plot::show`, for a plot alone in its pane: [`EnvelopePlot::query`], then
    /// [`EnvelopePlot::mesh`] against the [predicted](EnvelopePlot::predict) transform.
    pub fn prepare(&mut self, store: &Store, series: &[PlotSeries], frame: PlotFrame) {
        self.query(store, series, frame);
        if let Some(t) = self.predict(self.data_bounds()) {
            self.mesh(store, &t);
        }
    }

    /// Before `Plot::show`: the envelopes of `series` over `frame`'s x range at the plot's pixel
    /// columns of the last frame (none on a plot's first frame, whose rect is not known yet).
    pub fn query(&mut self, store: &Store, series: &[PlotSeries], frame: PlotFrame) {
        if self.ids.len() != series.len() || self.ids.iter().zip(series).any(|(a, b)| *a != b.series) {
            self.ids = series.iter().map(|s| s.series).collect();
            self.envs.clear();
            self.key = None;
        }
        if self.series.as_slice() != series {
            self.series = series.to_vec();
        }
        if self.frame.limit != frame.limit {
            self.key = None;
        }
        self.frame = frame;
        self.axis = TimeAxis::of(store);
        self.asked = None;
        self.meshed = None;
        let n = series.len();
        self.envs.resize_with(n, Envelope::new);
        self.drawn.resize_with(n, Default::default);
        self.exact.resize_with(n, OnceCell::new);
        self.bounds.resize(n, PlotBounds::NOTHING);
        if let (Some(x), Some((rect, ppp))) = (frame.x, self.screen) {
            self.fill(store, Query { x, pixels: pixel_columns(rect.width(), ppp), limit: frame.limit });
        }
    }

    fn fill(&mut self, store: &Store, query: Query) {
        let (t0, t1, columns, full) = query.span(self.axis);
        let key = (t0, t1, columns, store.version());
        if self.key != Some(key) {
            if !self.kept.fill(store, &self.ids, (t0, full), query.pixels, query.limit, &mut self.envs) {
                store.draw_envelopes(&self.ids, t0, t1, columns, &mut self.envs);
            }
            self.key = Some(key);
            self.exact.iter_mut().for_each(|e| *e = OnceCell::new());
        } else {
            // Hover made the exact envelope of the same query: draw from it from now on.
            for (env, exact) in self.envs.iter_mut().zip(&mut self.exact) {
                if let Some(e) = exact.take() {
                    *env = e;
                }
            }
        }
        for (b, env) in self.bounds.iter_mut().zip(&self.envs) {
            *b = extent(self.axis, env.columns());
        }
        self.asked = Some(query);
    }

    /// The union of the series' extents (plot x and value): what their items report to egui_plot
    /// as bounds this frame.
    pub fn data_bounds(&self) -> PlotBounds {
        let mut all = PlotBounds::NOTHING;
        self.bounds.iter().for_each(|b| all.merge(b));
        all
    }

    /// The transform egui_plot settles on this frame unless the user moves the plot inside
    /// `show`: the rect of the last frame shown, x from the [`PlotFrame`], y from it too or, when
    /// it fits the data, `data` (the union of [`EnvelopePlot::data_bounds`] of every plot in the
    /// pane) with egui_plot's margin. `None` without a rect or an x range.
    pub fn predict(&self, data: PlotBounds) -> Option<PlotTransform> {
        let ((rect, _), (x0, x1)) = (self.screen?, self.frame.x?);
        let mut b = PlotBounds::from_min_max([x0, f64::INFINITY], [x1, f64::NEG_INFINITY]);
        match self.frame.y.or_else(|| fixed_y_range(&data)) {
            Some((lo, hi)) => b = PlotBounds::from_min_max([x0, lo], [x1, hi]),
            None => {
                b.merge_y(&data);
                b.add_relative_margin_y(Vec2::splat(AUTO_MARGIN));
            }
        }
        Some(PlotTransform::new(rect, b, false))
    }

    /// Before `Plot::show`, after [`EnvelopePlot::query`]: draws every series against `transform`
    /// (the two halves of the work on two threads when it is large and banded, `zescope_store::par`).
    pub fn mesh(&mut self, store: &Store, transform: &PlotTransform) {
        if self.asked.is_none() {
            return;
        }
        let n = self.ids.len();
        let work = |i: usize| self.envs[i].columns().len();
        let total: usize = (0..n).map(work).sum();
        // Split where the first half holds about half the columns.
        let (mut half, mut acc) = (0, 0);
        while half < n && 2 * acc < total {
            acc += work(half);
            half += 1;
        }
        // Banded envelopes of many series were queried on two threads, split the same way
        // (`Store::draw_envelopes`): each half is drawn where its columns were just written.
        // Exact ones were queried here, and handing half of them to another core costs more
        // than drawing them here (measured: `plot_frame/zoomed` 15 % slower split).
        let banded = self.envs.iter().all(|e| !e.is_exact());
        let (series, ids, axis) = (&self.series[..], &self.ids[..], self.axis);
        let (ea, eb) = self.envs.split_at_mut(half);
        let (da, db) = self.drawn.split_at_mut(half);
        let lanes = lanes(series);
        let part = |series: &[PlotSeries],
                    ids: &[SeriesId],
                    lanes: &[Option<f32>],
                    envs: &mut [Envelope],
                    drawn: &mut [draw::Drawn]| {
            for ((((s, &id), &lane), env), out) in series.iter().zip(ids).zip(lanes).zip(envs).zip(drawn) {
                let style = Style { color: s.color, width: LINE_WIDTH, steps: s.steps, lane };
                draw::series(store, axis, id, env, style, transform, out);
            }
        };
        zescope_store::par::join(
            banded && zescope_store::par::worth_it(total),
            || part(&series[..half], &ids[..half], &lanes[..half], ea, da),
            || part(&series[half..], &ids[half..], &lanes[half..], eb, db),
        );
        self.meshed = Some(*transform);
    }

    /// Inside `Plot::show`: adds one [`EnvelopeItem`] per series of the last
    /// [`EnvelopePlot::query`], each handing over its own data (see the module docs).
    pub fn add_to<'a>(&'a mut self, plot_ui: &mut PlotUi<'a>, store: &'a Store) {
        let screen = (plot_ui.response().rect, plot_ui.ctx().pixels_per_point());
        let first = self.screen.is_none();
        self.screen = Some(screen);
        if first && let Some(x) = self.frame.x {
            // A plot's first frame: its rect was not known before `show`.
            self.fill(store, Query { x, pixels: pixel_columns(screen.0.width(), screen.1), limit: self.frame.limit });
            if let Some(t) = self.predict(self.data_bounds()) {
                self.mesh(store, &t);
            }
        }
        let lines: Vec<Vec<egui::Shape>> = self.drawn.iter_mut().map(|d| std::mem::take(&mut d.lines)).collect();
        let this: &'a EnvelopePlot = self;
        // An item that must query for itself does so at the pixel columns of the query, or of
        // this frame's rect when there was none.
        let query = this.asked;
        let pixels = query.map_or_else(|| pixel_columns(screen.0.width(), screen.1), |q| q.pixels);
        let lanes = lanes(&this.series);
        for (i, (s, lines)) in this.series.iter().zip(lines).enumerate() {
            plot_ui.add(EnvelopeItem {
                base: PlotItemBase::new(s.name.clone()),
                store,
                axis: this.axis,
                series: s.series,
                color: s.color,
                steps: s.steps,
                lane: lanes[i],
                env: &this.envs[i],
                bounds: this.bounds[i],
                mesh: this.drawn[i].mesh.as_ref(),
                exact: &this.exact[i],
                lines: Cell::new(lines),
                queried: query.map(|q| q.x),
                pixels,
                limit: this.frame.limit,
                meshed: this.meshed,
                own: None,
                points: OnceCell::new(),
            });
        }
    }

    /// `(t0, t1, columns)` of the envelopes last queried before `show` (what the last frame drew
    /// unless the user moved the plot inside it), if any.
    pub fn last_query(&self) -> Option<(i64, i64, usize)> {
        self.key.map(|(t0, t1, columns, _)| (t0, t1, columns))
    }
}

/// The value axis the plot is given rather than egui_plot's auto bounds, if any. For data that
/// never moves (`data`'s values are all one value `v`, a count that stayed put, a state that
/// held): around `v` by a tenth of it (at least 1), never below 0 for a value that is not, rather
/// than the ±20 egui_plot makes of an empty range. For data that moves and is never negative (a
/// rate, a share, bytes) and whose margin would reach below 0: from 0, with egui_plot's margin
/// above, so no axis reads "-2 GB/s". "From 0" is from a sliver below it (`BASELINE`) so that
/// a line at 0 is seen. `None` (auto bounds) otherwise, or for no data.
pub fn fixed_y_range(data: &PlotBounds) -> Option<(f64, f64)> {
    let (lo, hi) = (data.min()[1], data.max()[1]);
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    if hi > lo {
        let margin = (hi - lo) * AUTO_MARGIN as f64;
        return (lo >= 0.0 && lo - margin < 0.0).then(|| (below_zero(hi + margin), hi + margin));
    }
    let pad = (lo.abs() * 0.1).max(1.0);
    let below = if lo >= 0.0 && lo - pad <= 0.0 { below_zero(hi + pad) } else { lo - pad };
    Some((below, hi + pad))
}

/// How far below 0 a never negative axis reaching `top` starts, as a share of `top`: a value of
/// 0 is drawn a few pixels above the plot's bottom edge (on the edge, the frame's stroke covered
/// its line: an event count that stayed 0 looked like no data), and no labelled tick falls below
/// 0 (ticks are labelled tens of pixels apart).
const BASELINE: f64 = 0.03;

/// The bottom of a never negative axis whose top is `top` ([`BASELINE`]).
fn below_zero(top: f64) -> f64 {
    -BASELINE * top
}

/// The extent (plot x, value) of the columns that hold a value.
fn extent(axis: TimeAxis, columns: &[EnvelopeColumn]) -> PlotBounds {
    let mut b = PlotBounds::NOTHING;
    for c in columns.iter().filter(|c| c.count > 0) {
        b.extend_with(&PlotPoint::new(axis.x(c.t_start), c.min));
        b.extend_with(&PlotPoint::new(axis.x(c.t_end), c.max));
    }
    b
}

/// Pixel columns of a plot `width_points` wide.
pub fn pixel_columns(width_points: f32, pixels_per_point: f32) -> usize {
    let px = (width_points * pixels_per_point).round();
    if px.is_finite() && px >= 1.0 { px as usize } else { 1 }
}

#[cfg(test)]
mod tests;

/// Each series' lane if it is an identifier ([`PlotSeries::identifier`]): the k-th of n
/// identifiers at (k + ½) / n of the plot's height from its top.
fn lanes(series: &[PlotSeries]) -> Vec<Option<f32>> {
    let n = series.iter().filter(|s| s.identifier).count() as f32;
    let mut k = 0.0;
    series
        .iter()
        .map(|s| {
            s.identifier.then(|| {
                k += 1.0;
                (k - 0.5) / n
            })
        })
        .collect()
}
