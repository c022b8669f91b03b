//! The window's tests that need the root package: the window's own tests live in the window crate
//! (`crates/zescope-window/tests/window/`, one binary); these few open what the `zescope` binary
//! or `zescope record`'s code (`zescope::commands::record`) wrote, which the window crate cannot
//! build or call (the root package depends on it, not the other way). They share the window
//! crate's test support (`support`): sampler helpers, harnesses, the example recording.
//! - `multidev`: two-device recordings from `zescope record --device 0,1` open with each row's
//!   device named (legends, the phase table, the A/B window).
//! - `roundtrip`: a recording from `zescope record`'s code saved, loaded and restored gives back
//!   the same samples, view and bytes; a background save of it reports progress.

#[path = "../../crates/zescope-window/tests/window/support/mod.rs"]
mod support;

mod multidev;
mod roundtrip;
