//! The devices and groups of a headless run over one or more devices: `--device` given several
//! times (or as a comma list), and `--group` as `DEVICE:GROUP` for one device or a plain `GROUP`
//! for every chosen device that has it. A device left without a group gets its default group
//! (`pick_groups`), so one-device command lines mean what they meant before.
//!
//! `GROUP` and `--metric` names may be globs (`*` any run of characters, `?` one): a pattern
//! stands for every group of the device (every metric of its chosen groups) whose name it
//! matches. A pattern that matches nothing is an error naming it, and so is a group pattern
//! that matches several groups of one domain (a device samples one group per domain at a time).
//! Plain names are taken as they are.

use super::{pick_device, pick_groups};
use zescope_sampler::layout::glob;
use zescope_sampler::{DeviceEntry, Inventory, Target, Via};

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
                match glob::is_pattern(group) {
                    true => wanted[i].extend(expand_groups(d, group.trim()).map_err(|e| format!("--group {g}: {e}"))?),
                    false => wanted[i].push(group.trim().to_owned()),
                }
            }
            // One device: the group is its own, as before (a wrong name is the sampler's error).
            None if chosen.len() == 1 && !glob::is_pattern(g) => wanted[0].push(g.clone()),
            None if glob::is_pattern(g) => {
                let mut errors = Vec::new();
                for (i, d) in chosen.iter().enumerate() {
                    match expand_groups(d, g) {
                        Ok(names) => wanted[i].extend(names),
                        Err(e) => errors.push(e),
                    }
                }
                if errors.len() == chosen.len() {
                    return Err(format!("--group {g}: {}", errors.join("; ")));
                }
            }
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
    let mut matched = vec![false; metrics.len()];
    for (d, mut w) in chosen.iter().zip(wanted) {
        dedup(&mut w);
        let groups = pick_groups(d, &w, via).map_err(|e| format!("{}: {e}", d.name))?;
        // With several devices each takes the --metric names its groups have; a pattern stands
        // for the names of its groups' metrics it matches.
        let mut mine = Vec::new();
        for (m, hit) in metrics.iter().zip(&mut matched) {
            if glob::is_pattern(m) {
                let names = metric_names(d, &groups).filter(|n| glob::matches(m, n));
                let before = mine.len();
                mine.extend(names.map(str::to_owned));
                *hit |= mine.len() > before;
            } else if chosen.len() == 1 || has_metric(d, &groups, m) {
                mine.push(m.clone());
                *hit = true;
            }
        }
        dedup(&mut mine);
        targets.push(Target { device: d.path, groups, metrics: mine, custom_group: false });
    }
    // A pattern that matched nothing is named first: it is what the user can fix.
    if let Some(i) = matched.iter().position(|hit| !hit) {
        let groups: Vec<String> = targets.iter().flat_map(|t| t.groups.iter().cloned()).collect();
        return Err(format!(
            "--metric {}: matches no metric of the groups to record ({})",
            metrics[i],
            groups.join(", ")
        ));
    }
    if let Some((t, d)) = targets.iter().zip(&chosen).find(|(t, _)| t.metrics.is_empty() && !metrics.is_empty()) {
        return Err(format!(
            "{}: none of the --metric names is a metric of its groups ({})",
            d.name,
            t.groups.join(", ")
        ));
    }
    Ok(targets)
}

/// Refuses a `--metric` name that none of its target's groups has, by name: with the group of
/// the device that has it, or the metrics the groups have. (The sampler keeps the names its
/// groups have and drops the rest without a word, so `--metric GpuPower,Nope` recorded GpuPower
/// alone, and `--metric Nope` said only that no chosen metric belongs to the chosen groups.)
/// A run that creates its own group is left to the sampler, which knows the domain's metrics.
pub fn check_metrics(inv: &Inventory, targets: &[Target]) -> Result<(), String> {
    for t in targets.iter().filter(|t| !t.custom_group) {
        let Some(d) = inv.devices.iter().find(|d| d.path == t.device) else { continue };
        let Some(m) = t.metrics.iter().find(|m| !has_metric(d, &t.groups, m)) else { continue };
        // (Only a run of one device gets here: with several, each takes the names its groups have.)
        if let Some(g) = d.groups.iter().find(|g| g.metrics.iter().any(|x| &x.name == m)) {
            let g = &g.name;
            return Err(format!(
                "--metric {m}: a metric of group {g}, which this run does not record: add --group {g}"
            ));
        }
        let names: Vec<String> = metric_names(d, &t.groups).map(str::to_owned).collect();
        return Err(format!(
            "--metric {m}: matches no metric of the groups to record ({}); their metrics: {} (`zescope list \
             --metrics` lists every group's)",
            t.groups.join(", "),
            crate::commands::list::shorten(&names, 12)
        ));
    }
    Ok(())
}

