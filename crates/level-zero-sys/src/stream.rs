//! Types of the time-based metric streamer and of the events it signals (Level Zero 1.4 headers):
//! `zet_metric_streamer_desc_t`, `ze_event_pool_desc_t`, `ze_event_desc_t`, the typed values
//! Calculate fills, and their flags and enumerations.
//!
//! As in [`crate::types`], every item mirrors the C declaration of the same name one to one
//! (`tests/layout/` compares sizes, offsets and values with the headers); fields keep the
//! headers' names and the specification's meaning, so they are not documented again.
#![allow(missing_docs)]

use core::ffi::c_void;

use crate::types::*;

crate::types::handles! {
    ze_event_pool_handle_t => _ze_event_pool_handle_t,
    zet_metric_streamer_handle_t => _zet_metric_streamer_handle_t,
}

pub type ze_event_pool_flags_t = u32;
pub type ze_event_scope_flags_t = u32;
pub type zet_metric_group_calculation_type_t = u32;

pub const ZE_STRUCTURE_TYPE_EVENT_POOL_DESC: ze_structure_type_t = 0x10;
pub const ZE_STRUCTURE_TYPE_EVENT_DESC: ze_structure_type_t = 0x11;
pub const ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC: zet_structure_type_t = 0x3;

pub const ZE_EVENT_POOL_FLAG_HOST_VISIBLE: ze_event_pool_flags_t = 1 << 0;
pub const ZE_EVENT_POOL_FLAG_IPC: ze_event_pool_flags_t = 1 << 1;
pub const ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP: ze_event_pool_flags_t = 1 << 2;
pub const ZE_EVENT_SCOPE_FLAG_SUBDEVICE: ze_event_scope_flags_t = 1 << 0;
pub const ZE_EVENT_SCOPE_FLAG_DEVICE: ze_event_scope_flags_t = 1 << 1;
pub const ZE_EVENT_SCOPE_FLAG_HOST: ze_event_scope_flags_t = 1 << 2;
pub const ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES: zet_metric_group_calculation_type_t = 0;
pub const ZET_METRIC_GROUP_CALCULATION_TYPE_MAX_METRIC_VALUES: zet_metric_group_calculation_type_t = 1;

/// Into `zeEventPoolCreate`: pool flags (a streamer's notification event needs
/// [`ZE_EVENT_POOL_FLAG_HOST_VISIBLE`]) and the number of events.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_event_pool_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_event_pool_flags_t,
    pub count: u32,
}

/// `ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC` (`ZE_experimental_event_pool_counter_based`).
pub const ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC: ze_structure_type_t = 0x0002_0014;
pub type ze_event_pool_counter_based_exp_flags_t = u32;
pub const ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_IMMEDIATE: ze_event_pool_counter_based_exp_flags_t = 1 << 0;
pub const ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_NON_IMMEDIATE: ze_event_pool_counter_based_exp_flags_t = 1 << 1;

/// In the `pNext` chain of a [`ze_event_pool_desc_t`]: the pool's events are counter-based.
/// zescope never creates one (a streamer refuses such an event since spec 1.21); ze-sim reads it
/// to tell such pools apart.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_event_pool_counter_based_exp_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_event_pool_counter_based_exp_flags_t,
}

/// Into `zeEventCreate`: the event's index in its pool and its signal/wait scopes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_event_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub index: u32,
    pub signal: ze_event_scope_flags_t,
    pub wait: ze_event_scope_flags_t,
}

/// Into and out of `zetMetricStreamerOpen`: both fields are in/out — the driver writes back the
/// report count per notification and the sampling period (ns) it really uses.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zet_metric_streamer_desc_t {
    pub stype: zet_structure_type_t,
    pub pNext: *const c_void,
    pub notifyEveryNReports: u32,
    pub samplingPeriod: u32,
}

/// `zet_value_t`: one calculated value; which member is valid says [`zet_typed_value_t::type`].
#[repr(C)]
#[derive(Clone, Copy)]
pub union zet_value_t {
    pub ui32: u32,
    pub ui64: u64,
    pub fp32: f32,
    pub fp64: f64,
    pub b8: ze_bool_t,
}

