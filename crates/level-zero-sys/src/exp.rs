//! Experimental types the Debian 1.8.12 headers (API 1.4) do not have, written by hand from
//! the specification:
//!
//! - `ZET_experimental_metric_export_memory` (Level Zero 1.11): a metric group or metric reports
//!   that it exports its counters as DMA-BUF memory, and the `fd`/`size` of that memory.
//! - `ZET_experimental_metric_group` (runtime metric groups, 1.9): create, fill, close, destroy.
//! - `ZET_experimental_metrics_runtime_enable_disable` (1.13): enable/disable metrics on a device.
//!
//! The loader 1.8.12 does not export the functions, so zescope reaches them through
//! `zeDriverGetExtensionFunctionAddress`; the names are the `*_NAME` constants below, and the
//! typed pointers are in [`crate::pfn`] and the optional fields of [`crate::Api`].
//! Names, values and field order are the specification's, as newer `zet_api.h` headers declare
//! them; sizes and offsets are checked by `tests/layout/`.
//!
//! # The extension's rules (`ZET_experimental_metric_export_memory`)
//!
//! - The `fd` in [`zet_export_dma_buf_exp_properties_t`] is owned by the implementation: the
//!   application never closes it. The implementation closes it when it tears the exporting
//!   metric or metric group down.
//! - An allocation imported from that `fd` (`zeMemAllocDevice` with a chained
//!   [`crate::ze_external_memory_import_fd_t`] of type DMA_BUF) must be freed before the exporter
//!   is destroyed or deactivated and before metrics are disabled on the device.
//! - The same `fd` may be reported by repeated queries and by different metric or metric group
//!   handles; nothing synchronizes access to it or to its memory.

use core::ffi::c_void;

use crate::types::*;

/// `zet_metric_group_type_exp_flags_t`: a bit set of `ZET_METRIC_GROUP_TYPE_EXP_FLAG_*`, the
/// `type` of a [`zet_metric_group_type_exp_t`].
pub type zet_metric_group_type_exp_flags_t = u32;

/// `ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP` (0x00010006): the `stype` of a
/// [`zet_metric_group_type_exp_t`].
pub const ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP: zet_structure_type_t = 0x0001_0006;
/// `ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES` (0x00010007): the `stype` of a
/// [`zet_export_dma_buf_exp_properties_t`].
pub const ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES: zet_structure_type_t = 0x0001_0007;

/// `ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF`: the metric group exports its memory as a
/// DMA-BUF; chain a [`zet_export_dma_buf_exp_properties_t`] to its properties to get the fd.
pub const ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF: zet_metric_group_type_exp_flags_t = 1 << 0;
/// `ZET_METRIC_GROUP_TYPE_EXP_FLAG_USER_CREATED`: the metric group was created by the
/// application (`zetMetricGroupCreateExp`) and must be destroyed by it.
pub const ZET_METRIC_GROUP_TYPE_EXP_FLAG_USER_CREATED: zet_metric_group_type_exp_flags_t = 1 << 1;
/// `ZET_METRIC_GROUP_TYPE_EXP_FLAG_OTHER`: any other group (a driver's plain collection of
/// metrics).
pub const ZET_METRIC_GROUP_TYPE_EXP_FLAG_OTHER: zet_metric_group_type_exp_flags_t = 1 << 2;
/// `ZET_METRIC_GROUP_TYPE_EXP_FLAG_MARKER`: the metric group can generate marker metrics. The
/// type is a bit set: compute-runtime reports it with OTHER and USER_CREATED, and with
/// EXPORT_DMA_BUF where the group exports; test each bit, never compare the whole value.
pub const ZET_METRIC_GROUP_TYPE_EXP_FLAG_MARKER: zet_metric_group_type_exp_flags_t = 1 << 3;

/// `ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF` (0x7ffffffd): the `metricType` of a metric whose
/// properties export its memory as a DMA-BUF (chain a [`zet_export_dma_buf_exp_properties_t`]).
pub const ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF: zet_metric_type_t = 0x7fff_fffd;

/// `zet_metric_group_type_exp_t`: chained to `zet_metric_group_properties_t::pNext`, the
/// driver fills in what kind of group it is. `Default` sets the right `stype` and no chain.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zet_metric_group_type_exp_t {
    /// Must be [`ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP`].
    pub stype: zet_structure_type_t,
    /// The next struct of the chain, or null.
    pub pNext: *mut c_void,
    /// Out: `ZET_METRIC_GROUP_TYPE_EXP_FLAG_*` bits.
    pub r#type: zet_metric_group_type_exp_flags_t,
}

/// `zet_export_dma_buf_exp_properties_t`: chained to the properties of a metric group (whose
/// type has `EXPORT_DMA_BUF`) or of a metric (of type `EXP_EXPORT_DMA_BUF`), the driver fills
/// in the exported memory. `Default` sets the right `stype`, no chain, `fd = -1`, `size = 0`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zet_export_dma_buf_exp_properties_t {
    /// Must be [`ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES`].
    pub stype: zet_structure_type_t,
    /// The next struct of the chain, or null.
    pub pNext: *mut c_void,
    /// Out: the DMA-BUF file descriptor. Owned by the implementation: the application never
    /// closes it, and it is closed when the exporter is torn down. Several queries and handles
    /// may report the same fd.
    pub fd: i32,
    /// Out: the size of the exported memory in bytes (what to import and map).
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

/// Name to look up `zetMetricGroupCreateExp` (runtime metric groups): creates an empty group on
/// a device, to be filled with metrics of one domain and closed before activation.
pub const zetMetricGroupCreateExp_NAME: &core::ffi::CStr = c"zetMetricGroupCreateExp";
/// Name to look up `zetMetricGroupAddMetricExp`: adds a metric to an open created group.
pub const zetMetricGroupAddMetricExp_NAME: &core::ffi::CStr = c"zetMetricGroupAddMetricExp";
/// Name to look up `zetMetricGroupCloseExp`: closes a created group so it can be activated.
pub const zetMetricGroupCloseExp_NAME: &core::ffi::CStr = c"zetMetricGroupCloseExp";
/// Name to look up `zetMetricGroupDestroyExp`: destroys a created group; this tears down its
/// exporter (imports of its memory must be freed first).
pub const zetMetricGroupDestroyExp_NAME: &core::ffi::CStr = c"zetMetricGroupDestroyExp";
/// Name to look up `zetDeviceEnableMetricsExp` (runtime enable/disable): makes a device's
/// metric groups available without `ZET_ENABLE_METRICS=1`.
pub const zetDeviceEnableMetricsExp_NAME: &core::ffi::CStr = c"zetDeviceEnableMetricsExp";
/// Name to look up `zetDeviceDisableMetricsExp`: disables metrics on a device again; this
/// tears down every exporter of the device (imports of their memory must be freed first).
pub const zetDeviceDisableMetricsExp_NAME: &core::ffi::CStr = c"zetDeviceDisableMetricsExp";
