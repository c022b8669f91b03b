//! What a scrape serves: the newest decoded sample of every counter of the run, each device's
//! info, the build info and the sampler's health, published by the serve loop and read by the HTTP
//! workers. Scrapes only ever read a [`Snapshot`]; they never reach the sampler or Level Zero.
//!
//! Encoding goes through `prometheus-client`: a [`Collector`] over one snapshot, encoded as
//! OpenMetrics text or as Prometheus text 0.0.4.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

use crate::sampler::{DeviceEntry, RunInfo, Stats};

use crate::view::prom_names::{self as names, BaseUnit};
use crate::view::prom_telemetry;

/// Labels as (name, value) pairs.
pub type Labels = Vec<(String, String)>;

/// One metric family: the name (without unit suffix and `_total`), help and unit.
#[derive(Clone, Debug)]
pub struct Family {
    /// `zescope_…`, without the unit and `_total` suffixes the encoder adds.
    pub name: String,
    /// `# HELP`.
    pub help: String,
    /// `# UNIT`, when the driver's unit maps onto a base unit.
    pub unit: Option<Unit>,
    /// A cumulative counter (`_total`, the raw running total) rather than a gauge.
    pub counter: bool,
}

/// One served sample of the run: its family, its labels, and which value it shows how.
#[derive(Clone, Debug)]
pub struct Slot {
    /// Index into [`Layout::families`].
    pub family: usize,
    /// device, uuid, driver, simulated, group, source; telemetry adds its domain's labels.
    pub labels: Labels,
    /// Factor from the driver's unit into the family's base unit.
    pub scale: f64,
    /// Index into [`Snapshot::values`].
    pub value: usize,
    /// A bit of a bitmask value (throttle reasons): the sample is 1 when it is set, else 0.
    pub bit: Option<u32>,
}

/// What stays the same for the whole run: families, slots and the devices.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// The families, in the order first seen.
    pub families: Vec<Family>,
    /// The samples served, in the order of the values they show.
    pub slots: Vec<Slot>,
    /// Where each stream's values start in [`Snapshot::values`].
    pub stream_starts: Vec<usize>,
    /// How many values the run has (every series of every stream).
    pub width: usize,
    /// Each device's labels (`zescope_device_info`), in the run's target order.
    pub devices: Vec<Labels>,
}

impl Layout {
    /// The families and slots of a run; `devices` (the inventory) gives each device's uuid and
    /// driver version.
    pub fn new(info: &RunInfo, devices: &[DeviceEntry]) -> Layout {
        let mut layout = Layout::default();
        for (t, name) in info.devices.iter().enumerate() {
            let path = info.config.targets.get(t).map(|x| x.device);
            let entry = devices.iter().find(|d| Some(d.path) == path);
            let mut labels: Labels = vec![("device".into(), name.clone())];
            if let Some(d) = entry {
                labels.push(("uuid".into(), d.uuid.clone()));
                labels.push(("driver".into(), format!("{:#x}", d.driver_version)));
            }
            let simulated = entry.map_or(info.simulated, |d| d.simulated);
            labels.push(("simulated".into(), simulated.to_string()));
            layout.devices.push(labels);
        }
        for s in &info.streams {
            layout.stream_starts.push(layout.width);
            let mut base =
                layout.devices.get(s.target).cloned().unwrap_or_else(|| vec![("device".into(), String::new())]);
            base[0].1.clone_from(&s.device);
            base.push(("group".into(), s.group.clone()));
            base.push(("source".into(), names::source_label(s.read_path).to_owned()));
            let telemetry = s.read_path == crate::sampler::ReadPath::Sysman;
            for x in &s.series {
                let value = layout.width;
                layout.width += 1;
                if let Some(n) =
                    telemetry.then(|| prom_telemetry::telemetry(&x.name, &x.description, &x.unit)).flatten()
                {
                    let alt = || format!("{}_telemetry{}", names::PREFIX, n.family.trim_start_matches(names::PREFIX));
                    let family = layout.family(n.family.clone(), alt, n.help.to_owned(), &n.unit, n.counter);
                    let mut labels = base.clone();
                    labels.extend(n.labels.iter().cloned());
                    if n.reasons.is_empty() {
                        layout.slot(
                            Slot { family, labels: labels.clone(), scale: n.unit.scale, value, bit: None },
                            &x.name,
                        );
                    }
                    for (bit, reason) in &n.reasons {
                        let mut labels = labels.clone();
                        labels.push(("reason".into(), reason.clone()));
                        layout.slot(Slot { family, labels, scale: 1.0, value, bit: Some(*bit) }, &x.name);
                    }
                    continue;
                }
                let unit = names::base_unit(&x.unit);
                let counter = names::is_counter(x.kind);
                let mut help = names::help_text(&x.description, &x.name);
                if unit.unit.is_none() && !x.unit.trim().is_empty() {
                    help = format!("{help} (unit: {})", names::help_text(&x.unit, ""));
                }
                let alt = || names::family_name(&format!("{} {}", s.group, x.name), &unit);
                let family = layout.family(names::family_name(&x.name, &unit), alt, help, &unit, counter);
                let slot = Slot { family, labels: base.clone(), scale: unit.scale, value, bit: None };
                layout.slot(slot, &x.name);
            }
        }
        layout
    }

