//! Drawing one series' envelope: the band mesh through its columns, lines and dots where
//! they are sparse (the module docs of `envelope_plot` say what is drawn and why).

use std::sync::Arc;

use egui::epaint::{Mesh, PathStroke, Vertex, WHITE_UV};
use egui::{Color32, Pos2, Shape, pos2};
use egui_plot::PlotTransform;

use zescope_model::view::TimeAxis;
use zescope_model::view::runs::{column_span, gap_free_runs, join_before};
use zescope_store::{Envelope, EnvelopeColumn, SeriesId, Store};

/// Columns further apart than this (in points) also get a stroked line.
const SPARSE_PX: f32 = 2.0;
/// Columns further apart than this (in points) also get a dot at each sample.
const POINT_PX: f32 = 8.0;

/// What one series puts on screen in a frame: its band mesh (kept from frame to frame and
/// refilled once egui has dropped its handle) and the lines and dots of its sparse runs.
#[derive(Default)]
pub(super) struct Drawn {
    pub mesh: Option<Arc<Mesh>>,
    pub lines: Vec<Shape>,
}

/// How one series is drawn: its colour and line width (doubled while highlighted).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Style {
    pub color: Color32,
    pub width: f32,
    /// A state's steps (`PlotSeries::steps`).
    pub steps: bool,
    /// An identifier (a kernel id) is a label: drawn as a lane where it has samples, at this
    /// share of the plot's height from its top, not at its value.
    pub lane: Option<f32>,
}

/// Draw `env` (of `series`) into `out`: band and lines of every gap-free run. Where a sparse run
/// needs column means that banded columns lack, `env` is replaced by the exact envelope of its
/// request and drawn again.
pub(super) fn series(
    store: &Store,
    axis: TimeAxis,
    series: SeriesId,
    env: &mut Envelope,
    style: Style,
    transform: &PlotTransform,
    out: &mut Drawn,
) {
    out.lines.clear();
    let reused = out.mesh.as_mut().and_then(Arc::get_mut).map(|m| {
        m.vertices.clear();
        m.indices.clear();
    });
    if reused.is_none() {
        out.mesh = Some(Arc::new(Mesh::default()));
    }
    let Some(mesh) = out.mesh.as_mut().and_then(Arc::get_mut) else {
        return;
    };
    let shapes = &mut out.lines;
    let mut joins = Vec::new();
    // A state (an id, a flag) holds each value until the next sample: drawn as steps.
    let steps = style.steps;
    for _ in 0..2 {
        let (cols, exact) = (env.columns(), env.is_exact());
        let Some(first) = cols.first() else {
            break;
        };
        let mut map = ScreenMap::new(axis, transform, first.t_start);
        if let Some(share) = style.lane {
            map.y_scale = 0.0;
            map.y_ref = map.y_clip.0 + share * (map.y_clip.1 - map.y_clip.0);
        }
        // Every column, and so every step between two, lies above (or below) the plot: no
        // band is drawn (each column would be culled), only sparse runs' lines (clipped).
        // (Columns without a value have NaN bounds, which these comparisons pass over.) Some
        // column inside the plot settles it at once; else the columns' whole range decides.
        let hw = 0.5 * style.width;
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
            .all(|r| (out_of_view && !sparse(r, &map)) || run(style, r, exact, steps, &map, mesh, shapes, &mut joins))
        {
            break;
        }
        // A sparse run needs column means: draw again from exact columns.
        mesh.clear();
        shapes.clear();
        let (t0, t1, columns) = env.request();
        store.envelope(series, t0, t1, columns, env);
    }
}

/// Linear map from (time, value) to screen position for one frame. Both axes are anchored
/// at a reference inside the view and scaled in f64: values like 1e9 ns/s over a 100 px
/// axis are 1e-7 px per unit, which an f32 difference of two screen positions rounds to 0.
pub(super) struct ScreenMap {
    pub(super) t_ref: i64,
    pub(super) x_ref: f32,
    /// Screen points per nanosecond.
    pub(super) x_scale: f64,
    pub(super) v_ref: f64,
    pub(super) y_ref: f32,
    /// Screen points per unit of value (negative: screen y grows downwards).
    pub(super) y_scale: f64,
    /// Screen y range of the plot area (top, bottom).
    pub(super) y_clip: (f32, f32),
}

/// Where a column lies against the plot's visible y range.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Above,
    Inside,
    Below,
}

