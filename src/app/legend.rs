//! Under each pane: the legend as a table — visibility, colour, name, unit, and statistics over
//! the visible time range (last, min, max, mean). Right-click a row to move or remove a series.

use egui::{Color32, RichText, Ui};

use crate::store::{SeriesId, Stats, Store};

use super::state::AppState;
use crate::view::SeriesKey;
use crate::view::format::si;

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

/// Column widths of the legend (fixed, so changing numbers never re-layout the table: a grid
/// that resizes asks for another frame each time, which would keep a paused window busy).
const W_CHECK: f32 = 22.0;
const W_COLOR: f32 = 36.0;
const W_NAME: f32 = 250.0;
const W_UNIT: f32 = 70.0;
const W_NUM: f32 = 100.0;
const ROW_H: f32 = 18.0;

fn cell<R>(ui: &mut Ui, w: f32, add: impl FnOnce(&mut Ui) -> R) -> R {
    ui.allocate_ui_with_layout(egui::vec2(w, ROW_H), egui::Layout::left_to_right(egui::Align::Center), |ui| {
        ui.set_min_width(w);
        ui.set_max_width(w);
        add(ui)
    })
    .inner
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
    let _ = pane;
    ui.horizontal(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for (h, w) in [
            ("", W_CHECK),
            ("", W_COLOR),
            ("series", W_NAME),
            ("unit", W_UNIT),
            ("last", W_NUM),
            ("min", W_NUM),
            ("max", W_NUM),
            ("mean", W_NUM),
        ] {
            cell(ui, w, |ui| ui.label(RichText::new(h).small().weak()));
        }
    });
    for row in rows {
        let entry = state.ingest.series.get(row.key);
        let unit = entry.map(|e| e.plotted_unit()).unwrap_or_default();
        ui.horizontal(|ui| {
            ui.spacing_mut().item_spacing.x = 4.0;
            let mut visible = row.visible;
            if cell(ui, W_CHECK, |ui| ui.checkbox(&mut visible, "").on_hover_text("show or hide this series")).changed()
            {
                actions.push(LegendAction::Visible(row.key.clone(), visible));
            }
            let mut c = row.color;
            if cell(ui, W_COLOR, |ui| ui.color_edit_button_srgba(&mut c)).changed() {
                actions.push(LegendAction::Color(row.key.clone(), c));
            }
            let weak = ui.visuals().weak_text_color();
            let name = cell(ui, W_NAME, |ui| {
                ui.add(
                    egui::Label::new(RichText::new(row.key.label()).color(if visible { row.color } else { weak }))
                        .truncate()
                        .sense(egui::Sense::click()),
                )
                .on_hover_text("right-click to move or remove")
            });
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
            cell(ui, W_UNIT, |ui| ui.label(&unit));
            let stats = match (entry, range) {
                (Some(e), Some((t0, t1))) => combined_stats(store, &e.ids, t0, t1),
                _ => None,
            };
            let cells: [String; 4] = match stats {
                Some(s) if s.count > 0 => [
                    s.last.map_or("–".to_owned(), |v| si(v, &unit)),
                    si(s.min, &unit),
                    si(s.max, &unit),
                    si(s.mean, &unit),
                ],
                _ => std::array::from_fn(|_| "–".to_owned()),
            };
            for text in cells {
                cell(ui, W_NUM, |ui| ui.monospace(text));
            }
        });
    }
    actions
}
