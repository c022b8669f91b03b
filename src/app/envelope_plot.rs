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
//! asks the store for its exact envelope. Likewise the first item egui_plot asks for
//! shapes draws every series initialised this frame (the shown ones: egui_plot initialises no
//! hidden item) into its own band mesh (`draw.rs`); each item then hands over its own, so the
//! order of bands and lines is egui_plot's. Many series of banded columns are queried and
//! drawn on two threads, split the same way (`crate::par`). The envelope buffers and the band
//! meshes are reused from frame to frame.
//!
//! A view at raw samples or the finest pyramid nodes (which have no drawing bands) keeps its
//! columns from frame to frame instead (`grid.rs`): columns on a fixed time grid, of which a
//! sliding live view computes only the newest; those columns are exact.

use std::cell::{OnceCell, RefCell};
use std::ops::RangeInclusive;

use egui::{Color32, Shape, Ui};
use egui_plot::{PlotBounds, PlotGeometry, PlotItem, PlotItemBase, PlotPoint, PlotTransform, PlotUi};

use crate::store::{Envelope, SeriesId, Store};
use draw::Style;

mod draw;
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

/// What the items of one plot share.
#[derive(Default)]
struct Shared {
    series: Vec<SeriesId>,
    envs: Vec<Envelope>,
    /// What each series draws this frame (band meshes reused across frames).
    drawn: Vec<draw::Drawn>,
    /// How each series initialised this frame is drawn (`None`: not drawn, hidden).
    styles: Vec<Option<Style>>,
    /// No item has drawn yet this frame.
    pending: bool,
    /// `(t0, t1, columns, store version)` the envelopes hold.
    key: Option<(i64, i64, usize, u64)>,
    /// Nothing after this time is drawn (a paused view).
    limit: Option<i64>,
    /// Columns kept across frames (`grid.rs`).
    kept: grid::KeptColumns,
}

impl Shared {
    /// Draws every series with a style this frame, the two halves of the work on two threads
    /// when it is large and banded (`crate::par`).
    fn draw_all(&mut self, store: &Store, transform: &PlotTransform) {
        let n = self.series.len().min(self.envs.len()).min(self.drawn.len()).min(self.styles.len());
        let work = |i: usize| if self.styles[i].is_some() { self.envs[i].columns().len() } else { 0 };
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
        let banded = (0..n).all(|i| self.styles[i].is_none() || !self.envs[i].is_exact());
        let (series, styles) = (&self.series[..n], &self.styles[..n]);
        let (ea, eb) = self.envs[..n].split_at_mut(half);
        let (da, db) = self.drawn[..n].split_at_mut(half);
        let part = |series: &[SeriesId], styles: &[Option<Style>], envs: &mut [Envelope], drawn: &mut [draw::Drawn]| {
            for (((&s, style), env), out) in series.iter().zip(styles).zip(envs).zip(drawn) {
                match style {
                    Some(style) => draw::series(store, s, env, *style, transform, out),
                    None => out.lines.clear(),
                }
            }
        };
        crate::par::join(
            banded && crate::par::worth_it(total),
            || part(&series[..half], &styles[..half], ea, da),
            || part(&series[half..], &styles[half..], eb, db),
        );
    }

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
            sh.drawn.resize_with(series.len(), Default::default);
            sh.styles.clear();
            sh.styles.resize(series.len(), None);
            sh.pending = true;
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

impl EnvelopeItem<'_> {
    fn style(&self) -> Style {
        let width = if self.highlighted() { 2.0 * LINE_WIDTH } else { LINE_WIDTH };
        Style { color: self.color, width }
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
        if sh.pending {
            // The frame's first item draws every item initialised this frame (the plot's
            // visible series), on two threads where there is much to draw.
            sh.pending = false;
            sh.draw_all(self.store, transform);
        }
        let sh = &mut *sh;
        let (Some(&series), Some(env), Some(drawn)) =
            (sh.series.get(self.index), sh.envs.get_mut(self.index), sh.drawn.get_mut(self.index))
        else {
            return;
        };
        if sh.styles.get(self.index).copied().flatten().is_none() {
            // Not initialised this frame (egui_plot always does): drawn on its own.
            draw::series(self.store, series, env, self.style(), transform, drawn);
        }
        if let Some(mesh) = drawn.mesh.as_ref().filter(|m| !m.is_empty()) {
            // The band first, so lines are drawn over it.
            shapes.push(Shape::Mesh(mesh.clone()));
        }
        shapes.append(&mut drawn.lines);
    }

    fn initialize(&mut self, x_range: RangeInclusive<f64>) {
        let style = self.style();
        let mut sh = self.shared.borrow_mut();
        sh.ensure(self.store, &x_range, self.columns);
        if let Some(s) = sh.styles.get_mut(self.index) {
            *s = Some(style);
        }
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
