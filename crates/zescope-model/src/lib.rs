//! zescope's model: everything between the store and a front end, free of egui, shared by the
//! window, `record`, `serve` and `export`.
//!
//! # Modules
//!
//! - [`view`]: the view model — series, panes, the time view, text for people (`view::text`),
//!   the one ingest that turns sampler events into store appends.
//! - [`session`]: saving and loading whole sessions (RON heads, packed chunks), autosave,
//!   `record`'s session written as it samples (`session::Recorder`).
//! - [`derive`](mod@derive): derived series — expressions over series computed as the samples arrive,
//!   added to the run as series like any other.
//! - [`markers`]: the markers socket's listener (instants and ranges sent by a workload).
//! - [`triggers`]: conditions on series, markers and throttle reasons evaluated on ingest, and
//!   keeping only the time around their firings.
//! - [`viewfile`]: view files — panes, colours, held ranges, window and triggers by series
//!   patterns, put onto any run.
//! - [`write`](mod@write): the file formats — plots to PNG and SVG, data to CSV and OpenMetrics text (named
//!   and written by `zescope-openmetrics`, as `zescope serve` names its scrapes), Perfetto
//!   traces, the phase table.
//!
//! # Floors
//!
//! It stands on `zescope-store`, `zescope-sampler`, `zescope-ze` and `zescope-openmetrics`;
//! nothing here knows the window or the commands.

#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![forbid(unsafe_code)]

pub mod derive;
pub mod markers;
pub mod session;
pub mod triggers;
pub mod view;
pub mod viewfile;
pub mod write;
