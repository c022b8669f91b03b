//! zescope: a live metrics viewer for GPUs and NPUs driven through oneAPI Level Zero, reading
//! the counters drivers export as DMA-BUF memory (`ZET_experimental_metric_export_memory`).
//!
//! Floors, from the bottom up, each importing only from those below it: `ze`; `layout` and
//! `sampler`; `store`; `view` (the view model: series, panes, time view, formatting, the one
//! ingest); `session` and `export`; `app`, `record` (and `list`, `doctor`); `cli`/`gui`.
//! Where a counter's bytes become a pixel: `ze` (Level Zero access) → `sampler` (the one thread
//! that maps exported memory) → `layout` (bytes to values) → `view::ingest` → `store` (time
//! series) → `app` (plots). `docs/architecture.md` walks through it file by file.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod app;
pub mod cli;
pub mod doctor;
pub use zescope_model::export;
pub mod gui;
pub use zescope_sampler::layout;
pub mod list;
pub mod logwatch;
pub use zescope_model::markers;
pub use zescope_store::par;
pub mod record;
pub use zescope_sampler as sampler;
pub mod serve;
pub use zescope_model::session;
pub mod signals;
pub use zescope_model::view;
pub use zescope_store as store;
pub use zescope_ze as ze;
