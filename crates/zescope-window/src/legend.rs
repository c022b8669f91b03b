//! Under each pane: the legend as a table — visibility, colour, name, unit, and statistics over
//! the visible time range (last, min, max, mean; a state, an id or a flag, has no mean).
//! Right-click a row to move or remove a series.

use egui::{Color32, RichText, Ui};

use zescope_store::{RangeStats, SeriesId, Store};

use super::pane_row::PaneRow;
use super::state::AppState;
use zescope_model::view::SeriesKey;
use zescope_model::view::text::{row_scale, scaled};

/// What the user asked for in a legend.
pub enum LegendAction {
    Visible(SeriesKey, bool),
    Color(SeriesKey, Color32),
    MoveTo(SeriesKey, Option<u64>),
    /// Also draw it in pane `Some(id)` or a new pane, keeping it here.
    AlsoIn(SeriesKey, Option<u64>),
    Remove(SeriesKey),
    /// Open the Triggers window with this expression to edit and add.
    Trigger(String),
    /// Open the derived series' window with this definition to edit and add.
    Derive(String),
}

/// Statistics of all runs of one counter over `[t0, t1]`, merged.
pub fn combined_stats(store: &Store, ids: &[SeriesId], t0: i64, t1: i64) -> Option<RangeStats> {
    let mut acc: Option<RangeStats> = None;
    for &id in ids {
        let s = store.stats(id, t0, t1);
        if s.samples == 0 {
            continue;
        }
        acc = Some(acc.map_or(s, |a| a.merge(s)));
    }
    acc
}

/// Column widths of the legend (set from the pane's width, never from the numbers in them, so
/// changing numbers never re-layout the table: a grid that resizes asks for another frame each
/// time, which would keep a paused window busy). Names get the room first: a wide pane gives the
/// name all that the other columns at their widest leave (up to `MAX_NAME`); a narrower one
/// shrinks the unit and numbers first, down to their least, while the name keeps `W_NAME`; then
/// the name, down to its least (then the legend scrolls).
const W_CHECK: f32 = 22.0;
const W_COLOR: f32 = 40.0;
const W_NAME: f32 = 220.0;
const MAX_NAME: f32 = 640.0;
const W_UNIT: f32 = 70.0;
const W_NUM: f32 = 100.0;
const MIN_NAME: f32 = 60.0;
const MIN_UNIT: f32 = 40.0;
const MIN_NUM: f32 = 58.0;
const ROW_H: f32 = 18.0;
const GAP: f32 = 4.0;

/// The legend's column widths in `avail` pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Widths {
    pub name: f32,
    pub unit: f32,
    pub num: f32,
}

impl Widths {
    pub fn total(self) -> f32 {
        W_CHECK + W_COLOR + self.name + self.unit + 4.0 * self.num + 7.0 * GAP
    }

    /// The columns for a legend `avail` wide (see the constants' docs).
    pub fn fitting(avail: f32) -> Widths {
        let mut w = Widths { name: W_NAME, unit: W_UNIT, num: W_NUM };
        let over = |w: Widths| w.total() - avail;
        if over(w) <= 0.0 {
            w.name = (W_NAME - over(w)).min(MAX_NAME);
            return w;
        }
        let slack = 4.0 * (W_NUM - MIN_NUM) + (W_UNIT - MIN_UNIT);
        let k = (over(w) / slack).min(1.0);
        w.num = W_NUM - k * (W_NUM - MIN_NUM);
        w.unit = W_UNIT - k * (W_UNIT - MIN_UNIT);
        w.name = (w.name - over(w).max(0.0)).max(MIN_NAME);
        w
    }
}

fn cell<R>(ui: &mut Ui, w: f32, add: impl FnOnce(&mut Ui) -> R) -> R {
    ui.allocate_ui_with_layout(egui::vec2(w, ROW_H), egui::Layout::left_to_right(egui::Align::Center), |ui| {
        ui.set_min_width(w);
        ui.set_max_width(w);
        add(ui)
    })
    .inner
}