impl ScreenMap {
    pub(super) fn new(axis: TimeAxis, transform: &PlotTransform, t_ref: i64) -> ScreenMap {
        let v_ref = transform.bounds().min()[1];
        ScreenMap {
            t_ref,
            x_ref: transform.position_from_point_x(axis.x(t_ref)),
            x_scale: transform.dpos_dvalue_x() * 1e-9,
            v_ref,
            y_ref: transform.position_from_point_y(v_ref),
            y_scale: transform.dpos_dvalue_y(),
            y_clip: (transform.frame().top(), transform.frame().bottom()),
        }
    }

    #[inline]
    pub(super) fn x(&self, t: i64) -> f32 {
        let dt = match t.checked_sub(self.t_ref) {
            Some(d) => d as f64,
            None => t as f64 - self.t_ref as f64,
        };
        self.x_ref + (dt * self.x_scale) as f32
    }

    #[inline]
    pub(super) fn y(&self, v: f64) -> f32 {
        self.y_ref + ((v - self.v_ref) * self.y_scale) as f32
    }

    /// Screen rows `(top, bottom)` of a band from value `lo` to `hi` (`lo <= hi`). [`Self::y`]
    /// is monotonic (decreasing unless the axis is inverted), so ordering the two needs no
    /// comparison of positions.
    #[inline]
    pub(super) fn rows(&self, lo: f64, hi: f64) -> (f32, f32) {
        let (a, b) = (self.y(hi), self.y(lo));
        if self.y_scale <= 0.0 { (a, b) } else { (b, a) }
    }

