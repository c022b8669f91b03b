//! zescope library.

pub mod app;
pub mod store;
