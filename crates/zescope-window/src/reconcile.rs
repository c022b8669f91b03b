//! Remembered settings against the devices actually found: a selection and a pane arrangement saved
//! on another machine (or with another driver) must not block Start nor leave stale legends.
//!
//! Contract of [`reconcile`], run on every inventory:
//! - each selected device stays if it is still there, else it is dropped; with no device left,
//!   the first device with a group that can be sampled is chosen;
//! - per selected device: groups that the device lacks or cannot sample are dropped, and so are
//!   unticked metrics the device does not have; with no group left, the device's first
//!   sampleable group is ticked;
//! - pane series whose device or group this machine does not have are removed unless
//!   the store holds recorded data for them; panes emptied that way are removed (a device's
//!   telemetry is not one of its metric groups but is its own: a device here has it, read or
//!   not);
//! - what was dropped is said in one message (the caller shows it once, as a banner that goes
//!   away after a successful start); nothing dropped, no message.

use zescope_sampler::telemetry;
use zescope_sampler::{DeviceEntry, Inventory};

use super::panes::Panes;
use super::state::AppState;

/// Reconciles the selection and the arrangement with `inv` (module docs); returns what was dropped.
pub fn reconcile(state: &mut AppState, panes: &mut Panes, inv: &Inventory) -> Option<String> {
    let mut dropped: Vec<String> = Vec::new();
    let sampleable = |d: &DeviceEntry| d.groups.iter().any(|g| g.unavailable.is_none());
    let sel = &mut state.selection;
    let gone: Vec<_> = sel.picked().iter().map(|p| p.0).filter(|p| !inv.devices.iter().any(|d| d.path == *p)).collect();
    for p in &gone {
        sel.unpick(*p);
    }
    if sel.device.is_none()
        && let Some(d) = inv.devices.iter().find(|d| sampleable(d))
    {
        sel.pick(d.path, Default::default());
    }
    match gone.len() {
        _ if sel.device.is_none() => {}
        0 => {}
        1 => dropped.push("the remembered device".into()),
        n => dropped.push(format!("{n} remembered devices")),
    }
    let picked: Vec<&DeviceEntry> =
        sel.picked().iter().filter_map(|p| inv.devices.iter().find(|d| d.path == p.0)).collect();
    let several = picked.len() > 1;
    for dev in &picked {
        let Some(choice) = sel.choice_mut(dev.path) else { continue };
        let gone: Vec<String> = (choice.groups.iter())
            .filter(|name| !dev.groups.iter().any(|g| &g.name == *name && g.unavailable.is_none()))
            .cloned()
            .collect();
        let of = if several { format!(" of {}", dev.name) } else { String::new() };
        for g in &gone {
            choice.groups.remove(g);
            dropped.push(format!("metric group \"{g}\"{of}"));
        }
        choice.excluded.retain(|group, metrics| {
            let Some(g) = dev.groups.iter().find(|g| &g.name == group) else { return false };
            metrics.retain(|m| g.metrics.iter().any(|x| &x.name == m));
            !metrics.is_empty()
        });
        if choice.groups.is_empty()
            && let Some(g) = dev.groups.iter().find(|g| g.unavailable.is_none())
        {
            choice.groups.insert(g.name.clone());
            if !gone.is_empty() {
                dropped.push(format!("now sampling \"{}\"{of}", g.name));
            }
        }
    }
    let stale = prune_arrangement(state, panes, inv);
    if stale > 0 {
        dropped.push(format!("{stale} plotted series this machine does not have"));
    }
    if dropped.is_empty() {
        return None;
    }
    let names: Vec<&str> = picked.iter().map(|d| d.name.as_str()).collect();
    let name = if names.is_empty() { "no device".to_owned() } else { names.join(" + ") };
    Some(format!("remembered settings do not match {name}: dropped {}", dropped.join(", ")))
}

/// Removes pane series this machine lacks and that hold no recorded data; returns how many.
fn prune_arrangement(state: &AppState, panes: &mut Panes, inv: &Inventory) -> usize {
    let exists = |k: &zescope_model::view::SeriesKey| {
        inv.devices.iter().any(|d| {
            // Device and group: an arrangement's series names may differ from the group's metric list.
            d.name == k.device && (k.group == telemetry::GROUP || d.groups.iter().any(|g| g.name == k.group))
        })
    };
    let mut removed = 0;
    let mut emptied = Vec::new();
    for p in &mut panes.arrangement.panes {
        let before = p.series.len();
        p.series.retain(|k| exists(k) || state.ingest.series.contains_key(k));
        removed += before - p.series.len();
        if before > 0 && p.series.is_empty() {
            emptied.push(p.id);
        }
    }
    for id in emptied {
        panes.remove_pane(id);
    }
    removed
}
