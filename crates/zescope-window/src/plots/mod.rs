//! The plot panes: one egui_plot per pane, fed only by store envelopes (`envelope_plot`), with
//! one time axis for all (linked x, shared cursor), zoom and pan that leave live mode, the exact
//! nearest samples on hover, and the legend/statistics table under each pane.
//!
//! Double-click on a plot fits the time axis to all the data. The wheel works as in other plot tools (PlotJuggler, rerun): over a plot it zooms the time
//! axis about the pointer (Ctrl+wheel and pinch too), Shift+wheel and dragging pan in time, and
//! anywhere else (legends, titles, gaps) it scrolls the pane list.

//!
//! The work is split by job: `geometry.rs` (heights, the shared y-axis width, each pane's header),
//! `envelopes.rs` (the data: envelopes queried, meshed and drawn), `overlays.rs` (what is drawn
//! over the data), `interaction.rs` (what the pointer and wheel did, applied after the last pane).

mod envelopes;
mod geometry;
mod interaction;
mod overlays;

use egui::Ui;

use zescope_model::view::cursors::Cursors;
use zescope_model::view::{TimeAxis, TimeView, data_x};
use zescope_store::Store;

use super::compare::Comparison;
use super::empty_pane;
use super::legend;
use super::panes::Panes;
use super::state::AppState;
use envelopes::PanePlot;
use geometry::{Geometry, MIN_PLOT_HEIGHT};
use interaction::Gestures;

/// What the panes did this frame.
#[derive(Default)]
pub struct PlotsOutcome {
    /// The hovered time (plot x), for the shared cursor.
    pub hover_x: Option<f64>,
    /// The x range shown.
    pub shown: Option<(f64, f64)>,
    /// A pane's context menu asked to export it: (what, pane index).
    pub write: Option<(super::dialogs::FileKind, usize)>,
    /// The plots' width in points (of the last plot drawn).
    pub plot_width: Option<f32>,
    /// Each pane's plot area, in order; `None` for a pane with nothing to plot.
    pub frames: Vec<(u64, Option<egui::Rect>)>,
    /// A legend asked for a trigger with this expression (to edit in the Triggers window).
    pub trigger: Option<String>,
    /// A plot's context menu asked to rename this marker (its index).
    pub rename_marker: Option<usize>,
    /// A legend asked for a derived series with this definition (to edit in its window).
    pub derive: Option<String>,
}

/// What is drawn over the panes besides the data: markers, the A/B cursors (which a
/// Shift+click or a drag moves), a comparison run.
pub struct Overlays<'a> {
    /// The markers.
    pub markers: &'a [zescope_model::view::Mark],
    /// The triggers' firings, as bands of the time kept around each.
    pub firings: &'a [zescope_model::view::Mark],
    /// The A/B cursors.
    pub cursors: &'a mut Cursors,
    /// A second session overlaid in a lighter shade.
    pub compare: Option<&'a mut Comparison>,
}

