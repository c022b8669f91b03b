//! `record --view FILE`: the view's series are what is recorded. Each device to record takes the
//! groups and metrics its kind's patterns name (`viewfile::SeriesPattern`: device kind, group and
//! metric globs), one group per domain; telemetry patterns (`Telemetry/…`) are read by the
//! telemetry, which `--no-telemetry` still turns off. Without `--device` the devices are the
//! root devices the view names a metric of ([`devices`]: `npu-inference.ron` records the NPU,
//! not the first GPU, which it names nothing of), else the default device. A device the view
//! names nothing of is not recorded; a view that names nothing of any device is an error naming
//! its patterns. The view's
//! derived series are recorded as `--derive` ones are ([`derivations`]; those `--derive` names
//! again are its own).

use zescope_model::viewfile::ViewFile;
use zescope_sampler::{Inventory, Target};

/// A device kind as view files name it: `gpu`, `npu`, `cpu`, `fpga`.
pub(crate) fn kind_name(kind: zescope_ze::DeviceKind) -> String {
    format!("{kind:?}").to_lowercase()
}

/// The patterns of `view` that name a device's metrics: not telemetry (read by the telemetry)
/// nor derived series (not read from a device: `record` derives them, [`derivations`]).
fn device_patterns(view: &ViewFile) -> Vec<&zescope_model::viewfile::SeriesPattern> {
    let (telemetry, derived) = (zescope_sampler::telemetry::GROUP, zescope_model::derive::GROUP);
    view.panes.iter().flat_map(|p| &p.series).filter(|s| s.group != telemetry && s.group != derived).collect()
}

/// The root devices of `inv` that `view` names a metric of (not telemetry nor a derived
/// series), as `--device` takes them; empty when it names none.
pub(super) fn devices(view: &ViewFile, inv: &Inventory) -> Vec<String> {
    let patterns = device_patterns(view);
    inv.devices
        .iter()
        .filter(|d| d.path.sub_device.is_none())
        .filter(|d| {
            let kind = kind_name(d.kind);
            let mut metrics = d
                .groups
                .iter()
                .filter(|g| g.unavailable.is_none())
                .flat_map(|g| g.metrics.iter().map(move |m| (g.name.as_str(), m.name.as_str())));
            metrics.any(|(g, m)| patterns.iter().any(|p| p.names(g, m, Some(&kind))))
        })
        .map(|d| crate::commands::pick::label(inv, d))
        .collect()
}

/// Narrows `targets` to the groups and metrics `view` names (see the module docs).
pub(super) fn narrow(view: &ViewFile, inv: &Inventory, targets: &mut Vec<Target>) -> Result<(), String> {
    let patterns = device_patterns(view);
    if patterns.is_empty() {
        // Telemetry only: every device's telemetry, with its default group.
        return Ok(());
    }
    targets.retain_mut(|t| {
        let Some(d) = inv.devices.iter().find(|d| d.path == t.device) else { return false };
        let kind = kind_name(d.kind);
        let (mut groups, mut metrics, mut domains) = (Vec::<String>::new(), Vec::<String>::new(), Vec::<u32>::new());
        for p in &patterns {
            if p.device.as_deref().is_some_and(|k| !k.eq_ignore_ascii_case(&kind)) {
                continue;
            }
            for g in d.groups.iter().filter(|g| g.unavailable.is_none()) {
                if !zescope_sampler::layout::glob::matches(&p.group, &g.name) {
                    continue;
                }
                let named: Vec<&str> = g
                    .metrics
                    .iter()
                    .map(|m| m.name.as_str())
                    .filter(|m| zescope_sampler::layout::glob::matches(&p.metric, m))
                    .collect();
                if named.is_empty() {
                    continue;
                }
                if !groups.contains(&g.name) {
                    // One group per domain: the first the view names.
                    if domains.contains(&g.domain) {
                        continue;
                    }
                    domains.push(g.domain);
                    groups.push(g.name.clone());
                }
                for m in named {
                    if !metrics.iter().any(|x| x == m) {
                        metrics.push(m.to_owned());
                    }
                }
            }
        }
        if groups.is_empty() {
            return false;
        }
        (t.groups, t.metrics) = (groups, metrics);
        true
    });
    if targets.is_empty() {
        let named: Vec<String> = patterns.iter().map(|p| p.shown()).collect();
        return Err(format!("the view names no series of the devices to record: {}", named.join(", ")));
    }
    Ok(())
}

/// The derived series to record: `given` (`--derive`), then those of `view` of other names.
pub(super) fn derivations(
    given: &[zescope_model::derive::Derivation],
    view: Option<&ViewFile>,
) -> Vec<zescope_model::derive::Derivation> {
    let mut out = given.to_vec();
    for d in view.map(zescope_model::viewfile::derivations).unwrap_or_default() {
        if !out.iter().any(|o| o.name == d.name) {
            out.push(d);
        }
    }
    out
}
