//! The Level Zero side of the chain: the loader library, its drivers and devices, whether metrics
//! are enabled; then the metric groups of the devices zescope would use (`groups`).
//!
//! Only properties are read here; the streamer check (`stream`) opens and closes a streamer, on
//! devices no run of this process holds (`zescope_sampler::claims`): running the doctor next to
//! a live sampler leaves the sampler's devices alone.

use std::path::{Path, PathBuf};

use level_zero_sys::{LOADER_LIBRARY, LoadError};

use super::Check;
use super::groups::{group_checks, layouts_check};
use zescope_sampler::layout::LayoutSet;
use zescope_ze::{BuiltIn, Device, Error, Loader, Source};

const INSTALL_DRIVER: &str = "install the Level Zero driver of your device: Intel GPUs: compute-runtime \
     (Debian 13 / Ubuntu 24.04: sudo apt install libze-intel-gpu1; older: intel-level-zero-gpu from Intel's \
     repository); Intel NPUs: linux-npu-driver (intel-level-zero-npu); then run `zescope doctor` again";

pub(super) fn checks(source: Source, built_in: BuiltIn) -> Vec<Check> {
    let library = std::env::var("ZESCOPE_LEVEL_ZERO_LOADER").unwrap_or_else(|_| LOADER_LIBRARY.to_owned());
    let real = with_trace(Loader::level_zero());
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut checks = vec![
        loader_check(&real, &library, &maps).only_for_hardware(source),
        devices_check(&real, std::env::var("ZE_ENABLE_ALT_DRIVERS").ok().as_deref()).only_for_hardware(source),
    ];
    let real_has_metrics = real.as_ref().is_ok_and(|l| l.has_metrics());
    // The loaders whose groups are checked: the real one whenever it has devices (under `auto`
    // too, so a real device without usable groups is shown, not hidden behind the fallback),
    // and the simulated one where zescope would use it.
    let real_devices =
        real.as_ref().ok().filter(|l| l.drivers.iter().any(|d| !d.devices().unwrap_or_default().is_empty()));
    let mut loaders: Vec<&Loader> = Vec::new();
    if source != Source::Sim
        && let Some(l) = real_devices
    {
        loaders.push(l);
    }
    let sim;
    if source == Source::Sim || (source == Source::Auto && !real_has_metrics) {
        sim = Loader::built_in(built_in);
        match &sim {
            Ok(l) => {
                let why = match (source, &real) {
                    (Source::Sim, _) => String::new(),
                    (_, Ok(_)) => " (auto: the Level Zero loader found no device with metric groups)".to_owned(),
                    (_, Err(_)) => " (auto: no real device was found)".to_owned(),
                };
                checks.push(Check::ok(
                    "simulated device",
                    format!(
                        "zescope will show the built-in simulated device [SIMULATED]{why}: {}",
                        device_names(l).join(", ")
                    ),
                ));
                loaders.push(l);
            }
            Err(e) => checks.push(Check::fail(
                "simulated device",
                e.to_string(),
                "fix or unset ZE_SIM_CONFIG (see crates/ze-sim/src/config.rs for the format)",
            )),
        }
    }
    let (layouts, layout_errors) = LayoutSet::installed();
    let layouts_line = layouts_check(&layouts, &layout_errors);
    let Some(first) = loaders.first() else {
        checks.push(layouts_line);
        return checks;
    };
    let runtime: Vec<(String, bool)> = first
        .drivers
        .iter()
        .enumerate()
        .map(|(i, d)| (format!("driver {i}"), d.extensions().enable_metrics.is_some()))
        .collect();
    let value = std::env::var("ZET_ENABLE_METRICS").ok();
    checks.push(metrics_env_check(value.as_deref(), zescope_ze::metrics_env_set_by_zescope(), &runtime));
    checks.push(layouts_line);
    for l in loaders {
        checks.extend(group_checks(l, &layouts));
        checks.extend(super::stream::checks(l, &layouts));
        checks.extend(super::telemetry::checks(l));
    }
    checks
}

