//! The source panel: where metrics come from (real or simulated, said plainly), devices and
//! sub-devices, their metric groups (each saying how it is read — exported memory or the
//! time-based streamer with the period and reports per notification the driver granted — and
//! greyed with the reason when the chosen way cannot read it), a search over groups and
//! metrics, the way to read groups (auto / exported memory / streamer), the sampling interval,
//! and start/stop.
//!
//! Built for catalogues of any size (a real GPU has dozens of groups and over a thousand
//! metrics): groups are collapsed until opened (their expander) or matched by the search; a
//! group's tick takes all its metrics, and shows a dash when some are unticked; the tree is rows
//! of one height of which only those in view are laid out (`rows.rs`); the search's text is
//! lowercased once per inventory and its answer kept until the query changes (`index.rs`).

mod index;
mod rows;

use std::time::Duration;

use egui::{Color32, RichText, Ui};

use zescope_sampler::{Command, MAX_INTERVAL, MIN_INTERVAL, Via};

use super::state::AppState;
use zescope_model::view::text;

/// What the panel asks the app to do.
#[derive(Debug)]
pub enum SourceAction {
    Send(Command),
}

/// Ticks each group named in `groups` on the picked devices that have it, or, where none does,
/// on the first device that has it (picking it; a root device comes before its tiles), as the
/// panel's ticks do: one group per domain.
pub(crate) fn tick_groups(state: &mut AppState, groups: &[String]) {
    let Some(inv) = state.inventory.take() else { return };
    let mut changes = Vec::new();
    for name in groups {
        let has = |d: &&zescope_sampler::DeviceEntry| d.groups.iter().any(|g| &g.name == name);
        let picked: Vec<_> = inv.devices.iter().filter(has).filter(|d| state.selection.is_picked(d.path)).collect();
        let devices = if picked.is_empty() { inv.devices.iter().find(has).into_iter().collect() } else { picked };
        for dev in devices {
            if !state.selection.is_picked(dev.path) {
                state.selection.pick(dev.path, Default::default());
            }
            if let Some(gi) = dev.groups.iter().position(|g| &g.name == name) {
                changes.push(rows::Change::Group(dev.path, gi, true));
            }
        }
    }
    rows::apply(changes, &inv, state, &mut rows::OpenGroups::default(), false);
    state.inventory = Some(inv);
}

/// What the panel keeps from frame to frame: the search's index and which groups are open.
#[derive(Default)]
pub struct SourceView {
    index: index::SearchIndex,
    open: rows::OpenGroups,
    /// The query the open-while-searching state is for.
    query: String,
    /// The rows of the last frame (kept for their allocation).
    rows: Vec<rows::Row>,
}

impl SourceView {
    /// Opens (or closes) every group and telemetry node of every device in `inv`.
    pub fn set_all_open(&mut self, inv: &zescope_sampler::Inventory, open: bool) {
        self.open.open.clear();
        if open {
            for d in &inv.devices {
                let names =
                    d.groups.iter().map(|g| g.name.clone()).chain([zescope_sampler::telemetry::GROUP.to_owned()]);
                self.open.open.extend(names.map(|n| (d.path, n)));
            }
        }
    }

    /// Rows the tree had in the last frame (laid out or not).
    pub fn rows(&self) -> usize {
        self.rows.len()
    }
}

pub struct SourcePanel<'a> {
    pub state: &'a mut AppState,
    pub search: &'a mut String,
    pub focus_search: bool,
    pub view: &'a mut SourceView,
}

