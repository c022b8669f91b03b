//! `zescope list`: drivers, devices, sub-devices and metric groups as text.
//!
//! Two forms, because real catalogues hold dozens of groups and over a thousand metrics:
//!
//! - compact (the default): per device, one table row per metric group (name, domain, sampling,
//!   metric count, exports, how `auto` reads it: exported memory, streamer, tracer (a
//!   tracer-based group, where the loader has the metric tracer), or neither);
//! - full (`--metrics`): per group its line and description, then a table of its metrics (name,
//!   unit, metric type, result type, description).
//!
//! `--group GLOB` (repeatable) keeps only the groups whose names match (`*`, `?`); a pattern
//! that matches no group of any device is an error naming it. A sub-device whose listing would
//! repeat its root device's says so in one line instead.

use std::fmt::Write;

use zescope_model::view::text::plural;
use zescope_sampler::layout::glob;
use zescope_ze::{Device, GroupExport, Loader, Metric, MetricGroup, Origin, Source};

/// What `zescope list` shows.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// Every metric of every listed group (the full form).
    pub metrics: bool,
    /// Only groups whose names match one of these globs (all when empty).
    pub groups: Vec<String>,
}

/// Prints the listing of `source`.
pub fn main(source: Source, opts: &ListOptions) -> Result<std::process::ExitCode, String> {
    print!("{}", list(source, opts)?);
    Ok(std::process::ExitCode::SUCCESS)
}

/// The listing of `source`, or why there is none: the loader could not open, or a `--group`
/// pattern matches no group.
pub fn list(source: Source, opts: &ListOptions) -> Result<String, String> {
    let loader = Loader::open(source, crate::sim::built_in).map_err(|e| e.to_string())?;
    let mut r = Render { opts, out: String::new(), matched: vec![false; opts.groups.len()], names: Vec::new() };
    r.loader(&loader);
    if let Some(i) = r.matched.iter().position(|m| !m) {
        let mut names = std::mem::take(&mut r.names);
        names.sort();
        names.dedup();
        return Err(format!("--group {:?} matches no metric group; groups: {}", opts.groups[i], shorten(&names, 12)));
    }
    Ok(r.out)
}

/// `names` joined, at most `n` of them, then how many more.
pub(crate) fn shorten(names: &[String], n: usize) -> String {
    if names.len() <= n {
        return names.join(", ");
    }
    format!("{}, … ({} more; `zescope list` shows them all)", names[..n].join(", "), names.len() - n)
}

struct Render<'a> {
    opts: &'a ListOptions,
    out: String,
    /// Per `--group` pattern: did it match a group?
    matched: Vec<bool>,
    /// Every group name seen, for the error of a pattern that matched none.
    names: Vec<String>,
}

/// One group, as the tables show it.
struct Row {
    name: String,
    domain: u32,
    sampling: &'static str,
    metric_count: u32,
    exports: String,
    read: &'static str,
    description: String,
    metrics: Result<Vec<Metric>, String>,
}

