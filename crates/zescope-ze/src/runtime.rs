//! Driver extensions used at run time: enabling and disabling metrics on a device
//! (`ZET_experimental_metrics_runtime_enable_disable`) and metric groups created from chosen
//! metrics (`zetMetricGroupCreateExp` and friends).
//!
//! Each function may come from the loader (newer loaders export them) or from the driver
//! (`zeDriverGetExtensionFunctionAddress`); every call goes through [`Entry::call`], which
//! passes each source the handle it expects and falls back from a loader that answers "not
//! supported here" to the driver (the handle rule, see [`Entry`]).
//!
//! Created groups: the group handle a source returns is only usable where that source's handles
//! are. The loader's `zetMetricGroupCreateExp` returns a handle the loader takes everywhere
//! (activation, properties, destroy), so it works whether or not the loader wraps handles. The
//! driver's function returns the driver's own handle, usable through the loader only when the
//! loader does not wrap handles (and metric handles, which the loader cannot translate, are the
//! driver's own only then): with wrapped handles and no working loader export, creating groups
//! is refused ([`CreateGroupError::HandlesWrapped`]).

use level_zero_sys::*;

use super::device::{CalledThrough, Device, Entry};
use super::error::{ZeError, check};
use super::metric::{Metric, MetricGroup};

/// Why a device cannot create metric groups at run time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateGroupError {
    /// The driver has no `zetMetricGroupCreateExp`.
    #[error("this driver cannot create metric groups at run time")]
    Unsupported,
    /// Created groups would be unusable through this loader.
    #[error(
        "the Level Zero loader wraps handles here and does not create metric groups itself, so groups \
         created by the driver cannot be activated through it"
    )]
    HandlesWrapped,
    /// A creation call failed.
    #[error("{0}")]
    Ze(#[from] ZeError),
}

impl Device {
    /// Calls a device-handle entry point by the handle rule: `Ok(None)` when no source has it
    /// or every source answers UNSUPPORTED_FEATURE (the driver has no such function).
    fn call_device<F: Copy>(
        &self,
        entry: Entry<F>,
        name: &'static str,
        f: impl Fn(F, ze_device_handle_t) -> ze_result_t,
    ) -> Result<Option<CalledThrough>, ZeError> {
        let driver_handle = self.driver_handle();
        let wrapped = driver_handle != self.handle;
        match entry.call(name, self.handle, Some(driver_handle), wrapped, f) {
            None => Ok(None),
            Some(Ok(via)) => Ok(Some(via)),
            Some(Err(e)) if e.code == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE => Ok(None),
            Some(Err(e)) => Err(e),
        }
    }

    /// `zetDeviceEnableMetricsExp`: `Ok(false)` when the driver has no run-time enable.
    pub fn enable_metrics(&self) -> Result<bool, ZeError> {
        let entry = self.extensions().enable_metrics;
        // SAFETY: `Entry::call` pairs each function with the handle its source takes: the
        // loader's export with this device's loader handle, the driver's with its own handle.
        let r = self.call_device(entry, "zetDeviceEnableMetricsExp", |f, h| unsafe { f(h) })?;
        Ok(r.is_some())
    }

    /// `zetDeviceDisableMetricsExp`. Only after every group activated on the device was
    /// deactivated (and every import of its exported memory freed).
    pub fn disable_metrics(&self) -> Result<(), ZeError> {
        let entry = self.extensions().disable_metrics;
        // SAFETY: as in `enable_metrics`.
        self.call_device(entry, "zetDeviceDisableMetricsExp", |f, h| unsafe { f(h) }).map(|_| ())
    }

