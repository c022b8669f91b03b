//! zescope's OpenMetrics: how a run's counters are named, labelled and written for Prometheus,
//! decided in ONE place for the live endpoint (`zescope serve`) and the backfill of a saved
//! session (`zescope export --openmetrics`), so that history backfilled from a session and live
//! scrapes of the same configuration are the same series.
//!
//! # Modules
//!
//! - [`names`]: a counter's family name (`zescope_` + snake_case), its base unit and factor, the
//!   `source` label, the help text, and the names zescope keeps for its own metrics.
//! - [`telemetry`]: the telemetry stream's families and domain labels (Sysman: clocks, throttle
//!   reasons, power, energy, temperatures, engines, memory).
//! - [`catalog`]: the planner. A [`RunDescription`] (devices, streams, series: built from the
//!   sampler's `RunInfo` and the inventory by serve, from a session's records by export) becomes
//!   a [`Catalog`]: families, label sets, and per value of the run the [`SampleRule`]s that turn
//!   it into samples (factor, bitmask bit).
//! - [`processes`]: the processes using each device (`serve --processes`): their families,
//!   labels and the top N by memory.
//! - [`backfill`]: the timestamped OpenMetrics text `promtool tsdb create-blocks-from
//!   openmetrics` reads.
//!
//! # Floors
//!
//! It stands on `zescope-sampler` (the run's description, `ReadPath`, the telemetry's series
//! names) and on no OpenMetrics library: base units are strings. `zescope-model`'s export and
//! the binary's `serve` (which encodes a catalog with `prometheus-client`) stand on it.

#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![forbid(unsafe_code)]

pub mod backfill;
pub mod catalog;
pub mod names;
pub mod otel;
pub mod processes;
pub mod telemetry;

pub use backfill::Backfill;
pub use catalog::{
    Catalog, DeviceDescription, Family, Labels, RunDescription, SampleRule, SeriesDescription, StreamDescription,
};
