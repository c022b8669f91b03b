//! OpenMetrics text with timestamps, for `promtool tsdb create-blocks-from openmetrics` to
//! backfill into Prometheus: the samples of a [`Catalog`]'s rules over time.
//!
//! `prometheus-client` (what `zescope serve` encodes with) writes no timestamps, so this writer
//! spells the format out: families not interleaved, each `# TYPE`, `# UNIT` (when the family has
//! a unit) and `# HELP` once, each label set's samples in time order, label values escaped
//! (`\\`, `\"`, `\n`), `# EOF` last. Counters are written as their running totals (`_total`),
//! everything in base units, as [`Catalog::sample`] gives them. Prometheus keeps milliseconds,
//! so of several samples of one series within one millisecond the last is written. Rules of
//! several runs with one family and one label set (a session's runs of one configuration) are
//! one series.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::catalog::{Catalog, Labels};

/// Collects samples of a catalog's rules, then writes them as one text.
#[derive(Debug)]
pub struct Backfill<'a> {
    catalog: &'a Catalog,
    /// Per rule: (Unix ms, value), in the order given.
    points: Vec<Vec<(i64, f64)>>,
    /// Per value of the run: the first rule that shows it and how many do (rules are in value
    /// order).
    rules_of: Vec<(usize, usize)>,
}

