//! The A/B cursors: two instants on the shared time axis, the difference in time between them
//! and in every series' value ([`Cursors::readout`]), and the span between them as a phase
//! ([`Cursors::span`]).
//!
//! A value at a cursor is the stored sample nearest to it (`Store::nearest`: the value of a
//! gauge, the rate of a cumulative counter), from the newest run that holds one; in coarsened
//! history, where no single sample is kept, the mean of the bucket there (of a state, which has
//! no mean, its last value). A sample more than a second from its cursor ([`far_from`]: a cursor
//! past a series' last sample, before its first, between two runs) is no value *at* the cursor:
//! the readout says how far it is, as a plot's hover does, and B − A is not given, nor is it for
//! a state, whose B − A is no difference.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use zescope_store::Store;

use super::phases::PhaseRange;
use super::series::{SeriesEntry, SeriesKey};

/// Which cursor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The first cursor.
    A,
    /// The second cursor.
    B,
}

/// Where the cursors are, ns on the store's timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursors {
    /// Cursor A.
    pub a: Option<i64>,
    /// Cursor B.
    pub b: Option<i64>,
}

/// One series at the cursors.
#[derive(Clone, Debug, PartialEq)]
pub struct CursorRow {
    /// "group/metric".
    pub series: String,
    /// Unit of the values (per second for a cumulative counter).
    pub unit: String,
    /// The value at A (see the module docs); `None` when nothing is held there or the sample has
    /// no value.
    pub at_a: Option<f64>,
    /// The value at B.
    pub at_b: Option<f64>,
    /// How far from A the sample read for it lies, when more than a second ([`far_from`]:
    /// "24.0 s before"); `None` when it is at A (or is a bucket of coarsened history there).
    pub far_a: Option<String>,
    /// The same for B.
    pub far_b: Option<String>,
    /// A state (an id, a flag): its values are not quantities, B − A means nothing.
    pub state: bool,
}

impl CursorRow {
    /// B − A, when both are known and each read at its cursor (not more than a second away);
    /// never for a state.
    pub fn diff(&self) -> Option<f64> {
        if self.state || self.far_a.is_some() || self.far_b.is_some() {
            return None;
        }
        Some(self.at_b? - self.at_a?)
    }
}

/// How far a sample at `sample` (ns) lies from the time `t` it is read for, when that is more
/// than a second ("12.3 s before", "2.0 s after"): read past a series' last sample (or before its
/// first, or between runs), it is an old value, and the reader says so. `None` when it is close.
/// The one rule for a plot's hover and the cursors.
pub fn far_from(t: i64, sample: i64) -> Option<String> {
    let d = (t as i128 - sample as i128) as f64 * 1e-9;
    (d.abs() > 1.0).then(|| format!("{:.1} s {}", d.abs(), if d > 0.0 { "before" } else { "after" }))
}

impl Cursors {
    /// Sets cursor `w` at `t_ns`.
    pub fn set(&mut self, w: Which, t_ns: i64) {
        match w {
            Which::A => self.a = Some(t_ns),
            Which::B => self.b = Some(t_ns),
        }
    }

    /// Where cursor `w` is.
    pub fn get(&self, w: Which) -> Option<i64> {
        match w {
            Which::A => self.a,
            Which::B => self.b,
        }
    }

    /// A shift-click at `t_ns`: sets A first, then B, then moves the nearer one.
    pub fn click(&mut self, t_ns: i64) {
        let w = match (self.a, self.b) {
            (None, _) => Which::A,
            (Some(_), None) => Which::B,
            (Some(a), Some(b)) => {
                if (t_ns as i128 - a as i128).abs() <= (t_ns as i128 - b as i128).abs() {
                    Which::A
                } else {
                    Which::B
                }
            }
        };
        self.set(w, t_ns);
    }

    /// Removes both cursors.
    pub fn clear(&mut self) {
        *self = Cursors::default();
    }

    /// B − A in seconds, when both are set.
    pub fn delta_s(&self) -> Option<f64> {
        Some((self.b? as i128 - self.a? as i128) as f64 * 1e-9)
    }

    /// The span between the cursors as a phase named "A..B", when both are set.
    pub fn span(&self) -> Option<PhaseRange> {
        Some(PhaseRange::new("A..B", self.a?, self.b?))
    }

    /// Every series' value at A and at B, in key order.
    pub fn readout(&self, store: &Store, series: &BTreeMap<SeriesKey, SeriesEntry>) -> Vec<CursorRow> {
        let several = super::series::several_devices(series);
        series
            .iter()
            .map(|(k, e)| {
                // The value at a cursor, and how far from it the sample read lies.
                let read = |t: Option<i64>| {
                    let Some(t) = t else { return (None, None) };
                    let (v, sample) = value_at(store, e, t).unwrap_or_default();
                    (v, sample.and_then(|s| far_from(t, s)))
                };
                let ((at_a, far_a), (at_b, far_b)) = (read(self.a), read(self.b));
                CursorRow {
                    series: k.shown(several),
                    unit: e.plotted_unit(),
                    at_a,
                    at_b,
                    far_a,
                    far_b,
                    state: e.is_state(),
                }
            })
            .collect()
    }
}

/// The value of a series at `t` (see the module docs): from the newest run whose data covers
/// `t`, else the nearest held sample of any run; with the time of the sample read (`None` for a
/// bucket of coarsened history). `None` when nothing is held there.
pub fn value_at(store: &Store, e: &SeriesEntry, t: i64) -> Option<(Option<f64>, Option<i64>)> {
    let covers = |id: &zescope_store::SeriesId| store.time_range(id.stream()).is_some_and(|(a, b)| a <= t && t <= b);
    let id = e.ids.iter().rev().find(|id| covers(id)).or(e.ids.last())?;
    match store.nearest(*id, t) {
        Some(s) => Some((s.value, Some(s.t))),
        // A state's bucket has no meaningful mean: its last value held on.
        None if e.is_state() => Some((store.bucket_at(*id, t).and_then(|b| b.stats.last), None)),
        None => Some((store.bucket_at(*id, t).map(|b| b.stats.mean).filter(|m| !m.is_nan()), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_far_from_where_it_is_read_says_how_far() {
        const S: i64 = 1_000_000_000;
        assert_eq!(far_from(30 * S, 10 * S).as_deref(), Some("20.0 s before"));
        assert_eq!(far_from(10 * S, 12 * S + S / 2).as_deref(), Some("2.5 s after"));
        assert_eq!(far_from(10 * S, 10 * S - S / 2), None, "close: nothing to say");
        assert_eq!(far_from(10 * S, 11 * S), None, "a second is close");
    }
}
