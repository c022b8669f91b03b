//! zescope's OTLP export: every series of a run pushed to an OpenTelemetry Collector (or any OTLP
//! receiver) through the OpenTelemetry Rust SDK and its OTLP exporter, HTTP/protobuf
//! (`zescope serve --otlp`, `zescope record --otlp`; docs/otel.md).
//!
//! # The contract
//!
//! - What is exported is the run's OTel plan (`zescope_openmetrics::otel::Plan`): xpumd's `hw.*`
//!   metrics for the telemetry it names, `zescope.*` for the rest; counters as monotonic
//!   cumulative sums, levels as gauges, sizes as non-monotonic sums, units in UCUM.
//! - One meter provider per device: its resource is the host (`host.name`, `service.name`
//!   `zescope` unless `OTEL_SERVICE_NAME` says otherwise, `service.version`) and the device
//!   (`hw.id`, `hw.name`, `hw.vendor`, `pci.bdf`, `hw.driver_version`, `hw.type`), then
//!   `OTEL_RESOURCE_ATTRIBUTES`, which wins. Each point also carries `hw.id`, `hw.name` and
//!   `pci.bdf`, as xpumd's do (what a Prometheus translation without resource attributes keeps).
//! - The SDK's conventions hold: `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/metrics` appended),
//!   `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`,
//!   `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_METRIC_EXPORT_INTERVAL` (default 60 s), unless
//!   [`Config`] sets the endpoint or interval.
//! - Never in the sampler's way: the consumer of the run only keeps its newest values where the
//!   caller's [`Source`] finds them (a queue of one, the newest replacing the older, as the
//!   Prometheus page is); the SDK's periodic reader thread of each provider reads them at each
//!   export interval and posts them (`http.rs`, every step bounded by the export timeout). A
//!   collector that is down or slow holds up only that thread. The points of an export the
//!   collector did not take are counted as dropped ([`Stats`]); the next export carries the
//!   newest values again (counters are cumulative, so their totals lose nothing).
//!
//! # Floors
//!
//! It stands on `zescope-openmetrics` (the plan) and the SDK; the binary's `serve` and `record`
//! stand on it. No async runtime: the SDK's periodic reader runs on its own thread and the
//! HTTP client blocks it.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod http;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{AsyncInstrument, MeterProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider, Temporality};

use zescope_openmetrics::otel::{Kind, Plan};

/// Where the exporter finds the run's newest values: called with a visitor that it calls with
/// them (the run's values, streams in order, in the driver's units; NaN where none yet).
pub type Source = Arc<dyn Fn(&mut dyn FnMut(&[f64])) + Send + Sync>;

/// What the command line and environment asked for.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// `--otlp URL`: the collector's base URL (`http://host:4318`; `/v1/metrics` is appended
    /// unless the path ends in it). `None`: the SDK's environment variables, else
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
    failing: AtomicBool,
}

impl Stats {
    /// Data points a collector took.
    pub fn exported(&self) -> u64 {
        self.exported.load(Ordering::Relaxed)
    }

    /// Data points of exports that failed (collector down, slow past the timeout, or refusing).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Exports that failed.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }
}

/// The collector's URL for metrics from `--otlp`'s base URL.
pub fn metrics_endpoint(base: &str) -> String {
    let base = base.trim();
    if base.trim_end_matches('/').ends_with("/v1/metrics") {
        return base.trim_end_matches('/').to_owned();
    }
    format!("{}/v1/metrics", base.trim_end_matches('/'))
}

/// The timeout of one export (`OTEL_EXPORTER_OTLP_METRICS_TIMEOUT`, `OTEL_EXPORTER_OTLP_TIMEOUT`,
/// milliseconds; 10 s).
fn timeout() -> Duration {
    ["OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.trim().parse::<u64>().ok())
        .map_or(Duration::from_secs(10), Duration::from_millis)
}

/// The host's name, for `host.name`.
fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    Some(name.trim().to_owned()).filter(|n| !n.is_empty())
}

/// The SDK's OTLP exporter, counting what it exported and dropped.
#[derive(Debug)]
struct Counting {
    inner: opentelemetry_otlp::MetricExporter,
    stats: Arc<Stats>,
    /// Points the collection before this export observed.
    pending: Arc<AtomicU64>,
}

impl PushMetricExporter for Counting {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let n = self.pending.swap(0, Ordering::Relaxed);
        let r = self.inner.export(metrics).await;
        match &r {
            Ok(()) => {
                self.stats.exported.fetch_add(n, Ordering::Relaxed);
                if self.stats.failing.swap(false, Ordering::Relaxed) {
                    log::warn!("OTLP export: the collector takes exports again");
                }
            }
            Err(e) => {
                self.stats.dropped.fetch_add(n, Ordering::Relaxed);
                self.stats.failed.fetch_add(1, Ordering::Relaxed);
                if !self.stats.failing.swap(true, Ordering::Relaxed) {
                    log::warn!("OTLP export failed ({e}); its points are dropped and counted until it works again");
                }
            }
        }
        r
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        Temporality::Cumulative
    }
}

/// A running export: one meter provider per device of the plan.
pub struct Exporter {
    providers: Vec<SdkMeterProvider>,
    stats: Arc<Stats>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter").field("providers", &self.providers.len()).field("stats", &self.stats).finish()
    }
}

