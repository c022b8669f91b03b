//! `zescope record`: sample headless for a while and write what was recorded.
//!
//! It goes through the same sampler as the GUI, in the run loop it shares with `serve`
//! (`crate::commands::headless`: termination, the 3 s teardown deadline, notices, errors, the final
//! shutdown). What is its own is `RecordRun`, the loop's handler: a CSV header or session head
//! when the run starts, rows as batches arrive, and the end on its duration (counted
//! from the run's start) or its workload's exit, besides SIGINT and SIGTERM; everything received
//! up to then is written (a sample stamped after the duration's end, which the last read of a
//! run read in batches brings, is not). CSV rows are flushed every second, so even a killed
//! `record` keeps what came before; a session (`.ron`) is checkpointed every 30 s in the
//! background, each checkpoint appending what is new to the file (a journal,
//! `zescope_model::session::journal`), and written whole at the end, so a `record` killed at any
//! moment leaves its last checkpoint. With telemetry, the processes using the devices go with it:
//! into the session, or beside a CSV as `NAME.processes.csv`.
//!
//! While it records it listens for the workload's markers (`zescope_model::markers`) and prints where;
//! with a command after `--` it starts that command once sampling runs, with `ZESCOPE_MARKERS`
//! set, and stops recording when it exits.

use std::time::{Duration, Instant};

use crate::commands::headless::{self, Flow, Handler, say};
use crate::commands::pick::unrecorded;
use crate::signals::Termination;
use zescope_model::session::Recorder;
use zescope_model::view::text::plural;
use zescope_sampler::{Health, Inventory, RunConfig, RunInfo, SampleBatch, StopReason};
use zescope_ze::Source;

mod csv_out;
mod out;
mod perfetto_out;
mod remote;
mod summary;
#[cfg(test)]
mod summary_tests;
mod triggered;
#[cfg(test)]
mod until_tests;
mod view;
mod workload;
use csv_out::CsvOut;
use out::{Out, write_rows};
use perfetto_out::PerfettoOut;
pub use summary::Summary;

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
    pub via: zescope_sampler::Via,
    /// Also record the device's telemetry (Sysman: clocks, power, temperature, engines, memory).
    pub telemetry: bool,
    /// How long to record, counted from the run's start (not from opening the source); with a
    /// `command`, recording also ends when it exits.
    pub duration: Duration,
    /// A workload to start once sampling runs (program and arguments; empty: none), with
    /// `ZESCOPE_MARKERS` naming the markers socket.
    pub command: Vec<String>,
    /// The output: a `.ron` extension (any case) writes a session, anything else a CSV; `None`:
    /// only `perfetto` (one of the two is given).
    pub out: Option<std::path::PathBuf>,
    /// A Perfetto trace written as the run records (`--perfetto`), beside `out` or alone.
    pub perfetto: Option<std::path::PathBuf>,
    /// How many markers the workload may send (rate, burst, count kept).
    pub markers: zescope_model::markers::Limits,
    /// `--trigger`: when any is given, only the time around their firings is written (`pre`
    /// before, `post` after each), and the firings are listed in `NAME.firings.csv`.
    pub triggers: Vec<zescope_model::triggers::Trigger>,
    /// `--derive`: series derived from the others, recorded as `Derived/NAME`.
    pub derive: Vec<zescope_model::derive::Derivation>,
    /// Time kept before each firing.
    pub pre: Duration,
    /// Time kept after each firing.
    pub post: Duration,
    /// `--view`: record the series this view names (`record/view.rs`).
    pub view: Option<zescope_model::viewfile::ViewFile>,
    /// `--connect HOST:PORT`: record a `serve`'s run from its live feed (`record/remote.rs`).
    pub connect: Option<String>,
    /// `--token-file`, with `connect`.
    pub token_file: Option<std::path::PathBuf>,
    /// `--otlp`: the run also pushed to an OpenTelemetry Collector (docs/otel.md).
    pub otlp: Option<zescope_otlp::Config>,
    /// `--memory-cap`: the store's cap in bytes; `None`: `zescope_store::default_cap`.
    pub memory_cap: Option<u64>,
}

