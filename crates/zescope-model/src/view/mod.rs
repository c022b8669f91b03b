//! The view model: what the window, the files and the commands share about what is shown, with
//! no egui. Above the store and the sampler (and its `layout`); below the model's `session`,
//! `write`, `markers`, `triggers` and `viewfile`, the window (`zescope-window`) and the commands
//! (`record`, `serve`, `export`), which all build on it and none of which it knows.
//!
//! - [`activity`]: the window's one state (live, paused, stopped, recording open);
//! - [`contrast`]: series colours kept readable on the background;
//! - [`cursors`]: the A/B cursors and their readout;
//! - [`series`]: a counter's identity ([`SeriesKey`]) and entry ([`SeriesEntry`]), its kind as
//!   the store keeps it, and the store's description of a run's stream ([`stream_desc`]);
//! - [`ingest`]: the ONE path from sampler events to store writes ([`Ingest`]);
//! - [`markers`]: instants and named ranges on the samples' time axis ([`Markers`]);
//! - [`panes`]: the pane arrangement ([`Arrangement`], [`PaneSpec`]) and its default placement;
//! - [`phases`]: the phase table (per phase and series: duration, mean/min/max, totals, energy);
//! - [`processes`]: the processes that used each device over time ([`Processes`]), from the
//!   sampler's process snapshots;
//! - [`shown`]: what one frame shows of a pane, each series looked up once ([`ShownSeries`]), and
//!   the time axis' mapping ([`TimeAxis`]);
//! - [`timeview`]: which part of the timeline is shown ([`TimeView`]: window, follow/pause,
//!   zoom);
//! - [`ticks`]: round axis steps with room for their labels;
//! - `runs`: how an envelope is cut into gap-free strokes, for the plot and for images;
//! - `text`: numbers, units, times and durations as text for people.
//!
//! How counters are named for Prometheus is not the view's business: `zescope-openmetrics`.

pub mod activity;
pub mod contrast;
pub mod csv_text;
pub mod cursors;
pub mod ingest;
pub mod markers;
pub mod panes;
pub mod phases;
pub mod processes;
pub mod runs;
pub mod series;
pub mod shown;
pub mod text;
pub mod throttle;
pub mod ticks;
pub mod timeview;

pub use activity::Activity;
pub use ingest::{ActiveRun, Ingest};
pub use markers::{Mark, Markers, Span};
pub use panes::{Arrangement, PaneSpec, default_arrangement};
pub use processes::Processes;
pub use series::{SeriesEntry, SeriesKey, stream_desc};
pub use shown::{ShownSeries, TimeAxis, shown_series};
pub use timeview::{Mode, TimeView, ViewLength, data_x};