    /// Where a band from value `lo` to `hi` (`lo <= hi`, `half_width` added above and below)
    /// lies against the plot's visible y range.
    #[inline]
    pub(super) fn side(&self, lo: f64, hi: f64, half_width: f32) -> Side {
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
pub(super) fn sparse(run: &[EnvelopeColumn], map: &ScreenMap) -> bool {
    let (first, last) = (map.x(run[0].t_start), map.x(run[run.len() - 1].t_end));
    run.len() > 1 && (last - first).abs() > SPARSE_PX * (run.len() - 1) as f32
}

/// Band (and, where sparse, line) of one gap-free run of columns. False, having drawn
/// nothing, when the run needs a line through column means that `exact` columns do not
/// have (`Envelope::is_exact`). With `steps` (a state), each column's band and line hold its
/// value until the next column, which steps from it: a state is never drawn as a slope between
/// two values, and its line runs through its values, never through a mean of them.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    style: Style,
    run: &[EnvelopeColumn],
    exact: bool,
    steps: bool,
    map: &ScreenMap,
    mesh: &mut Mesh,
    shapes: &mut Vec<Shape>,
    joins: &mut Vec<egui::Rect>,
) -> bool {
    let width = style.width;
    let (first, last) = (map.x(run[0].t_start), map.x(run[run.len() - 1].t_end));
    let sparse = sparse(run, map);
    if sparse && !exact {
        return false;
    }
    let mut strip = Strip { mesh, color: style.color, half_width: 0.5 * width, started: false };
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
    // The right edge and rows of the last column drawn, for a state's hold.
    let mut held: Option<(f32, f32, f32)> = None;
    // The previous column's right edge on screen (each column is mapped once).
    let mut prev_xb = f32::NAN;
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
            prev_xb = map.column_xs(c).1;
            continue;
        }
        let (xa, xb) = map.column_xs(c);
        let before_xb = std::mem::replace(&mut prev_xb, xb);
        if steps {
            if let Some((x, t, b)) = held
                && (xa - x).abs() > 1.0
            {
                // The last value holds up to this column.
                strip.edge(xa, t, b);
            }
            let (t, b) = map.rows(c.min, c.max);
            held = Some((xb, t, b));
        }
        if sparse || xb != xa {
            // A step's vertical edge, one line wide, at the column's start: for a state (its value
            // held up to here), or where the previous column ends less than a pixel before this
            // one starts (wide columns side by side), so the strip between them is too thin to
            // show the step. Where samples stand apart, the strip and line already slant from one
            // to the next: an edge there would be a needle back toward the previous value.
            let abutting = (xa - before_xb).abs() < 1.0;
            if let Some((lo, hi)) = i.checked_sub(1).filter(|_| steps || abutting).and_then(|p| join_before(&run[p], c))
            {
                let (top, bottom) = map.rows(lo, hi);
                joins.push(egui::Rect::from_x_y_ranges(xa - hw..=xa + hw, top - hw..=bottom + hw));
            }
            let (top, bottom) = map.rows(c.min, c.max);
            strip.edge(xa, top, bottom);
            if xb != xa {
                strip.edge(xb, top, bottom);
            }
        } else if let Some(p) = i.checked_sub(1).filter(|_| !steps && xa - before_xb > SPARSE_PX) {
            // A stretch without samples (no gap marked: a late sampler) in columns otherwise
            // about a pixel apart: the strip restarts here, and a line crosses the stretch from
            // the previous column to this one, as exported images draw it; a strip from one
            // column's edge to the other's, which reaches over the step, would fill a wedge.
            let (from, to) = (&run[p], c);
            let a = pos2(before_xb, map.y(from.max));
            shapes.push(Shape::line_segment([a, pos2(xa, map.y(to.min))], egui::Stroke::new(width, style.color)));
            let (top, bottom) = map.rows(c.min, c.max);
            strip.started = false;
            strip.edge(xa, top, bottom);
            // Its own min..max, should the next column stand apart too.
            joins.push(egui::Rect::from_x_y_ranges(xa - hw..=xa + hw, top - hw..=bottom + hw));
        } else {
            // Columns about a pixel apart: the strip's edge itself reaches over the step
            // (two vertices instead of a rectangle's four).
            strip.edge(xa, top, bottom);
        }
    }
    for r in joins.drain(..) {
        strip.mesh.add_colored_rect(r, style.color);
    }
    if let ([first, second, .., before, last], false) = (run, sparse) {
        // A run's ends, where columns are about a pixel apart: a column narrower than a line
        // where the strip stops, and the column next to it, are slivers that may cover no
        // pixel's centre (the newest samples at a live view's right edge, the oldest at a fitted
        // view's left): a bar a line wide inward from the end shows the values of both (of the
        // end column alone where its neighbour stands apart).
        let ends = [(first, second, false), (last, before, true)];
        for (end, next, right) in ends {
            let (ea, eb) = map.column_xs(end);
            let (na, nb) = map.column_xs(next);
            // The screen distance between the two columns' spans (below zero where they overlap).
            let apart = (ea.min(eb) - na.max(nb)).max(na.min(nb) - ea.max(eb)) >= width;
            let (lo, hi) = if apart { (end.min, end.max) } else { (end.min.min(next.min), end.max.max(next.max)) };
            if (eb - ea).abs() < width && map.side(lo, hi, hw) == Side::Inside {
                let (top, bottom) = map.rows(lo, hi);
                // From the end's outer edge, a line's width inward.
                let (x0, x1) = if right { (ea.max(eb) - width, ea.max(eb)) } else { (ea.min(eb), ea.min(eb) + width) };
                let rect = egui::Rect::from_x_y_ranges(x0..=x1, top - hw..=bottom + hw);
                strip.mesh.add_colored_rect(rect, style.color);
            }
        }
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
        strip.mesh.add_colored_rect(rect, style.color);
    }
    if sparse {
        let mut pts: Vec<Pos2> = Vec::with_capacity(run.len() * if steps { 3 } else { 2 });
        for c in run {
            let (xa, xb) = map.column_xs(c);
            // A state's line goes through its values (min to max where a column holds several),
            // a quantity's through the column mean.
            let (ya, yb) = if steps { (map.y(c.min), map.y(c.max)) } else { (map.y(c.mean), map.y(c.mean)) };
            if steps && let Some(&p) = pts.last() {
                pts.push(pos2(xa, p.y));
            }
            pts.push(pos2(xa, ya));
            if yb != ya {
                pts.push(pos2(xa, yb));
            }
            if xb != xa {
                pts.push(pos2(xb, yb));
            }
        }
        if (last - first).abs() > POINT_PX * (run.len() - 1) as f32 {
            // Zoomed in far: each column is a sample or two; mark them.
            for c in run.iter().filter(|c| c.samples <= 2) {
                let (xa, xb) = map.column_xs(c);
                let y = map.y(if steps { c.max } else { c.mean });
                shapes.push(Shape::circle_filled(pos2(0.5 * (xa + xb), y), 1.5 * width, style.color));
            }
        }
        shapes.push(Shape::line(pts, PathStroke::new(width, style.color)));
    }
    true
}
