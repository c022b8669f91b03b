//! A series that `--derive` or `--trigger` names, which the source has but the run would not
//! record: a group left out, a metric `--metric` leaves out, or a device not given to `--device`.
//! Without this check the run's own check (`zescope_model::derive`, `triggers::names`) can only
//! say "no series of this run" and offer the run's nearest names, which sends the user looking
//! for a typo that is not there; [`check`] says what to add to the command line instead.
//!
//! Only names the inventory lists are judged: a telemetry or derived name, a per-sub-device
//! column ("GpuTime (sub-device 1)"), or a name the source has nowhere is left to the run's own
//! check, and so is every name of a run that creates its own group (`--custom-group`).

use super::{index_of, label};
use zescope_model::derive::Derivation;
use zescope_model::triggers::{Condition, SeriesPattern, Trigger};
use zescope_sampler::layout::glob::matches;
use zescope_sampler::{DeviceEntry, GroupEntry, Inventory, Target, Via};

/// One series name of the command line, with what names it ("derived series 'bw' names
/// 'MemoryTraffic/BytesRead'"; "trigger 'MemoryTraffic/BytesRead > 5' names 'MemoryTraffic/BytesRead'").
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
            if let zescope_model::triggers::expr::Expr::Series { pattern, text, .. } = e {
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

/// Errs, saying what to add, for each of `named` that no series of `targets` (read `via`)
/// matches and a metric of `inv` does (see the module docs); `Ok` otherwise.
pub fn check(inv: &Inventory, targets: &[Target], via: Via, named: &[Named]) -> Result<(), String> {
    if targets.iter().any(|t| t.custom_group) {
        return Ok(());
    }
    let said: Vec<String> = named.iter().filter_map(|n| unrecorded(inv, targets, via, n)).collect();
    if said.is_empty() { Ok(()) } else { Err(said.join("; ")) }
}

/// What to add for `n`, when it names only series the run leaves out.
fn unrecorded(inv: &Inventory, targets: &[Target], via: Via, n: &Named) -> Option<String> {
    let p = n.pattern;
    if matches(&p.group, "Telemetry") || matches(&p.group, zescope_model::derive::GROUP) {
        return None;
    }
    let device_ok = |d: &DeviceEntry| p.device.as_deref().is_none_or(|w| matches(w, &d.name));
    let target_of = |d: &DeviceEntry| targets.iter().find(|t| t.device == d.path);
    // Every (device, group, metric) the name matches, the run's devices first.
    let mut hits: Vec<(&DeviceEntry, &GroupEntry, &str)> = inv
        .devices
        .iter()
        .filter(|d| device_ok(d))
        .flat_map(|d| d.groups.iter().map(move |g| (d, g)))
        .filter(|(_, g)| matches(&p.group, &g.name))
        .flat_map(|(d, g)| g.metrics.iter().map(move |m| (d, g, m.name.as_str())))
        .filter(|(_, _, m)| matches(&p.metric, m))
        .collect();
    hits.sort_by_key(|(d, _, _)| target_of(d).is_none());
    let recorded = |(d, g, m): &(&DeviceEntry, &GroupEntry, &str)| {
        target_of(d).is_some_and(|t| {
            t.groups.contains(&g.name) && (t.metrics.is_empty() || t.metrics.iter().any(|w| matches(w, m)))
        })
    };
    if hits.is_empty() || hits.iter().any(recorded) {
        return None;
    }
    let (d, g, m) = hits[0];
    let several = targets.len() > 1;
    let cannot = match g.read_by(via) {
        Some(_) => String::new(),
        None => format!(" (--via {} cannot read it: {})", via.name(), g.unreadable_by(via).unwrap_or_default()),
    };
    let Some(t) = target_of(d) else {
        let mut devices: Vec<String> = targets
            .iter()
            .filter_map(|t| inv.devices.iter().find(|x| x.path == t.device))
            .map(|x| label(inv, x))
            .collect();
        let this = label(inv, d);
        devices.push(this.clone());
        return Some(format!(
            "{}, a metric of {} (device {this}), which this run does not record: add --device {} --group {this}:{}{cannot}",
            n.lead,
            d.name,
            devices.join(","),
            g.name
        ));
    };
    let group = match several {
        true => format!("{}:{}", label(inv, d), g.name),
        false => g.name.clone(),
    };
    if t.groups.contains(&g.name) {
        return Some(format!("{}, which --metric leaves out of group {}: add --metric {m}", n.lead, g.name));
    }
    let same_domain = t.groups.iter().find(|name| d.groups.iter().any(|x| &x.name == *name && x.domain == g.domain));
    let of = match several {
        true => format!(" of {} (device {})", d.name, index_of(d)),
        false => String::new(),
    };
    Some(match same_domain {
        Some(other) => format!(
            "{}, a metric of group {}{of}, which this run does not record: record it with --group {group} in place \
             of {other} (they share domain {}, and a device samples one group per domain){cannot}",
            n.lead, g.name, g.domain
        ),
        None => format!(
            "{}, a metric of group {}{of}, which this run does not record: add --group {group}{cannot}",
            n.lead, g.name
        ),
    })
}

#[cfg(test)]
#[path = "unrecorded_tests.rs"]
mod tests;