/// The groups of `d` whose names `pattern` matches, or why none can be taken: none matches, or
/// several of one domain do.
fn expand_groups(d: &DeviceEntry, pattern: &str) -> Result<Vec<String>, String> {
    let hits: Vec<_> = d.groups.iter().filter(|g| glob::matches(pattern, &g.name)).collect();
    if hits.is_empty() {
        let names: Vec<String> = d.groups.iter().map(|g| g.name.clone()).collect();
        return Err(format!(
            "matches no metric group of {}; its groups: {}",
            d.name,
            crate::commands::list::shorten(&names, 12)
        ));
    }
    for g in &hits {
        let same: Vec<&str> = hits.iter().filter(|o| o.domain == g.domain).map(|o| o.name.as_str()).collect();
        if same.len() > 1 {
            return Err(format!(
                "matches {} of {}, all in domain {}: a device samples one group per domain at a time; \
                 narrow the pattern or name one group",
                crate::commands::list::shorten(&same.iter().map(|s| s.to_string()).collect::<Vec<_>>(), 6),
                d.name,
                g.domain
            ));
        }
    }
    Ok(hits.into_iter().map(|g| g.name.clone()).collect())
}

/// The metric names of `groups` of `d`, group after group.
fn metric_names<'a>(d: &'a DeviceEntry, groups: &'a [String]) -> impl Iterator<Item = &'a str> {
    d.groups.iter().filter(|g| groups.contains(&g.name)).flat_map(|g| g.metrics.iter().map(|m| m.name.as_str()))
}

/// Drops later repeats, keeping the order.
fn dedup(v: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|x| seen.insert(x.clone()));
}

