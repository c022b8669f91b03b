//! The safe layer over Level Zero: sources, drivers, devices, metric groups, metrics, contexts,
//! with errors that name the failed call, the `ze_result_t`, and what to do.
//!
//! A source is the system's loader, or a driver the program links in and hands over as an
//! [`InProcess`] (zescope's built-in simulated device, a test's private one): this crate knows
//! no simulator (`Loader::open` takes the program's [`BuiltIn`]).
//!
//! Handles are plain values wrapping raw pointers, so they are neither `Send` nor `Sync`: they
//! stay on the thread that opened the source (the sampler, or the CLI's main thread). Nothing
//! here destroys anything on Drop; the sampler's teardown orders every release.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod context;
pub mod device;
pub mod diagnose;
pub mod error;
pub mod loader;
pub mod metric;
pub mod runtime;
pub mod streamer;
pub mod sysman;
pub mod tracer;

pub use context::{CommandList, Context};
pub use device::{Device, DeviceInfo, DeviceKind, Driver, DriverInfo};
pub use error::{Error, ZeError, check, hint};
pub use level_zero_sys::InProcess;
pub use loader::{BuiltIn, Loader, Origin, Source, Ze};
pub use metric::{
    ExportProps, ExportQueryError, GroupExport, GroupInfo, Metric, MetricGroup, MetricInfo, TRACER_BASED_UNREAD,
};
pub use runtime::{CreateGroupError, CreatedGroup};
pub use sysman::{Domain, Sysman, SysmanVia};

use level_zero_sys::ze_result_t;

/// Makes the process ready for Level Zero: sets `ZET_ENABLE_METRICS=1` unless the user set it
/// (drivers hide metric groups without it). Call first thing in `main`. Safe because it checks
/// its precondition: it changes the environment only while the process has one thread, and
/// otherwise leaves it alone and says so (`Err`); see [`set_metrics_env`].
pub fn prepare_environment() -> Result<(), String> {
    let threads = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Threads:")?.trim().parse::<u32>().ok()));
    if threads != Some(1) {
        return Err(format!(
            "ZET_ENABLE_METRICS was not set: the process already runs {} threads",
            threads.map_or("an unknown number of".to_owned(), |t| t.to_string())
        ));
    }
    // SAFETY: the process has exactly one thread (checked above), so nothing reads or writes the
    // environment concurrently.
    unsafe { set_metrics_env() };
    Ok(())
}

/// Sets `ZET_ENABLE_METRICS=1` unless the user set it, and remembers that zescope did; sets
/// `ZES_ENABLE_SYSMAN=1` (Sysman telemetry on core device handles) unless the user set it.
///
/// # Safety
/// No other thread may read or write the process environment during the call (in practice:
/// call it before any thread is spawned). `std::env::set_var` is unsound otherwise.
pub unsafe fn set_metrics_env() {
    if std::env::var_os("ZET_ENABLE_METRICS").is_none() {
        // SAFETY: the caller guarantees no concurrent access to the environment.
        unsafe { std::env::set_var("ZET_ENABLE_METRICS", "1") };
        METRICS_ENV_SET_BY_ZESCOPE.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    // Sysman on the core device handles, for loaders without `zesInit` (see `sysman`).
    if std::env::var_os("ZES_ENABLE_SYSMAN").is_none() {
        // SAFETY: as above.
        unsafe { std::env::set_var("ZES_ENABLE_SYSMAN", "1") };
    }
}

static METRICS_ENV_SET_BY_ZESCOPE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Did [`prepare_environment`] set `ZET_ENABLE_METRICS` (the user had not)? For `zescope doctor`.
pub fn metrics_env_set_by_zescope() -> bool {
    METRICS_ENV_SET_BY_ZESCOPE.load(std::sync::atomic::Ordering::Relaxed)
}

/// A fixed-size C string field as a `String` (up to the first NUL, lossy UTF-8).
pub(crate) fn c_string(b: &[core::ffi::c_char]) -> String {
    let bytes: Vec<u8> = b.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `u` as 32 lowercase hex digits.
pub fn uuid_string(u: &[u8; 16]) -> String {
    let h: Vec<String> = u.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", h[..4].concat(), h[4..6].concat(), h[6..8].concat(), h[8..10].concat(), h[10..].concat())
}

/// A PCI address as `lspci -D` and xpumanager print it: `DDDD:BB:DD.F` (lowercase hex).
pub fn pci_bdf_string(a: &level_zero_sys::ze_pci_address_ext_t) -> String {
    format!("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.device, a.function)
}

/// The Level Zero count/array protocol: ask for the count, then fill. `call(n, out)` must treat
/// a null `out` as a count query and otherwise write at most `*n` elements.
fn query_array<T: Copy>(
    name: &'static str,
    init: T,
    mut call: impl FnMut(&mut u32, *mut T) -> ze_result_t,
) -> Result<Vec<T>, ZeError> {
    let mut n = 0u32;
    check(name, call(&mut n, std::ptr::null_mut()))?;
    if n == 0 {
        return Ok(Vec::new());
    }
    // A driver reporting absurd counts must not make us allocate without bound.
    let n0 = n.min(4096);
    let mut v = vec![init; n0 as usize];
    n = n0;
    check(name, call(&mut n, v.as_mut_ptr()))?;
    v.truncate(n.min(n0) as usize);
    Ok(v)
}
