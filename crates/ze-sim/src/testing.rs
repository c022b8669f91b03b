//! Helpers for tests that need `libze_sim.so` or that may have to skip.
//!
//! Cargo does not build a cdylib for integration tests, so [`cdylib`] builds it (the same
//! profile as the running test) with a nested `cargo build -p ze-sim --lib` and returns its
//! absolute path, which is what `ZE_ENABLE_ALT_DRIVERS` needs; [`upstream_loader`] builds the
//! upstream Level Zero loader the tracer tests run through.

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

/// The Level Zero release kept in `third_party/`, whose loader tests build.
pub const UPSTREAM_LOADER: &str = "1.32.0";

/// The upstream loader v1.32.0 and its validation and tracing layers, built ONCE from
/// `third_party/level-zero-v1.32.0.tar.gz` into `<target>/level-zero-v1.32.0/` by
/// `crates/ze-sim/upstream-loader.sh` (cmake Release at -O0, `make -j2` of the three libraries,
/// offline; an exclusive `flock` on `.lock`, the stamp `.built` written last) and reused
/// afterwards: returns (the directory holding the libraries, the directory of the release's
/// headers). zescope's command tests use this same build; `.ci/run` starts the script in the
/// background before clippy. The loader finds its layers by file name: a run through it
/// sets `LD_LIBRARY_PATH` to the library directory.
pub fn upstream_loader() -> Result<(PathBuf, PathBuf), String> {
    static DIRS: OnceLock<Result<(PathBuf, PathBuf), String>> = OnceLock::new();
    DIRS.get_or_init(build_upstream).clone()
}

const UPSTREAM_LIBRARIES: [&str; 3] = ["libze_loader.so.1", "libze_validation_layer.so.1", "libze_tracing_layer.so.1"];

fn build_upstream() -> Result<(PathBuf, PathBuf), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/deps/<test binary>
    let target = exe.ancestors().nth(3).ok_or("unexpected test binary location")?;
    let root = target.join(format!("level-zero-v{UPSTREAM_LOADER}"));
    let (lib, include) = (root.join("build/lib"), root.join(format!("src/level-zero-{UPSTREAM_LOADER}/include")));
    let built = || root.join(".built").exists() && UPSTREAM_LIBRARIES.iter().all(|l| lib.join(l).exists());
    if built() && include.exists() {
        return Ok((lib, include));
    }
    // The one recipe (also run by .ci/run in the background): locks, builds, stamps.
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let archive = manifest.join(format!("../../third_party/level-zero-v{UPSTREAM_LOADER}.tar.gz"));
    run(std::process::Command::new("bash").arg(manifest.join("upstream-loader.sh")).arg(&archive).arg(&root))?;
    if !built() || !include.exists() {
        return Err(format!("upstream-loader.sh left no complete build in {}", root.display()));
    }
    Ok((lib, include))
}

fn run(cmd: &mut std::process::Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    let out = cmd.output().map_err(|e| format!("cannot run {shown}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect();
        return Err(format!("{shown} failed ({}):\n{}", out.status, tail.join("\n")));
    }
    Ok(())
}
