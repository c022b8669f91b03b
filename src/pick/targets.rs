//! The devices and groups of a headless run over one or more devices: `--device` given several
//! times (or as a comma list), and `--group` as `DEVICE:GROUP` for one device or a plain `GROUP`
//! for every chosen device that has it. A device left without a group gets its default group
//! (`pick_groups`), so one-device command lines mean what they meant before.

use super::{pick_device, pick_groups};
use crate::sampler::{DeviceEntry, Inventory, Target, Via};

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
        // A group whose own name has a colon is taken whole.
        let own_name = chosen.iter().any(|d| d.groups.iter().any(|x| &x.name == g));
        match g.split_once(':').filter(|_| !own_name) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::{DevicePath, GroupEntry, GroupExportKind, MetricEntry};
    use zescope_ze::DeviceKind;

    fn device(index: usize, name: &str, groups: &[(&str, &[&str])]) -> DeviceEntry {
        let group = |(g, metrics): &(&str, &[&str])| GroupEntry {
            name: g.to_string(),
            description: String::new(),
            domain: 0,
            exports: GroupExportKind::Group,
            streamable: false,
            metrics: metrics
                .iter()
                .map(|m| MetricEntry { name: m.to_string(), description: String::new(), unit: String::new() })
                .collect(),
            unavailable: None,
            export_unavailable: None,
        };
        DeviceEntry {
            path: DevicePath { driver: 0, device: index, sub_device: None },
            name: name.into(),
            kind: DeviceKind::Gpu,
            uuid: String::new(),
            vendor_id: 0x8086,
            device_id: 0,
            pci_bdf: None,
            driver_version: 0,
            simulated: true,
            groups: groups.iter().map(group).collect(),
            error: None,
        }
    }

    fn inventory() -> Inventory {
        let gpu = device(0, "GPU", &[("Compute", &["Busy", "Power"]), ("Odd:Name", &["Busy"])]);
        let npu = device(1, "NPU", &[("Npu", &["Inferences", "Power"])]);
        Inventory { source: None, devices: vec![gpu, npu] }
    }

    /// (root device index, groups, metrics) per target.
    type Picked = Vec<(usize, Vec<String>, Vec<String>)>;

    fn picked(devices: &[&str], groups: &[&str], metrics: &[&str]) -> Result<Picked, String> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let t = pick_targets(&inventory(), &s(devices), &s(groups), &s(metrics), Via::Auto)?;
        Ok(t.into_iter().map(|t| (t.device.device, t.groups, t.metrics)).collect())
    }

    #[test]
    fn groups_go_to_the_device_named_or_to_every_device_that_has_them() {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(picked(&[], &[], &[]).unwrap(), [(0, v(&["Compute"]), v(&[]))], "one device as before");
        assert_eq!(picked(&["1"], &["Whatever"], &[]).unwrap(), [(1, v(&["Whatever"]), v(&[]))], "its own group");
        let both = picked(&["GPU", "NPU"], &["NPU:Npu", "Odd:Name"], &[]).unwrap();
        assert_eq!(both, [(0, v(&["Odd:Name"]), v(&[])), (1, v(&["Npu"]), v(&[]))], "a colon in a group's own name");
        // A device named twice counts once; a device without a --group takes its default.
        let both = picked(&["0", "GPU", "1"], &["Compute"], &["Power", "Busy"]).unwrap();
        assert_eq!(both, [(0, v(&["Compute"]), v(&["Power", "Busy"])), (1, v(&["Npu"]), v(&["Power"]))]);
    }

    #[test]
    fn what_fits_no_chosen_device_is_refused_by_name() {
        let e = picked(&["0"], &["NPU:Npu"], &[]).unwrap_err();
        assert!(e.contains("not one of the devices to record"), "{e}");
        let e = picked(&["0", "1"], &["Nothing"], &[]).unwrap_err();
        assert!(e.contains("none of the devices to record (GPU, NPU)"), "{e}");
        let e = picked(&["0", "1"], &[], &["Inferences"]).unwrap_err();
        assert!(e.starts_with("GPU: none of the --metric names"), "{e}");
        let e = picked(&["2"], &[], &[]).unwrap_err();
        assert!(e.contains("no device matches \"2\""), "{e}");
    }
}
