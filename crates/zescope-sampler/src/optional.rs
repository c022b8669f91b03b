//! Level Zero calls the export-memory path does not need, and what losing one costs.
//!
//! Only what a feature needs is required. The export-memory path needs enumeration, group and
//! metric properties, a context, activation, the import (`zeMemAllocDevice`) and `zeMemFree`;
//! everything else is optional (`docs/level-zero-calls.md` lists every call and its feature).
//! An optional call that answers anything but success — UNSUPPORTED_FEATURE, UNINITIALIZED
//! (what the loader answers in intercept mode for an entry point a driver left empty), or any
//! other error except DEVICE_LOST — turns its feature off for the run, once, with one line in
//! the diagnostics and the log. It never ends a run.

use level_zero_sys::ZE_RESULT_ERROR_DEVICE_LOST;

use zescope_ze::ZeError;

/// Is this answer of an optional call a reason to end the run (the device is gone)?
pub(crate) fn is_fatal(e: &ZeError) -> bool {
    e.code == ZE_RESULT_ERROR_DEVICE_LOST
}

/// The log target of notices: the sampler thread logs each notice once, at `warn`, under it as it
/// sends the notice on (the headless commands print notices themselves only when this target's log is off).
pub const NOTICE_LOG_TARGET: &str = "zescope::notice";

/// A notice on stderr for the headless commands (`record`, `serve`), said once: the sampler has
/// logged it under [`NOTICE_LOG_TARGET`] already unless that log is off (`RUST_LOG`).
pub fn say_notice(message: &str) {
    if !log::log_enabled!(target: NOTICE_LOG_TARGET, log::Level::Warn) {
        eprintln!("zescope: {message}");
    }
}

/// The notice for `feature` turned off because of `e` (the sampler thread logs it as it sends it).
pub(crate) fn off(feature: &str, e: &ZeError) -> String {
    format!("{feature} is off for this run: the driver answered {} with {}", e.call, e.name())
}
