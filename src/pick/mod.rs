//! Which device and groups a headless command (`record`, `serve`) samples: `--device` and
//! `--group` resolved against the inventory, with an error that says why nothing fits.

mod targets;

pub use targets::pick_targets;

use crate::sampler::{DeviceEntry, Inventory, Via};

/// Why nothing on `d` can be sampled: one line per group.
fn why_not(d: &DeviceEntry) -> String {
    let mut lines: Vec<String> = d
        .groups
        .iter()
        .map(|g| format!("  {}: {}", g.name, g.unavailable.as_deref().unwrap_or("can be sampled")))
        .collect();
    if let Some(e) = &d.error {
        lines.push(format!("  (its metric groups could not be listed: {e})"));
    }
    if lines.is_empty() {
        lines.push("  (it reports no metric groups)".into());
    }
    format!("{} ({}):\n{}", label(d), d.name, lines.join("\n"))
}

const DOCTOR: &str = "run `zescope doctor` to see what keeps metrics away and how to fix it";

/// Resolves `--device`: an index ("1"), a sub-device ("0.1"), or part of a device name. Without
/// it: the first device with a group that exports memory and can be sampled.
pub fn pick_device<'a>(inv: &'a Inventory, wanted: Option<&str>) -> Result<&'a DeviceEntry, String> {
    let sampleable = |d: &DeviceEntry| d.groups.iter().any(|g| g.unavailable.is_none());
    let Some(w) = wanted else {
        return inv.devices.iter().find(|d| sampleable(d)).ok_or_else(|| {
            let each: Vec<String> = inv.devices.iter().map(why_not).collect();
            if each.is_empty() {
                return format!("no device was found; {DOCTOR}");
            }
            format!("no device has a metric group zescope can sample:\n{}\n{DOCTOR}", each.join("\n"))
        });
    };
    let by_index = w.split_once('.').map_or_else(
        || w.parse::<usize>().ok().map(|i| (i, None)),
        |(a, b)| Some((a.parse().ok()?, Some(b.parse().ok()?))),
    );
    let found = match by_index {
        Some((root, sub)) => inv.devices.iter().find(|d| d.path.device == root && d.path.sub_device == sub),
        None => inv.devices.iter().find(|d| d.name.to_lowercase().contains(&w.to_lowercase())),
    };
    found.ok_or_else(|| {
        let names: Vec<String> = inv.devices.iter().map(|d| format!("{} ({})", label(d), d.name)).collect();
        format!("no device matches {w:?}; devices: {}", names.join(", "))
    })
}

fn label(d: &DeviceEntry) -> String {
    match d.path.sub_device {
        None => d.path.device.to_string(),
        Some(s) => format!("{}.{s}", d.path.device),
    }
}

/// The groups to sample on `device`: `wanted` as given, or the device's first group `via` can
/// read, exported memory first (where `via` allows it), else one the metric streamer reads.
pub fn pick_groups(device: &DeviceEntry, wanted: &[String], via: Via) -> Result<Vec<String>, String> {
    if !wanted.is_empty() {
        return Ok(wanted.to_vec());
    }
    let exported = device.groups.iter().find(|g| g.read_by(via) == Some(Via::Export));
    let g = exported
        .or_else(|| device.groups.iter().find(|g| g.read_by(via).is_some()))
        .ok_or_else(|| format!("no metric group of this device can be sampled: {}\n{DOCTOR}", why_not(device)))?;
    Ok(vec![g.name.clone()])
}