impl RecordArgs {
    /// A recorder of a session to `path` with the store this recording's memory cap allows, once
    /// `path` is known to be writable (before a sample is taken, not when the recording ends).
    fn recorder(&self, path: std::path::PathBuf, inventory: Inventory) -> Result<Recorder, String> {
        zescope_model::session::check_writable(&path).map_err(|e| format!("cannot write --out: {e}"))?;
        let cap = self.memory_cap.map_or_else(zescope_store::default_cap, |c| usize::try_from(c).unwrap_or(usize::MAX));
        let mut r = Recorder::with_store(path, inventory, zescope_store::Store::new(cap));
        r.set_marker_cap(self.markers.per_session);
        Ok(r)
    }
}

/// How long a recording's samples may wait for the main thread (`Handler::pace`).
const RECORD_PACE: Duration = Duration::from_millis(100);
/// How long a recording's streamed reports may wait in the driver's buffer
/// (`sampler::Options::batch_interval`): nobody watches them live, so the sampler wakes for them
/// 10 times a second instead of 50 (the window's and `serve`'s `sampler::BATCH_INTERVAL`): at
/// 100k reports a second 15 wake-ups a second where 50 ms gave 27 (`docs/benchmarks.md`, "The
/// 100k-reports row with the median's interval"; the slowdown did not move with them there: the
/// row's cost is per report).
const RECORD_BATCH: Duration = Duration::from_millis(100);

/// Records until the duration, the workload's exit or a signal; prints what was written and
/// every error of the run (status 1 when there was one, else the workload's status: its code, or
/// 128 + the signal that ended it).
pub fn main(args: &RecordArgs) -> Result<std::process::ExitCode, String> {
    let stop = Termination::install();
    let summary = record(args, &stop)?;
    let written: Vec<String> = args.out.iter().chain(&args.perfetto).map(|p| p.display().to_string()).collect();
    println!("{summary}; wrote {}", written.join(", "));
    for e in &summary.errors {
        eprintln!("zescope: {e}");
    }
    if !summary.errors.is_empty() {
        return Ok(super::status(true));
    }
    // The workload's own status, as `time` and `strace` give it: a script can test the workload
    // through zescope (`zescope record --out r.ron -- make test && …`).
    Ok(summary.workload.map_or(std::process::ExitCode::SUCCESS, workload::exit_code))
}

/// Runs a `record` until `args.duration` has passed since the run started or `stop` is
/// requested; the CSV or session is at `args.out` afterwards (also on error, with what was
/// recorded). Errs, for the user, when no run could start (the workload after `--` cannot be
/// found, no device or group matches, the source failed, the sampler did not answer within 30 s, `--out` cannot be created: checked first) or
/// the output could not be written; errors during a run are in [`Summary::errors`] instead.
pub fn record(args: &RecordArgs, stop: &Termination) -> Result<Summary, String> {
    if let Some(addr) = &args.connect {
        return remote::record(args, addr, stop);
    }
    // The workload is looked for first: a typo in it neither samples nor truncates --out.
    if let Some(program) = args.command.first() {
        workload::find(program)?;
    }
    let listener = headless::listen_for_markers(args.markers, !args.command.is_empty())?;
    let (h, inv, mut targets) =
        headless::open((args.source, RECORD_BATCH), &args.devices, &args.groups, &args.metrics, args.via)?;
    if let Some(v) = &args.view {
        // Without --device: the devices the view names something of, not the first one found.
        let named = if args.devices.is_empty() { view::devices(v, &inv) } else { Vec::new() };
        if !named.is_empty() {
            targets = crate::commands::pick::pick_targets(&inv, &named, &[], &[], args.via)?;
        }
        view::narrow(v, &inv, &mut targets)?;
    }
    for t in &mut targets {
        t.custom_group = args.custom_group;
    }
    crate::commands::pick::check_metrics(&inv, &targets)?;
    // A name of a group, metric or device the run leaves out is said before anything is written
    // (with --view the view file picks the groups, and --group is refused: the run's own check
    // names what is near).
    let derive = view::derivations(&args.derive, args.view.as_ref());
    if args.view.is_none() {
        unrecorded::check(&inv, &targets, args.via, &unrecorded::named(&derive, &args.triggers))?;
    }
    let cfg = RunConfig { targets, interval: args.interval, via: args.via, telemetry: args.telemetry };
    if args.out.is_none() && args.perfetto.is_none() {
        return Err("nothing to write: give --out and/or --perfetto".into());
    }
    let push = args.otlp.clone().map(|c| (crate::commands::otlp::Push::new(c), inv.devices.clone()));
    let perfetto = match &args.perfetto {
        Some(p) => Some(Box::new(PerfettoOut::create(p.clone(), inv.clone(), args.markers.per_session)?)),
        None => None,
    };
    let out = match &args.out {
        Some(o) if o.extension().is_some_and(|e| e.eq_ignore_ascii_case("ron")) => {
            Some(Out::Session(Box::new(args.recorder(o.clone(), inv)?)))
        }
        Some(o) => {
            let file = std::fs::File::create(o).map_err(|e| format!("cannot create {}: {e}", o.display()))?;
            Some(Out::Csv(Box::new(CsvOut::new(file, o.clone(), args.markers.per_session))))
        }
        None => None,
    };
    let mut rec = RecordRun {
        args,
        listener: listener.as_ref(),
        out,
        perfetto,
        run: None,
        run_started: Instant::now(),
        until_ns: i64::MAX,
        last_flush: Instant::now(),
        workload: None,
        summary: Summary::default(),
        triggered: (!args.triggers.is_empty())
            .then(|| triggered::Triggered::new(args.triggers.clone(), args.pre, args.post)),
        push,
    };
    let ran = headless::run(h, cfg, listener.as_ref(), stop, &mut headless::derived::Derived::new(derive, &mut rec));
    let outcome = match ran {
        Ok(o) => o,
        Err(e) => {
            // Refused before a line was written (a trigger naming nothing): no empty CSV is left.
            if let (Some(Out::Csv(_)), Some(path)) = (&rec.out, &args.out)
                && std::fs::metadata(path).is_ok_and(|m| m.len() == 0)
            {
                let _ = std::fs::remove_file(path);
            }
            return Err(e);
        }
    };
    if !outcome.started {
        return Err(outcome.errors.join("; "));
    }
    Ok(Summary { interrupted: outcome.interrupted, errors: outcome.errors, ..rec.summary })
}

