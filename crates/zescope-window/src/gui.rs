//! The window: zescope's UI in eframe (glow renderer; winit with both X11 and Wayland), the
//! sampler on its thread, settings persisted (their file checked first, see
//! `settings_file`), and an orderly exit. Closing the window, Ctrl+Q,
//! SIGINT and SIGTERM all shut the sampler down and wait (bounded) for its teardown before the
//! process exits.

use std::process::ExitCode;
use std::sync::Arc;

use crate::ZescopeApp;
use crate::settings::{STORAGE_KEY, Settings};
use crate::settings_file;
use zescope_model::viewfile::ViewFile;
use zescope_sampler::{Options, SamplerHandle};
use zescope_store::Store;

/// SIGINT and SIGTERM as the binary watches them: the window ends through its normal shutdown
/// (the sampler's teardown first) once one arrived.
pub trait Interrupt {
    /// True once a signal asked the process to end.
    fn requested(&self) -> bool;
    /// Calls `wake` when a signal arrives (an idle window repaints and notices).
    fn on_signal(&self, wake: Box<dyn Fn() + Send>);
}

/// Starts a link to a remote run with the window's options; the error says why not.
pub type StartRemote = Box<dyn Fn(&crate::connect::Remote, Options) -> Result<SamplerHandle, String>>;

/// What the binary hands the window.
pub struct Launch {
    /// Starts the sampler thread on the source the user asked for, with the window's options.
    pub start_sampler: Box<dyn FnOnce(Options) -> SamplerHandle>,
    /// Opens a link to a remote run instead (File → Connect…), with the window's options; the
    /// error says why not.
    pub connect: StartRemote,
    /// The simulated device the program links in, which Help → Diagnostics checks for `sim`
    /// and `auto`'s fallback.
    pub built_in: zescope_ze::BuiltIn,
    /// The signals that end the process.
    pub interrupt: Box<dyn Interrupt>,
    /// A session file to show instead of sampling at once.
    pub file: Option<std::path::PathBuf>,
    /// A view file to lay the panes out by.
    pub view: Option<ViewFile>,
    /// The remote run `start_sampler` watches (`--connect`): put first among the recent
    /// addresses File → Connect… offers.
    pub remote: Option<crate::connect::Remote>,
}

struct GuiApp {
    app: ZescopeApp,
    stop: Box<dyn Interrupt>,
}

impl eframe::App for GuiApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        if self.stop.requested() && self.app.quit.is_none() {
            self.app.quit();
        }
        self.app.ui(ui);
    }

    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        ZescopeApp::clear_color(visuals)
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, STORAGE_KEY, &self.app.settings());
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        let _ = self.app.shutdown();
        self.app.finish_files();
    }
}

fn icon() -> Option<egui::IconData> {
    eframe::icon_data::from_png_bytes(include_bytes!("../../../assets/icon/hicolor/64x64/apps/zescope.png")).ok()
}

/// Opens the window: samples with the sampler `launch` starts, showing its session file if one is
/// given; returns when the window is closed.
pub fn run(launch: Launch) -> ExitCode {
    let Launch { start_sampler, connect, built_in, interrupt: stop, file, view, remote } = launch;
    let mut viewport = egui::ViewportBuilder::default()
        .with_title("zescope")
        .with_app_id("zescope")
        .with_inner_size([1280.0, 800.0])
        .with_min_inner_size([640.0, 420.0]);
    if let Some(i) = icon() {
        viewport = viewport.with_icon(i);
    }
    // The remembered settings are checked (size, file type) before eframe reads them.
    let persistence_path = settings_file::path("zescope").map(|p| settings_file::checked_for_eframe(&p));
    let options = eframe::NativeOptions {
        viewport,
        renderer: eframe::Renderer::Glow,
        persist_window: true,
        persistence_path,
        // The UI is flat colours: dithering (a noise function in every pixel's shader) changes
        // nothing visible there, and under a software renderer it is a good part of each frame.
        dithering: false,
        ..Default::default()
    };
    let result = eframe::run_native(
        "zescope",
        options,
        Box::new(move |cc| {
            let settings: Settings = cc.storage.and_then(|s| eframe::get_value(s, STORAGE_KEY)).unwrap_or_default();
            cc.egui_ctx.set_fonts(crate::fonts::definitions());
            let wake = crate::wake::Wake::default();
            let waker = wake.waker(cc.egui_ctx.clone());
            let link = start_sampler(Options { waker: Some(Arc::clone(&waker)), ..Options::default() });
            // Wake the UI when a signal arrives, even if nothing else would repaint it.
            let repaint = cc.egui_ctx.clone();
            stop.on_signal(Box::new(move || repaint.request_repaint()));
            let limits = settings.markers;
            let mut app = ZescopeApp::new(Box::new(link), settings, Store::with_default_cap());
            app.use_wake(wake);
            if let Some(r) = &remote {
                app.watching(r);
            }
            app.connector = Some(Box::new(move |r| {
                let options = Options { waker: Some(Arc::clone(&waker)), ..Options::default() };
                connect(r, options).map(|h| Box::new(h) as Box<dyn crate::link::SamplerLink>)
            }));
            app.windows.diagnostics = crate::windows::Diagnostics::with_built_in(built_in);
            match zescope_model::markers::Listener::start_default(limits) {
                Ok(l) => {
                    log::info!("markers: {}={}", zescope_model::markers::ENV, l.path().display());
                    app.markers_in = Some(l);
                }
                Err(e) => log::warn!("not listening for markers: {e}"),
            }
            if let Some(v) = view {
                // Laid out once the run's (or the recording's) series are known.
                app.load_view(v);
            }
            if let Some(f) = file {
                // Shown as a recording; Start begins a live run.
                app.auto_start = false;
                app.perform(Some(crate::files::FileAction::Open(f)));
            }
            // A crashed session's checkpoint is offered before sampling starts; this session
            // gets its own checkpoints.
            app.files.recover = zescope_model::session::autosave::find_recoverable();
            match zescope_model::session::autosave::Autosaver::new() {
                Ok(a) => app.files.autosave = Some(a),
                Err(e) => app.state.push_error(crate::banner::UiError::new(
                    crate::banner::UiErrorKind::Autosave,
                    format!("no autosave for this session: {e}"),
                    "save the session by hand (Ctrl+S) to keep what is recorded",
                )),
            }
            Ok(Box::new(GuiApp { app, stop }))
        }),
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "zescope: cannot open a window: {e}. Is a display available (DISPLAY or WAYLAND_DISPLAY)? \
                 Without one, use `zescope list` or `zescope record`; `zescope doctor` checks the setup."
            );
            ExitCode::FAILURE
        }
    }
}
