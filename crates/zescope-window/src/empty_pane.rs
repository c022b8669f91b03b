//! A pane with nothing to plot (new, or every series hidden): a framed drop target that says
//! what to do, instead of an axis made up for no data.

use egui::{Response, Sense, StrokeKind, Ui, vec2};

/// Why a pane has nothing to plot.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Empty {
    /// It holds no series at all.
    NoSeries,
    /// Every series it holds is hidden.
    Hidden,
    /// Its shown series are of these devices (joined), of which the data shown has no sample
    /// (a run of other devices after a session that read them).
    NotRead(String),
}

/// Draws the placeholder, `height` points high across the pane, saying `why` it is empty. Its
/// response takes dropped metrics.
pub(crate) fn show(ui: &mut Ui, height: f32, why: &Empty) -> Response {
    let (rect, response) = ui.allocate_exact_size(vec2(ui.available_width(), height), Sense::hover());
    let visuals = ui.visuals().clone();
    let stroke = if response.dnd_hover_payload::<zescope_model::view::SeriesKey>().is_some() {
        visuals.selection.stroke
    } else {
        visuals.widgets.noninteractive.bg_stroke
    };
    ui.painter().rect_stroke(rect, 4.0, stroke, StrokeKind::Inside);
    let text = match why {
        Empty::NoSeries => "Empty pane: drag a metric here from a legend or the source panel".to_owned(),
        Empty::Hidden => "Every series of this pane is hidden: tick one in the legend below".to_owned(),
        Empty::NotRead(devices) => format!(
            "No data for this pane: {devices} is not in the data shown. Pick it on the left and start a run, \
             or drag a metric here"
        ),
    };
    let label = egui::Label::new(egui::RichText::new(text).weak()).selectable(false).wrap();
    ui.put(rect.shrink(8.0), label);
    response
}

impl Empty {
    /// Why a pane holding series (`holds`) has nothing to plot, given the devices of its shown
    /// series (in pane order; a shown series with data would have been plotted).
    pub(crate) fn of<'a>(holds: bool, shown_devices: impl Iterator<Item = &'a str>) -> Empty {
        if !holds {
            return Empty::NoSeries;
        }
        let mut devices: Vec<&str> = Vec::new();
        for d in shown_devices {
            if !devices.contains(&d) {
                devices.push(d);
            }
        }
        if devices.is_empty() { Empty::Hidden } else { Empty::NotRead(devices.join(", ")) }
    }
}
