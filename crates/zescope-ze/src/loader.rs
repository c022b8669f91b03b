//! Choosing and opening a source of metrics: the system's Level Zero loader, or a driver the
//! program links in and hands over as an [`InProcess`] (zescope's built-in simulated device), or
//! (`auto`) the loader when it yields a device with metrics, else the in-process driver.
//!
//! This crate does not know the simulated driver: the program that links one passes a
//! [`BuiltIn`] (a function that starts it) wherever `sim` or `auto` may need it.

use std::any::Any;
use std::sync::Arc;

use level_zero_sys::*;

use super::device::Driver;
use super::error::{Error, ZeError, check};
use super::query_array;

/// Where metrics come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Source {
    /// The real Level Zero loader if it yields a device with metric groups, else the simulated device.
    #[default]
    Auto,
    /// Only the system's Level Zero loader (libze_loader.so.1).
    LevelZero,
    /// Only the built-in simulated device.
    Sim,
}

/// Starts the driver a program links in (zescope's built-in simulated device), on the thread
/// that calls it; the error says why it cannot start (an unusable configuration).
pub type BuiltIn = fn() -> Result<InProcess, String>;

/// The entry points in use, shared by every handle wrapper.
#[derive(Clone)]
pub struct Ze {
    /// The loaded entry points; an absent optional one is `None`.
    pub api: Arc<Api>,
    /// What keeps an in-process driver's entry points and handles valid (`None` for a loaded
    /// library, which `api` itself keeps loaded): held by every handle, as the table is.
    _keep_alive: Option<Arc<dyn Any + Send + Sync>>,
}

impl Ze {
    /// Wraps a loaded API table.
    pub(crate) fn new(api: Api) -> Ze {
        Ze { api: Arc::new(api), _keep_alive: None }
    }

    /// The driver's own handle behind a loader handle (identity when the loader does not wrap
    /// handles, or without a loader). Needed before calling a driver's extension function.
    ///
    /// # Safety
    /// `h` is a handle of kind `kind` obtained from this loader (the loader dereferences it).
    pub(super) unsafe fn translate(
        &self,
        kind: zel_handle_type_t,
        h: *mut core::ffi::c_void,
    ) -> *mut core::ffi::c_void {
        let Some(translate) = self.api.zelLoaderTranslateHandle else {
            return h;
        };
        let mut out = std::ptr::null_mut();
        // SAFETY: `translate` is the loader's zelLoaderTranslateHandle; `out` is a valid out-pointer.
        let r = unsafe { translate(kind, h, &mut out) };
        if r == ZE_RESULT_SUCCESS && !out.is_null() { out } else { h }
    }
}

/// Which implementation a `Loader` talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The system's Level Zero loader.
    LevelZero,
    /// The simulated driver built into zescope: an [`InProcess`] driver the program handed over.
    BuiltInSim,
}

/// An opened source: its entry points and drivers.
pub struct Loader {
    /// The entry points every handle of this source uses.
    pub ze: Ze,
    /// Which library the source is.
    pub origin: Origin,
    /// The drivers that initialised, in the loader's order.
    pub drivers: Vec<Driver>,
    /// Why `auto` did not use the real loader, when it fell back to the simulated device.
    pub fallback_reason: Option<String>,
}

impl Loader {
    /// Opens `source`, starting `built_in` for `sim` and for `auto`'s fallback. Call
    /// [`super::prepare_environment`] first (before any thread starts).
    pub fn open(source: Source, built_in: BuiltIn) -> Result<Loader, Error> {
        match source {
            Source::LevelZero => Self::level_zero(),
            Source::Sim => Self::built_in(built_in),
            Source::Auto => match Self::level_zero() {
                Ok(l) if l.has_metrics() => Ok(l),
                Ok(_) => Self::built_in(built_in)
                    .map(|l| l.with_fallback("the Level Zero loader found no device with metric groups")),
                Err(e) => Self::built_in(built_in).map(|l| l.with_fallback(&e.short())),
            },
        }
    }

    fn with_fallback(mut self, reason: &str) -> Loader {
        self.fallback_reason = Some(reason.to_owned());
        self
    }

