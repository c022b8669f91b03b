//! View → Phase table: per phase (the visible range, the A/B cursors' span, each marked range) and
//! per series the duration, time measured, mean, min, max, totals and energy (`view::phases`), sortable by a
//! click on a column's heading, copied to the clipboard as CSV or Markdown.

use egui::{RichText, Ui};

use zescope_store::Store;

use super::{Shared, Window};
use crate::compare::Comparison;
use zescope_model::view::phases::{Column, PhaseRange, PhaseTable, phase_table};
use zescope_model::view::text::{si, time_label};
use zescope_model::view::{SeriesEntry, SeriesKey};

/// Seconds between recomputations while the data changes (a live run).
const REFRESH_S: f64 = 0.5;

/// The data's store version, and the comparison's with its offset (as bits).
type Versions = (u64, Option<(u64, u64)>);

/// The panel's state.
#[derive(Default)]
pub struct PhasePanel {
    /// View → Phase table is open.
    pub open: bool,
    /// The column the rows are sorted by, ascending when true; `None`: as computed.
    pub sort: Option<(Column, bool)>,
    /// The table as last shown (sorted).
    pub table: PhaseTable,
    /// (store versions and offset, ranges, time) the table was computed for.
    computed: Option<(Versions, Vec<PhaseRange>, f64)>,
    /// Each column's width so far: columns widen to their widest cell and never narrow while the
    /// window is open, so the headings do not move as live numbers change.
    widths: Vec<f32>,
}

impl PhasePanel {
    /// Recomputes the table when its ranges changed, or when the data did and the last
    /// computation is older than `REFRESH_S`.
    pub fn refresh(
        &mut self,
        now: f64,
        store: &Store,
        series: &std::collections::BTreeMap<SeriesKey, SeriesEntry>,
        ranges: Vec<PhaseRange>,
        compare: Option<&Comparison>,
    ) {
        let version = (store.version(), compare.map(|c| (c.store.version(), c.offset_s.to_bits())));
        let fresh = self.computed.as_ref().is_some_and(|(v, r, t)| {
            *r == ranges
                && (*v == version || (v.1 == version.1 && now - t < REFRESH_S))
                && series.len() * r.len() == self.table.rows.len()
        });
        if fresh {
            return;
        }
        self.table = phase_table(store, series, &ranges);
        if let Some(c) = compare {
            let theirs: Vec<PhaseRange> = ranges.iter().map(|r| c.range_of(store, r)).collect();
            self.table.compare_with(phase_table(&c.store, &c.series, &theirs));
        }
        if let Some((c, asc)) = self.sort {
            self.table.sort(c, asc);
        }
        self.computed = Some((version, ranges, now));
    }

    /// A click on column `c`'s heading: sorts by it, ascending first, then the other way.
    pub fn sort_by(&mut self, c: Column) {
        let asc = !matches!(self.sort, Some((s, true)) if s == c);
        self.sort = Some((c, asc));
        self.table.sort(c, asc);
    }

