//! `zescope record`: sample headless for a while and write what was recorded.
//!
//! It goes through the same sampler as the GUI: open the source, pick device and group, start,
//! collect batches, and on the duration's end, SIGINT or SIGTERM, shut the sampler down (its
//! teardown) and write everything received up to then. CSV rows are written as batches arrive and
//! flushed every second, so even a killed recording keeps what came before; a session (`.ron`) is
//! saved atomically every 30 s in the background and at the end, so a killed recording leaves
//! the last checkpoint.
//!
//! While it records it listens for the workload's markers (`crate::markers`) and prints where;
//! with a command after `--` it starts that command once sampling runs, with `ZESCOPE_MARKERS`
//! set, and stops recording when it exits.

use std::time::{Duration, Instant};

use crate::pick::pick_targets;
use crate::sampler::{self, Command, Event, Options, RunConfig, RunInfo, Stats};
use crate::signals::Termination;
use crate::ze::Source;

mod csv_out;
use csv_out::CsvOut;

/// What to record and where: the options of `zescope record`, as `src/main.rs` takes them from
/// the command line.
#[derive(Clone, Debug)]
pub struct RecordArgs {
    /// Where metrics come from (the real loader, the simulated device, or the first that works).
    pub source: Source,
    /// `--device`, each: an index ("1"), a sub-device ("0.1") or part of a device name; several
    /// are recorded together on one clock; empty: the first device with a group that exports
    /// memory and can be sampled.
    pub devices: Vec<String>,
    /// Metric groups to sample: `GROUP` (for every device that has it; with one device, its
    /// group) or `DEVICE:GROUP`; a device named by none: its first sampleable group that
    /// exports memory.
    pub groups: Vec<String>,
    /// Only these metrics of the groups (with several devices, each device takes those its
    /// groups have); empty: all of them.
    pub metrics: Vec<String>,
    /// Combine `metrics` into one metric group created for the run.
    pub custom_group: bool,
    /// Sampling interval; the sampler clamps it into 100 µs..=10 s.
    pub interval: Duration,
    /// `--via`: exported memory, the time-based streamer, or auto (export where offered).
    pub via: crate::sampler::Via,
    /// Also record the device's telemetry (Sysman: clocks, power, temperature, engines, memory).
    pub telemetry: bool,
    /// How long to record, counted from the run's start (not from opening the source); with a
    /// `command`, recording also ends when it exits.
    pub duration: Duration,
    /// A workload to start once sampling runs (program and arguments; empty: none), with
    /// `ZESCOPE_MARKERS` naming the markers socket.
    pub command: Vec<String>,
    /// The output: a `.ron` extension (any case) writes a session, anything else a CSV.
    pub out: std::path::PathBuf,
    /// How many markers the workload may send (rate, burst, count kept).
    pub markers: crate::markers::Limits,
}

/// How long `record` waits for the sampler's teardown after the recording ends (duration, error,
/// Ctrl-C or SIGTERM); a second Ctrl-C exits at once (`signals`).
const TEARDOWN_DEADLINE: Duration = Duration::from_secs(3);

/// What a recording did, for the summary line.
#[derive(Debug, Default)]
pub struct Summary {
    /// Sample rows received, summed over streams (a tick that reads two streams counts twice).
    pub samples: u64,
    /// How long the run went, from its start to the end of recording (zero if it never started).
    pub elapsed: Duration,
    /// The sampler's last health report; `None` when none arrived (a run shorter than one
    /// stats period).
    pub stats: Option<Stats>,
    /// How long the run had been going when `stats` was made (whole-run rates divide by it).
    pub stats_after: Duration,
    /// The recording ended on SIGINT or SIGTERM rather than after its duration.
    pub interrupted: bool,
    /// Errors the sampler reported during the run, and a teardown that missed its deadline, one
    /// line each; the output file still holds what was recorded. `zescope record` exits non-zero
    /// when there is any.
    pub errors: Vec<String>,
    /// Optional features the driver lacks, turned off for the run.
    pub notices: Vec<String>,
    /// Markers received from the workload.
    pub markers: u64,
    /// What the markers listener dropped (malformed, too fast, queue full, not the user's);
    /// `None`: no listener.
    pub marker_drops: Option<crate::markers::Counts>,
    /// Markers refused because the recording held its limit of them already.
    pub markers_over_cap: u64,
    /// That limit.
    pub marker_cap: usize,
    /// How the command after `--` ended; `None` when there was none or it still runs.
    pub workload: Option<std::process::ExitStatus>,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "recorded {} samples in {:.2} s", self.samples, self.elapsed.as_secs_f64())?;
        if let Some(s) = &self.stats {
            // Whole-run figures: ticks over the run's time up to the last stats, not the last
            // stats window's rate.
            let secs = self.stats_after.as_secs_f64();
            let achieved = if secs > 0.0 { s.ticks as f64 / secs } else { 0.0 };
            write!(
                f,
                ": {:.1} Hz achieved of {:.1} Hz requested, {} late ticks, {} dropped samples, {} torn reads",
                achieved, s.requested_hz, s.late_ticks, s.dropped_samples, s.torn_reads
            )?;
            if s.unchanged_reads > 0 || s.clock_resets > 0 {
                write!(f, ", {} unchanged reads, {} device clock resets", s.unchanged_reads, s.clock_resets)?;
            }
            if s.dropped_reports > 0 {
                write!(f, ", {} streamer reads said the driver dropped reports", s.dropped_reports)?;
            }
        }
        let c = self.marker_drops.unwrap_or_default();
        if self.markers > 0 || c.dropped() + self.markers_over_cap > 0 {
            write!(f, "; {} markers", self.markers)?;
            if c.dropped() + self.markers_over_cap > 0 {
                write!(
                    f,
                    " ({} malformed, {} over the rate limit, {} over the queue, {} over the limit of {} per recording, \
                     {} from other users, {} without credentials dropped)",
                    c.malformed,
                    c.over_rate,
                    c.queue_full,
                    self.markers_over_cap,
                    self.marker_cap,
                    c.other_user,
                    c.no_credentials
                )?;
            }
        }
        if let Some(s) = self.workload {
            write!(f, "; the workload exited with {s}")?;
        }
        if self.interrupted {
            write!(f, " (interrupted)")?;
        }
        Ok(())
    }
}