    /// The system's loader: `libze_loader.so.1` (or the file `ZESCOPE_LEVEL_ZERO_LOADER` names),
    /// initialised for GPU and NPU drivers (`zeInitDrivers` where the loader has it, else
    /// `zeInit`), its drivers. A loader that fails to start is explained where its own state
    /// can say why (see [`super::diagnose`]).
    pub fn level_zero() -> Result<Loader, Error> {
        let library = std::env::var("ZESCOPE_LEVEL_ZERO_LOADER").unwrap_or_else(|_| LOADER_LIBRARY.to_owned());
        // SAFETY: the system's Level Zero loader, or the file the user named as one with
        // ZESCOPE_LEVEL_ZERO_LOADER (documented as such); the table is kept in `Ze` (an Arc) by
        // every handle, so the library outlives everything obtained through it.
        let api = unsafe { Api::load_from(&library) }?;
        let ze = Ze::new(api);
        let handles = match init_drivers(&ze) {
            Ok(h) => h,
            Err(e) => {
                let versions = component_versions(&ze.api);
                let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
                return Err(match super::diagnose::explain(&library, &e, &versions, &maps, &[]) {
                    Some(d) => Error::LoaderInit { cause: e.terse(), explanation: d.explanation, fix: d.fix },
                    None => Error::NoDriver { cause: e.terse() },
                });
            }
        };
        if handles.is_empty() {
            return Err(Error::NoDriver { cause: "the loader reported 0 GPU or NPU drivers".into() });
        }
        // SAFETY: handles just returned by zeInitDrivers/zeDriverGet of this loader.
        let drivers =
            handles.into_iter().map(|h| unsafe { Driver::new(ze.clone(), h) }).collect::<Result<Vec<_>, _>>()?;
        Ok(Loader { ze, origin: Origin::LevelZero, drivers, fallback_reason: None })
    }

    /// The driver the program links in, started by `built_in` (zescope's simulated device,
    /// configured by `ZE_SIM_CONFIG`); its error is the configuration's.
    pub fn built_in(built_in: BuiltIn) -> Result<Loader, Error> {
        Self::in_process(built_in().map_err(Error::SimConfig)?)
    }

    /// A driver linked into the program (zescope's simulated device, or a test's private
    /// simulated driver): its drivers, through its table or by its own start.
    pub fn in_process(driver: InProcess) -> Result<Loader, Error> {
        let (api, keep_alive, start) = driver.into_parts();
        let ze = Ze { api: Arc::new(api), _keep_alive: Some(keep_alive) };
        let handles = match start {
            Drivers::ThroughApi => {
                let handles = init_drivers(&ze).map_err(|e| Error::NoDriver { cause: e.terse() })?;
                if handles.is_empty() {
                    return Err(Error::NoDriver { cause: "zeDriverGet reported 0 drivers".into() });
                }
                handles
            }
            Drivers::Own(start) => {
                start().map_err(|f| Error::NoDriver { cause: ZeError { call: f.call, code: f.result }.terse() })?
            }
        };
        // SAFETY: handles of this driver, just returned by its zeDriverGet (the `InProcess`
        // promises its start returns its own driver handles).
        let drivers =
            handles.into_iter().map(|h| unsafe { Driver::new(ze.clone(), h) }).collect::<Result<Vec<_>, _>>()?;
        Ok(Loader { ze, origin: Origin::BuiltInSim, drivers, fallback_reason: None })
    }

    /// Does any device (or sub-device) of any driver report metric groups?
    pub fn has_metrics(&self) -> bool {
        self.drivers.iter().any(|d| {
            d.devices().unwrap_or_default().iter().any(|dev| {
                !dev.metric_groups().unwrap_or_default().is_empty()
                    || dev
                        .sub_devices()
                        .unwrap_or_default()
                        .iter()
                        .any(|s| !s.metric_groups().unwrap_or_default().is_empty())
            })
        })
    }

    /// Loader component versions (`zelLoaderGetVersions`), when the loader has it.
    pub fn loader_versions(&self) -> Vec<(String, String)> {
        component_versions(&self.ze.api)
    }
}

