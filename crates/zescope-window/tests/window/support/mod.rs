//! Helpers for the window's tests: the sampler helpers of `zescope_sampler::testing` (a sampler
//! on a private simulated driver, waiting for its events), stepping a harness until something
//! holds, and the windows of `window.rs`.
#![allow(dead_code)]

use std::time::{Duration, Instant};

mod window;
pub use window::*;
pub use zescope_sampler::testing::*;

/// Steps a UI harness in real time (the sampler runs on its own thread) until `until` holds.
pub fn pump(
    h: &mut egui_kittest::Harness<'_, zescope_window::ZescopeApp>,
    what: &str,
    until: impl Fn(&zescope_window::ZescopeApp) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        h.step();
        if until(h.state()) {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Ctrl+Q with unsaved data: the unsaved-data question comes up and Discard quits.
pub fn quit_discarding(h: &mut egui_kittest::Harness<'_, zescope_window::ZescopeApp>) {
    use egui_kittest::kittest::Queryable;
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Q);
    h.step();
    h.step();
    assert!(h.state().quit.is_none(), "quit with unsaved data asks first");
    let discard = h.get_by_label("Discard");
    let at = discard.rect();
    discard.click();
    h.step();
    if h.state().quit.is_none() {
        // What the window showed instead, for a failure that does not reproduce at will.
        let a = h.state();
        let now = h.query_by_label("Discard").map(|n| n.rect());
        panic!(
            "Discard quits: clicked at {at:?}; now asking {:?}, path prompt {}, Discard at {now:?}",
            a.unsaved.asking,
            a.files.prompt.is_some()
        );
    }
}

/// A link to no sampler, for an app that only shows files.
pub struct NoSampler;

impl zescope_window::link::SamplerLink for NoSampler {
    fn send(&self, _: zescope_sampler::Command) {}
    fn try_recv(&self) -> Option<zescope_sampler::Event> {
        None
    }
    fn shutdown(&mut self, _: std::time::Duration) -> Result<(), std::time::Duration> {
        Ok(())
    }
}
