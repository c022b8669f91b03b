//! Under each pane: the legend as a table — visibility, colour, name, unit, and statistics over
//! the visible time range (last, min, max, mean). Right-click a row to move or remove a series.

use egui::{Color32, RichText, Ui};

use crate::store::{SeriesId, Stats, Store};

use super::format::si;
use super::state::{AppState, SeriesKey};

/// What the user asked for in a legend.
pub enum LegendAction {
    Visible(SeriesKey, bool),
    Color(SeriesKey, Color32),
    MoveTo(SeriesKey, Option<u64>),
    Remove(SeriesKey),
}

/// Statistics of all runs of one counter over `[t0, t1]`, merged.
pub fn combined_stats(store: &Store, ids: &[SeriesId], t0: i64, t1: i64) -> Option<Stats> {
    let mut acc: Option<Stats> = None;
    for &id in ids {
        let s = store.stats(id, t0, t1);
        if s.samples == 0 {
            continue;
        }
        acc = Some(match acc {
            None => s,
            Some(a) => {
                let count = a.count + s.count;
                let mean = if count == 0 {
                    f64::NAN
                } else {
                    (nz(a.mean) * a.count as f64 + nz(s.mean) * s.count as f64) / count as f64
                };
                let later = s.t_last >= a.t_last;
                Stats {
                    min: a.min.min(s.min),
                    max: a.max.max(s.max),
                    mean,
                    last: if later { s.last.or(a.last) } else { a.last.or(s.last) },
                    count,
                    non_finite: a.non_finite + s.non_finite,
                    samples: a.samples + s.samples,
                    t_first: a.t_first.min(s.t_first),
                    t_last: a.t_last.max(s.t_last),
                    exact: a.exact && s.exact,
                }
            }
        });
    }
    acc
}

fn nz(v: f64) -> f64 {
    if v.is_finite() { v } else { 0.0 }
}

pub struct LegendRow<'a> {
    pub key: &'a SeriesKey,
    pub color: Color32,
    pub visible: bool,
}

/// Draws the legend table of one pane; returns what the user changed.
pub fn show(
    ui: &mut Ui,
    pane: u64,
    rows: &[LegendRow],
    other_panes: &[(u64, usize)],
    state: &AppState,
    store: &Store,
    range: Option<(i64, i64)>,
) -> Vec<LegendAction> {
    let mut actions = Vec::new();
    egui::Grid::new(("legend", pane)).striped(true).spacing([10.0, 2.0]).show(ui, |ui| {
        for h in ["", "", "series", "unit", "last", "min", "max", "mean"] {
            ui.label(RichText::new(h).small().weak());
        }
        ui.end_row();
        for row in rows {
            let entry = state.series.get(row.key);
            let unit = entry.map(|e| e.plotted_unit()).unwrap_or_default();
            let mut visible = row.visible;
            if ui.checkbox(&mut visible, "").on_hover_text("show or hide this series").changed() {
                actions.push(LegendAction::Visible(row.key.clone(), visible));
            }
            let mut c = row.color;
            if ui.color_edit_button_srgba(&mut c).changed() {
                actions.push(LegendAction::Color(row.key.clone(), c));
            }
            let name = ui.label(RichText::new(row.key.label()).color(if visible {
                row.color
            } else {
                ui.visuals().weak_text_color()
            }));
            let name = match entry {
                Some(e) if !e.info.description.is_empty() => name.on_hover_text(&e.info.description),
                _ => name,
            };
            name.context_menu(|ui| {
                for (id, n) in other_panes.iter().filter(|(id, _)| *id != pane) {
                    if ui.button(format!("Move to pane {n}")).clicked() {
                        actions.push(LegendAction::MoveTo(row.key.clone(), Some(*id)));
                    }
                }
                if ui.button("Move to a new pane").clicked() {
                    actions.push(LegendAction::MoveTo(row.key.clone(), None));
                }
                if ui.button("Remove from this pane").clicked() {
                    actions.push(LegendAction::Remove(row.key.clone()));
                }
            });
            ui.label(&unit);
            let stats = match (entry, range) {
                (Some(e), Some((t0, t1))) => combined_stats(store, &e.ids, t0, t1),
                _ => None,
            };
            match stats {
                Some(s) if s.count > 0 => {
                    ui.monospace(s.last.map_or("–".to_owned(), |v| si(v, &unit)));
                    ui.monospace(si(s.min, &unit));
                    ui.monospace(si(s.max, &unit));
                    ui.monospace(si(s.mean, &unit));
                }
                _ => {
                    for _ in 0..4 {
                        ui.monospace("–");
                    }
                }
            }
            ui.end_row();
        }
    });
    actions
}
