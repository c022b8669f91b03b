//! The one planner: from a description of a run's streams ([`RunDescription`]) to the families,
//! label sets and per-series sample rules a scrape serves and a backfill writes ([`Catalog`]).
//!
//! `zescope serve` describes the run it samples ([`RunDescription::live`], from the sampler's
//! `RunInfo` and the device inventory); `zescope export --openmetrics` describes each run of a
//! saved session from the session's records. Both then go through [`Catalog::add_run`], so a
//! series backfilled from a session and the same series scraped live have one name and one label
//! set.
//!
//! The rules, in the order they apply:
//!
//! - Every sample of a stream carries its device's labels (`device`; `uuid` and `driver` when the
//!   device's identity is known; `pci_bdf` when its PCI address is; `simulated`), then `group` and `source` (how the group is read,
//!   [`names::source_label`]).
//! - A telemetry series the naming knows ([`telemetry::telemetry`]) goes to its kind's family
//!   (`zescope_power_watts{domain}`, …) with its domain labels; a throttle-reason bitmask becomes
//!   one 0/1 sample per reason (`reason`). A known family name taken by a counter of another kind
//!   or unit becomes `zescope_telemetry_…`.
//! - Any other series is `zescope_` + its snake_case name ([`names::family_name`]), in its base
//!   unit; one name of two kinds or units gets the group's name in front for the later one.
//! - A running total is a counter (`_total`) whatever reads it: exported memory's counters and
//!   busy time, and a streamer's counts and busy time, which the sampler keeps as running totals
//!   of its reports (`zescope_l3_bytes_read_bytes_total`).
//! - No family takes a name zescope keeps for itself ([`names::reserved`]).
//! - Two samples of one run that would get one family and one label set (two series that name
//!   the same thing) are told apart by a `series` label on the later, with its series' name.
//!   Runs added one after another (a session of several runs) share families; a label set that
//!   an earlier run used is that series again, not a clash.

use std::collections::HashSet;

use zescope_sampler::layout::Kind;
use zescope_sampler::{DeviceEntry, ReadPath, RunInfo, SeriesInfo};

use crate::names::{self, BaseUnit};
use crate::telemetry;

/// Labels as (name, value) pairs, in the order they are written.
pub type Labels = Vec<(String, String)>;

/// What a device is known as.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceDescription {
    /// The name its series carry (made unique within a run by the sampler).
    pub name: String,
    /// Its UUID (lowercase hex) and driver version, when known (from the inventory).
    pub identity: Option<(String, u32)>,
    /// Its PCI address `DDDD:BB:DD.F`, when the driver reported it: what fleet dashboards join
    /// on (node exporters and xpumanager label devices by it).
    pub pci_bdf: Option<String>,
    /// A simulated device, not hardware.
    pub simulated: bool,
}

impl DeviceDescription {
    /// Its labels: `device`, then `uuid` and `driver` (hex) when known, `pci_bdf` when known,
    /// then `simulated`.
    pub fn labels(&self) -> Labels {
        let mut labels = vec![("device".to_owned(), self.name.clone())];
        if let Some((uuid, driver)) = &self.identity {
            labels.push(("uuid".into(), uuid.clone()));
            labels.push(("driver".into(), format!("{driver:#x}")));
        }
        if let Some(bdf) = &self.pci_bdf {
            labels.push(("pci_bdf".into(), bdf.clone()));
        }
        labels.push(("simulated".into(), self.simulated.to_string()));
        labels
    }
}

/// One series of a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesDescription {
    /// The metric's name.
    pub name: String,
    /// The driver's description of it (a throttle bitmask's names its bits).
    pub description: String,
    /// The driver's unit ("ns", "MHz", "%", …; may be empty).
    pub unit: String,
    /// Cumulative (a counter) or gauge.
    pub kind: Kind,
}

impl From<&SeriesInfo> for SeriesDescription {
    /// A series as the sampler announced it.
    fn from(x: &SeriesInfo) -> SeriesDescription {
        SeriesDescription {
            name: x.name.clone(),
            description: x.description.clone(),
            unit: x.unit.clone(),
            kind: x.kind,
        }
    }
}

/// The group of derived series' streams (`zescope_model::derive::GROUP`): their series are served
/// with `source="derived"` and a `derived` label holding their definition.
pub const DERIVED_GROUP: &str = "Derived";
/// The start of a derived series' description; its definition (`NAME=EXPR`) follows
/// (`zescope_model::derive::DESCRIPTION_PREFIX`).
pub const DERIVED_PREFIX: &str = "derived: ";

