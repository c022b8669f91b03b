//! Turning what went wrong into a `SamplerError` that says what happened and what to try.

use level_zero_sys::*;

use super::protocol::{ErrorKind, SamplerError};
use zescope_ze::{Error as ZeLayerError, ZeError};

pub(crate) fn config(message: impl Into<String>, hint: Option<&str>) -> SamplerError {
    SamplerError { kind: ErrorKind::Config, message: message.into(), hint: hint.map(str::to_owned) }
}

pub(crate) fn export(message: impl Into<String>) -> SamplerError {
    SamplerError {
        kind: ErrorKind::Export,
        message: message.into(),
        hint: Some("the driver's exported memory is unusable; try another metric group, or update the driver".into()),
    }
}

pub(crate) fn layout(message: impl Into<String>) -> SamplerError {
    SamplerError {
        kind: ErrorKind::Layout,
        message: message.into(),
        hint: Some(format!(
            "zescope reads exported memory through layout files; add or fix one in {}",
            crate::layout::where_to_add(crate::layout::user_dir().as_deref())
        )),
    }
}

/// A failed Level Zero call during `what`.
pub(crate) fn ze(what: &str, e: &ZeError) -> SamplerError {
    let kind = match e.code {
        ZE_RESULT_ERROR_DEVICE_LOST => ErrorKind::DeviceLost,
        ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS | ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE => ErrorKind::Permission,
        _ => ErrorKind::Driver,
    };
    let hint = match kind {
        ErrorKind::Permission => Some(
            "run `zescope doctor` (or Help → Diagnostics) to see which permission or setting is missing".to_owned(),
        ),
        ErrorKind::DeviceLost => Some("wait for the device to recover, then start a new run".to_owned()),
        _ => zescope_ze::hint(e.code).map(str::to_owned),
    };
    SamplerError { kind, message: format!("{what}: {} failed with {}", e.call, e.name()), hint }
}

pub(crate) fn source(e: &ZeLayerError) -> SamplerError {
    SamplerError { kind: ErrorKind::Source, message: e.to_string(), hint: None }
}
