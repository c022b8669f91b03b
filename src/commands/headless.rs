//! The run loop of the headless commands, `record` and `serve`: one sampler run from its start
//! to the sampler's teardown, with what is particular to each command behind [`Handler`].
//!
//! [`open`] spawns the sampler on the source, waits for its inventory and picks the targets the
//! command line names (`pick::pick_targets`); [`listen_for_markers`] starts the workload's
//! markers listener and says where it listens. [`run`] then starts the run and loops until the
//! sampler has shut down:
//!
//! - the markers the listener received go to [`Handler::markers`], every turn and once more
//!   after the loop (a workload's last markers arrive after it exits);
//! - SIGINT/SIGTERM ([`Termination`]), a handler's [`Flow::End`] or [`Flow::Fail`], the run
//!   stopping, or an error before any run started end it: `Command::Shutdown` is sent and the
//!   teardown deadline ([`TEARDOWN_DEADLINE`]) armed, once however many reasons follow, and
//!   [`Handler::ending`] called; a sampler that has not said `ShutDown` by then ends the loop
//!   with the teardown error;
//! - notices (the run's, and those that come during it) are printed as they arrive
//!   (`sampler::say_notice`); errors are kept with their hint, one line each, and handed to
//!   [`Handler::error`] as they arrive;
//! - [`Handler::tick`] runs every turn, at least every 50 ms, for periodic work and for ends of
//!   the command's own (a duration, a workload that exited);
//! - a handler whose events may wait ([`Handler::pace`]: `record`, whose samples nobody watches
//!   live) is not woken by each event: when none waits the loop sleeps for the pace (no longer
//!   than [`Handler::due_in`], when the handler has something of its own to do sooner) and then
//!   takes everything that arrived. The sampler then sends without waking this thread, and this
//!   thread wakes 20 times a second instead of once a batch (the streamer's ~60); a stop or a
//!   marker waits at most the pace. Until the run started (the handler counts its duration from
//!   that event) and once it ends the loop waits on events.
//!
//! After the loop [`Handler::finish`] runs, then the final shutdown waits for the teardown
//! within the same deadline. A handler's `Err` (its output cannot be written)
//! ends the loop at once and is `run`'s error, after that shutdown.

use std::time::Duration;

use crate::commands::pick::pick_targets;
use crate::signals::Termination;
use zescope_model::markers::{Limits, Listener, Received};
use zescope_sampler::{
    self as sampler, Command, Event, Health, Inventory, RunInfo, SampleBatch, SamplerHandle, StopReason,
};
use zescope_sampler::{RunConfig, Target, Via};

/// How long the sampler's teardown may take once the run ends (duration, error, SIGINT or
/// SIGTERM), counted in the time the sampler thread could run: on a machine with more runnable
/// threads than cores its waits for a CPU move the deadline later, by at most nine times this
/// (`SamplerHandle::begin_shutdown`). A second SIGINT exits at once (`signals`).
pub const TEARDOWN_DEADLINE: Duration = Duration::from_secs(3);
/// The longest wait for an event: how often the loop turns when nothing arrives.
const POLL: Duration = Duration::from_millis(50);
/// How long the loop waits, after it ends, for markers still on their way.
const MARKERS_GRACE: Duration = Duration::from_millis(20);

/// What a handler wants from the loop after its part of a turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Go,
    /// End the run: shut the sampler down (the teardown deadline is armed once).
    End,
    /// Keep this error and end the run.
    Fail(String),
}

