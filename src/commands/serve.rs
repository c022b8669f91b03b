//! `zescope serve`: the OpenMetrics endpoint Prometheus scrapes.
//!
//! The same sampler thread and teardown as the window and `record`, in the run loop it shares
//! with `record` (`crate::commands::headless`: termination, the teardown deadline, notices, errors, the
//! final shutdown). What is its own is `Serving`, the loop's handler: it files the sampler's
//! events through [`Ingest`] into a small store of its own and publishes the newest value of
//! every counter as a [`Latest`]. The HTTP workers ([`http`]) only read those, so no
//! scrape touches Level Zero and no scrape can hold up the sampler (whose outbox never blocks
//! anyway). One run covers every device asked for, chosen with `record`'s rules
//! (`pick::pick_targets`), and their telemetry unless `--no-telemetry`; each series is labelled
//! with its own device. The run's families, labels and sample rules are planned once, when it
//! starts, by `zescope-openmetrics` ([`Catalog`], from [`RunDescription::live`]): the same
//! planner `export --openmetrics` backfills a saved session with. SIGINT/SIGTERM, or the run
//! ending on an error, end it through the sampler's one teardown; an error is said on stderr as
//! it comes. With `--textfile DIR` the same page (Prometheus text) is written atomically to
//! `DIR/zescope.prom` for node_exporter's textfile collector, from the loop's tick. With
//! `--processes`, each device's newest process snapshot gives the top N processes by memory
//! their own series (`processes.rs`, names from `zescope-openmetrics`' `processes`).
//!
//! The same listener offers the run's live feed at `/live` ([`live`], `docs/live-protocol.md`):
//! every sample, marker, firing, notice and health report, kept within `--history`, to at most
//! [`live::MAX_VIEWERS`] viewers over a WebSocket (beyond loopback only with `--token-file`'s
//! token). With `--save FILE` the run is also recorded as a session, written when serve ends.

pub mod http;
pub mod latest;
pub mod live;
mod processes;
pub mod xpumd;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::commands::headless::{self, Flow, Handler};
use crate::commands::pick::unrecorded;
use crate::signals::Termination;
use zescope_model::view::Ingest;
use zescope_model::view::text::plural;
use zescope_sampler::{self as sampler, Health, RunConfig, RunInfo, SampleBatch, StopReason, Via};
use zescope_store::Store;
use zescope_ze::Source;

pub use latest::{Format, Latest, Published, encode};

use zescope_openmetrics::{Catalog, RunDescription};

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
    /// `--processes`: serve the processes using each device, at most this many per device (the
    /// ones using the most device memory); `None`: no process series.
    pub processes: Option<usize>,
    /// `--trigger`: conditions whose firings are counted (`zescope_trigger_firings_total`).
    pub triggers: Vec<zescope_model::triggers::Trigger>,
    /// `--derive`: series derived from the others, served with a `derived` label.
    pub derive: Vec<zescope_model::derive::Derivation>,
    /// The live feed's history cap, bytes.
    pub history: usize,
    /// `--token-file`: viewers beyond loopback must send its token.
    pub token_file: Option<PathBuf>,
    /// `--save`: the run recorded as a session, written when serve ends.
    pub save: Option<PathBuf>,
    /// `--names`: which names the page serves.
    pub names: xpumd::NameSet,
    /// `--otlp`: the run also pushed to an OpenTelemetry Collector.
    pub otlp: Option<zescope_otlp::Config>,
}

/// The store's memory cap: serve keeps only what the newest values need.
const STORE_CAP: usize = 16 << 20;
/// The textfile is written at most this often (and at least every sampling interval above it).
const TEXTFILE_PERIOD: Duration = Duration::from_secs(1);

/// How long serve waits, once its run ended, for viewers to take what is left.
const VIEWERS_GRACE: Duration = Duration::from_secs(5);

