//! The hover readout of a pane: the exact stored samples nearest the pointer's time, one row per
//! visible series (value in its plotted unit, a cumulative counter's total, and when), then the
//! markers under the pointer, by name and time (a name the plot left out where names overlap is
//! read here).

use egui::{Color32, RichText, Ui, vec2};

use zescope_model::view::text::{si, time_label};
use zescope_model::view::{Mark, Span, TimeAxis};
use zescope_store::Store;

use super::pane_row::PaneRow;
use super::state::AppState;

/// The exact samples nearest to `t` of every visible series of a pane, in at most `width`
/// points where its texts fit (a narrow window's plot).
pub(crate) fn readout(ui: &mut Ui, rows: &[PaneRow<'_>], state: &AppState, store: &Store, t: i64, x: f64, width: f32) {
    ui.label(RichText::new(format!("t = {}", time_label(x))).strong());
    // Columns at least as wide as a value's likely text ("-12.34 ms/s", "@ 1:23.456"), so values
    // changing every frame never resize the grid (a grid that resizes asks for one more frame,
    // each frame), narrower where the plot is narrower than those columns; no "total" column
    // unless a row has a running total. A readout covers as little of the plot as it can.
    let totals = rows.iter().any(|r| r.shown.visible && r.shown.entry.is_some_and(|e| e.info.kind.is_running_total()));
    let columns = if totals { 4.0 } else { 3.0 };
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let digit = ui.painter().layout_no_wrap("0".into(), font, Color32::WHITE).size().x;
    egui::Grid::new("readout")
        .spacing(vec2(12.0, 2.0))
        .min_col_width((digit * 11.0).min((width - 36.0) / columns).max(digit * 6.0))
        .show(ui, |ui| {
            for row in rows.iter().filter(|r| r.shown.visible) {
                let (k, c) = (&row.shown.key, &row.color);
                let Some(e) = row.shown.entry else { continue };
                let unit = &row.shown.unit;
                let nearest = e
                    .ids
                    .iter()
                    .filter_map(|&id| store.nearest(id, t).map(|s| (id, s)))
                    .min_by_key(|(_, s)| (s.t - t).unsigned_abs());
                // A long name cut short (its whole text on hover): the name is what widens a readout.
                let name =
                    egui::Label::new(RichText::new(k.shown(state.ingest.several_devices())).color(*c)).truncate();
                ui.allocate_ui(vec2(digit * 20.0, ui.spacing().interact_size.y), |ui| ui.add(name));
                match nearest {
                    Some((id, s)) => {
                        ui.monospace(s.value.map_or("no value".to_owned(), |v| si(v, unit)));
                        if e.info.kind.is_running_total()
                            && let Some(raw) = store.nearest_raw(id, t).and_then(|r| r.value)
                        {
                            ui.monospace(format!("total {}", si(raw, &e.info.unit)));
                        } else if totals {
                            ui.label("");
                        }
                        let at = format!("@ {}", time_label(TimeAxis::of(store).x(s.t)));
                        match zescope_model::view::cursors::far_from(t, s.t) {
                            // Past the last sample (or before the first): say how old the value is.
                            // (under the time, so the note does not widen the readout).
                            Some(far) => {
                                let warn = ui.visuals().warn_fg_color;
                                ui.vertical(|ui| {
                                    ui.colored_label(warn, at);
                                    ui.colored_label(warn, far);
                                });
                            }
                            None => {
                                ui.label(RichText::new(at).weak());
                            }
                        }
                    }
                    None => {
                        ui.monospace("–");
                        if totals {
                            ui.label("");
                        }
                        ui.label("");
                    }
                }
                ui.end_row();
            }
        });
}

/// The markers `marks` (those under the pointer) below the samples: each by its name, in its
/// colour, and its time, or a range's start, end and length (an open range: "going on").
pub(crate) fn markers<'a>(ui: &mut Ui, marks: impl Iterator<Item = &'a Mark>, store: &Store, width: f32) {
    let axis = TimeAxis::of(store);
    let mut first = true;
    for m in marks {
        if std::mem::take(&mut first) {
            ui.separator();
        }
        let at = |t: i64| time_label(axis.x(t));
        let when = match m.span {
            Span::Instant => format!("@ {}", at(m.t_ns)),
            Span::Range { end_ns } => {
                let secs = end_ns.saturating_sub(m.t_ns) as f64 / 1e9;
                format!("{} – {} ({})", at(m.t_ns), at(end_ns), si(secs, "s"))
            }
            Span::Open => format!("from {}, going on", at(m.t_ns)),
        };
        // The time whole; the name cut short (its whole text on hover) where both do not fit.
        let font = egui::TextStyle::Body.resolve(ui.style());
        let when_width = ui.painter().layout_no_wrap(when.clone(), font, Color32::WHITE).size().x;
        let room = (width - when_width - 2.0 * ui.spacing().item_spacing.x).max(40.0);
        ui.horizontal(|ui| {
            let name = egui::Label::new(RichText::new(&m.label).color(super::marker_paint::color(m))).truncate();
            ui.allocate_ui(vec2(room, ui.spacing().interact_size.y), |ui| ui.add(name));
            ui.label(RichText::new(when).weak());
        });
    }
}
