//! `zescope list`: drivers, devices, sub-devices and metric groups as text.

use std::fmt::Write;

use crate::ze::{Device, Error, GroupExport, Loader, Origin, Source};

/// The listing of `source` (every metric of every group too when `metrics` is set), or the
/// error that kept the loader from opening.
pub fn list(source: Source, metrics: bool) -> Result<String, Error> {
    let loader = Loader::open(source)?;
    Ok(render(&loader, metrics))
}

/// The text of `zescope list` for an opened loader: its source, then each driver, device,
/// sub-device and metric group (with every metric when `metrics` is set).
fn render(loader: &Loader, metrics: bool) -> String {
    let mut out = String::new();
    let origin = match loader.origin {
        Origin::LevelZero => "Level Zero loader (libze_loader.so.1)",
        Origin::BuiltInSim => "built-in simulated driver (no hardware)",
    };
    let _ = writeln!(out, "Source: {origin}");
    if let Some(why) = &loader.fallback_reason {
        let _ = writeln!(out, "  (the real Level Zero loader was not used: {why})");
    }
    for (i, d) in loader.drivers.iter().enumerate() {
        let sim = if d.info.simulated || loader.origin == Origin::BuiltInSim { "  [SIMULATED]" } else { "" };
        let _ = writeln!(
            out,
            "Driver {i}: version {:#x}, API {}.{}, uuid {}{sim}",
            d.info.version,
            d.info.api_version.0,
            d.info.api_version.1,
            crate::ze::uuid_string(&d.info.uuid)
        );
        let simulated = !sim.is_empty();
        match d.devices() {
            Ok(devs) if devs.is_empty() => {
                let _ = writeln!(out, "  no devices");
            }
            Ok(devs) => {
                for (j, dev) in devs.iter().enumerate() {
                    device(&mut out, dev, &format!("Device {j}"), 1, simulated, metrics);
                }
            }
            Err(e) => {
                let _ = writeln!(out, "  devices: {e}");
            }
        }
    }
    out
}

fn device(out: &mut String, dev: &Device, label: &str, depth: usize, simulated: bool, metrics: bool) {
    let pad = "  ".repeat(depth);
    let i = &dev.info;
    let _ = writeln!(
        out,
        "{pad}{label}: {} [{:?}, {:04x}:{:04x}, {} MHz, uuid {}{}]{}",
        i.name,
        i.kind,
        i.vendor_id,
        i.device_id,
        i.core_clock_mhz,
        i.uuid_string(),
        i.pci_bdf.as_ref().map(|b| format!(", PCI {b}")).unwrap_or_default(),
        if simulated { "  [SIMULATED]" } else { "" }
    );
    let _ = match crate::ze::sysman::summary(dev) {
        Ok(what) => writeln!(out, "{pad}  telemetry: {what}"),
        Err(why) => writeln!(out, "{pad}  telemetry: none: {why}"),
    };
    match dev.metric_groups() {
        Ok(groups) if groups.is_empty() => {
            let _ = writeln!(out, "{pad}  no metric groups (metrics disabled, or none on this device)");
        }
        Ok(groups) => {
            for g in groups {
                let ms = g.metrics();
                let per_metric =
                    ms.as_ref().map(|m| m.iter().filter(|m| m.info.exports_dma_buf()).count()).unwrap_or(0);
                let export = match (&g.info.export, per_metric) {
                    (GroupExport::DmaBuf, _) => "DMA-BUF (whole group)".to_owned(),
                    (_, n) if n > 0 => format!("DMA-BUF per metric ({n} of {} metrics)", g.info.metric_count),
                    (GroupExport::Unknown(why), _) => format!("unknown ({why})"),
                    (GroupExport::No, _) => "none".to_owned(),
                };
                let exported = per_metric > 0 || g.info.export == GroupExport::DmaBuf;
                let time_based = g.info.sampling & level_zero_sys::ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0;
                // How `auto` reads it (a layout is still needed for exported memory).
                let read = match (exported, time_based) {
                    _ if g.info.tracer_based() => {
                        "neither (tracer-based: read with the metric tracer, not yet by zescope)"
                    }
                    (true, _) => "exported memory",
                    (false, true) => "streamer (period and reports per notification granted at the start)",
                    (false, false) => "neither (no exported memory, no time-based sampling)",
                };
                let _ = writeln!(
                    out,
                    "{pad}  group {}: domain {}, {}, {} metrics, exports: {export}, read by: {read}",
                    g.info.name,
                    g.info.domain,
                    g.info.sampling_name(),
                    g.info.metric_count
                );
                if !g.info.description.is_empty() {
                    let _ = writeln!(out, "{pad}      {}", g.info.description);
                }
                if metrics {
                    match ms {
                        Ok(ms) => {
                            for m in ms {
                                let _ = writeln!(
                                    out,
                                    "{pad}      - {} [{}] {}{}",
                                    m.info.name,
                                    m.info.units,
                                    m.info.type_name(),
                                    if m.info.exports_dma_buf() { ", exports DMA-BUF" } else { "" }
                                );
                            }
                        }
                        Err(e) => {
                            let _ = writeln!(out, "{pad}      metrics: {e}");
                        }
                    }
                }
            }
        }
        Err(e) => {
            let _ = writeln!(out, "{pad}  metric groups: {e}");
        }
    }
    match dev.sub_devices() {
        Ok(subs) => {
            for (k, s) in subs.iter().enumerate() {
                device(out, s, &format!("Sub-device {k}"), depth + 1, simulated, metrics);
            }
        }
        Err(e) => {
            let _ = writeln!(out, "{pad}  sub-devices: {e}");
        }
    }
}
