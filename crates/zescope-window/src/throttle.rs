//! Throttle reasons drawn as labelled bands: where a telemetry throttle series (a bitmask whose
//! description names its bits, `sampler::telemetry::throttle_names`) is non-zero, a translucent
//! band spans the pane's height, labelled with the reasons of the mask (after the device's name in
//! a pane that shows several devices).
//!
//! # What a band covers
//!
//! A throttle series is a state, held from one sample to the next (as a state's steps are
//! drawn). A band runs from the sample where a mask is first seen to the sample where it is seen
//! clear or changed, so two runs with clear time between them are two bands at every zoom:
//! - pixel columns with no sample hold the state of the sample before them;
//! - a column whose samples are all set, or all clear, continues or ends a run exactly;
//! - a column mixing set and clear samples (zoomed out, many samples a pixel) is a band of its
//!   own, as wide as its samples span, its opacity the share of its samples that are set;
//! - a gap (the run paused or restarted) ends a run at its last sample, and a column with no
//!   finite value ends it at that column: nothing is known there;
//! - the state at the view's left edge is the last sample before it; a run still set at the
//!   right edge runs to the edge when later samples exist, else to its last sample.

use egui::{Color32, Rect, Ui};
use egui_plot::PlotTransform;

use zescope_store::{Envelope, EnvelopeColumn, SeriesId, Store};

/// Band colour (translucent amber) of a run that is set throughout.
const BAND: Color32 = Color32::from_rgba_premultiplied(90, 60, 0, 60);
/// Label colour.
const LABEL: Color32 = Color32::from_rgb(200, 140, 20);

/// The names of the bits set in `mask`, joined; "throttled" when no bit has a name.
pub(crate) fn label(mask: u32, names: &[(u32, String)]) -> String {
    let set: Vec<&str> = names.iter().filter(|(b, _)| mask & (1 << b) != 0).map(|(_, n)| n.as_str()).collect();
    if set.is_empty() { "throttled".to_owned() } else { set.join(", ") }
}

/// One band: the time it covers (ns), the reasons' mask, and the share of that time the mask
/// is set (1 for a run; less for a column that mixes set and clear samples).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Band {
    pub from: i64,
    pub to: i64,
    pub mask: u32,
    pub share: f32,
}

fn mask_of(v: f64) -> u32 {
    if v.is_finite() && v > 0.0 { v.min(u32::MAX as f64) as u32 } else { 0 }
}

/// The bands of `series` over `t0..=t1` at `columns` columns (the module docs say what each
/// covers).
pub(crate) fn bands(
    store: &Store,
    series: SeriesId,
    t0: i64,
    t1: i64,
    columns: usize,
    env: &mut Envelope,
) -> Vec<Band> {
    store.envelope(series, t0, t1, columns, env);
    let held = store.bucket_at(series, t0).filter(|b| b.t_last < t0).and_then(|b| b.stats.last).map_or(0, mask_of);
    let later = store.time_range(series.stream()).is_some_and(|(_, newest)| newest > t1);
    let last_in = |c: &EnvelopeColumn| store.stats(series, c.t_start, c.t_end).last.map_or(0, mask_of);
    walk(env.columns(), (t0, t1), held, later, last_in)
}

/// [`bands`] over envelope columns: `held` is the mask before the first column, `later` says
/// whether samples follow `t1`, `last_in` gives a column's last sample's mask.
fn walk(
    columns: &[EnvelopeColumn],
    (t0, t1): (i64, i64),
    held: u32,
    later: bool,
    last_in: impl Fn(&EnvelopeColumn) -> u32,
) -> Vec<Band> {
    let mut out = Vec::new();
    // The run in progress: since when, which mask.
    let mut open: Option<(i64, u32)> = (held != 0).then_some((t0, held));
    let mut last_sample = t0;
    let close = |open: &mut Option<(i64, u32)>, at: i64, out: &mut Vec<Band>| {
        if let Some((from, mask)) = open.take() {
            out.push(Band { from, to: at.max(from), mask, share: 1.0 });
        }
    };
    for c in columns.iter().filter(|c| c.samples > 0) {
        if c.break_before {
            close(&mut open, last_sample, &mut out);
        }
        last_sample = c.t_end;
        if c.count == 0 {
            close(&mut open, c.t_start, &mut out);
            continue;
        }
        let (lo, hi) = (mask_of(c.min), mask_of(c.max));
        if lo == hi || lo != 0 {
            // All clear, or all set (one mask, or masks that differ without a clear sample).
            if open.is_some_and(|(_, m)| m != hi) {
                close(&mut open, c.t_start, &mut out);
            }
            if hi != 0 && open.is_none() {
                open = Some((c.t_start, hi));
            }
            continue;
        }
        // Set and clear samples in one column: where the state changes inside it is not known
        // at this width, only how much of it is set.
        close(&mut open, c.t_start, &mut out);
        let share = (c.mean / c.max).clamp(0.0, 1.0) as f32;
        out.push(Band { from: c.t_start, to: c.t_end, mask: hi, share });
        let after = last_in(c);
        if after != 0 {
            open = Some((c.t_end, after));
        }
    }
    close(&mut open, if later { t1 } else { last_sample }, &mut out);
    out.retain(|b| b.share > 0.0);
    out
}

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
    let (t0, t1) = (store.from_plot_x(*x.start()), store.from_plot_x(*x.end()));
    let columns = frame.width().max(1.0) as usize;
    let painter = ui.painter_at(frame);
    let mut env = Envelope::new();
    for Throttled { id, names, device } in series {
        for b in bands(store, *id, t0, t1, columns, &mut env) {
            let xa = transform.position_from_point_x(store.to_plot_x(b.from));
            let xb = transform.position_from_point_x(store.to_plot_x(b.to)).max(xa + 1.0);
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