/// A loader that failed to start without an explanation is run again in a child (`zescope list
/// --source level-zero`, when this process is zescope) with `ZE_ENABLE_LOADER_DEBUG_TRACE=1`, and
/// the failures its trace reports are added to the cause.
fn with_trace(real: Result<Loader, Error>) -> Result<Loader, Error> {
    let Err(Error::NoDriver { cause }) = real else { return real };
    let trace = loader_trace();
    let failing: Vec<&str> = trace
        .iter()
        .map(|l| l.trim_start_matches(zescope_ze::diagnose::TRACE_PREFIX).trim())
        .filter(|l| l.contains("failed") || l.contains("Failed") || l.contains("0 Drivers Discovered"))
        .collect();
    if failing.is_empty() {
        return Err(Error::NoDriver { cause });
    }
    Err(Error::NoDriver { cause: format!("{cause}; the loader's trace says: {}", failing.join(" | ")) })
}

/// The debug trace of the loader starting in a child zescope (empty when this process is not
/// zescope, e.g. a test binary, or the child cannot run).
fn loader_trace() -> Vec<String> {
    let Ok(exe) = std::env::current_exe() else { return Vec::new() };
    if !exe.file_name().is_some_and(|n| n.to_string_lossy().starts_with("zescope")) {
        return Vec::new();
    }
    let out = std::process::Command::new(exe)
        .args(["list", "--source", "level-zero"])
        .env("ZE_ENABLE_LOADER_DEBUG_TRACE", "1")
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) => {
            let text = format!("{}\n{}", String::from_utf8_lossy(&o.stderr), String::from_utf8_lossy(&o.stdout));
            zescope_ze::diagnose::trace_lines(&text)
        }
        Err(_) => Vec::new(),
    }
}

/// Each device's name, with its PCI address where the driver reports it: "ze-sim GPU
/// (0000:03:00.0)".
fn device_names(loader: &Loader) -> Vec<String> {
    let named = |d: Device| match d.info.pci_bdf {
        Some(bdf) => format!("{} ({bdf})", d.info.name),
        None => d.info.name,
    };
    loader.drivers.iter().flat_map(|d| d.devices().unwrap_or_default()).map(named).collect()
}

/// The file a loaded library was mapped from, found in `/proc/self/maps` text by the start of
/// its file name (`libze_loader.so`).
pub(crate) fn mapped_library(maps: &str, name_prefix: &str) -> Option<PathBuf> {
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(Path::new)
        .find_map(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(name_prefix)).then(|| p.to_owned()))
}

fn loader_check(real: &Result<Loader, Error>, library: &str, maps: &str) -> Check {
    const NAME: &str = "Level Zero loader";
    let custom = library != LOADER_LIBRARY;
    match real {
        Err(Error::Loader(LoadError::LibraryNotFound { reason, .. })) => Check::fail(
            NAME,
            format!("{library} could not be opened: {reason}"),
            if custom {
                format!(
                    "ZESCOPE_LEVEL_ZERO_LOADER={library} names no loadable library: point it at libze_loader.so.1, or unset it"
                )
            } else {
                "sudo apt install libze1".to_owned()
            },
        ),
        Err(Error::Loader(e @ LoadError::MissingSymbol(_))) => {
            Check::fail(NAME, e.to_string(), "install Level Zero loader 1.8 or newer: sudo apt install libze1")
        }
        Err(Error::LoaderInit { cause, explanation, fix }) => {
            Check::fail(NAME, format!("{explanation} ({cause})"), fix)
        }
        _ => {
            let stem = Path::new(library).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let stem = stem.split(".so").next().unwrap_or(&stem).to_owned();
            let file = match mapped_library(maps, &format!("{stem}.so")) {
                Some(p) => format!("{library} ({})", p.display()),
                None => library.to_owned(),
            };
            let versions = match real {
                Ok(l) => l.loader_versions(),
                Err(_) => Vec::new(),
            };
            let versions = if versions.is_empty() {
                "zelLoaderGetVersions lists no components (it does once a driver initialises)".to_owned()
            } else {
                let v: Vec<String> = versions.iter().map(|(n, v)| format!("{n} {v}")).collect();
                format!("zelLoaderGetVersions: {}", v.join(", "))
            };
            Check::ok(NAME, format!("{file}; {versions}"))
        }
    }
}

