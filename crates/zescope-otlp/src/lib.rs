//! zescope's OTLP export: every series of a run pushed to an OpenTelemetry Collector (or any OTLP
//! receiver) over OTLP/HTTP with protobuf (`zescope serve --otlp`, `zescope record --otlp`;
//! docs/otel.md).
//!
//! # The contract
//!
//! - What is exported is the run's OTel plan (`zescope_openmetrics::otel::Plan`): xpumd's `hw.*`
//!   metrics for the telemetry it names, `zescope.*` for the rest; counters as monotonic
//!   cumulative sums, levels as gauges, sizes as non-monotonic sums, units in UCUM.
//! - Each point carries the time its value was read (the sample's own time on the wall clock),
//!   so what a collector stores is what a session of the same run saved, value for value and
//!   time for time (`encode.rs`).
//! - One resource per device: the host (`host.name`, `service.name` `zescope` unless
//!   `OTEL_SERVICE_NAME` says otherwise, `service.version`) and the device (`hw.id`, `hw.name`,
//!   `hw.vendor`, `pci.bdf`, `hw.driver_version`, `hw.type`), then `OTEL_RESOURCE_ATTRIBUTES`,
//!   which wins. Each point also carries `hw.id`, `hw.name` and `pci.bdf`, as xpumd's do (what a
//!   Prometheus translation without resource attributes keeps).
//! - The OpenTelemetry exporter's variables hold as its specification and SDK read them
//!   (`settings.rs`): `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/metrics` appended),
//!   `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (as is), `OTEL_EXPORTER_OTLP_HEADERS` and `_METRICS_HEADERS`,
//!   `OTEL_EXPORTER_OTLP_TIMEOUT` and `_METRICS_TIMEOUT`, `OTEL_METRIC_EXPORT_INTERVAL` (default
//!   60 s), unless [`Config`] sets the endpoint or interval.
//! - Never in the sampler's way: the consumer of the run only keeps its newest values and their
//!   times where the caller's [`Source`] finds them (a slot of one per series, the newest
//!   replacing the older, as the Prometheus page is). The exporter's one thread reads them at
//!   each export interval and posts them (`http.rs`, every step bounded by the export timeout).
//!   A collector that is down or slow holds up only that thread. Nothing is queued: the points of
//!   an export the collector did not take are counted as dropped ([`Stats`]), points it says it
//!   rejected too; the next export carries the newest values again (counters are cumulative, so
//!   their totals lose nothing).
//!
//! # Floors
//!
//! It stands on `zescope-openmetrics` (the plan) and `opentelemetry-proto` (OTLP's message
//! types, generated from the OpenTelemetry project's protobuf definitions); the binary's `serve`
//! and `record` stand on it. No async runtime and no OpenTelemetry SDK: an observable instrument
//! of the SDK stamps every point with the time of the export, not of its sample (docs/otel.md).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod encode;
mod http;
mod settings;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, SystemTime};

use prost::Message as _;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceResponse;
use opentelemetry_proto::tonic::resource::v1::Resource;
use zescope_openmetrics::otel::Plan;

use settings::Settings;
pub use settings::metrics_endpoint;

/// Where the exporter finds the run's newest values: called with a visitor that it calls with
/// them (the run's values, streams in order, in the driver's units; NaN where none yet) and the
/// time each was read (ns since the Unix epoch; 0 where none yet).
pub type Source = Arc<dyn Fn(&mut dyn FnMut(&[f64], &[u64])) + Send + Sync>;

/// What the command line asked for.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// `--otlp URL`: the collector's base URL (`http://host:4318`; `/v1/metrics` is appended
    /// unless the path ends in it). `None`: the OTLP exporter's environment variables, else
    /// `http://localhost:4318/v1/metrics`.
    pub endpoint: Option<String>,
    /// The export interval; `None`: `OTEL_METRIC_EXPORT_INTERVAL`, else 60 s.
    pub interval: Option<Duration>,
}

/// The export's counts, shared with whoever serves them (`zescope_otlp_*`).
#[derive(Debug, Default)]
pub struct Stats {
    exported: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
}

impl Stats {
    /// Data points a collector took.
    pub fn exported(&self) -> u64 {
        self.exported.load(Ordering::Relaxed)
    }

    /// Data points of exports that failed (collector down, slow past the timeout, or refusing),
    /// and points a collector said it rejected.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Exports that failed.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }
}

/// Ns since the Unix epoch now.
fn unix_ns() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// The host's name, for `host.name`.
fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    Some(name.trim().to_owned()).filter(|n| !n.is_empty())
}

/// The export thread's state.
struct Worker {
    settings: Settings,
    url: http::Url,
    plan: Arc<Plan>,
    resources: Vec<Resource>,
    source: Source,
    stats: Arc<Stats>,
    start: u64,
    /// Exports are failing (a warning when that starts and ends).
    failing: bool,
}

