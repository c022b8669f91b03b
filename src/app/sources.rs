//! The source panel: where metrics come from (real or simulated, said plainly), devices and
//! sub-devices, their metric groups (each saying how it is read — exported memory or the
//! time-based streamer with the period and reports per notification the driver granted — and
//! greyed with the reason when the chosen way cannot read it), a search over groups and
//! metrics, the way to read groups (auto / exported memory / streamer), the sampling interval,
//! and start/stop.

use std::time::Duration;

use egui::{Color32, RichText, Ui};

use crate::sampler::{Command, DeviceEntry, GroupEntry, GroupExportKind, MAX_INTERVAL, MIN_INTERVAL, Via};

use super::state::AppState;
use crate::view::SeriesKey;
use crate::view::format;

/// What the panel asks the app to do.
#[derive(Debug)]
pub enum SourceAction {
    Send(Command),
}

pub struct SourcePanel<'a> {
    pub state: &'a mut AppState,
    pub search: &'a mut String,
    pub focus_search: bool,
}

fn matches(q: &str, name: &str, description: &str) -> bool {
    q.is_empty() || name.to_lowercase().contains(q) || description.to_lowercase().contains(q)
}

/// Does the group (or one of its metrics) match the search?
pub fn group_matches(g: &GroupEntry, q: &str) -> bool {
    matches(q, &g.name, &g.description) || g.metrics.iter().any(|m| matches(q, &m.name, &m.description))
}

