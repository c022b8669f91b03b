//! The Level Zero loaders the tests run zescope through: Debian's `libze1` (1.8.12) and the
//! upstream release v1.32.0, built from `third_party/level-zero-v1.32.0.tar.gz`.
//!
//! [`upstream`] builds the loader and its validation and tracing layers ONCE into
//! `target/level-zero-v1.32.0/` (cmake Release, `make -j2` of the three libraries; offline: the
//! archive's CMake fetches nothing unless its own tests are enabled) and reuses that build when
//! it is there. An exclusive `flock` on `target/level-zero-v1.32.0/.lock` keeps test binaries
//! running in parallel from building it twice. The loader finds its layers by file name through
//! the library path, so a run through it sets `LD_LIBRARY_PATH` to the directory returned.

#![allow(dead_code)] // each test binary uses part of this module

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The release kept in `third_party/`.
pub const UPSTREAM_VERSION: &str = "1.32.0";

/// Debian's loader (libze1).
pub const DEBIAN_LOADER: &str = "/usr/lib/x86_64-linux-gnu/libze_loader.so.1";

/// A loader to run zescope through.
#[derive(Clone, Debug)]
pub struct LoaderUnderTest {
    /// "debian-1.8.12" or "upstream-1.32.0".
    pub name: &'static str,
    /// For `ZESCOPE_LEVEL_ZERO_LOADER`.
    pub library: PathBuf,
    /// The directory of its layers, for `LD_LIBRARY_PATH` (None: the system's search path).
    pub layer_dir: Option<PathBuf>,
}

impl LoaderUnderTest {
    /// Points `cmd` at this loader (and only at its layers).
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env("ZESCOPE_LEVEL_ZERO_LOADER", &self.library);
        match &self.layer_dir {
            Some(d) => cmd.env("LD_LIBRARY_PATH", d),
            None => cmd.env_remove("LD_LIBRARY_PATH"),
        };
    }
}

/// Debian's loader, or why it is missing.
/// The loaders present (each missing one skipped loudly) and the simulated driver's
/// `libze_sim.so`, or None (skipped loudly) when there is no driver or no loader.
pub fn with_driver(what: &str) -> Option<(Vec<LoaderUnderTest>, PathBuf)> {
    let so = match ze_sim::testing::cdylib() {
        Ok(so) => so,
        Err(why) => {
            ze_sim::testing::skip(what, &why);
            return None;
        }
    };
    let mut found = Vec::new();
    for loader in [debian(), upstream()] {
        match loader {
            Ok(l) => found.push(l),
            Err(why) => ze_sim::testing::skip(&format!("{what} through one of the loaders"), &why),
        }
    }
    (!found.is_empty()).then_some((found, so))
}

pub fn debian() -> Result<LoaderUnderTest, String> {
    if !Path::new(DEBIAN_LOADER).exists() {
        return Err(format!("{DEBIAN_LOADER} is missing (apt install libze1)"));
    }
    Ok(LoaderUnderTest { name: "debian-1.8.12", library: DEBIAN_LOADER.into(), layer_dir: None })
}

/// The upstream loader built from the archive, or why it cannot be built.
pub fn upstream() -> Result<LoaderUnderTest, String> {
    let dir = upstream_lib_dir()?;
    Ok(LoaderUnderTest { name: "upstream-1.32.0", library: dir.join("libze_loader.so.1"), layer_dir: Some(dir) })
}

/// The workspace's `target/` (or `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
    }
}

/// The archive in `third_party/`.
pub fn archive() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("third_party/level-zero-v{UPSTREAM_VERSION}.tar.gz"))
}

/// Builds (once per machine, see the module docs) and returns the directory holding
/// `libze_loader.so.1`, `libze_validation_layer.so.1` and `libze_tracing_layer.so.1`.
pub fn upstream_lib_dir() -> Result<PathBuf, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(build_upstream).clone()
}

const LIBRARIES: [&str; 3] = ["libze_loader.so.1", "libze_validation_layer.so.1", "libze_tracing_layer.so.1"];

fn build_upstream() -> Result<PathBuf, String> {
    let root = target_dir().join(format!("level-zero-v{UPSTREAM_VERSION}"));
    std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    let lock = std::fs::File::create(root.join(".lock")).map_err(|e| format!("cannot create the lock file: {e}"))?;
    // Released when `lock` is dropped.
    lock.lock().map_err(|e| format!("cannot lock {}: {e}", root.display()))?;
    let lib = root.join("build/lib");
    let stamp = root.join(".built");
    if stamp.exists() && LIBRARIES.iter().all(|l| lib.join(l).exists()) {
        return Ok(lib);
    }
    let archive = archive();
    if !archive.exists() {
        return Err(format!("{} is missing", archive.display()));
    }
    let src = root.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    run(Command::new("tar").arg("xzf").arg(&archive).arg("-C").arg(&src))?;
    let source = src.join(format!("level-zero-{UPSTREAM_VERSION}"));
    let build = root.join("build");
    eprintln!("building the Level Zero loader v{UPSTREAM_VERSION} into {} (once; a few minutes)", build.display());
    run(Command::new("cmake")
        .arg("-S")
        .arg(&source)
        .arg("-B")
        .arg(&build)
        .arg("-DCMAKE_BUILD_TYPE=Release")
        .arg("-DBUILD_L0_LOADER_TESTS=OFF"))?;
    run(Command::new("make").arg("-C").arg(&build).arg("-j2").args([
        "ze_loader",
        "ze_validation_layer",
        "ze_tracing_layer",
    ]))?;
    if let Some(missing) = LIBRARIES.iter().find(|l| !lib.join(l).exists()) {
        return Err(format!("the build did not produce {}", lib.join(missing).display()));
    }
    std::fs::write(&stamp, UPSTREAM_VERSION).map_err(|e| e.to_string())?;
    Ok(lib)
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    let out = cmd.output().map_err(|e| format!("cannot run {shown}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!("{shown} failed ({}):\n{}", out.status, tail.join("\n")));
    }
    Ok(())
}