/// What `serve` reports when it ends.
#[derive(Debug, Default)]
pub struct Summary {
    /// Rows received: the groups' samples, telemetry reads and derived samples apart, as
    /// `record` counts them.
    pub rows: headless::Rows,
    /// Markers received from workloads (counted; serve keeps no history to put them on).
    pub markers: u64,
    /// Ended by SIGINT/SIGTERM.
    pub interrupted: bool,
    /// Errors of the run (a run ended by an error makes `serve` exit non-zero).
    pub errors: Vec<String>,
}

/// Serves until SIGINT/SIGTERM or until the run ends; `listening` is called with the address once
/// Serves until a signal; prints the address once listening and a summary at the end (status 1
/// when the run had errors).
pub fn main(args: &ServeArgs) -> Result<std::process::ExitCode, String> {
    let stop = Termination::install();
    // stdout may be a pipe its reader closed (a supervisor that read the address): never a
    // reason to fail.
    let say = |line: String| {
        let mut out = std::io::stdout();
        let _ = std::io::Write::write_all(&mut out, line.as_bytes()).and_then(|()| std::io::Write::flush(&mut out));
    };
    let token = args.token_file.is_some();
    let listening = |addr: SocketAddr| {
        say(format!("zescope: serving http://{addr}/metrics\n"));
        eprintln!("zescope: {}", live_line(addr, token));
    };
    let summary = serve(args, &stop, listening)?;
    say(format!("zescope: {summary}\n"));
    Ok(super::status(!summary.errors.is_empty()))
}

/// Serves until `stop` is requested, calling `listening` with the address as soon as the
/// endpoint answers. Errs when nothing could be started (no device, group, address, or a
/// `--save` file that cannot be written).
pub fn serve(args: &ServeArgs, stop: &Termination, listening: impl FnOnce(SocketAddr)) -> Result<Summary, String> {
    let (h, inv, targets) =
        headless::open((args.source, sampler::BATCH_INTERVAL), &args.devices, &args.groups, &[], args.via)?;
    // A name of a group or device the run leaves out is said before anything is served.
    unrecorded::check(&inv, &targets, args.via, &unrecorded::named(&args.derive, &args.triggers))?;
    if let Some(dir) = &args.textfile
        && !dir.is_dir()
    {
        return Err(format!("--textfile {}: no such folder", dir.display()));
    }
    if let Some(save) = &args.save {
        zescope_model::session::check_writable(save).map_err(|e| format!("cannot write --save: {e}"))?;
    }
    let access = match &args.token_file {
        Some(path) => live::access::Access::from_token_file(path)?,
        None => live::access::Access::loopback_only(),
    };
    let feed = live::Feed::new(args.history, access);
    let published = Published::default();
    let max_age = (args.interval * 5).max(Duration::from_secs(5));
    let pages = http::Pages::new(published.clone(), http::Health { max_age }).with_live(std::sync::Arc::clone(&feed));
    let server = http::Http::start_site(args.listen, std::sync::Arc::new(pages))?;
    listening(server.addr);
    // Workloads may mark while served; only counted (serve keeps no history), but announced like
    // record's, so the same workload runs under either.
    let markers = headless::listen_for_markers(Default::default(), false)?;
    let cfg = RunConfig { targets, interval: args.interval, via: args.via, telemetry: args.telemetry };
    let mut serving = Serving {
        devices: &inv.devices,
        published,
        store: Store::new(STORE_CAP),
        ingest: Ingest::default(),
        latest: Latest::default(),
        received: headless::Rows::default(),
        markers: 0,
        textfile: args.textfile.as_deref(),
        textfile_every: args.interval.max(TEXTFILE_PERIOD),
        textfile_due: Instant::now(),
        processes: args.processes.map(processes::Top::new),
        triggers: zescope_model::triggers::Evaluator::new(args.triggers.clone()),
        fired: Vec::new(),
        feed: std::sync::Arc::clone(&feed),
        recorder: args.save.clone().map(|p| zescope_model::session::Recorder::new(p, inv.clone())),
        names: args.names,
        push: args.otlp.clone().map(crate::commands::otlp::Push::new),
    };
    let mut derived = headless::derived::Derived::new(args.derive.clone(), &mut serving);
    let outcome = headless::run(h, cfg, markers.as_ref(), stop, &mut derived);
    // Viewers get what is left and a close; serve gives them a moment before it exits.
    feed.end();
    server.stop();
    feed.wait_viewers(Instant::now() + VIEWERS_GRACE);
    let outcome = outcome?;
    let (rows, markers) = (serving.received, serving.markers);
    Ok(Summary { rows, markers, interrupted: outcome.interrupted, errors: outcome.errors })
}