/// Is `metric` in one of `groups` of `d`?
fn has_metric(d: &DeviceEntry, groups: &[String], metric: &str) -> bool {
    d.groups.iter().filter(|g| groups.contains(&g.name)).any(|g| g.metrics.iter().any(|m| m.name == metric))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::pick::testing::{device, inventory};

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
    fn a_metric_no_group_of_the_run_has_is_refused_by_name() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let inv = inventory();
        let check = |devices: &[&str], groups: &[&str], metrics: &[&str]| {
            let targets = pick_targets(&inv, &s(devices), &s(groups), &s(metrics), Via::Auto).unwrap();
            check_metrics(&inv, &targets)
        };
        // Beside a name that is there, a name that is not was dropped without a word.
        assert_eq!(
            check(&[], &[], &["Power", "Nope"]).unwrap_err(),
            "--metric Nope: matches no metric of the groups to record (Compute); their metrics: Busy, Power \
             (`zescope list --metrics` lists every group's)"
        );
        // Another group's metric: which group to add.
        let inv2 = {
            let mut i = inventory();
            i.devices[0].groups.push(device(0, "GPU", &[("Traffic", &["BytesRead"])]).groups.remove(0));
            i
        };
        let targets = pick_targets(&inv2, &[], &[], &s(&["BytesRead"]), Via::Auto).unwrap();
        let e = check_metrics(&inv2, &targets).unwrap_err();
        assert_eq!(
            e,
            "--metric BytesRead: a metric of group Traffic, which this run does not record: add --group Traffic"
        );
        assert_eq!(check(&[], &[], &["Power", "Busy"]), Ok(()));
        assert_eq!(check(&["0", "1"], &[], &["Power", "Inferences"]), Ok(()), "each device takes its own");
        // A run that creates its group is the sampler's to judge.
        let mut targets = pick_targets(&inv, &[], &[], &s(&["Nope"]), Via::Auto).unwrap();
        targets[0].custom_group = true;
        assert_eq!(check_metrics(&inv, &targets), Ok(()));
    }

    /// A way that reads none of a device's groups is said as that, with each group's reason and
    /// the way that reads one (it said "no metric group of this device can be sampled", listing
    /// each group as "can be sampled").
    #[test]
    fn a_way_that_reads_no_group_says_why_and_which_way_does() {
        let e = pick_targets(&inventory(), &["1".into()], &[], &[], Via::Tracer).unwrap_err();
        assert_eq!(
            e,
            "NPU: --via tracer reads no metric group of this device:\n  Npu: not tracer-based: the metric tracer \
             cannot read it\n--via auto reads Npu"
        );
    }

    #[test]
    fn group_and_metric_patterns_stand_for_the_names_they_match() {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(picked(&[], &["Comp*"], &["B*"]).unwrap(), [(0, v(&["Compute"]), v(&["Busy"]))]);
        assert_eq!(picked(&[], &["Compute"], &["*"]).unwrap(), [(0, v(&["Compute"]), v(&["Busy", "Power"]))]);
        // A pattern, a plain name and a repeat: each metric once, in order.
        assert_eq!(picked(&[], &[], &["Power", "*o*", "Busy"]).unwrap(), [(0, v(&["Compute"]), v(&["Power", "Busy"]))]);
        // Across devices: each takes what its groups have.
        let both = picked(&["0", "1"], &["?pu", "Comp*"], &["*er*"]).unwrap();
        assert_eq!(both, [(0, v(&["Compute"]), v(&["Power"])), (1, v(&["Npu"]), v(&["Inferences", "Power"]))]);
        let both = picked(&["0", "1"], &["NPU:N*"], &[]).unwrap();
        assert_eq!(both[1], (1, v(&["Npu"]), v(&[])));
    }

    #[test]
    fn a_pattern_that_matches_nothing_or_one_domain_twice_is_refused_by_name() {
        let e = picked(&[], &["Render*"], &[]).unwrap_err();
        assert!(e.starts_with("--group Render*: matches no metric group of GPU; its groups: Compute, Odd:Name"), "{e}");
        let e = picked(&[], &["Compute"], &["Gpu*"]).unwrap_err();
        assert_eq!(e, "--metric Gpu*: matches no metric of the groups to record (Compute)");
        let e = picked(&["0", "1"], &["X*"], &[]).unwrap_err();
        assert!(e.contains("--group X*: matches no metric group of GPU") && e.contains("of NPU"), "{e}");
        // Compute and Odd:Name are both in domain 0.
        let e = picked(&[], &["*"], &[]).unwrap_err();
        assert!(e.contains("--group *: matches Compute, Odd:Name of GPU, all in domain 0"), "{e}");
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

    /// Two drivers, each with a device 0, one device's name inside the other's: every device
    /// can be named, by `D/N` or by its whole name, in either order of the drivers.
    #[test]
    fn devices_of_two_drivers_are_each_named_and_never_taken_for_one_another() {
        for swapped in [false, true] {
            let mut first = device(0, "ze-sim NPU copy", &[("NpuOnly", &["Inferences"])]);
            let mut second = device(0, "ze-sim NPU", &[("NpuActivity", &["Busy"])]);
            second.path.driver = 1;
            if swapped {
                std::mem::swap(&mut first, &mut second);
                (first.path.driver, second.path.driver) = (0, 1);
            }
            let inv = Inventory { source: None, devices: vec![first, second] };
            let pick = |w: &str| super::pick_device(&inv, Some(w)).map(|d| (d.path.driver, d.name.clone()));
            let (copy_driver, plain_driver) = if swapped { (1, 0) } else { (0, 1) };
            assert_eq!(pick("ze-sim NPU").unwrap(), (plain_driver, "ze-sim NPU".into()), "the whole name wins");
            assert_eq!(pick("NPU copy").unwrap(), (copy_driver, "ze-sim NPU copy".into()));
            assert_eq!(pick("1/0").unwrap().0, 1, "device 0 of driver 1");
            assert_eq!(pick("0").unwrap().0, 0, "a plain index: the first driver's");
            let e = pick("2/0").unwrap_err();
            assert!(e.contains("0/0 (") && e.contains("1/0 ("), "{e}");
        }
    }
}