impl Exporter {
    /// Starts exporting `plan`'s points, read through `source`; errs on a configuration the
    /// SDK refuses (a malformed endpoint, an `https://` one).
    pub fn start(config: &Config, plan: Arc<Plan>, source: Source) -> Result<Exporter, String> {
        let endpoint = config.endpoint.as_deref().map(metrics_endpoint);
        if let Some(e) = &endpoint
            && !e.starts_with("http://")
        {
            return Err(format!(
                "--otlp {e}: only http:// endpoints are supported (a collector on the host or its network)"
            ));
        }
        let stats = Arc::new(Stats::default());
        let mut providers = Vec::new();
        for device in 0..plan.devices.len() {
            let mut builder = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .with_http_client(http::Client { timeout: timeout() })
                .with_temporality(Temporality::Cumulative);
            if let Some(e) = &endpoint {
                builder = builder.with_endpoint(e.clone());
            }
            let inner = builder.build().map_err(|e| format!("OTLP exporter: {e}"))?;
            let pending = Arc::new(AtomicU64::new(0));
            let counting = Counting { inner, stats: Arc::clone(&stats), pending: Arc::clone(&pending) };
            let mut reader = PeriodicReader::builder(counting);
            if let Some(i) = config.interval {
                reader = reader.with_interval(i);
            }
            let provider = SdkMeterProvider::builder()
                .with_reader(reader.build())
                .with_resource(resource(&plan.devices[device].attributes))
                .build();
            instruments(&provider, &plan, device, &source, &pending);
            providers.push(provider);
        }
        Ok(Exporter { providers, stats })
    }

    /// The export's counts.
    pub fn stats(&self) -> Arc<Stats> {
        Arc::clone(&self.stats)
    }

    /// Exports the newest values a last time and stops, waiting at most `deadline` (a collector
    /// that does not answer is left behind).
    pub fn shutdown(self, deadline: Duration) {
        let (tx, rx) = std::sync::mpsc::channel();
        let n = self.providers.len();
        for p in self.providers {
            let tx = tx.clone();
            let spawned = std::thread::Builder::new().name("zescope-otlp-end".into()).spawn(move || {
                if let Err(e) = p.shutdown() {
                    log::warn!("OTLP export at the end: {e}");
                }
                let _ = tx.send(());
            });
            if spawned.is_err() {
                log::warn!("OTLP export at the end: no thread to run it");
            }
        }
        let end = std::time::Instant::now() + deadline;
        for _ in 0..n {
            if rx.recv_timeout(end.saturating_duration_since(std::time::Instant::now())).is_err() {
                log::warn!("OTLP export at the end: the collector did not answer in time");
                break;
            }
        }
    }
}

/// A device's resource: the host and the device, then the SDK's environment detectors.
fn resource(device: &[(String, String)]) -> Resource {
    let mut b = Resource::builder_empty()
        .with_service_name("zescope")
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    if let Some(h) = host_name() {
        b = b.with_attribute(KeyValue::new("host.name", h));
    }
    b = b.with_attributes(device.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())));
    b = b.with_detectors(&[
        Box::new(opentelemetry_sdk::resource::TelemetryResourceDetector),
        Box::new(opentelemetry_sdk::resource::EnvResourceDetector::new()),
    ]);
    if let Some(name) = std::env::var("OTEL_SERVICE_NAME").ok().filter(|n| !n.trim().is_empty()) {
        b = b.with_service_name(name);
    }
    b.build()
}

/// One observable instrument per metric with points of `device`, its callback reading the
/// newest values through `source`.
fn instruments(
    provider: &SdkMeterProvider,
    plan: &Arc<Plan>,
    device: usize,
    source: &Source,
    pending: &Arc<AtomicU64>,
) {
    let meter = provider.meter("zescope");
    for (mi, m) in plan.metrics.iter().enumerate() {
        let points: Vec<(usize, Vec<KeyValue>)> = plan
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.metric == mi && p.device == device)
            .map(|(i, p)| (i, p.attributes.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())).collect()))
            .collect();
        if points.is_empty() {
            continue;
        }
        let (plan, source, pending) = (Arc::clone(plan), Arc::clone(source), Arc::clone(pending));
        let observe = move |obs: &dyn AsyncInstrument<f64>| {
            source(&mut |values| {
                for (p, attributes) in &points {
                    if let Some(v) = plan.points.get(*p).and_then(|p| plan.value(p, values)) {
                        obs.observe(v, attributes);
                        pending.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        };
        let (name, unit, description) = (m.name.clone(), m.unit, m.description.clone());
        // The instruments live as long as the provider: their callbacks are registered with it.
        match m.kind {
            Kind::Counter => {
                meter
                    .f64_observable_counter(name)
                    .with_unit(unit)
                    .with_description(description)
                    .with_callback(observe)
                    .build();
            }
            Kind::Gauge => {
                meter
                    .f64_observable_gauge(name)
                    .with_unit(unit)
                    .with_description(description)
                    .with_callback(observe)
                    .build();
            }
            Kind::UpDown => {
                meter
                    .f64_observable_up_down_counter(name)
                    .with_unit(unit)
                    .with_description(description)
                    .with_callback(observe)
                    .build();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_url_gets_the_metrics_path_once() {
        assert_eq!(metrics_endpoint("http://c:4318"), "http://c:4318/v1/metrics");
        assert_eq!(metrics_endpoint("http://c:4318/"), "http://c:4318/v1/metrics");
        assert_eq!(metrics_endpoint("http://c:4318/v1/metrics"), "http://c:4318/v1/metrics");
        assert_eq!(metrics_endpoint("http://c/otlp"), "http://c/otlp/v1/metrics");
    }
}

#[cfg(test)]
mod export_tests {
    use super::*;
    use std::io::{Read as _, Write as _};
    use zescope_openmetrics::otel::{Device, Metric, Point};

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
        let source: Source = Arc::new(|visit: &mut dyn FnMut(&[f64])| visit(&[150.0, 2.5]));
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
