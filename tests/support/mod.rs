//! Shared helpers for the sampler tests: a sampler on a private simulated driver, and waiting
//! for events.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use ze_sim::Sim;
use ze_sim::config::{MetricsEnable, SimConfig};
use zescope::sampler::{self, Command, DevicePath, Event, Options, RunConfig, SamplerHandle};
use zescope::ze::Loader;

pub mod faults;
mod window;
#[allow(unused_imports)]
pub use window::*;

/// How long a test waits for an event before it fails.
pub const T: Duration = Duration::from_secs(10);

/// Waits until at least `want` samples arrived; returns their batches.
pub fn collect_samples(h: &SamplerHandle, want: usize) -> Vec<zescope::sampler::SampleBatch> {
    let mut got = Vec::new();
    let mut n = 0;
    wait_for(h, T, |e| {
        if let Event::Samples(b) = e {
            n += b.timestamps.len();
            got.push(b.clone());
        }
        (n >= want).then_some(())
    });
    got
}

/// Shuts the sampler down and waits for its last event.
pub fn shut_down(h: &SamplerHandle) {
    h.send(Command::Shutdown);
    wait_for(h, T, |e| matches!(e, Event::ShutDown).then_some(()));
}

pub fn sim(tweak: impl FnOnce(&mut SimConfig)) -> Arc<Sim> {
    let mut cfg = SimConfig { metrics: MetricsEnable::Env, update_period_us: 200, ..Default::default() };
    tweak(&mut cfg);
    Arc::new(Sim::new(cfg))
}

pub fn sampler_on(sim: &Arc<Sim>) -> SamplerHandle {
    sampler_with(sim, Options::default())
}

pub fn sampler_with(sim: &Arc<Sim>, options: Options) -> SamplerHandle {
    let s = sim.clone();
    sampler::spawn(Box::new(move || Loader::from_sim(s.clone())), options)
}

/// Waits for the first event `f` accepts; other events are passed to `seen`.
pub fn wait_for<T>(h: &SamplerHandle, timeout: Duration, mut f: impl FnMut(&Event) -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    let mut log = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match h.events.recv_timeout(left) {
            Ok(e) => {
                if let Some(t) = f(&e) {
                    return t;
                }
                log.push(format!("{e:?}").chars().take(300).collect::<String>());
            }
            Err(_) => panic!("timed out; events seen:\n{}", log.join("\n")),
        }
    }
}

/// Sends `Sync(n)` and returns every event before `Synced(n)`.
pub fn sync(h: &SamplerHandle, n: u64) -> Vec<Event> {
    h.send(Command::Sync(n));
    let mut got = Vec::new();
    wait_for(h, Duration::from_secs(10), |e| {
        if matches!(e, Event::Synced(m) if *m == n) {
            Some(())
        } else {
            got.push(e.clone());
            None
        }
    });
    got
}

pub fn run_config(groups: &[&str]) -> RunConfig {
    RunConfig::single(DevicePath::default(), groups.iter().map(|s| s.to_string()).collect(), Duration::from_millis(1))
}

pub fn first_error(events: &[Event]) -> Option<zescope::sampler::SamplerError> {
    events.iter().find_map(|e| if let Event::Error(err) = e { Some(err.clone()) } else { None })
}

/// Steps a UI harness in real time (the sampler runs on its own thread) until `until` holds.
pub fn pump(
    h: &mut egui_kittest::Harness<'_, zescope::app::ZescopeApp>,
    what: &str,
    until: impl Fn(&zescope::app::ZescopeApp) -> bool,
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
pub fn quit_discarding(h: &mut egui_kittest::Harness<'_, zescope::app::ZescopeApp>) {
    use egui_kittest::kittest::Queryable;
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Q);
    h.step();
    h.step();
    assert!(h.state().quit.is_none(), "quit with unsaved data asks first");
    h.get_by_label("Discard").click();
    h.step();
    assert!(h.state().quit.is_some(), "Discard quits");
}

/// A link to no sampler, for an app that only shows files.
pub struct NoSampler;

impl zescope::app::link::SamplerLink for NoSampler {
    fn send(&self, _: zescope::sampler::Command) {}
    fn try_recv(&self) -> Option<zescope::sampler::Event> {
        None
    }
    fn shutdown(&mut self, _: std::time::Duration) -> Result<(), std::time::Duration> {
        Ok(())
    }
}
