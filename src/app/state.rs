//! The UI's plain state: what the sampler told us, what the user selected, the series seen so
//! far. No egui types that would stop tests from building it by hand.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::sampler::{DevicePath, Inventory, RunConfig, RunInfo, SamplerError, SeriesInfo, Stats};
use crate::store::{SeriesId, StreamId};

/// A counter as the user knows it, stable across runs: which device, group and metric.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SeriesKey {
    pub device: String,
    pub group: String,
    pub metric: String,
}

impl SeriesKey {
    pub fn label(&self) -> String {
        format!("{}/{}", self.group, self.metric)
    }
}

/// Everything known about one counter: its description and its series in the store (one per
/// run that sampled it).
#[derive(Clone, Debug)]
pub struct SeriesEntry {
    pub info: SeriesInfo,
    pub ids: Vec<SeriesId>,
}

impl SeriesEntry {
    /// Unit of what is plotted: per second for cumulative counters.
    pub fn plotted_unit(&self) -> String {
        match self.info.kind {
            crate::layout::Kind::Gauge => self.info.unit.clone(),
            crate::layout::Kind::Cumulative => format!("{}/s", self.info.unit),
        }
    }
}

/// The run in progress, as far as the UI is concerned.
#[derive(Clone, Debug)]
pub struct ActiveRun {
    pub info: RunInfo,
    pub streams: Vec<StreamId>,
    pub keys: Vec<Vec<SeriesKey>>,
    pub started: Instant,
}

/// What the user picked in the source panel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    pub device: Option<DevicePath>,
    pub groups: BTreeSet<String>,
    /// Metrics the user unticked, per group (all ticked by default).
    pub excluded: BTreeMap<String, BTreeSet<String>>,
    pub interval: Duration,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            device: None,
            groups: BTreeSet::new(),
            excluded: BTreeMap::new(),
            interval: Duration::from_millis(10),
        }
    }
}

/// An error shown as a banner until dismissed.
#[derive(Clone, Debug)]
pub struct Banner {
    pub id: u64,
    pub error: SamplerError,
    pub count: u32,
}

#[derive(Default)]
pub struct AppState {
    pub inventory: Option<Inventory>,
    pub selection: Selection,
    pub run: Option<ActiveRun>,
    pub stats: Option<Stats>,
    pub banners: Vec<Banner>,
    next_banner: u64,
    pub series: BTreeMap<SeriesKey, SeriesEntry>,
    pub samples_total: u64,
    /// The last run's device name, for the status bar after it stopped.
    pub last_device: Option<String>,
    /// The sampler is gone (shut down or crashed).
    pub sampler_gone: bool,
    /// Source, devices and runs so far, for sessions.
    pub history: crate::session::RunHistory,
    /// Optional features the driver does not offer, turned off for the current run (shown in
    /// the status bar and the diagnostics window).
    pub notices: Vec<String>,
}

impl AppState {
    pub fn push_error(&mut self, error: SamplerError) {
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

    pub fn dismiss(&mut self, id: u64) {
        self.banners.retain(|b| b.id != id);
    }

    /// The run configuration the current selection describes, if it is complete.
    pub fn run_config(&self) -> Result<RunConfig, String> {
        let device = self.selection.device.ok_or("choose a device")?;
        if self.selection.groups.is_empty() {
            return Err("tick at least one metric group".into());
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
        Ok(RunConfig {
            device,
            groups: self.selection.groups.iter().cloned().collect(),
            metrics: if any_excluded { metrics } else { Vec::new() },
            custom_group: false,
            interval: self.selection.interval,
        })
    }
}
