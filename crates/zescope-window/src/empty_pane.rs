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
    /// Its shown series are of these groups of these devices ("ComputeBasic, Telemetry of
    /// ze-sim GPU"), and whether that is more than one group; the data shown has no sample of them
    /// (a run of other devices or groups after a session or a remembered layout that had them).
    NotRead(String, bool),
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
        Empty::NotRead(what, several) => {
            let (is, it) = if *several { ("are", "them") } else { ("is", "it") };
            format!(
                "No data for this pane: {what} {is} not in the data shown. Pick {it} on the left and start a run, \
                 or drag a metric here"
            )
        }
    };
    let label = egui::Label::new(egui::RichText::new(text).weak()).selectable(false).wrap();
    ui.put(rect.shrink(8.0), label);
    response
}

impl Empty {
    /// Why a pane holding series (`holds`) has nothing to plot, given the device and group of
    /// each of its shown series (in pane order; a shown series with data would have been
    /// plotted).
    pub(crate) fn of<'a>(holds: bool, shown: impl Iterator<Item = (&'a str, &'a str)>) -> Empty {
        if !holds {
            return Empty::NoSeries;
        }
        // Each device once, with its groups once each, in the order met.
        let mut devices: Vec<(&str, Vec<&str>)> = Vec::new();
        for (device, group) in shown {
            match devices.iter_mut().find(|(d, _)| *d == device) {
                Some((_, groups)) if !groups.contains(&group) => groups.push(group),
                Some(_) => {}
                None => devices.push((device, vec![group])),
            }
        }
        if devices.is_empty() {
            return Empty::Hidden;
        }
        let several = devices.iter().map(|(_, g)| g.len()).sum::<usize>() > 1;
        let what: Vec<String> = devices.iter().map(|(d, g)| format!("{} of {d}", g.join(", "))).collect();
        Empty::NotRead(what.join("; "), several)
    }
}

#[cfg(test)]
mod tests {
    use super::Empty;

    #[test]
    fn an_unread_pane_names_each_group_of_each_device_once() {
        let gpu = "ze-sim GPU";
        let shown = [(gpu, "ComputeBasic"), (gpu, "Telemetry"), (gpu, "ComputeBasic"), ("ze-sim NPU", "NpuActivity")];
        assert_eq!(
            Empty::of(true, shown.into_iter()),
            Empty::NotRead("ComputeBasic, Telemetry of ze-sim GPU; NpuActivity of ze-sim NPU".into(), true)
        );
        assert_eq!(
            Empty::of(true, [(gpu, "RenderBasic")].into_iter()),
            Empty::NotRead("RenderBasic of ze-sim GPU".into(), false)
        );
        assert_eq!(Empty::of(true, std::iter::empty()), Empty::Hidden, "every series hidden");
        assert_eq!(Empty::of(false, std::iter::empty()), Empty::NoSeries);
    }
}