impl SourcePanel<'_> {
    pub fn ui(&mut self, ui: &mut Ui) -> Vec<SourceAction> {
        let mut actions = Vec::new();
        self.source_header(ui);
        ui.separator();
        let search = ui.add(
            egui::TextEdit::singleline(self.search)
                .hint_text("Search groups and metrics (Ctrl+F)")
                .desired_width(f32::INFINITY),
        );
        if self.focus_search {
            search.request_focus();
        }
        ui.add_space(4.0);
        let q = self.search.to_lowercase();
        let running = self.state.ingest.run.is_some();
        egui::ScrollArea::vertical().id_salt("sources").max_height(ui.available_height() - 120.0).show(ui, |ui| {
            let Some(inv) = self.state.inventory.clone() else {
                ui.label("Waiting for the sampler…");
                return;
            };
            if inv.devices.is_empty() {
                ui.label(RichText::new("No devices found.").color(ui.visuals().warn_fg_color));
            }
            for dev in &inv.devices {
                self.device(ui, dev, &q, running);
            }
        });
        ui.separator();
        actions.extend(self.controls(ui));
        actions
    }

    fn source_header(&self, ui: &mut Ui) {
        let Some(src) = self.state.inventory.as_ref().and_then(|i| i.source.clone()) else {
            ui.label("Source: opening…");
            return;
        };
        ui.horizontal(|ui| {
            ui.label("Source:");
            if src.simulated {
                let r = ui.label(RichText::new(" SIMULATED ").strong().color(Color32::BLACK).background_color(Color32::from_rgb(240, 200, 80)));
                r.on_hover_text(match &src.fallback_reason {
                    Some(why) => format!("No real Level Zero device is used: {why}.\nThese counters come from zescope's built-in simulated device."),
                    None => "These counters come from zescope's built-in simulated device, not hardware.".to_owned(),
                });
            } else {
                ui.label(RichText::new(" Level Zero ").strong().color(Color32::BLACK).background_color(Color32::from_rgb(120, 200, 120)));
            }
            ui.label(RichText::new(&src.description).weak());
        });
    }

    /// A device's tick box (several devices may be ticked: one run samples them all on one
    /// time axis) and, when ticked, its groups.
    fn device(&mut self, ui: &mut Ui, dev: &DeviceEntry, q: &str, running: bool) {
        let selected = self.state.selection.is_picked(dev.path);
        let indent = if dev.path.sub_device.is_some() { "    " } else { "" };
        let label = format!("{indent}{} [{:?}]{}", dev.name, dev.kind, if dev.simulated { " (simulated)" } else { "" });
        let mut on = selected;
        let r = ui.add_enabled(!running, egui::Checkbox::new(&mut on, label));
        let r = r.on_hover_text(format!(
            "{:04x}:{:04x}  uuid {}\nTick several devices to sample them together.",
            dev.vendor_id, dev.device_id, dev.uuid
        ));
        if r.changed() {
            if on {
                let via = self.state.selection.via;
                let first = dev.groups.iter().find(|g| g.read_by(via).is_some()).map(|g| g.name.clone());
                self.state.selection.pick(dev.path, first.into_iter().collect());
            } else {
                self.state.selection.unpick(dev.path);
            }
        }
        if !self.state.selection.is_picked(dev.path) {
            return;
        }
        if let Some(e) = &dev.error {
            ui.label(RichText::new(format!("metric groups unavailable: {e}")).color(ui.visuals().warn_fg_color));
        }
        for g in dev.groups.iter().filter(|g| group_matches(g, q)) {
            self.group(ui, dev, g, q, running);
        }
        if matches(q, crate::sampler::telemetry::GROUP, "sysman frequency power temperature engines memory") {
            self.telemetry(ui, dev, running);
        }
    }

    /// The device's "Telemetry" node: ticked, the run also reads its Sysman telemetry; while it
    /// runs, the series the driver offered (draggable onto panes).
    fn telemetry(&mut self, ui: &mut Ui, dev: &DeviceEntry, running: bool) {
        let group = crate::sampler::telemetry::GROUP;
        let stream = self.state.ingest.run.as_ref().and_then(|r| {
            let t = r.info.config.targets.iter().position(|t| t.device == dev.path)?;
            r.info.streams.iter().find(|s| s.target == t && s.group == group)
        });
        let id = ui.make_persistent_id(("telemetry", dev.path));
        egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, false)
            .show_header(ui, |ui| {
                let text = RichText::new(format!("{group}  · Sysman"));
                let r = ui.add_enabled(!running, egui::Checkbox::new(&mut self.state.selection.telemetry, text));
                let what = "Clocks, throttle reasons, power and energy, temperatures, engine utilisation and memory, \
                            read through Sysman at most every 100 ms";
                if running {
                    r.on_disabled_hover_text(format!("{what}; stop the run to change it"));
                } else {
                    r.on_hover_text(what);
                }
            })
            .body(|ui| {
                let Some(s) = stream else {
                    let why = if running {
                        "the driver offers no telemetry (see Help → Diagnostics)"
                    } else {
                        "series listed while running"
                    };
                    ui.label(RichText::new(why).weak().small());
                    return;
                };
                for x in &s.series {
                    let key = SeriesKey { device: dev.name.clone(), group: group.to_owned(), metric: x.name.clone() };
                    let label = format!("{} [{}]", x.name, x.unit);
                    ui.dnd_drag_source(egui::Id::unique(("drag", &key)), key, |ui| {
                        ui.label(label);
                    })
                    .response
                    .on_hover_text(format!("{}\nDrag onto a pane to plot it there.", x.description));
                }
            });
    }

    fn group(&mut self, ui: &mut Ui, dev: &DeviceEntry, g: &GroupEntry, q: &str, running: bool) {
        let export = match g.exports {
            GroupExportKind::Group => "DMA-BUF",
            GroupExportKind::PerMetric => "DMA-BUF per metric",
            GroupExportKind::None => "no export",
            GroupExportKind::Unknown => "export unknown",
        };
        let via = self.state.selection.via;
        let unreadable = g.unreadable_by(via);
        // While running: how this run reads it (with the driver's granted period); else how the
        // chosen way would.
        let granted = self.state.ingest.run.as_ref().and_then(|r| {
            let t = r.info.config.targets.iter().position(|t| t.device == dev.path)?;
            r.info.streams.iter().find(|s| s.target == t && s.group == g.name)
        });
        let read = match (granted, g.read_by(via)) {
            (Some(s), _) if s.read_path == crate::sampler::ReadPath::Streamer => s.layout.clone(),
            (Some(_), _) => "exported memory".to_owned(),
            (None, Some(how)) => how.describe().to_owned(),
            (None, None) => "cannot be read".to_owned(),
        };
        // While searching, groups have their own (open) state, so clearing the search restores
        // what the user had expanded.
        let id = ui.make_persistent_id(("group", dev.path, &g.name, !q.is_empty()));
        egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, !q.is_empty())
            .show_header(ui, |ui| {
                let mut on = self.state.selection.groups_of(dev.path).is_some_and(|c| c.contains(&g.name));
                let enabled = unreadable.is_none() && !running;
                // Short in the header (the panel's width follows its widest line); the whole of
                // it on hover and as the first line of the group's body.
                let tag = if read == "exported memory" || read == "cannot be read" { export } else { "streamer" };
                let text = RichText::new(format!("{}  · domain {} · {tag}", g.name, g.domain));
                let r = ui.add_enabled(enabled, egui::Checkbox::new(&mut on, text));
                let r = match &unreadable {
                    Some(why) => r.on_disabled_hover_text(format!("Cannot be sampled: {why}")),
                    None if running => {
                        r.on_disabled_hover_text(format!("read by {read}; stop the run to change groups"))
                    }
                    None => r.on_hover_text(format!("{}\nread by {read}", g.description)),
                };
                if r.changed()
                    && let Some(choice) = self.state.selection.choice_mut(dev.path)
                {
                    if on {
                        // One group per domain: ticking a group unticks others of its domain.
                        for o in dev.groups.iter().filter(|o| o.domain == g.domain && o.name != g.name) {
                            choice.groups.remove(&o.name);
                        }
                        choice.groups.insert(g.name.clone());
                    } else {
                        choice.groups.remove(&g.name);
                    }
                }
            })
            .body(|ui| {
                ui.add(egui::Label::new(RichText::new(format!("read by {read}")).weak().small()).wrap());
                // This device's unticked metrics of the group, looked up once per group.
                let unticked = (self.state.selection.picked().into_iter())
                    .find(|(d, ..)| *d == dev.path)
                    .and_then(|(.., x)| x.get(&g.name).cloned())
                    .unwrap_or_default();
                for m in g
                    .metrics
                    .iter()
                    .filter(|m| matches(q, &m.name, &m.description) || matches(q, &g.name, &g.description))
                {
                    ui.horizontal(|ui| {
                        let excluded = unticked.contains(&m.name);
                        let mut on = !excluded;
                        if ui
                            .add_enabled(!running && unreadable.is_none(), egui::Checkbox::without_text(&mut on))
                            .changed()
                            && let Some(choice) = self.state.selection.choice_mut(dev.path)
                        {
                            let e = choice.excluded.entry(g.name.clone()).or_default();
                            if on {
                                e.remove(&m.name);
                            } else {
                                e.insert(m.name.clone());
                            }
                        }
                        let key = SeriesKey { device: dev.name.clone(), group: g.name.clone(), metric: m.name.clone() };
                        let label = format!("{} [{}]", m.name, m.unit);
                        ui.dnd_drag_source(egui::Id::unique(("drag", &key)), key, |ui| {
                            ui.label(label);
                        })
                        .response
                        .on_hover_text(format!("{}\nDrag onto a pane to plot it there.", m.description));
                    });
                }
            });
    }

    fn controls(&mut self, ui: &mut Ui) -> Vec<SourceAction> {
        let mut actions = Vec::new();
        let running = self.state.ingest.run.is_some();
        ui.horizontal(|ui| {
            ui.label("Read by");
            let mut via = self.state.selection.via;
            let name = |v: Via| match v {
                Via::Auto => "auto",
                Via::Export => "exported memory",
                Via::Streamer => "streamer",
            };
            ui.add_enabled_ui(!running, |ui| {
                egui::ComboBox::from_id_salt("via")
                    .selected_text(name(via))
                    .show_ui(ui, |ui| {
                        for v in [Via::Auto, Via::Export, Via::Streamer] {
                            ui.selectable_value(&mut via, v, name(v));
                        }
                    })
                    .response
                    .on_hover_text(
                        "auto: exported memory where a group offers it, else the time-based metric streamer; \
                         or only one of them",
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
            }
        });
        ui.horizontal(|ui| {
            ui.label("Interval");
            // Wide enough that each decade (100 µs … 10 s) gets ~40 px: a log slider that is
            // usable across its range; the value box beside it takes a typed "250us" or "5 ms".
            ui.spacing_mut().slider_width = (ui.available_width() - 90.0).clamp(120.0, 240.0);
            let mut us = self.state.selection.interval.as_micros() as f64;
            let slider = egui::Slider::new(&mut us, MIN_INTERVAL.as_micros() as f64..=MAX_INTERVAL.as_micros() as f64)
                .logarithmic(true)
                .custom_formatter(|v, _| format::duration(Duration::from_micros(v as u64)))
                .custom_parser(|s| crate::view::format::parse_duration(s).ok().map(|d| d.as_micros() as f64));
            if ui.add(slider).on_hover_text("sampling interval, 100 µs to 10 s; applies live. Click the value to type one (\"250us\", \"5 ms\")").changed() {
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
