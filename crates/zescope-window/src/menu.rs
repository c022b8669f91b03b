//! The menu bar (File → Views too) and what its file commands do (Ctrl+O, Ctrl+S, a dropped file
//! too), and the offer to recover a crashed session.

use egui::{Key, KeyboardShortcut, Modifiers, Ui};

use super::ZescopeApp;
use super::banner::{UiError, UiErrorKind};
use super::dialogs::FileKind;
use super::dialogs::file_name;
use super::files::FileAction;
use super::settings::Theme;
use super::unsaved::Pending;
use super::views::{dirs, list};
use zescope_model::view::ViewLength;
use zescope_model::viewfile::ViewFile;

impl ZescopeApp {
    /// View → Reset layout: the series shown — the run's, else the recording's, in stream
    /// order — laid out again by unit (`view::panes`).
    pub fn reset_arrangement(&mut self) {
        self.panes.reset();
        let keys = match &self.state.ingest.run {
            Some(r) => r.keys.concat(),
            None => {
                let mut seen = std::collections::BTreeSet::new();
                let metas = self.state.history.streams.values();
                let keys = metas.flat_map(|m| {
                    m.series.iter().map(|s| zescope_model::view::SeriesKey {
                        device: m.device.clone(),
                        group: m.group.clone(),
                        metric: s.metric.clone(),
                    })
                });
                keys.filter(|k| seen.insert(k.clone())).collect()
            }
        };
        self.panes.place_new(&keys, &self.state);
    }
    pub(super) fn menu(&mut self, ui: &mut Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.add(egui::Button::new("Open…").shortcut_text("Ctrl+O")).clicked() {
                    ui.close();
                    let a = self.files.ask_open();
                    self.perform(a);
                }
                ui.add_enabled_ui(!self.files.recent.is_empty(), |ui| {
                    ui.menu_button("Open Recent", |ui| {
                        for p in self.files.recent.clone() {
                            if ui.button(file_name(&p)).on_hover_text(p.display().to_string()).clicked() {
                                ui.close();
                                self.perform(Some(FileAction::Open(p)));
                            }
                        }
                    });
                });
                let connect = ui.button("Connect…").on_hover_text("watch a run served by `zescope serve` elsewhere");
                if connect.clicked() {
                    ui.close();
                    self.connect.open_with(&self.recent_remotes);
                }
                if ui.button("Compare with…").on_hover_text("overlay a second session on the same panes").clicked() {
                    ui.close();
                    let a = self.files.ask_compare();
                    self.perform(a);
                }
                // Always there (disabled without a recording to compare with), so that the items
                // below it do not move when one appears.
                let last = self.files.recent.iter().find(|p| Some(*p) != self.files.current.as_ref()).cloned();
                let label = last.as_deref().map_or_else(
                    || "Compare with the last recording".to_owned(),
                    |p| format!("Compare with {}", file_name(p)),
                );
                if ui
                    .add_enabled(last.is_some(), egui::Button::new(label))
                    .on_hover_text("the last recording opened")
                    .clicked()
                    && let Some(p) = last
                {
                    ui.close();
                    self.perform(Some(FileAction::Compare(p)));
                }
                ui.separator();
                if ui.add(egui::Button::new("Save").shortcut_text("Ctrl+S")).clicked() {
                    ui.close();
                    let a = self.files.ask_save();
                    self.perform(a);
                }
                if ui.add(egui::Button::new("Save As…").shortcut_text("Ctrl+Shift+S")).clicked() {
                    ui.close();
                    let a = self.files.ask_save_as();
                    self.perform(a);
                }
                ui.menu_button("Export", |ui| {
                    for (label, kind, shown) in export_items() {
                        if ui.button(label).clicked() {
                            ui.close();
                            let a = self.files.ask_write(kind, None, shown);
                            self.perform(a);
                        }
                    }
                });
                self.views_menu(ui);
                ui.separator();
                if ui.add(egui::Button::new("Quit").shortcut_text("Ctrl+Q")).clicked() {
                    ui.close();
                    self.guarded(Pending::Quit);
                }
            });
            ui.menu_button("View", |ui| {
                let activity = self.activity();
                let follow = egui::Button::new("Follow live").shortcut_text("End");
                if ui.add_enabled(activity.can_follow(), follow).clicked() {
                    self.view.follow();
                }
                let pause = egui::Button::new("Pause / resume").shortcut_text("Space");
                if ui.add_enabled(activity.can_pause() || activity.can_follow(), pause).clicked() {
                    self.view.toggle_pause(zescope_model::view::data_x(&self.store));
                }
                if ui.add_enabled(self.files.recording.is_some(), egui::Button::new("Recording info")).clicked() {
                    self.windows.info.open = true;
                }
                if ui.button("Fit all").clicked() {
                    self.view.fit(zescope_model::view::data_x(&self.store));
                }
                ui.menu_button("Window length", |ui| {
                    for w in ViewLength::ALL {
                        if ui.radio(self.view.window == w, w.label()).clicked() {
                            self.view.set_window(w);
                        }
                    }
                });
                ui.menu_button("Theme", |ui| {
                    for (t, name) in
                        [(Theme::System, "Follow the system"), (Theme::Light, "Light"), (Theme::Dark, "Dark")]
                    {
                        if ui.radio(self.theme == t, name).clicked() {
                            self.theme = t;
                            ui.ctx().set_theme(t.preference());
                        }
                    }
                });
                ui.menu_button("Frame rate", |ui| {
                    for c in super::repaint::FrameCap::ALL {
                        if ui
                            .radio(self.frame_cap == c, c.label())
                            .on_hover_text("the most a live view paints")
                            .clicked()
                        {
                            self.frame_cap = c;
                        }
                    }
                });
                ui.checkbox(&mut self.overview.shown, "Overview strip")
                    .on_hover_text("a thin plot of the whole history above the panes, the shown range marked");
                ui.checkbox(&mut self.windows.phases.open, "Phase table")
                    .on_hover_text("per phase and series: duration, time measured, mean, min, max, totals, energy");
                ui.checkbox(&mut self.windows.processes.open, "Processes")
                    .on_hover_text("per device, the processes using it: memory, engines; read with the telemetry");
                if ui
                    .button("New derived series…")
                    .on_hover_text("a series computed from others: rates, ratios, moving averages, integrals")
                    .clicked()
                {
                    self.windows.derived.open = true;
                    ui.close();
                }
                ui.checkbox(&mut self.windows.triggers.open, "Triggers").on_hover_text(
                    "conditions on series, markers or throttle reasons: firings listed and marked on every pane",
                );
                if ui.add_enabled(self.cursors != Default::default(), egui::Button::new("Clear cursors")).clicked() {
                    self.cursors.clear();
                }
                if ui.button("Add pane").clicked() {
                    self.panes.add_pane();
                }
                self.rename_marker_menu(ui);
                if ui.add_enabled(!self.markers.is_empty(), egui::Button::new("Clear markers")).clicked() {
                    self.markers.clear();
                }
                ui.separator();
                if ui
                    .button("Reset layout")
                    .on_hover_text("panes, window length and interface zoom back to defaults")
                    .clicked()
                {
                    self.reset_arrangement();
                    self.view.set_window(ViewLength::default());
                    ui.ctx().set_zoom_factor(1.0);
                }
            });
            ui.menu_button("Help", |ui| {
                if ui.button("Keyboard shortcuts").clicked() {
                    self.windows.shortcuts.open = true;
                }
                if ui
                    .button("Diagnostics…")
                    .on_hover_text("check drivers, permissions and settings (zescope doctor)")
                    .clicked()
                {
                    let source = self.source();
                    self.windows.diagnostics.open(source);
                }
                if ui.button("About zescope").clicked() {
                    self.windows.about.open = true;
                }
            });
        });
    }

    /// Ctrl+O, Ctrl+S, Ctrl+Shift+S.
    pub(super) fn file_shortcuts(&mut self, ui: &mut Ui) {
        let (open, save_as, save) = ui.input_mut(|i| {
            (
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::O)),
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND | Modifiers::SHIFT, Key::S)),
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::S)),
            )
        });
        if open {
            let a = self.files.ask_open();
            self.perform(a);
        }
        if save_as {
            let a = self.files.ask_save_as();
            self.perform(a);
        } else if save {
            let a = self.files.ask_save();
            self.perform(a);
        }
        // A session file dropped on the window opens it.
        let dropped: Vec<_> = ui.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect());
        if let Some(p) = dropped.into_iter().find(|p| p.extension().is_some_and(|x| x == "ron")) {
            self.perform(Some(FileAction::Open(p)));
        }
    }

    pub(super) fn recovery_window(&mut self, ctx: &egui::Context) {
        let Some(rec) = &self.files.recover else { return };
        let age = (zescope_model::session::unix_ms_now() - rec.saved_unix_ms).max(0) / 1000;
        let mut choice = None;
        egui::Window::new("Recover the last session?").collapsible(false).resizable(false).show(ctx, |ui| {
            ui.label(format!(
                "zescope did not exit cleanly last time. A checkpoint of that session was saved {} ago.",
                zescope_model::view::text::duration(std::time::Duration::from_secs(age as u64))
            ));
            ui.horizontal(|ui| {
                if ui.button("Recover").clicked() {
                    choice = Some(true);
                }
                if ui.button("Discard").clicked() {
                    choice = Some(false);
                }
            });
        });
        match choice {
            Some(true) => self.recover(),
            Some(false) => {
                if let Some(r) = self.files.recover.take()
                    && let Err(e) = r.discard()
                {
                    log::warn!("cannot remove the old checkpoint: {e}");
                }
                // Sample now, unless a session file is shown.
                self.auto_start = self.files.recording.is_none();
            }
            None => {}
        }
    }

    /// File → Views.
    pub(crate) fn views_menu(&mut self, ui: &mut Ui) {
        ui.menu_button("Views", |ui| {
            let files = list(&dirs());
            if files.is_empty() {
                ui.label(egui::RichText::new("no view files yet").weak());
            }
            for f in files {
                // Listed by the name the view gives itself; a file that does not load by its name.
                let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let label = ViewFile::load(&f).ok().map(|v| v.name).filter(|n| !n.trim().is_empty()).unwrap_or(stem);
                if ui.button(&label).on_hover_text(f.display().to_string()).clicked() {
                    match ViewFile::load(&f) {
                        Ok(v) => self.load_view(v),
                        Err(e) => self.state.push_error(UiError::new(UiErrorKind::Open, e, "fix or remove the file")),
                    }
                    ui.close();
                }
            }
            ui.separator();
            ui.horizontal(|ui| {
                ui.add(egui::TextEdit::singleline(&mut self.views.name).hint_text("name").desired_width(140.0));
                let name = self.views.name.trim().to_owned();
                let ok = !name.is_empty() && !name.contains(['/', '\0']);
                if ui.add_enabled(ok, egui::Button::new("Save current view")).clicked() {
                    self.save_view(&name);
                    ui.close();
                }
            });
            if let Some(s) = &self.views.said {
                ui.label(egui::RichText::new(s).weak());
            }
        });
    }
}

/// File → Export's items: (label, what, the shown range only), each format the window offers by
/// what it holds: images of all panes, the visible or all data, or the whole session.
fn export_items() -> Vec<(String, FileKind, bool)> {
    use zescope_model::write::{FORMATS, Scope};
    let mut items = Vec::new();
    for &f in FORMATS.iter().filter(|f| f.in_window()) {
        let kind = FileKind::File(f);
        match f.scope() {
            Scope::Picture => items.push((format!("All panes as {}…", f.name()), kind, true)),
            Scope::Samples => {
                items.push((format!("Visible data as {}…", f.name()), kind, true));
                items.push((format!("All data as {}…", f.name()), kind, false));
            }
            Scope::Session => items.push((format!("{}…", f.title()), kind, false)),
        }
    }
    items
}