/// Like [`cell`], its content right-aligned when `right` (numbers line up on their last digit).
fn cell_aligned<R>(ui: &mut Ui, w: f32, right: bool, add: impl FnOnce(&mut Ui) -> R) -> R {
    if !right {
        return cell(ui, w, add);
    }
    let layout = egui::Layout::right_to_left(egui::Align::Center);
    ui.allocate_ui_with_layout(egui::vec2(w, ROW_H), layout, |ui| {
        ui.set_min_width(w);
        ui.set_max_width(w);
        add(ui)
    })
    .inner
}

/// What a row's statistics show: a state (an id, a flag) has no mean, an average of ids being no
/// id; an identifier (a kernel or context id) has no least or greatest either, only its last.
fn shown_stats(s: RangeStats, state: bool, identifier: bool) -> RangeStats {
    match (state, identifier) {
        (true, true) => RangeStats { min: f64::NAN, max: f64::NAN, mean: f64::NAN, ..s },
        (true, false) => RangeStats { mean: f64::NAN, ..s },
        _ => s,
    }
}

/// A row's last, min, max and mean, in that order.
fn values(s: &RangeStats) -> [f64; 4] {
    [s.last.unwrap_or(f64::NAN), s.min, s.max, s.mean]
}

/// The unit a row's numbers are in and its last, min, max and mean in that unit, or dashes
/// without statistics. `scale` is the factor and prefixed unit its numbers share with the
/// pane's other rows of its unit ([`shared_scales`]).
pub(crate) fn row_cells(
    stats: Option<&RangeStats>,
    unit: &str,
    scale: Option<&(f64, String)>,
) -> (String, [String; 4]) {
    let (factor, shown) = scale.cloned().unwrap_or((1.0, unit.to_owned()));
    match stats {
        Some(s) if s.count > 0 => {
            let text = |v: f64| if v.is_finite() { scaled(v / factor) } else { "–".to_owned() };
            (shown, values(s).map(text))
        }
        _ => (shown, std::array::from_fn(|_| "–".to_owned())),
    }
}

/// Per unit of a pane's rows: the factor and prefixed unit all its rows' numbers are shown in,
/// picked by the largest value among them, so one column never mixes MHz and GHz; a state (an
/// id, a flag) gets none: its values are read as they are.
pub(crate) fn shared_scales<'a>(
    rows: impl Iterator<Item = (&'a str, bool, Option<&'a RangeStats>)>,
) -> std::collections::HashMap<(String, bool), (f64, String)> {
    let mut by_unit: std::collections::HashMap<(String, bool), Vec<f64>> = std::collections::HashMap::new();
    for (unit, state, stats) in rows {
        let v = by_unit.entry((unit.to_owned(), state)).or_default();
        if let Some(s) = stats.filter(|s| s.count > 0) {
            v.extend(values(s));
        }
    }
    by_unit
        .into_iter()
        .map(|((unit, state), v)| {
            let scale = if state { (1.0, unit.clone()) } else { row_scale(&v, &unit) };
            ((unit, state), scale)
        })
        .collect()
}

/// Where a pane's legend leaves the units its rows' numbers are in (prefixed as shown), for the
/// pane's header: a header says GHz over rows in GHz, not the stored MHz.
pub(crate) fn shown_units_id(pane: u64) -> egui::Id {
    egui::Id::unique(("zescope-legend-shown-units", pane))
}

/// The units `pane`'s legend last showed its numbers in, if it was drawn.
pub(crate) fn shown_units(ui: &egui::Ui, pane: u64) -> Option<Vec<String>> {
    ui.data(|d| d.get_temp::<Vec<String>>(shown_units_id(pane)))
}

