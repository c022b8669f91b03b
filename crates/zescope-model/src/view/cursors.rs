//! The A/B cursors: two instants on the shared time axis, the difference in time between them
//! and in every series' value ([`Cursors::readout`]), and the span between them as a phase
//! ([`Cursors::span`]).
//!
//! A value at a cursor is the stored sample nearest to it (`Store::nearest`: the value of a
//! gauge, the rate of a cumulative counter), from the newest run that holds one; in coarsened
//! history, where no single sample is kept, the mean of the bucket there (of a state, which has
//! no mean, its last value). A state's B − A is no difference and is not given.

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
    /// A state (an id, a flag): its values are not quantities, B − A means nothing.
    pub state: bool,
}

impl CursorRow {
    /// B − A, when both are known; never for a state.
    pub fn diff(&self) -> Option<f64> {
        if self.state {
            return None;
        }
        Some(self.at_b? - self.at_a?)
    }
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
            .map(|(k, e)| CursorRow {
                series: k.shown(several),
                unit: e.plotted_unit(),
                at_a: self.a.and_then(|t| value_at(store, e, t)),
                at_b: self.b.and_then(|t| value_at(store, e, t)),
                state: e.is_state(),
            })
            .collect()
    }
}

/// The value of a series at `t` (see the module docs): from the newest run whose data covers
/// `t`, else the nearest held sample of any run.
pub fn value_at(store: &Store, e: &SeriesEntry, t: i64) -> Option<f64> {
    let covers = |id: &zescope_store::SeriesId| store.time_range(id.stream()).is_some_and(|(a, b)| a <= t && t <= b);
    let id = e.ids.iter().rev().find(|id| covers(id)).or(e.ids.last())?;
    match store.nearest(*id, t) {
        Some(s) => s.value,
        // A state's bucket has no meaningful mean: its last value held on.
        None if e.is_state() => store.bucket_at(*id, t).and_then(|b| b.stats.last),
        None => store.bucket_at(*id, t).map(|b| b.stats.mean).filter(|m| !m.is_nan()),
    }
}
