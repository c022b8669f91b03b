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
}

/// One counter of a stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesDesc {
    /// Counter name, unique within its stream.
    pub name: String,
    /// Unit of the raw value (a cumulative counter's rate is in `unit/s`).
    pub unit: String,
    /// Gauge or cumulative.
    pub kind: SeriesKind,
}

impl SeriesDesc {
    /// Unit of what is plotted: `unit/s` for a cumulative counter.
    pub fn plotted_unit(&self) -> String {
        match self.kind {
            SeriesKind::Gauge => self.unit.clone(),
            SeriesKind::Cumulative { .. } => format!("{}/s", self.unit),
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