/// Draws every pane: header, plot (or where to drop a metric) and legend; then applies what the
/// user did to them.
pub fn show(
    ui: &mut Ui,
    panes: &mut Panes,
    store: &Store,
    state: &AppState,
    view: &mut TimeView,
    hover_x: Option<f64>,
    overlays: Overlays<'_>,
) -> PlotsOutcome {
    let Overlays { markers, firings, cursors, mut compare } = overlays;
    let mut out = PlotsOutcome::default();
    if let Some(c) = compare.as_deref_mut() {
        c.align(store, markers);
        c.prepare(panes.arrangement.panes.iter().map(|p| p.id));
    }
    let mut gestures = Gestures::begin(ui);
    let target = view.range(data_x(store));
    out.shown = target;
    let geometry = Geometry::of(ui, panes, state);
    let axis = TimeAxis::of(store);
    // The panes' scroll bar gets room of its own: floating over the panes (egui's default), its
    // thin form covered the plots' last pixel columns while the pointer was over them, where a
    // live view draws the newest samples. Scroll areas inside the panes keep the default.
    let scroll = ui.spacing().scroll;
    ui.spacing_mut().scroll.floating_allocated_width = scroll.floating_width + scroll.bar_inner_margin;
    let mut area = egui::ScrollArea::vertical().auto_shrink([false, false]);
    if std::mem::take(&mut panes.scroll_to_top) {
        area = area.vertical_scroll_offset(0.0);
    }
    let area = area.show(ui, |ui| {
        ui.spacing_mut().scroll = scroll;
        for (i, spec) in geometry.specs.iter().enumerate() {
            let (rows, units) = (&geometry.rows[i], &geometry.units[i]);
            let clicks = geometry::header(ui, i, spec, panes, units);
            gestures.header(i, spec.id, clicks);
            let items = envelopes::items(rows);
            let limit = view.data_limit().map(|x| axis.ns(x));
            let shown = if items.is_empty() {
                // Nothing to plot: no axes made up for no data, only where to drop a metric.
                let shown = (rows.iter().filter(|r| r.shown.visible))
                    .map(|r| (r.shown.key.device.as_str(), r.shown.key.group.as_str()));
                let why = empty_pane::Empty::of(!spec.series.is_empty(), shown);
                let r = empty_pane::show(ui, MIN_PLOT_HEIGHT, &why);
                gestures.drop_and_scroll(&r, spec.id, panes);
                out.frames.push((spec.id, None));
                target.unwrap_or((0.0, 1.0))
            } else {
                let y_lock = panes.y_lock.get(&spec.id).copied();
                let pane = PanePlot {
                    id: spec.id,
                    rows,
                    items: &items,
                    target,
                    y_lock,
                    limit,
                    unit: if units.len() == 1 { units[0].clone() } else { String::new() },
                    states_only: !rows.is_empty() && rows.iter().all(|r| r.shown.state),
                    grabbing: gestures.grabbed.is_some(),
                    markers,
                };
                let resp = envelopes::draw(ui, &geometry, panes, compare.as_deref_mut(), store, &pane, |pui| {
                    overlays::in_plot(pui, hover_x, cursors, axis)
                });
                let over = overlays::Over { rows, markers, firings, cursors };
                overlays::paint(ui, &resp, store, &over);
                let to_x = |t: i64| resp.transform.position_from_point_x(axis.x(t)) as f32;
                let now = super::marker_paint::newest(store);
                if let Some(i) = super::marker_name::context_menu(&resp.response, markers, now, to_x) {
                    out.rename_marker = Some(i);
                }
                let frame = *resp.transform.frame();
                // Where each pane's plot is and in which colours its lines are drawn, for tests
                // of the real window (which exposes no widget positions).
                log::debug!(
                    "pane {} plot at {:?} colours {:?}",
                    spec.id,
                    frame,
                    items.iter().map(|s| s.color.to_array()).collect::<Vec<_>>()
                );
                super::axes::remember_y(ui, geometry.y_id, spec.id, resp.transform.bounds().range_y(), frame.height());
                out.plot_width = Some(frame.width());
                let y = resp.transform.bounds().range_y();
                gestures.y_range(spec.id, (*y.start(), *y.end()), y_lock.is_some(), panes);
                out.frames.push((spec.id, Some(frame)));
                let shown = gestures.on_plot(ui, &resp, &pane, cursors, (store, state), &mut out);
                gestures.drop_and_scroll(&resp.response, spec.id, panes);
                shown
            };
            let t1 = axis.ns(shown.1);
            let range = Some((axis.ns(shown.0), limit.map_or(t1, |l| l.min(t1))));
            for a in legend::show(ui, spec.id, rows, &geometry.numbers, state, store, range) {
                gestures.actions.push((spec.id, a));
            }
            ui.add_space(8.0);
        }
    });
    ui.spacing_mut().scroll = scroll;
    gestures.finish(ui, area.inner_rect, view, panes, store, &mut out);
    out
}
