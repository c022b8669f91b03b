//! zescope: a live metrics viewer for GPUs and NPUs driven through oneAPI Level Zero, reading
//! the counters drivers export as DMA-BUF memory (`ZET_experimental_metric_export_memory`).
//!
//! This is the top floor, the binary crate: the window (`app`, `gui`), the commands (`record`,
//! `serve`, `list`, `pick`; `headless` is the run loop `record` and `serve` share), the command
//! line (`cli`) and the built-in simulated device (`sim`, the one crate that links ze-sim). The floors below are crates, each depending only on those under it,
//! re-exported here under their module names:
//! `zescope-ze` (`ze`); `zescope-sampler` (`sampler`, `layout`); `zescope-store` (`store`,
//! `par`); `zescope-doctor` (`doctor`); `zescope-openmetrics` (`openmetrics`); `zescope-model`
//! (`view`, `session`, `markers`, `export`, `triggers`, `viewfile`).
//! Where a counter's bytes become a pixel: `ze` (Level Zero access) → `sampler` (the one thread
//! that maps exported memory) → `layout` (bytes to values) → `view::ingest` → `store` (time
//! series) → `app` (plots). `docs/architecture.md` walks through it file by file.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod app;
pub mod cli;
pub mod gui;
mod headless;
pub mod list;
pub mod logwatch;
pub mod pick;
pub mod record;
pub mod serve;
pub mod signals;
pub mod sim;

// The floors below, under the module names the code and tests have always used.
pub use zescope_doctor as doctor;
pub use zescope_model::{export, markers, session, triggers, view, viewfile};
pub use zescope_openmetrics as openmetrics;
pub use zescope_sampler::{self as sampler, layout};
pub use zescope_store::{self as store, par};
pub use zescope_ze as ze;