impl Render<'_> {
    fn loader(&mut self, loader: &Loader) {
        let origin = match loader.origin {
            Origin::LevelZero => "Level Zero loader (libze_loader.so.1)",
            Origin::BuiltInSim => "built-in simulated driver (no hardware)",
        };
        let _ = writeln!(self.out, "Source: {origin}");
        if let Some(why) = &loader.fallback_reason {
            let _ = writeln!(self.out, "  (the real Level Zero loader was not used: {why})");
        }
        for (i, d) in loader.drivers.iter().enumerate() {
            let sim = if d.info.simulated || loader.origin == Origin::BuiltInSim { "  [SIMULATED]" } else { "" };
            let _ = writeln!(
                self.out,
                "Driver {i}: version {:#x}, API {}.{}, uuid {}{sim}",
                d.info.version,
                d.info.api_version.0,
                d.info.api_version.1,
                zescope_ze::uuid_string(&d.info.uuid)
            );
            match d.devices() {
                Ok(devs) if devs.is_empty() => {
                    let _ = writeln!(self.out, "  no devices");
                }
                Ok(devs) => {
                    for (j, dev) in devs.iter().enumerate() {
                        self.device(dev, &format!("Device {j}"), 1, !sim.is_empty(), None);
                    }
                }
                Err(e) => {
                    let _ = writeln!(self.out, "  devices: {e}");
                }
            }
        }
    }

    /// A device, its groups and its sub-devices; `root` is the root device's label and group
    /// listing, which a sub-device's same listing refers to instead of repeating it.
    fn device(&mut self, dev: &Device, label: &str, depth: usize, simulated: bool, root: Option<(&str, &str)>) {
        let pad = "  ".repeat(depth);
        let i = &dev.info;
        let _ = writeln!(
            self.out,
            "{pad}{label}: {} [{:?}, {:04x}:{:04x}, {} MHz, uuid {}{}]{}",
            i.name,
            i.kind,
            i.vendor_id,
            i.device_id,
            i.core_clock_mhz,
            i.uuid_string(),
            i.pci_bdf.as_ref().map(|b| format!(", PCI {b}")).unwrap_or_default(),
            if simulated { "  [SIMULATED]" } else { "" }
        );
        let _ = match zescope_ze::sysman::summary(dev) {
            Ok(what) => writeln!(self.out, "{pad}  telemetry: {what}"),
            Err(why) => writeln!(self.out, "{pad}  telemetry: none: {why}"),
        };
        let groups = self.groups(dev);
        match root {
            Some((root_label, root_groups)) if groups == root_groups => {
                let what = if self.opts.metrics { "metric groups and metrics" } else { "metric groups" };
                let _ = writeln!(self.out, "{pad}  the same {what} as {root_label}");
            }
            _ => {
                for line in groups.lines() {
                    let _ = writeln!(self.out, "{pad}{line}");
                }
            }
        }
        match dev.sub_devices() {
            Ok(subs) => {
                for (k, s) in subs.iter().enumerate() {
                    self.device(s, &format!("Sub-device {k}"), depth + 1, simulated, Some((label, &groups)));
                }
            }
            Err(e) => {
                let _ = writeln!(self.out, "{pad}  sub-devices: {e}");
            }
        }
    }

    /// The group listing of `dev`, its lines without the device's indentation.
    fn groups(&mut self, dev: &Device) -> String {
        let mut out = String::new();
        let groups = match dev.metric_groups() {
            Ok(g) if g.is_empty() => {
                let _ = writeln!(out, "  no metric groups (metrics disabled, or none on this device)");
                return out;
            }
            Ok(g) => g,
            Err(e) => {
                let _ = writeln!(out, "  metric groups: {e}");
                return out;
            }
        };
        self.names.extend(groups.iter().map(|g| g.info.name.clone()));
        let rows: Vec<Row> = groups.iter().filter(|g| self.wanted(&g.info.name)).map(row).collect();
        let total = groups.len();
        if rows.is_empty() {
            let _ = writeln!(
                out,
                "  none of its {} matches --group",
                plural(total as u64, "metric group", "metric groups")
            );
            return out;
        }
        let metrics: u32 = rows.iter().map(|r| r.metric_count).sum();
        let shown = match rows.len() {
            n if n == total => plural(n as u64, "metric group", "metric groups"),
            n => format!("{n} of {}", plural(total as u64, "metric group", "metric groups")),
        };
        let _ = writeln!(out, "  {shown}, {}:", plural(metrics as u64, "metric", "metrics"));
        if self.opts.metrics {
            for r in &rows {
                full(&mut out, r);
            }
        } else {
            compact(&mut out, &rows);
        }
        out
    }

    /// Does a `--group` pattern keep `name` (every group when there is none)?
    fn wanted(&mut self, name: &str) -> bool {
        if self.opts.groups.is_empty() {
            return true;
        }
        let mut any = false;
        for (p, m) in self.opts.groups.iter().zip(&mut self.matched) {
            if glob::matches(p, name) {
                *m = true;
                any = true;
            }
        }
        any
    }
}

fn row(g: &MetricGroup) -> Row {
    let metrics = g.metrics().map_err(|e| e.to_string());
    let per_metric = metrics.as_ref().map(|m| m.iter().filter(|m| m.info.exports_dma_buf()).count()).unwrap_or(0);
    let exports = match (&g.info.export, per_metric) {
        (GroupExport::DmaBuf, _) => "DMA-BUF (whole group)".to_owned(),
        (_, n) if n > 0 => format!("DMA-BUF per metric ({n} of {} metrics)", g.info.metric_count),
        (GroupExport::Unknown(why), _) => format!("unknown ({why})"),
        (GroupExport::No, _) => "none".to_owned(),
    };
    let exported = per_metric > 0 || g.info.export == GroupExport::DmaBuf;
    let time_based = g.info.sampling & level_zero_sys::ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0;
    // How `auto` reads it: the first of the ways that list it, asked as the inventory asks them
    // (`zescope_sampler::listed_ways`; a layout is still needed for exported memory).
    let described = zescope_sampler::GroupEntry {
        name: g.info.name.clone(),
        description: String::new(),
        domain: g.info.domain,
        exports: if exported {
            zescope_sampler::GroupExportKind::Group
        } else {
            zescope_sampler::GroupExportKind::None
        },
        streamable: time_based,
        tracer: g.info.tracer_based(),
        metrics: Vec::new(),
        unavailable: None,
        export_unavailable: (!exported).then(|| "this group exports no memory".to_owned()),
        ways: Vec::new(),
    };
    let read = match zescope_sampler::listed_ways(&described).first() {
        Some(zescope_sampler::Via::Tracer) if zescope_ze::tracer::available(&g.ze).is_err() => "neither (tracer-based)",
        Some(way) => way.describe(),
        None => "neither",
    };
    Row {
        name: g.info.name.clone(),
        domain: g.info.domain,
        sampling: g.info.sampling_name(),
        metric_count: g.info.metric_count,
        exports,
        read,
        description: g.info.description.clone(),
        metrics,
    }
}

