//! What must hold while the machine is loaded, one binary: sampling goes on under a flood of
//! markers, which is counted and bounded (`markers_flood`), and `serve` answers scrapes while
//! hostile clients hold its connections, before any of their deadlines (`serve_http`).
//!
//! These tests make heavy load, so each runs alone: its own binary (no test of
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
