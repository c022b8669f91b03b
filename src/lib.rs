//! zescope: a live metrics viewer for GPUs and NPUs driven through oneAPI Level Zero, reading
//! the counters drivers export as DMA-BUF memory (`ZET_experimental_metric_export_memory`).
//!
//! This is the top floor: the command line ([`cli`]), the commands that run without a window
//! ([`commands`]: `list`, `record`, `serve`, `export`, `mark`, `doctor`) and the signals they
//! and the window end on ([`signals`]), and the built-in simulated device ([`sim`], the only
//! place outside tests that names ze-sim; the crates below take it as a
//! [`zescope_ze::BuiltIn`]). `src/main.rs` opens the window (`zescope-window`) when
//! no command is given. Everything else is in the crates below, each depending only on those
//! under it, and code names the crate it uses: `zescope-ze` (Level Zero access) →
//! `zescope-sampler` (the one thread that maps exported memory, layouts from bytes to values) →
//! `zescope-store` (time series) → `zescope-model` (view model, sessions, markers, triggers,
//! file writers) → `zescope-window` (plots). `docs/architecture.md` walks through it file by
//! file.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod cli;
pub mod commands;
pub mod live;
pub mod signals;
pub mod sim;
