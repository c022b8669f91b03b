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
//! Sampler events → `drain.rs` (through `zescope_model::view::Ingest`) → store → `plots/`
//! (envelopes via [`envelope_plot`]) → egui_plot; one frame is `frame.rs`, in the order drawn.
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
pub mod connect;
pub mod derived;
pub mod dialogs;
pub(crate) mod drain;
pub(crate) mod empty_pane;
pub mod envelope_plot;
pub mod files;
pub mod fonts;
pub(crate) mod frame;
pub mod gui;
mod left_out;
pub(crate) mod legend;
pub mod link;
pub mod logwatch;
pub mod marker_name;
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
pub mod triggers;
pub mod unsaved;
pub mod views;
pub mod wake;
pub mod windows;

use std::time::Duration;

use zescope_model::view::{Activity, TimeView, data_x};
use zescope_sampler::Command;
use zescope_store::Store;

use link::SamplerLink;
use panes::Panes;
use settings::{Settings, Theme};
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
    wake: Option<wake::Wake>,
    /// Sessions and writes: dialogs, current file, background save, autosave, recovery.
    pub files: files::Files,
    /// The markers on the data shown (set with M or + Marker, sent by the workload, or
    /// opened); saved with the session.
    pub markers: zescope_model::view::Markers,
    /// Where the workload's markers come from (`zescope_model::markers`); `None`: not listening.
    pub markers_in: Option<zescope_model::markers::Listener>,
    /// The bounds on the workload's markers, from the settings (kept for the next launch); a
    /// live session keeps at most `per_session` markers.
    pub marker_limits: zescope_model::markers::Limits,
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
    /// The marker being named in the toolbar's field (`marker_name.rs`).
    pub marker_name: Option<marker_name::MarkerName>,
    /// File → Connect…'s dialog.
    pub connect: connect::ConnectDialog,
    /// The servers connected to lately, newest first (File → Connect…).
    pub recent_remotes: Vec<connect::Remote>,
    /// Opens a link to a remote run (File → Connect…); `None`: the window cannot.
    pub connector: Option<connect::Connector>,
}

impl ZescopeApp {
    /// An app that talks to the sampler through `link`, starting from remembered `settings`
    /// (theme, window length, selection, pane arrangement, recent files) and filing samples into
    /// `store`. Nothing is sent from here; the first frame that knows the devices starts
    /// sampling the selection, unless [`ZescopeApp::auto_start`] is cleared or a crashed
    /// session's checkpoint is offered first.
    pub fn new(link: Box<dyn SamplerLink>, settings: Settings, store: Store) -> ZescopeApp {
        let mut state = AppState::default();
        state.selection = settings.selection;
        let mut view = TimeView::default();
        view.window = settings.window;
        let mut panes = Panes::with_arrangement(settings.arrangement);
        // Used only if the window watches a server: the last one connected to comes first.
        panes.remote_layout = settings.recent_remotes.first().and_then(|r| r.layout.clone());
        ZescopeApp {
            link,
            state,
            store,
            view,
            panes,
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
            wake: None,
            files: files::Files::default().with_recent(settings.recent),
            markers: zescope_model::view::Markers::with_cap(settings.markers.per_session),
            markers_in: None,
            marker_limits: settings.markers,
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
            marker_name: None,
            connect: connect::ConnectDialog::default(),
            recent_remotes: settings.recent_remotes,
            connector: None,
        }
    }

    /// Hands the app the [`wake::Wake`] whose waker its sampler (or remote link) calls: then a
    /// live view paints as data arrives ([`wake`]) instead of on a timer of its own.
    pub fn use_wake(&mut self, wake: wake::Wake) {
        self.wake = Some(wake);
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
    pub fn settings(&self) -> Settings {
        Settings {
            theme: self.theme,
            window: self.view.window,
            selection: self.state.own_selection.as_ref().unwrap_or(&self.state.selection).clone(),
            arrangement: self.panes.own.as_ref().unwrap_or(&self.panes.arrangement).clone(),
            recent: self.files.recent.clone(),
            frame_cap: self.frame_cap,
            overview: if self.overview.shown { settings::Shown::Yes } else { settings::Shown::No },
            markers: self.marker_limits,
            recent_remotes: self.remotes_with_panes(),
        }
    }

    /// The servers connected to lately, the one watched now (the first: connecting puts it
    /// there) with the panes shown while a remote run is up.
    pub(crate) fn remotes_with_panes(&self) -> Vec<connect::Remote> {
        let mut recent = self.recent_remotes.clone();
        if let (Some(_), false, Some(first)) = (&self.panes.own, self.panes.of_file, recent.first_mut()) {
            first.layout = Some(self.panes.arrangement.clone());
        }
        recent
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

    /// The window's one state (see [`Activity`]): the toolbar and the status bar both show it.
    pub fn activity(&self) -> Activity {
        Activity::of(self.files.recording.is_some(), self.state.ingest.run.is_some(), self.view.mode)
    }

    /// The colour the window is cleared to before each frame: the panels' own, which they then
    /// do not paint (see `bare`).
    pub fn clear_color(visuals: &egui::Visuals) -> [f32; 4] {
        visuals.panel_fill.to_normalized_gamma_f32()
    }

    /// The window's title as last set.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The phase table's ranges: the visible range, the cursors' span, then each marked range.
    pub fn phase_ranges(&self) -> Vec<zescope_model::view::phases::PhaseRange> {
        use zescope_model::view::phases::PhaseRange;
        let mut out = Vec::new();
        if let Some((a, b)) = self.view.range(data_x(&self.store)) {
            out.push(PhaseRange::new("visible", TimeAxis::of(&self.store).ns(a), TimeAxis::of(&self.store).ns(b)));
        }
        out.extend(self.cursors.span());
        out.extend(self.markers.closed_ranges().map(|(n, a, b)| PhaseRange::new(n, a, b)));
        out
    }

    /// M: a marker at the hovered time, else at the newest sample, named "M<n>" and the
    /// toolbar's name field opened on it (`marker_name.rs`); saved with the session.
    pub(crate) fn add_marker(&mut self) {
        let t = match self.hover_x {
            Some(x) => Some(TimeAxis::of(&self.store).ns(x)),
            None => self.store.total_time_range().map(|(_, last)| last),
        };
        if let Some(t_ns) = t {
            let label = format!("M{}", self.markers.len() + 1);
            if self.markers.instant(t_ns, &label) {
                self.marker_name = marker_name::MarkerName::of(&self.markers, self.markers.len() - 1);
            }
        }
    }
}

/// A panel frame that leaves its background to the clear colour ([`ZescopeApp::clear_color`]): the
/// four panels cover the whole window, so painting their fill shades every pixel once more per
/// frame, which under a software renderer is a good part of a frame's cost.
fn bare(frame: egui::Frame) -> egui::Frame {
    frame.fill(egui::Color32::TRANSPARENT)
}