    /// Creates, fills and closes a metric group of `metrics` (all of this device, one domain).
    /// The caller owns it and destroys it with [`CreatedGroup::destroy`] after deactivating it.
    pub fn create_metric_group(
        &self,
        name: &std::ffi::CStr,
        metrics: &[Metric],
    ) -> Result<CreatedGroup, CreateGroupError> {
        let ext = self.extensions();
        if !(ext.create_group.is_some()
            && ext.add_metric.is_some()
            && ext.close_group.is_some()
            && ext.destroy_group.is_some())
        {
            return Err(CreateGroupError::Unsupported);
        }
        let wrapped = self.handles_wrapped();
        // The driver's function only where its group handle is usable through the loader.
        let driver_device = (!wrapped).then(|| self.driver_handle());
        let mut h: zet_metric_group_handle_t = std::ptr::null_mut();
        let out: *mut zet_metric_group_handle_t = &mut h;
        let description = c"Metrics combined by zescope";
        let create = |f: pfn::zetMetricGroupCreateExp, d| {
            // SAFETY: each source gets the device handle it takes (Entry::call); NUL-terminated
            // strings; `out` points at `h`, alive for the call. 2 = time-based sampling.
            unsafe { f(d, name.as_ptr(), description.as_ptr(), 2, out) }
        };
        let created = ext.create_group.call("zetMetricGroupCreateExp", self.handle, driver_device, wrapped, create);
        let via = match created {
            None if wrapped => return Err(CreateGroupError::HandlesWrapped),
            None => return Err(CreateGroupError::Unsupported),
            Some(Err(e)) if e.code == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE => return Err(CreateGroupError::Unsupported),
            Some(Err(e)) if wrapped && e.code == ZE_RESULT_ERROR_UNINITIALIZED => {
                return Err(CreateGroupError::HandlesWrapped);
            }
            Some(r) => r?,
        };
        let group = Created { via, handle: h };
        let filled = (|| {
            for m in metrics {
                group.call(ext.add_metric, "zetMetricGroupAddMetricExp", |f, g| {
                    // SAFETY: a group `via` just created and a metric handle of this device (the
                    // driver's own when `via` is the driver: handles are not wrapped then).
                    unsafe { f(g, m.handle, std::ptr::null_mut(), std::ptr::null_mut()) }
                })?;
            }
            // SAFETY: as above.
            group.call(ext.close_group, "zetMetricGroupCloseExp", |f, g| unsafe { f(g) })?;
            // SAFETY: a handle created for this device, now closed, usable through the loader
            // (the loader's own, or the driver's while handles are not wrapped).
            unsafe { MetricGroup::new(self.ze.clone(), self.driver, self.handle, h) }
                .map(|group| CreatedGroup { group })
        })();
        filled.map_err(|e| {
            // SAFETY: destroying the group just created (never activated), once.
            let _ = group.call(ext.destroy_group, "zetMetricGroupDestroyExp", |f, g| unsafe { f(g) });
            CreateGroupError::Ze(e)
        })
    }
}

/// A group just created, and which source created it: its later calls go to the same source.
struct Created {
    via: CalledThrough,
    handle: zet_metric_group_handle_t,
}

impl Created {
    fn call<F: Copy>(
        &self,
        entry: Entry<F>,
        name: &'static str,
        f: impl Fn(F, zet_metric_group_handle_t) -> ze_result_t,
    ) -> Result<(), ZeError> {
        let source = match self.via {
            CalledThrough::Loader => entry.loader,
            CalledThrough::Driver => entry.driver,
        };
        let Some(func) = source else {
            return Err(ZeError { call: name, code: ZE_RESULT_ERROR_UNSUPPORTED_FEATURE });
        };
        check(name, f(func, self.handle))
    }
}

/// A metric group zescope created at run time. Not `Clone`: destroying consumes it, so it is
/// destroyed at most once; [`CreatedGroup::group`] lends the plain group for activation and
/// queries (a clone of that cannot destroy anything).
pub struct CreatedGroup {
    group: MetricGroup,
}

static_assertions::assert_not_impl_any!(CreatedGroup: Send, Sync, Clone);

impl CreatedGroup {
    /// The group, for activation, properties and export queries.
    pub fn group(&self) -> &MetricGroup {
        &self.group
    }

