//! `zescope export --openmetrics`: a saved session as OpenMetrics text with timestamps, for
//! `promtool tsdb create-blocks-from openmetrics` to backfill into Prometheus.
//!
//! Names, base units and labels are the ones `zescope serve` uses (`view::prom_names`, and
//! `view::prom_telemetry` for the telemetry stream), so
//! backfilled history and live scrapes are one series. Cumulative counters are written as their
//! raw running totals (`_total`), gauges in base units. Times are the recording's wall clock:
//! `Recorded::started_unix_ms` at the session's time origin, plus the monotonic time since.
//! Prometheus keeps milliseconds, so of several samples within one millisecond the last is
//! written. `prometheus-client` encodes no timestamps, so this writer spells the format out
//! (families not interleaved, each label set's samples in time order, `# EOF`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use zescope_sampler::ReadPath;

use crate::session::{KindRecord, Session};
use crate::view::prom_names::{self as names, BaseUnit};
use crate::view::prom_telemetry;
use zescope_store::Store;

struct Family {
    name: String,
    help: String,
    unit: BaseUnit,
    counter: bool,
    /// Label set (rendered) → (ms, value), in time order once sorted.
    metrics: BTreeMap<String, Vec<(i64, f64)>>,
}

/// One sample a series gives: into which family, with which factor and labels; a bit of a
/// bitmask value (throttle reasons) gives 1 when set, else 0.
struct Target {
    family: usize,
    scale: f64,
    labels: String,
    bit: Option<u32>,
}