/// Runs a recording until `args.duration` has passed since the run started or `stop` is
/// requested; the CSV or session is at `args.out` afterwards (also on error, with what was
/// recorded). Errs, with the reason for the user, when no run could start (no device or group
/// matches, the source failed, the sampler did not answer within 30 s) or the output could not be
/// written; errors during a run are in [`Summary::errors`] instead.
pub fn record(args: &RecordArgs, stop: &Termination) -> Result<Summary, String> {
    let listener = match crate::markers::Listener::start_default(args.markers) {
        Ok(l) => {
            say(&format!("zescope: markers: {}={}", crate::markers::ENV, l.path().display()));
            Some(l)
        }
        Err(e) if args.command.is_empty() => {
            say(&format!("zescope: not listening for markers: {e}"));
            None
        }
        Err(e) => return Err(e),
    };
    let mut workload: Option<std::process::Child> = None;
    let mut h = sampler::spawn_source(args.source, Options::default());
    let inv = h.wait_inventory(Duration::from_secs(30))?;
    let mut targets = pick_targets(&inv, &args.devices, &args.groups, &args.metrics, args.via)?;
    for t in &mut targets {
        t.custom_group = args.custom_group;
    }
    let cfg = RunConfig { targets, interval: args.interval, via: args.via, telemetry: args.telemetry };
    let as_session = args.out.extension().is_some_and(|e| e.eq_ignore_ascii_case("ron"));
    let mut out = if as_session {
        let mut r = crate::session::Recorder::new(args.out.clone(), inv.clone());
        r.set_marker_cap(args.markers.per_recording);
        Out::Session(Box::new(r))
    } else {
        let file =
            std::fs::File::create(&args.out).map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
        Out::Csv(Box::new(CsvOut::new(file, args.out.clone(), args.markers.per_recording)))
    };
    h.send(Command::Start(cfg));
    let mut summary = Summary::default();
    let mut run: Option<RunInfo> = None;
    let mut run_started = Instant::now();
    let mut last_flush = Instant::now();
    // Set when the recording ends: the teardown has until then, once.
    let mut deadline: Option<Instant> = None;
    let end = |deadline: &mut Option<Instant>| {
        if deadline.is_none() {
            h.send(Command::Shutdown);
            *deadline = Some(Instant::now() + TEARDOWN_DEADLINE);
        }
    };
    loop {
        if let Some(l) = &listener {
            for m in l.drain(usize::MAX) {
                summary.markers += 1;
                out.marker(&m);
            }
        }
        let exited = match workload.as_mut().map(std::process::Child::try_wait) {
            Some(Ok(Some(status))) => {
                summary.workload = Some(status);
                workload = None;
                true
            }
            _ => false,
        };
        if deadline.is_none() && (stop.requested() || exited || run.is_some() && run_started.elapsed() >= args.duration)
        {
            summary.interrupted = stop.requested();
            summary.elapsed = if run.is_some() { run_started.elapsed() } else { Duration::ZERO };
            end(&mut deadline);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            summary.errors.push(format!("the sampler's teardown did not finish within {TEARDOWN_DEADLINE:?}"));
            break;
        }
        let ev = match h.events.recv_timeout(Duration::from_millis(50)) {
            Ok(ev) => ev,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
        };
        match ev {
            Event::RunStarted(info) => {
                out.header(&info).map_err(|e| format!("writing {}: {e}", args.out.display()))?;
                for n in &info.notices {
                    crate::sampler::say_notice(n);
                }
                summary.notices.extend(info.notices.iter().cloned());
                run_started = Instant::now();
                run = Some(info);
                if let Some(program) = args.command.first()
                    && workload.is_none()
                {
                    let mut c = std::process::Command::new(program);
                    c.args(&args.command[1..]);
                    if let Some(l) = &listener {
                        c.env(crate::markers::ENV, l.path());
                    }
                    match c.spawn() {
                        Ok(child) => workload = Some(child),
                        Err(e) => {
                            summary.errors.push(format!("cannot start {program}: {e}"));
                            end(&mut deadline);
                        }
                    }
                }
            }
            Event::Notice { message, .. } => {
                crate::sampler::say_notice(&message);
                summary.notices.push(message);
            }
            Event::Samples(b) => {
                if let Some(info) = &run {
                    summary.samples += b.timestamps.len() as u64;
                    out.rows(info, &b).map_err(|e| format!("writing {}: {e}", args.out.display()))?;
                }
            }
            Event::Stats(s) => {
                summary.stats = Some(s);
                summary.stats_after = run_started.elapsed();
            }
            Event::Error(e) => {
                let msg = match &e.hint {
                    Some(h) => format!("{e} ({h})"),
                    None => e.to_string(),
                };
                if run.is_none() {
                    end(&mut deadline);
                }
                summary.errors.push(msg);
            }
            Event::RunStopped { run, .. } => {
                out.stopped(run);
                if deadline.is_none() && summary.elapsed.is_zero() {
                    summary.elapsed = run_started.elapsed();
                }
                end(&mut deadline);
            }
            Event::ShutDown => break,
            _ => {}
        }
        if last_flush.elapsed() > Duration::from_secs(1) {
            out.flush().map_err(|e| format!("writing {}: {e}", args.out.display()))?;
            last_flush = Instant::now();
        }
    }
    if summary.elapsed.is_zero() && run.is_some() {
        summary.elapsed = run_started.elapsed();
    }
    // Markers sent up to the end (the workload's last ones arrive after it exits).
    if let Some(l) = &listener {
        std::thread::sleep(Duration::from_millis(20));
        for m in l.drain(usize::MAX) {
            summary.markers += 1;
            out.marker(&m);
        }
        summary.marker_drops = Some(l.counts());
    }
    let kept = out.markers();
    (summary.markers_over_cap, summary.marker_cap) = (kept.over_cap, kept.cap());
    if let Some(c) = &workload {
        say(&format!("zescope: the workload (pid {}) still runs", c.id()));
    }
    out.finish().map_err(|e| format!("writing {}: {e}", args.out.display()))?;
    // Within what is left of the same deadline (none, if it has passed).
    let left = deadline.map_or(TEARDOWN_DEADLINE, |d| d.saturating_duration_since(Instant::now()));
    if h.shutdown(left).is_err() && !summary.errors.iter().any(|e| e.contains("teardown did not finish")) {
        summary.errors.push(format!("the sampler's teardown did not finish within {TEARDOWN_DEADLINE:?}"));
    }
    if run.is_none() {
        return Err(summary.errors.join("; "));
    }
    Ok(summary)
}