/// Who may watch the live feed at `addr` (`token`: `--token-file` given), said at start: a
/// server listening beyond loopback without a token answers remote viewers 403, which its user
/// learnt only from the viewer.
fn live_line(addr: SocketAddr, token: bool) -> String {
    let feed = format!("live feed at ws://{addr}{} (`zescope --connect HOST:PORT` watches it)", live::PATH);
    match (addr.ip().is_loopback(), token) {
        (true, _) => feed,
        (false, false) => format!("{feed}: on loopback only (an `ssh -L` tunnel); --token-file lets others watch"),
        (false, true) => format!("{feed}: on loopback, and beyond it for viewers with the token of --token-file"),
    }
}

impl std::fmt::Display for Summary {
    /// "served 4960 samples and 50 telemetry reads, 2 markers" (and derived samples, with
    /// `--derive`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "served {}, {}", self.rows, plural(self.markers, "marker", "markers"))
    }
}

/// What `serve` does with the run's events: keeps the newest values and publishes them.
struct Serving<'a> {
    /// The inventory's devices, for the series' labels.
    devices: &'a [sampler::DeviceEntry],
    published: Published,
    store: Store,
    ingest: Ingest,
    /// What was published last.
    latest: Latest,
    /// Rows stored, for the summary.
    received: headless::Rows,
    markers: u64,
    textfile: Option<&'a std::path::Path>,
    textfile_every: Duration,
    textfile_due: Instant,
    /// `--processes`: the top processes of each device, with their commands.
    processes: Option<processes::Top>,
    /// `--trigger`: evaluated on every batch; only their counts are served.
    triggers: zescope_model::triggers::Evaluator,
    fired: Vec<zescope_model::triggers::Firing>,
    /// The live feed.
    feed: std::sync::Arc<live::Feed>,
    /// `--save`: the run as a session.
    recorder: Option<zescope_model::session::Recorder>,
    /// `--names`.
    names: xpumd::NameSet,
    /// `--otlp`.
    push: Option<crate::commands::otlp::Push>,
}

impl Serving<'_> {
    fn publish(&self) {
        self.published.publish(self.latest.clone());
    }

    /// The firings in `fired` to the feed.
    fn feed_firings(&self) {
        for f in &self.fired {
            let trigger = self.triggers.triggers().get(f.trigger).map(|t| t.text.clone()).unwrap_or_default();
            let e = live::wire_event_firing(trigger, f);
            self.feed.event(&e);
        }
    }

    /// The triggers' counts into the latest values; true when one changed.
    fn count_firings(&mut self) -> bool {
        let counts = self.triggers.triggers().iter().zip(self.triggers.counts());
        let now: Vec<(String, u64)> = counts.map(|(t, &n)| (t.text.clone(), n)).collect();
        let changed = now != self.latest.triggers;
        self.latest.triggers = now;
        changed
    }
}

