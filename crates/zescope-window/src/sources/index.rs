//! The source panel's search over a catalogue of any size: every group's and metric's text
//! (name, description, unit) lowercased once per inventory, and the answer for the current query
//! kept until the query or the inventory changes, so a frame does no text work at all.
//!
//! A query is words separated by spaces; an item matches when every word is in its text (`l3
//! bank 05`). A group matches as a whole when its own name and description hold every word (then
//! all its metrics are shown); otherwise the metrics whose text — with their group's — holds every
//! word are shown, and the group with them. Matching ignores case.

use std::hash::{Hash, Hasher};

use zescope_sampler::Inventory;

/// What the query shows of one group.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum GroupHit {
    /// Nothing matches: the group is hidden.
    Hidden,
    /// The group itself matches (or there is no query): all its metrics.
    All,
    /// These metrics (indices into the group's) match.
    Some(Vec<u32>),
}

/// The lowercased text of one group and its metrics.
struct GroupText {
    text: String,
    metrics: Vec<String>,
}

/// The lowercased catalogue and the answer to the current query.
#[derive(Default)]
pub(crate) struct SearchIndex {
    /// What the text was built from (`fingerprint` of the inventory).
    built_for: Option<u64>,
    /// Per device, per group.
    text: Vec<Vec<GroupText>>,
    /// The query `hits` answers (as typed).
    query: String,
    /// Per device, per group.
    hits: Vec<Vec<GroupHit>>,
}

/// A cheap identity of an inventory's catalogue: its devices, groups and metric counts.
fn fingerprint(inv: &Inventory) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for d in &inv.devices {
        (d.path.driver, d.path.device, d.path.sub_device, &d.name).hash(&mut h);
        for g in &d.groups {
            (&g.name, g.description.len(), g.metrics.len()).hash(&mut h);
            if let (Some(a), Some(b)) = (g.metrics.first(), g.metrics.last()) {
                (&a.name, &b.name).hash(&mut h);
            }
        }
    }
    h.finish()
}

/// Every word of `words` is in `a` or in `b`.
fn holds(words: &[String], a: &str, b: &str) -> bool {
    words.iter().all(|w| a.contains(w.as_str()) || b.contains(w.as_str()))
}

impl SearchIndex {
    /// Brings the answer up to date with `inv` and `query` (work only when either changed).
    pub(crate) fn update(&mut self, inv: &Inventory, query: &str) {
        let fp = fingerprint(inv);
        let rebuilt = self.built_for != Some(fp);
        if rebuilt {
            self.text = inv
                .devices
                .iter()
                .map(|d| {
                    d.groups
                        .iter()
                        .map(|g| GroupText {
                            text: format!("{} {}", g.name, g.description).to_lowercase(),
                            metrics: g
                                .metrics
                                .iter()
                                .map(|m| format!("{} {} {}", m.name, m.description, m.unit).to_lowercase())
                                .collect(),
                        })
                        .collect()
                })
                .collect();
            self.built_for = Some(fp);
        }
        if !rebuilt && self.query == query && !self.hits.is_empty() {
            return;
        }
        self.query = query.to_owned();
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        self.hits = self
            .text
            .iter()
            .map(|groups| {
                groups
                    .iter()
                    .map(|g| {
                        if holds(&words, &g.text, "") {
                            return GroupHit::All;
                        }
                        let some: Vec<u32> = (0..g.metrics.len() as u32)
                            .filter(|&i| holds(&words, &g.text, &g.metrics[i as usize]))
                            .collect();
                        if some.is_empty() { GroupHit::Hidden } else { GroupHit::Some(some) }
                    })
                    .collect()
            })
            .collect();
    }

    /// What the query shows of group `group` of device `device` (inventory order).
    pub(crate) fn hit(&self, device: usize, group: usize) -> &GroupHit {
        self.hits.get(device).and_then(|d| d.get(group)).unwrap_or(&GroupHit::Hidden)
    }
}

