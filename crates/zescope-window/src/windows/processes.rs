//! View → Processes: per device, the processes that used it (`view::processes`: read through
//! Sysman once a second in runs with telemetry, or restored from a session) — pid, command (or
//! "(not on this host)"), device and shared memory and engines as last listed, when it was first
//! listed — sortable by a click on a column's heading (again: the other way), and the device
//! memory of its top processes (the most at their peak) over time, on the plots' time axis, each
//! line's colour beside its process's pid.

use egui::{Color32, RichText, Ui};
use egui_plot::{Line, Plot};

use zescope_model::view::processes::{Process, ProcessColumn, Processes, sorted};
use zescope_model::view::text::si;
use zescope_store::Store;

use super::{Shared, Window};
use zescope_model::view::TimeAxis;

/// How many processes per device the memory plot draws.
pub const PLOTTED: usize = 5;

/// The panel's state.
pub struct ProcessPanel {
    /// View → Processes is open.
    pub open: bool,
    /// The column the rows are sorted by, ascending when true.
    pub sort: (ProcessColumn, bool),
}

impl Default for ProcessPanel {
    /// Sorted by memory, most first (as `top` does).
    fn default() -> Self {
        ProcessPanel { open: false, sort: (ProcessColumn::Memory, false) }
    }
}

impl ProcessPanel {
    /// A click on column `c`'s heading: sorts by it (memory and times most first, the rest
    /// ascending), or the other way when it already is.
    pub fn sort_by(&mut self, c: ProcessColumn) {
        let first = !matches!(c, ProcessColumn::Memory | ProcessColumn::Shared | ProcessColumn::Since);
        self.sort = match self.sort {
            (s, asc) if s == c => (c, !asc),
            _ => (c, first),
        };
    }

    /// The rows of `device`'s table, in the order shown.
    pub fn rows<'a>(&self, processes: &'a Processes, device: &str) -> Vec<&'a Process> {
        sorted(processes.on(device).collect(), self.sort.0, self.sort.1)
    }

    fn body(&mut self, ui: &mut Ui, processes: &Processes, store: &Store) {
        if processes.is_empty() {
            ui.label("No processes listed yet: they are read with the telemetry (tick Telemetry, then Start).");
            return;
        }
        let mut clicked = None;
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            for device in processes.devices() {
                // The plot first: below a table of many processes it was out of sight.
                ui.heading(device);
                memory_plot(ui, processes, device, store);
                self.table(ui, processes, device, store, &mut clicked);
                ui.separator();
            }
        });
        if let Some(c) = clicked {
            self.sort_by(c);
        }
    }

    fn table(
        &self,
        ui: &mut Ui,
        processes: &Processes,
        device: &str,
        store: &Store,
        clicked: &mut Option<ProcessColumn>,
    ) {
        // Which line of the memory plot above is a row's: its colour, beside the pid (the lines
        // had no key: five coloured lines and a table of pids, nothing to tell which was which).
        let plotted = processes.top_by_peak(device, PLOTTED);
        let line_of = |p: &Process| plotted.iter().position(|q| std::ptr::eq(*q, p));
        egui::Grid::new(("processes", device)).striped(true).num_columns(ProcessColumn::ALL.len()).show(ui, |ui| {
            for c in ProcessColumn::ALL {
                let arrow = match self.sort {
                    (s, true) if s == c => " (up)",
                    (s, false) if s == c => " (down)",
                    _ => "",
                };
                if ui.button(format!("{}{arrow}", c.title())).on_hover_text("sort by this column").clicked() {
                    *clicked = Some(c);
                }
            }
            ui.end_row();
            for p in self.rows(processes, device) {
                let latest = p.latest();
                let weak = |t: String| if p.alive { RichText::new(t) } else { RichText::new(t).weak() };
                ui.horizontal(|ui| {
                    let (rect, swatch) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                    if let Some(i) = line_of(p) {
                        ui.painter().rect_filled(rect, 2.0, color(i));
                        let what = format!("line {} of the device memory plot", i + 1);
                        swatch.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, &what));
                        swatch.on_hover_text("its line in the device memory plot above");
                    }
                    ui.label(weak(p.pid.to_string()));
                });
                ui.label(weak(p.command_text().to_owned()));
                ui.monospace(si(latest.memory_bytes as f64, "B"));
                ui.monospace(si(latest.shared_bytes as f64, "B"));
                ui.label(weak(p.engines_text()));
                let from_start = processes.listed_from_start(p);
                let since = if from_start {
                    "the start".to_owned()
                } else {
                    format!("{:.1} s", TimeAxis::of(store).x(p.first_ns()))
                };
                let since = if p.alive { since } else { format!("{since}, ended") };
                let first = if from_start {
                    "listed in the run's first snapshot: it was running when the run started"
                } else {
                    "first listed then (on the plots' time axis)"
                };
                let now = if p.alive {
                    "listed in the newest snapshot"
                } else {
                    "no longer listed (a pid listed again later is another process, another row)"
                };
                ui.label(weak(since)).on_hover_text(format!("{first}; {now}"));
                ui.end_row();
            }
        });
    }
}

impl Window for ProcessPanel {
    fn title(&self) -> &'static str {
        "Processes"
    }

    fn is_open(&self, _: &Shared<'_>) -> bool {
        self.open
    }

    fn close(&mut self, _: &mut Shared<'_>) {
        self.open = false;
    }

    fn frame(&self, _: &egui::Context) -> egui::Window<'static> {
        egui::Window::new(self.title()).default_width(640.0).default_height(420.0)
    }

    fn ui(&mut self, ui: &mut Ui, shared: &mut Shared<'_>) {
        self.body(ui, &shared.state.history.processes, shared.store);
    }
}

/// The width of the memory plot's value axis, points: room for "512 MB" and its title.
const MEMORY_AXIS_PX: f32 = 76.0;

/// The device memory of `device`'s top processes over time, one line each, in the colour beside
/// its pid in the table.
fn memory_plot(ui: &mut Ui, processes: &Processes, device: &str, store: &Store) {
    let top = processes.top_by_peak(device, PLOTTED);
    // Labelled as the panes are: sizes in B with SI prefixes on round steps, times as on the
    // panes' axis (it had neither: lines of 5 GB with no number on either axis).
    Plot::new(("process-memory", device))
        .height(140.0)
        .allow_scroll(false)
        .custom_y_axes(vec![crate::axes::y_axis("B".to_owned(), MEMORY_AXIS_PX, false).label("device memory")])
        .y_grid_spacer(crate::axes::y_spacer)
        .x_axis_formatter(crate::axes::x_label)
        .show(ui, |p| {
            for (i, proc_) in top.iter().enumerate() {
                let points: Vec<[f64; 2]> =
                    proc_.samples.iter().map(|s| [TimeAxis::of(store).x(s.t_ns), s.memory_bytes as f64]).collect();
                let name = format!("{} {}", proc_.pid, proc_.command_text());
                p.line(Line::new(name, points).color(color(i)));
            }
        });
}

/// The `i`-th line's colour (the Okabe–Ito palette's first five).
fn color(i: usize) -> Color32 {
    const C: [Color32; 5] = [
        Color32::from_rgb(0, 114, 178),
        Color32::from_rgb(230, 159, 0),
        Color32::from_rgb(0, 158, 115),
        Color32::from_rgb(204, 121, 167),
        Color32::from_rgb(86, 180, 233),
    ];
    C[i % C.len()]
}
