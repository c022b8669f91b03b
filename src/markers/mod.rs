//! Markers from the running workload: a Unix datagram socket that the window, `record` and
//! `serve` listen on, in a small thread of its own (never the sampler's), handing what arrives
//! over a bounded channel to the loop that stores samples.
//!
//! The protocol, the Rust sender and the socket's path are in the `zescope-markers` crate
//! (`crates/zescope-markers`); `include/zescope_markers.h` is the same sender for C and C++.
//! README.md, "Markers", is the user's guide.

mod bind;
mod listener;
mod mark;

pub use bind::bind;
pub use listener::{Counts, Listener, Received};
pub use mark::mark;
pub use zescope_markers::{ENV, Kind, socket_path};
