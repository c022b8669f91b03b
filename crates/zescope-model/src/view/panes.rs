//! Which series go in which plot pane, and their colours and visibility: the user's arrangement.
//! Series are named by [`SeriesKey`] (device/group/metric), so an arrangement survives stopping and
//! starting runs and is saved with sessions.
//!
//! The default placement policy ([`Arrangement::place_new`]) is what the window does with a new
//! run's series (and with every series on "Reset layout"), what `zescope record` saves and what
//! `zescope export` uses for a session without panes: a series not yet in a pane joins the first
//! pane whose series all share its unit, compared without SI prefixes (MB/s with B/s, % with %),
//! and gets a new pane when none fits, so one axis never mixes units.
//!
//! Colours are distinct within a pane and stable per series: a series gets its colour when it is
//! first placed (or asked for), the palette's first colour no series of its panes has, of those
//! the one fewest series have; it keeps it for as long as the arrangement lives, unless it is placed
//! in a pane where another series has that colour already (then it gets a new one). The palette
//! has 12 hand-picked colours, then as many more as a pane needs.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::series::{SeriesEntry, SeriesKey};
use super::text::base_unit;

/// Distinct, colour-blind-friendlier series colours (Okabe–Ito, then Tableau); drawn through
/// `view::contrast` so the light ones stay readable on a light background.
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

/// The palette's `i`-th colour: [`PALETTE`], then hues a golden angle apart at two
/// lightnesses.
fn palette(i: usize) -> [u8; 3] {
    if let Some(c) = PALETTE.get(i) {
        return *c;
    }
    let k = i - PALETTE.len();
    let hue = (k as f64 * 137.507_764 + 15.0) % 360.0;
    let (s, v) = if k.is_multiple_of(2) { (0.70, 0.80) } else { (0.55, 0.55) };
    let c = v * s;
    let x = c * (1.0 - ((hue / 60.0) % 2.0 - 1.0).abs());
    let (r, g, b) = match (hue / 60.0) as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    let byte = |f: f64| ((f + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    [byte(r), byte(g), byte(b)]
}

/// One plot pane: its id (stable while the arrangement lives) and its series, in legend order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaneSpec {
    /// Unique within its arrangement, never reused (taken from [`Arrangement::next_id`]).
    pub id: u64,
    /// Its series, in legend order; a series is in at most one pane.
    pub series: Vec<SeriesKey>,
}

/// Panes in display order, hidden series and colours.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Arrangement {
    /// The panes, top to bottom.
    pub panes: Vec<PaneSpec>,
    /// The id last given to a pane (0: none yet); the next pane gets one more. Saved with
    /// sessions so ids stay unique after a restore.
    pub next_id: u64,
    /// Series the user hid: kept in their pane and legend, not drawn or exported.
    pub hidden: BTreeSet<SeriesKey>,
    /// Each series' colour as sRGB bytes, once assigned (see [`Arrangement::color`]).
    pub colors: BTreeMap<SeriesKey, [u8; 3]>,
}

/// The default arrangement for series `keys` (in stream order): see [`Arrangement::place_new`].
pub fn default_arrangement(keys: &[SeriesKey], series: &BTreeMap<SeriesKey, SeriesEntry>) -> Arrangement {
    let mut arrangement = Arrangement::default();
    arrangement.place_new(keys, series);
    arrangement
}

impl Arrangement {
    /// Is `key` in some pane?
    pub fn contains(&self, key: &SeriesKey) -> bool {
        self.panes.iter().any(|p| p.series.contains(key))
    }

    /// The default placement policy (module docs); `series` gives each key's plotted unit.
    pub fn place_new(&mut self, keys: &[SeriesKey], series: &BTreeMap<SeriesKey, SeriesEntry>) {
        for k in keys {
            if self.contains(k) {
                continue;
            }
            let unit = unit_of(k, series);
            let fits = self.panes.iter().position(|p| pane_unit(p, series).as_deref() == Some(unit.as_str()));
            match fits {
                Some(i) => self.panes[i].series.push(k.clone()),
                None => {
                    let id = self.add_pane();
                    self.pane_mut(id).expect("just added").series.push(k.clone());
                }
            }
        }
        for k in keys {
            self.color_apart(k);
        }
    }