/// What one command does with a run; the loop calls it from the thread that called [`run`].
pub trait Handler {
    /// The run started, its notices printed already. `Err`: fatal, the loop ends.
    fn started(&mut self, info: RunInfo) -> Result<Flow, String>;
    /// A batch of samples. `Err`: fatal, the loop ends.
    fn samples(&mut self, batch: SampleBatch) -> Result<(), String>;
    /// The sampler's health report.
    fn health(&mut self, health: Health);
    /// The processes using one device of the run (runs that read telemetry).
    fn processes(&mut self, _snapshot: zescope_sampler::processes::ProcessSnapshot) {}
    /// A notice during run `run`, printed already.
    fn notice(&mut self, run: u64, message: String);
    /// An error of the sampler, with its hint; the loop keeps it in [`Outcome::errors`].
    fn error(&mut self, _message: &str) {}
    /// Markers the workload sent, in the order they arrived.
    fn markers(&mut self, markers: Vec<Received>);
    /// Run `run` stopped; the loop ends it after whatever this says.
    fn stopped(&mut self, run: u64, reason: StopReason) -> Flow;
    /// Every turn of the loop (at least every 50 ms), also during the teardown. `Err`: fatal.
    fn tick(&mut self) -> Result<Flow, String>;
    /// How long events may wait for this handler (the module docs): `None`, the default, takes
    /// each as it arrives.
    fn pace(&self) -> Option<Duration> {
        None
    }
    /// How soon this handler has something of its own to do (its `tick` ends the run), when it
    /// knows: a paced loop sleeps no longer.
    fn due_in(&self) -> Option<Duration> {
        None
    }
    /// The loop armed the teardown deadline (called once, whatever the reason).
    fn ending(&mut self) {}
    /// After the loop and its last markers, before the final shutdown. `Err`: `run`'s error.
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// How a run went, as far as the loop knows.
#[derive(Debug, Default)]
pub struct Outcome {
    /// A run started (its `RunStarted` arrived).
    pub started: bool,
    /// SIGINT or SIGTERM ended it (rather than the run, an error or the handler).
    pub interrupted: bool,
    /// The sampler's errors (with their hints), the handler's [`Flow::Fail`]s and a teardown that
    /// missed its deadline, one line each, in the order they happened.
    pub errors: Vec<String>,
}

/// The error of a teardown that missed [`TEARDOWN_DEADLINE`].
pub fn teardown_error() -> String {
    format!("the sampler's teardown did not finish within {TEARDOWN_DEADLINE:?} (its waits for a CPU not counted)")
}

/// Spawns the sampler on `source` (a run read in batches read every `batch` at most:
/// `sampler::Options::batch_interval`), waits (30 s at most) for its inventory and picks the
/// targets `devices`, `groups` and `metrics` name (`pick::pick_targets`); errs with the reason for
/// the user.
pub fn open(
    (source, batch): (zescope_ze::Source, Duration),
    devices: &[String],
    groups: &[String],
    metrics: &[String],
    via: Via,
) -> Result<(SamplerHandle, Inventory, Vec<Target>), String> {
    let options = sampler::Options { batch_interval: batch, ..sampler::Options::default() };
    let h = sampler::spawn_source(source, crate::sim::built_in, options);
    let inv = h.wait_inventory(Duration::from_secs(30))?;
    let targets = pick_targets(&inv, devices, groups, metrics, via)?;
    Ok((h, inv, targets))
}

/// Starts the markers listener within `limits` and prints where it listens, so a workload
/// started by hand can be pointed at it. When it cannot start: errs if `required` (a workload
/// is to be started with `ZESCOPE_MARKERS`), else says why and goes on without.
pub fn listen_for_markers(limits: Limits, required: bool) -> Result<Option<Listener>, String> {
    match Listener::start_default(limits) {
        Ok(l) => {
            say(&format!("zescope: markers: {}={}", zescope_model::markers::ENV, l.path().display()));
            Ok(Some(l))
        }
        Err(e) if required => Err(e),
        Err(e) => {
            say(&format!("zescope: not listening for markers: {e}"));
            Ok(None)
        }
    }
}

/// Starts `start` on `h` and runs it through `handler` until the sampler shuts down (the module
/// docs say when and how); then the final shutdown, within the teardown deadline. Errs with a
/// handler's fatal error.
pub fn run(
    mut h: SamplerHandle,
    start: RunConfig,
    markers: Option<&Listener>,
    stop: &Termination,
    handler: &mut impl Handler,
) -> Result<Outcome, String> {
    h.send(Command::Start(start));
    let mut l = Loop { h: &mut h, ending: false, out: Outcome::default() };
    let finished = l.turns(markers, stop, handler).and_then(|()| {
        if let Some(listener) = markers {
            std::thread::sleep(MARKERS_GRACE);
            deliver(listener, handler);
        }
        handler.finish()
    });
    let mut out = l.out;
    // Within the same deadline, when the loop armed it.
    if h.shutdown(TEARDOWN_DEADLINE).is_err() && !out.errors.contains(&teardown_error()) {
        out.errors.push(teardown_error());
    }
    finished.map(|()| out)
}

/// The loop's own state.
struct Loop<'h> {
    h: &'h mut SamplerHandle,
    /// The run is ending: the sampler was asked to shut down and the teardown's deadline armed.
    ending: bool,
    out: Outcome,
}

