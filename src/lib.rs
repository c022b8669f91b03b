//! zescope: a live metrics viewer for GPUs and NPUs driven through oneAPI Level Zero, reading
//! the counters drivers export as DMA-BUF memory (`ZET_experimental_metric_export_memory`).
//!
//! Where a counter's bytes become a pixel: `ze` (Level Zero access) → `sampler` (the one thread
//! that maps exported memory) → `layout` (bytes to values) → `store` (time series) →
//! `app` (plots).

pub mod app;
pub mod cli;
pub mod doctor;
pub mod export;
pub mod gui;
#[warn(missing_docs)]
pub mod layout;
pub mod list;
pub mod record;
#[warn(missing_docs)]
pub mod sampler;
pub mod session;
#[warn(missing_docs)]
pub mod signals;
#[warn(missing_docs)]
pub mod store;
#[warn(missing_docs)]
pub mod ze;
