//! What must hold while the machine is loaded, measured in time, one binary: sampling keeps its
//! rate under a flood of markers (`markers_flood`), and `serve` answers scrapes within a second
//! while hostile clients hold its connections (`serve_http`).
//!
//! These tests measure rates and answer times, so each runs alone: its own binary (no test of
//! another binary runs beside it: Cargo runs binaries one after another), and [`alone`] keeps
//! them from running beside each other. The load they measure under is the one they make.

#[path = "../commands/support/mod.rs"]
mod support;

mod markers_flood;
mod serve_http;

/// Held for the whole of a test: one test of this binary at a time.
pub fn alone() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|p| p.into_inner())
}
