//! A pane with nothing to plot (new, or every series hidden): a framed drop target that says
//! what to do, instead of an axis made up for no data.

use egui::{Response, Sense, StrokeKind, Ui, vec2};

/// Draws the placeholder, `height` points high across the pane; `no_series`: the pane holds no
/// series at all (else they are all hidden). Its response takes dropped metrics.
pub(crate) fn show(ui: &mut Ui, height: f32, no_series: bool) -> Response {
    let (rect, response) = ui.allocate_exact_size(vec2(ui.available_width(), height), Sense::hover());
    let visuals = ui.visuals().clone();
    let stroke = if response.dnd_hover_payload::<zescope_model::view::SeriesKey>().is_some() {
        visuals.selection.stroke
    } else {
        visuals.widgets.noninteractive.bg_stroke
    };
    ui.painter().rect_stroke(rect, 4.0, stroke, StrokeKind::Inside);
    let text = if no_series {
        "Empty pane: drag a metric here from a legend or the source panel"
    } else {
        "Every series of this pane is hidden: tick one in the legend below"
    };
    let label = egui::Label::new(egui::RichText::new(text).weak()).selectable(false).wrap();
    ui.put(rect.shrink(8.0), label);
    response
}
