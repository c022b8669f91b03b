//! What is drawn over a pane's data: the shared hover line and the A/B cursors inside the plot;
//! then, over its area, throttle reasons as labelled bands, markers, the triggers' firings as a
//! strip, the cursors' names and the plot's outline.

use egui::{Color32, Ui};
use egui_plot::{PlotPoint, PlotResponse, PlotUi, VLine};

use zescope_model::view::cursors::Cursors;
use zescope_model::view::{Mark, TimeAxis};
use zescope_store::Store;

use super::super::pane_row::PaneRow;

/// Colour of the A/B cursors.
pub(super) const CURSOR: Color32 = Color32::from_rgb(240, 150, 40);

/// Inside the plot, over the data: the hovered time's line on every pane and the A/B cursors.
pub(super) fn in_plot(pui: &mut PlotUi<'_>, hover_x: Option<f64>, cursors: &Cursors, axis: TimeAxis) {
    if let Some(x) = hover_x {
        pui.vline(VLine::new("cursor", x).color(Color32::from_gray(150)).width(1.0));
    }
    for (name, t) in [("A", cursors.a), ("B", cursors.b)] {
        if let Some(t) = t {
            pui.vline(VLine::new(name, axis.x(t)).color(CURSOR).width(1.5));
        }
    }
}

/// What a pane shows over its plot area besides the data.
pub(super) struct Over<'a> {
    /// The pane's rows (visible telemetry series bring their throttle reasons).
    pub rows: &'a [PaneRow<'a>],
    /// The markers.
    pub markers: &'a [Mark],
    /// The triggers' firings.
    pub firings: &'a [Mark],
    /// The A/B cursors.
    pub cursors: &'a Cursors,
}

/// Paints `over` onto the plot `resp` drew.
pub(super) fn paint(ui: &Ui, resp: &PlotResponse<Option<PlotPoint>>, store: &Store, over: &Over<'_>) {
    let frame = *resp.transform.frame();
    // Throttle reasons of visible telemetry series as labelled bands, naming their device in a
    // pane of several devices.
    let first = over.rows.first().map(|r| &r.shown.key.device);
    let several = over.rows.iter().any(|r| Some(&r.shown.key.device) != first);
    let throttle: Vec<_> = over
        .rows
        .iter()
        .filter(|r| r.shown.visible && !r.shown.throttle.is_empty())
        .flat_map(|r| {
            r.shown.ids().iter().map(|&id| super::super::throttle::Throttled {
                id,
                names: r.shown.throttle.clone(),
                device: several.then(|| r.shown.key.device.clone()),
            })
        })
        .collect();
    if !throttle.is_empty() {
        super::super::throttle::paint(ui, frame, &resp.transform, store, &throttle);
    }
    let x_of = |x| resp.transform.position_from_point_x(x);
    super::super::marker_paint::paint(ui, frame, store, over.markers, x_of);
    super::super::marker_paint::paint_strip(ui, frame, store, over.firings, x_of);
    for (name, t) in [("A", over.cursors.a), ("B", over.cursors.b)] {
        let Some(t) = t else { continue };
        let x = resp.transform.position_from_point_x(TimeAxis::of(store).x(t));
        if (frame.left()..=frame.right()).contains(&x) {
            ui.painter_at(frame).text(
                egui::pos2(x + 3.0, frame.bottom() - 2.0),
                egui::Align2::LEFT_BOTTOM,
                name,
                egui::FontId::proportional(12.0),
                CURSOR,
            );
        }
    }
    ui.painter().rect_stroke(
        resp.response.rect,
        2.0,
        ui.visuals().widgets.noninteractive.bg_stroke,
        egui::StrokeKind::Inside,
    );
}
