//! The UI's plain state: what the sampler told us, what the user selected, the series seen so
//! far. No egui types that would stop tests from building it by hand.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use zescope_model::view::Ingest;
use zescope_sampler::{DevicePath, Health, Inventory, RunConfig, Target, Via};

use super::banner::{Banner, BannerError};

/// What the user picked in the source panel: one or more devices, each with its own groups,
/// sampled together in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// The (first) device to sample; `None` until one is picked (or reconciled from the
    /// inventory).
    pub device: Option<DevicePath>,
    /// Names of the ticked metric groups of `device`.
    pub groups: BTreeSet<String>,
    /// Metrics of `device` the user unticked, per group (all ticked by default).
    pub excluded: BTreeMap<String, BTreeSet<String>>,
    /// Further devices sampled in the same run, each with its own groups, in the order ticked.
    #[serde(default)]
    pub more: Vec<DeviceChoice>,
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

/// Metrics the user unticked, per group.
pub type Excluded = BTreeMap<String, BTreeSet<String>>;

/// A further device of the selection and its choices (as `Selection`'s own fields for its first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceChoice {
    /// The device.
    pub device: DevicePath,
    /// Names of its ticked metric groups.
    pub groups: BTreeSet<String>,
    /// Its metrics the user unticked, per group.
    #[serde(default)]
    pub excluded: BTreeMap<String, BTreeSet<String>>,
}

/// A device's ticked groups and unticked metrics, borrowed from a `Selection`.
pub struct ChoiceMut<'a> {
    /// Its ticked groups.
    pub groups: &'a mut BTreeSet<String>,
    /// Its unticked metrics, per group.
    pub excluded: &'a mut BTreeMap<String, BTreeSet<String>>,
}

impl Selection {
    /// Every picked device with its groups and unticked metrics, the first device first.
    pub fn picked(&self) -> Vec<(DevicePath, &BTreeSet<String>, &Excluded)> {
        let first = self.device.map(|d| (d, &self.groups, &self.excluded));
        first.into_iter().chain(self.more.iter().map(|c| (c.device, &c.groups, &c.excluded))).collect()
    }

    /// Is `path` one of the devices to sample?
    pub fn is_picked(&self, path: DevicePath) -> bool {
        self.device == Some(path) || self.more.iter().any(|c| c.device == path)
    }

    /// The ticked groups of `path` (`None` when it is not picked).
    pub fn groups_of(&self, path: DevicePath) -> Option<&BTreeSet<String>> {
        if self.device == Some(path) {
            return Some(&self.groups);
        }
        self.more.iter().find(|c| c.device == path).map(|c| &c.groups)
    }

    /// The metrics of `path` the user unticked, per group (`None` when it is not picked).
    pub fn excluded_of(&self, path: DevicePath) -> Option<&Excluded> {
        if self.device == Some(path) {
            return Some(&self.excluded);
        }
        self.more.iter().find(|c| c.device == path).map(|c| &c.excluded)
    }

    /// The choices of `path` to change, if it is picked.
    pub fn choice_mut(&mut self, path: DevicePath) -> Option<ChoiceMut<'_>> {
        if self.device == Some(path) {
            return Some(ChoiceMut { groups: &mut self.groups, excluded: &mut self.excluded });
        }
        let c = self.more.iter_mut().find(|c| c.device == path)?;
        Some(ChoiceMut { groups: &mut c.groups, excluded: &mut c.excluded })
    }

    /// Adds `path` to the devices to sample with `groups` ticked (nothing if it is picked); the
    /// devices after the first are kept in the source list's order.
    pub fn pick(&mut self, path: DevicePath, groups: BTreeSet<String>) {
        if self.is_picked(path) {
            return;
        }
        if self.device.is_none() {
            self.device = Some(path);
            self.groups = groups;
            self.excluded.clear();
        } else {
            self.more.push(DeviceChoice { device: path, groups, excluded: BTreeMap::new() });
            // In the source list's order (a tile beside its device), not the order ticked: the
            // run's streams, the legend and the panes follow it.
            self.more.sort_by_key(|c| (c.device.driver, c.device.device, c.device.sub_device));
        }
    }

    /// Stops sampling `path`; when it was the first device, the next one takes its place.
    pub fn unpick(&mut self, path: DevicePath) {
        self.more.retain(|c| c.device != path);
        if self.device == Some(path) {
            match (!self.more.is_empty()).then(|| self.more.remove(0)) {
                Some(next) => {
                    self.device = Some(next.device);
                    self.groups = next.groups;
                    self.excluded = next.excluded;
                }
                None => {
                    self.device = None;
                    self.groups.clear();
                    self.excluded.clear();
                }
            }
        }
    }
}

