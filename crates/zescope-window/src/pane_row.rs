//! A series of a pane as the frame draws it ([`PaneRow`]): what the model resolved for it once a
//! frame (`zescope_model::view::shown`) and its colours, read by the plots, the legends, the
//! readouts and the comparison overlay; and a colour as drawn on a plot's background ([`drawn`]).

use egui::Color32;

use zescope_model::view::ShownSeries;

/// A series of a pane as the frame draws it: what the model resolved once, and its colours.
pub(crate) struct PaneRow<'a> {
    /// The series, looked up once this frame (`zescope_model::view::shown`).
    pub shown: ShownSeries<'a>,
    /// The colour it is drawn in (`view::contrast`: kept readable on the background).
    pub color: Color32,
    /// The colour the user picked (what the colour button shows and edits).
    pub picked: Color32,
}

/// A series colour as drawn on the plot background `bg` (`view::contrast`: no yellow on white).
pub(crate) fn drawn(c: Color32, bg: Color32) -> Color32 {
    let [r, g, b] = zescope_model::view::contrast::on_background([c.r(), c.g(), c.b()], [bg.r(), bg.g(), bg.b()]);
    Color32::from_rgb(r, g, b)
}
