//! The store's integration tests, one binary: what it answers scenario by scenario
//! (`queries`), its limits and bad input (`limits`), and property tests against a brute-force
//! model of every sample (`props`, `model`). `rss.rs` is a binary of its own: it measures the
//! process's resident set.

mod limits;
mod model;
mod props;
mod queries;