    fn body(&mut self, ui: &mut Ui) {
        // Wrapped: a long note must not widen the window past a small window's central area.
        ui.horizontal_wrapped(|ui| {
            if ui.button("Copy CSV").on_hover_text("the table as CSV, to the clipboard").clicked() {
                ui.ctx().copy_text(self.table.to_csv());
            }
            if ui.button("Copy Markdown").on_hover_text("the table as a Markdown table, to the clipboard").clicked() {
                ui.ctx().copy_text(self.table.to_markdown());
            }
            ui.label(
                RichText::new(
                    "phases: the visible range, A..B between the cursors (A, B keys or Shift+click), each marked range",
                )
                .weak(),
            );
        });
        if self.table.rows.is_empty() {
            ui.label("No series to summarise yet.");
            return;
        }
        let mut clicked = None;
        // Sideways, headings and rows scroll together; up and down, only the rows: the headings
        // stay at the top, over the columns they name (the cells' widths are the columns').
        egui::ScrollArea::horizontal().auto_shrink([false, false]).show(ui, |ui| {
            let columns = self.table.columns();
            if self.widths.len() != columns.len() {
                self.widths = first_widths(ui, &columns, &self.table);
            }
            let height = ui.spacing().interact_size.y;
            let widths_before = self.widths.clone();
            let widths = &mut self.widths;
            // A cell at least as wide as its column has been; text at its left, numbers at its
            // right.
            let mut cell = |ui: &mut Ui, i: usize, right: bool, add: &mut dyn FnMut(&mut Ui) -> egui::Response| {
                let layout = if right {
                    egui::Layout::right_to_left(egui::Align::Center)
                } else {
                    egui::Layout::left_to_right(egui::Align::Center)
                };
                let r = ui.allocate_ui_with_layout(egui::vec2(widths[i], height), layout, |ui| {
                    ui.set_min_width(widths[i]);
                    add(ui)
                });
                widths[i] = widths[i].max(r.response.rect.width());
                r.inner
            };
            egui::Grid::new("phase-table-headings").num_columns(columns.len()).show(ui, |ui| {
                for (i, &c) in columns.iter().enumerate() {
                    let arrow = match self.sort {
                        Some((s, true)) if s == c => " (up)",
                        Some((s, false)) if s == c => " (down)",
                        _ => "",
                    };
                    let title = format!("{}{arrow}", c.heading());
                    let b = cell(ui, i, false, &mut |ui| ui.button(&title));
                    if b.on_hover_text("sort by this column").clicked() {
                        clicked = Some(c);
                    }
                }
                ui.end_row();
            });
            egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
                egui::Grid::new("phase-table").striped(true).num_columns(columns.len()).show(ui, |ui| {
                    for r in &self.table.rows {
                        for (i, (c, text)) in columns.iter().zip(self.table.cells(r)).enumerate() {
                            let unit = match c {
                                Column::Mean | Column::Min | Column::Max | Column::OtherMean => Some(r.unit.as_str()),
                                Column::Total | Column::OtherTotal => Some(r.total_unit.as_str()),
                                Column::Change => Some("%"),
                                Column::Energy => Some("J"),
                                Column::Power => Some("W"),
                                _ => None,
                            };
                            let shown = match (c, unit, text.parse::<f64>()) {
                                (Column::Start, _, Ok(v)) => time_label(v),
                                (Column::Duration | Column::Measured, _, Ok(v)) => si(v, "s"),
                                (_, Some(u), Ok(v)) => si(v, u),
                                _ => text,
                            };
                            let right = !matches!(c, Column::Phase | Column::Series);
                            cell(ui, i, right, &mut |ui| ui.monospace(&shown));
                        }
                        ui.end_row();
                    }
                });
            });
            // A column the rows widened: draw again, so its heading is over it in the frame shown.
            if *widths != widths_before {
                ui.ctx().request_discard("phase table columns widened");
            }
        });
        if let Some(c) = clicked {
            self.sort_by(c);
        }
    }
}

impl Window for PhasePanel {
    fn title(&self) -> &'static str {
        "Phase table"
    }

    fn is_open(&self, _: &Shared<'_>) -> bool {
        self.open
    }

    fn close(&mut self, _: &mut Shared<'_>) {
        self.open = false;
        self.widths.clear();
    }

    fn frame(&self, _: &egui::Context) -> egui::Window<'static> {
        egui::Window::new(self.title()).default_width(1040.0).default_height(320.0)
    }

    fn ui(&mut self, ui: &mut Ui, shared: &mut Shared<'_>) {
        let now = ui.input(|i| i.time);
        let ranges = std::mem::take(&mut shared.phase_ranges);
        self.refresh(now, shared.store, &shared.state.ingest.series, ranges, shared.comparison);
        self.body(ui);
    }
}

/// Columns' first widths: a number column as wide as the widest number `si` writes (a sign, four
/// significant digits, a prefix) with the longest unit of its rows, so live values that change
/// length do not widen it; text columns as their headings.
fn first_widths(ui: &Ui, columns: &[Column], table: &PhaseTable) -> Vec<f32> {
    let mono = egui::TextStyle::Monospace.resolve(ui.style());
    let char_w = ui.fonts_mut(|f| f.glyph_width(&mono, '0'));
    let longest =
        |unit: &dyn Fn(&zescope_model::view::phases::PhaseRow) -> usize| table.rows.iter().map(unit).max().unwrap_or(0);
    columns
        .iter()
        .map(|c| {
            let unit = match c {
                Column::Mean | Column::Min | Column::Max | Column::OtherMean => longest(&|r| r.unit.chars().count()),
                Column::Total | Column::OtherTotal => longest(&|r| r.total_unit.chars().count()),
                Column::Start => 6,
                Column::Duration | Column::Measured | Column::Change | Column::Energy | Column::Power => 2,
                Column::Phase | Column::Series => return 0.0,
            };
            // "-123.4 k" and the unit.
            char_w * (9 + unit) as f32
        })
        .collect()
}
