//! zescope's window: the eframe/egui front end. One window with the source panel on the left,
//! plot panes in the middle, the status bar at the bottom.
//!
//! # Contract
//!
//! [`ZescopeApp::ui`] draws a whole frame into any `Ui` from plain state ([`state`], the view
//! model in `zescope_model::view`, [`panes`], the [`Store`]) and talks to the sampler only
//! through a [`link::SamplerLink`], so tests drive it with egui_kittest, without a window;
//! [`gui::run`] puts it in an eframe window, with what the binary hands it ([`gui::Launch`]: how
//! to start the sampler, the signals that end the process).
//!
//! # Where a value goes
//!
//! Sampler events → `drain.rs` (through `zescope_model::view::Ingest`) → store → `plots.rs`
//! (envelopes via [`envelope_plot`]) → egui_plot.
//!
//! # Floors
//!
//! It stands on `zescope-model`, `zescope-store`, `zescope-sampler`, `zescope-ze` and
//! `zescope-doctor` (the Diagnostics window); only the binary uses it. What the commands share
//! with the window lives in the model.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub(crate) mod actions;
pub(crate) mod axes;
pub mod banner;
pub mod compare;
pub mod dialogs;
pub(crate) mod drain;
pub(crate) mod empty_pane;
pub mod envelope_plot;
pub mod files;
pub mod gui;
pub(crate) mod legend;
pub mod link;
pub mod logwatch;
pub(crate) mod marker_paint;
pub(crate) mod menu;
pub mod opening;
pub mod overview;
pub(crate) mod pane_row;
pub mod panes;
pub mod path_prompt;
pub(crate) mod plots;
pub(crate) mod readout;
pub(crate) mod reconcile;
pub(crate) mod repaint;
pub mod session;
pub mod settings;
pub(crate) mod settings_file;
pub(crate) mod sources;
pub mod state;
pub(crate) mod status;
pub(crate) mod throttle;
pub(crate) mod toolbar;
pub mod triggers;
pub mod unsaved;
pub mod views;
pub mod windows;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use egui::{Key, KeyboardShortcut, Modifiers, RichText, Ui};

use zescope_model::view::{TimeView, data_x};
use zescope_sampler::Command;
use zescope_store::Store;

use link::SamplerLink;
use panes::Panes;
use settings::{Settings, Theme, ZOOM_RANGE};
use state::AppState;
use zescope_model::view::TimeAxis;

/// How long quitting waits for the sampler's teardown.
pub const SHUTDOWN_WAIT: Duration = Duration::from_secs(3);

/// The source panel's largest share of the window's width, and its least width.
const MAX_SIDE: f32 = 0.35;
const MIN_SIDE: f32 = 180.0;

/// The whole window's state and its frame ([`ZescopeApp::ui`]): built once by `gui::run` (or by
/// a test with a scripted [`SamplerLink`]), then driven one frame at a time.
pub struct ZescopeApp {
    link: Box<dyn SamplerLink>,
    /// Devices, selection, the run's series and the banners: what the sampler reported.
    pub state: AppState,
    /// Every sample of the current run or opened recording.
    pub store: Store,
    /// The time axis shared by all panes: live, paused or zoomed, and the window length.
    pub view: TimeView,
    /// Which series each pane plots, plus the panes' plot caches.
    pub panes: Panes,
    pub(crate) theme: Theme,
    /// The source panel's search text.
    pub search: String,
    focus_search: bool,
    /// A text field (this one) lost its focus to Enter, and nothing was clicked since, and the
    /// field is still shown (`shortcuts`).
    typed_enter: Option<egui::Id>,
    /// The window's title as last set: "zescope", or the file shown and "zescope".
    title: String,
    /// The source panel's search index and open groups.
    sources: sources::SourceView,
    hover_x: Option<f64>,
    /// Set once quitting started; `Some(Err)` if the teardown overran.
    pub quit: Option<Result<(), Duration>>,
    first_frame: bool,
    /// Start sampling the default selection as soon as the devices are known (once).
    pub auto_start: bool,
    /// Set while the UI wants a repaint for every delivered batch (live view); the sampler's
    /// waker reads it. `None`: no waker, the UI polls.
    wake_on_data: Option<Arc<AtomicBool>>,
    /// Sessions and writes: dialogs, current file, background save, autosave, recovery.
    pub files: files::Files,
    /// The question before unsaved data is discarded.
    pub unsaved: unsaved::Unsaved,
    /// View → Frame rate: the most frames a second a live view paints.
    pub frame_cap: repaint::FrameCap,
    /// The whole process's CPU use, for the status bar.
    pub(crate) cpu: repaint::ProcessCpu,
    /// The plots' width in physical pixels last frame (how long a pixel of time is).
    plot_px: f32,
    /// Where each pane's plot area was drawn last frame, in pane order (`None`: the pane had
    /// nothing to plot and showed where to drop a metric).
    pub plot_frames: Vec<(u64, Option<egui::Rect>)>,
    /// The central panel's rect this frame (under the menu bar, right of the source panel): where
    /// a floating window opens the first time (`windows::show`).
    pub central: Option<egui::Rect>,
    /// The overview strip of the whole history above the panes (View → Overview strip).
    pub overview: overview::Overview,
    /// The A/B cursors on the shared time axis.
    pub cursors: zescope_model::view::cursors::Cursors,
    /// The floating windows (`windows/`).
    pub windows: windows::Windows,
    /// A second session shown beside the data (File → Compare with…).
    pub comparison: Option<compare::Comparison>,
    /// View files: one waiting for its series, the name to save under (File → Views).
    pub views: views::Views,
}