    /// A new empty pane at the end; returns its id.
    pub fn add_pane(&mut self) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.panes.push(PaneSpec { id, series: Vec::new() });
        id
    }

    /// Removes pane `id` with its series (they stay hidden or coloured as they were); an
    /// unknown id changes nothing.
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
        self.color_apart(key);
    }

    /// Also shows `key` in pane `to` (`None`: a new pane), leaving it where it already is: a
    /// series may be drawn in several panes (its colour and visibility are the series', shared).
    pub fn show_also(&mut self, key: &SeriesKey, to: Option<u64>) {
        let to = match to.filter(|id| self.panes.iter().any(|p| p.id == *id)) {
            Some(id) => id,
            None => self.add_pane(),
        };
        let pane = self.pane_mut(to).expect("exists");
        if !pane.series.contains(key) {
            pane.series.push(key.clone());
        }
        self.color_apart(key);
    }

    /// Takes `key` out of pane `pane`; an unknown pane or a key not in it changes nothing.
    pub fn remove_series(&mut self, pane: u64, key: &SeriesKey) {
        if let Some(p) = self.pane_mut(pane) {
            p.series.retain(|k| k != key);
        }
    }

    /// Is `key` drawn, i.e. not hidden by the user? (True for keys the arrangement does not know.)
    pub fn is_visible(&self, key: &SeriesKey) -> bool {
        !self.hidden.contains(key)
    }

    /// Shows or hides `key` wherever it is placed.
    pub fn set_visible(&mut self, key: &SeriesKey, visible: bool) {
        if visible {
            self.hidden.remove(key);
        } else {
            self.hidden.insert(key.clone());
        }
    }

    /// The series' colour, assigned the first time it is asked for (module docs).
    pub fn color(&mut self, key: &SeriesKey) -> [u8; 3] {
        if let Some(c) = self.colors.get(key) {
            return *c;
        }
        let c = self.fresh_color(key);
        self.colors.insert(key.clone(), c);
        c
    }

    /// Gives `key` a new colour if another series of one of its panes has its colour (or it has
    /// none yet).
    fn color_apart(&mut self, key: &SeriesKey) {
        let clash = self.colors.get(key).is_some_and(|c| self.pane_mates(key).any(|k| self.colors.get(k) == Some(c)));
        if clash {
            self.colors.remove(key);
        }
        self.color(key);
    }

    /// The other series of the panes `key` is in.
    fn pane_mates<'a>(&'a self, key: &'a SeriesKey) -> impl Iterator<Item = &'a SeriesKey> + 'a {
        self.panes.iter().filter(|p| p.series.contains(key)).flat_map(|p| p.series.iter()).filter(move |k| *k != key)
    }

    /// The palette's first colour that no series of `key`'s panes has, of those the one fewest
    /// series have.
    fn fresh_color(&self, key: &SeriesKey) -> [u8; 3] {
        let taken: BTreeSet<[u8; 3]> = self.pane_mates(key).filter_map(|k| self.colors.get(k).copied()).collect();
        let mut uses: BTreeMap<[u8; 3], usize> = BTreeMap::new();
        for &c in self.colors.values() {
            *uses.entry(c).or_default() += 1;
        }
        let uses = |c: &[u8; 3]| uses.get(c).copied().unwrap_or(0);
        let candidates = || (0..PALETTE.len() + taken.len()).map(palette);
        // The generated hues round to bytes, so thousands of them repeat some: in a pane of
        // thousands of series (a session file may hold 4096 a stream) every candidate can be
        // taken, and then the least used one is shared.
        candidates()
            .filter(|c| !taken.contains(c))
            .min_by_key(uses)
            .or_else(|| candidates().min_by_key(uses))
            .unwrap_or(PALETTE[0])
    }

    /// Gives `key` the colour `rgb` (sRGB bytes), replacing any it had.
    pub fn set_color(&mut self, key: &SeriesKey, rgb: [u8; 3]) {
        self.colors.insert(key.clone(), rgb);
    }

    /// Back to no panes (the next run lays them out again); colours are kept.
    pub fn reset(&mut self) {
        self.panes.clear();
        self.hidden.clear();
    }
}