/// One table row per group.
fn compact(out: &mut String, rows: &[Row]) {
    let w = |f: &dyn Fn(&Row) -> usize, head: &str| rows.iter().map(f).max().unwrap_or(0).max(head.len());
    let name = w(&|r| r.name.len(), "GROUP");
    let sampling = w(&|r| r.sampling.len(), "SAMPLING");
    let exports = w(&|r| r.exports.len(), "EXPORTS");
    let _ = writeln!(
        out,
        "    {:name$}  DOMAIN  {:sampling$}  METRICS  {:exports$}  READ BY",
        "GROUP", "SAMPLING", "EXPORTS"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "    {:name$}  {:>6}  {:sampling$}  {:>7}  {:exports$}  {}",
            r.name, r.domain, r.sampling, r.metric_count, r.exports, r.read
        );
    }
}

/// A group's line and description, then a table of its metrics.
fn full(out: &mut String, r: &Row) {
    let read = match r.read {
        "streamer" => "streamer (period and reports per notification granted at the start)",
        "neither" => "neither (no exported memory, no time-based sampling)",
        "tracer" => "tracer (the metric tracer and its decoder: each event a sample at its own time)",
        "neither (tracer-based)" => "neither (tracer-based: the loader lacks the metric tracer, API 1.10 or newer)",
        other => other,
    };
    let _ = writeln!(
        out,
        "  group {}: domain {}, {}, {} metrics, exports: {}, read by: {read}",
        r.name, r.domain, r.sampling, r.metric_count, r.exports
    );
    if !r.description.is_empty() {
        let _ = writeln!(out, "      {}", r.description);
    }
    let ms = match &r.metrics {
        Ok(ms) if !ms.is_empty() => ms,
        Ok(_) => return,
        Err(e) => {
            let _ = writeln!(out, "      metrics: {e}");
            return;
        }
    };
    let unit = |m: &Metric| if m.info.units.is_empty() { "-".to_owned() } else { m.info.units.clone() };
    let w = |f: &dyn Fn(&Metric) -> usize, head: &str| ms.iter().map(f).max().unwrap_or(0).max(head.len());
    let name = w(&|m| m.info.name.len(), "METRIC");
    let units = w(&|m| unit(m).chars().count(), "UNIT");
    let ty = w(&|m| m.info.type_name().len(), "TYPE");
    let _ = writeln!(out, "      {:name$}  {:units$}  {:ty$}  RESULT  DESCRIPTION", "METRIC", "UNIT", "TYPE");
    for m in ms {
        let u = unit(m);
        // Width in characters: units such as "°C" are more bytes than columns.
        let upad = units - u.chars().count() + u.len();
        let line = format!(
            "      {:name$}  {u:upad$}  {:ty$}  {:6}  {}",
            m.info.name,
            m.info.type_name(),
            value_type(m.info.value_type),
            m.info.description
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// A `zet_value_type_t` as text.
fn value_type(t: u32) -> &'static str {
    use level_zero_sys::*;
    match t {
        ZET_VALUE_TYPE_UINT32 => "u32",
        ZET_VALUE_TYPE_UINT64 => "u64",
        ZET_VALUE_TYPE_FLOAT32 => "f32",
        ZET_VALUE_TYPE_FLOAT64 => "f64",
        ZET_VALUE_TYPE_BOOL8 => "bool8",
        5 => "string",
        6 => "u8",
        7 => "u16",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::shorten;

    #[test]
    fn long_name_lists_are_cut_and_say_how_many_more() {
        let names: Vec<String> = (0..5).map(|i| format!("G{i}")).collect();
        assert_eq!(shorten(&names, 5), "G0, G1, G2, G3, G4");
        assert_eq!(shorten(&names, 2), "G0, G1, … (3 more; `zescope list` shows them all)");
    }
}
