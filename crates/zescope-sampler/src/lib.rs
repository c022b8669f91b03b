//! The sampler: ONE thread that owns all Level Zero state of a sampling run and talks to the
//! rest of zescope only through channels (`protocol`).
//!
//! It opens the source itself, so driver handles never leave it; it sets up a run
//! (`setup`), reads it on deadline ticks (`timing`, `run`) through its ways (`read`, one folder
//! each: exported memory, the metric tracer, the time-based streamer, Sysman telemetry; one
//! trait),
//! sends batches through an `outbox` that never blocks, and ends every run — stop, shutdown,
//! group or device change, error, panic — through the one teardown (`teardown`). `testing`
//! (the `testing` feature) runs it on a private simulated driver for tests.

#![deny(missing_docs)]
#![warn(unreachable_pub)]
// Exported memory is mapped and read only in `dmabuf`: the compiler refuses unsafe elsewhere.
#![deny(unsafe_code)]

pub mod claims;
mod config_compat;
mod deadline;
pub mod direct;
#[allow(unsafe_code)]
mod dmabuf;
mod errors;
mod host;
mod inventory;
pub mod layout;
mod optional;
mod outbox;
mod process_reader;
pub mod protocol;
mod read;
mod run;
mod setup;
mod teardown;

mod handle;
#[cfg(feature = "testing")]
pub mod testing;
mod thread;
mod timing;

pub use direct::DirectRun;
pub use handle::spawn_source;
pub use handle::{Opener, Options, SamplerHandle, spawn};
pub use host::{monotonic_ns, process_cpu_time, thread_cpu_time};
pub use optional::{NOTICE_LOG_TARGET, say_notice};
pub use outbox::Waker;
pub use protocol::*;
pub use read::batch::ReadOutcome;
pub use read::{group_ways, listed_ways};
pub use timing::BATCH_INTERVAL;