/// Does `text` hold every word of `query` (ignoring case)? For the few fixed items (the
/// telemetry node) that are not in the index.
pub(crate) fn words_match(query: &str, text: &str) -> bool {
    let text = text.to_lowercase();
    query.split_whitespace().all(|w| text.contains(&w.to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use zescope_sampler::{DevicePath, GroupEntry, GroupExportKind, MetricEntry};

    /// A group: name, description, (metric, unit) pairs.
    type Group<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

    fn inventory(groups: &[Group]) -> Inventory {
        let group = |(name, description, metrics): &Group| GroupEntry {
            name: name.to_string(),
            description: description.to_string(),
            domain: 0,
            exports: GroupExportKind::None,
            streamable: true,
            tracer: false,
            metrics: metrics
                .iter()
                .map(|(m, unit)| MetricEntry {
                    name: m.to_string(),
                    description: format!("{m} counter"),
                    unit: unit.to_string(),
                })
                .collect(),
            unavailable: None,
            export_unavailable: None,
            ways: vec![zescope_sampler::Via::Streamer],
        };
        Inventory {
            source: None,
            devices: vec![zescope_sampler::testing::gpu_entry(
                DevicePath { driver: 0, device: 0, sub_device: None },
                "GPU",
                groups.iter().map(group).collect(),
            )],
        }
    }

    fn catalogue() -> Inventory {
        inventory(&[
            (
                "ComputeBasic",
                "Compute metrics basic set",
                &[("GpuTime", "ns"), ("GpuBusy", "%"), ("GtiReadThroughput", "bytes")],
            ),
            ("L3_1", "L3 cache set 1", &[("L3Bank00Hits", "messages"), ("L3Bank05Hits", "messages"), ("GpuBusy", "%")]),
        ])
    }

    #[test]
    fn every_word_must_match_in_the_metric_or_its_group() {
        let mut ix = SearchIndex::default();
        let inv = catalogue();
        ix.update(&inv, "");
        assert_eq!((ix.hit(0, 0), ix.hit(0, 1)), (&GroupHit::All, &GroupHit::All));
        ix.update(&inv, "GPUBUSY");
        assert_eq!((ix.hit(0, 0), ix.hit(0, 1)), (&GroupHit::Some(vec![1]), &GroupHit::Some(vec![2])));
        ix.update(&inv, "l3 bank 05");
        assert_eq!((ix.hit(0, 0), ix.hit(0, 1)), (&GroupHit::Hidden, &GroupHit::Some(vec![1])));
        ix.update(&inv, "compute");
        assert_eq!(
            (ix.hit(0, 0), ix.hit(0, 1)),
            (&GroupHit::All, &GroupHit::Hidden),
            "a group's own name shows it all"
        );
        ix.update(&inv, "basic busy");
        assert_eq!(ix.hit(0, 0), &GroupHit::Some(vec![1]), "words across group and metric");
        ix.update(&inv, "bytes");
        assert_eq!(ix.hit(0, 0), &GroupHit::Some(vec![2]), "units are searched");
        assert_eq!(ix.hit(3, 3), &GroupHit::Hidden, "out of range is hidden");
    }

    #[test]
    fn a_new_inventory_is_indexed_again() {
        let mut ix = SearchIndex::default();
        ix.update(&catalogue(), "gputime");
        assert_eq!(ix.hit(0, 0), &GroupHit::Some(vec![0]));
        let other = inventory(&[("Other", "", &[("X", ""), ("GpuTime", "ns")])]);
        ix.update(&other, "gputime");
        assert_eq!((ix.hit(0, 0), ix.hit(0, 1)), (&GroupHit::Some(vec![1]), &GroupHit::Hidden));
        assert!(words_match("Sysman POWER", "telemetry sysman frequency power"));
        assert!(!words_match("gpu", "telemetry sysman"));
    }
}
