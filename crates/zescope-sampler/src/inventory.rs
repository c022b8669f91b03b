//! The device/group inventory the UI shows: every device and sub-device, its groups, what each
//! exports, why a group cannot be sampled when it cannot, and which ways read it (each way says
//! so itself: `read::Way::lists`).

use crate::layout::{LayoutSet, Owner};
use zescope_ze::{Device, GroupExport, Loader, Origin};

use super::claims::{Claim, SAMPLER_WAIT};
use super::protocol::{DeviceEntry, DevicePath, GroupEntry, GroupExportKind, Inventory, MetricEntry, SourceInfo};
use super::read::{self, Way};
use super::teardown::{Pending, PendingDisable};

/// The inventory. Disables a driver refused after listing are added to `pending` (to retry
/// later); a device that a pending leftover blocks is listed without enabling metrics on it.
pub(crate) fn build(
    loader: &Loader,
    layouts: &LayoutSet,
    requested: zescope_ze::Source,
    pending: &mut Vec<Pending>,
) -> Inventory {
    let simulated_origin = loader.origin == Origin::BuiltInSim;
    let description = match loader.origin {
        Origin::LevelZero => "Level Zero loader".to_owned(),
        Origin::BuiltInSim => "built-in simulated device".to_owned(),
    };
    let mut inv = Inventory {
        source: Some(SourceInfo {
            requested,
            simulated: simulated_origin || loader.drivers.iter().all(|d| d.info.simulated),
            description,
            fallback_reason: loader.fallback_reason.clone(),
        }),
        devices: Vec::new(),
    };
    for (di, driver) in loader.drivers.iter().enumerate() {
        let simulated = simulated_origin || driver.info.simulated;
        let uuid = zescope_ze::uuid_string(&driver.info.uuid);
        let Ok(devices) = driver.devices() else { continue };
        for (i, dev) in devices.iter().enumerate() {
            let path = DevicePath { driver: di, device: i, sub_device: None };
            let driver_of = (uuid.as_str(), driver.info.version);
            inv.devices.push(entry((dev, dev), path, simulated, driver_of, layouts, pending));
            for (s, sub) in dev.sub_devices().unwrap_or_default().iter().enumerate() {
                let path = DevicePath { sub_device: Some(s), ..path };
                inv.devices.push(entry((sub, dev), path, simulated, driver_of, layouts, pending));
            }
        }
    }
    inv
}

/// The entry of `dev` (whose root device is `root`) of a driver (`uuid`, `driver_version`).
fn entry(
    (dev, root): (&Device, &Device),
    path: DevicePath,
    simulated: bool,
    (uuid, driver_version): (&str, u32),
    layouts: &LayoutSet,
    pending: &mut Vec<Pending>,
) -> DeviceEntry {
    let mut e = DeviceEntry {
        path,
        name: dev.info.name.clone(),
        kind: dev.info.kind,
        uuid: dev.info.uuid_string(),
        vendor_id: dev.info.vendor_id,
        device_id: dev.info.device_id,
        pci_bdf: dev.info.pci_bdf.clone(),
        driver_version,
        simulated,
        groups: Vec::new(),
        error: None,
    };
    let groups = match list_groups((dev, root), path, pending) {
        Ok(g) => g,
        Err(err) => {
            e.error = Some(err.to_string());
            return e;
        }
    };
    // Each way says which of the listed groups it reads.
    let ways: Vec<Box<dyn Way>> = read::ways();
    for g in groups {
        let metrics = g.metrics().unwrap_or_default();
        let per_metric = metrics.iter().any(|m| m.info.exports_dma_buf());
        let exports = match (&g.info.export, per_metric) {
            (GroupExport::DmaBuf, _) => GroupExportKind::Group,
            (_, true) => GroupExportKind::PerMetric,
            (GroupExport::Unknown(_), _) => GroupExportKind::Unknown,
            (GroupExport::No, _) => GroupExportKind::None,
        };
        let target = Owner { simulated, driver_uuid: uuid, device: &dev.info.name, group: &g.info.name };
        let streamable = g.info.sampling & level_zero_sys::ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0;
        let export_unavailable = match (&g.info.export, exports) {
            _ if g.info.tracer_based() => Some(zescope_ze::TRACER_BASED_UNREAD.to_owned()),
            (GroupExport::Unknown(why), GroupExportKind::Unknown) => Some(format!("export properties unusable: {why}")),
            (_, GroupExportKind::None) => Some("this group exports no memory".to_owned()),
            _ if layouts.select(&target).is_none() => {
                Some("no layout describes this group's memory (see docs/layout-format.md)".to_owned())
            }
            _ => None,
        };
        let unavailable = match &export_unavailable {
            Some(_) if g.info.tracer_based() => None,
            Some(why) if !streamable => Some(format!("{why}, and it has no time-based sampling for the streamer")),
            _ => None,
        };
        e.groups.push(GroupEntry {
            name: g.info.name.clone(),
            description: g.info.description.clone(),
            domain: g.info.domain,
            exports,
            streamable,
            tracer: g.info.tracer_based(),
            export_unavailable,
            metrics: metrics
                .iter()
                .map(|m| MetricEntry {
                    name: m.info.name.clone(),
                    description: m.info.description.clone(),
                    unit: m.info.units.clone(),
                })
                .collect(),
            unavailable,
            ways: Vec::new(),
        });
        let g = e.groups.last_mut().expect("just pushed");
        g.ways = read::listing(&ways, g);
    }
    e
}

/// The device's groups; where metrics are off but the driver can enable them at run time, they
/// are enabled just for the listing (and disabled again), holding the root device (`claims`):
/// a device another thread holds is listed as it is.
fn list_groups(
    (dev, root): (&Device, &Device),
    path: DevicePath,
    pending: &mut Vec<Pending>,
) -> Result<Vec<zescope_ze::MetricGroup>, zescope_ze::ZeError> {
    let groups = dev.metric_groups()?;
    // Enabling and disabling on a device whose earlier run could not free its memory would
    // disable under that live import.
    let blocked = pending.iter().any(|p| p.blocks(path));
    if !groups.is_empty() || blocked {
        return Ok(groups);
    }
    let Ok(claim) = Claim::take(root, &dev.info.name, SAMPLER_WAIT) else { return Ok(groups) };
    if !dev.enable_metrics().unwrap_or(false) {
        return Ok(groups);
    }
    // Nothing is activated on this device between enable and disable.
    let groups = dev.metric_groups();
    if let Err(e) = dev.disable_metrics() {
        log::warn!("disabling metrics after listing {}: {e}", dev.info.name);
        pending.push(PendingDisable::new(dev.clone(), path, claim).into());
    }
    groups
}