impl Selection {
    /// What `config` samples, as the source panel shows it (a remote server's run: the window
    /// shows its ticks and cannot change them). Unticked metrics are those of each group that
    /// `config` leaves out, as `inv` lists them; interval, way and telemetry are the run's.
    pub fn of_run(config: &RunConfig, inv: Option<&Inventory>) -> Selection {
        let mut sel = Selection {
            interval: config.interval,
            via: config.via,
            telemetry: config.telemetry,
            ..Selection::default()
        };
        for t in &config.targets {
            let groups: BTreeSet<String> = t.groups.iter().cloned().collect();
            sel.pick(t.device, groups);
            let dev = inv.and_then(|i| i.devices.iter().find(|d| d.path == t.device));
            let (Some(dev), false) = (dev, t.metrics.is_empty()) else { continue };
            let Some(choice) = sel.choice_mut(t.device) else { continue };
            for g in dev.groups.iter().filter(|g| choice.groups.contains(&g.name)) {
                let left: BTreeSet<String> =
                    g.metrics.iter().filter(|m| !t.metrics.contains(&m.name)).map(|m| m.name.clone()).collect();
                if !left.is_empty() {
                    choice.excluded.insert(g.name.clone(), left);
                }
            }
        }
        sel
    }
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            device: None,
            groups: BTreeSet::new(),
            excluded: BTreeMap::new(),
            more: Vec::new(),
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
    /// What the user picked in the source panel (a remote run's own, while one is watched).
    pub selection: Selection,
    /// The user's own selection while a remote run's is shown: what the settings keep.
    pub(crate) own_selection: Option<Selection>,
    /// The run in progress and every series seen, as filed into the store.
    pub ingest: Ingest,
    /// The running sampler's latest statistics; `None` before the first report.
    pub(crate) health: Option<Health>,
    /// Errors shown, oldest first (at most 8: the oldest goes).
    pub banners: Vec<Banner>,
    next_banner: u64,
    /// The last run's device name, for the status bar after it stopped.
    pub(crate) last_device: Option<String>,
    /// The sampler is gone (shut down or crashed).
    pub(crate) sampler_gone: bool,
    /// Source, devices and runs so far, for sessions.
    pub history: zescope_model::session::RunHistory,
    /// The triggers, evaluated on every batch filed, and their firings.
    pub triggers: super::triggers::Triggers,
    /// The derived series, evaluated on every batch filed, and their editor's fields.
    pub derived: super::derived::Derived,
}

impl AppState {
    /// What the current run has said (`RunInfo::notices`: features turned off, groups left out,
    /// values out of range, a remote link's drops), shown in the status bar and the diagnostics
    /// window; empty without a run.
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

    /// The run configuration the current selection describes, if it is complete: one target
    /// per picked device, in the order picked.
    pub(crate) fn run_config(&self) -> Result<RunConfig, String> {
        let picked = self.selection.picked();
        if picked.is_empty() {
            return Err("choose a device".into());
        }
        let inv = self.inventory.as_ref().ok_or("no devices yet")?;
        let several = picked.len() > 1;
        let mut targets = Vec::new();
        for (device, chosen, excluded) in picked {
            let dev = inv.devices.iter().find(|d| d.path == device).ok_or("a chosen device is gone; refresh")?;
            let on = |why: &str| if several { format!("{why} of {}", dev.name) } else { why.to_owned() };
            if chosen.is_empty() && !self.selection.telemetry {
                return Err(on("tick at least one metric group, or the telemetry"));
            }
            let mut metrics = Vec::new();
            let mut any_excluded = false;
            for g in dev.groups.iter().filter(|g| chosen.contains(&g.name)) {
                let excluded = excluded.get(&g.name);
                for m in &g.metrics {
                    if excluded.is_some_and(|e| e.contains(&m.name)) {
                        any_excluded = true;
                    } else {
                        metrics.push(m.name.clone());
                    }
                }
            }
            if any_excluded && metrics.is_empty() {
                return Err(on("tick at least one metric"));
            }
            // Only groups this device has: a stale remembered name never reaches the sampler.
            let groups: Vec<String> =
                dev.groups.iter().filter(|g| chosen.contains(&g.name)).map(|g| g.name.clone()).collect();
            if groups.is_empty() && !self.selection.telemetry {
                return Err(match several {
                    true => on("tick at least one metric group"),
                    false => "tick at least one metric group of this device".into(),
                });
            }
            targets.push(Target {
                device,
                groups,
                metrics: if any_excluded { metrics } else { Vec::new() },
                custom_group: false,
            });
        }
        Ok(RunConfig {
            targets,
            interval: self.selection.interval,
            via: self.selection.via,
            telemetry: self.selection.telemetry,
        })
    }
}
