//! Throttle reasons drawn as labelled bands: where a telemetry throttle series (a bitmask whose
//! description names its bits, `sampler::telemetry::throttle_names`) is non-zero, a translucent
//! band spans the pane's height, labelled with the reasons of the mask.

use egui::{Color32, Rect, Ui};
use egui_plot::PlotTransform;

use crate::store::{Envelope, SeriesId, Store};

/// Band colour (translucent amber).
const BAND: Color32 = Color32::from_rgba_premultiplied(90, 60, 0, 60);
/// Label colour.
const LABEL: Color32 = Color32::from_rgb(200, 140, 20);

/// The names of the bits set in `mask`, joined; "throttled" when no bit has a name.
pub(crate) fn label(mask: u32, names: &[(u32, String)]) -> String {
    let set: Vec<&str> = names.iter().filter(|(b, _)| mask & (1 << b) != 0).map(|(_, n)| n.as_str()).collect();
    if set.is_empty() { "throttled".to_owned() } else { set.join(", ") }
}

/// Runs of columns with the same non-zero mask: (first t, last t, mask).
pub(crate) fn runs(env: &Envelope) -> Vec<(i64, i64, u32)> {
    let mut out: Vec<(i64, i64, u32)> = Vec::new();
    for c in env.columns() {
        if c.count == 0 || c.max.is_nan() || c.max <= 0.0 {
            continue;
        }
        let mask = c.max.min(u32::MAX as f64) as u32;
        match out.last_mut() {
            Some(r) if r.2 == mask => r.1 = c.t_end,
            _ => out.push((c.t_start, c.t_end, mask)),
        }
    }
    out
}

/// Paints the bands of `series` (store series and their bit names) over `frame`.
pub(crate) fn paint(
    ui: &Ui,
    frame: Rect,
    transform: &PlotTransform,
    store: &Store,
    series: &[(SeriesId, Vec<(u32, String)>)],
) {
    let x = transform.bounds().range_x();
    let (t0, t1) = (store.from_plot_x(*x.start()), store.from_plot_x(*x.end()));
    let columns = (frame.width() / 2.0).max(1.0) as usize;
    let painter = ui.painter_at(frame);
    let mut env = Envelope::new();
    for (id, names) in series {
        store.envelope(*id, t0, t1, columns, &mut env);
        for (a, b, mask) in runs(&env) {
            let xa = transform.position_from_point_x(store.to_plot_x(a));
            let xb = transform.position_from_point_x(store.to_plot_x(b)).max(xa + 2.0);
            let r = Rect::from_x_y_ranges(xa..=xb, frame.y_range());
            painter.rect_filled(r, 0.0, BAND);
            if xb - xa > 40.0 {
                painter.text(
                    egui::pos2(xa + 3.0, frame.bottom() - 3.0),
                    egui::Align2::LEFT_BOTTOM,
                    label(mask, names),
                    egui::FontId::proportional(11.0),
                    LABEL,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_set_bits() {
        let names = vec![(0, "average power cap (PL1)".to_owned()), (3, "thermal limit".to_owned())];
        assert_eq!(label(1, &names), "average power cap (PL1)");
        assert_eq!(label(9, &names), "average power cap (PL1), thermal limit");
        assert_eq!(label(4, &names), "throttled");
    }
}
