//! Experimental types the Debian 1.8.12 headers (API 1.4) do not have, written by hand from
//! the specification:
//!
//! - `ZET_experimental_metric_export_memory` (Level Zero 1.11): a metric group or metric reports
//!   that it exports its counters as DMA-BUF memory, and the `fd`/`size` of that memory.
//! - `ZET_experimental_metric_group` (runtime metric groups, 1.9): create, fill, close, destroy.
//! - `ZET_experimental_metrics_runtime_enable_disable` (1.13): enable/disable metrics on a device.
//!
//! The loader 1.8.12 does not export the functions, so zescope reaches them through
//! `zeDriverGetExtensionFunctionAddress`; the names are the `*_NAME` constants below.
//! Offsets are checked by `tests/layout.rs` against the spec's struct definitions.

use core::ffi::c_void;

use crate::types::*;

pub type zet_metric_group_type_exp_flags_t = u32;

/// `ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP`
pub const ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP: zet_structure_type_t = 0x0001_0006;
/// `ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES`
pub const ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES: zet_structure_type_t = 0x0001_0007;

/// The metric group exports its memory as a DMA-BUF.
pub const ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF: zet_metric_group_type_exp_flags_t = 1 << 0;
/// The metric group was created by the application (`zetMetricGroupCreateExp`).
pub const ZET_METRIC_GROUP_TYPE_EXP_FLAG_USER_CREATED: zet_metric_group_type_exp_flags_t = 1 << 1;
pub const ZET_METRIC_GROUP_TYPE_EXP_FLAG_OTHER: zet_metric_group_type_exp_flags_t = 1 << 2;

/// `zet_metric_type_t` of a metric that exports its memory as a DMA-BUF.
pub const ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF: zet_metric_type_t = 0x7fff_fffd;

/// Chained to `zet_metric_group_properties_t::pNext`: the group's type flags.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zet_metric_group_type_exp_t {
    pub stype: zet_structure_type_t,
    pub pNext: *mut c_void,
    pub r#type: zet_metric_group_type_exp_flags_t,
}

/// Chained to group or metric properties: the exported memory. `fd` is owned by the
/// implementation; the application must never close it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zet_export_dma_buf_exp_properties_t {
    pub stype: zet_structure_type_t,
    pub pNext: *mut c_void,
    pub fd: i32,
    pub size: usize,
}

impl Default for zet_metric_group_type_exp_t {
    fn default() -> Self {
        Self { stype: ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP, pNext: core::ptr::null_mut(), r#type: 0 }
    }
}

impl Default for zet_export_dma_buf_exp_properties_t {
    fn default() -> Self {
        Self { stype: ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES, pNext: core::ptr::null_mut(), fd: -1, size: 0 }
    }
}

pub const zetMetricGroupCreateExp_NAME: &core::ffi::CStr = c"zetMetricGroupCreateExp";
pub const zetMetricGroupAddMetricExp_NAME: &core::ffi::CStr = c"zetMetricGroupAddMetricExp";
pub const zetMetricGroupCloseExp_NAME: &core::ffi::CStr = c"zetMetricGroupCloseExp";
pub const zetMetricGroupDestroyExp_NAME: &core::ffi::CStr = c"zetMetricGroupDestroyExp";
pub const zetDeviceEnableMetricsExp_NAME: &core::ffi::CStr = c"zetDeviceEnableMetricsExp";
pub const zetDeviceDisableMetricsExp_NAME: &core::ffi::CStr = c"zetDeviceDisableMetricsExp";