    /// The family for a counter: an existing one of the same name, kind and unit, or a new one
    /// (named `alt()` when the plain name is taken by another kind or unit).
    fn family(
        &mut self,
        name: String,
        alt: impl FnOnce() -> String,
        help: String,
        unit: &BaseUnit,
        counter: bool,
    ) -> usize {
        let fits = |f: &Family| f.counter == counter && f.unit == unit.unit;
        names::pick_family(&self.families, name, alt, |f| &f.name, fits, reserved).unwrap_or_else(|name| {
            self.families.push(Family { name, help, unit: unit.unit.clone(), counter });
            self.families.len() - 1
        })
    }

    /// Adds a slot; one whose family and labels another slot has already (two series that name
    /// the same thing) is told apart by a `series` label with its own name.
    fn slot(&mut self, mut slot: Slot, series: &str) {
        if self.slots.iter().any(|o| o.family == slot.family && o.labels == slot.labels) {
            slot.labels.push(("series".into(), series.to_owned()));
        }
        self.slots.push(slot);
    }
}

/// Names zescope uses for its own metrics.
fn reserved(name: &str) -> bool {
    name == "zescope_device" || name == "zescope_build" || name.starts_with("zescope_sampler")
}

/// The newest values and health, as the serve loop last published them.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// The run's families and slots; `None` before the run started.
    pub layout: Option<Arc<Layout>>,
    /// The newest value of each series of the run (streams in order), in the driver's unit; NaN
    /// until one arrived.
    pub values: Vec<f64>,
    /// The sampler's newest health report.
    pub stats: Option<Stats>,
    /// When the newest sample arrived.
    pub last_sample: Option<Instant>,
    /// Samples received since the run started.
    pub samples: u64,
    /// The run is going (started, not stopped).
    pub running: bool,
    /// Errors the sampler reported.
    pub errors: u64,
}

/// The snapshot the HTTP workers read: swapped whole by the serve loop, cloned (one `Arc`) by a
/// scrape, so neither side holds the lock for longer than a pointer copy.
#[derive(Clone, Debug, Default)]
pub struct Published(Arc<Mutex<Arc<Snapshot>>>);

impl Published {
    /// Replaces the snapshot.
    pub fn publish(&self, s: Snapshot) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Arc::new(s);
    }

    /// The newest snapshot.
    pub fn get(&self) -> Arc<Snapshot> {
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

/// Encodes `snap` as seen at `now`; `Err` names the format that could not be encoded (writing
/// into a String cannot fail, so that is an encoder's or collector's bug; half a page is never
/// served as if whole).
pub fn encode(snap: &Arc<Snapshot>, now: Instant, format: Format) -> Result<String, String> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(View { snap: Arc::clone(snap), now }));
    let mut out = String::with_capacity(4096);
    let done = match format {
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, &registry),
        Format::PrometheusText => prometheus_client::encoding::prometheus_text::encode(&mut out, &registry),
    };
    done.map(|()| out).map_err(|_| format!("encoding the metrics as {} failed", format.name()))
}

