//! What a scrape serves: the newest decoded sample of every counter of the run, each device's
//! info, the build info and the sampler's health, published by the serve loop and read by the HTTP
//! workers. Scrapes only ever read a [`Latest`]; they never reach the sampler or Level Zero.
//!
//! Which families and label sets the run's values become is the run's [`Catalog`]
//! (`zescope-openmetrics`, planned once when the run starts, the planner `export --openmetrics`
//! uses too). Encoding goes through `prometheus-client`: a [`Collector`] over one [`Latest`],
//! encoded as OpenMetrics text or as Prometheus text 0.0.4.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

use zescope_openmetrics::{Catalog, Labels};
use zescope_sampler::Health;

/// The newest values and health, as the serve loop last published them.
#[derive(Clone, Debug, Default)]
pub struct Latest {
    /// The run's families and sample rules; `None` before the run started.
    pub catalog: Option<Arc<Catalog>>,
    /// The newest value of each series of the run (streams in order), in the driver's unit; NaN
    /// until one arrived. A summed series (`Catalog::summed`) holds its running total instead,
    /// in its count's unit.
    pub values: Vec<f64>,
    /// The sampler's newest health report.
    pub health: Option<Health>,
    /// When the newest sample arrived.
    pub last_sample: Option<Instant>,
    /// Samples received since the run started (`zescope_sampler_samples_total`: every stream's).
    pub samples: u64,
    /// `samples` by what they are (the groups' samples, telemetry reads, derived samples): the page
    /// at `/` says them apart, as the exit summary does.
    pub rows: crate::commands::headless::Rows,
    /// The run is going (started, not stopped).
    pub running: bool,
    /// Errors the sampler reported.
    pub errors: u64,
    /// With `--processes`: per device of the run (its index), its top processes.
    pub processes: Vec<Vec<ProcessSeries>>,
    /// `--trigger`: each trigger's text and its firings so far (`zescope_trigger_firings_total`).
    pub triggers: Vec<(String, u64)>,
    /// `--names`: which names the page serves.
    pub names: super::xpumd::NameSet,
    /// `--otlp`: the export's counts (`zescope_otlp_*`).
    pub otlp: Option<Arc<zescope_otlp::Stats>>,
    /// The run's OTel plan (xpumd's names, `super::xpumd`); `None` before the run started.
    pub otel: Option<Arc<zescope_openmetrics::otel::Plan>>,
}

/// One process's samples (`serve --processes`).
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessSeries {
    /// The device's labels, then `pid` and `command`.
    pub labels: Labels,
    /// Device memory, bytes.
    pub memory_bytes: f64,
    /// Shared device memory, bytes.
    pub shared_bytes: f64,
}

/// The latest values the HTTP workers read: swapped whole by the serve loop, cloned (one `Arc`) by a
/// scrape, so neither side holds the lock for longer than a pointer copy.
#[derive(Clone, Debug, Default)]
pub struct Published(Arc<Mutex<Arc<Latest>>>);

impl Published {
    /// Replaces the latest values.
    pub fn publish(&self, s: Latest) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Arc::new(s);
    }

    /// The latest values.
    pub fn get(&self) -> Arc<Latest> {
        Arc::clone(&self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Which text format a scrape gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics 1.0 text (`application/openmetrics-text`).
    OpenMetrics,
    /// Prometheus text 0.0.4 (`text/plain`), also what node_exporter's textfile collector reads.
    PrometheusText,
}

impl Format {
    /// The format's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenMetrics => "OpenMetrics text",
            Format::PrometheusText => "Prometheus text 0.0.4",
        }
    }

    /// The `Content-Type` of the format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::PrometheusText => prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        }
    }
}

/// Encodes `latest` as seen at `now`; `Err` names the format that could not be encoded (writing
/// into a String cannot fail, so that is an encoder's or collector's bug; half a page is never
/// served as if whole).
pub fn encode(latest: &Arc<Latest>, now: Instant, format: Format) -> Result<String, String> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(View { latest: Arc::clone(latest), now }));
    let mut out = String::with_capacity(4096);
    let done = match format {
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, &registry),
        Format::PrometheusText => prometheus_client::encoding::prometheus_text::encode(&mut out, &registry),
    };
    done.map(|()| out).map_err(|_| format!("encoding the metrics as {} failed", format.name()))
}

/// The latest values as a `prometheus-client` collector.
#[derive(Debug)]
struct View {
    latest: Arc<Latest>,
    now: Instant,
}

fn gauge(enc: &mut DescriptorEncoder, name: &str, help: &str, unit: Option<&Unit>, v: f64) -> std::fmt::Result {
    ConstGauge::new(v).encode(enc.encode_descriptor(name, help, unit, MetricType::Gauge)?)
}