impl Handler for Serving<'_> {
    /// Fresh latest values laid out for the run's series, all unknown yet.
    fn started(&mut self, info: RunInfo) -> Result<Flow, String> {
        let run = RunDescription::live(&info, self.devices);
        let catalog = Catalog::new(&run);
        let otel = std::sync::Arc::new(xpumd::plan(&run, &catalog, &info, self.devices));
        if let Some(p) = &mut self.push {
            p.started(&info, &catalog, std::sync::Arc::clone(&otel))?;
        }
        self.latest = Latest {
            otlp: self.push.as_ref().and_then(crate::commands::otlp::Push::stats),
            values: vec![f64::NAN; catalog.width],
            names: self.names,
            otel: Some(otel),
            catalog: Some(std::sync::Arc::new(catalog)),
            running: true,
            errors: self.latest.errors,
            ..Latest::default()
        };
        // A trigger that would watch nothing is a mistake to say at once, not a silent server.
        zescope_model::triggers::names::check(self.triggers.triggers(), &info)?;
        self.triggers.run_started(&info);
        self.count_firings();
        self.feed.started(&info, self.devices);
        if let Some(r) = &mut self.recorder {
            r.started(&info);
        }
        self.ingest.run_started(&mut self.store, info);
        self.publish();
        Ok(Flow::Go)
    }

    fn samples(&mut self, b: SampleBatch) -> Result<(), String> {
        let stored = self.ingest.samples(&mut self.store, &b).unwrap_or_else(|e| {
            log::warn!("serve: {e}");
            0
        });
        if stored > 0 {
            if let Some(r) = &self.ingest.run {
                self.received.count(&r.info, b.stream, stored);
            }
            if let Some(p) = &mut self.push {
                p.samples(&b);
            }
            self.feed.batch(&b);
            if let Some(r) = &mut self.recorder {
                r.samples(&b)?;
            }
        }
        self.fired.clear();
        self.triggers.samples(&b, &mut self.fired);
        if !self.fired.is_empty() {
            self.feed_firings();
            self.count_firings();
        }
        if stored > 0 && newest(&mut self.latest, &self.ingest, &b) {
            self.latest.samples += stored;
            self.latest.rows = self.received;
            self.latest.last_sample = Some(Instant::now());
            self.publish();
        }
        Ok(())
    }

    fn health(&mut self, s: Health) {
        self.feed.event(&live::Event::Health(s.clone()));
        self.latest.health = Some(s);
        self.publish();
    }

    /// With `--processes`: the device's top processes replace its earlier ones.
    fn processes(&mut self, snap: sampler::processes::ProcessSnapshot) {
        let (Some(top), Some(catalog), Some(run)) = (&mut self.processes, &self.latest.catalog, &self.ingest.run)
        else {
            return;
        };
        if let Some(r) = &mut self.recorder {
            r.processes(&snap);
        }
        let Some(device) = catalog.devices.get(snap.target).filter(|_| run.info.run == snap.run) else { return };
        let served = top.of(&snap, device, &zescope_model::view::processes::ProcFs);
        let list = &mut self.latest.processes;
        if list.len() <= snap.target {
            list.resize(snap.target + 1, Vec::new());
        }
        list[snap.target] = served;
        self.publish();
    }

    fn notice(&mut self, run: u64, message: String) {
        self.feed.event(&live::Event::Notice(message.clone()));
        self.ingest.notice(run, message);
    }

    /// Said at once (the endpoint runs on), and counted on the page.
    fn error(&mut self, message: &str) {
        eprintln!("zescope: {message}");
        self.feed.event(&live::Event::Error(message.to_owned()));
        self.latest.errors += 1;
        self.publish();
    }

    fn markers(&mut self, markers: Vec<zescope_model::markers::Received>) {
        self.markers += markers.len() as u64;
        for m in &markers {
            self.feed.event(&live::Event::Marker { kind: m.kind, t_ns: m.t_ns, name: m.name.clone() });
            if let Some(r) = &mut self.recorder {
                r.marker(m.kind, m.t_ns, &m.name);
            }
        }
        self.fired.clear();
        for m in markers.iter().filter(|m| m.kind != zescope_markers::Kind::End) {
            self.triggers.marker(&m.name, m.t_ns, &mut self.fired);
        }
        self.feed_firings();
        if !self.fired.is_empty() && self.count_firings() {
            self.publish();
        }
    }

    fn stopped(&mut self, run: u64, reason: StopReason) -> Flow {
        self.ingest.run_stopped(&mut self.store, run);
        self.feed.event(&live::Event::Stopped(reason.clone()));
        if let Some(r) = &mut self.recorder {
            r.stopped(run);
        }
        self.latest.running = false;
        self.latest.processes.clear();
        self.publish();
        // An error ending the run makes serve exit non-zero, even before the error itself.
        if reason == StopReason::Error && self.latest.errors == 0 {
            return Flow::Fail("the run ended on an error".into());
        }
        Flow::Go
    }

    /// `--save`: the session, written; `--otlp`: the last export.
    fn finish(&mut self) -> Result<(), String> {
        if let Some(p) = &mut self.push {
            p.stop();
        }
        match &mut self.recorder {
            Some(r) => r.finish(),
            None => Ok(()),
        }
    }

    /// Writes the textfile, once the run's layout is known, every `textfile_every`; checkpoints
    /// `--save`'s session now and then.
    fn tick(&mut self) -> Result<Flow, String> {
        if let Some(r) = &mut self.recorder {
            r.checkpoint()?;
        }
        if let Some(dir) = self.textfile
            && Instant::now() >= self.textfile_due
            && self.latest.catalog.is_some()
        {
            self.textfile_due = Instant::now() + self.textfile_every;
            if let Err(e) = write_textfile(dir, &self.published) {
                log::warn!("{e}");
            }
        }
        Ok(Flow::Go)
    }
}