impl<'a> Backfill<'a> {
    /// An empty backfill of `catalog`'s rules.
    pub fn new(catalog: &'a Catalog) -> Backfill<'a> {
        let mut rules_of = vec![(0, 0); catalog.width];
        for (i, r) in catalog.rules.iter().enumerate() {
            if let Some(slot) = rules_of.get_mut(r.value) {
                if slot.1 == 0 {
                    slot.0 = i;
                }
                slot.1 += 1;
            }
        }
        Backfill { catalog, points: vec![Vec::new(); catalog.rules.len()], rules_of }
    }

    /// One row of stream `stream` (its series' values in the driver's units), written at
    /// `unix_ms`; a stream's rows in time order. A stream the
    /// catalog does not have, and values past its series, are ignored.
    pub fn row(&mut self, stream: usize, unix_ms: i64, row: &[f64]) {
        let Some(&start) = self.catalog.stream_starts.get(stream) else { return };
        let end = self.catalog.stream_starts.get(stream + 1).copied().unwrap_or(self.catalog.width);
        for (value, &raw) in (start..end).zip(row) {
            let (first, n) = self.rules_of[value];
            for i in first..first + n {
                let rule = &self.catalog.rules[i];
                if let Some(v) = self.catalog.sample(rule, raw) {
                    self.points[i].push((unix_ms, v));
                }
            }
        }
    }

    /// The text, ending in `# EOF`, and the number of samples in it. Families without a sample
    /// are left out.
    pub fn finish(self) -> (String, u64) {
        let mut text = String::new();
        let mut written = 0u64;
        let mut per_family: Vec<BTreeMap<String, Vec<(i64, f64)>>> = vec![BTreeMap::new(); self.catalog.families.len()];
        for (rule, points) in self.catalog.rules.iter().zip(self.points) {
            if points.is_empty() {
                continue;
            }
            let series = per_family[rule.family].entry(label_set(&rule.labels)).or_default();
            series.extend(points);
        }
        for (f, metrics) in self.catalog.families.iter().zip(&mut per_family) {
            if metrics.is_empty() {
                continue;
            }
            let full = f.full_name();
            let _ = writeln!(text, "# TYPE {full} {}", if f.counter { "counter" } else { "gauge" });
            if let Some(u) = f.unit {
                let _ = writeln!(text, "# UNIT {full} {u}");
            }
            let _ = writeln!(text, "# HELP {full} {}", f.help);
            let sample = if f.counter { format!("{full}_total") } else { full };
            for (labels, points) in metrics.iter_mut() {
                // Stable: of one millisecond's samples, the last given stays last.
                points.sort_by_key(|p| p.0);
                for (k, &(ms, v)) in points.iter().enumerate() {
                    if points.get(k + 1).is_some_and(|n| n.0 == ms) {
                        continue;
                    }
                    let _ = writeln!(text, "{sample}{labels} {v} {}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000));
                    written += 1;
                }
            }
        }
        text.push_str("# EOF\n");
        (text, written)
    }
}

/// A label value as OpenMetrics text escapes it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// `{a="x",b="y"}`.
fn label_set(labels: &Labels) -> String {
    let inner: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
    format!("{{{}}}", inner.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{DeviceDescription, RunDescription, SeriesDescription, StreamDescription};
    use zescope_sampler::ReadPath;
    use zescope_sampler::layout::Kind;

    fn run(device: &str) -> RunDescription {
        let series = |name: &str, unit: &str, kind| SeriesDescription {
            name: name.into(),
            description: format!("{name} help"),
            unit: unit.into(),
            kind,
        };
        RunDescription {
            devices: vec![DeviceDescription { name: device.into(), identity: None, pci_bdf: None, simulated: true }],
            streams: vec![StreamDescription {
                device: 0,
                group: "G".into(),
                read_path: ReadPath::Mapped,
                series: vec![series("GpuTime", "ns", Kind::Cumulative), series("Busy", "%", Kind::Gauge)],
            }],
        }
    }

    #[test]
    fn families_once_samples_in_time_order_one_per_millisecond() {
        let catalog = Catalog::new(&run("dev \"q\"\nx"));
        let mut b = Backfill::new(&catalog);
        b.row(0, 2000, &[3e9, 50.0]);
        b.row(0, 1000, &[1e9, f64::NAN]);
        b.row(0, 1000, &[2e9, 25.0]);
        b.row(0, 3000, &[-1.0, 75.0]);
        b.row(7, 3000, &[1.0]);
        let (text, n) = b.finish();
        let labels = r#"{device="dev \"q\"\nx",simulated="true",group="G",source="export"}"#;
        let want = format!(
            "# TYPE zescope_gpu_time_seconds counter\n# UNIT zescope_gpu_time_seconds seconds\n\
             # HELP zescope_gpu_time_seconds GpuTime help\n\
             zescope_gpu_time_seconds_total{labels} 2 1.000\nzescope_gpu_time_seconds_total{labels} 3 2.000\n\
             # TYPE zescope_busy_ratio gauge\n# UNIT zescope_busy_ratio ratio\n# HELP zescope_busy_ratio Busy help\n\
             zescope_busy_ratio{labels} 0.25 1.000\nzescope_busy_ratio{labels} 0.5 2.000\n\
             zescope_busy_ratio{labels} 0.75 3.000\n# EOF\n"
        );
        assert_eq!(text, want, "a negative total, a NaN and an unknown stream are left out");
        assert_eq!(n, 5);
    }

    #[test]
    fn two_runs_of_one_configuration_are_one_series() {
        let mut catalog = Catalog::new(&run("d"));
        catalog.add_run(&run("d"));
        assert_eq!(catalog.families.len(), 2);
        assert!(catalog.rules.iter().all(|r| !r.labels.iter().any(|(k, _)| k == "series")), "not a clash");
        let mut b = Backfill::new(&catalog);
        b.row(0, 1000, &[1e9, 10.0]);
        b.row(1, 5000, &[4e9, 20.0]);
        let (text, n) = b.finish();
        assert_eq!(n, 4);
        assert_eq!(text.matches("# TYPE").count(), 2, "{text}");
        let busy: Vec<&str> = text.lines().filter(|l| l.starts_with("zescope_busy_ratio{")).collect();
        assert_eq!(busy.len(), 2, "{text}");
        assert!(busy[0].ends_with(" 0.1 1.000") && busy[1].ends_with(" 0.2 5.000"), "{busy:?}");
    }

    #[test]
    fn a_streamers_count_is_its_running_total_and_an_old_sessions_rate_a_gauge() {
        let mut run = run("d");
        run.streams[0].read_path = ReadPath::Streamer;
        let series = |name: &str, unit: &str, kind| SeriesDescription {
            name: name.into(),
            description: String::new(),
            unit: unit.into(),
            kind,
        };
        run.streams[0].series = vec![series("BytesRead", "GB", Kind::Cumulative), series("Old", "GB/s", Kind::Gauge)];
        let catalog = Catalog::new(&run);
        let mut b = Backfill::new(&catalog);
        for (k, (total, rate)) in [(2.0, 4.0), (6.0, 8.0)].into_iter().enumerate() {
            b.row(0, 1000 + 500 * k as i64, &[total, rate]);
        }
        let (text, n) = b.finish();
        assert_eq!(n, 4);
        let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        let want = [
            ("zescope_bytes_read_bytes_total{", " 2000000000 1.000"),
            ("zescope_bytes_read_bytes_total{", " 6000000000 1.500"),
            ("zescope_old_bytes_per_second{", " 4000000000 1.000"),
            ("zescope_old_bytes_per_second{", " 8000000000 1.500"),
        ];
        assert_eq!(samples.len(), want.len(), "{text}");
        for (line, (name, end)) in samples.iter().zip(want) {
            assert!(line.starts_with(name) && line.ends_with(end), "{line} for {name}…{end}");
        }
    }
}
