//! Helpers for tests that need `libze_sim.so` or that may have to skip.
//!
//! Cargo does not build a cdylib for integration tests, so [`cdylib`] builds it (the same
//! profile as the running test) with a nested `cargo build -p ze-sim --lib` and returns its
//! absolute path, which is what `ZE_ENABLE_ALT_DRIVERS` needs.

pub mod faults;

use std::path::PathBuf;
use std::sync::OnceLock;

/// `ZESCOPE_STRICT_TESTS=1` (set by CI) turns every skip into a failure.
pub(crate) fn strict() -> bool {
    std::env::var("ZESCOPE_STRICT_TESTS").is_ok_and(|v| v == "1")
}

/// Skips loudly, or panics in strict mode. Returns so the caller can `return`.
pub fn skip(what: &str, why: &str) {
    assert!(!strict(), "ZESCOPE_STRICT_TESTS=1 and {what} cannot run: {why}");
    eprintln!("\n!!!!!!!! SKIPPED {what}: {why} (set ZESCOPE_STRICT_TESTS=1 to make this fail) !!!!!!!!\n");
}

/// Is the Level Zero loader installed?
pub fn loader_available() -> Result<(), String> {
    // SAFETY: the system's Level Zero loader by its standard name; nothing is called through it.
    unsafe { level_zero_sys::Api::load() }.map(|_| ()).map_err(|e| e.to_string())
}

/// Builds (if needed) and returns the absolute path of `libze_sim.so` for the current profile.
pub fn cdylib() -> Result<PathBuf, String> {
    static PATH: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        // target/<profile>/deps/<test binary>
        let profile_dir = exe.parent().and_then(|p| p.parent()).ok_or("unexpected test binary location")?;
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.args(["build", "-p", "ze-sim", "--lib", "--quiet"]);
        if release {
            cmd.arg("--release");
        }
        if let Some(target) = profile_dir.parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        let out = cmd.output().map_err(|e| format!("cannot run cargo to build libze_sim.so: {e}"))?;
        if !out.status.success() {
            return Err(format!("cargo build -p ze-sim failed:\n{}", String::from_utf8_lossy(&out.stderr)));
        }
        let so = profile_dir.join("libze_sim.so");
        if !so.exists() {
            return Err(format!("{} was not produced", so.display()));
        }
        Ok(so)
    })
    .clone()
}