impl ZescopeApp {
    /// An app that talks to the sampler through `link`, starting from remembered `settings`
    /// (theme, window length, selection, pane layout, recent files) and filing samples into
    /// `store`. Nothing is sent from here; the first frame that knows the devices starts
    /// sampling the selection, unless [`ZescopeApp::auto_start`] is cleared or a crashed
    /// session's checkpoint is offered first.
    pub fn new(link: Box<dyn SamplerLink>, settings: Settings, store: Store) -> ZescopeApp {
        let mut state = AppState::default();
        state.selection = settings.selection;
        let mut view = TimeView::default();
        view.window = settings.window;
        let settings_layout = settings.layout;
        ZescopeApp {
            link,
            state,
            store,
            view,
            panes: Panes::with_layout(settings_layout),
            theme: settings.theme,
            search: String::new(),
            focus_search: false,
            typed_enter: None,
            title: "zescope".to_owned(),
            sources: sources::SourceView::default(),
            hover_x: None,
            quit: None,
            first_frame: true,
            auto_start: true,
            wake_on_data: None,
            files: files::Files::default().with_recent(settings.recent).with_marker_limits(settings.markers),
            unsaved: unsaved::Unsaved::default(),
            frame_cap: settings.frame_cap,
            cpu: repaint::ProcessCpu::default(),
            plot_px: 1000.0,
            plot_frames: Vec::new(),
            central: None,
            overview: overview::Overview::new(settings.overview == settings::Shown::Yes),
            cursors: zescope_model::view::cursors::Cursors::default(),
            windows: windows::Windows::default(),
            comparison: None,
            views: views::Views::default(),
        }
    }

    /// Hands the app the flag its sampler's waker checks before waking the UI (see
    /// `sampler::Waker`): then a live view that shows nothing yet paints as its first data
    /// arrives instead of polling.
    pub(crate) fn use_wake_flag(&mut self, flag: Arc<AtomicBool>) {
        self.wake_on_data = Some(flag);
    }

    /// Opens (`true`) or closes every metric group of every device in the source panel, as its
    /// expanders do one by one.
    pub fn open_all_groups(&mut self, open: bool) {
        if let Some(inv) = &self.state.inventory {
            self.sources.set_all_open(inv, open);
        }
    }

    /// Rows of the source panel's tree in the last frame (only those in view are laid out).
    pub fn source_rows(&self) -> usize {
        self.sources.rows()
    }

    /// What to remember for the next launch (eframe's `save` stores it).
    pub(crate) fn settings(&self) -> Settings {
        Settings {
            theme: self.theme,
            window: self.view.window,
            selection: self.state.selection.clone(),
            layout: self.panes.layout.clone(),
            recent: self.files.recent.clone(),
            frame_cap: self.frame_cap,
            overview: if self.overview.shown { settings::Shown::Yes } else { settings::Shown::No },
            markers: self.files.marker_limits,
        }
    }

    /// The source the user asked for (what diagnostics should check).
    pub(crate) fn source(&self) -> zescope_ze::Source {
        self.state.inventory.as_ref().and_then(|i| i.source.as_ref()).map_or(zescope_ze::Source::Auto, |s| s.requested)
    }