/// The GPU and NPU drivers: those `zeInitDrivers` (Level Zero 1.10, loaders from 1.18) reports
/// where the loader exports it, then those `zeInit(0)` + `zeDriverGet` report that it did not.
///
/// Both are asked because a loader's `zeInitDrivers` only reaches drivers that fill its slot in
/// their global table (API 1.10 and newer): the upstream loader (1.32) skips an older driver
/// there, and reports it through `zeDriverGet` alone — with two drivers, one of them vanished.
/// The loader allows both calls in one process (its own tests make them in either order); the
/// drivers of both answers are merged by identity ([`same_driver`]: the handle, or the driver's
/// own handle behind a wrapped one), never by UUID, name or PCI address, so two drivers are
/// never taken for one. Where only one of the two ways answers, its drivers are the list; when
/// both fail, `zeInitDrivers`' error is returned (`zeInit`'s where there is no `zeInitDrivers`).
fn init_drivers(ze: &Ze) -> Result<Vec<ze_driver_handle_t>, ZeError> {
    let mut found: Vec<ze_driver_handle_t> = Vec::new();
    let mut first_error = None;
    if let Some(init_drivers) = ze.api.zeInitDrivers {
        let mut desc = ze_init_driver_type_desc_t {
            flags: ZE_INIT_DRIVER_TYPE_FLAG_GPU | ZE_INIT_DRIVER_TYPE_FLAG_NPU,
            ..Default::default()
        };
        match query_array("zeInitDrivers", std::ptr::null_mut(), |n, out| {
            // SAFETY: `out` is null or holds `*n` elements (query_array's contract); `desc` is a
            // valid descriptor with a null chain, alive for the call.
            unsafe { init_drivers(n, out, &mut desc) }
        }) {
            Ok(h) => found = h,
            Err(e) => first_error = Some(e),
        }
    }
    // SAFETY: zeInit takes flags only; 0 = all driver types.
    let legacy = check("zeInit", unsafe { (ze.api.zeInit)(0) }).and_then(|()| {
        query_array("zeDriverGet", std::ptr::null_mut(), |n, out| {
            // SAFETY: see query_array.
            unsafe { (ze.api.zeDriverGet)(n, out) }
        })
    });
    match legacy {
        Ok(more) => {
            for h in more {
                if !found.iter().any(|&f| same_driver(ze, f, h)) {
                    found.push(h);
                }
            }
            Ok(found)
        }
        Err(_) if !found.is_empty() => Ok(found),
        Err(e) => Err(first_error.unwrap_or(e)),
    }
}

/// Are `a` and `b` (driver handles of this loader) the same driver? The same handle, or the
/// same driver handle behind them where the loader wraps handles (`zelLoaderTranslateHandle`).
fn same_driver(ze: &Ze, a: ze_driver_handle_t, b: ze_driver_handle_t) -> bool {
    if a == b {
        return true;
    }
    // SAFETY: both are driver handles this loader returned.
    let (ta, tb) = unsafe { (ze.translate(ZEL_HANDLE_DRIVER, a.cast()), ze.translate(ZEL_HANDLE_DRIVER, b.cast())) };
    ta == tb
}

/// `zelLoaderGetVersions` as (component, "major.minor.patch"); empty without it.
fn component_versions(api: &Api) -> Vec<(String, String)> {
    let Some(get) = api.zelLoaderGetVersions else {
        return Vec::new();
    };
    let mut n = 0usize;
    // SAFETY: count query.
    if unsafe { get(&mut n, std::ptr::null_mut()) } != ZE_RESULT_SUCCESS || n > 64 {
        return Vec::new();
    }
    let mut v = vec![zel_component_version_t::default(); n];
    // SAFETY: v holds n elements.
    if unsafe { get(&mut n, v.as_mut_ptr()) } != ZE_RESULT_SUCCESS {
        return Vec::new();
    }
    v.iter()
        .take(n)
        .map(|c| {
            let l = c.component_lib_version;
            (super::c_string(&c.component_name), format!("{}.{}.{}", l.major, l.minor, l.patch))
        })
        .collect()
}
