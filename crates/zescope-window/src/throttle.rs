//! Throttle reasons drawn as labelled bands: where a telemetry throttle series (a bitmask whose
//! description names its bits, `sampler::telemetry::throttle_names`) is non-zero, a translucent
//! band spans the pane's height, labelled with the reasons of the mask (after the device's name in
//! a pane that shows several devices).
//!
//! What a band covers is `zescope_model::view::throttle`'s (exported images draw the same bands).

use egui::{Color32, Rect, Ui};
use egui_plot::PlotTransform;

use zescope_model::view::TimeAxis;
pub(crate) use zescope_model::view::throttle::{bands, label};
use zescope_store::{Envelope, SeriesId, Store};

/// Band colour (translucent amber) of a run that is set throughout.
const BAND: Color32 = Color32::from_rgba_premultiplied(90, 60, 0, 60);
/// Label colour.
const LABEL: Color32 = Color32::from_rgb(200, 140, 20);

/// A throttle series to paint: its store series, its bits' names, and its device when the pane
/// shows several devices (then each band's label names it).
pub(crate) struct Throttled {
    pub id: SeriesId,
    pub names: Vec<(u32, String)>,
    pub device: Option<String>,
}

/// A band's label: the reasons of `mask`, after the device's name when one is given.
pub(crate) fn band_label(mask: u32, names: &[(u32, String)], device: Option<&str>) -> String {
    match device {
        Some(d) => format!("{d} · {}", label(mask, names)),
        None => label(mask, names),
    }
}

/// Paints the bands of `series` over `frame`.
pub(crate) fn paint(ui: &Ui, frame: Rect, transform: &PlotTransform, store: &Store, series: &[Throttled]) {
    let x = transform.bounds().range_x();
    let (t0, t1) = (TimeAxis::of(store).ns(*x.start()), TimeAxis::of(store).ns(*x.end()));
    let columns = frame.width().max(1.0) as usize;
    let painter = ui.painter_at(frame);
    let mut env = Envelope::new();
    for Throttled { id, names, device } in series {
        for b in bands(store, *id, t0, t1, columns, &mut env) {
            let xa = transform.position_from_point_x(TimeAxis::of(store).x(b.from));
            let xb = transform.position_from_point_x(TimeAxis::of(store).x(b.to)).max(xa + 1.0);
            let r = Rect::from_x_y_ranges(xa..=xb, frame.y_range());
            painter.rect_filled(r, 0.0, BAND.gamma_multiply(b.share));
            if xb - xa > 40.0 && b.share >= 1.0 {
                painter.text(
                    egui::pos2(xa + 3.0, frame.bottom() - 3.0),
                    egui::Align2::LEFT_BOTTOM,
                    band_label(b.mask, names, device.as_deref()),
                    egui::FontId::proportional(11.0),
                    LABEL,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests;
