//! What one frame shows of a pane, resolved once: each series' entry in the ingest's index (its
//! store series, plotted unit, kind and throttle reasons) looked up a single time per frame, and
//! the time axis' mapping between store nanoseconds and plot x. A front end draws from these;
//! it does not go back to the index or the store's origin for each thing it draws.

use std::collections::BTreeMap;

use zescope_store::{SeriesId, Store};

use super::{Arrangement, SeriesEntry, SeriesKey};

/// One series of a pane, as a frame shows it.
#[derive(Clone, Debug)]
pub struct ShownSeries<'a> {
    /// Which counter.
    pub key: SeriesKey,
    /// Its entry, once a run (or the opened session) has described it.
    pub entry: Option<&'a SeriesEntry>,
    /// Drawn (not hidden in the arrangement).
    pub visible: bool,
    /// The unit it is plotted in ("" before it is described).
    pub unit: String,
    /// A state (ids, flags): steps, no mean.
    pub state: bool,
    /// The throttle reasons its values are bit fields of (telemetry's throttle series), by bit.
    pub throttle: Vec<(u32, String)>,
}

impl ShownSeries<'_> {
    /// Its store series, one per run that sampled it.
    pub fn ids(&self) -> &[SeriesId] {
        self.entry.map_or(&[], |e| &e.ids)
    }
}

/// The series `keys` of a pane under `arrangement`, each looked up once in `index`.
pub fn shown_series<'a>(
    keys: &[SeriesKey],
    arrangement: &Arrangement,
    index: &'a BTreeMap<SeriesKey, SeriesEntry>,
) -> Vec<ShownSeries<'a>> {
    keys.iter()
        .map(|key| {
            let entry = index.get(key);
            ShownSeries {
                key: key.clone(),
                entry,
                visible: arrangement.is_visible(key),
                unit: entry.map(SeriesEntry::plotted_unit).unwrap_or_default(),
                state: entry.is_some_and(SeriesEntry::is_state),
                throttle: entry
                    .map(|e| zescope_sampler::telemetry::throttle_names(&e.info.description))
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// Store time (ns) to plot x (seconds since the store's origin, the first sample) and back, as of
/// one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeAxis {
    origin: i64,
}

impl TimeAxis {
    /// The axis `store`'s samples are plotted on.
    pub fn of(store: &Store) -> TimeAxis {
        TimeAxis { origin: store.origin_ns().unwrap_or(0) }
    }

    /// Plot x of store time `ns` (exact for any `ns`, however far from the origin).
    pub fn x(self, ns: i64) -> f64 {
        match ns.checked_sub(self.origin) {
            Some(d) => d as f64 * 1e-9,
            None => (ns as i128 - self.origin as i128) as f64 * 1e-9,
        }
    }

    /// Store time of plot x `x`, rounded to the nanosecond (the origin for NaN).
    pub fn ns(self, x: f64) -> i64 {
        let ns = (x * 1e9).round() + self.origin as f64;
        if ns.is_nan() { self.origin } else { ns as i64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::panes::Arrangement;
    use zescope_sampler::SeriesInfo;
    use zescope_sampler::layout::Kind;

    fn entry(unit: &str, kind: Kind, description: &str) -> SeriesEntry {
        SeriesEntry {
            info: SeriesInfo {
                name: String::new(),
                description: description.into(),
                unit: unit.into(),
                kind,
                wrap: None,
            },
            ids: Vec::new(),
        }
    }

    #[test]
    fn each_series_is_resolved_with_its_unit_kind_visibility_and_throttle_reasons() {
        let key = |m: &str| SeriesKey { device: "gpu0".into(), group: "G".into(), metric: m.into() };
        let keys = vec![key("busy"), key("clock"), key("reasons"), key("unknown")];
        let mut index = BTreeMap::new();
        index.insert(key("busy"), entry("ns", Kind::Cumulative, ""));
        index.insert(key("clock"), entry("MHz", Kind::Gauge, ""));
        let throttle = format!("{}bit 0: power; bit 3: thermal", zescope_sampler::telemetry::THROTTLE_DESCRIPTION);
        index.insert(key("reasons"), entry("", Kind::State, &throttle));
        let mut arrangement = Arrangement::default();
        arrangement.hidden.insert(key("clock"));
        let shown = shown_series(&keys, &arrangement, &index);
        let units: Vec<&str> = shown.iter().map(|s| s.unit.as_str()).collect();
        assert_eq!(units, ["ns/s", "MHz", "", ""]);
        assert_eq!(shown.iter().map(|s| s.visible).collect::<Vec<_>>(), [true, false, true, true]);
        assert_eq!(shown.iter().map(|s| s.state).collect::<Vec<_>>(), [false, false, true, false]);
        assert_eq!(shown[2].throttle, [(0, "power".to_owned()), (3, "thermal".to_owned())]);
        assert!(shown[3].entry.is_none() && shown[3].ids().is_empty(), "an undescribed series has nothing to plot");
    }

    #[test]
    fn the_axis_is_seconds_since_the_origin_both_ways() {
        let mut store = Store::new(1 << 20);
        assert_eq!(
            (TimeAxis::of(&store).x(1_500_000_000), TimeAxis::of(&store).ns(1.5)),
            (1.5, 1_500_000_000),
            "origin 0 while empty"
        );
        store.set_origin(5_000_000_000);
        let axis = TimeAxis::of(&store);
        assert_eq!(axis.x(6_500_000_000), 1.5);
        assert_eq!(axis.x(4_000_000_000), -1.0);
        assert_eq!(axis.ns(1.5), 6_500_000_000);
        assert_eq!(axis.ns(f64::NAN), 5_000_000_000, "NaN: the origin");
        assert_eq!((axis.ns(f64::INFINITY), axis.ns(f64::NEG_INFINITY)), (i64::MAX, i64::MIN), "saturating");
        // Exact however far from the origin (no overflow at the ends of the timeline).
        store.set_origin(1_000_000_000_000);
        let axis = TimeAxis::of(&store);
        assert_eq!(axis.x(1_000_000_123_456), 123_456e-9);
        assert_eq!(axis.x(i64::MAX), (i64::MAX as i128 - 1_000_000_000_000) as f64 * 1e-9);
        assert_eq!(axis.x(i64::MIN), (i64::MIN as i128 - 1_000_000_000_000) as f64 * 1e-9);
        for ns in [-5, 0, 999_999_999_999, 1_000_000_000_000, 1_000_000_123_456] {
            assert_eq!(axis.ns(axis.x(ns)), ns, "{ns} round-trips");
        }
    }
}