fn counter(enc: &mut DescriptorEncoder, name: &str, help: &str, v: u64) -> std::fmt::Result {
    ConstCounter::new(v).encode(enc.encode_descriptor(name, help, None, MetricType::Counter)?)
}

impl Collector for View {
    fn encode(&self, mut enc: DescriptorEncoder) -> std::fmt::Result {
        let s = &*self.latest;
        let build: Labels = vec![("version".into(), env!("CARGO_PKG_VERSION").into())];
        enc.encode_descriptor("zescope_build", "zescope's version.", None, MetricType::Info)?.encode_info(&build)?;
        if let Some(catalog) = &s.catalog {
            // `--names xpumd` alone: the values xpumd's names cover are served under those only.
            let hidden = match &s.otel {
                Some(plan) if !s.names.zescope => super::xpumd::covered(plan, catalog.width),
                _ => Vec::new(),
            };
            {
                let help = "A device zescope samples.";
                let mut info = enc.encode_descriptor("zescope_device", help, None, MetricType::Info)?;
                for d in &catalog.devices {
                    info.encode_info(d)?;
                }
            }
            for (fi, f) in catalog.families.iter().enumerate() {
                let mut values = catalog
                    .rules
                    .iter()
                    .filter(|rule| rule.family == fi && !hidden.get(rule.value).copied().unwrap_or(false))
                    .filter_map(|rule| Some((rule, catalog.sample(rule, *s.values.get(rule.value)?)?)))
                    .peekable();
                if values.peek().is_none() {
                    continue;
                }
                let kind = if f.counter { MetricType::Counter } else { MetricType::Gauge };
                let unit = f.unit.map(|u| Unit::Other(u.to_owned()));
                let mut m = enc.encode_descriptor(&f.name, &f.help, unit.as_ref(), kind)?;
                for (rule, value) in values {
                    if f.counter {
                        ConstCounter::new(value).encode(m.encode_family(&rule.labels)?)?;
                    } else {
                        ConstGauge::new(value).encode(m.encode_family(&rule.labels)?)?;
                    }
                }
            }
        }
        if let Some(plan) = s.otel.as_ref().filter(|_| s.names.xpumd) {
            super::xpumd::encode(&mut enc, plan, &s.values)?;
        }
        if s.processes.iter().any(|d| !d.is_empty()) {
            use zescope_openmetrics::processes::{MEMORY_FAMILY, MEMORY_HELP, SHARED_FAMILY, SHARED_HELP};
            for (name, help, shared) in [(MEMORY_FAMILY, MEMORY_HELP, false), (SHARED_FAMILY, SHARED_HELP, true)] {
                let mut m = enc.encode_descriptor(name, help, Some(&Unit::Bytes), MetricType::Gauge)?;
                for p in s.processes.iter().flatten() {
                    let v = if shared { p.shared_bytes } else { p.memory_bytes };
                    ConstGauge::new(v).encode(m.encode_family(&p.labels)?)?;
                }
            }
        }
        if !s.triggers.is_empty() {
            let help = "Firings of each --trigger (docs/triggers.md) since serve started.";
            let mut m = enc.encode_descriptor("zescope_trigger_firings", help, None, MetricType::Counter)?;
            for (text, n) in &s.triggers {
                let labels: Labels = vec![("trigger".into(), text.clone())];
                ConstCounter::new(*n).encode(m.encode_family(&labels)?)?;
            }
        }
        if let Some(o) = &s.otlp {
            let help = "Data points an OTLP collector took (--otlp).";
            counter(&mut enc, "zescope_otlp_exported", help, o.exported())?;
            let help = "Data points of OTLP exports that failed (--otlp): the collector down, slower than the timeout, or refusing.";
            counter(&mut enc, "zescope_otlp_dropped", help, o.dropped())?;
            counter(&mut enc, "zescope_otlp_failed_exports", "OTLP exports that failed (--otlp).", o.failed())?;
        }
        let up = if s.running { 1.0 } else { 0.0 };
        gauge(&mut enc, "zescope_sampler_running", "1 while the sampler's run is going.", None, up)?;
        if let Some(at) = s.last_sample {
            let age = self.now.saturating_duration_since(at).as_secs_f64();
            let help = "Time since the newest sample arrived.";
            gauge(&mut enc, "zescope_sampler_last_sample_age", help, Some(&Unit::Seconds), age)?;
        }
        counter(&mut enc, "zescope_sampler_samples", "Samples received since the run started.", s.samples)?;
        counter(&mut enc, "zescope_sampler_errors", "Errors the sampler reported.", s.errors)?;
        if let Some(st) = &s.health {
            let hz = Unit::Other("hertz".into());
            gauge(
                &mut enc,
                "zescope_sampler_requested_rate",
                "Reads per second asked for.",
                Some(&hz),
                st.requested_hz,
            )?;
            let help = "Reads per second done over the last health window: the requested rate times the share of its deadlines a read was done for.";
            gauge(&mut enc, "zescope_sampler_achieved_rate", help, Some(&hz), st.achieved_hz)?;
            let help = "The sampler thread's CPU time over the last health window, as a share of one core.";
            gauge(&mut enc, "zescope_sampler_cpu", help, Some(&Unit::Other("ratio".into())), st.cpu_percent / 100.0)?;
            counter(&mut enc, "zescope_sampler_ticks", "Sampler ticks since the run started.", st.ticks)?;
            let help = "Ticks more than a whole interval after their deadline.";
            counter(&mut enc, "zescope_sampler_late_ticks", help, st.late_ticks)?;
            let help = "Samples dropped because the consumer could not keep up.";
            counter(&mut enc, "zescope_sampler_dropped_samples", help, st.dropped_samples)?;
            let help = "Reads that found no torn-free snapshot of the exported memory.";
            counter(&mut enc, "zescope_sampler_torn_reads", help, st.torn_reads)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zescope_openmetrics::RunDescription;
    use zescope_sampler::layout::Kind;
    use zescope_sampler::{DevicePath, RunConfig, RunInfo, SeriesInfo, StreamInfo};

    fn series(name: &str, unit: &str, kind: Kind) -> SeriesInfo {
        SeriesInfo {
            name: name.into(),
            description: format!("{name} \"quoted\"\nline"),
            unit: unit.into(),
            kind,
            wrap: None,
        }
    }

    fn run() -> RunInfo {
        let stream = |index: usize, group: &str, series: Vec<SeriesInfo>| StreamInfo {
            index,
            target: 0,
            device: "dev \"x\"".into(),
            group: group.into(),
            layout: "l".into(),
            series,
            read_path: zescope_sampler::ReadPath::Mapped,
        };
        RunInfo {
            run: 1,
            config: RunConfig::single(
                DevicePath::default(),
                vec!["A".into(), "B".into()],
                std::time::Duration::from_millis(1),
            ),
            devices: vec!["dev \"x\"".into()],
            simulated: false,
            streams: vec![
                stream(0, "A", vec![series("Time", "ns", Kind::Cumulative), series("Power", "mW", Kind::Gauge)]),
                stream(1, "B", vec![series("Time", "ms", Kind::Cumulative), series("Power", "%", Kind::Gauge)]),
            ],
            imports: 2,
            notices: Vec::new(),
        }
    }

    #[test]
    fn one_family_per_name_and_unit_and_values_in_base_units() {
        let catalog = Catalog::new(&RunDescription::live(&run(), &[]));
        let names: Vec<&str> = catalog.families.iter().map(|f| f.name.as_str()).collect();
        // Time in ns and in ms are both seconds: one family; Power in mW and % are not.
        assert_eq!(names, ["zescope_time", "zescope_power", "zescope_b_power"]);
        let latest = Arc::new(Latest {
            values: vec![2e9, 1500.0, 3000.0, f64::NAN],
            catalog: Some(Arc::new(catalog)),
            running: true,
            ..Latest::default()
        });
        let om = encode(&latest, Instant::now(), Format::OpenMetrics).unwrap();
        assert!(om.ends_with("# EOF\n"), "{om}");
        let line = |prefix: &str| om.lines().filter(|l| l.starts_with(prefix)).collect::<Vec<_>>();
        let time = line("zescope_time_seconds_total{");
        assert_eq!(time.len(), 2, "{om}");
        assert!(time[0].contains("group=\"A\"") && time[0].ends_with(" 2.0"), "{}", time[0]);
        assert!(time[1].contains("group=\"B\"") && time[1].ends_with(" 3.0"), "{}", time[1]);
        assert!(line("zescope_power_watts{")[0].ends_with(" 1.5"), "{om}");
        assert!(line("zescope_b_power_ratio").is_empty(), "a NaN is not served: {om}");
        assert!(om.contains("device=\"dev \\\"x\\\"\""), "label values escaped: {om}");
        assert!(om.contains("# HELP zescope_time_seconds Time 'quoted' line\n"), "{om}");
        let text = encode(&latest, Instant::now(), Format::PrometheusText).unwrap();
        assert!(!text.contains("# EOF") && text.contains("# TYPE zescope_time_seconds_total counter"), "{text}");
    }
}
