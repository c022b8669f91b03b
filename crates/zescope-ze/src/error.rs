//! Errors of the Level Zero layer: which call failed, the `ze_result_t` by name, and what the
//! user can do about it.

use level_zero_sys::*;

/// A Level Zero call returned an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZeError {
    /// The Level Zero function that failed.
    pub call: &'static str,
    /// What it returned.
    pub code: ze_result_t,
}

impl ZeError {
    /// The `ZE_RESULT_*` name of `code`.
    pub fn name(&self) -> &'static str {
        result_name(self.code)
    }
}

impl std::fmt::Display for ZeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed with {} ({:#x})", self.call, self.name(), self.code)?;
        if let Some(hint) = hint(self.code) {
            write!(f, ": {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ZeError {}

impl ZeError {
    /// "call returned NAME (0x...)", without advice: for messages that give their own.
    pub(crate) fn terse(&self) -> String {
        format!("{} returned {} ({:#x})", self.call, self.name(), self.code)
    }
}

/// `Ok(())` for ZE_RESULT_SUCCESS, else the error naming `call`.
pub fn check(call: &'static str, code: ze_result_t) -> Result<(), ZeError> {
    if code == ZE_RESULT_SUCCESS { Ok(()) } else { Err(ZeError { call, code }) }
}

/// The enumerator name of a result code.
pub(crate) fn result_name(code: ze_result_t) -> &'static str {
    match code {
        ZE_RESULT_SUCCESS => "ZE_RESULT_SUCCESS",
        ZE_RESULT_NOT_READY => "ZE_RESULT_NOT_READY",
        ZE_RESULT_ERROR_DEVICE_LOST => "ZE_RESULT_ERROR_DEVICE_LOST",
        ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY => "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
        ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY => "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        ZE_RESULT_ERROR_MODULE_BUILD_FAILURE => "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
        ZE_RESULT_ERROR_MODULE_LINK_FAILURE => "ZE_RESULT_ERROR_MODULE_LINK_FAILURE",
        ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET => "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET",
        ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE => "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE",
        ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS => "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS",
        ZE_RESULT_ERROR_NOT_AVAILABLE => "ZE_RESULT_ERROR_NOT_AVAILABLE",
        ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE => "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
        ZE_RESULT_WARNING_DROPPED_DATA => "ZE_RESULT_WARNING_DROPPED_DATA",
        ZE_RESULT_ERROR_UNINITIALIZED => "ZE_RESULT_ERROR_UNINITIALIZED",
        ZE_RESULT_ERROR_UNSUPPORTED_VERSION => "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
        ZE_RESULT_ERROR_UNSUPPORTED_FEATURE => "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
        ZE_RESULT_ERROR_INVALID_ARGUMENT => "ZE_RESULT_ERROR_INVALID_ARGUMENT",
        ZE_RESULT_ERROR_INVALID_NULL_HANDLE => "ZE_RESULT_ERROR_INVALID_NULL_HANDLE",
        ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE => "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE",
        ZE_RESULT_ERROR_INVALID_NULL_POINTER => "ZE_RESULT_ERROR_INVALID_NULL_POINTER",
        ZE_RESULT_ERROR_INVALID_SIZE => "ZE_RESULT_ERROR_INVALID_SIZE",
        ZE_RESULT_ERROR_UNSUPPORTED_SIZE => "ZE_RESULT_ERROR_UNSUPPORTED_SIZE",
        ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT => "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT",
        ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT => "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT",
        ZE_RESULT_ERROR_INVALID_ENUMERATION => "ZE_RESULT_ERROR_INVALID_ENUMERATION",
        ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION => "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION",
        ZE_RESULT_ERROR_INVALID_FUNCTION_NAME => "ZE_RESULT_ERROR_INVALID_FUNCTION_NAME",
        ZE_RESULT_ERROR_OVERLAPPING_REGIONS => "ZE_RESULT_ERROR_OVERLAPPING_REGIONS",
        ZE_RESULT_WARNING_ACTION_REQUIRED => "ZE_RESULT_WARNING_ACTION_REQUIRED",
        ZE_RESULT_ERROR_UNKNOWN => "ZE_RESULT_ERROR_UNKNOWN",
        _ => "an unknown ze_result_t",
    }
}

/// What the user can do about a result, where there is something to do.
pub fn hint(code: ze_result_t) -> Option<&'static str> {
    Some(match code {
        ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE => {
            "something the driver needs is missing: metrics must be enabled (ZET_ENABLE_METRICS=1, which \
             zescope sets unless you did), and the GPU driver stack must be complete; run `zescope doctor`"
        }
        ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS => {
            "you may not read hardware metrics: join the `render` group for /dev/dri/renderD*, set \
             /proc/sys/dev/i915/perf_stream_paranoid or /proc/sys/dev/xe/observation_paranoid to 0, or grant \
             CAP_PERFMON; `zescope doctor` checks each"
        }
        ZE_RESULT_ERROR_UNINITIALIZED => {
            "the driver is not initialised or metrics are disabled on this device: start zescope with \
             ZET_ENABLE_METRICS=1 (its default) or use a driver with run-time metrics enable"
        }
        ZE_RESULT_ERROR_DEVICE_LOST => {
            "the device was lost (reset, hang or removal): wait for it to recover, then start a new run"
        }
        ZE_RESULT_ERROR_NOT_AVAILABLE => "the resource is busy: another process may be sampling this metric domain",
        ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY | ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY => {
            "memory ran out: close other GPU work or sample fewer groups"
        }
        ZE_RESULT_ERROR_UNSUPPORTED_FEATURE | ZE_RESULT_ERROR_UNSUPPORTED_VERSION => {
            "the driver does not support this; a newer driver may"
        }
        ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE => "the driver considers the object still in use",
        ZE_RESULT_NOT_READY => {
            "the driver is not ready for this yet; for a metric streamer, the metric group is not activated on \
             this device in this context"
        }
        _ => return None,
    })
}

/// Anything that can go wrong opening a source or talking to it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Loading the loader library failed.
    #[error("{0}")]
    Loader(#[from] LoadError),
    /// The loader found no driver that initialised.
    #[error(
        "no Level Zero driver was found ({cause}). Check that a Level Zero GPU or NPU driver is installed \
         (Intel GPUs: libze-intel-gpu1, or intel-level-zero-gpu from Intel's repository; Intel NPUs: \
         intel-level-zero-npu), that ZE_ENABLE_ALT_DRIVERS, if set, names an existing absolute path, \
         that libze1 is installed, and that you can open /dev/dri/renderD* or /dev/accel/accel* (the \
         `render` group); \
         `zescope doctor` checks these"
    )]
    NoDriver {
        /// What the loader answered.
        cause: String,
    },
    /// The loader failed to start for a reason its own state explains (`ze::diagnose`), e.g.
    /// layers of another release on the library path.
    #[error("the Level Zero loader did not start ({cause}): {explanation}. Fix: {fix}")]
    LoaderInit {
        /// What the loader answered.
        cause: String,
        /// Why, from the loader's state.
        explanation: String,
        /// What to do about it.
        fix: String,
    },
    /// The simulated driver rejected its configuration (the text says why).
    #[error("the simulated driver's configuration is unusable: {0}")]
    SimConfig(String),
    /// Any other failed call.
    #[error("{0}")]
    Ze(#[from] ZeError),
}

impl Error {
    /// A short reason, for "fell back to the simulated device because ...".
    pub(crate) fn short(&self) -> String {
        match self {
            Error::NoDriver { cause } => format!("no Level Zero driver was found: {cause}"),
            other => other.to_string(),
        }
    }
}
