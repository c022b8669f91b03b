//! The window under egui_kittest: on a sampler of a private simulated driver, or showing a saved
//! recording with no sampler.

use std::path::Path;
use std::sync::Arc;

use egui_kittest::Harness;
use ze_sim::Sim;
use zescope_store::Store;
use zescope_window::ZescopeApp;
use zescope_window::dialogs::ScriptedDialogs;
use zescope_window::settings::Settings;

/// The window's size in most of the tests, in points.
pub const WINDOW: [f32; 2] = [1280.0, 860.0];

/// An app sampling `sim` with `settings`, waiting for Start.
pub fn app_on(sim: &Arc<Sim>, settings: Settings) -> ZescopeApp {
    let mut app = ZescopeApp::new(Box::new(super::sampler_on(sim)), settings, Store::new(64 << 20));
    app.auto_start = false;
    app
}

/// Frames `Harness::run` may take to settle: egui asks for extra frames of its own (a widget's
/// first style, a resized grid), more of them when a frame takes long on a loaded machine; a UI
/// that never settles still fails.
const MAX_STEPS: u64 = 16;

/// A harness builder with the window's fonts (`zescope_window::fonts`, as `gui` installs them):
/// kittest refuses to draw a glyph its fonts lack, as the window would draw a box.
pub fn builder() -> egui_kittest::HarnessBuilder<ZescopeApp> {
    Harness::builder().with_context_setup(|ctx| ctx.set_fonts(zescope_window::fonts::definitions()))
}

/// A window of `size` around `app`.
pub fn harness_of(app: ZescopeApp, size: [f32; 2]) -> Harness<'static, ZescopeApp> {
    builder().with_size(size).with_max_steps(MAX_STEPS).build_ui_state(|ui, a: &mut ZescopeApp| a.ui(ui), app)
}

/// A window of `size` around `app`, once its sampler has listed the devices.
pub fn with_inventory(app: ZescopeApp, size: [f32; 2]) -> Harness<'static, ZescopeApp> {
    let mut h = harness_of(app, size);
    super::pump(&mut h, "the inventory", |a| a.state.inventory.is_some());
    h
}

/// The usual window on `sim`: default settings, waiting for Start, the devices listed.
pub fn harness_on(sim: &Arc<Sim>) -> Harness<'static, ZescopeApp> {
    with_inventory(app_on(sim, Settings::default()), WINDOW)
}

/// The recording `path`, opened through File → Open in a window of `size` with no sampler (frames
/// `step_dt` seconds apart when given), once it is shown.
pub fn showing(path: &Path, settings: Settings, size: [f32; 2], step_dt: Option<f32>) -> Harness<'static, ZescopeApp> {
    let mut app = ZescopeApp::new(Box::new(super::NoSampler), settings, Store::new(64 << 20));
    app.files.dialogs = Box::new(Arc::new(ScriptedDialogs::answering([Some(path.to_path_buf())])));
    let mut builder = builder().with_size(size).with_max_steps(MAX_STEPS);
    if let Some(dt) = step_dt {
        builder = builder.with_step_dt(dt);
    }
    let mut h = builder.build_ui_state(|ui, a: &mut ZescopeApp| a.ui(ui), app);
    h.step();
    let open = h.state_mut().files.ask_open();
    h.state_mut().perform(open);
    super::pump(&mut h, "the recording", |a| a.files.recording.is_some() && !a.plot_frames.is_empty());
    h
}

/// The example recording that ships in the workspace's `assets/` (found from the package these
/// tests are built in: the window crate's, or the root package's for the few tests that need it).
pub fn example_session() -> std::path::PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = here.ancestors().map(|dir| dir.join("assets/example-session.ron")).find(|f| f.is_file());
    file.unwrap_or_else(|| panic!("no assets/example-session.ron above {}", here.display()))
}

/// The key of `group`/`metric` on the simulated GPU ("ze-sim GPU").
pub fn gpu_key(group: &str, metric: &str) -> zescope_model::view::SeriesKey {
    zescope_model::view::SeriesKey { device: "ze-sim GPU".into(), group: group.into(), metric: metric.into() }
}

/// A legend heads `device`'s rows with its name and names the row `series` without it.
pub fn legend_has(h: &Harness<'_, ZescopeApp>, device: &str, series: &str) {
    use egui_kittest::kittest::Queryable;
    assert!(h.query_all_by_label(device).count() >= 1, "a legend heading {device}");
    assert!(h.query_all_by_label(series).count() >= 1, "a legend row {series}");
    assert!(h.query_by_label(&format!("{device} · {series}")).is_none(), "the row names no device");
}

/// A primary click at `pos`: the pointer moves there, presses and releases.
pub fn click_at<S>(h: &mut Harness<'_, S>, pos: egui::Pos2) {
    h.hover_at(pos);
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
}

/// One turn of the mouse wheel by `dy` points at `at` (with `modifiers` held), then the frames
/// egui spreads a wheel step over.
pub fn wheel(h: &mut Harness<'_, ZescopeApp>, at: egui::Pos2, dy: f32, modifiers: egui::Modifiers) {
    h.hover_at(at);
    h.step();
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, dy),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Wheel,
        modifiers,
    });
    for _ in 0..30 {
        h.step();
    }
}