/// One stream of a run: a metric group (or the telemetry) of one device.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamDescription {
    /// Index of its device in [`RunDescription::devices`].
    pub device: usize,
    /// The metric group's name ("Telemetry" for the telemetry stream).
    pub group: String,
    /// How the group is read.
    pub read_path: ReadPath,
    /// Its series, in the order of each sample's values.
    pub series: Vec<SeriesDescription>,
}

/// A run's devices and streams: what the planner needs to know and nothing more.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunDescription {
    /// The run's devices.
    pub devices: Vec<DeviceDescription>,
    /// The run's streams, in the order of their values.
    pub streams: Vec<StreamDescription>,
}

impl RunDescription {
    /// A live run: `info` as the sampler announced it, each device's identity from `inventory`
    /// (found by the run's device path; a device missing from it has no `uuid`/`driver`, and is
    /// simulated as the run says).
    pub fn live(info: &RunInfo, inventory: &[DeviceEntry]) -> RunDescription {
        let mut run = RunDescription::default();
        for (t, name) in info.devices.iter().enumerate() {
            let path = info.config.targets.get(t).map(|x| x.device);
            let entry = inventory.iter().find(|d| Some(d.path) == path);
            run.devices.push(DeviceDescription {
                name: name.clone(),
                identity: entry.map(|d| (d.uuid.clone(), d.driver_version)),
                pci_bdf: entry.and_then(|d| d.pci_bdf.clone()),
                simulated: entry.map_or(info.simulated, |d| d.simulated),
            });
        }
        for s in &info.streams {
            let device = match run.devices.get(s.target) {
                Some(d) if d.name == s.device => s.target,
                _ => run.device_named(&s.device, info.simulated),
            };
            let series = s.series.iter().map(SeriesDescription::from).collect();
            run.streams.push(StreamDescription { device, group: s.group.clone(), read_path: s.read_path, series });
        }
        run
    }

    /// The index of the device named `name`: the first of that name, or a new one whose identity
    /// is not known.
    pub fn device_named(&mut self, name: &str, simulated: bool) -> usize {
        if let Some(i) = self.devices.iter().position(|d| d.name == name) {
            return i;
        }
        self.devices.push(DeviceDescription { name: name.to_owned(), identity: None, pci_bdf: None, simulated });
        self.devices.len() - 1
    }
}

/// One metric family.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    /// `zescope_…`, without the unit and `_total` suffixes.
    pub name: String,
    /// `# HELP`: one line, nothing either text format escapes.
    pub help: String,
    /// `# UNIT` and the name's suffix, when the driver's unit maps onto a base unit.
    pub unit: Option<&'static str>,
    /// A counter (`_total`, the raw running total) rather than a gauge.
    pub counter: bool,
}

impl Family {
    /// The name with its unit suffix: what `# TYPE` names.
    pub fn full_name(&self) -> String {
        match self.unit {
            Some(u) => format!("{}_{u}", self.name),
            None => self.name.clone(),
        }
    }
}

/// How one value of the run becomes one sample.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleRule {
    /// Index into [`Catalog::families`].
    pub family: usize,
    /// The sample's labels.
    pub labels: Labels,
    /// Factor from the driver's unit into the family's base unit.
    pub scale: f64,
    /// Which value of the run it shows: index into the run's values, streams in order (see
    /// [`Catalog::stream_starts`]).
    pub value: usize,
    /// A bit of a bitmask value (throttle reasons): the sample is 1 when it is set, else 0.
    pub bit: Option<u32>,
}

/// The families and sample rules of one or more runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog {
    /// The families, in the order first seen.
    pub families: Vec<Family>,
    /// The samples, in the order of the values they show.
    pub rules: Vec<SampleRule>,
    /// Where each stream's values start among the run's values, streams of every run added in
    /// order.
    pub stream_starts: Vec<usize>,
    /// How many values the runs have (every series of every stream).
    pub width: usize,
    /// Each device's labels (`zescope_device_info`), runs and devices in order.
    pub devices: Vec<Labels>,
}

impl Catalog {
    /// The catalog of one run.
    pub fn new(run: &RunDescription) -> Catalog {
        let mut catalog = Catalog::default();
        catalog.add_run(run);
        catalog
    }

