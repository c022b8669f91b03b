//! Which device and groups a headless command (`record`, `serve`) samples: `--device` and
//! `--group` resolved against the inventory, with an error that says why nothing fits.

mod targets;
#[cfg(test)]
mod testing;
pub mod unrecorded;

pub use targets::{check_metrics, pick_targets};

use zescope_sampler::{DeviceEntry, Inventory, Via};

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
    format!("{} ({}):\n{}", index_of(d), d.name, lines.join("\n"))
}

const DOCTOR: &str = "run `zescope doctor` to see what keeps metrics away and how to fix it";

/// Resolves `--device`: an index ("1"; with several drivers "1/0" is device 0 of driver 1, and
/// a plain index the first driver's), a sub-device ("0.1", "1/0.1"), or part of a device name
/// (a device whose whole name it is comes first, so with "ze-sim NPU" and "ze-sim NPU copy" on
/// two drivers, either order, each can be named). Without it: the first device with a group
/// that exports memory and can be sampled.
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
    let first_driver = inv.devices.first().map_or(0, |d| d.path.driver);
    let found = match parse_index(w) {
        Some((driver, root, sub)) => inv.devices.iter().find(|d| {
            d.path.driver == driver.unwrap_or(first_driver) && d.path.device == root && d.path.sub_device == sub
        }),
        None => {
            let lower = w.to_lowercase();
            let whole = inv.devices.iter().find(|d| d.name.to_lowercase() == lower);
            whole.or_else(|| inv.devices.iter().find(|d| d.name.to_lowercase().contains(&lower)))
        }
    };
    found.ok_or_else(|| {
        let names: Vec<String> = inv.devices.iter().map(|d| format!("{} ({})", label(inv, d), d.name)).collect();
        format!("no device matches {w:?}; devices: {}", names.join(", "))
    })
}

/// "1", "0.1": `d`'s index within its driver.
fn index_of(d: &DeviceEntry) -> String {
    match d.path.sub_device {
        None => d.path.device.to_string(),
        Some(s) => format!("{}.{s}", d.path.device),
    }
}

/// "1" → (None, 1, None), "0.1" → (None, 0, Some(1)), "2/1.0" → (Some(2), 1, Some(0)).
fn parse_index(w: &str) -> Option<(Option<usize>, usize, Option<usize>)> {
    let (driver, rest) = match w.split_once('/') {
        Some((d, r)) => (Some(d.trim().parse().ok()?), r.trim()),
        None => (None, w),
    };
    match rest.split_once('.') {
        None => Some((driver, rest.parse().ok()?, None)),
        Some((a, b)) => Some((driver, a.parse().ok()?, Some(b.parse().ok()?))),
    }
}

/// How `--device` names `d`: its index, after its driver's where the inventory has several
/// drivers ("1/0.1").
pub(crate) fn label(inv: &Inventory, d: &DeviceEntry) -> String {
    let index = index_of(d);
    match inv.devices.iter().any(|o| o.path.driver != d.path.driver) {
        true => format!("{}/{index}", d.path.driver),
        false => index,
    }
}

/// The groups to sample on `device`: `wanted` as given, or the device's first group `via` can
/// read, exported memory first (where `via` allows it), else one the metric streamer reads.
pub fn pick_groups(device: &DeviceEntry, wanted: &[String], via: Via) -> Result<Vec<String>, String> {
    if !wanted.is_empty() {
        return Ok(wanted.to_vec());
    }
    let exported = device.groups.iter().find(|g| g.read_by(via) == Some(Via::Export));
    let g = exported.or_else(|| device.groups.iter().find(|g| g.read_by(via).is_some()));
    let Some(g) = g else {
        // A way that reads none of them, when another would: each group's reason, and the way.
        if via != Via::Auto
            && let Some(other) = device.groups.iter().find(|g| g.read_by(Via::Auto).is_some())
        {
            let each: Vec<String> = device
                .groups
                .iter()
                .map(|g| format!("  {}: {}", g.name, g.unreadable_by(via).unwrap_or_default()))
                .collect();
            return Err(format!(
                "--via {} reads no metric group of this device:\n{}\n--via auto reads {}",
                via.name(),
                each.join("\n"),
                other.name
            ));
        }
        return Err(format!("no metric group of this device can be sampled: {}\n{DOCTOR}", why_not(device)));
    };
    Ok(vec![g.name.clone()])
}
