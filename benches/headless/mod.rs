//! The window without a screen, shared by the benchmarks that drive the whole UI: an app with
//! no sampler behind it, and one frame (`Context::run_ui` + `tessellate`, no GPU) at 1600 x 1000
//! points.

use std::hint::black_box;
use std::time::Duration;

use egui::{Context, RawInput, Rect, pos2, vec2};
use zescope_sampler::{Command, Event};
use zescope_store::Store;
use zescope_window::ZescopeApp;
use zescope_window::link::SamplerLink;
use zescope_window::settings::Settings;

/// No sampler: whatever the store holds is all there is.
struct Quiet;

impl SamplerLink for Quiet {
    fn send(&self, _: Command) {}
    fn try_recv(&self) -> Option<Event> {
        None
    }
    fn shutdown(&mut self, _: Duration) -> Result<(), Duration> {
        Ok(())
    }
}

/// The window over `store`, with no sampler and no run started.
pub fn app(store: Store) -> ZescopeApp {
    let mut app = ZescopeApp::new(Box::new(Quiet), Settings::default(), store);
    app.auto_start = false;
    app
}

/// One headless frame of the whole UI; returns the number of meshes drawn.
pub fn frame(ctx: &Context, app: &mut ZescopeApp) -> usize {
    let input =
        RawInput { screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(1600.0, 1000.0))), ..Default::default() };
    let mut out = ctx.run_ui(input, |ui| app.ui(ui));
    out.textures_delta.clear();
    black_box(ctx.tessellate(out.shapes, out.pixels_per_point).len())
}
