//! Which series go in which plot pane, and their colours and visibility: the user's layout.
//! Series are named by [`SeriesKey`] (device/group/metric), so a layout survives stopping and
//! starting runs and is saved with sessions.
//!
//! The default placement policy ([`PaneLayout::place_new`]) is what the window does with a new
//! run's series, what `zescope record` saves and what `zescope export` uses for a session without
//! panes: series not yet in a pane get one pane per plotted unit (so axes make sense), up to
//! `AUTO_PANES`; the rest join the last. Colours come from a fixed palette in the order series
//! are first asked for, and are kept for as long as the layout lives.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::series::{SeriesEntry, SeriesKey};

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

/// One plot pane: its id (stable while the layout lives) and its series, in legend order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaneSpec {
    pub id: u64,
    pub series: Vec<SeriesKey>,
}

/// Panes in display order, hidden series and colours.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PaneLayout {
    pub panes: Vec<PaneSpec>,
    pub next_id: u64,
    pub hidden: BTreeSet<SeriesKey>,
    pub colors: BTreeMap<SeriesKey, [u8; 3]>,
}

/// The default layout for series `keys` (in stream order): see [`PaneLayout::place_new`].
pub fn default_layout(keys: &[SeriesKey], series: &BTreeMap<SeriesKey, SeriesEntry>) -> PaneLayout {
    let mut layout = PaneLayout::default();
    layout.place_new(keys, series);
    layout
}

impl PaneLayout {
    pub fn contains(&self, key: &SeriesKey) -> bool {
        self.panes.iter().any(|p| p.series.contains(key))
    }

    /// The default placement policy (module docs); `series` gives each key's plotted unit.
    pub fn place_new(&mut self, keys: &[SeriesKey], series: &BTreeMap<SeriesKey, SeriesEntry>) {
        let mut by_unit: Vec<(String, Vec<SeriesKey>)> = Vec::new();
        for k in keys.iter().filter(|k| !self.contains(k)) {
            let unit = series.get(k).map(|e| e.plotted_unit()).unwrap_or_default();
            match by_unit.iter_mut().find(|(u, _)| *u == unit) {
                Some((_, v)) => v.push(k.clone()),
                None => by_unit.push((unit, vec![k.clone()])),
            }
        }
        for (_, ks) in by_unit {
            if self.panes.len() >= AUTO_PANES {
                let last = self.panes.last_mut().expect("AUTO_PANES > 0");
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

    /// A new empty pane at the end; returns its id.
    pub fn add_pane(&mut self) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.panes.push(PaneSpec { id, series: Vec::new() });
        id
    }

    pub fn remove_pane(&mut self, id: u64) {
        self.panes.retain(|p| p.id != id);
    }

    fn pane_mut(&mut self, id: u64) -> Option<&mut PaneSpec> {
        self.panes.iter_mut().find(|p| p.id == id)
    }

    /// Moves `key` into pane `to` (`None`: a new pane), out of wherever it was.
    pub fn assign(&mut self, key: &SeriesKey, to: Option<u64>) {
        let to = match to.filter(|id| self.panes.iter().any(|p| p.id == *id)) {
            Some(id) => id,
            None => self.add_pane(),
        };
        for p in &mut self.panes {
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
        !self.hidden.contains(key)
    }

    pub fn set_visible(&mut self, key: &SeriesKey, visible: bool) {
        if visible {
            self.hidden.remove(key);
        } else {
            self.hidden.insert(key.clone());
        }
    }

    /// The series' colour, assigned from the palette the first time it is asked for.
    pub fn color(&mut self, key: &SeriesKey) -> [u8; 3] {
        let n = self.colors.len();
        *self.colors.entry(key.clone()).or_insert(PALETTE[n % PALETTE.len()])
    }

    pub fn set_color(&mut self, key: &SeriesKey, rgb: [u8; 3]) {
        self.colors.insert(key.clone(), rgb);
    }

    /// Back to no panes (the next run lays them out again); colours are kept.
    pub fn reset(&mut self) {
        self.panes.clear();
        self.hidden.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Kind;
    use crate::sampler::SeriesInfo;

    fn key(m: &str) -> SeriesKey {
        SeriesKey { device: "d".into(), group: "g".into(), metric: m.into() }
    }

    fn series(units: &[(&str, &str, Kind)]) -> BTreeMap<SeriesKey, SeriesEntry> {
        units
            .iter()
            .map(|(m, u, kind)| {
                let info = SeriesInfo {
                    name: m.to_string(),
                    description: String::new(),
                    unit: u.to_string(),
                    kind: *kind,
                    wrap: None,
                };
                (key(m), SeriesEntry { info, ids: Vec::new() })
            })
            .collect()
    }

    #[test]
    fn new_series_get_one_pane_per_plotted_unit() {
        let st = series(&[("t", "ns", Kind::Cumulative), ("p", "W", Kind::Gauge), ("q", "W", Kind::Gauge)]);
        let mut p = PaneLayout::default();
        p.place_new(&[key("t"), key("p"), key("q")], &st);
        let panes: Vec<Vec<&str>> =
            p.panes.iter().map(|p| p.series.iter().map(|k| k.metric.as_str()).collect()).collect();
        assert_eq!(panes, [vec!["t"], vec!["p", "q"]]);
        // Placing again changes nothing: they already have a pane.
        p.place_new(&[key("t"), key("p")], &st);
        assert_eq!(p.panes.len(), 2);
        assert_eq!(default_layout(&[key("t"), key("p"), key("q")], &st).panes.len(), 2);
    }

    #[test]
    fn past_the_automatic_limit_new_units_join_the_last_pane() {
        let units: Vec<(String, String)> = (0..8).map(|i| (format!("m{i}"), format!("u{i}"))).collect();
        let spec: Vec<(&str, &str, Kind)> = units.iter().map(|(m, u)| (m.as_str(), u.as_str(), Kind::Gauge)).collect();
        let st = series(&spec);
        let keys: Vec<SeriesKey> = units.iter().map(|(m, _)| key(m)).collect();
        let p = default_layout(&keys, &st);
        assert_eq!(p.panes.len(), AUTO_PANES);
        assert_eq!(p.panes[AUTO_PANES - 1].series, keys[AUTO_PANES - 1..]);
    }

    #[test]
    fn assign_moves_between_panes_and_to_a_new_one() {
        let st = series(&[("a", "W", Kind::Gauge), ("b", "W", Kind::Gauge)]);
        let mut p = PaneLayout::default();
        p.place_new(&[key("a"), key("b")], &st);
        let first = p.panes[0].id;
        p.assign(&key("b"), None);
        assert_eq!(p.panes.len(), 2);
        assert_eq!(p.panes[0].series, [key("a")]);
        assert_eq!(p.panes[1].series, [key("b")]);
        p.assign(&key("b"), Some(first));
        assert_eq!(p.panes[0].series, [key("a"), key("b")]);
        assert!(p.panes[1].series.is_empty());
    }

    #[test]
    fn colours_are_stable_and_distinct_and_visibility_toggles() {
        let mut p = PaneLayout::default();
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