/// A `record` in progress: what `record` does with the run's events.
struct RecordRun<'a> {
    args: &'a RecordArgs,
    listener: Option<&'a zescope_model::markers::Listener>,
    /// The session or CSV (`--out`), if asked for.
    out: Option<Out>,
    /// The Perfetto trace (`--perfetto`), if asked for.
    perfetto: Option<Box<PerfettoOut>>,
    /// The run being recorded, once it started.
    run: Option<RunInfo>,
    run_started: Instant,
    /// Where `--duration` ends on the samples' clock (CLOCK_MONOTONIC ns), once the run started:
    /// later samples are not recorded. (A run read in batches stops at its next read, up to a
    /// batch interval after the end, and that read drains the driver: a `--duration 1s` of a
    /// streamer recorded 1.10 s and said "6860 samples a second" of a device that makes 6250.)
    until_ns: i64,
    last_flush: Instant,
    /// The command after `--`, while it runs.
    workload: Option<std::process::Child>,
    summary: Summary,
    /// `--trigger`: what decides which samples are written.
    triggered: Option<triggered::Triggered>,
    /// `--otlp`: the export, and the inventory's devices it names.
    push: Option<(crate::commands::otlp::Push, Vec<zescope_sampler::DeviceEntry>)>,
}

impl RecordRun<'_> {
    /// `--duration` in ns (`i64::MAX`: until the workload exits or a signal).
    fn duration_ns(&self) -> i64 {
        i64::try_from(self.args.duration.as_nanos()).unwrap_or(i64::MAX)
    }

    /// An error writing `--out`, for the user.
    fn written<T>(&self, r: Result<T, String>) -> Result<T, String> {
        let path = self.args.out.as_deref().unwrap_or(std::path::Path::new("the output"));
        r.map_err(|e| format!("writing {}: {e}", path.display()))
    }

    /// An error writing the Perfetto trace, for the user.
    fn traced<T>(&self, r: std::io::Result<T>) -> Result<T, String> {
        let path = self.perfetto.as_ref().map_or(std::path::Path::new("the trace"), |p| p.path.as_path());
        r.map_err(|e| format!("writing {}: {e}", path.display()))
    }

    /// Starts the command after `--`, if any, with `ZESCOPE_MARKERS` naming the listener.
    fn start_workload(&mut self) -> Flow {
        let Some(program) = self.args.command.first() else { return Flow::Go };
        let mut c = std::process::Command::new(program);
        c.args(&self.args.command[1..]);
        if let Some(l) = self.listener {
            c.env(zescope_model::markers::ENV, l.path());
        }
        match c.spawn() {
            Ok(child) => {
                self.workload = Some(child);
                Flow::Go
            }
            Err(e) => Flow::Fail(format!("cannot start {program}: {e}")),
        }
    }
}