    /// Sends `c` to the sampler as is: no question about unsaved data (the source panel's
    /// Start asks first when it would replace an opened recording that no file holds).
    pub fn send(&self, c: Command) {
        self.link.send(c);
    }

    /// Sends shutdown and waits (bounded) for the sampler's teardown. Idempotent.
    pub(crate) fn shutdown(&mut self) -> Result<(), Duration> {
        if let Some(r) = self.quit {
            return r;
        }
        let r = self.link.shutdown(SHUTDOWN_WAIT);
        if let Err(waited) = r {
            eprintln!("zescope: the sampler did not finish its teardown within {waited:?}; exiting anyway");
        }
        self.quit = Some(r);
        r
    }

    /// Quit now, without asking: the sampler's teardown first, then any save in flight
    /// finishes; the autosave checkpoint is dropped (a clean exit needs no recovery); then the
    /// window closes (the next frame asks for it). Ctrl+Q and the menu ask first when unsaved
    /// data would be lost (`unsaved.rs`).
    pub(crate) fn quit(&mut self) {
        self.files.opening = None;
        let _ = self.shutdown();
        self.finish_files();
    }

    /// What quitting owes the files (also called from eframe's `on_exit`).
    pub(crate) fn finish_files(&mut self) {
        if let Some(e) = self.files.finish_save() {
            eprintln!("zescope: {e}");
        }
        // An export being written is finished, not left half written.
        for job in self.files.writes.drain(..) {
            if let Err(e) = job.wait() {
                eprintln!("zescope: export failed: {e}");
            }
        }
        self.files.discard_autosave();
    }