/// Takes the newest readable value of each series of `b` into `latest`; false when the batch is
/// not of the run in progress.
fn newest(latest: &mut Latest, ingest: &Ingest, b: &sampler::SampleBatch) -> bool {
    let (Some(catalog), Some(run)) = (&latest.catalog, &ingest.run) else { return false };
    let (Some(&start), Some(stream)) = (catalog.stream_starts.get(b.stream), run.info.streams.get(b.stream)) else {
        return false;
    };
    let k = stream.series.len();
    if k == 0 || b.values.len() < k {
        return false;
    }
    for (i, v) in latest.values[start..start + k].iter_mut().enumerate() {
        // The newest row that has this value (NaN: that read could not be decoded).
        if let Some(x) = b.values.chunks_exact(k).rev().map(|row| row[i]).find(|x| !x.is_nan()) {
            *v = x;
        }
    }
    true
}

/// Writes the latest values as Prometheus text to `dir/zescope.prom`, atomically (a temporary
/// file that the textfile collector ignores, then a rename).
pub fn write_textfile(dir: &std::path::Path, published: &Published) -> Result<(), String> {
    let path = dir.join("zescope.prom");
    let text =
        encode(&published.get(), Instant::now(), Format::PrometheusText).map_err(|e| format!("--textfile: {e}"))?;
    zescope_model::session::write_atomic(&path, |f| {
        use std::io::Write as _;
        f.write_all(text.as_bytes()).map_err(|e| zescope_model::session::SessionError::io(&path, "cannot write", e))
    })
    .map_err(|e| format!("--textfile: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_start_says_who_may_watch_the_live_feed() {
        let at = |a: &str| a.parse().unwrap();
        let local = super::live_line(at("127.0.0.1:9464"), false);
        assert_eq!(local, "live feed at ws://127.0.0.1:9464/live (`zescope --connect HOST:PORT` watches it)");
        let open = super::live_line(at("0.0.0.0:9464"), false);
        assert!(open.ends_with(": on loopback only (an `ssh -L` tunnel); --token-file lets others watch"), "{open}");
        let token = super::live_line(at("[::]:9464"), true);
        assert!(token.starts_with("live feed at ws://[::]:9464/live"), "{token}");
        assert!(token.ends_with("beyond it for viewers with the token of --token-file"), "{token}");
    }
}
