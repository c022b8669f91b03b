//! Where the panes go: each plot's height, the shared y-axis width, the pane's number and units,
//! its series' colours and visibility, and the header row with its buttons.

use egui::{Color32, Id, RichText, Ui};

use zescope_model::view::{PaneSpec, shown_series};
use zescope_model::write::{FORMATS, Scope};

use super::super::axes;
use super::super::dialogs::FileKind;
use super::super::pane_row::{PaneRow, drawn};
use super::super::panes::Panes;
use super::super::state::AppState;

/// Height of a pane's plot, at least.
pub(super) const MIN_PLOT_HEIGHT: f32 = 140.0;

/// The frame's geometry of every pane, worked out before the first is drawn.
pub(super) struct Geometry<'a> {
    /// The panes, in order (a copy: the panes change as the frame's actions apply).
    pub specs: Vec<PaneSpec>,
    /// Each pane's series, in order.
    pub rows: Vec<Vec<PaneRow<'a>>>,
    /// Each pane's plotted units, each once, sorted.
    pub units: Vec<Vec<String>>,
    /// Each pane as its menus name it: its number and what it plots ("2 · MHz").
    pub numbers: Vec<(u64, String)>,
    /// Each plot's height.
    pub plot_h: f32,
    /// The plots' background.
    pub bg: Color32,
    /// Where the panes' y ranges are remembered, for the shared y-axis width.
    pub y_id: Id,
    /// The y axes' one width, so every plot area starts at the same x.
    pub y_width: f32,
    /// What links the plots' time axes.
    pub link: Id,
}

impl<'a> Geometry<'a> {
    /// Every pane's series looked up once in `state`'s index, with their colours (a series
    /// seen for the first time gets its colour here).
    pub(super) fn of(ui: &Ui, panes: &mut Panes, state: &'a AppState) -> Geometry<'a> {
        let specs = panes.arrangement.panes.clone();
        let bg = ui.visuals().extreme_bg_color;
        let rows: Vec<Vec<PaneRow<'a>>> = specs
            .iter()
            .map(|p| {
                shown_series(&p.series, &panes.arrangement, &state.ingest.series)
                    .into_iter()
                    .map(|shown| {
                        let picked = panes.color(&shown.key);
                        PaneRow { color: drawn(picked, bg), picked, shown }
                    })
                    .collect()
            })
            .collect();
        let units: Vec<Vec<String>> = rows.iter().map(|r| units(r)).collect();
        let numbers = specs
            .iter()
            .zip(&units)
            .enumerate()
            .map(|(i, (p, units))| {
                let what = if units.is_empty() { String::new() } else { format!(" · {}", units.join(", ")) };
                (p.id, format!("{}{what}", i + 1))
            })
            .collect();
        let n = specs.len().max(1) as f32;
        let legend_h: f32 = specs.iter().map(|p| 22.0 + 18.0 * p.series.len() as f32).sum();
        let plot_h = ((ui.available_height() - legend_h - 40.0 * n) / n).max(MIN_PLOT_HEIGHT);
        let y_id = Id::unique("zescope-pane-y-range");
        // The unit a pane's y axis reads in: its series' one unit, or none when they differ.
        let pane_units: Vec<(u64, String)> = specs
            .iter()
            .zip(&units)
            .map(|(p, u)| (p.id, if let [one] = u.as_slice() { one.clone() } else { String::new() }))
            .collect();
        let y_width = axes::shared_y_width(ui, y_id, &pane_units);
        let link = Id::unique("zescope-time-axis");
        Geometry { specs, rows, units, numbers, plot_h, bg, y_id, y_width, link }
    }
}

/// The plotted units of a pane's described series, each once, sorted.
fn units(rows: &[PaneRow<'_>]) -> Vec<String> {
    let units: std::collections::BTreeSet<&str> =
        rows.iter().filter(|r| r.shown.entry.is_some()).map(|r| r.shown.unit.as_str()).collect();
    units.into_iter().map(str::to_owned).collect()
}

/// What a pane's header row was asked for.
#[derive(Default)]
pub(super) struct HeaderClicks {
    /// Its close button.
    pub remove: bool,
    /// Its y lock, toggled.
    pub toggle_lock: bool,
    /// A file of it, from its Export menu.
    pub write: Option<FileKind>,
}

/// The pane's header: its buttons first, from the right edge, so a narrow window truncates the
/// title rather than pushing them out of sight.
pub(super) fn header(ui: &mut Ui, i: usize, spec: &PaneSpec, panes: &Panes, units: &[String]) -> HeaderClicks {
    let mut clicks = HeaderClicks::default();
    ui.horizontal(|ui| {
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if ui.small_button("x").on_hover_text("remove this pane").clicked() {
                clicks.remove = true;
            }
            let locked = panes.y_lock.contains_key(&spec.id);
            let lock = ui.selectable_label(locked, "y lock").on_hover_text(
                "hold this pane's value axis where it is; then drag and Ctrl+wheel move and zoom it too",
            );
            clicks.toggle_lock = lock.clicked();
            ui.menu_button("Export", |ui| {
                for f in FORMATS.iter().filter(|f| f.in_window()) {
                    let label = match f.scope() {
                        Scope::Picture => format!("{}…", f.title()),
                        Scope::Samples => format!("{} of the visible data…", f.name()),
                        Scope::Session => continue,
                    };
                    if ui.button(label).clicked() {
                        ui.close();
                        clicks.write = Some(FileKind::File(*f));
                    }
                }
            });
            ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
                ui.label(RichText::new(format!("Pane {}", i + 1)).strong());
                // As the legend's rows read them (GHz, kJ), once it was drawn; else as stored.
                let shown = super::super::legend::shown_units(ui, spec.id).unwrap_or_else(|| units.to_vec());
                if !shown.is_empty() {
                    ui.add(egui::Label::new(RichText::new(shown.join(", ")).weak()).truncate());
                }
            });
        });
    });
    clicks
}
