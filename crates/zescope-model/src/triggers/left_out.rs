//! A series a trigger or a derived series names, which the source has but a run leaves out: a
//! group not chosen, a metric a metric list leaves out, or a device not sampled. A run's own
//! check ([`super::names`], `derive`) can only say "no series of this run" and offer the run's
//! nearest names, which sends the user looking for a typo that is not there; [`left_out`] finds
//! what to add instead, and each front end says how (`record --group …`, the window's source
//! list).
//!
//! Only names the inventory lists are judged: a telemetry or derived name, a per-sub-device
//! column ("GpuTime (sub-device 1)"), or a name the source has nowhere is left to the run's own
//! check, and so is every name of a run that creates its own group (a target's `custom_group`).

use zescope_sampler::layout::glob::matches;
use zescope_sampler::{DeviceEntry, GroupEntry, Inventory, Target};

use super::SeriesPattern;
use super::syntax::{Condition, Trigger};
use crate::derive::Derivation;

/// One series name of triggers or derivations, with what names it ("derived series 'bw' names
/// 'MemoryTraffic/BytesRead'"; "trigger 'MemoryTraffic/BytesRead > 5' names
/// 'MemoryTraffic/BytesRead'").
pub struct Named<'a> {
    /// The start of a message about it.
    pub lead: String,
    /// The name's parts.
    pub pattern: &'a SeriesPattern,
}

/// Every series name of `derive` and of `triggers`, in order.
pub fn named<'a>(derive: &'a [Derivation], triggers: &'a [Trigger]) -> Vec<Named<'a>> {
    let mut out = Vec::new();
    for d in derive {
        for e in d.expr.series() {
            if let super::expr::Expr::Series { pattern, text, .. } = e {
                out.push(Named { lead: format!("derived series '{}' names '{text}'", d.name), pattern });
            }
        }
    }
    for t in triggers {
        if let Condition::Series { pattern, .. } = &t.condition {
            let text = match &pattern.device {
                Some(d) => format!("{d}/{}/{}", pattern.group, pattern.metric),
                None => format!("{}/{}", pattern.group, pattern.metric),
            };
            out.push(Named { lead: format!("trigger '{}' names '{text}'", t.text), pattern });
        }
    }
    out
}

/// What leaves a name's series out of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// Its device is not sampled.
    Device,
    /// Its group is not chosen; `instead` names the chosen group of its domain, which it would
    /// take the place of (a device samples one group per domain).
    Group {
        /// The chosen group of the same domain, if one is.
        instead: Option<String>,
    },
    /// Its group is chosen, and the run's metric list leaves the metric out.
    Metric,
}

/// A metric of the source a name matches and the run leaves out, and why.
#[derive(Clone, Debug)]
pub struct LeftOut<'a> {
    /// Its device.
    pub device: &'a DeviceEntry,
    /// Its group.
    pub group: &'a GroupEntry,
    /// The metric.
    pub metric: &'a str,
    /// What leaves it out.
    pub why: Why,
}

/// The first metric of `inv` that `p` matches, when `targets` (a run's) sample none of them;
/// `None` when they sample one, or `inv` has none, or the name is one the run's own check
/// judges (see the module docs). The run's devices are looked at first.
pub fn left_out<'a>(inv: &'a Inventory, targets: &[Target], p: &SeriesPattern) -> Option<LeftOut<'a>> {
    if targets.iter().any(|t| t.custom_group)
        || matches(&p.group, "Telemetry")
        || matches(&p.group, crate::derive::GROUP)
    {
        return None;
    }
    let target_of = |d: &DeviceEntry| targets.iter().find(|t| t.device == d.path);
    let mut hits: Vec<(&DeviceEntry, &GroupEntry, &str)> = inv
        .devices
        .iter()
        .filter(|d| p.device.as_deref().is_none_or(|w| matches(w, &d.name)))
        .flat_map(|d| d.groups.iter().map(move |g| (d, g)))
        .filter(|(_, g)| matches(&p.group, &g.name))
        .flat_map(|(d, g)| g.metrics.iter().map(move |m| (d, g, m.name.as_str())))
        .filter(|(_, _, m)| matches(&p.metric, m))
        .collect();
    hits.sort_by_key(|(d, _, _)| target_of(d).is_none());
    let sampled = |(d, g, m): &(&DeviceEntry, &GroupEntry, &str)| {
        target_of(d).is_some_and(|t| {
            t.groups.contains(&g.name) && (t.metrics.is_empty() || t.metrics.iter().any(|w| matches(w, m)))
        })
    };
    if hits.iter().any(sampled) {
        return None;
    }
    let &(device, group, metric) = hits.first()?;
    let why = match target_of(device) {
        None => Why::Device,
        Some(t) if t.groups.contains(&group.name) => Why::Metric,
        Some(t) => Why::Group {
            instead: t
                .groups
                .iter()
                .find(|name| device.groups.iter().any(|x| &x.name == *name && x.domain == group.domain))
                .cloned(),
        },
    };
    Some(LeftOut { device, group, metric, why })
}
