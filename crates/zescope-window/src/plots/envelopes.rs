//! A pane's data: its visible series' store envelopes (and the comparison's) queried and meshed
//! for the range the time view shows (`envelope_plot`), then drawn in an egui_plot whose x axis
//! is linked to every other pane's.

use egui::Ui;
use egui_plot::{Plot, PlotPoint, PlotResponse, PlotUi};

use zescope_store::Store;

use super::super::axes;
use super::super::compare::Comparison;
use super::super::envelope_plot::{PlotFrame, PlotSeries};
use super::super::pane_row::PaneRow;
use super::super::panes::Panes;
use super::geometry::Geometry;

/// The store series a pane plots: each visible series' store series, one per run.
pub(super) fn items(rows: &[PaneRow<'_>]) -> Vec<PlotSeries> {
    rows.iter()
        .filter(|r| r.shown.visible)
        .flat_map(|r| {
            let k = &r.shown.key;
            r.shown.ids().iter().enumerate().map(move |(run, &id)| PlotSeries {
                series: id,
                name: format!("{}/{}#{run}", k.device, k.label()),
                color: r.color,
                steps: r.shown.state,
                identifier: r.shown.state && zescope_model::view::series::is_identifier_unit(&r.shown.unit),
            })
        })
        .collect()
}

/// One pane's plot, as this frame draws it.
pub(super) struct PanePlot<'a> {
    /// The pane.
    pub id: u64,
    /// Its rows (for the comparison's matching series).
    pub rows: &'a [PaneRow<'a>],
    /// Its store series.
    pub items: &'a [PlotSeries],
    /// The x range the time view shows; `None` before any data.
    pub target: Option<(f64, f64)>,
    /// Its held y range, if its y axis is locked.
    pub y_lock: Option<(f64, f64)>,
    /// The newest time the data may reach (store ns), while paused.
    pub limit: Option<i64>,
    /// The y axis' unit ("" when the series' units differ).
    pub unit: String,
    /// Every series is a state (named values rather than numbers).
    pub states_only: bool,
    /// A cursor is being dragged: the plot does not pan.
    pub grabbing: bool,
    /// The markers, for the hover readout to name those under the pointer.
    pub markers: &'a [zescope_model::view::Mark],
}

/// Queries, meshes and draws `pane`; `overlay` draws over the data inside the plot. Returns the
/// plot's response, with the pointer's coordinate.
pub(super) fn draw(
    ui: &mut Ui,
    geometry: &Geometry,
    panes: &mut Panes,
    compare: Option<&mut Comparison>,
    store: &Store,
    pane: &PanePlot<'_>,
    overlay: impl FnOnce(&mut PlotUi<'_>),
) -> PlotResponse<Option<PlotPoint>> {
    // Identifiers only: lanes (`draw.rs`), no value axis.
    let ids_only = pane.states_only && zescope_model::view::series::is_identifier_unit(&pane.unit);
    let y_lock = pane.y_lock.or(ids_only.then_some((0.0, 1.0)));
    let plot = Plot::new(("pane", pane.id))
        .height(geometry.plot_h)
        .link_axis(geometry.link, [true, false])
        .allow_zoom([true, pane.y_lock.is_some()])
        .allow_drag([!pane.grabbing, pane.y_lock.is_some() && !pane.grabbing])
        .allow_scroll([true, false])
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
        .show_x(false)
        .show_y(false)
        // The plot area is not filled (the window's clear colour shows through, see `bare` in
        // lib.rs): a fill shades every pixel of every pane once more per frame. Its outline is
        // drawn by the overlays.
        .show_background(false)
        .grid_spacing(axes::GRID_MIN_PX..=300.0)
        .custom_y_axes(vec![if ids_only {
            axes::y_axis(String::new(), geometry.y_width, true).formatter(|_, _| String::new())
        } else {
            axes::y_axis(pane.unit.clone(), geometry.y_width, pane.states_only)
        }])
        .y_grid_spacer(axes::y_spacer)
        .x_axis_formatter(axes::x_label);
    // The pane's series (and the comparison's) are queried and meshed before the plot is shown,
    // for the range the time view shows (`envelope_plot`).
    let frame = PlotFrame { x: pane.target, y: y_lock, limit: pane.limit };
    let cache = panes.plot(pane.id);
    cache.query(store, pane.items, frame);
    let mut theirs = compare.and_then(|c| c.overlay(pane.id, pane.rows, geometry.bg));
    let mut data = cache.data_bounds();
    if let Some((plot, cstore, citems)) = theirs.as_mut() {
        plot.query(cstore, citems, PlotFrame { limit: None, ..frame });
        data.merge(&plot.data_bounds());
    }
    if let Some(t) = cache.predict(data) {
        cache.mesh(store, &t);
        if let Some((plot, cstore, _)) = theirs.as_mut() {
            plot.mesh(cstore, &t);
        }
    }
    plot.show(ui, |pui| {
        if let Some((a, b)) = pane.target {
            pui.set_plot_bounds_x(a..=b);
        }
        // A held range, or the one a flat or never negative series gets (`fixed_y_range`, as
        // predicted).
        match y_lock.or_else(|| super::super::envelope_plot::fixed_y_range(&data)) {
            Some((lo, hi)) => {
                pui.set_auto_bounds([false, false]);
                pui.set_plot_bounds_y(lo..=hi);
            }
            None => pui.set_auto_bounds([false, true]),
        }
        // The comparison first, the data over it: its shade (halfway to the background) is
        // dimmer than the data's colours in the dark theme and would hide them where they meet.
        if let Some((plot, cstore, _)) = theirs {
            plot.add_to(pui, cstore);
        }
        cache.add_to(pui, store);
        overlay(pui);
        pui.pointer_coordinate()
    })
}
