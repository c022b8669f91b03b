//! `zescope serve`: the OpenMetrics endpoint Prometheus scrapes.
//!
//! The same sampler thread and teardown as the window and `record`: this loop receives the
//! sampler's events, files them through [`Ingest`] into a small store of its own, and publishes
//! the newest value of every counter as a [`Snapshot`]. The HTTP workers ([`http`]) only read
//! that snapshot, so no scrape touches Level Zero and no scrape can hold up the sampler (whose
//! outbox never blocks anyway). One run covers every device asked for, chosen with `record`'s
//! rules (`pick::pick_targets`), and their telemetry unless `--no-telemetry`; each series is
//! labelled with its own device. The run's families, labels and sample rules are planned once,
//! when it starts, by `zescope-openmetrics` ([`Catalog`], from [`RunDescription::live`]): the
//! same planner `export --openmetrics` backfills a saved session with. SIGINT/SIGTERM, or the run ending on an
//! error, end it through the sampler's one teardown. With `--textfile DIR` the same page
//! (Prometheus text) is written atomically to `DIR/zescope.prom` for node_exporter's textfile
//! collector.

pub mod http;
pub mod snapshot;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::pick::pick_targets;
use crate::sampler::{self, Command, Event, Options, RunConfig, StopReason, Via};
use crate::signals::Termination;
use crate::store::Store;
use crate::view::Ingest;
use crate::ze::Source;

pub use snapshot::{Format, Published, Snapshot, encode};

use crate::openmetrics::{Catalog, RunDescription};

/// The options of `zescope serve`, as `src/main.rs` takes them from the command line.
#[derive(Clone, Debug)]
pub struct ServeArgs {
    /// Where metrics come from.
    pub source: Source,
    /// The address to listen on (port 0: one the OS picks; the address is printed).
    pub listen: SocketAddr,
    /// `--device`, as for `record` (several: served together, each series labelled with its
    /// device); empty: the first device with a group that can be sampled.
    pub devices: Vec<String>,
    /// `--group`, as for `record` (`GROUP` or `DEVICE:GROUP`); a device named by none: its first
    /// group `via` reads, exported memory first.
    pub groups: Vec<String>,
    /// Sampling interval (clamped by the sampler into 100 µs..=10 s).
    pub interval: Duration,
    /// How to read the groups (exported memory, the metric streamer, or either).
    pub via: Via,
    /// Also serve the devices' telemetry (Sysman: clocks, throttle reasons, power, energy,
    /// temperatures, engines, memory), as `record` does.
    pub telemetry: bool,
    /// Write `zescope.prom` into this directory as well.
    pub textfile: Option<PathBuf>,
}

/// How long the teardown may take once serving ends.
const TEARDOWN_DEADLINE: Duration = Duration::from_secs(3);
/// The store's memory cap: serve keeps only what the newest values need.
const STORE_CAP: usize = 16 << 20;
/// The textfile is written at most this often (and at least every sampling interval above it).
const TEXTFILE_PERIOD: Duration = Duration::from_secs(1);

/// What `serve` reports when it ends.
#[derive(Debug, Default)]
pub struct Summary {
    /// Samples received.
    pub samples: u64,
    /// Markers received from workloads (counted; serve keeps no history to put them on).
    pub markers: u64,
    /// Ended by SIGINT/SIGTERM.
    pub interrupted: bool,
    /// Errors of the run (a run ended by an error makes `serve` exit non-zero).
    pub errors: Vec<String>,
}

