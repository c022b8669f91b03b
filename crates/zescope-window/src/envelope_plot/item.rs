//! One series as an egui_plot item: it hands over the data its [`EnvelopePlot`] computed before
//! `Plot::show`, and makes its own only where the frame's final bounds are not the predicted ones
//! (the module docs of `envelope_plot` say when).
//!
//! [`EnvelopePlot`]: super::EnvelopePlot

use std::cell::{Cell, OnceCell};
use std::ops::RangeInclusive;
use std::sync::Arc;

use egui::epaint::Mesh;
use egui::{Color32, Shape, Ui};
use egui_plot::{PlotBounds, PlotGeometry, PlotItem, PlotItemBase, PlotPoint, PlotTransform};

use super::draw::{self, Style};
use super::{LINE_WIDTH, Query};
use zescope_model::view::TimeAxis;
use zescope_store::{Envelope, SeriesId, Store};

/// One series drawn from its envelope (see the module docs of `envelope_plot`).
pub struct EnvelopeItem<'a> {
    pub(super) base: PlotItemBase,
    pub(super) store: &'a Store,
    /// The plot's time axis (`EnvelopePlot::query`'s).
    pub(super) axis: TimeAxis,
    pub(super) series: SeriesId,
    pub(super) color: Color32,
    /// Drawn as a state's steps.
    pub(super) steps: bool,
    /// The frame's envelope of this series, its extent, and its band mesh.
    pub(super) env: &'a Envelope,
    pub(super) bounds: PlotBounds,
    pub(super) mesh: Option<&'a Arc<Mesh>>,
    /// The exact envelope of `env`'s request, made once if hover asks for it.
    pub(super) exact: &'a OnceCell<Envelope>,
    /// The lines and dots of the series' sparse runs, handed over once.
    pub(super) lines: Cell<Vec<Shape>>,
    /// The x range `env` was queried for (`None`: it was not, this frame).
    pub(super) queried: Option<(f64, f64)>,
    /// The pixel columns and time limit this item queries its own envelope at, if the final x
    /// range is not `queried`.
    pub(super) pixels: usize,
    pub(super) limit: Option<i64>,
    /// The transform the mesh and lines were drawn for.
    pub(super) meshed: Option<PlotTransform>,
    /// This item's own envelope, queried in `initialize` for the final x range.
    pub(super) own: Option<Envelope>,
    /// Column means, for hover: built only if egui_plot asks (pointer over the plot).
    pub(super) points: OnceCell<Vec<PlotPoint>>,
}

impl EnvelopeItem<'_> {
    fn style(&self) -> Style {
        let width = if self.highlighted() { 2.0 * LINE_WIDTH } else { LINE_WIDTH };
        Style { color: self.color, width, steps: self.steps }
    }

    /// The envelope drawn this frame: the item's own, or the one queried before `show`.
    fn envelope(&self) -> &Envelope {
        self.own.as_ref().unwrap_or(self.env)
    }

    /// Whether the mesh and lines made before `show` are what this frame draws: the envelope
    /// queried then, drawn against `transform` at the ordinary line width.
    fn premeshed(&self, transform: &PlotTransform) -> bool {
        self.own.is_none()
            && self.style().width == LINE_WIDTH
            && self.meshed.as_ref().is_some_and(|m| same_transform(m, transform))
    }
}

/// Do two transforms map plot coordinates to the same screen positions?
pub(super) fn same_transform(a: &PlotTransform, b: &PlotTransform) -> bool {
    a.frame() == b.frame() && a.bounds() == b.bounds() && a.dpos_dvalue() == b.dpos_dvalue()
}

impl PlotItem for EnvelopeItem<'_> {
    fn shapes(&self, _ui: &Ui, transform: &PlotTransform, shapes: &mut Vec<Shape>) {
        if self.premeshed(transform) {
            if let Some(mesh) = self.mesh.filter(|m| !m.is_empty()) {
                // The band first, so lines are drawn over it.
                shapes.push(Shape::Mesh(mesh.clone()));
            }
            shapes.append(&mut self.lines.take());
            return;
        }
        // The final bounds are not the predicted ones: this series is drawn here, for them.
        let mut env = self.envelope().clone();
        let mut drawn = draw::Drawn::default();
        draw::series(self.store, self.axis, self.series, &mut env, self.style(), transform, &mut drawn);
        if let Some(mesh) = drawn.mesh.filter(|m| !m.is_empty()) {
            shapes.push(Shape::Mesh(mesh));
        }
        shapes.append(&mut drawn.lines);
    }

    fn initialize(&mut self, x_range: RangeInclusive<f64>) {
        let x = (*x_range.start(), *x_range.end());
        if self.queried == Some(x) {
            return;
        }
        // Not the range queried before `show` (the user moved the plot inside it): this
        // series' envelope for the range shown.
        let query = Query { x, pixels: self.pixels, limit: self.limit };
        let (t0, t1, columns, _) = query.span(self.axis);
        let mut env = Envelope::new();
        self.store.draw_envelopes(&[self.series], t0, t1, columns, std::slice::from_mut(&mut env));
        self.own = Some(env);
    }

    fn color(&self) -> Color32 {
        self.color
    }

    fn geometry(&self) -> PlotGeometry<'_> {
        PlotGeometry::Points(self.points.get_or_init(|| {
            let exact = |env: &Envelope| {
                let (t0, t1, columns) = env.request();
                let mut e = Envelope::new();
                self.store.envelope(self.series, t0, t1, columns, &mut e);
                e
            };
            let mine;
            let env = match &self.own {
                Some(e) if e.is_exact() => e,
                Some(e) => {
                    mine = exact(e);
                    &mine
                }
                None if self.env.is_exact() => self.env,
                None => self.exact.get_or_init(|| exact(self.env)),
            };
            env.columns()
                .iter()
                .filter(|c| c.count > 0)
                .map(|c| PlotPoint::new(self.axis.x(c.t_mid()), c.mean))
                .collect()
        }))
    }

    fn bounds(&self) -> PlotBounds {
        self.bounds
    }

    fn base(&self) -> &PlotItemBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut PlotItemBase {
        &mut self.base
    }
}
