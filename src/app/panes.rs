//! Which series go in which plot pane, and their colours and visibility: the user's layout.
//! Series are named by [`SeriesKey`] (device/group/metric), so a layout survives stopping and
//! starting runs and is saved with sessions.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use egui::Color32;
use serde::{Deserialize, Serialize};

use super::envelope_plot::EnvelopePlot;
use super::state::{AppState, SeriesKey};

/// At most this many panes are created automatically for a new run.
const AUTO_PANES: usize = 6;

/// Distinct, colour-blind-friendlier series colours (Okabe–Ito, then Tableau).
const PALETTE: [[u8; 3]; 12] = [
    [0, 114, 178],
    [230, 159, 0],
    [0, 158, 115],
    [204, 121, 167],
    [86, 180, 233],
    [213, 94, 0],
    [240, 228, 66],
    [148, 103, 189],
    [140, 86, 75],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaneSpec {
    pub id: u64,
    pub series: Vec<SeriesKey>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PaneLayout {
    pub panes: Vec<PaneSpec>,
    pub next_id: u64,
    pub hidden: BTreeSet<SeriesKey>,
    pub colors: BTreeMap<SeriesKey, [u8; 3]>,
}

/// The layout plus the per-pane plot caches (not saved).
#[derive(Default)]
pub struct Panes {
    pub layout: PaneLayout,
    plots: HashMap<u64, EnvelopePlot>,
}

impl Panes {
    pub fn with_layout(layout: PaneLayout) -> Panes {
        Panes { layout, plots: HashMap::new() }
    }

    pub fn plot(&mut self, pane: u64) -> &EnvelopePlot {
        self.plots.entry(pane).or_default()
    }

    pub fn contains(&self, key: &SeriesKey) -> bool {
        self.layout.panes.iter().any(|p| p.series.contains(key))
    }

    /// Series not yet in any pane get panes: one per plotted unit (so axes make sense), up to
    /// `AUTO_PANES`; the rest join the last.
    pub fn place_new(&mut self, keys: &[SeriesKey], state: &AppState) {
        let mut by_unit: Vec<(String, Vec<SeriesKey>)> = Vec::new();
        for k in keys.iter().filter(|k| !self.contains(k)) {
            let unit = state.series.get(k).map(|e| e.plotted_unit()).unwrap_or_default();
            match by_unit.iter_mut().find(|(u, _)| *u == unit) {
                Some((_, v)) => v.push(k.clone()),
                None => by_unit.push((unit, vec![k.clone()])),
            }
        }
        for (_, ks) in by_unit {
            if self.layout.panes.len() >= AUTO_PANES {
                let last = self.layout.panes.last_mut().expect("AUTO_PANES > 0");
                last.series.extend(ks);
            } else {
                let id = self.add_pane();
                self.pane_mut(id).expect("just added").series = ks;
            }
        }
        for k in keys {
            self.color(k);
        }
    }

    pub fn add_pane(&mut self) -> u64 {
        self.layout.next_id += 1;
        let id = self.layout.next_id;
        self.layout.panes.push(PaneSpec { id, series: Vec::new() });
        id
    }

    pub fn remove_pane(&mut self, id: u64) {
        self.layout.panes.retain(|p| p.id != id);
        self.plots.remove(&id);
    }

    fn pane_mut(&mut self, id: u64) -> Option<&mut PaneSpec> {
        self.layout.panes.iter_mut().find(|p| p.id == id)
    }

    /// Moves `key` into pane `to` (`None`: a new pane), out of wherever it was.
    pub fn assign(&mut self, key: &SeriesKey, to: Option<u64>) {
        let to = match to.filter(|id| self.layout.panes.iter().any(|p| p.id == *id)) {
            Some(id) => id,
            None => self.add_pane(),
        };
        for p in &mut self.layout.panes {
            if p.id != to {
                p.series.retain(|k| k != key);
            }
        }
        let pane = self.pane_mut(to).expect("exists");
        if !pane.series.contains(key) {
            pane.series.push(key.clone());
        }
        self.color(key);
    }

    pub fn remove_series(&mut self, pane: u64, key: &SeriesKey) {
        if let Some(p) = self.pane_mut(pane) {
            p.series.retain(|k| k != key);
        }
    }

    pub fn is_visible(&self, key: &SeriesKey) -> bool {
        !self.layout.hidden.contains(key)
    }

    pub fn set_visible(&mut self, key: &SeriesKey, visible: bool) {
        if visible {
            self.layout.hidden.remove(key);
        } else {
            self.layout.hidden.insert(key.clone());
        }
    }

    /// The series' colour, assigned from the palette the first time it is asked for.
    pub fn color(&mut self, key: &SeriesKey) -> Color32 {
        let n = self.layout.colors.len();
        let [r, g, b] = *self.layout.colors.entry(key.clone()).or_insert(PALETTE[n % PALETTE.len()]);
        Color32::from_rgb(r, g, b)
    }

    pub fn set_color(&mut self, key: &SeriesKey, c: Color32) {
        self.layout.colors.insert(key.clone(), [c.r(), c.g(), c.b()]);
    }

    /// Back to no panes (the next run lays them out again); colours are kept.
    pub fn reset(&mut self) {
        self.layout.panes.clear();
        self.layout.hidden.clear();
        self.plots.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::state::SeriesEntry;
    use crate::layout::Kind;
    use crate::sampler::SeriesInfo;

    fn key(m: &str) -> SeriesKey {
        SeriesKey { device: "d".into(), group: "g".into(), metric: m.into() }
    }

    fn state(units: &[(&str, &str, Kind)]) -> AppState {
        let mut s = AppState::default();
        for (m, u, kind) in units {
            let info = SeriesInfo {
                name: m.to_string(),
                description: String::new(),
                unit: u.to_string(),
                kind: *kind,
                wrap: None,
            };
            s.series.insert(key(m), SeriesEntry { info, ids: Vec::new() });
        }
        s
    }

    #[test]
    fn new_series_get_one_pane_per_plotted_unit() {
        let st = state(&[("t", "ns", Kind::Cumulative), ("p", "W", Kind::Gauge), ("q", "W", Kind::Gauge)]);
        let mut p = Panes::default();
        p.place_new(&[key("t"), key("p"), key("q")], &st);
        let panes: Vec<Vec<&str>> =
            p.layout.panes.iter().map(|p| p.series.iter().map(|k| k.metric.as_str()).collect()).collect();
        assert_eq!(panes, [vec!["t"], vec!["p", "q"]]);
        // Placing again changes nothing: they already have a pane.
        p.place_new(&[key("t"), key("p")], &st);
        assert_eq!(p.layout.panes.len(), 2);
    }

    #[test]
    fn assign_moves_between_panes_and_to_a_new_one() {
        let st = state(&[("a", "W", Kind::Gauge), ("b", "W", Kind::Gauge)]);
        let mut p = Panes::default();
        p.place_new(&[key("a"), key("b")], &st);
        let first = p.layout.panes[0].id;
        p.assign(&key("b"), None);
        assert_eq!(p.layout.panes.len(), 2);
        assert_eq!(p.layout.panes[0].series, [key("a")]);
        assert_eq!(p.layout.panes[1].series, [key("b")]);
        p.assign(&key("b"), Some(first));
        assert_eq!(p.layout.panes[0].series, [key("a"), key("b")]);
        assert!(p.layout.panes[1].series.is_empty());
    }

    #[test]
    fn colours_are_stable_and_distinct_and_visibility_toggles() {
        let mut p = Panes::default();
        let a = p.color(&key("a"));
        let b = p.color(&key("b"));
        assert_ne!(a, b);
        assert_eq!(p.color(&key("a")), a);
        p.set_visible(&key("a"), false);
        assert!(!p.is_visible(&key("a")));
        p.set_visible(&key("a"), true);
        assert!(p.is_visible(&key("a")));
    }
}