/// Serves until SIGINT/SIGTERM or until the run ends; `listening` is called with the address once
/// the endpoint answers. Errs when nothing could be started (no device, group, address).
pub fn serve(args: &ServeArgs, stop: &Termination, listening: impl FnOnce(SocketAddr)) -> Result<Summary, String> {
    let mut h = sampler::spawn_source(args.source, Options::default());
    let inv = h.wait_inventory(Duration::from_secs(30))?;
    let targets = pick_targets(&inv, &args.devices, &args.groups, &[], args.via)?;
    if let Some(dir) = &args.textfile
        && !dir.is_dir()
    {
        return Err(format!("--textfile {}: no such folder", dir.display()));
    }
    let published = Published::default();
    let max_age = (args.interval * 5).max(Duration::from_secs(5));
    let server = http::Http::start(args.listen, published.clone(), http::Health { max_age })?;
    listening(server.addr);
    // Workloads may mark while served; only counted (serve keeps no history), but announced like
    // record's, so the same workload runs under either.
    let markers = match crate::markers::Listener::start_default(Default::default()) {
        Ok(l) => {
            say(&format!("zescope: markers: {}={}", crate::markers::ENV, l.path().display()));
            Some(l)
        }
        Err(e) => {
            say(&format!("zescope: not listening for markers: {e}"));
            None
        }
    };
    let cfg = RunConfig { targets, interval: args.interval, via: args.via, telemetry: args.telemetry };
    h.send(Command::Start(cfg));

    let mut store = Store::new(STORE_CAP);
    let mut ingest = Ingest::default();
    let mut snap = Snapshot::default();
    let mut summary = Summary::default();
    let mut deadline: Option<Instant> = None;
    let textfile_every = args.interval.max(TEXTFILE_PERIOD);
    let mut textfile_due = Instant::now();
    let end = |deadline: &mut Option<Instant>| {
        if deadline.is_none() {
            h.send(Command::Shutdown);
            *deadline = Some(Instant::now() + TEARDOWN_DEADLINE);
        }
    };
    loop {
        if let Some(l) = &markers {
            summary.markers += l.drain(usize::MAX).len() as u64;
        }
        if deadline.is_none() && stop.requested() {
            summary.interrupted = true;
            end(&mut deadline);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            summary.errors.push(format!("the sampler's teardown did not finish within {TEARDOWN_DEADLINE:?}"));
            break;
        }
        if let Some(dir) = &args.textfile
            && Instant::now() >= textfile_due
            && snap.catalog.is_some()
        {
            textfile_due = Instant::now() + textfile_every;
            if let Err(e) = write_textfile(dir, &published) {
                log::warn!("{e}");
            }
        }
        let ev = match h.events.recv_timeout(Duration::from_millis(50)) {
            Ok(ev) => ev,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
        };
        match ev {
            Event::RunStarted(info) => {
                for n in &info.notices {
                    sampler::say_notice(n);
                }
                let catalog = Catalog::new(&RunDescription::live(&info, &inv.devices));
                snap = Snapshot {
                    values: vec![f64::NAN; catalog.width],
                    catalog: Some(std::sync::Arc::new(catalog)),
                    running: true,
                    errors: snap.errors,
                    ..Snapshot::default()
                };
                ingest.run_started(&mut store, info);
                published.publish(snap.clone());
            }
            Event::Samples(b) => {
                let stored = match ingest.samples(&mut store, &b) {
                    Ok(n) => n,
                    Err(e) => {
                        log::warn!("serve: {e}");
                        0
                    }
                };
                if stored > 0 && newest(&mut snap, &ingest, &b) {
                    snap.samples += stored;
                    snap.last_sample = Some(Instant::now());
                    published.publish(snap.clone());
                }
            }
            Event::Stats(s) => {
                snap.stats = Some(s);
                published.publish(snap.clone());
            }
            Event::Notice { message, run } => {
                sampler::say_notice(&message);
                ingest.notice(run, message);
            }
            Event::Error(e) => {
                let msg = match &e.hint {
                    Some(h) => format!("{e} ({h})"),
                    None => e.to_string(),
                };
                eprintln!("zescope: {msg}");
                summary.errors.push(msg);
                snap.errors += 1;
                published.publish(snap.clone());
                if ingest.run.is_none() {
                    end(&mut deadline);
                }
            }
            Event::RunStopped { run, reason } => {
                ingest.run_stopped(&mut store, run);
                snap.running = false;
                published.publish(snap.clone());
                if reason == StopReason::Error && summary.errors.is_empty() {
                    summary.errors.push("the run ended on an error".into());
                }
                end(&mut deadline);
            }
            Event::ShutDown => break,
            _ => {}
        }
    }
    summary.samples = snap.samples;
    let left = deadline.map_or(TEARDOWN_DEADLINE, |d| d.saturating_duration_since(Instant::now()));
    if h.shutdown(left).is_err() && !summary.errors.iter().any(|e| e.contains("teardown did not finish")) {
        summary.errors.push(format!("the sampler's teardown did not finish within {TEARDOWN_DEADLINE:?}"));
    }
    server.stop();
    Ok(summary)
}

/// Takes the newest readable value of each series of `b` into `snap`; false when the batch is
/// not of the run in progress.
fn newest(snap: &mut Snapshot, ingest: &Ingest, b: &sampler::SampleBatch) -> bool {
    let (Some(catalog), Some(run)) = (&snap.catalog, &ingest.run) else { return false };
    let (Some(&start), Some(stream)) = (catalog.stream_starts.get(b.stream), run.info.streams.get(b.stream)) else {
        return false;
    };
    let k = stream.series.len();
    if k == 0 || b.values.len() < k {
        return false;
    }
    for (i, v) in snap.values[start..start + k].iter_mut().enumerate() {
        // The newest row that has this value (NaN: that read could not be decoded).
        if let Some(x) = b.values.chunks_exact(k).rev().map(|row| row[i]).find(|x| !x.is_nan()) {
            *v = x;
        }
    }
    true
}

/// Writes the newest snapshot as Prometheus text to `dir/zescope.prom`, atomically (a temporary
/// file that the textfile collector ignores, then a rename).
pub fn write_textfile(dir: &std::path::Path, published: &Published) -> Result<(), String> {
    let path = dir.join("zescope.prom");
    let text =
        encode(&published.get(), Instant::now(), Format::PrometheusText).map_err(|e| format!("--textfile: {e}"))?;
    crate::session::write_atomic(&path, |f| {
        use std::io::Write as _;
        f.write_all(text.as_bytes()).map_err(|e| crate::session::SessionError::io(&path, "cannot write", e))
    })
    .map_err(|e| format!("--textfile: {e}"))
}

/// Prints a line for the user; a closed stdout is no reason to fail.
fn say(line: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}
