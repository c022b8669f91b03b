//! Why a Level Zero loader failed to start, from what the process can see of it: the files
//! mapped into the process (`/proc/self/maps`: the loader and the layers it loaded), the
//! component versions the loader reports (`zelLoaderGetVersions`), and, where the caller
//! captured it, the loader's own debug trace (`ZE_ENABLE_LOADER_DEBUG_TRACE=1` lines).
//!
//! The case this exists for: a loader loads its validation and tracing layers by file name
//! through the library path, so a loader started from one directory can pick up the layers of
//! another Level Zero release found earlier on `LD_LIBRARY_PATH`. Such a layer refuses the
//! loader's API version and `zeInit`/`zeInitDrivers` answer ZE_RESULT_ERROR_UNSUPPORTED_VERSION
//! (the tracing layer is loaded even when tracing is off). That is not "no driver was found",
//! and the fix is the library path, not a driver package. All functions here are pure: the
//! caller gathers the inputs.

use std::path::{Path, PathBuf};

use level_zero_sys::ZE_RESULT_ERROR_UNSUPPORTED_VERSION;

use super::error::ZeError;

/// What went wrong, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnosis {
    /// What is wrong, in the user's terms.
    pub explanation: String,
    /// What to do about it (a command or a setting).
    pub fix: String,
}

/// The layer libraries a loader loads by name.
const LAYERS: [&str; 2] = ["libze_validation_layer.so", "libze_tracing_layer.so"];

/// Prefix of the lines the loader prints with `ZE_ENABLE_LOADER_DEBUG_TRACE=1`.
pub const TRACE_PREFIX: &str = "ZE_LOADER_DEBUG_TRACE:";

/// Explains `err` (the failed `zeInit`/`zeInitDrivers` of the loader opened as `library`), or
/// `None` when nothing here explains it. `versions`: `zelLoaderGetVersions`; `maps`: the text of
/// `/proc/self/maps`; `trace`: the loader's debug-trace lines, if captured.
pub(crate) fn explain(
    library: &str,
    err: &ZeError,
    versions: &[(String, String)],
    maps: &str,
    trace: &[String],
) -> Option<Diagnosis> {
    let loader = mapped(maps, "libze_loader.so").into_iter().next().or_else(|| {
        let p = Path::new(library);
        p.is_absolute().then(|| p.to_owned())
    });
    let loader_version = versions
        .iter()
        .find(|(n, _)| n == "loader")
        .map(|(_, v)| v.clone())
        .or_else(|| loader.as_deref().and_then(file_version));
    let trace_text = failing_trace(trace);
    if err.code == ZE_RESULT_ERROR_UNSUPPORTED_VERSION {
        let loader_dir = loader.as_deref().and_then(Path::parent).map(canonical);
        let foreign: Vec<(PathBuf, Option<String>)> = LAYERS
            .iter()
            .flat_map(|l| mapped(maps, l))
            .filter(|layer| {
                let other_dir = loader_dir.as_ref().is_some_and(|d| layer.parent().map(canonical).as_ref() != Some(d));
                let other_version = matches!((file_version(layer), &loader_version), (Some(a), Some(b)) if &a != b);
                other_dir || other_version
            })
            .map(|l| {
                let v = file_version(&l);
                (l, v)
            })
            .collect();
        if !foreign.is_empty() {
            let loader_name = match (&loader, &loader_version) {
                (Some(p), Some(v)) => format!("{} ({v})", p.display()),
                (Some(p), None) => p.display().to_string(),
                (None, _) => library.to_owned(),
            };
            let layers: Vec<String> = foreign
                .iter()
                .map(|(p, v)| match v {
                    Some(v) => format!("{} ({v})", p.display()),
                    None => p.display().to_string(),
                })
                .collect();
            let dirs: Vec<String> = foreign
                .iter()
                .filter_map(|(p, _)| p.parent().map(|d| d.display().to_string()))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let fix = match loader_dir {
                Some(d) => format!(
                    "put the loader's own layers first on the library path: LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH \
                     (or remove {} from LD_LIBRARY_PATH)",
                    d.display(),
                    dirs.join(", ")
                ),
                None => format!("remove {} from LD_LIBRARY_PATH", dirs.join(", ")),
            };
            return Some(Diagnosis {
                explanation: format!(
                    "the Level Zero loader {loader_name} loaded a layer of another release that does not match it: \
                     {}; {} answered ZE_RESULT_ERROR_UNSUPPORTED_VERSION{trace_text}",
                    layers.join(", "),
                    err.call
                ),
                fix,
            });
        }
        return Some(Diagnosis {
            explanation: format!(
                "the Level Zero loader {library} or one of its layers does not support the API version asked for \
                 ({} answered ZE_RESULT_ERROR_UNSUPPORTED_VERSION){trace_text}",
                err.call
            ),
            fix: "use a loader and layers of one release (check LD_LIBRARY_PATH and ZESCOPE_LEVEL_ZERO_LOADER); \
                  run with ZE_ENABLE_LOADER_DEBUG_TRACE=1 to see what the loader loads"
                .to_owned(),
        });
    }
    None
}

/// The trace lines that report a failure, as "; the loader's trace says: ...", or "".
fn failing_trace(trace: &[String]) -> String {
    let failing: Vec<&str> = trace
        .iter()
        .map(|l| l.strip_prefix(TRACE_PREFIX).unwrap_or(l).trim())
        .filter(|l| l.contains("failed") || l.contains("Failed") || l.contains("0 Drivers Discovered"))
        .collect();
    if failing.is_empty() { String::new() } else { format!("; the loader's trace says: {}", failing.join(" | ")) }
}

