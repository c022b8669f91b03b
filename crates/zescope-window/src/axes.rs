//! The panes' axes: round y steps with room for at least three labels (`view::ticks`), one
//! y-label width shared by every pane so their time axes line up under the shared cursor, and
//! time labels kept clear of the plot's corners (where they would be cut or meet the y labels).

use std::ops::RangeInclusive;

use egui::{Id, TextStyle, Ui};
use egui_plot::{AxisHints, GridInput, GridMark};

use zescope_model::view::text::{si, time_label};
use zescope_model::view::ticks;

/// Least distance between two y labels, in points (a line of text and some air).
pub(crate) const Y_LABEL_PX: f64 = 22.0;
/// egui_plot's least grid spacing, which `GridInput::base_step_size` is scaled by.
pub(crate) const GRID_MIN_PX: f32 = 8.0;
/// Space either side of a y label (egui_plot's own margin).
const Y_LABEL_MARGIN: f32 = 8.0;
/// The narrowest y axis.
const MIN_Y_AXIS: f32 = 40.0;
/// Time labels closer to either end of the axis than this share of its width are not drawn.
const X_EDGE_SHARE: f64 = 0.04;

/// The y axis of a pane plotting `unit`, `width` points wide.
pub(crate) fn y_axis<'a>(unit: String, width: f32, states: bool) -> AxisHints<'a> {
    AxisHints::new_y()
        // States (ids, flags) are read as they are: no "125 kkernel id".
        .formatter(move |m: GridMark, _| {
            if states {
                format!("{} {unit}", zescope_model::view::text::scaled(m.value)).trim_end().to_owned()
            } else {
                zescope_model::view::text::si_tick(m.value, m.step_size, &unit)
            }
        })
        .min_thickness(width)
        .label_spacing(Y_LABEL_PX as f32 - 4.0..=Y_LABEL_PX as f32)
}

/// The y grid: round steps at least [`Y_LABEL_PX`] apart.
pub(crate) fn y_spacer(input: GridInput) -> Vec<GridMark> {
    let px_per_unit = f64::from(GRID_MIN_PX) / input.base_step_size;
    let Some(step) = ticks::step(px_per_unit, Y_LABEL_PX) else { return Vec::new() };
    let (lo, hi) = input.bounds;
    ticks::ticks(lo, hi, step).into_iter().map(|value| GridMark { value, step_size: step }).collect()
}

/// A time label, or nothing that close to either end of the shown range (it would be cut at the
/// right edge or run into the y labels at the left).
pub(crate) fn x_label(m: GridMark, range: &RangeInclusive<f64>) -> String {
    let (a, b) = (*range.start(), *range.end());
    let margin = (b - a).abs() * X_EDGE_SHARE;
    if m.value < a + margin || m.value > b - margin { String::new() } else { time_label(m.value) }
}

/// The y-axis width every pane uses this frame: wide enough for the widest label any pane drew
/// last frame (their y ranges and units are remembered under `id`), so all plots start at the
/// same x.
pub(crate) fn shared_y_width(ui: &Ui, id: Id, panes: &[(u64, String)]) -> f32 {
    let font = TextStyle::Body.resolve(ui.style());
    let mut width = MIN_Y_AXIS;
    for (pane, unit) in panes {
        let Some((lo, hi, px)) = ui.ctx().data(|d| d.get_temp::<(f64, f64, f32)>(id.with(pane))) else { continue };
        let Some(step) = ticks::step(f64::from(px) / (hi - lo), Y_LABEL_PX) else { continue };
        for v in ticks::ticks(lo, hi, step) {
            let galley = ui.painter().layout_no_wrap(si(v, unit), font.clone(), egui::Color32::WHITE);
            // A little slack: this frame's range may need a slightly wider label.
            width = width.max(galley.size().x + Y_LABEL_MARGIN + 4.0);
        }
    }
    width.ceil()
}

/// Remembers the y range pane `pane` showed over `px` points of height, for next frame's
/// [`shared_y_width`].
pub(crate) fn remember_y(ui: &Ui, id: Id, pane: u64, range: RangeInclusive<f64>, px: f32) {
    let r = (*range.start(), *range.end(), px);
    if r.0.is_finite() && r.1.is_finite() && r.1 > r.0 {
        ui.ctx().data_mut(|d| d.insert_temp(id.with(pane), r));
    }
}