/// The plotted unit of `key` without its SI prefix ("" when `series` does not know it).
fn unit_of(key: &SeriesKey, series: &BTreeMap<SeriesKey, SeriesEntry>) -> String {
    series.get(key).map(|e| base_unit(&e.plotted_unit())).unwrap_or_default()
}

/// The unit every series of `pane` shares (without SI prefixes), or `None` when the pane is
/// empty or mixes units. Series `series` does not know (from an earlier device) do not count.
fn pane_unit(pane: &PaneSpec, series: &BTreeMap<SeriesKey, SeriesEntry>) -> Option<String> {
    let mut units = pane.series.iter().filter(|k| series.contains_key(k)).map(|k| unit_of(k, series));
    let first = units.next()?;
    units.all(|u| u == first).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zescope_sampler::SeriesInfo;
    use zescope_sampler::layout::Kind;

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
        let mut p = Arrangement::default();
        p.place_new(&[key("t"), key("p"), key("q")], &st);
        let panes: Vec<Vec<&str>> =
            p.panes.iter().map(|p| p.series.iter().map(|k| k.metric.as_str()).collect()).collect();
        assert_eq!(panes, [vec!["t"], vec!["p", "q"]]);
        // Placing again changes nothing: they already have a pane.
        p.place_new(&[key("t"), key("p")], &st);
        assert_eq!(p.panes.len(), 2);
        assert_eq!(default_arrangement(&[key("t"), key("p"), key("q")], &st).panes.len(), 2);
    }

    fn metrics(p: &Arrangement) -> Vec<Vec<&str>> {
        p.panes.iter().map(|p| p.series.iter().map(|k| k.metric.as_str()).collect()).collect()
    }

    #[test]
    fn many_units_get_a_pane_each_and_never_share_one() {
        let units: Vec<(String, String)> = (0..9).map(|i| (format!("m{i}"), format!("u{i}"))).collect();
        let spec: Vec<(&str, &str, Kind)> = units.iter().map(|(m, u)| (m.as_str(), u.as_str(), Kind::Gauge)).collect();
        let st = series(&spec);
        let keys: Vec<SeriesKey> = units.iter().map(|(m, _)| key(m)).collect();
        let p = default_arrangement(&keys, &st);
        assert_eq!(p.panes.len(), 9);
        assert!(p.panes.iter().all(|pane| pane.series.len() == 1));
    }

    #[test]
    fn later_series_join_a_pane_of_their_unit_or_get_a_new_one() {
        let st = series(&[
            ("util", "%", Kind::Gauge),
            ("read", "B", Kind::Cumulative),
            ("busy", "%", Kind::Gauge),
            ("write", "MB/s", Kind::Gauge),
            ("temp", "°C", Kind::Gauge),
        ]);
        let mut p = Arrangement::default();
        p.place_new(&[key("util"), key("read")], &st);
        assert_eq!(metrics(&p), [vec!["util"], vec!["read"]]);
        // A second group: % joins %, MB/s joins B/s (same base unit), °C gets a pane of its own.
        p.place_new(&[key("util"), key("read"), key("busy"), key("write"), key("temp")], &st);
        assert_eq!(metrics(&p), [vec!["util", "busy"], vec!["read", "write"], vec!["temp"]]);
    }

    #[test]
    fn mixed_or_empty_panes_are_not_joined() {
        let st = series(&[("a", "W", Kind::Gauge), ("b", "%", Kind::Gauge), ("c", "W", Kind::Gauge)]);
        let mut p = Arrangement::default();
        let empty = p.add_pane();
        let mixed = p.add_pane();
        p.assign(&key("a"), Some(mixed));
        p.assign(&key("b"), Some(mixed));
        p.place_new(&[key("c")], &st);
        assert_eq!(p.panes.len(), 3);
        assert!(p.pane_mut(empty).unwrap().series.is_empty());
        assert_eq!(p.panes[2].series, [key("c")]);
    }

    #[test]
    fn reset_then_place_groups_by_unit_again() {
        let st = series(&[("r", "B", Kind::Cumulative), ("t", "°C", Kind::Gauge), ("w", "B", Kind::Cumulative)]);
        let keys = [key("r"), key("t"), key("w")];
        let mut p = Arrangement::default();
        let one = p.add_pane();
        for k in &keys {
            p.assign(k, Some(one));
        }
        p.reset();
        p.place_new(&keys, &st);
        assert_eq!(metrics(&p), [vec!["r", "w"], vec!["t"]]);
    }

    #[test]
    fn assign_moves_between_panes_and_to_a_new_one() {
        let st = series(&[("a", "W", Kind::Gauge), ("b", "W", Kind::Gauge)]);
        let mut p = Arrangement::default();
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
    fn a_series_shown_also_in_another_pane_stays_where_it_was() {
        let st = series(&[("a", "W", Kind::Gauge), ("b", "W", Kind::Gauge)]);
        let mut p = Arrangement::default();
        p.place_new(&[key("a"), key("b")], &st);
        let first = p.panes[0].id;
        p.show_also(&key("b"), None);
        assert_eq!(p.panes.len(), 2);
        assert_eq!(p.panes[0].series, [key("a"), key("b")]);
        assert_eq!(p.panes[1].series, [key("b")]);
        // Shown again where it already is: nothing changes.
        p.show_also(&key("b"), Some(first));
        assert_eq!(p.panes[0].series, [key("a"), key("b")]);
        // Removed from one pane, it stays in the other.
        p.remove_series(first, &key("b"));
        assert_eq!(p.panes[0].series, [key("a")]);
        assert_eq!(p.panes[1].series, [key("b")]);
    }

    #[test]
    fn colours_are_stable_and_distinct_and_visibility_toggles() {
        let mut p = Arrangement::default();
        let a = p.color(&key("a"));
        let b = p.color(&key("b"));
        assert_ne!(a, b);
        assert_eq!(p.color(&key("a")), a);
        p.set_visible(&key("a"), false);
        assert!(!p.is_visible(&key("a")));
        p.set_visible(&key("a"), true);
        assert!(p.is_visible(&key("a")));
    }

    fn distinct_in_each_pane(p: &Arrangement) {
        for pane in &p.panes {
            let colors: Vec<[u8; 3]> = pane.series.iter().map(|k| p.colors[k]).collect();
            let set: BTreeSet<[u8; 3]> = colors.iter().copied().collect();
            assert_eq!(set.len(), colors.len(), "pane {}: {colors:?}", pane.id);
        }
    }

    #[test]
    fn colours_stay_distinct_within_a_pane_past_the_palette() {
        // 4 counters of one unit after 12 series in other panes (where the palette wrapped
        // before), then 30 of one unit in one pane.
        let mut units: Vec<(String, &str)> =
            (0..12).map(|i| (format!("w{i}"), if i % 2 == 0 { "W" } else { "MHz" })).collect();
        units.extend((0..4).map(|i| (format!("p{i}"), "%")));
        units.extend((0..30).map(|i| (format!("c{i}"), "B")));
        let st = series(&units.iter().map(|(m, u)| (m.as_str(), *u, Kind::Gauge)).collect::<Vec<_>>());
        let keys: Vec<SeriesKey> = units.iter().map(|(m, _)| key(m)).collect();
        let mut p = Arrangement::default();
        p.place_new(&keys[..16], &st);
        distinct_in_each_pane(&p);
        let before = p.colors.clone();
        p.place_new(&keys, &st);
        distinct_in_each_pane(&p);
        assert!(before.iter().all(|(k, c)| p.colors[k] == *c), "colours already given are kept");
        // Moved or shown in a pane where its colour is taken: it gets another there.
        let w0 = key("w0");
        let c0_colour = p.colors[&key("c0")];
        p.set_color(&w0, c0_colour);
        let c_pane = p.panes.iter().find(|x| x.series.contains(&key("c0"))).unwrap().id;
        p.show_also(&w0, Some(c_pane));
        distinct_in_each_pane(&p);
        // Reset and placed again: still distinct.
        p.reset();
        p.place_new(&keys, &st);
        distinct_in_each_pane(&p);
    }
}