impl core::fmt::Debug for zet_value_t {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // SAFETY: every member is plain data and `ui64` covers the union's 8 bytes (a value
        // written through a narrower member leaves the rest as it was, never uninitialised: the
        // `Default` below zeroes them).
        write!(f, "zet_value_t({:#x})", unsafe { self.ui64 })
    }
}

impl Default for zet_value_t {
    fn default() -> Self {
        zet_value_t { ui64: 0 }
    }
}

/// Out of Calculate: one metric value and its type (a `ZET_VALUE_TYPE_*`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct zet_typed_value_t {
    pub r#type: zet_value_type_t,
    pub value: zet_value_t,
}

impl zet_typed_value_t {
    /// The value as `f64`, whatever its type (a boolean is 0 or 1); `None` for an unknown type.
    #[inline]
    pub fn as_f64(&self) -> Option<f64> {
        // SAFETY: `type` says which member the driver wrote; every member is plain data.
        unsafe {
            match self.r#type {
                ZET_VALUE_TYPE_UINT32 => Some(self.value.ui32 as f64),
                ZET_VALUE_TYPE_UINT64 => Some(self.value.ui64 as f64),
                ZET_VALUE_TYPE_FLOAT32 => Some(self.value.fp32 as f64),
                ZET_VALUE_TYPE_FLOAT64 => Some(self.value.fp64),
                ZET_VALUE_TYPE_BOOL8 => Some(if self.value.b8 != 0 { 1.0 } else { 0.0 }),
                _ => None,
            }
        }
    }

    /// The value as an exact `u64` for integer types (a timestamp in ns does not fit an `f64`'s
    /// 53 bits after 104 days); a float is truncated when it is finite and not negative.
    #[inline]
    pub fn as_u64(&self) -> Option<u64> {
        // SAFETY: `type` says which member the driver wrote; every member is plain data.
        unsafe {
            match self.r#type {
                ZET_VALUE_TYPE_UINT32 => Some(u64::from(self.value.ui32)),
                ZET_VALUE_TYPE_UINT64 => Some(self.value.ui64),
                _ => self.as_f64().filter(|v| v.is_finite() && *v >= 0.0).map(|v| v as u64),
            }
        }
    }
}

impl Default for ze_event_pool_desc_t {
    fn default() -> Self {
        Self { stype: ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, pNext: core::ptr::null(), flags: 0, count: 0 }
    }
}

impl Default for ze_event_desc_t {
    fn default() -> Self {
        Self { stype: ZE_STRUCTURE_TYPE_EVENT_DESC, pNext: core::ptr::null(), index: 0, signal: 0, wait: 0 }
    }
}

impl Default for zet_metric_streamer_desc_t {
    fn default() -> Self {
        Self {
            stype: ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC,
            pNext: core::ptr::null(),
            notifyEveryNReports: 0,
            samplingPeriod: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_convert_by_their_type() {
        let v = |t, value| zet_typed_value_t { r#type: t, value };
        assert_eq!(v(ZET_VALUE_TYPE_UINT32, zet_value_t { ui32: 7 }).as_f64(), Some(7.0));
        assert_eq!(v(ZET_VALUE_TYPE_UINT64, zet_value_t { ui64: 1 << 40 }).as_f64(), Some((1u64 << 40) as f64));
        assert_eq!(v(ZET_VALUE_TYPE_FLOAT32, zet_value_t { fp32: 1.5 }).as_f64(), Some(1.5));
        assert_eq!(v(ZET_VALUE_TYPE_FLOAT64, zet_value_t { fp64: -2.25 }).as_f64(), Some(-2.25));
        assert_eq!(v(ZET_VALUE_TYPE_BOOL8, zet_value_t { b8: 3 }).as_f64(), Some(1.0));
        assert_eq!(v(99, zet_value_t { ui64: 1 }).as_f64(), None);
    }
}