/// A snapshot as a `prometheus-client` collector.
#[derive(Debug)]
struct View {
    snap: Arc<Snapshot>,
    now: Instant,
}

fn gauge(enc: &mut DescriptorEncoder, name: &str, help: &str, unit: Option<&Unit>, v: f64) -> std::fmt::Result {
    ConstGauge::new(v).encode(enc.encode_descriptor(name, help, unit, MetricType::Gauge)?)
}

fn counter(enc: &mut DescriptorEncoder, name: &str, help: &str, v: u64) -> std::fmt::Result {
    ConstCounter::new(v).encode(enc.encode_descriptor(name, help, None, MetricType::Counter)?)
}

/// The value a slot serves, in its family's base unit; `None` until one was read.
fn served(slot: &Slot, v: f64) -> Option<f64> {
    if !v.is_finite() {
        return None;
    }
    Some(match slot.bit {
        Some(bit) => ((v as u64 >> bit) & 1) as f64,
        None => v * slot.scale,
    })
}

impl Collector for View {
    fn encode(&self, mut enc: DescriptorEncoder) -> std::fmt::Result {
        let s = &*self.snap;
        let build: Labels = vec![("version".into(), env!("CARGO_PKG_VERSION").into())];
        enc.encode_descriptor("zescope_build", "zescope's version.", None, MetricType::Info)?.encode_info(&build)?;
        if let Some(layout) = &s.layout {
            {
                let help = "A device zescope samples.";
                let mut info = enc.encode_descriptor("zescope_device", help, None, MetricType::Info)?;
                for d in &layout.devices {
                    info.encode_info(d)?;
                }
            }
            for (fi, f) in layout.families.iter().enumerate() {
                let mut values = layout
                    .slots
                    .iter()
                    .filter(|slot| slot.family == fi)
                    .filter_map(|slot| Some((slot, served(slot, *s.values.get(slot.value)?)?)))
                    .filter(|(_, v)| !f.counter || *v >= 0.0)
                    .peekable();
                if values.peek().is_none() {
                    continue;
                }
                let kind = if f.counter { MetricType::Counter } else { MetricType::Gauge };
                let mut m = enc.encode_descriptor(&f.name, &f.help, f.unit.as_ref(), kind)?;
                for (slot, value) in values {
                    if f.counter {
                        ConstCounter::new(value).encode(m.encode_family(&slot.labels)?)?;
                    } else {
                        ConstGauge::new(value).encode(m.encode_family(&slot.labels)?)?;
                    }
                }
            }
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
        if let Some(st) = &s.stats {
            let hz = Unit::Other("hertz".into());
            gauge(
                &mut enc,
                "zescope_sampler_requested_rate",
                "Reads per second asked for.",
                Some(&hz),
                st.requested_hz,
            )?;
            let help = "Reads per second done over the last stats window.";
            gauge(&mut enc, "zescope_sampler_achieved_rate", help, Some(&hz), st.achieved_hz)?;
            let help = "The sampler thread's CPU time over the last stats window, as a share of one core.";
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
    use crate::layout::Kind;
    use crate::sampler::{DevicePath, RunConfig, SeriesInfo, StreamInfo};

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
            read_path: crate::sampler::ReadPath::Mapped,
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
        let layout = Layout::new(&run(), &[]);
        let names: Vec<&str> = layout.families.iter().map(|f| f.name.as_str()).collect();
        // Time in ns and in ms are both seconds: one family; Power in mW and % are not.
        assert_eq!(names, ["zescope_time", "zescope_power", "zescope_b_power"]);
        let snap = Arc::new(Snapshot {
            values: vec![2e9, 1500.0, 3000.0, f64::NAN],
            layout: Some(Arc::new(layout)),
            running: true,
            ..Snapshot::default()
        });
        let om = encode(&snap, Instant::now(), Format::OpenMetrics).unwrap();
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
        let text = encode(&snap, Instant::now(), Format::PrometheusText).unwrap();
        assert!(!text.contains("# EOF") && text.contains("# TYPE zescope_time_seconds_total counter"), "{text}");
    }
}