/// Where `--duration` (`duration_ns`) ends, given a batch whose first row is stamped
/// `first_ns`: `until_ns` (its length after the run started, as this thread learnt of it), or
/// its length after that row where the row came earlier — a streamer opened while the run was
/// set up reports from then on, and on a loaded machine this thread handles the start later
/// still (a `--duration 1050ms` of a streamer held 1.063 s of samples).
fn held_until(until_ns: i64, first_ns: Option<i64>, duration_ns: i64) -> i64 {
    first_ns.map_or(until_ns, |t| until_ns.min(t.saturating_add(duration_ns)))
}

/// Drops the rows of `b` stamped after `until_ns` (its rows are in time order); false when
/// every row was (a batch of none stays: it may carry a gap).
fn keep_until(b: &mut SampleBatch, until_ns: i64) -> bool {
    let (rows, keep) = (b.timestamps.len(), b.timestamps.partition_point(|&t| t <= until_ns));
    if keep < rows {
        let series = b.values.len() / rows;
        b.timestamps.truncate(keep);
        b.values.truncate(keep * series);
    }
    keep > 0 || rows == 0
}

impl Handler for RecordRun<'_> {
    /// Writes the header and starts the workload.
    fn started(&mut self, info: RunInfo) -> Result<Flow, String> {
        if let Some(t) = &mut self.triggered {
            t.started(&info)?;
        }
        if let Some(o) = self.out.as_mut() {
            let header = o.header(&info);
            self.written(header)?;
        }
        if let Some(p) = self.perfetto.as_mut() {
            let r = p.started(&info);
            self.traced(r)?;
        }
        if let Some((p, devices)) = &mut self.push {
            let (catalog, plan) = crate::commands::otlp::plan(&info, devices);
            p.started(&info, &catalog, std::sync::Arc::new(plan))?;
        }
        self.summary.notices.extend(info.notices.iter().cloned());
        self.run_started = Instant::now();
        self.until_ns = zescope_sampler::monotonic_ns().saturating_add(self.duration_ns());
        self.run = Some(info);
        Ok(if self.workload.is_none() { self.start_workload() } else { Flow::Go })
    }

    fn samples(&mut self, mut b: SampleBatch) -> Result<(), String> {
        let Some(info) = &self.run else { return Ok(()) };
        self.until_ns = held_until(self.until_ns, b.timestamps.first().copied(), self.duration_ns());
        if !keep_until(&mut b, self.until_ns) {
            return Ok(());
        }
        self.summary.count(info, &b);
        if let Some((p, _)) = &mut self.push {
            p.samples(&b);
        }
        let (out, perfetto) = (&mut self.out, &mut self.perfetto);
        let Some(t) = &mut self.triggered else {
            return write_rows(self.args, out, perfetto, info, &b);
        };
        let fired = t.samples(&b, &mut |kept| write_rows(self.args, out, perfetto, info, &kept))?;
        for f in fired {
            let name = format!("trigger: {}", self.args.triggers.get(f.trigger).map_or("", |t| t.text.as_str()));
            let m = zescope_model::markers::Received { kind: zescope_markers::Kind::Instant, t_ns: f.t_ns, name };
            if let Some(o) = out.as_mut() {
                o.marker(&m);
            }
            if let Some(p) = perfetto.as_mut() {
                p.marker(&m).map_err(|e| format!("writing {}: {e}", p.path.display()))?;
            }
        }
        Ok(())
    }

    fn processes(&mut self, p: zescope_sampler::processes::ProcessSnapshot) {
        if let Some(o) = self.out.as_mut() {
            o.processes(self.run.as_ref(), &p);
        }
    }

    fn health(&mut self, s: Health) {
        self.summary.health = Some(s);
    }

    fn notice(&mut self, _run: u64, message: String) {
        self.summary.notices.push(message);
    }

    fn markers(&mut self, markers: Vec<zescope_model::markers::Received>) {
        self.summary.markers += markers.len() as u64;
        if let Some(o) = self.out.as_mut() {
            markers.iter().for_each(|m| o.marker(m));
        }
        if let Some(p) = self.perfetto.as_mut() {
            // A failure here shows again at the next flush or at the end, which report it.
            for m in &markers {
                if let Err(e) = p.marker(m) {
                    log::warn!("writing {}: {e}", p.path.display());
                    break;
                }
            }
        }
        if let (Some(t), Some(info)) = (&mut self.triggered, &self.run) {
            let (out, perfetto) = (&mut self.out, &mut self.perfetto);
            for m in markers.iter().filter(|m| m.kind != zescope_markers::Kind::End) {
                if let Err(e) = t.marker(&m.name, m.t_ns, &mut |kept| write_rows(self.args, out, perfetto, info, &kept))
                {
                    say(&format!("zescope: {e}"));
                }
            }
        }
    }

    fn stopped(&mut self, run: u64, _reason: StopReason) -> Flow {
        if let Some(o) = self.out.as_mut() {
            o.stopped(run);
        }
        Flow::Go
    }

    /// Samples are not watched live: they may wait for the loop (`headless`, pacing), which
    /// wakes the main thread 10 times a second instead of once per batch.
    fn pace(&self) -> Option<Duration> {
        Some(RECORD_PACE)
    }

    /// The duration's end, once the run started.
    fn due_in(&self) -> Option<Duration> {
        self.run.is_some().then(|| self.args.duration.saturating_sub(self.run_started.elapsed()))
    }

    /// Ends on the duration or the workload's exit; flushes the output every second.
    fn tick(&mut self) -> Result<Flow, String> {
        let mut flow = Flow::Go;
        if let Some(Ok(Some(status))) = self.workload.as_mut().map(std::process::Child::try_wait) {
            self.summary.workload = Some(status);
            self.workload = None;
            flow = Flow::End;
        }
        if self.run.is_some() && self.run_started.elapsed() >= self.args.duration {
            flow = Flow::End;
        }
        if self.last_flush.elapsed() > Duration::from_secs(1) {
            if let Some(o) = self.out.as_mut() {
                let flushed = o.flush();
                self.written(flushed)?;
            }
            if let Some(p) = self.perfetto.as_mut() {
                let flushed = p.flush();
                self.traced(flushed)?;
            }
            self.last_flush = Instant::now();
        }
        Ok(flow)
    }

    /// The run's time: to now, or at most its duration (what came later is not recorded).
    fn ending(&mut self) {
        if self.run.is_some() {
            self.summary.elapsed = self.run_started.elapsed().min(self.args.duration);
        }
    }

    /// Fills in the summary's markers and writes the rest of the output.
    fn finish(&mut self) -> Result<(), String> {
        if let Some((p, _)) = &mut self.push {
            let stats = p.stats();
            p.stop();
            if let Some(s) = stats {
                say(&format!(
                    "OTLP: {} exported, {} dropped ({} failed)",
                    plural(s.exported(), "point", "points"),
                    s.dropped(),
                    plural(s.failed(), "export", "exports")
                ));
            }
        }
        if self.summary.elapsed.is_zero() && self.run.is_some() {
            self.summary.elapsed = self.run_started.elapsed().min(self.args.duration);
        }
        self.summary.marker_drops = self.listener.map(zescope_model::markers::Listener::counts);
        let kept = match (&self.out, &self.perfetto) {
            (Some(o), _) => Some(o.markers()),
            (None, Some(p)) => Some(&p.markers),
            (None, None) => None,
        };
        if let Some(kept) = kept {
            (self.summary.markers_over_cap, self.summary.marker_cap) = (kept.over_cap, kept.cap());
            (self.summary.markers, self.summary.unmatched_ends) = (kept.len() as u64, kept.unmatched_ends);
        }
        if let Some(c) = &self.workload {
            say(&format!("zescope: the workload (pid {}) still runs", c.id()));
        }
        if let Some(t) = &self.triggered {
            let base =
                self.args.out.as_deref().or(self.args.perfetto.as_deref()).unwrap_or(std::path::Path::new("run"));
            let index = t.write_index(base)?;
            self.summary.triggered = Some((t.count(), t.windows(), t.kept, index));
        }
        if let Some(p) = self.perfetto.as_mut() {
            let finished = p.finish();
            self.traced(finished)?;
        }
        let Some(o) = self.out.as_mut() else { return Ok(()) };
        let finished = o.finish();
        self.written(finished)
    }
}