    /// `zetMetricGroupDestroyExp`, once it is deactivated and no import of its memory is alive.
    /// Consumes the group whether or not the driver succeeded.
    pub fn destroy(self) -> Result<(), ZeError> {
        let g = &self.group;
        let destroy = super::device::Extensions::resolve(&g.ze, g.driver).destroy_group;
        // SAFETY: a handle for this device (the same device handle the driver translates).
        let device = unsafe { g.ze.translate(ZEL_HANDLE_DEVICE, g.device.cast()) };
        let wrapped = device != g.device.cast();
        // A group the driver created exists only while handles are not wrapped, and then its
        // handle is the driver's own; a wrapped handle is the loader's, which the loader takes.
        let driver_handle = (!wrapped).then_some(g.handle);
        // SAFETY: a group created by `create_metric_group` (the caller's contract), destroyed once,
        // by the source whose handle it is (Entry::call; a loader export answers "not supported"
        // for a group it did not create through a driver table without the function).
        let r = destroy.call("zetMetricGroupDestroyExp", g.handle, driver_handle, wrapped, |f, g| unsafe { f(g) });
        match r {
            None => Ok(()),
            Some(r) => r.map(|_| ()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    type F = pfn::zetDeviceEnableMetricsExp;

    thread_local! {
        /// (source, handle) of every call, and what the loader's export answers.
        static CALLS: RefCell<Vec<(&'static str, usize)>> = const { RefCell::new(Vec::new()) };
        static LOADER_ANSWER: RefCell<ze_result_t> = const { RefCell::new(ZE_RESULT_SUCCESS) };
    }

    unsafe extern "C" fn loader_export(h: zet_device_handle_t) -> ze_result_t {
        CALLS.with(|c| c.borrow_mut().push(("loader", h as usize)));
        LOADER_ANSWER.with(|a| *a.borrow())
    }

    unsafe extern "C" fn driver_function(h: zet_device_handle_t) -> ze_result_t {
        CALLS.with(|c| c.borrow_mut().push(("driver", h as usize)));
        ZE_RESULT_SUCCESS
    }

    /// What an entry call answered, and the (source, handle) of every function it called.
    type Outcome = (Option<Result<CalledThrough, ZeError>>, Vec<(&'static str, usize)>);

    const APP: usize = 0x1000;
    const DRIVER: usize = 0x2000;

    /// Calls an entry with the given sources, the loader answering `answer`; returns the result
    /// and the calls made.
    fn call(loader: bool, driver: bool, driver_usable: bool, wrapped: bool, answer: ze_result_t) -> Outcome {
        CALLS.with(|c| c.borrow_mut().clear());
        LOADER_ANSWER.with(|a| *a.borrow_mut() = answer);
        let entry: Entry<F> =
            Entry { loader: loader.then_some(loader_export as F), driver: driver.then_some(driver_function as F) };
        let driver_handle = driver_usable.then_some(DRIVER as zet_device_handle_t);
        // SAFETY: the test functions above take any handle value.
        let r = entry.call(
            "zetDeviceEnableMetricsExp",
            APP as zet_device_handle_t,
            driver_handle,
            wrapped,
            |f, h| unsafe { f(h) },
        );
        (r, CALLS.with(|c| c.borrow().clone()))
    }

    #[test]
    fn the_loaders_export_gets_the_application_handle_and_its_answer_stands() {
        let (r, calls) = call(true, true, true, true, ZE_RESULT_SUCCESS);
        assert_eq!(r, Some(Ok(CalledThrough::Loader)));
        assert_eq!(calls, vec![("loader", APP)], "never a driver handle to the loader, and no second call");
        // A real error from the loader's export is the answer: no fallback.
        let (r, calls) = call(true, true, true, true, ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        assert_eq!(r.unwrap().unwrap_err().code, ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        assert_eq!(calls.len(), 1);
    }

    #[test]
    fn not_supported_here_falls_back_to_the_driver_with_the_driver_handle() {
        let (r, calls) = call(true, true, true, false, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        assert_eq!(r, Some(Ok(CalledThrough::Driver)));
        assert_eq!(calls, vec![("loader", APP), ("driver", DRIVER)]);
        // UNINITIALIZED means "empty slot" only while the loader wraps handles.
        let (r, calls) = call(true, true, true, true, ZE_RESULT_ERROR_UNINITIALIZED);
        assert_eq!(r, Some(Ok(CalledThrough::Driver)));
        assert_eq!(calls, vec![("loader", APP), ("driver", DRIVER)]);
        let (r, calls) = call(true, true, true, false, ZE_RESULT_ERROR_UNINITIALIZED);
        assert_eq!(r.unwrap().unwrap_err().code, ZE_RESULT_ERROR_UNINITIALIZED);
        assert_eq!(calls, vec![("loader", APP)]);
    }

    #[test]
    fn without_a_loader_export_the_driver_gets_its_own_handle() {
        let (r, calls) = call(false, true, true, true, ZE_RESULT_SUCCESS);
        assert_eq!(r, Some(Ok(CalledThrough::Driver)));
        assert_eq!(calls, vec![("driver", DRIVER)]);
        // Nothing to call at all.
        assert_eq!(call(false, false, true, true, ZE_RESULT_SUCCESS).0, None);
    }

    #[test]
    fn a_driver_function_that_may_not_be_used_leaves_the_loaders_answer() {
        let (r, calls) = call(true, true, false, true, ZE_RESULT_ERROR_UNINITIALIZED);
        assert_eq!(r.unwrap().unwrap_err().code, ZE_RESULT_ERROR_UNINITIALIZED);
        assert_eq!(calls, vec![("loader", APP)]);
        assert_eq!(call(false, true, false, true, ZE_RESULT_SUCCESS), (None, vec![]));
    }
}