impl Worker {
    /// Exports until told to stop (or the exporter is dropped), then once more.
    fn run(mut self, stop: Receiver<()>, done: Sender<()>) {
        loop {
            match stop.recv_timeout(self.settings.interval) {
                Err(RecvTimeoutError::Timeout) => self.export(),
                Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                    self.export();
                    let _ = done.send(());
                    return;
                }
            }
        }
    }

    /// One export of the newest values.
    fn export(&mut self) {
        let mut body = Vec::new();
        let mut count = 0;
        let (plan, resources, start) = (&self.plan, &self.resources, self.start);
        (self.source)(&mut |values, times| {
            let reading = encode::Reading { values, times, start, now: unix_ns() };
            let (request, n) = encode::request(plan, resources, &reading);
            count = n;
            body = request.encode_to_vec();
        });
        if count == 0 {
            return;
        }
        let answer = http::post(&self.url, &self.settings.headers, &body, self.settings.timeout).and_then(|a| {
            if (200..300).contains(&a.status) {
                Ok(a)
            } else {
                Err(format!("the collector answered {}: {}", a.status, String::from_utf8_lossy(&a.body).trim()))
            }
        });
        match answer {
            Ok(a) => {
                let rejected = ExportMetricsServiceResponse::decode(a.body.as_slice())
                    .ok()
                    .and_then(|r| r.partial_success)
                    .map_or(0, |p| p.rejected_data_points.clamp(0, count as i64) as u64);
                self.stats.exported.fetch_add(count - rejected, Ordering::Relaxed);
                self.stats.dropped.fetch_add(rejected, Ordering::Relaxed);
                if std::mem::replace(&mut self.failing, false) {
                    log::warn!("OTLP export: the collector takes exports again");
                }
            }
            Err(e) => {
                self.stats.dropped.fetch_add(count, Ordering::Relaxed);
                self.stats.failed.fetch_add(1, Ordering::Relaxed);
                if !std::mem::replace(&mut self.failing, true) {
                    log::warn!("OTLP export failed ({e}); its points are dropped and counted until it works again");
                }
            }
        }
    }
}

/// A running export.
pub struct Exporter {
    stop: Sender<()>,
    done: Receiver<()>,
    stats: Arc<Stats>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter").field("stats", &self.stats).finish()
    }
}

impl Exporter {
    /// Starts exporting `plan`'s points, read through `source`; errs on an endpoint it cannot
    /// post to (not `http://`, malformed) or when no thread can be started.
    pub fn start(config: &Config, plan: Arc<Plan>, source: Source) -> Result<Exporter, String> {
        let settings = Settings::resolve(config, &|k| std::env::var(k).ok());
        let url = http::Url::parse(&settings.endpoint).map_err(|e| format!("OTLP endpoint {e}"))?;
        let host = host_name();
        let resources =
            plan.devices.iter().map(|d| encode::resource(&d.attributes, host.as_deref(), &settings)).collect();
        let stats = Arc::new(Stats::default());
        let worker = Worker {
            settings,
            url,
            plan,
            resources,
            source,
            stats: Arc::clone(&stats),
            start: unix_ns(),
            failing: false,
        };
        let (stop, stop_rx) = std::sync::mpsc::channel();
        let (done_tx, done) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("zescope-otlp".into())
            .spawn(move || worker.run(stop_rx, done_tx))
            .map_err(|e| format!("OTLP export: no thread to run it: {e}"))?;
        Ok(Exporter { stop, done, stats })
    }

    /// The export's counts.
    pub fn stats(&self) -> Arc<Stats> {
        Arc::clone(&self.stats)
    }

    /// Exports the newest values a last time and stops, waiting at most `deadline` (a collector
    /// that does not answer is left behind: its thread ends within the export timeout).
    pub fn shutdown(self, deadline: Duration) {
        let _ = self.stop.send(());
        if self.done.recv_timeout(deadline).is_err() {
            log::warn!("OTLP export at the end: the collector did not answer in time");
        }
    }
}

#[cfg(test)]
mod export_tests {
    use super::*;
    use std::io::{Read as _, Write as _};
    use zescope_openmetrics::otel::{Device, Kind, Metric, Point};

    /// A collector on loopback that answers 200 to every POST and hands over each body.
    fn collector() -> (String, std::sync::mpsc::Receiver<Vec<u8>>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let mut s = s.unwrap();
                let mut buf = Vec::new();
                let mut chunk = [0u8; 65536];
                let body = loop {
                    let n = s.read(&mut chunk).unwrap();
                    buf.extend_from_slice(&chunk[..n]);
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
                    let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map(|v| v.trim().parse().unwrap())
                        .unwrap();
                    if buf.len() >= end + 4 + len {
                        break buf[end + 4..end + 4 + len].to_vec();
                    }
                };
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").unwrap();
                if tx.send(body).is_err() {
                    return;
                }
            }
        });
        (url, rx)
    }

    fn plan() -> Plan {
        let metric = |name: &str, unit: &'static str, kind: Kind| Metric {
            name: name.into(),
            description: "d".into(),
            unit,
            kind,
            convention: name.starts_with("hw."),
        };
        let point = |metric: usize, value: usize| Point {
            metric,
            device: 0,
            attributes: vec![("hw.name".into(), "Card".into())],
            value: Some(value),
            scale: 1.0,
            bit: None,
            with: None,
        };
        Plan {
            metrics: vec![metric("hw.power", "W", Kind::Gauge), metric("zescope.gpu_time", "s", Kind::Counter)],
            points: vec![point(0, 0), point(1, 1)],
            devices: vec![Device { attributes: vec![("hw.name".into(), "Card".into())], gpu: true }],
        }
    }

    fn contains(hay: &[u8], needle: &str) -> bool {
        hay.windows(needle.len()).any(|w| w == needle.as_bytes())
    }

    #[test]
    fn every_metric_reaches_the_collector_and_exports_are_counted() {
        let (url, rx) = collector();
        let config = Config { endpoint: Some(url), interval: Some(Duration::from_millis(100)) };
        let t = unix_ns();
        let source: Source = Arc::new(move |visit: &mut dyn FnMut(&[f64], &[u64])| visit(&[150.0, 2.5], &[t, t]));
        let e = Exporter::start(&config, Arc::new(plan()), source).unwrap();
        let body = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        for name in ["hw.power", "zescope.gpu_time", "Card"] {
            assert!(contains(&body, name), "{name} in the export");
        }
        let stats = e.stats();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while stats.exported() < 2 {
            assert!(std::time::Instant::now() < deadline, "{stats:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(stats.dropped(), 0);
        e.shutdown(Duration::from_secs(5));
    }
}
