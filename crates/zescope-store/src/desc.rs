//! What streams and series are, and how they are named.

use serde::{Deserialize, Serialize};

/// How a counter's values are to be read.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum SeriesKind {
    /// The value itself is plotted (temperature, frequency, utilisation).
    Gauge,
    /// A running total (bytes, cycles); its rate per second is plotted.
    /// `wrap` is the modulus at which it wraps (e.g. 2^32 for a u32 counter);
    /// without one a decrease is a reset.
    Cumulative {
        /// The modulus at which the raw total wraps; `None`: a decrease is a reset.
        wrap: Option<f64>,
    },
    /// A running total of time busy (in units of `unit_s` seconds, "ns": 1e-9); what is plotted
    /// is the share of the elapsed time it grew by, in percent: its rate per second times
    /// `unit_s × 100`. Wraps and resets as for [`SeriesKind::Cumulative`].
    BusyTime {
        /// The modulus at which the raw total wraps; `None`: a decrease is a reset.
        wrap: Option<f64>,
        /// Seconds per unit of the raw total (positive and finite).
        unit_s: f64,
    },
    /// A state: an identifier, a flag, a mode (a context id, a throttle flag). Stored and plotted
    /// as read, like a gauge, but never a quantity: it is drawn as steps (each value holds until
    /// the next sample), and a mean of it means nothing.
    State,
}

impl SeriesKind {
    /// For a series whose raw value is a running total plotted as a rate (cumulative, busy
    /// time): `Some(wrap)`; `None` for one plotted as read (gauge, state).
    pub fn rate_wrap(&self) -> Option<Option<f64>> {
        match *self {
            SeriesKind::Cumulative { wrap } | SeriesKind::BusyTime { wrap, .. } => Some(wrap),
            SeriesKind::Gauge | SeriesKind::State => None,
        }
    }

    /// What a rate per second of the raw total is multiplied by to give the plotted value: 1,
    /// or `unit_s × 100` for busy time (a percentage). 1 for anything not plotted as a rate.
    pub fn rate_scale(&self) -> f64 {
        match *self {
            SeriesKind::BusyTime { unit_s, .. } if unit_s.is_finite() && unit_s > 0.0 => unit_s * 100.0,
            _ => 1.0,
        }
    }
}

/// One counter of a stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesDesc {
    /// Counter name, unique within its stream.
    pub name: String,
    /// Unit of the raw value (a cumulative counter's rate is in `unit/s`).
    pub unit: String,
    /// Gauge, cumulative, busy time or state.
    pub kind: SeriesKind,
}

impl SeriesDesc {
    /// Unit of what is plotted: `unit/s` for a cumulative counter, `%` for busy time.
    pub fn plotted_unit(&self) -> String {
        match self.kind {
            SeriesKind::Gauge | SeriesKind::State => self.unit.clone(),
            SeriesKind::Cumulative { .. } => format!("{}/s", self.unit),
            SeriesKind::BusyTime { .. } => "%".to_owned(),
        }
    }
}

/// One sampler run: its name and counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamDesc {
    /// The stream's name (e.g. the metric group's).
    pub name: String,
    /// The stream's series, in the order of each sample's values.
    pub series: Vec<SeriesDesc>,
}

/// A stream of a [`Store`](super::Store).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub(crate) u32);

/// One series (counter) of one stream of a [`Store`](super::Store).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeriesId {
    pub(crate) stream: StreamId,
    pub(crate) index: u32,
}

impl SeriesId {
    /// The stream the series belongs to.
    pub fn stream(self) -> StreamId {
        self.stream
    }

    /// Position of the series in its stream's `StreamDesc::series`.
    pub fn index(self) -> usize {
        self.index as usize
    }
}

/// A summary of one stream.
#[derive(Clone, Copy, Debug)]
pub struct StreamSummary<'a> {
    /// The stream's id.
    pub id: StreamId,
    /// Its name and series.
    pub desc: &'a StreamDesc,
    /// True once `Store::end_stream` was called: it takes no more samples.
    pub ended: bool,
    /// Samples ever appended.
    pub appended: u64,
    /// Oldest and newest time held (at any resolution).
    pub time_range: Option<(i64, i64)>,
}
