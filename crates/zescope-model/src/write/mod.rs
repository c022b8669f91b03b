//! Files written from a session's data, by `zescope export` and the window alike, without a
//! display: PNG and SVG images of plot panes, CSV of the samples, OpenMetrics text, a Perfetto
//! trace and the phase table. (Here "write" is zescope's word for producing a file; "export" is
//! the driver's: the DMA-BUF memory a metric group exports.)
//!
//! # One trait per format
//!
//! Each format is a [`Format`] in its own file, listed once in [`FORMATS`]: `zescope export`
//! takes one option per format and the window offers those that want to be, both writing
//! through [`Format::write`] from one [`Input`]. A new format is a file here and a line in
//! `FORMATS` (`docs/architecture.md`, "Adding a file format").
//!
//! # What is written
//!
//! Both callers describe the panes the same way: a [`WriteSpec`] of panes, each with its series
//! (label, plotted unit, colour, visibility and the store series of every run), and a time range.
//! [`WriteSpec::from_arrangement`] builds one from a pane arrangement and series map (`view`), which is
//! also what a restored session gives. Images are drawn from the store's envelopes at one column
//! per pixel, like the screen (`image.rs`); CSV holds the store's full-resolution samples
//! (`csv.rs`, the one CSV format, which `zescope record` writes too); a Perfetto trace holds
//! every sample with the markers and metadata (`perfetto.rs`). [`WriteJob`] runs a format on a
//! thread of its own for the window.

mod csv;
mod format;
mod image;
mod job;
mod legend;
mod markers_csv;
mod openmetrics;
mod perfetto;
mod phases;
mod processes_csv;

use std::collections::BTreeMap;

use crate::view::{Arrangement, SeriesEntry, SeriesKey};
use zescope_store::{SeriesId, Store};

pub use csv::{Csv, CsvShown, CsvWriter, Values, column, csv, csv_of};
pub use format::{Format, Input, Scope};
pub use image::{FONT, MAX_SIDE, MIN_SIDE, default_size};
pub use image::{Png, Svg, png, svg};
pub use job::{WriteJob, WriteRequest};
pub use markers_csv::{markers_path, write_markers_csv};
pub use openmetrics::{OpenMetrics, openmetrics};
pub use perfetto::{OpenRange, Perfetto, PerfettoSummary, PerfettoTrace, TraceHead, perfetto, perfetto_of};
pub use phases::Phases;
pub use processes_csv::{processes_path, write_processes_csv};

/// Every format, in the order `zescope export` lists and writes them and the window offers them.
pub static FORMATS: [&dyn Format; 7] = [&Png, &Svg, &CsvShown, &Csv, &OpenMetrics, &Perfetto, &Phases];

/// The format whose key is `key` ("png", "csv", …).
pub fn format(key: &str) -> Option<&'static dyn Format> {
    FORMATS.iter().copied().find(|f| f.key() == key)
}

/// The formats whose files end in `.ext` (lower case), in [`FORMATS`]' order: "csv" gives both
/// CSVs and the phase table. The command line and the window refuse writing one format under
/// another's name with it.
pub fn formats_named(ext: &str) -> impl Iterator<Item = &'static dyn Format> + '_ {
    FORMATS.iter().copied().filter(move |f| f.extension() == ext)
}

/// One series of a pane, as the UI shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteSeries {
    /// "group/metric".
    pub label: String,
    /// The plotted unit ("ns/s" for a cumulative counter in ns).
    pub unit: String,
    /// The stored unit (CSV holds stored values: totals for cumulative counters).
    pub raw_unit: String,
    /// Its colour as sRGB bytes, the one the legend shows.
    pub color: [u8; 3],
    /// Hidden series (`false`) are left out of images and CSV alike, and of [`WritePane::units`].
    pub visible: bool,
    /// Its store series, one per run.
    pub ids: Vec<SeriesId>,
    /// A throttle-reason bitmask's bit names (`sampler::telemetry::throttle_names`); empty for
    /// any other series. Images draw its bands (`view::throttle`) as the window does.
    pub throttle: Vec<(u32, String)>,
}

/// One pane.
#[derive(Clone, Debug, PartialEq)]
pub struct WritePane {
    /// "Pane 2".
    pub title: String,
    /// Its series in legend order, hidden ones included.
    pub series: Vec<WriteSeries>,
}

impl WritePane {
    /// The units of the visible series, joined.
    pub fn units(&self) -> String {
        let units: std::collections::BTreeSet<&str> =
            self.series.iter().filter(|s| s.visible).map(|s| s.unit.as_str()).collect();
        units.into_iter().collect::<Vec<_>>().join(", ")
    }
}

/// What to export.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteSpec {
    /// The panes, in the order they are stacked (top first); an image of none is refused.
    pub panes: Vec<WritePane>,
    /// Time range in store ns; `None`: everything held.
    pub range: Option<(i64, i64)>,
    /// Markers drawn on every pane (instants as lines, ranges as bands, named).
    pub markers: Vec<crate::view::Mark>,
}

/// Why an export failed. Its message is meant for the user as it is (the window shows it in a
/// banner, `zescope export` prints it).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Creating or writing the output file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file being written.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The image could not be drawn: a size outside 64..=16384 pixels per side, or an error of
    /// the drawing backend (its text).
    #[error("drawing failed: {0}")]
    Draw(String),
    /// There is nothing to write: no pane, no visible series, or no samples in the range.
    #[error("nothing to export: {0}")]
    Empty(String),
    /// The CSV encoder failed (its text); I/O errors on the file are [`WriteError::Io`].
    #[error("writing CSV: {0}")]
    Csv(String),
}

impl WriteSpec {
    /// Panes `which` (indices into the arrangement, in order; all when `None`) of
    /// an arrangement, with colours, visibility and store series from `series`.
    pub fn from_arrangement(
        arrangement: &Arrangement,
        series: &BTreeMap<SeriesKey, SeriesEntry>,
        which: Option<&[usize]>,
        range: Option<(i64, i64)>,
    ) -> WriteSpec {
        // Series of several devices: labels (and CSV columns) name the device.
        let mut devices = series.keys().map(|k| &k.device);
        let several = devices.next().is_some_and(|first| devices.any(|d| d != first));
        let panes = arrangement
            .panes
            .iter()
            .enumerate()
            .filter(|(i, _)| which.is_none_or(|w| w.contains(i)))
            .map(|(i, p)| WritePane {
                title: format!("Pane {}", i + 1),
                series: p
                    .series
                    .iter()
                    .map(|k| {
                        let entry = series.get(k);
                        WriteSeries {
                            label: if several { format!("{}/{}", k.device, k.label()) } else { k.label() },
                            unit: entry.map(SeriesEntry::plotted_unit).unwrap_or_default(),
                            raw_unit: entry.map(|e| e.info.unit.clone()).unwrap_or_default(),
                            color: arrangement.colors.get(k).copied().unwrap_or([0, 114, 178]),
                            visible: !arrangement.hidden.contains(k),
                            ids: entry.map(|e| e.ids.clone()).unwrap_or_default(),
                            throttle: entry
                                .map(|e| zescope_sampler::telemetry::throttle_names(&e.info.description))
                                .unwrap_or_default(),
                        }
                    })
                    .collect(),
            })
            .collect();
        WriteSpec { panes, range, markers: Vec::new() }
    }

    /// The range to export: the requested one, or everything the store holds.
    pub fn resolved_range(&self, store: &Store) -> Option<(i64, i64)> {
        let r = self.range.or_else(|| store.total_time_range())?;
        (r.0 <= r.1).then_some(r)
    }
}