/// The family `name` of this kind and unit: an existing one, or a new one (named `alt()` when
/// `name` is taken by another kind or unit), as `zescope serve` picks them.
fn family(
    families: &mut Vec<Family>,
    name: String,
    alt: impl FnOnce() -> String,
    help: String,
    unit: &BaseUnit,
    counter: bool,
) -> usize {
    let fits = |f: &Family| f.counter == counter && &f.unit == unit;
    names::pick_family(families, name, alt, |f| &f.name, fits, |_| false).unwrap_or_else(|name| {
        families.push(Family { name, help, unit: unit.clone(), counter, metrics: BTreeMap::new() });
        families.len() - 1
    })
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn label_set(labels: &[(&str, &str)]) -> String {
    let inner: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
    format!("{{{}}}", inner.join(","))
}

/// Writes `session` (restored into `store`) to `path`; returns the number of samples written.
pub fn openmetrics(
    session: &Session,
    store: &Store,
    streams: &[zescope_store::StreamId],
    path: &Path,
) -> Result<u64, String> {
    let start_ms = session.recorded.started_unix_ms;
    if start_ms <= 0 {
        return Err("the session does not say when it was recorded (recorded.started_unix_ms is 0), so its \
                    samples cannot be given timestamps"
            .into());
    }
    let origin = store.origin_ns().unwrap_or(0);
    let mut families: Vec<Family> = Vec::new();
    // The first device of each name, found once (a file may list up to 2^20 devices).
    let mut by_name = std::collections::HashMap::new();
    for d in &session.devices {
        by_name.entry(d.name.as_str()).or_insert(d);
    }
    for (s, &id) in session.streams.iter().zip(streams) {
        let meta = &s.meta;
        let device = by_name.get(meta.device.as_str()).copied();
        let uuid = device.map_or("", |d| d.uuid.as_str());
        let driver = device.map_or(String::new(), |d| format!("{:#x}", d.driver_version));
        let simulated = device.is_some_and(|d| d.simulated).to_string();
        let mut labels = vec![("device", meta.device.as_str()), ("uuid", uuid), ("driver", driver.as_str())];
        labels.push(("simulated", simulated.as_str()));
        // How the group was read, from the stream's layout ("sysman", "streamer (…)", or the
        // exported memory's layout name: which of the ways into it a session does not keep, and
        // all three have one label).
        let telemetry = meta.layout == zescope_sampler::telemetry::LAYOUT;
        let path = if telemetry {
            ReadPath::Sysman
        } else if meta.layout.starts_with("streamer") {
            ReadPath::Streamer
        } else {
            ReadPath::Mapped
        };
        let source = names::source_label(path);
        labels.extend([("group", meta.group.as_str()), ("source", source)]);
        // Per series of the stream: the samples it gives (family, factor, labels, bitmask bit).
        let mut targets: Vec<Vec<Target>> = Vec::with_capacity(meta.series.len());
        for x in &meta.series {
            let named = telemetry.then(|| prom_telemetry::telemetry(&x.metric, &x.description, &x.unit)).flatten();
            if let Some(n) = named {
                let alt = || format!("{}_telemetry{}", names::PREFIX, n.family.trim_start_matches(names::PREFIX));
                let i = family(&mut families, n.family.clone(), alt, n.help.to_owned(), &n.unit, n.counter);
                let mut set: Vec<(&str, &str)> = labels.clone();
                set.extend(n.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                let mut mine = Vec::new();
                if n.reasons.is_empty() {
                    mine.push(Target { family: i, scale: n.unit.scale, labels: label_set(&set), bit: None });
                }
                for (bit, reason) in &n.reasons {
                    let mut set = set.clone();
                    set.push(("reason", reason));
                    mine.push(Target { family: i, scale: 1.0, labels: label_set(&set), bit: Some(*bit) });
                }
                targets.push(mine);
                continue;
            }
            let unit = names::base_unit(&x.unit);
            let counter = matches!(x.kind, KindRecord::Cumulative { .. });
            let name = names::family_name(&x.metric, &unit);
            let alt = || names::family_name(&format!("{} {}", meta.group, x.metric), &unit);
            let mut help = names::help_text(&x.description, &x.metric);
            if unit.unit.is_none() && !x.unit.trim().is_empty() {
                help = format!("{help} (unit: {})", names::help_text(&x.unit, ""));
            }
            let i = family(&mut families, name, alt, help, &unit, counter);
            targets.push(vec![Target { family: i, scale: unit.scale, labels: label_set(&labels), bit: None }]);
        }
        store.for_each_raw_row(id, |t, row| {
            let ms = start_ms + (t - origin).div_euclid(1_000_000);
            for (mine, &v) in targets.iter().zip(row) {
                if !v.is_finite() {
                    continue;
                }
                for x in mine {
                    let v = match x.bit {
                        Some(bit) => ((v as u64 >> bit) & 1) as f64,
                        None => v * x.scale,
                    };
                    if !families[x.family].counter || v >= 0.0 {
                        families[x.family].metrics.entry(x.labels.clone()).or_default().push((ms, v));
                    }
                }
            }
        });
    }
    let mut text = String::new();
    let mut written = 0u64;
    for f in &mut families {
        if f.metrics.values().all(Vec::is_empty) {
            continue;
        }
        let full = match &f.unit.unit {
            Some(u) => format!("{}_{}", f.name, u.as_str()),
            None => f.name.clone(),
        };
        text.push_str(&format!("# TYPE {full} {}\n", if f.counter { "counter" } else { "gauge" }));
        if let Some(u) = &f.unit.unit {
            text.push_str(&format!("# UNIT {full} {}\n", u.as_str()));
        }
        text.push_str(&format!("# HELP {full} {}\n", f.help));
        let sample = if f.counter { format!("{full}_total") } else { full.clone() };
        for (labels, points) in &mut f.metrics {
            points.sort_by_key(|p| p.0);
            for (k, &(ms, v)) in points.iter().enumerate() {
                // One sample per millisecond: the last.
                if points.get(k + 1).is_some_and(|n| n.0 == ms) {
                    continue;
                }
                text.push_str(&format!("{sample}{labels} {v} {}.{:03}\n", ms.div_euclid(1000), ms.rem_euclid(1000)));
                written += 1;
            }
        }
    }
    text.push_str("# EOF\n");
    if written == 0 {
        return Err("the session holds no samples".into());
    }
    crate::session::write_atomic(path, |file| {
        file.write_all(text.as_bytes()).map_err(|e| crate::session::SessionError::io(path, "cannot write", e))
    })
    .map_err(|e| e.to_string())?;
    Ok(written)
}