impl Loop<'_> {
    /// Turns until the sampler has shut down, its thread is gone, or the deadline has passed.
    fn turns(
        &mut self,
        markers: Option<&Listener>,
        stop: &Termination,
        handler: &mut impl Handler,
    ) -> Result<(), String> {
        loop {
            if let Some(l) = markers {
                deliver(l, handler);
            }
            if !self.ending && stop.requested() {
                self.out.interrupted = true;
                self.end(handler);
            }
            let flow = handler.tick()?;
            self.follow(flow, handler);
            if self.h.shutdown_overdue() {
                self.out.errors.push(teardown_error());
                return Ok(());
            }
            let ev = match self.next_event(handler) {
                Ok(ev) => ev,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Ok(()),
            };
            match ev {
                Event::RunStarted(info) => {
                    info.notices.iter().for_each(|n| sampler::say_notice(n));
                    self.out.started = true;
                    let flow = handler.started(info)?;
                    self.follow(flow, handler);
                }
                Event::Samples(b) => handler.samples(b)?,
                Event::Health(s) => handler.health(s),
                Event::Processes(p) => handler.processes(p),
                Event::Notice { run, message } => {
                    sampler::say_notice(&message);
                    handler.notice(run, message);
                }
                Event::Error(e) => {
                    let msg = match &e.hint {
                        Some(hint) => format!("{e} ({hint})"),
                        None => e.to_string(),
                    };
                    handler.error(&msg);
                    self.out.errors.push(msg);
                    if !self.out.started {
                        self.end(handler);
                    }
                }
                Event::RunStopped { run, reason } => {
                    let flow = handler.stopped(run, reason);
                    self.follow(flow, handler);
                    self.end(handler);
                }
                Event::ShutDown => return Ok(()),
                _ => {}
            }
        }
    }

    /// The next event: as it arrives (within [`POLL`]); for a paced handler once the run started
    /// and while it goes on, one that waits already, or none after a sleep of the pace (or less,
    /// `due_in`).
    fn next_event(&self, handler: &impl Handler) -> Result<Event, crossbeam_channel::RecvTimeoutError> {
        use crossbeam_channel::{RecvTimeoutError, TryRecvError};
        // Not before the run started: a handler counts its time from that event.
        let Some(pace) = handler.pace().filter(|_| self.out.started && !self.ending) else {
            return self.h.events.recv_timeout(POLL);
        };
        match self.h.events.try_recv() {
            Ok(ev) => Ok(ev),
            Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {
                std::thread::sleep(handler.due_in().map_or(pace, |d| d.min(pace)).min(POLL));
                Err(RecvTimeoutError::Timeout)
            }
        }
    }

    fn follow(&mut self, flow: Flow, handler: &mut impl Handler) {
        match flow {
            Flow::Go => {}
            Flow::End => self.end(handler),
            Flow::Fail(e) => {
                self.out.errors.push(e);
                self.end(handler);
            }
        }
    }

    /// Asks the sampler to shut down and arms the deadline, the first time only.
    fn end(&mut self, handler: &mut impl Handler) {
        if !self.ending {
            self.ending = true;
            self.h.begin_shutdown(TEARDOWN_DEADLINE);
            handler.ending();
        }
    }
}

/// Hands the markers received so far to `handler`.
fn deliver(l: &Listener, handler: &mut impl Handler) {
    let got = l.drain(usize::MAX);
    if !got.is_empty() {
        handler.markers(got);
    }
}

/// Prints a line for the user; a closed stdout is no reason to fail.
pub fn say(line: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// The rows a headless command received, counted apart by what they are: the groups' samples
/// (their rate is the run's), telemetry reads (at most ten a second) and derived samples (one per
/// sample of the stream that drives them): one sum read as a contradiction ("12 502 samples a
/// second" of a run whose device made 6 250 reports a second and one derived series).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    /// Rows of the run's groups, summed over streams.
    pub samples: u64,
    /// Rows of the Sysman streams.
    pub telemetry: u64,
    /// Rows of the derived streams (`--derive`).
    pub derived: u64,
}

impl Rows {
    /// Counts `n` rows of stream `stream` of run `info`.
    pub fn count(&mut self, info: &RunInfo, stream: usize, n: u64) {
        let s = info.streams.get(stream);
        *if s.is_some_and(zescope_model::derive::is_derived) {
            &mut self.derived
        } else if info.is_telemetry(stream) {
            &mut self.telemetry
        } else {
            &mut self.samples
        } += n;
    }
}

impl std::fmt::Display for Rows {
    /// "4960 samples", "4960 samples and 50 telemetry reads", "4960 samples, 50 telemetry reads
    /// and 4960 derived samples".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use zescope_model::view::text::plural;
        let mut parts = vec![plural(self.samples, "sample", "samples")];
        if self.telemetry > 0 {
            parts.push(plural(self.telemetry, "telemetry read", "telemetry reads"));
        }
        if self.derived > 0 {
            parts.push(plural(self.derived, "derived sample", "derived samples"));
        }
        let last = parts.pop().unwrap_or_default();
        match parts.is_empty() {
            true => write!(f, "{last}"),
            false => write!(f, "{} and {last}", parts.join(", ")),
        }
    }
}

pub mod derived;

#[cfg(test)]
mod tests;
