//! The Level Zero loaders the tests run zescope through: Debian's `libze1` (1.8.12) and the
//! upstream release v1.32.0, built from `third_party/level-zero-v1.32.0.tar.gz`.
//!
//! [`upstream`] is the loader and its validation and tracing layers as
//! `ze_sim::testing::upstream_loader` builds them, ONCE, into `target/level-zero-v1.32.0/` (see
//! there). The loader finds its layers by file name through the library path, so a run through
//! it sets `LD_LIBRARY_PATH` to the directory returned.

#![allow(dead_code)] // each test binary uses part of this module

use std::path::{Path, PathBuf};
use std::process::Command;

/// The release kept in `third_party/`.
pub const UPSTREAM_VERSION: &str = ze_sim::testing::UPSTREAM_LOADER;

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

/// The directory holding `libze_loader.so.1` and its validation and tracing layers:
/// `ze_sim::testing::upstream_loader` (built once per target directory, shared with ze-sim's own
/// tests).
pub fn upstream_lib_dir() -> Result<PathBuf, String> {
    ze_sim::testing::upstream_loader().map(|(lib, _)| lib)
}