    /// Adds a run's streams after those already added (see the module docs).
    pub fn add_run(&mut self, run: &RunDescription) {
        // The run's (family, labels) so far: hashed, for a session's runs may hold millions of series.
        let mut taken: HashSet<(usize, Labels)> = HashSet::new();
        self.devices.extend(run.devices.iter().map(DeviceDescription::labels));
        for s in &run.streams {
            self.stream_starts.push(self.width);
            let mut base = match run.devices.get(s.device) {
                Some(d) => d.labels(),
                None => vec![("device".into(), String::new())],
            };
            base.push(("group".into(), s.group.clone()));
            let derived = s.group == DERIVED_GROUP;
            let source = if derived { "derived" } else { names::source_label(s.read_path) };
            base.push(("source".into(), source.to_owned()));
            let sysman = s.read_path == ReadPath::Sysman && !derived;
            for x in &s.series {
                let value = self.width;
                self.width += 1;
                let named = sysman.then(|| telemetry::telemetry(&x.name, &x.description, &x.unit)).flatten();
                let rules = match (named, x.description.strip_prefix(DERIVED_PREFIX).filter(|_| derived)) {
                    (Some(n), _) => self.telemetry_rules(n, &base, value),
                    (None, Some(definition)) => {
                        let mut rule = self.counter_rule(x, &s.group, &base, value);
                        rule.labels.push(("derived".into(), definition.to_owned()));
                        vec![rule]
                    }
                    (None, None) => vec![self.counter_rule(x, &s.group, &base, value)],
                };
                for mut rule in rules {
                    if !taken.insert((rule.family, rule.labels.clone())) {
                        rule.labels.push(("series".into(), x.name.clone()));
                        taken.insert((rule.family, rule.labels.clone()));
                    }
                    self.rules.push(rule);
                }
            }
        }
    }

    /// The sample a rule gives for the raw value `raw` (in the driver's unit), in its family's
    /// base unit; `None` for a value not read (NaN) or a counter below zero.
    pub fn sample(&self, rule: &SampleRule, raw: f64) -> Option<f64> {
        if !raw.is_finite() {
            return None;
        }
        let v = match rule.bit {
            Some(bit) => ((raw as u64 >> bit) & 1) as f64,
            None => raw * rule.scale,
        };
        let counter = self.families.get(rule.family).is_some_and(|f| f.counter);
        (!counter || v >= 0.0).then_some(v)
    }

    /// The rules of a telemetry series the naming knows.
    fn telemetry_rules(&mut self, n: telemetry::Named, base: &Labels, value: usize) -> Vec<SampleRule> {
        let alt = || format!("{}_telemetry{}", names::PREFIX, n.family.trim_start_matches(names::PREFIX));
        let family = self.family(n.family.clone(), alt, n.help.to_owned(), &n.unit, n.counter);
        let mut labels = base.clone();
        labels.extend(n.labels.iter().cloned());
        if n.reasons.is_empty() {
            return vec![SampleRule { family, labels, scale: n.unit.scale, value, bit: None }];
        }
        let reason = |(bit, reason): &(u32, String)| {
            let mut labels = labels.clone();
            labels.push(("reason".into(), reason.clone()));
            SampleRule { family, labels, scale: 1.0, value, bit: Some(*bit) }
        };
        n.reasons.iter().map(reason).collect()
    }

    /// The rule of any other series.
    fn counter_rule(&mut self, x: &SeriesDescription, group: &str, base: &Labels, value: usize) -> SampleRule {
        let unit = names::base_unit(&x.unit);
        let mut help = names::help_text(&x.description, &x.name);
        if unit.unit.is_none() && !x.unit.trim().is_empty() {
            help = format!("{help} (unit: {})", names::help_text(&x.unit, ""));
        }
        let alt = || names::family_name(&format!("{group} {}", x.name), &unit);
        let counter = names::is_counter(x.kind);
        let family = self.family(names::family_name(&x.name, &unit), alt, help, &unit, counter);
        SampleRule { family, labels: base.clone(), scale: unit.scale, value, bit: None }
    }

    /// The family for a counter: an existing one of the same name, kind and unit, or a new one
    /// (named `alt()` when the plain name is taken by another kind or unit, or reserved).
    fn family(
        &mut self,
        name: String,
        alt: impl FnOnce() -> String,
        help: String,
        unit: &BaseUnit,
        counter: bool,
    ) -> usize {
        let fits = |f: &Family| f.counter == counter && f.unit == unit.unit;
        names::pick_family(&self.families, name, alt, |f| &f.name, fits, names::reserved).unwrap_or_else(|name| {
            self.families.push(Family { name, help, unit: unit.unit, counter });
            self.families.len() - 1
        })
    }
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
