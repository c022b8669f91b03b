//! The UI's plain state: what the sampler told us, what the user selected, the series seen so
//! far. No egui types that would stop tests from building it by hand.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::sampler::{DevicePath, Inventory, RunConfig, Stats, Via};
use crate::view::Ingest;

use super::banner::{Banner, BannerError};

/// What the user picked in the source panel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// The device to sample; `None` until one is picked (or reconciled from the inventory).
    pub device: Option<DevicePath>,
    /// Names of the ticked metric groups.
    pub groups: BTreeSet<String>,
    /// Metrics the user unticked, per group (all ticked by default).
    pub excluded: BTreeMap<String, BTreeSet<String>>,
    /// The sampling period asked of the sampler (10 ms by default).
    pub interval: Duration,
    /// How the groups are read: exported memory, the time-based streamer, or auto.
    #[serde(default)]
    pub via: Via,
    /// The device's "Telemetry" node is ticked: its Sysman telemetry is read with the groups.
    #[serde(default = "ticked")]
    pub telemetry: bool,
}

fn ticked() -> bool {
    true
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            device: None,
            groups: BTreeSet::new(),
            excluded: BTreeMap::new(),
            interval: Duration::from_millis(10),
            via: Via::Auto,
            telemetry: true,
        }
    }
}

/// Everything the window shows that is not egui's or the store's; updated from the sampler's
/// events at the start of each frame.
#[derive(Default)]
pub struct AppState {
    /// The source and devices the sampler found; `None` until its first inventory arrives.
    pub inventory: Option<Inventory>,
    /// What the user picked in the source panel.
    pub selection: Selection,
    /// The run in progress and every series seen, as filed into the store.
    pub ingest: Ingest,
    /// The running sampler's latest statistics; `None` before the first report.
    pub(crate) stats: Option<Stats>,
    /// Errors shown, oldest first (at most 8: the oldest goes).
    pub banners: Vec<Banner>,
    next_banner: u64,
    /// The last run's device name, for the status bar after it stopped.
    pub(crate) last_device: Option<String>,
    /// The sampler is gone (shut down or crashed).
    pub(crate) sampler_gone: bool,
    /// Source, devices and runs so far, for sessions.
    pub history: crate::session::RunHistory,
}

impl AppState {
    /// Optional features the driver does not offer, turned off for the current run (shown in
    /// the status bar and the diagnostics window); empty without a run.
    pub(crate) fn notices(&self) -> &[String] {
        self.ingest.run.as_ref().map_or(&[], |r| &r.info.notices)
    }

    /// Shows `error` as a banner (a repeat of one shown counts up instead).
    pub(crate) fn push_error(&mut self, error: impl Into<BannerError>) {
        let error = error.into();
        if let Some(b) = self.banners.iter_mut().find(|b| b.error == error) {
            b.count += 1;
            return;
        }
        self.next_banner += 1;
        self.banners.push(Banner { id: self.next_banner, error, count: 1 });
        if self.banners.len() > 8 {
            self.banners.remove(0);
        }
    }

    /// Removes banner `id` (the user closed it); an unknown id changes nothing.
    pub(crate) fn dismiss(&mut self, id: u64) {
        self.banners.retain(|b| b.id != id);
    }

    /// The run configuration the current selection describes, if it is complete.
    /// The inventory entry of the selected device, if any.
    pub(crate) fn selected_device(&self) -> Option<crate::sampler::DeviceEntry> {
        let path = self.selection.device?;
        self.inventory.as_ref()?.devices.iter().find(|d| d.path == path).cloned()
    }

    pub(crate) fn run_config(&self) -> Result<RunConfig, String> {
        let device = self.selection.device.ok_or("choose a device")?;
        if self.selection.groups.is_empty() && !self.selection.telemetry {
            return Err("tick at least one metric group, or the device's telemetry".into());
        }
        let inv = self.inventory.as_ref().ok_or("no devices yet")?;
        let dev = inv.devices.iter().find(|d| d.path == device).ok_or("the device is gone; refresh")?;
        let mut metrics = Vec::new();
        let mut any_excluded = false;
        for g in dev.groups.iter().filter(|g| self.selection.groups.contains(&g.name)) {
            let excluded = self.selection.excluded.get(&g.name);
            for m in &g.metrics {
                if excluded.is_some_and(|e| e.contains(&m.name)) {
                    any_excluded = true;
                } else {
                    metrics.push(m.name.clone());
                }
            }
        }
        if any_excluded && metrics.is_empty() {
            return Err("tick at least one metric".into());
        }
        // Only groups this device has: a stale remembered name never reaches the sampler.
        let groups: Vec<String> =
            dev.groups.iter().filter(|g| self.selection.groups.contains(&g.name)).map(|g| g.name.clone()).collect();
        if groups.is_empty() && !self.selection.telemetry {
            return Err("tick at least one metric group of this device".into());
        }
        Ok(RunConfig {
            device,
            groups,
            metrics: if any_excluded { metrics } else { Vec::new() },
            custom_group: false,
            interval: self.selection.interval,
            via: self.selection.via,
            telemetry: self.selection.telemetry,
        })
    }
}
