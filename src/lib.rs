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
pub mod layout;
pub mod list;
pub mod record;
pub mod sampler;
pub mod session;
pub mod signals;
pub mod store;
pub mod ze;