    /// One frame.
    pub fn ui(&mut self, ui: &mut Ui) {
        if self.first_frame {
            self.first_frame = false;
            ui.ctx().set_theme(self.theme.preference());
            let z = ui.ctx().zoom_factor();
            if !ZOOM_RANGE.contains(&z) {
                ui.ctx().set_zoom_factor(1.0);
            }
        }
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
            status::show(ui, activity, cpu, &self.state, &self.store, &self.files)
        });
        // The source panel never takes more than MAX_SIDE of the window, whatever width was
        // remembered from a wider window: the panes keep the rest.
        let side_max = (ui.available_width() * MAX_SIDE).max(MIN_SIDE);
        egui::Panel::left("sources")
            .frame(bare(egui::Frame::side_top_panel(&style)))
            .default_size(320.0_f32.min(side_max))
            .size_range(MIN_SIDE..=side_max)
            .show(ui, |ui| {
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
            });
        let central = egui::CentralPanel::default().frame(bare(egui::Frame::central_panel(&style))).show(ui, |ui| {
            if banner::show(ui, &mut self.state.banners) {
                let source = self.source();
                self.windows.diagnostics.open(source);
            }
            self.toolbar(ui);
            if self.panes.layout.panes.is_empty() && self.files.recording.is_none() {
                ui.centered_and_justified(|ui| {
                    ui.label(RichText::new("Pick a device and a metric group on the left and press Start.\nPanes appear with the first samples; drag metrics onto them to rearrange.").weak());
                });
            } else {
                if let Some(c) = &mut self.comparison
                    && !c.bar(ui, self.files.markers.marks())
                {
                    self.comparison = None;
                }
                if self.overview.shown {
                    // Over the plots' time axis as drawn last frame.
                    let axis = self.plot_frames.iter().find_map(|(_, r)| r.map(|r| (r.left(), r.right())));
                    self.overview.show(ui, &mut self.panes, &self.state, &self.store, &mut self.view, axis);
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
                        markers: self.files.markers.marks(),
                        firings: &if self.state.triggers.on_panes { self.state.triggers.bands() } else { Vec::new() },
                        cursors: &mut self.cursors,
                        compare: self.comparison.as_mut(),
                    },
                );
                self.hover_x = out.hover_x;
                self.plot_frames = out.frames;
                if let Some(expr) = out.trigger {
                    self.state.triggers.text = expr;
                    self.state.triggers.error = None;
                    self.windows.triggers.open = true;
                }
                if let Some(w) = out.plot_width {
                    self.plot_px = w * ui.ctx().pixels_per_point();
                }
                if let Some((kind, pane)) = out.write {
                    let a = self.files.ask_write(kind, Some(pane), true);
                    self.perform(a);
                }
            }
        });
        self.central = Some(central.response.rect);
        self.windows(ui);
        self.schedule_repaint(ui, drained);
    }

    /// The colour the window is cleared to before each frame: the panels' own, which they then
    /// do not paint (see [`bare`]).
    pub fn clear_color(visuals: &egui::Visuals) -> [f32; 4] {
        visuals.panel_fill.to_normalized_gamma_f32()
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

    /// The window's title as last set.
    pub fn title(&self) -> &str {
        &self.title
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
    fn schedule_repaint(&self, ui: &Ui, drained: drain::Drained) {
        let running = self.state.ingest.run.is_some();
        let live = running && self.view.is_live();
        let data = data_x(&self.store);
        // A live view's frames are timed by its pixels, not by every batch; only a live view
        // with nothing to show yet is woken by the sampler's first data.
        let wait_for_data = live && data.is_none() && self.wake_on_data.is_some();
        if let Some(flag) = &self.wake_on_data {
            flag.store(wait_for_data, Ordering::Relaxed);
        }
        if log::log_enabled!(log::Level::Trace) {
            // RUST_LOG=zescope_window=trace: why each frame was painted (to find repaint loops).
            let causes = ui.ctx().repaint_causes();
            log::trace!("frame {} more={} causes={causes:?}", ui.ctx().cumulative_pass_nr(), drained.more);
        }
        // A save or export in flight: its progress, and its end, shown within a tenth of a second.
        if self.files.saving().is_some() || self.files.writing().is_some() {
            ui.ctx().request_repaint_after(repaint::FILE_PROGRESS);
        }
        if drained.more || self.opening() {
            ui.ctx().request_repaint();
        } else if live && !wait_for_data {
            let span = self.view.range(data).map_or(0.0, |(a, b)| b - a);
            ui.ctx().request_repaint_after(repaint::live_period(span, self.plot_px, self.frame_cap));
        } else if running {
            ui.ctx().request_repaint_after(repaint::FROZEN);
        }
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

    /// The phase table's ranges: the visible range, the cursors' span, then each marked range.
    pub fn phase_ranges(&self) -> Vec<zescope_model::view::phases::PhaseRange> {
        use zescope_model::view::phases::PhaseRange;
        let mut out = Vec::new();
        if let Some((a, b)) = self.view.range(data_x(&self.store)) {
            out.push(PhaseRange::new("visible", TimeAxis::of(&self.store).ns(a), TimeAxis::of(&self.store).ns(b)));
        }
        out.extend(self.cursors.span());
        out.extend(self.files.markers.closed_ranges().map(|(n, a, b)| PhaseRange::new(n, a, b)));
        out
    }

    /// The workload's markers that arrived (a bounded number per frame from the markers socket;
    /// `remote`: a remote run's); dropped while an opened recording is shown, whose time axis is
    /// another run's.
    fn take_markers(&mut self, remote: Vec<zescope_model::markers::Received>) {
        let local = self.files.markers_in.as_ref().map(|l| l.drain(10_000)).unwrap_or_default();
        let live = self.files.recording.is_none();
        for m in remote.into_iter().chain(local) {
            if live {
                self.files.markers.apply(m.kind, m.t_ns, &m.name);
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
        let markers = zescope_model::session::markers_to_file(&self.files.markers);
        let ended = self.state.ingest.run.is_none();
        let ui = zescope_model::session::Capture {
            history: &self.state.history,
            layout: &self.panes.layout,
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

    /// M: a marker at the hovered time, else at the newest sample; saved with the session.
    pub(crate) fn add_marker(&mut self) {
        let t = match self.hover_x {
            Some(x) => Some(TimeAxis::of(&self.store).ns(x)),
            None => self.store.total_time_range().map(|(_, last)| last),
        };
        if let Some(t_ns) = t {
            let label = format!("M{}", self.files.markers.len() + 1);
            self.files.markers.instant(t_ns, &label);
        }
    }
}

/// A panel frame that leaves its background to the clear colour ([`ZescopeApp::clear_color`]): the
/// four panels cover the whole window, so painting their fill shades every pixel once more per
/// frame, which under a software renderer is a good part of a frame's cost.
fn bare(frame: egui::Frame) -> egui::Frame {
    frame.fill(egui::Color32::TRANSPARENT)
}