impl SourcePanel<'_> {
    pub fn ui(&mut self, ui: &mut Ui) -> Vec<SourceAction> {
        let mut actions = Vec::new();
        self.source_header(ui);
        ui.separator();
        // Right to left: the × at the panel's edge, the box filling exactly what is left (a box
        // sized by a guess at the ×'s width would widen the panel a little every frame).
        let row = egui::vec2(ui.available_width(), ui.spacing().interact_size.y);
        ui.allocate_ui_with_layout(row, egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let clear = ui
                .add_enabled(!self.search.is_empty(), egui::Button::new("×").small())
                .on_hover_text("clear the search (Esc)")
                .clicked();
            // An id of its own: the box keeps its focus whatever appears beside it as one types.
            let id = egui::Id::unique("zescope-search");
            let search = ui.add(
                egui::TextEdit::singleline(self.search)
                    .id(id)
                    .hint_text("Search groups and metrics (Ctrl+F)")
                    .desired_width(ui.available_width()),
            );
            if self.focus_search {
                // Ctrl+F: the box takes the keys, its text selected, so typing replaces it.
                search.request_focus();
                if let Some(mut st) = egui::TextEdit::load_state(ui.ctx(), id) {
                    let all = egui::text::CCursorRange::two(
                        egui::text::CCursor::new(0),
                        egui::text::CCursor::new(self.search.chars().count()),
                    );
                    st.cursor.set_char_range(Some(all));
                    st.store(ui.ctx(), id);
                }
            }
            // Escape takes the focus from the box as it is pressed: a box that just lost it to
            // Escape is cleared too.
            let escape = ui.input(|i| i.key_pressed(egui::Key::Escape));
            if clear || (escape && (search.has_focus() || search.lost_focus())) {
                self.search.clear();
            }
        });
        let query = self.search.trim().to_owned();
        if query != self.view.query {
            self.view.open.closed_in_search.clear();
            self.view.query = query.clone();
        }
        let searching = !query.is_empty();
        // The tree borrows the inventory while rows change the selection: it is taken out for
        // the frame (a move, not a copy of the catalogue) and put back below.
        let Some(inv) = self.state.inventory.take() else {
            ui.label("Waiting for the sampler…");
            ui.separator();
            actions.extend(self.controls(ui));
            return actions;
        };
        self.view.index.update(&inv, &query);
        let mut tree = std::mem::take(&mut self.view.rows);
        let shown = rows::build(&mut tree, &inv, self.state, &self.view.index, &self.view.open, &query);
        if searching {
            ui.label(RichText::new(shown.text()).weak().small());
        }
        ui.add_space(4.0);
        if inv.devices.is_empty() {
            if inv.source.as_ref().is_some_and(super::status::is_remote) {
                // A server's devices come with its run: none yet is no fault found here.
                ui.label(RichText::new("The server's devices come with its run.").weak());
            } else {
                ui.label(RichText::new("No devices found.").color(ui.visuals().warn_fg_color));
            }
        }
        let height = ui.spacing().interact_size.y;
        let mut painter = rows::Painter {
            inv: &inv,
            state: self.state,
            index: &self.view.index,
            open: &self.view.open,
            searching,
            // (The inventory is out of the state for the frame: asked of `inv`.)
            read_only: inv.source.as_ref().is_some_and(super::status::is_remote),
            height,
            changes: Vec::new(),
        };
        egui::ScrollArea::vertical()
            .id_salt("sources")
            .auto_shrink([false, true])
            .max_height(ui.available_height() - 120.0)
            .show_rows(ui, height, tree.len(), |ui, range| {
                for &row in &tree[range] {
                    painter.row(ui, row);
                }
            });
        let changes = painter.changes;
        let restart = self.state.ingest.run.is_some() && changes.iter().any(rows::Change::changes_the_run);
        rows::apply(changes, &inv, self.state, &mut self.view.open, searching);
        self.view.rows = tree;
        self.state.inventory = Some(inv);
        if restart {
            actions.push(self.restart());
        }
        ui.separator();
        actions.extend(self.controls(ui));
        actions
    }

    fn source_header(&self, ui: &mut Ui) {
        let Some(src) = self.state.inventory.as_ref().and_then(|i| i.source.clone()) else {
            ui.label("Source: opening…");
            return;
        };
        // A server's kind (a GPU's driver or the simulated one) comes with its run's devices:
        // before them, no badge says one (it said "Level Zero" of a server not yet reached).
        let kind_unknown =
            super::status::is_remote(&src) && self.state.inventory.as_ref().is_some_and(|i| i.devices.is_empty());
        ui.horizontal(|ui| {
            ui.label("Source:");
            if super::status::is_remote(&src) {
                let badge = RichText::new(" REMOTE ").strong().color(Color32::BLACK);
                let r = ui.label(badge.background_color(Color32::from_rgb(120, 170, 240)));
                r.on_hover_text("A run of another machine's `zescope serve`, watched over its live feed: read-only here.");
            }
            if src.simulated {
                let r = ui.label(RichText::new(" SIMULATED ").strong().color(Color32::BLACK).background_color(Color32::from_rgb(240, 200, 80)));
                r.on_hover_text(match &src.fallback_reason {
                    Some(why) => format!("No real Level Zero device is used: {why}.\nThese counters come from zescope's built-in simulated device."),
                    None => "These counters come from zescope's built-in simulated device, not hardware.".to_owned(),
                });
            } else if !kind_unknown {
                ui.label(RichText::new(" Level Zero ").strong().color(Color32::BLACK).background_color(Color32::from_rgb(120, 200, 120)));
            }
            ui.label(RichText::new(&src.description).weak());
        });
    }

    /// The selection changed while a run goes on: a new run samples it (the store keeps what the
    /// old one sampled, the panes go on); a selection no run can sample stops the run, saying why.
    fn restart(&mut self) -> SourceAction {
        match self.state.run_config() {
            Ok(cfg) => SourceAction::Send(Command::Start(cfg)),
            Err(why) => {
                self.state.push_error(super::banner::UiError::new(
                    super::banner::UiErrorKind::Stopped,
                    format!("the new selection cannot be sampled: {why}"),
                    "tick a group (or the telemetry) and Start",
                ));
                SourceAction::Send(Command::Stop)
            }
        }
    }

    /// The remote server's source, when the run shown is one (its controls are read-only).
    fn remote(&self) -> Option<&zescope_sampler::SourceInfo> {
        let source = self.state.inventory.as_ref().and_then(|i| i.source.as_ref());
        source.filter(|s| super::status::is_remote(s))
    }

    /// A remote run's controls: the server's way and interval, shown; Disconnect (the server's
    /// run goes on).
    fn remote_controls(&self, ui: &mut Ui, disconnected: bool) -> Vec<SourceAction> {
        let mut actions = Vec::new();
        let s = &self.state.selection;
        ui.horizontal(|ui| {
            ui.label("Read by");
            ui.label(RichText::new(s.via.describe()).strong()).on_hover_text(rows::READ_ONLY);
        });
        ui.horizontal(|ui| {
            ui.label("Interval");
            ui.label(RichText::new(text::duration(s.interval)).strong()).on_hover_text(rows::READ_ONLY);
            ui.label(RichText::new("(the server's)").weak());
        });
        ui.horizontal(|ui| {
            if self.state.ingest.run.is_some() {
                let stop = ui.button("Disconnect").on_hover_text(
                    "stop watching: what arrived stays here; the server's run goes on (File → Connect… to watch it again)",
                );
                if stop.clicked() {
                    actions.push(SourceAction::Send(Command::Stop));
                }
            } else if disconnected {
                ui.label(RichText::new("Disconnected: File → Connect… to watch it again").weak());
            }
        });
        actions
    }

    fn controls(&mut self, ui: &mut Ui) -> Vec<SourceAction> {
        if let Some(s) = self.remote() {
            let disconnected = super::status::is_disconnected(s);
            return self.remote_controls(ui, disconnected);
        }
        let mut actions = Vec::new();
        let running = self.state.ingest.run.is_some();
        ui.horizontal(|ui| {
            ui.label("Read by");
            let mut via = self.state.selection.via;
            ui.scope(|ui| {
                egui::ComboBox::from_id_salt("via")
                    .selected_text(via.describe())
                    .show_ui(ui, |ui| {
                        for v in Via::ALL {
                            ui.selectable_value(&mut via, v, v.describe());
                        }
                    })
                    .response
                    .on_hover_text(
                        "auto: exported memory where a group offers it, else the time-based metric streamer, and \
                         the metric tracer for tracer-based groups; or only one of them",
                    );
            });
            if via != self.state.selection.via {
                self.state.selection.via = via;
                // Groups the new way cannot read are unticked, on every picked device.
                let devices = self.state.inventory.as_ref().map(|i| i.devices.clone()).unwrap_or_default();
                for dev in devices {
                    if let Some(choice) = self.state.selection.choice_mut(dev.path) {
                        for g in dev.groups.iter().filter(|g| g.read_by(via).is_none()) {
                            choice.groups.remove(&g.name);
                        }
                    }
                }
                if running {
                    actions.push(self.restart());
                }
            }
        });
        ui.horizontal(|ui| {
            ui.label("Interval");
            // Wide enough that each decade (100 µs … 10 s) gets ~40 px: a log slider that is
            // usable across its range; the value box beside it takes a typed "250us" or "5 ms".
            ui.spacing_mut().slider_width = (ui.available_width() - 90.0).clamp(120.0, 240.0);
            let shown = self.state.selection.interval;
            let mut us = shown.as_micros() as f64;
            let slider = egui::Slider::new(&mut us, MIN_INTERVAL.as_micros() as f64..=MAX_INTERVAL.as_micros() as f64)
                .logarithmic(true)
                .custom_formatter(|v, _| text::duration(Duration::from_micros(v as u64)))
                .custom_parser(|s| typed_interval(s, shown).map(|d| d.as_micros() as f64));
            if ui.add(slider).on_hover_text("sampling interval, 100 µs to 10 s; applies live (a run that streams a group starts again at it). Click the value to type one (\"250us\", \"5 ms\"; a bare number is in the unit shown)").changed() {
                let d = Duration::from_micros(us as u64).clamp(MIN_INTERVAL, MAX_INTERVAL);
                self.state.selection.interval = d;
                if running {
                    actions.push(SourceAction::Send(Command::SetInterval(d)));
                }
            }
        });
        ui.horizontal(|ui| {
            if running {
                if ui.button("Stop").clicked() {
                    actions.push(SourceAction::Send(Command::Stop));
                }
            } else {
                match self.state.run_config() {
                    Ok(cfg) => {
                        if ui.button("Start").clicked() {
                            actions.push(SourceAction::Send(Command::Start(cfg)));
                        }
                    }
                    Err(why) => {
                        ui.add_enabled(false, egui::Button::new("Start")).on_disabled_hover_text(why);
                    }
                }
                if ui.button("Refresh").on_hover_text("list devices and groups again").clicked() {
                    actions.push(SourceAction::Send(Command::Refresh));
                }
            }
        });
        actions
    }
}

/// The interval typed into the slider's value box: "250us", "5 ms", or a bare number in the unit
/// the box showed (`5` where it showed "10 ms" is 5 ms, not 5 s).
fn typed_interval(typed: &str, shown: Duration) -> Option<Duration> {
    let typed = typed.trim();
    if !typed.is_empty() && typed.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let shown = text::duration(shown);
        let unit = shown.rsplit(' ').next().unwrap_or("s");
        return text::parse_duration(&format!("{typed} {unit}")).ok();
    }
    text::parse_duration(typed).ok()
}

#[cfg(test)]
mod tests;