/// The loader's debug-trace lines of some output (stderr of a run with
/// `ZE_ENABLE_LOADER_DEBUG_TRACE=1`), de-duplicated, in order.
pub fn trace_lines(output: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    output.lines().filter(|l| l.starts_with(TRACE_PREFIX)).filter(|l| seen.insert(*l)).map(str::to_owned).collect()
}

/// Every distinct file mapped into the process whose name starts with `prefix`.
fn mapped(maps: &str, prefix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in maps.lines().filter_map(|l| l.split_whitespace().nth(5)).map(Path::new) {
        if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)) && !out.iter().any(|o| o == p) {
            out.push(p.to_owned());
        }
    }
    out
}

/// "1.32.0" of `libze_loader.so.1.32.0`, when the file name carries a full version.
fn file_version(p: &Path) -> Option<String> {
    let name = p.file_name()?.to_string_lossy().into_owned();
    let v = name.split_once(".so.")?.1;
    (v.split('.').count() == 3 && v.split('.').all(|n| n.parse::<u32>().is_ok())).then(|| v.to_owned())
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use level_zero_sys::ZE_RESULT_ERROR_UNINITIALIZED;

    const MAPS: &str = "\
7fa2f568f000-7fa2f57ed000 r-xp 00079000 fe:00 5366399 /work/target/debug/libze_sim.so
7fa2f5a91000-7fa2f5aea000 r-xp 00005000 fe:00 10100871 /opt/old/libze_tracing_layer.so.1.8.0
7fa2f5c13000-7fa2f5c90000 r-xp 0001a000 fe:00 10012049 /opt/new/lib/libze_loader.so.1.32.0
7fa2f5c90000-7fa2f5ca0000 r--p 0009a000 fe:00 10012049 /opt/new/lib/libze_loader.so.1.32.0
";

    fn err(code: u32) -> ZeError {
        ZeError { call: "zeInitDrivers", code }
    }

    #[test]
    fn a_layer_of_another_release_is_named_with_the_fix() {
        let trace = vec![
            "ZE_LOADER_DEBUG_TRACE:Tracing Layer Library Path: libze_tracing_layer.so.1".to_owned(),
            "ZE_LOADER_DEBUG_TRACE:ze_lib Context Init() zelTracingDdiTableInit failed with \
             ZE_RESULT_ERROR_UNSUPPORTED_VERSION"
                .to_owned(),
        ];
        let d = explain("/opt/new/lib/libze_loader.so.1", &err(ZE_RESULT_ERROR_UNSUPPORTED_VERSION), &[], MAPS, &trace)
            .expect("explained");
        assert!(
            d.explanation.starts_with(
                "the Level Zero loader /opt/new/lib/libze_loader.so.1.32.0 (1.32.0) loaded a layer of another release"
            ),
            "{d:?}"
        );
        assert!(d.explanation.contains("/opt/old/libze_tracing_layer.so.1.8.0 (1.8.0)"), "{d:?}");
        assert!(d.explanation.contains("zelTracingDdiTableInit failed"), "{d:?}");
        assert!(!d.explanation.contains("Library Path"), "only failing trace lines: {d:?}");
        assert_eq!(
            d.fix,
            "put the loader's own layers first on the library path: LD_LIBRARY_PATH=/opt/new/lib:$LD_LIBRARY_PATH \
             (or remove /opt/old from LD_LIBRARY_PATH)"
        );
    }

    #[test]
    fn layers_beside_the_loader_are_not_blamed() {
        let maps = MAPS.replace("/opt/old/libze_tracing_layer.so.1.8.0", "/opt/new/lib/libze_tracing_layer.so.1.32.0");
        let d = explain("libze_loader.so.1", &err(ZE_RESULT_ERROR_UNSUPPORTED_VERSION), &[], &maps, &[]).unwrap();
        assert!(d.explanation.contains("does not support the API version"), "{d:?}");
        assert!(d.fix.contains("ZE_ENABLE_LOADER_DEBUG_TRACE=1"), "{d:?}");
        // Another failure is not explained from the layers.
        assert_eq!(explain("libze_loader.so.1", &err(ZE_RESULT_ERROR_UNINITIALIZED), &[], MAPS, &[]), None);
    }

    #[test]
    fn reported_versions_win_over_file_names() {
        let maps = MAPS.replace("/opt/old/libze_tracing_layer.so.1.8.0", "/opt/new/lib/libze_tracing_layer.so.1.8.0");
        let versions = vec![("loader".to_owned(), "1.32.0".to_owned())];
        let d = explain("x", &err(ZE_RESULT_ERROR_UNSUPPORTED_VERSION), &versions, &maps, &[]).unwrap();
        assert!(d.explanation.contains("libze_tracing_layer.so.1.8.0 (1.8.0)"), "same directory, other version: {d:?}");
    }

    #[test]
    fn trace_lines_are_picked_and_deduplicated() {
        let out = "zescope: x\nZE_LOADER_DEBUG_TRACE:a failed\nZE_LOADER_DEBUG_TRACE:a failed\nother\n";
        assert_eq!(trace_lines(out), vec!["ZE_LOADER_DEBUG_TRACE:a failed".to_owned()]);
        assert_eq!(file_version(Path::new("/x/libze_loader.so.1")), None);
        assert_eq!(file_version(Path::new("/x/libze_loader.so.1.8.0")).as_deref(), Some("1.8.0"));
    }
}
