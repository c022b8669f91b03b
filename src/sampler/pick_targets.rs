//! The devices and groups of a headless run over one or more devices: `--device` given several
//! times (or as a comma list), and `--group` as `DEVICE:GROUP` for one device or a plain `GROUP`
//! for every chosen device that has it. A device left without a group gets its default group
//! (`pick_groups`), so one-device command lines mean what they meant before.

use super::pick::{pick_device, pick_groups};
use super::protocol::{DeviceEntry, Inventory, Target, Via};

/// Resolves `devices` (each as `--device` takes it; none: the first sampleable device),
/// `groups` (`GROUP` or `DEVICE:GROUP`) and `metrics` into one target per device.
pub fn pick_targets(
    inv: &Inventory,
    devices: &[String],
    groups: &[String],
    metrics: &[String],
    via: Via,
) -> Result<Vec<Target>, String> {
    let mut chosen: Vec<&DeviceEntry> = Vec::new();
    for d in devices.iter().map(|d| pick_device(inv, Some(d.trim()))) {
        let d = d?;
        if !chosen.iter().any(|c| c.path == d.path) {
            chosen.push(d);
        }
    }
    if chosen.is_empty() {
        chosen.push(pick_device(inv, None)?);
    }
    let mut wanted: Vec<Vec<String>> = vec![Vec::new(); chosen.len()];
    for g in groups {
        match g.split_once(':') {
            Some((dev, group)) => {
                let d = pick_device(inv, Some(dev.trim())).map_err(|e| format!("--group {g}: {e}"))?;
                let i = chosen.iter().position(|c| c.path == d.path).ok_or_else(|| {
                    format!("--group {g}: device {dev:?} ({}) is not one of the devices to record (--device)", d.name)
                })?;
                wanted[i].push(group.trim().to_owned());
            }
            // One device: the group is its own, as before (a wrong name is the sampler's error).
            None if chosen.len() == 1 => wanted[0].push(g.clone()),
            None => {
                let mut any = false;
                for (i, d) in chosen.iter().enumerate() {
                    if d.groups.iter().any(|x| &x.name == g) {
                        wanted[i].push(g.clone());
                        any = true;
                    }
                }
                if !any {
                    let names: Vec<&str> = chosen.iter().map(|d| d.name.as_str()).collect();
                    return Err(format!(
                        "--group {g}: none of the devices to record ({}) has this group; name one with DEVICE:GROUP",
                        names.join(", ")
                    ));
                }
            }
        }
    }
    let mut targets = Vec::new();
    for (d, w) in chosen.iter().zip(wanted) {
        let groups = pick_groups(d, &w, via).map_err(|e| format!("{}: {e}", d.name))?;
        // With several devices each takes the --metric names its groups have.
        let mine: Vec<String> = match chosen.len() {
            1 => metrics.to_vec(),
            _ => metrics.iter().filter(|m| has_metric(d, &groups, m)).cloned().collect(),
        };
        if mine.is_empty() && !metrics.is_empty() {
            return Err(format!(
                "{}: none of the --metric names is a metric of its groups ({})",
                d.name,
                groups.join(", ")
            ));
        }
        targets.push(Target { device: d.path, groups, metrics: mine, custom_group: false });
    }
    Ok(targets)
}

/// Is `metric` in one of `groups` of `d`?
fn has_metric(d: &DeviceEntry, groups: &[String], metric: &str) -> bool {
    d.groups.iter().filter(|g| groups.contains(&g.name)).any(|g| g.metrics.iter().any(|m| m.name == metric))
}
