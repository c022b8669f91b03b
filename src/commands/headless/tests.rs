//! The loop driven by a real sampler on the in-process simulated device.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ze_sim::Sim;
use ze_sim::config::{MetricsEnable, SimConfig};

use super::*;
use zescope_sampler::{DevicePath, Options};
use zescope_ze::Loader;

/// A sampler on its own simulated device, configured by `tweak`.
fn sampler(tweak: impl FnOnce(&mut SimConfig)) -> (Arc<Sim>, SamplerHandle) {
    let mut cfg = SimConfig { metrics: MetricsEnable::Always, update_period_us: 200, ..Default::default() };
    tweak(&mut cfg);
    let sim = Arc::new(Sim::new(cfg));
    let s = sim.clone();
    let h = sampler::spawn(Box::new(move || Loader::in_process(s.in_process())), Options::default());
    h.wait_inventory(Duration::from_secs(10)).expect("the simulated device's inventory");
    (sim, h)
}

fn compute_basic() -> RunConfig {
    RunConfig::single(DevicePath::default(), vec!["ComputeBasic".into()], Duration::from_millis(1))
}

/// Writes down what the loop did, and ends the run as told.
#[derive(Default)]
struct Probe {
    /// End from every tick once this many samples arrived.
    end_after_samples: Option<u64>,
    /// Raise this on the first samples, as a signal would.
    interrupt: Option<Termination>,
    /// Fail fatally on the first samples.
    fail_samples: Option<String>,
    /// Send this marker to this socket when the loop ends.
    mark_on_ending: Option<std::path::PathBuf>,
    /// End from every tick after this long, so a loop that never ends fails its test.
    give_up: Option<Instant>,
    /// Let events wait this long (`Handler::pace`).
    pace: Option<Duration>,
    /// End from the first tick at or after this, said through `Handler::due_in`.
    end_at: Option<Instant>,
    /// Loop turns (ticks) before the ending, and the samples each `samples` call brought.
    ticks: u32,
    batches: Vec<u64>,
    started: u32,
    samples: u64,
    errors: Vec<String>,
    stopped: Vec<StopReason>,
    markers: Vec<String>,
    /// When `ending` was called, each time.
    endings: Vec<Instant>,
    finished: bool,
}

impl Probe {
    fn new() -> Probe {
        Probe { give_up: Some(Instant::now() + Duration::from_secs(20)), ..Probe::default() }
    }
}

impl Handler for Probe {
    fn started(&mut self, _info: RunInfo) -> Result<Flow, String> {
        self.started += 1;
        Ok(Flow::Go)
    }
    fn samples(&mut self, b: SampleBatch) -> Result<(), String> {
        self.samples += b.timestamps.len() as u64;
        self.batches.push(b.timestamps.len() as u64);
        if let Some(t) = &self.interrupt {
            t.request();
        }
        self.fail_samples.take().map_or(Ok(()), Err)
    }
    fn health(&mut self, _: Health) {}
    fn notice(&mut self, _: u64, _: String) {}
    fn error(&mut self, message: &str) {
        self.errors.push(message.to_owned());
    }
    fn markers(&mut self, markers: Vec<Received>) {
        self.markers.extend(markers.into_iter().map(|m| m.name));
    }
    fn stopped(&mut self, _: u64, reason: StopReason) -> Flow {
        self.stopped.push(reason);
        Flow::Go
    }
    fn tick(&mut self) -> Result<Flow, String> {
        let now = Instant::now();
        if self.endings.is_empty() {
            self.ticks += 1;
        }
        let enough = self.end_after_samples.is_some_and(|n| self.samples >= n);
        let due = self.end_at.is_some_and(|t| now >= t);
        Ok(if enough || due || self.give_up.is_some_and(|t| now >= t) { Flow::End } else { Flow::Go })
    }
    fn pace(&self) -> Option<Duration> {
        self.pace
    }
    fn due_in(&self) -> Option<Duration> {
        self.end_at.map(|t| t.saturating_duration_since(Instant::now()))
    }
    fn ending(&mut self) {
        self.endings.push(Instant::now());
        if let Some(path) = &self.mark_on_ending {
            zescope_markers::send_once(path, zescope_markers::Kind::Instant, "last").expect("send a marker");
        }
    }
    fn finish(&mut self) -> Result<(), String> {
        self.finished = true;
        Ok(())
    }
}

#[test]
fn a_teardown_that_never_answers_ends_the_loop_at_the_one_deadline() {
    // The teardown's last step hangs far beyond the deadline.
    let (_sim, h) = sampler(|c| c.faults.context_destroy_delay_ms = 8_000);
    // Asks for the end on every turn once samples came: the deadline must not move.
    let mut p = Probe { end_after_samples: Some(1), ..Probe::new() };
    let out = run(h, compute_basic(), None, &Termination::unwatched(), &mut p).expect("no fatal error");
    let returned = Instant::now();
    assert_eq!(p.endings.len(), 1, "the deadline is armed once");
    let waited = returned - p.endings[0];
    assert!(waited >= TEARDOWN_DEADLINE, "it waited for the teardown's deadline: {waited:?}");
    assert!(waited < TEARDOWN_DEADLINE + Duration::from_millis(800), "and no longer: {waited:?}");
    assert_eq!(out.errors, [teardown_error()], "the teardown error, once");
    assert!(out.started && !out.interrupted);
    assert!(p.finished, "the handler finished before the final shutdown");
}

