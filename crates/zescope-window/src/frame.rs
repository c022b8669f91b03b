//! One frame of the window ([`ZescopeApp::ui`]) and what it is drawn from, in the order drawn:
//! what came in since the last frame (the sampler's events through `drain.rs`, the workload's
//! markers, the triggers' firings, file jobs), the keyboard shortcuts, the menu bar (`menu.rs`),
//! the status bar (`status.rs`), the source panel (`sources/`), the central panel — banners, the
//! toolbar, the comparison's bar, the overview strip and the panes (`plots/`) — then the floating
//! windows in their one loop (`windows/`), the dialogs over everything, and when to paint next
//! (`repaint.rs`).

use egui::{Key, KeyboardShortcut, Modifiers, RichText, Ui};

use zescope_model::view::{Activity, TimeAxis, ViewLength, data_x};
use zescope_sampler::Command;

use super::files::PromptAnswer;
use super::settings::ZOOM_RANGE;
use super::{
    MAX_SIDE, MIN_SIDE, ZescopeApp, banner, bare, dialogs, drain, plots, repaint, sources, status, unsaved, windows,
};

impl ZescopeApp {
    /// One frame: what came in since the last (samples, markers, firings, file jobs), the
    /// keyboard, then the menu bar, the status bar, the source panel and the panes, the floating
    /// windows over them, the dialogs over everything, and when to paint next.
    pub fn ui(&mut self, ui: &mut Ui) {
        let started = zescope_sampler::monotonic_ns();
        if self.first_frame {
            self.first_frame = false;
            ui.ctx().set_theme(self.theme.preference());
            let z = ui.ctx().zoom_factor();
            if !ZOOM_RANGE.contains(&z) {
                ui.ctx().set_zoom_factor(1.0);
            }
        }
        let drained = self.take_in();
        self.shortcuts(ui);
        self.set_title(ui);
        self.close_requested(ui);
        if self.quit.is_some() {
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        self.file_shortcuts(ui);
        let style = ui.style().clone();
        egui::Panel::top("menu").frame(bare(egui::Frame::side_top_panel(&style))).show(ui, |ui| self.menu(ui));
        // "saved run.ron" holds until something is recorded after the save.
        if self.files.note.as_deref().is_some_and(|n| n.starts_with("saved ")) && self.has_unsaved() {
            self.files.note = None;
        }
        egui::Panel::bottom("status").frame(bare(egui::Frame::side_top_panel(&style))).show(ui, |ui| {
            let activity = self.activity();
            self.cpu.update();
            // Shown while sampling, when the window paints at least once a second: a figure left
            // on a window that paints only on input would be an old second's.
            let cpu = self.state.ingest.run.as_ref().and(self.cpu.percent);
            let markers = (&self.markers, self.markers_in.as_ref());
            status::show(ui, activity, cpu, &self.state, &self.store, &self.files, markers)
        });
        // The source panel never takes more than MAX_SIDE of the window, whatever width was
        // remembered from a wider window: the panes keep the rest.
        let side_max = (ui.available_width() * MAX_SIDE).max(MIN_SIDE);
        egui::Panel::left("sources")
            .frame(bare(egui::Frame::side_top_panel(&style)))
            .default_size(320.0_f32.min(side_max))
            .size_range(MIN_SIDE..=side_max)
            .show(ui, |ui| self.source_panel(ui));
        let central =
            egui::CentralPanel::default().frame(bare(egui::Frame::central_panel(&style))).show(ui, |ui| self.panes(ui));
        self.central = Some(central.response.rect);
        self.floating_windows(ui.ctx());
        self.dialogs(ui.ctx());
        self.schedule_repaint(ui, drained, started);
    }

    /// What came in since the last frame: the sampler's events (into the store, through the
    /// model's ingest), the workload's markers, the triggers' firings, a view file waiting for
    /// its series, the file jobs; and the first run started once the devices are known.
    fn take_in(&mut self) -> drain::Drained {
        if std::mem::take(&mut self.state.derived.requested) {
            let state = &mut self.state;
            let keys = if self.files.opening.is_some() {
                state.derived.said = Some("the session is still opening: add it once it has opened".into());
                Vec::new()
            } else {
                state.derived.add(&mut state.ingest, &mut self.store, &mut state.history)
            };
            self.panes.place_new(&keys, &self.state);
        }
        // A derived series computed over the recording shown: a slice per frame.
        self.state.derived.step_backfills(&mut self.store, super::derived::BACKFILL_BUDGET);
        let mut remote_markers = Vec::new();
        let drained = drain::drain(
            &*self.link,
            self.activity().takes_samples(),
            &mut self.state,
            &mut self.store,
            &mut self.view,
            &mut self.panes,
            &mut remote_markers,
        );
        self.take_markers(remote_markers);
        self.triggers_after_drain();
        self.apply_pending_view();
        self.file_housekeeping();
        if self.auto_start && self.state.inventory.is_some() && self.files.recover.is_none() {
            self.auto_start = false;
            if self.state.ingest.run.is_none()
                && let Ok(cfg) = self.state.run_config()
            {
                self.link.send(Command::Start(cfg));
            }
        }
        drained
    }

    /// The source panel: devices, groups and metrics; Start and Stop.
    fn source_panel(&mut self, ui: &mut Ui) {
        // Text that does not fit is cut short (its hover shows it whole) rather than
        // widening the panel, which would move the panes and the toolbar under the pointer.
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
        let mut panel = sources::SourcePanel {
            state: &mut self.state,
            search: &mut self.search,
            focus_search: self.focus_search,
            view: &mut self.sources,
        };
        let actions = panel.ui(ui);
        self.focus_search = false;
        for sources::SourceAction::Send(c) in actions {
            if matches!(c, Command::Start(_)) {
                self.guarded(unsaved::Pending::Start(c));
            } else {
                self.link.send(c);
            }
        }
    }

    /// What the central panel says while the window watches a server whose run has not come
    /// (connecting, or the link down before it): its panes, the user's own or those remembered
    /// for the server, showed "No data … pick them on the left and start a run", advice a
    /// remote source cannot take. `None` once a run is shown, or for a local source.
    fn waiting_for_server(&self) -> Option<String> {
        let source = self.state.inventory.as_ref()?.source.as_ref()?;
        if !status::is_remote(source) || !self.state.ingest.order.is_empty() || self.files.recording.is_some() {
            return None;
        }
        let said = source.description.trim_start_matches("REMOTE ");
        Some(if status::is_disconnected(source) {
            format!("Not watching: {said}.\nFile → Connect… watches a server again.")
        } else {
            format!(
                "Watching a zescope serve: {said}, no run received yet.\nIt shows the server's run as it comes, \
                 reconnecting by itself; File → Connect… watches another server."
            )
        })
    }

    /// The central panel: the banners, the toolbar, then the panes (with the comparison's bar and
    /// the overview strip above them), or what to do first when there is nothing to plot.
    fn panes(&mut self, ui: &mut Ui) {
        let asked = banner::show(ui, &mut self.state.banners);
        if asked.diagnostics {
            let source = self.source();
            self.windows.diagnostics.open(source);
        }
        if !asked.sample.is_empty() {
            self.sample_groups(&asked.sample);
        }
        self.toolbar(ui);
        if let Some(text) = self.waiting_for_server() {
            ui.centered_and_justified(|ui| {
                ui.label(RichText::new(text).weak());
            });
            return;
        }
        if self.panes.arrangement.panes.is_empty() && self.files.recording.is_none() {
            // Before any series, what to do first; after (a view that named none of them, or
            // every pane closed), how to show them again: samples keep coming either way.
            let text = if self.state.ingest.order.is_empty() {
                "Pick a device and a metric group on the left and press Start.\nPanes appear with the first samples; drag metrics onto them to rearrange."
            } else {
                "No pane shows the series sampled: the view laid out names none of them, or every pane was closed.\nPress + Pane and drag a metric onto it from the source panel, or tick the groups a view names."
            };
            ui.centered_and_justified(|ui| {
                ui.label(RichText::new(text).weak());
            });
            return;
        }
        if let Some(c) = &mut self.comparison
            && !c.bar(ui, self.markers.marks(), &self.state.ingest.series)
        {
            self.comparison = None;
        }
        // The plots' time axis as drawn last frame: the strip is drawn over it.
        let axis_of = |frames: &[(u64, Option<egui::Rect>)]| frames.iter().find_map(|(_, r)| r.map(|r| r.x_range()));
        let axis = axis_of(&self.plot_frames);
        if self.overview.shown {
            self.overview.show(
                ui,
                &mut self.panes,
                &self.state,
                &self.store,
                &mut self.view,
                axis.map(|r| (r.min, r.max)),
            );
            ui.add_space(4.0);
        }
        let out = plots::show(
            ui,
            &mut self.panes,
            &self.store,
            &self.state,
            &mut self.view,
            self.hover_x,
            plots::Overlays {
                markers: self.markers.marks(),
                firings: &if self.state.triggers.on_panes { self.state.triggers.bands() } else { Vec::new() },
                cursors: &mut self.cursors,
                compare: self.comparison.as_mut(),
            },
        );
        self.hover_x = out.hover_x;
        self.plot_frames = out.frames;
        // The axis moved (the window resized, a legend or a value label grew): the strip, drawn
        // over where it was, is drawn again over where it is, or it stays short until the next
        // input (a recording shown repaints on input only).
        let moved = |a: egui::Rangef, b: egui::Rangef| (a.min - b.min).abs() > 0.5 || (a.max - b.max).abs() > 0.5;
        if self.overview.shown
            && let (Some(before), Some(now)) = (axis, axis_of(&self.plot_frames))
            && moved(before, now)
        {
            ui.ctx().request_repaint();
        }
        if let Some(def) = out.derive {
            self.state.derived.text = def;
            self.state.derived.said = None;
            self.windows.derived.open = true;
        }
        if let Some(expr) = out.trigger {
            self.state.triggers.text = expr;
            self.state.triggers.error = None;
            self.windows.triggers.open = true;
        }
        if let Some(w) = out.plot_width {
            self.plot_px = w * ui.ctx().pixels_per_point();
        }
        if let Some(i) = out.rename_marker {
            self.marker_name = super::marker_name::MarkerName::of(&self.markers, i);
        }
        if let Some((kind, pane)) = out.write {
            let a = self.files.ask_write(kind, Some(pane), true);
            self.perform(a);
        }
    }

    /// The floating windows that are open (`windows/`, one loop: [`windows::show_all`]), over
    /// the central panel.
    fn floating_windows(&mut self, ctx: &egui::Context) {
        let phase_ranges = if self.windows.phases.open { self.phase_ranges() } else { Vec::new() };
        let source = self.source();
        let mut shared = windows::Shared {
            store: &self.store,
            state: &mut self.state,
            view: &mut self.view,
            cursors: &mut self.cursors,
            markers: &self.markers,
            showing_file: self.files.recording.is_some(),
            source,
            comparison: self.comparison.as_ref(),
            phase_ranges,
        };
        let area = self.central.unwrap_or_else(|| ctx.content_rect());
        windows::show_all(&mut self.windows, ctx, &mut shared, area);
    }

    /// The dialogs waiting for an answer, over everything: the offer to recover a crashed
    /// session, the path prompt, File → Connect…, the unsaved-data question.
    fn dialogs(&mut self, ctx: &egui::Context) {
        self.recovery_window(ctx);
        match self.files.show_prompt(ctx) {
            PromptAnswer::Chosen(a) => self.perform(Some(a)),
            // A save chosen in the unsaved-data question was cancelled: so is what waited for it.
            PromptAnswer::Cancelled => self.unsaved.after_save = None,
            PromptAnswer::None | PromptAnswer::Pending => {}
        }
        self.connect_dialog(ctx);
        self.unsaved_modal(ctx);
    }

    /// The toolbar. Its controls keep their places whatever the state: the badge and the one
    /// button the state offers (Pause, Follow live, Info) have slots as wide as their widest
    /// text, Fit is always there (greyed while live), and what varies in length — the file
    /// shown, the count of new samples — comes last.
    fn toolbar(&mut self, ui: &mut Ui) {
        let activity = self.activity();
        ui.horizontal_wrapped(|ui| {
            let height = ui.spacing().interact_size.y;
            let widest = |ui: &Ui, texts: &[&str], strong: bool| {
                let font = egui::TextStyle::Button.resolve(ui.style());
                let w = texts
                    .iter()
                    .map(|t| {
                        let t = if strong { format!(" {t} ") } else { (*t).to_owned() };
                        ui.fonts_mut(|f| f.layout_no_wrap(t, font.clone(), egui::Color32::WHITE).size().x)
                    })
                    .fold(0.0, f32::max);
                w + 2.0 * ui.spacing().button_padding.x
            };
            let badges = ["LIVE", "PAUSED", "ZOOMED", "STOPPED", "FILE"];
            let badge_w = widest(ui, &badges, true);
            let badge = RichText::new(format!(" {} ", activity.badge())).strong();
            let (badge, hover) = match activity {
                Activity::File => (
                    badge.color(egui::Color32::BLACK).background_color(egui::Color32::from_rgb(150, 170, 240)),
                    "This is a saved session, not live data. Start begins a new live run.",
                ),
                Activity::Live => (badge.color(egui::Color32::from_rgb(60, 170, 60)), "sampling, the view follows"),
                Activity::Paused { .. } => {
                    (badge.color(ui.visuals().warn_fg_color), "sampling goes on; the view is frozen")
                }
                Activity::Stopped => {
                    (badge.color(ui.visuals().weak_text_color()), "not sampling: Start on the left begins a run")
                }
            };
            ui.add_sized([badge_w, height], egui::Label::new(badge)).on_hover_text(hover);
            let button_w = widest(ui, &["Pause", "Follow live", "Info"], false);
            let (text, hover, enabled) = match activity {
                Activity::File => ("Info", "when, where and what was recorded", true),
                Activity::Live => ("Pause", "freeze the view; sampling continues (Space)", true),
                Activity::Paused { .. } => ("Follow live", "back to live data (End)", true),
                Activity::Stopped => ("Pause", "nothing is sampled", false),
            };
            let button = ui.add_enabled(enabled, egui::Button::new(text).min_size(egui::vec2(button_w, height)));
            if button.on_hover_text(hover).clicked() {
                match activity {
                    Activity::File => self.windows.info.open = true,
                    Activity::Live => self.view.toggle_pause(data_x(&self.store)),
                    Activity::Paused { .. } => self.view.follow(),
                    Activity::Stopped => {}
                }
            }
            let fit = ui.add_enabled(!activity.can_pause(), egui::Button::new("Fit"));
            if fit.on_hover_text("show all the data (double-click a plot does the same)").clicked() {
                self.view.fit(data_x(&self.store));
            }
            ui.separator();
            ui.label("Window:");
            for w in ViewLength::ALL {
                if ui.selectable_label(self.view.window == w && self.view.is_live(), w.label()).clicked() {
                    self.view.set_window(w);
                }
            }
            ui.separator();
            if ui.button("+ Pane").on_hover_text("add an empty plot pane").clicked() {
                self.panes.add_pane();
            }
            if ui
                .button("+ Marker")
                .on_hover_text("mark the newest sample and name it (M marks the hovered time)")
                .clicked()
            {
                self.add_marker();
            }
            if let Some(naming) = self.marker_name.as_mut()
                && naming.ui(ui, &mut self.markers)
            {
                self.marker_name = None;
            }
            // Last: what grows and shrinks moves nothing else.
            if activity == Activity::File {
                let path = self.files.recording.clone().unwrap_or_default();
                ui.label(dialogs::file_name(&path)).on_hover_text(path.display().to_string());
            }
            if matches!(activity, Activity::Paused { .. }) && self.view.new_since_frozen > 0 {
                ui.label(format!("{} new samples", self.view.new_since_frozen));
            }
        });
    }

    fn shortcuts(&mut self, ui: &mut Ui) {
        let typing = ui.ctx().egui_wants_keyboard_input();
        // Enter in a text field ends the field's focus; what is typed next is meant for a field
        // still, not for the single-letter shortcuts, until the pointer is pressed somewhere or
        // Escape is, or the field is gone (a prompt that closed on its Enter: nothing is left
        // to type into).
        let (enter, escape, pressed) =
            ui.input(|i| (i.key_pressed(Key::Enter), i.key_pressed(Key::Escape), i.pointer.any_pressed()));
        let focused = ui.ctx().memory(|m| m.focused());
        if typing && enter && focused.is_some() {
            self.typed_enter = focused;
        } else if pressed || escape && !typing {
            self.typed_enter = None;
        }
        // Widgets of the last frame: a field not drawn there was closed.
        if self.typed_enter.is_some_and(|id| ui.ctx().read_response(id).is_none()) {
            self.typed_enter = None;
        }
        let typing = typing || self.typed_enter.is_some();
        let (quit, find) = ui.input_mut(|i| {
            (
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Q)),
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::F)),
            )
        });
        if quit {
            self.guarded(unsaved::Pending::Quit);
            return;
        }
        if find {
            self.focus_search = true;
        }
        if typing {
            return;
        }
        let (space, end, mark, a, b) = ui.input_mut(|i| {
            (
                i.consume_key(Modifiers::NONE, Key::Space),
                i.consume_key(Modifiers::NONE, Key::End),
                i.consume_key(Modifiers::NONE, Key::M),
                i.consume_key(Modifiers::NONE, Key::A),
                i.consume_key(Modifiers::NONE, Key::B),
            )
        });
        if mark {
            self.add_marker();
        }
        for (pressed, w) in [(a, zescope_model::view::cursors::Which::A), (b, zescope_model::view::cursors::Which::B)] {
            if pressed && let Some(x) = self.hover_x {
                self.cursors.set(w, TimeAxis::of(&self.store).ns(x));
            }
        }
        let activity = self.activity();
        if space && (activity.can_pause() || activity.can_follow()) {
            self.view.toggle_pause(data_x(&self.store));
        }
        if end && activity.can_follow() {
            self.view.follow();
        }
    }

    /// The window's title names the file shown ("run.ron — zescope"), with a "•" while what is
    /// shown holds unsaved changes to it.
    fn set_title(&mut self, ui: &Ui) {
        let file = self.files.current.as_deref().or(self.files.recording.as_deref());
        let title = match file {
            Some(p) => {
                let changed = if self.has_unsaved() { "• " } else { "" };
                format!("{changed}{} — zescope", dialogs::file_name(p))
            }
            None => "zescope".to_owned(),
        };
        if title != self.title {
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }

    /// The window's close button: asks first when unsaved data would be lost.
    fn close_requested(&mut self, ui: &Ui) {
        if self.quit.is_none() && ui.input(|i| i.viewport().close_requested()) && self.has_unsaved() {
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.unsaved.asking = Some(unsaved::Pending::Quit);
        }
    }

    /// When to paint next (`repaint.rs`): a live view when its axis has moved a pixel, within
    /// the frame-rate cap; a frozen one with a run going on once a second; otherwise on input.
    /// `started`: when this frame began (CLOCK_MONOTONIC ns), which the next one counts from.
    fn schedule_repaint(&self, ui: &Ui, drained: drain::Drained, started: i64) {
        let running = self.state.ingest.run.is_some();
        let live = running && self.view.is_live();
        let data = data_x(&self.store);
        // A live view's frames are timed by its pixels, and meet the data's deliveries when
        // the window has a waker (`wake.rs`); a live view with nothing to show yet is woken by
        // the sampler's first data.
        let wait_for_data = live && data.is_none() && self.wake.is_some();
        let mut frame_at = None;
        if log::log_enabled!(log::Level::Trace) {
            // RUST_LOG=zescope_window=trace: why each frame was painted (to find repaint loops).
            let causes = ui.ctx().repaint_causes();
            log::trace!("frame {} more={} causes={causes:?}", ui.ctx().cumulative_pass_nr(), drained.more);
        }
        // A save or export in flight: its progress, and its end, shown within a tenth of a second.
        if self.files.saving().is_some() || self.files.writing().is_some() {
            ui.ctx().request_repaint_after(repaint::FILE_PROGRESS);
        }
        if drained.more || self.opening() || self.state.derived.computing() {
            ui.ctx().request_repaint();
        } else if live && !wait_for_data {
            let span = self.view.range(data).map_or(0.0, |(a, b)| b - a);
            let period = repaint::live_period(span, self.plot_px, self.frame_cap);
            if let Some(w) = &self.wake {
                let early = period.mul_f64(1.0 - repaint::MEET_DATA).as_nanos() as i64;
                frame_at = Some(w.frame_base(started) + early);
                // Data came with this frame: the next waits a little for the next delivery.
                // None came (a slow run): the axis moves at the period, as without a waker.
                let slack = if drained.samples > 0 { repaint::DATA_SLACK } else { std::time::Duration::ZERO };
                ui.ctx().request_repaint_after(period + slack);
            } else {
                ui.ctx().request_repaint_after(period);
            }
        } else if running {
            ui.ctx().request_repaint_after(repaint::FROZEN);
        }
        if let Some(w) = &self.wake {
            w.set(wait_for_data, frame_at);
        }
    }

    /// The workload's markers that arrived (a bounded number per frame from the markers socket;
    /// `remote`: a remote run's); dropped while an opened recording is shown, whose time axis is
    /// another run's.
    fn take_markers(&mut self, remote: Vec<zescope_model::markers::Received>) {
        let local = self.markers_in.as_ref().map(|l| l.drain(10_000)).unwrap_or_default();
        let live = self.files.recording.is_none();
        for m in remote.into_iter().chain(local) {
            if live {
                self.markers.apply(m.kind, m.t_ns, &m.name);
                if m.kind != zescope_model::markers::Kind::End {
                    self.state.triggers.marker(&m.name, m.t_ns);
                }
            }
        }
    }

    /// The frame's firings: pause on the newest (with "pause on trigger"), keep the windows whose
    /// time after has passed (with "keep"); a window that cannot be kept is a banner.
    fn triggers_after_drain(&mut self) {
        self.state.triggers.pause(&mut self.view, &self.store);
        if !self.state.triggers.waiting() {
            return;
        }
        let markers = zescope_model::session::markers_to_file(&self.markers);
        let ended = self.state.ingest.run.is_none();
        let ui = zescope_model::session::Capture {
            history: &self.state.history,
            arrangement: &self.panes.arrangement,
            view: &self.view,
            markers: &markers,
        };
        for e in self.state.triggers.keep(&self.store, &ui, ended) {
            self.state.push_error(banner::UiError::new(
                banner::UiErrorKind::Save,
                e,
                "check the folder in the Triggers window",
            ));
        }
    }
}