fn devices_check(real: &Result<Loader, Error>, alt_drivers: Option<&str>) -> Check {
    const NAME: &str = "Level Zero devices";
    let only_sim = "only the built-in simulated device is available";
    let loader = match real {
        Ok(l) => l,
        Err(Error::Loader(_)) => {
            return Check::fail(
                NAME,
                format!("no real device can be found without the loader; {only_sim}"),
                "install the loader first (see the line above)",
            );
        }
        Err(Error::LoaderInit { .. }) => {
            return Check::fail(
                NAME,
                format!("no real device can be found until the loader starts; {only_sim}"),
                "fix the loader first (see the line above)",
            );
        }
        Err(e) => {
            let cause = match e {
                Error::NoDriver { cause } => cause.clone(),
                other => other.to_string(),
            };
            let mut fix = INSTALL_DRIVER.to_owned();
            if let Some(alt) = alt_drivers.filter(|a| a.split(',').any(|p| !Path::new(p.trim()).exists())) {
                fix =
                    format!("ZE_ENABLE_ALT_DRIVERS={alt} names a file that does not exist: unset it or fix it\n{fix}");
            }
            return Check::fail(NAME, format!("no Level Zero driver found a device ({cause}); {only_sim}"), fix);
        }
    };
    let mut lines = Vec::new();
    let mut real_devices = 0;
    let mut sim_devices = 0;
    for (i, d) in loader.drivers.iter().enumerate() {
        let devices = d.devices().unwrap_or_default();
        let export = export_support(&d.info.extensions, &devices);
        if d.info.simulated {
            sim_devices += devices.len();
        } else {
            real_devices += devices.len();
        }
        let names: Vec<String> = devices.iter().map(describe_device).collect();
        lines.push(format!(
            "driver {i} (version {:#x}, API {}.{}{}, {export}): {}",
            d.info.version,
            d.info.api_version.0,
            d.info.api_version.1,
            if d.info.simulated { ", zescope's simulated driver" } else { "" },
            if names.is_empty() { "no devices".to_owned() } else { names.join(", ") }
        ));
        lines.push(format!("  extensions: {}", extension_list(&d.info.extensions)));
    }
    let detail = lines.join("\n");
    if real_devices > 0 {
        Check::ok(NAME, detail)
    } else if sim_devices > 0 {
        Check::warn(
            NAME,
            format!(
                "the loader found only zescope's simulated driver (ZE_ENABLE_ALT_DRIVERS), no real device\n{detail}"
            ),
            format!("unset ZE_ENABLE_ALT_DRIVERS to use the system's drivers; {INSTALL_DRIVER}"),
        )
    } else {
        Check::fail(NAME, format!("drivers loaded but no device found; {only_sim}\n{detail}"), INSTALL_DRIVER)
    }
}

/// The extension's name, as drivers list it since it reached the headers (loader 1.29).
const EXPORT_EXTENSION: &str = "ZET_experimental_metric_export_memory";

/// Whether a driver exports metric memory, told by what its groups say (the EXPORT_DMA_BUF bit
/// of the group type, or metrics of the export type), never by the extension's name alone: a
/// driver built before the name reached the headers exports without listing it. Where metrics
/// are hidden until enabled (no groups seen), the listed name is all there is to go by.
fn export_support(extensions: &[(String, u32)], devices: &[Device]) -> String {
    let listed = extensions.iter().any(|(n, _)| n == EXPORT_EXTENSION);
    let groups: Vec<zescope_ze::MetricGroup> =
        devices.iter().flat_map(|d| d.metric_groups().unwrap_or_default()).collect();
    let exporting = groups
        .iter()
        .filter(|g| {
            g.info.export == zescope_ze::GroupExport::DmaBuf
                || g.metrics().unwrap_or_default().iter().any(|m| m.info.exports_dma_buf())
        })
        .count();
    match (exporting, listed, groups.is_empty()) {
        (0, true, true) => format!("lists {EXPORT_EXTENSION} (its groups show once metrics are enabled)"),
        (0, true, false) => format!("lists {EXPORT_EXTENSION}, but no group exports memory"),
        (0, false, _) => "no group exports metric memory".to_owned(),
        (_, true, _) => "exports metric memory".to_owned(),
        (n, false, _) => format!(
            "exports metric memory ({n} groups set the EXPORT_DMA_BUF bit; the driver does not list {EXPORT_EXTENSION})"
        ),
    }
}

