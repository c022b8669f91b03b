//! Driver extensions used at run time: enabling and disabling metrics on a device
//! (`ZET_experimental_metrics_runtime_enable_disable`) and metric groups created from chosen
//! metrics (`zetMetricGroupCreateExp` and friends). The functions come from the driver
//! (`Extensions::resolve`) and take the driver's own handles.

use super::device::Device;
use super::error::{ZeError, check};
use super::metric::{Metric, MetricGroup};

/// Why a device cannot create metric groups at run time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateGroupError {
    #[error("this driver cannot create metric groups at run time")]
    Unsupported,
    #[error("the Level Zero loader wraps handles here, so groups created at run time cannot be activated through it")]
    HandlesWrapped,
    #[error("{0}")]
    Ze(#[from] ZeError),
}

impl Device {
    /// `zetDeviceEnableMetricsExp`: `Ok(false)` when the driver has no run-time enable.
    pub fn enable_metrics(&self) -> Result<bool, ZeError> {
        let Some(enable) = self.extensions().enable_metrics else { return Ok(false) };
        // SAFETY: the driver's own zetDeviceEnableMetricsExp on its own (translated) handle of
        // this device, which came from this driver's enumeration.
        check("zetDeviceEnableMetricsExp", unsafe { enable(self.driver_handle()) })?;
        Ok(true)
    }

    /// `zetDeviceDisableMetricsExp`. Only after every group activated on the device was
    /// deactivated (and every import of its exported memory freed).
    pub fn disable_metrics(&self) -> Result<(), ZeError> {
        let Some(disable) = self.extensions().disable_metrics else { return Ok(()) };
        // SAFETY: as in `enable_metrics`.
        check("zetDeviceDisableMetricsExp", unsafe { disable(self.driver_handle()) })
    }

    /// Creates, fills and closes a metric group of `metrics` (all of this device, one domain).
    /// The caller owns it and destroys it with [`MetricGroup::destroy_created`] after
    /// deactivating it.
    pub fn create_metric_group(
        &self,
        name: &std::ffi::CStr,
        metrics: &[Metric],
    ) -> Result<MetricGroup, CreateGroupError> {
        let ext = self.extensions();
        let (Some(create), Some(add), Some(close), Some(destroy)) =
            (ext.create_group, ext.add_metric, ext.close_group, ext.destroy_group)
        else {
            return Err(CreateGroupError::Unsupported);
        };
        if self.handles_wrapped() {
            return Err(CreateGroupError::HandlesWrapped);
        }
        let mut h = std::ptr::null_mut();
        // SAFETY: the driver's zetMetricGroupCreateExp on its own device handle (not wrapped,
        // checked above); NUL-terminated strings; a valid out-pointer. 2 = time-based sampling.
        let r = unsafe { create(self.handle, name.as_ptr(), c"Metrics combined by zescope".as_ptr(), 2, &mut h) };
        check("zetMetricGroupCreateExp", r)?;
        let filled = (|| {
            for m in metrics {
                // SAFETY: a group this driver just created and a metric handle of this device.
                let r = unsafe { add(h, m.handle, std::ptr::null_mut(), std::ptr::null_mut()) };
                check("zetMetricGroupAddMetricExp", r)?;
            }
            // SAFETY: as above.
            check("zetMetricGroupCloseExp", unsafe { close(h) })?;
            // SAFETY: a handle this driver created for this device, now closed.
            unsafe { MetricGroup::new(self.ze.clone(), self.driver, self.handle, h) }
        })();
        filled.map_err(|e| {
            // SAFETY: destroying the group just created (never activated), once.
            let _ = unsafe { destroy(h) };
            CreateGroupError::Ze(e)
        })
    }
}

impl MetricGroup {
    /// `zetMetricGroupDestroyExp` of a group made by [`Device::create_metric_group`], once it is
    /// deactivated and no import of its memory is alive.
    pub fn destroy_created(&self) -> Result<(), ZeError> {
        let ext = super::device::Extensions::resolve(&self.ze, self.driver);
        let Some(destroy) = ext.destroy_group else { return Ok(()) };
        // SAFETY: a group this driver created (the caller's contract), destroyed once.
        check("zetMetricGroupDestroyExp", unsafe { destroy(self.handle) })
    }
}
