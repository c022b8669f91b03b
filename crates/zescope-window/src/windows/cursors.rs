//! The A/B cursors' readout: where A and B are, Δt, and every series' value at A, at B and the
//! difference (`view::cursors`); a value read from a sample more than a second from its cursor
//! says how far it is, and has no difference. Shown while a cursor is set; closing it removes
//! the cursors.

use egui::{RichText, Ui, vec2};

use zescope_model::view::cursors::Cursors;
use zescope_model::view::text::{si, time_label};
use zescope_model::view::{SeriesEntry, SeriesKey};
use zescope_store::Store;

use super::{Shared, Window};
use zescope_model::view::TimeAxis;

/// The readout window: shown while a cursor is set; closing it removes the cursors.
#[derive(Default)]
pub struct CursorReadout;

impl Window for CursorReadout {
    fn title(&self) -> &'static str {
        "A/B cursors"
    }

    fn is_open(&self, shared: &Shared<'_>) -> bool {
        shared.cursors.a.is_some() || shared.cursors.b.is_some()
    }

    fn close(&mut self, shared: &mut Shared<'_>) {
        shared.cursors.clear();
    }

    fn frame(&self, _: &egui::Context) -> egui::Window<'static> {
        egui::Window::new(self.title()).default_width(520.0)
    }

    fn ui(&mut self, ui: &mut Ui, shared: &mut Shared<'_>) {
        body(ui, shared.cursors, shared.store, &shared.state.ingest.series);
    }
}

fn body(ui: &mut Ui, cursors: &Cursors, store: &Store, series: &std::collections::BTreeMap<SeriesKey, SeriesEntry>) {
    let at = |t: Option<i64>| {
        t.map_or("not set (press A or B over a plot)".to_owned(), |t| time_label(TimeAxis::of(store).x(t)))
    };
    ui.label(format!("A = {}   B = {}", at(cursors.a), at(cursors.b)));
    if let Some(d) = cursors.delta_s() {
        ui.label(RichText::new(format!("Δt = {}", si(d, "s"))).strong());
    }
    // A state (an id, a flag) is read as it is: "107021 kernel id", not "107 kkernel id".
    let cell = |v: Option<f64>, unit: &str, state: bool| {
        v.map_or("–".to_owned(), |v| if state { as_read(v, unit) } else { si(v, unit) })
    };
    egui::ScrollArea::vertical().max_height(360.0).show(ui, |ui| {
        egui::Grid::new("cursor-readout").striped(true).spacing(vec2(14.0, 2.0)).show(ui, |ui| {
            for h in ["series", "at A", "at B", "B − A"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for r in cursors.readout(store, series) {
                ui.label(&r.series);
                for (at, far) in [(r.at_a, &r.far_a), (r.at_b, &r.far_b)] {
                    let v = cell(at, &r.unit, r.state);
                    match far {
                        // Not at the cursor: an older (or later) sample, and how far it is.
                        Some(far) => {
                            let warn = ui.visuals().warn_fg_color;
                            ui.colored_label(warn, RichText::new(format!("{v} ({far})")).monospace());
                        }
                        None => {
                            ui.monospace(v);
                        }
                    }
                }
                ui.monospace(cell(r.diff(), &r.unit, r.state));
                ui.end_row();
            }
        });
    });
}

/// A state's value as read, with its unit: whole numbers in full ("107021 kernel id").
fn as_read(v: f64, unit: &str) -> String {
    let n = if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.0}") } else { v.to_string() };
    format!("{n} {unit}").trim_end().to_owned()
}