/// Prints a line for the user; a closed stdout is no reason to fail.
fn say(line: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// Where a recording goes.
enum Out {
    Csv(Box<CsvOut>),
    Session(Box<crate::session::Recorder>),
}

impl Out {
    fn header(&mut self, info: &RunInfo) -> Result<(), String> {
        match self {
            Out::Csv(c) => c.header(info).map_err(|e| e.to_string()),
            Out::Session(s) => {
                s.started(info);
                Ok(())
            }
        }
    }

    fn rows(&mut self, info: &RunInfo, b: &crate::sampler::SampleBatch) -> Result<(), String> {
        match self {
            Out::Csv(c) => c.rows(info, b).map_err(|e| e.to_string()),
            Out::Session(s) => s.samples(b),
        }
    }

    fn marker(&mut self, m: &crate::markers::Received) {
        match self {
            Out::Csv(c) => {
                c.markers.apply(m.kind, m.t_ns, &m.name);
            }
            Out::Session(s) => s.marker(m.kind, m.t_ns, &m.name),
        }
    }

    /// The markers kept so far.
    fn markers(&self) -> &crate::view::Markers {
        match self {
            Out::Csv(c) => &c.markers,
            Out::Session(s) => s.markers(),
        }
    }

    fn stopped(&mut self, run: u64) {
        if let Out::Session(s) = self {
            s.stopped(run);
        }
    }

    /// CSV: flush the rows so far. Session: checkpoint the file in the background now and then.
    fn flush(&mut self) -> Result<(), String> {
        match self {
            Out::Csv(c) => c.flush().map_err(|e| e.to_string()),
            Out::Session(s) => s.checkpoint(),
        }
    }

    /// Everything written and durable.
    fn finish(&mut self) -> Result<(), String> {
        match self {
            Out::Csv(c) => {
                c.finish().map_err(|e| e.to_string())?;
                c.write_markers()
            }
            Out::Session(s) => s.finish(),
        }
    }
}