/// Draws the legend table of one pane; returns what the user changed.
pub fn show(
    ui: &mut Ui,
    pane: u64,
    rows: &[PaneRow<'_>],
    other_panes: &[(u64, String)],
    state: &AppState,
    store: &Store,
    range: Option<(i64, i64)>,
) -> Vec<LegendAction> {
    // A scroll bar's width short of the edge: a table that fills the pane exactly is cut by
    // the rounding of its cells.
    let w = Widths::fitting(ui.available_width() - ui.spacing().scroll.bar_width);
    // In a sideways scroll area, so nothing in it can widen the pane (which would push the
    // pane's buttons off screen); it scrolls only when even the narrowest columns do not fit.
    egui::ScrollArea::horizontal()
        .auto_shrink([false, true])
        .id_salt(("legend", pane))
        .show(ui, |ui| table(ui, pane, w, rows, other_panes, state, store, range))
        .inner
}

#[allow(clippy::too_many_arguments)]
fn table(
    ui: &mut Ui,
    pane: u64,
    w: Widths,
    rows: &[PaneRow<'_>],
    other_panes: &[(u64, String)],
    state: &AppState,
    store: &Store,
    range: Option<(i64, i64)>,
) -> Vec<LegendAction> {
    let mut actions = Vec::new();
    ui.horizontal(|ui| {
        ui.spacing_mut().item_spacing.x = GAP;
        for (h, w) in [
            ("", W_CHECK),
            ("", W_COLOR),
            ("series", w.name),
            ("unit", w.unit),
            ("last", w.num),
            ("min", w.num),
            ("max", w.num),
            ("mean", w.num),
        ] {
            // Number headers sit over their right-aligned numbers.
            let right = matches!(h, "last" | "min" | "max" | "mean");
            cell_aligned(ui, w, right, |ui| ui.label(RichText::new(h).strong()));
        }
    });
    // Series of several devices: each device a heading over its rows, the rows named without it
    // (the name's room goes to the name).
    // Several: the data's, or the pane's own (a pane may name a device the data shown lacks).
    let several = state.ingest.several_devices()
        || rows.first().is_some_and(|f| rows.iter().any(|r| r.shown.key.device != f.shown.key.device));
    // Each row's statistics over the range, then the prefix each unit's rows share.
    let stats: Vec<Option<RangeStats>> = rows
        .iter()
        .map(|row| match (row.shown.entry, range) {
            (Some(e), Some((t0, t1))) => {
                let id = zescope_model::view::series::is_identifier_unit(&row.shown.unit);
                combined_stats(store, &e.ids, t0, t1).map(|s| shown_stats(s, e.is_state(), id))
            }
            _ => None,
        })
        .collect();
    let units: Vec<(String, bool)> = rows.iter().map(|row| (row.shown.unit.clone(), row.shown.state)).collect();
    let scales = shared_scales(units.iter().zip(&stats).map(|((u, st), s)| (u.as_str(), *st, s.as_ref())));
    // The units the rows' numbers are in, for the pane's header (drawn above, next frame).
    let shown: std::collections::BTreeSet<String> = rows
        .iter()
        .zip(&units)
        .filter(|(r, _)| r.shown.entry.is_some())
        .map(|(_, u)| scales.get(u).map_or_else(|| u.0.clone(), |s| s.1.clone()))
        .collect();
    ui.data_mut(|d| d.insert_temp(shown_units_id(pane), shown.into_iter().collect::<Vec<String>>()));
    // With several devices, each device's rows together under its heading (in the order the
    // devices first come in the pane; a device's rows keep their order).
    let mut order: Vec<usize> = (0..rows.len()).collect();
    if several {
        let first = |d: &str| rows.iter().position(|r| r.shown.key.device == d).unwrap_or(0);
        order.sort_by_key(|&i| first(&rows[i].shown.key.device));
    }
    let mut device: Option<&str> = None;
    for i in order {
        let row = &rows[i];
        if several && device != Some(row.shown.key.device.as_str()) {
            device = Some(row.shown.key.device.as_str());
            ui.horizontal(|ui| {
                ui.add_space(W_CHECK + W_COLOR + 2.0 * GAP);
                ui.label(RichText::new(&row.shown.key.device).strong());
            });
        }
        let entry = row.shown.entry;
        let unit = &units[i].0;
        ui.horizontal(|ui| {
            ui.spacing_mut().item_spacing.x = GAP;
            let mut visible = row.shown.visible;
            if cell(ui, W_CHECK, |ui| ui.checkbox(&mut visible, "").on_hover_text("show or hide this series")).changed()
            {
                actions.push(LegendAction::Visible(row.shown.key.clone(), visible));
            }
            // The colour picked, not the one drawn: on a light background a light colour is drawn
            // darker, and editing that would replace the user's choice with the darkened one.
            let mut c = row.picked;
            if cell(ui, W_COLOR, |ui| ui.color_edit_button_srgba(&mut c)).changed() {
                actions.push(LegendAction::Color(row.shown.key.clone(), c));
            }
            let weak = ui.visuals().weak_text_color();
            let name = cell(ui, w.name, |ui| {
                ui.add(
                    egui::Label::new(RichText::new(row.shown.key.label()).color(if visible {
                        row.color
                    } else {
                        weak
                    }))
                    .truncate()
                    .sense(egui::Sense::click()),
                )
                .on_hover_text("right-click to move it, show it in another pane too, or remove it")
            });
            let name = match entry {
                Some(e) if !e.info.description.is_empty() => name.on_hover_text(&e.info.description),
                _ => name,
            };
            let stats = stats[i];
            name.context_menu(|ui| {
                let series = row.shown.key.in_expression(several);
                if ui
                    .button("Trigger on this series…")
                    .on_hover_text("fire when it crosses a value: Triggers window")
                    .clicked()
                {
                    let last = stats.as_ref().and_then(|s| s.last).filter(|v| v.is_finite()).unwrap_or(0.0);
                    actions.push(LegendAction::Trigger(format!("{series} > {}", crate::triggers::round(last))));
                }
                // Derived series of this one, to finish in the derived series' window.
                let name = crate::derived::name_of(&row.shown.key);
                for (label, def) in [
                    ("Rate of…", format!("rate_{name}=rate({series})")),
                    ("Ratio to…", format!("ratio_{name}={series} / ")),
                    ("Moving average…", format!("avg_{name}=avg({series}, 1s)")),
                ] {
                    if ui
                        .button(label)
                        .on_hover_text("a derived series of this one: New derived series window")
                        .clicked()
                    {
                        actions.push(LegendAction::Derive(def));
                    }
                }
                for (verb, action) in [
                    ("Move to", LegendAction::MoveTo as fn(SeriesKey, Option<u64>) -> LegendAction),
                    ("Also show in", LegendAction::AlsoIn),
                ] {
                    ui.separator();
                    let targets = other_panes.iter().filter(|(id, _)| *id != pane);
                    let targets = targets.map(|(id, n)| (Some(*id), format!("pane {n}")));
                    for (id, target) in targets.chain([(None, "a new pane".to_owned())]) {
                        let label = format!("{verb} {target}");
                        if ui.button(label).clicked() {
                            actions.push(action(row.shown.key.clone(), id));
                        }
                    }
                }
                ui.separator();
                if ui.button("Remove from this pane").clicked() {
                    actions.push(LegendAction::Remove(row.shown.key.clone()));
                }
            });
            let (shown_unit, cells) = row_cells(stats.as_ref(), unit, scales.get(&units[i]));
            cell(ui, w.unit, |ui| ui.label(shown_unit));
            for text in cells {
                cell_aligned(ui, w.num, true, |ui| {
                    ui.add(egui::Label::new(RichText::new(text).monospace()).truncate())
                });
            }
        });
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::{Widths, row_cells, shared_scales, shown_stats};
    use zescope_store::RangeStats;

    #[test]
    fn a_row_says_the_unit_its_numbers_use() {
        let s = RangeStats {
            min: 2.5e5,
            max: 1.2e6,
            mean: 6e5,
            weight: 10.0,
            last: Some(9.57e5),
            count: 10,
            non_finite: 0,
            samples: 10,
            t_first: 0,
            t_last: 9,
            exact: true,
        };
        let scales = shared_scales([("ns/s", false, Some(&s))].into_iter());
        let (unit, cells) = row_cells(Some(&s), "ns/s", scales.get(&("ns/s".to_owned(), false)));
        assert_eq!(unit, "ms/s", "not the stored ns/s: the numbers are in ms/s");
        assert_eq!(cells, ["0.957", "0.25", "1.2", "0.6"].map(String::from), "numbers only, no unit run in");
        let (unit, cells) = row_cells(None, "W", None);
        assert_eq!((unit.as_str(), cells[0].as_str()), ("W", "–"));
    }

    #[test]
    fn an_identifier_shows_its_last_only_and_a_state_no_mean() {
        let s = RangeStats { last: Some(7.0), min: 3.0, max: 9.0, mean: 6.0, count: 4, ..RangeStats::default() };
        let cells = |st: bool, id: bool| row_cells(Some(&shown_stats(s, st, id)), "id", None).1;
        assert_eq!(cells(true, true), ["7", "–", "–", "–"]);
        assert_eq!(cells(true, false), ["7", "3", "9", "–"]);
        assert_eq!(cells(false, false), ["7", "3", "9", "6"]);
    }

    #[test]
    fn rows_of_one_unit_share_a_prefix_and_states_take_none() {
        let stats = |v: f64| RangeStats {
            min: v,
            max: v,
            mean: v,
            weight: 1.0,
            last: Some(v),
            count: 1,
            non_finite: 0,
            samples: 1,
            t_first: 0,
            t_last: 0,
            exact: true,
        };
        let (a, b, id) = (stats(2100.0), stats(300.0), stats(125_000.0));
        let rows = [("MHz", false, Some(&a)), ("MHz", false, Some(&b)), ("kernel id", true, Some(&id))];
        let scales = shared_scales(rows.into_iter());
        let mhz = scales.get(&("MHz".to_owned(), false));
        assert_eq!(row_cells(Some(&a), "MHz", mhz).0, "GHz");
        assert_eq!(row_cells(Some(&b), "MHz", mhz), ("GHz".to_owned(), ["0.3", "0.3", "0.3", "0.3"].map(String::from)));
        let ids = scales.get(&("kernel id".to_owned(), true));
        assert_eq!(row_cells(Some(&id), "kernel id", ids).0, "kernel id", "no kkernel id");
    }

    #[test]
    fn columns_fit_the_pane_down_to_their_least() {
        let wide = Widths::fitting(2000.0);
        assert_eq!(wide, Widths { name: 640.0, unit: 70.0, num: 100.0 }, "the name takes the room, up to its most");
        // A pane of a 1600 px window: the name takes all the rest.
        let w = Widths::fitting(1150.0);
        assert!((w.total() - 1150.0).abs() < 0.01 && w.name > 500.0 && w.num == 100.0, "{w:?}");
        for avail in [800.0, 600.0, 520.0, 480.0] {
            let w = Widths::fitting(avail);
            assert!(w.total() <= avail + 0.01, "{avail}: {w:?} is {} wide", w.total());
            assert!(w.name >= 60.0 && w.num >= 58.0 && w.unit >= 40.0, "{avail}: {w:?}");
        }
        // A pane of a 900 px window: the numbers give way before the name does.
        let w = Widths::fitting(560.0);
        assert!(w.name >= 190.0, "the name keeps its room: {w:?}");
        let tiny = Widths::fitting(100.0);
        assert_eq!(tiny, Widths { name: 60.0, unit: 40.0, num: 58.0 }, "the least, then it scrolls");
    }
}