/// The extensions a driver lists, "name version" each; "none listed" without any.
fn extension_list(extensions: &[(String, u32)]) -> String {
    if extensions.is_empty() {
        return "none listed".to_owned();
    }
    let v: Vec<String> = extensions.iter().map(|(n, v)| format!("{n} {}.{}", v >> 16, v & 0xffff)).collect();
    v.join(", ")
}

fn describe_device(d: &Device) -> String {
    let subs = d.sub_devices().map(|s| s.len()).unwrap_or(0);
    let subs = if subs > 0 { format!(", {subs} sub-devices") } else { String::new() };
    let pci = d.info.pci_bdf.as_ref().map(|b| format!(", PCI {b}")).unwrap_or_default();
    format!("{} [{:?}{subs}{pci}]", d.info.name, d.info.kind)
}

/// `ZET_ENABLE_METRICS` as found (`value`), whether zescope set it, and which drivers in use can
/// enable metrics at run time (`zetDeviceEnableMetricsExp`).
pub(crate) fn metrics_env_check(value: Option<&str>, set_by_zescope: bool, runtime: &[(String, bool)]) -> Check {
    const NAME: &str = "metrics enabled";
    let with: Vec<&str> = runtime.iter().filter(|r| r.1).map(|r| r.0.as_str()).collect();
    let runtime_text = match (with.len(), runtime.len()) {
        (0, _) => "no driver in use can enable metrics at run time".to_owned(),
        (n, m) if n == m => "run-time enable (zetDeviceEnableMetricsExp) is supported".to_owned(),
        _ => format!("run-time enable (zetDeviceEnableMetricsExp) is supported by {}", with.join(", ")),
    };
    let all_runtime = !runtime.is_empty() && with.len() == runtime.len();
    match value {
        Some("1") => {
            let who = if set_by_zescope { "set by zescope" } else { "set by you" };
            Check::ok(NAME, format!("ZET_ENABLE_METRICS=1 ({who}); {runtime_text}"))
        }
        other => {
            let found = match other {
                Some(v) => format!("ZET_ENABLE_METRICS={v:?}: drivers hide metric groups unless it is 1"),
                None => "ZET_ENABLE_METRICS is not set: drivers hide metric groups unless it is 1".to_owned(),
            };
            let fix = if other.is_some() {
                "unset ZET_ENABLE_METRICS (zescope then sets it to 1 for itself), or: export ZET_ENABLE_METRICS=1"
            } else {
                "export ZET_ENABLE_METRICS=1 (the zescope binary does this itself; a program using the library \
                 calls zescope_ze::prepare_environment() first)"
            };
            if all_runtime {
                Check::warn(NAME, format!("{found}; zescope enables them at run time instead ({runtime_text})"), fix)
            } else {
                Check::fail(NAME, format!("{found}; {runtime_text}"), fix)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Status, sim_loader};

    const MAPS: &str = "\
5586a0a00000-5586a0a2c000 r--p 00000000 fe:01 1311 /usr/bin/zescope
7f1c2a000000-7f1c2a00e000 r--p 00000000 fe:01 2622 /usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0
7f1c2a00e000-7f1c2a050000 r-xp 0000e000 fe:01 2622 /usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0
7ffd1c1d0000-7ffd1c1f1000 rw-p 00000000 00:00 0 [stack]
7ffd1c1f1000-7ffd1c1f2000 rw-p 00000000 00:00 0
";

    #[test]
    fn finds_the_mapped_loader_file() {
        assert_eq!(
            mapped_library(MAPS, "libze_loader.so"),
            Some(PathBuf::from("/usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0"))
        );
        assert_eq!(mapped_library(MAPS, "libze_sim.so"), None);
        assert_eq!(mapped_library("", "libze_loader.so"), None);
    }

    #[test]
    fn metrics_env_values() {
        let rt = |b| vec![("driver 0".to_owned(), b)];
        let c = metrics_env_check(Some("1"), true, &rt(false));
        assert_eq!(c.status, Status::Ok);
        assert!(c.detail.contains("set by zescope"), "{c:?}");
        assert!(metrics_env_check(Some("1"), false, &rt(true)).detail.contains("set by you"));
        // a user's 0 hides groups: a failure without run-time enable, a warning with it
        let c = metrics_env_check(Some("0"), false, &rt(false));
        assert_eq!(c.status, Status::Fail);
        assert!(c.fix.as_deref().unwrap().starts_with("unset ZET_ENABLE_METRICS"), "{c:?}");
        assert_eq!(metrics_env_check(Some("0"), false, &rt(true)).status, Status::Warn);
        assert_eq!(metrics_env_check(Some("true"), false, &rt(false)).status, Status::Fail);
        assert_eq!(metrics_env_check(None, false, &rt(false)).status, Status::Fail);
        // run-time enable must be there for every driver in use to make up for it
        let mixed = vec![("driver 0".to_owned(), true), ("driver 1".to_owned(), false)];
        assert_eq!(metrics_env_check(Some("0"), false, &mixed).status, Status::Fail);
        assert_eq!(metrics_env_check(Some("0"), false, &[]).status, Status::Fail);
    }

    #[test]
    fn devices_of_a_simulated_driver_behind_the_loader_are_a_warning() {
        let l = sim_loader(|_| {});
        // from_sim marks the origin as built-in; the driver UUID marks it simulated too
        let c = devices_check(&Ok(l), None);
        assert_eq!(c.status, Status::Warn, "{c:?}");
        assert!(
            c.detail.contains("ze-sim GPU [Gpu, 1 sub-devices, PCI 0000:03:00.0]")
                && c.detail.contains("exports metric memory")
        );
        let none = sim_loader(|c| c.faults.no_devices = true);
        assert_eq!(devices_check(&Ok(none), None).status, Status::Fail);
    }

    #[test]
    fn export_support_goes_by_the_group_bit_and_the_extensions_are_listed() {
        let unlisted = sim_loader(|c| c.quirks.export_extension_unlisted = true);
        let c = devices_check(&Ok(unlisted), None);
        assert!(
            c.detail.contains(
                "groups set the EXPORT_DMA_BUF bit; the driver does not list ZET_experimental_metric_export_memory"
            ),
            "{c:?}"
        );
        assert!(c.detail.contains("extensions: ZET_experimental_metrics_runtime_enable_disable 1.0"), "{c:?}");
        assert!(!c.detail.contains("extensions: ZET_experimental_metric_export_memory"), "{c:?}");
        let bits = sim_loader(|c| c.quirks.group_type_bits_combined = true);
        let c = devices_check(&Ok(bits), None);
        assert!(c.detail.contains("exports metric memory)") && !c.detail.contains("does not list"), "{c:?}");
        assert!(c.detail.contains("extensions: ZET_experimental_metric_export_memory 1.0,"), "{c:?}");
        let none = sim_loader(|c| {
            c.quirks.no_export_extension = true;
            c.devices = ze_sim::config::Profile::NpuDriverLike.devices();
        });
        let c = devices_check(&Ok(none), None);
        assert!(c.detail.contains("no group exports metric memory"), "{c:?}");
    }

    #[test]
    fn no_driver_names_a_missing_alt_driver() {
        let err = Err(Error::NoDriver { cause: "zeInit returned ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)".into() });
        let c = devices_check(&err, Some("/nonexistent/libze_sim.so"));
        assert_eq!(c.status, Status::Fail);
        assert!(c.detail.contains("only the built-in simulated device is available"), "{c:?}");
        let fix = c.fix.unwrap();
        assert!(fix.starts_with("ZE_ENABLE_ALT_DRIVERS=/nonexistent/libze_sim.so names a file"), "{fix}");
        assert!(fix.contains("libze-intel-gpu1"), "{fix}");
        let c = loader_check(&err, LOADER_LIBRARY, MAPS);
        assert_eq!(c.status, Status::Ok);
        assert!(c.detail.contains("libze_loader.so.1 (/usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0)"), "{c:?}");
    }

    #[test]
    fn a_missing_loader_fails_with_the_apt_fix() {
        let err = Err(Error::Loader(LoadError::LibraryNotFound {
            library: LOADER_LIBRARY.into(),
            reason: "cannot open shared object file".into(),
        }));
        let c = loader_check(&err, LOADER_LIBRARY, "");
        assert_eq!((c.status, c.fix.as_deref()), (Status::Fail, Some("sudo apt install libze1")));
        let c = loader_check(&err, "/opt/l0/libze_loader.so.1", "");
        assert!(c.fix.unwrap().starts_with("ZESCOPE_LEVEL_ZERO_LOADER=/opt/l0/libze_loader.so.1"));
        assert_eq!(devices_check(&err, None).status, Status::Fail);
    }
}
