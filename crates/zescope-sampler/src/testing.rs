//! Helpers for tests of the sampler and of the floors above it: a sampler on a private
//! in-process simulated driver, and waiting for its events with a deadline. Behind the `testing`
//! feature (which brings in ze-sim), turned on by tests and benchmarks only.
//!
//! # Panics
//!
//! These are for tests: the waits panic, listing the events seen, when what they wait for does
//! not come within the deadline.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ze_sim::Sim;
use ze_sim::config::{MetricsEnable, SimConfig};
use zescope_ze::Loader;

use crate::{Command, DevicePath, Event, Options, RunConfig, SampleBatch, SamplerError, SamplerHandle};

/// How long a test waits for an event before it fails.
pub const T: Duration = Duration::from_secs(10);

/// A private simulated driver: metrics enabled by environment, counters updated every 200 µs,
/// then `tweak`ed.
pub fn sim(tweak: impl FnOnce(&mut SimConfig)) -> Arc<Sim> {
    let mut cfg = SimConfig { metrics: MetricsEnable::Env, update_period_us: 200, ..Default::default() };
    tweak(&mut cfg);
    Arc::new(Sim::new(cfg))
}

/// A sampler on `sim` with default options.
pub fn sampler_on(sim: &Arc<Sim>) -> SamplerHandle {
    sampler_with(sim, Options::default())
}

/// A sampler on `sim` with `options`.
pub fn sampler_with(sim: &Arc<Sim>, options: Options) -> SamplerHandle {
    let s = sim.clone();
    crate::spawn(Box::new(move || Loader::in_process(s.in_process())), options)
}

/// A run of `groups` on the first device, every millisecond.
pub fn run_config(groups: &[&str]) -> RunConfig {
    RunConfig::single(DevicePath::default(), groups.iter().map(|s| s.to_string()).collect(), Duration::from_millis(1))
}

/// Waits for the first event `f` accepts, within `timeout`.
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

/// Waits until at least `want` samples arrived; returns their batches.
pub fn collect_samples(h: &SamplerHandle, want: usize) -> Vec<SampleBatch> {
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

/// Sends `Sync(n)` and returns every event before `Synced(n)`.
pub fn sync(h: &SamplerHandle, n: u64) -> Vec<Event> {
    h.send(Command::Sync(n));
    let mut got = Vec::new();
    wait_for(h, T, |e| {
        if matches!(e, Event::Synced(m) if *m == n) {
            Some(())
        } else {
            got.push(e.clone());
            None
        }
    });
    got
}

/// The first error among `events`.
pub fn first_error(events: &[Event]) -> Option<SamplerError> {
    events.iter().find_map(|e| if let Event::Error(err) = e { Some(err.clone()) } else { None })
}

/// Shuts the sampler down and waits for its last event.
pub fn shut_down(h: &SamplerHandle) {
    h.send(Command::Shutdown);
    wait_for(h, T, |e| matches!(e, Event::ShutDown).then_some(()));
}

/// An inventory entry of a simulated GPU at `path` named `name`, listing `groups` (no PCI
/// address, UUID or ids): what tests of the inventory's readers describe a device with.
pub fn gpu_entry(path: DevicePath, name: &str, groups: Vec<crate::GroupEntry>) -> crate::DeviceEntry {
    crate::DeviceEntry {
        path,
        name: name.into(),
        kind: zescope_ze::DeviceKind::Gpu,
        uuid: String::new(),
        vendor_id: 0,
        device_id: 0,
        pci_bdf: None,
        driver_version: 0,
        simulated: true,
        groups,
        error: None,
    }
}