#[test]
fn an_error_before_any_run_ends_the_loop_with_its_hint() {
    let (sim, h) = sampler(|c| c.faults.export_fd_minus_one = true);
    let mut p = Probe::new();
    let t0 = Instant::now();
    let out = run(h, compute_basic(), None, &Termination::unwatched(), &mut p).expect("no fatal error");
    assert!(t0.elapsed() < Duration::from_secs(5), "the loop ended on the error: {:?}", t0.elapsed());
    assert!(!out.started && !out.interrupted && p.started == 0);
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    let e = &out.errors[0];
    assert!(e.contains("fd -1") && e.contains("(the driver's exported memory is unusable"), "message (hint): {e}");
    assert_eq!(p.errors, out.errors, "the handler heard the same line");
    assert_eq!(p.endings.len(), 1);
    assert!(p.finished);
    let r = sim.report();
    assert!(r.is_clean(), "the sampler was shut down cleanly: {r:?}");
}

#[test]
fn termination_ends_the_run_through_the_teardown() {
    let (sim, h) = sampler(|_| {});
    let stop = Termination::unwatched();
    let mut p = Probe { interrupt: Some(stop.clone()), ..Probe::new() };
    let out = run(h, compute_basic(), None, &stop, &mut p).expect("no fatal error");
    assert!(out.started && out.interrupted, "{out:?}");
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(p.samples > 0);
    assert_eq!(p.stopped, [StopReason::Shutdown], "the run stopped by the shutdown");
    assert_eq!(p.endings.len(), 1);
    assert!(p.finished);
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
}

#[test]
fn a_fatal_handler_error_is_the_loops_error_after_the_shutdown() {
    let (sim, h) = sampler(|_| {});
    let mut p = Probe { fail_samples: Some("writing out.csv: disk full".into()), ..Probe::new() };
    let err = run(h, compute_basic(), None, &Termination::unwatched(), &mut p).expect_err("the handler's error");
    assert_eq!(err, "writing out.csv: disk full");
    assert!(!p.finished, "no finish after a fatal error");
    let r = sim.report();
    assert!(r.is_clean(), "the sampler was torn down before run returned: {r:?}");
    assert_eq!(sim.live_imports(), 0);
}

#[test]
fn markers_sent_up_to_the_end_reach_the_handler() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    // The listener takes only a folder of the user's that only they can use.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let path = dir.path().join("markers.sock");
    let listener = Listener::start(&path, Limits::default()).expect("listen");
    zescope_markers::send_once(&path, zescope_markers::Kind::Instant, "first").unwrap();
    let (_sim, h) = sampler(|_| {});
    let mut p = Probe { end_after_samples: Some(1), mark_on_ending: Some(path.clone()), ..Probe::new() };
    let out = run(h, compute_basic(), Some(&listener), &Termination::unwatched(), &mut p).expect("no fatal error");
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(p.markers, ["first", "last"]);
}

/// A paced handler takes the run's batches a pace at a time, waking about once a pace (not once
/// a batch), and still ends when it said it would, not a pace later.
#[test]
fn a_paced_handler_wakes_once_a_pace_and_ends_when_due() {
    let run_for = Duration::from_millis(1200);
    let (_sim, h) = sampler(|_| {});
    let mut p = Probe { pace: Some(Duration::from_millis(50)), end_at: Some(Instant::now() + run_for), ..Probe::new() };
    let out = run(h, compute_basic(), None, &Termination::unwatched(), &mut p).expect("no fatal error");
    assert!(out.started && out.errors.is_empty(), "{out:?}");
    assert_eq!(p.endings.len(), 1);
    let late = p.endings[0].saturating_duration_since(p.end_at.unwrap());
    assert!(late < Duration::from_millis(45), "ended {late:?} after it was due (the pace is 50 ms)");
    // 1 kHz for 1.2 s: ~1200 samples in batches the sampler sends every few ms; the loop turns
    // about once a pace while the run goes, plus once for each event it takes.
    assert!(p.samples > 900, "{} samples", p.samples);
    let events = p.batches.len() as u32;
    let sleeps = p.ticks.saturating_sub(events);
    assert!(
        sleeps <= 1200 / 50 + 8,
        "{sleeps} sleeps in 1.2 s at a pace of 50 ms ({} ticks, {events} batches)",
        p.ticks
    );
    assert!(sleeps >= 1200 / 50 / 2, "it slept between batches: {sleeps} sleeps, {} ticks", p.ticks);
}
