//! `ZET_experimental_metric_tracer` (Level Zero 1.10): the metric tracer and decoder, which the
//! 1.4 headers lack, written by hand from the 1.32 headers (`zet_api.h`, `zet_ddi.h`).
//!
//! A tracer collects the events of tracer-based metric groups (sampling type
//! [`ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED`]) activated on a device:
//! `zetMetricTracerCreateExp` (created disabled) → `zetMetricTracerEnableExp` →
//! `zetMetricTracerReadDataExp` (raw bytes in the driver's own format) → a decoder
//! (`zetMetricDecoderCreateExp`) lists its decodable metrics
//! (`zetMetricDecoderGetDecodableMetricsExp`) and turns raw bytes into
//! [`zet_metric_entry_exp_t`] entries (`zetMetricTracerDecodeExp`: value, timestamp, index into
//! the caller's decodable metric array, sub-device) → `zetMetricTracerDisableExp` → destroy the
//! decoder, then the tracer. Intel's conformance suite reads groups that are tracer-based AND
//! export DMA-BUF memory this way: the workload writes into the exported memory, the tracer
//! turns those writes into events.
//!
//! The entry points are optional fields of [`crate::Api`]: loaders of API 1.10 and newer export
//! them and reach a driver through the DDI tables below (`zetGetMetricTracerExpProcAddrTable`,
//! `zetGetMetricDecoderExpProcAddrTable`); Debian's loader 1.8.12 has neither. As in the other
//! modules, names, values and field order are the headers'; `tests/layout/` compares sizes,
//! offsets, constants and the C signatures with the 1.32 headers.

use core::ffi::c_void;

use crate::ddi::Pfn;
use crate::stream::zet_value_t;
use crate::types::*;

crate::types::handles! {
    zet_metric_tracer_exp_handle_t => _zet_metric_tracer_exp_handle_t,
    zet_metric_decoder_exp_handle_t => _zet_metric_decoder_exp_handle_t,
}

/// `ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED`: the group is read with the metric
/// tracer (its events), not with queries or the time-based streamer.
pub const ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED: zet_metric_group_sampling_type_flags_t = 1 << 2;

/// `ZET_STRUCTURE_TYPE_METRIC_TRACER_EXP_DESC` (0x00010008): the `stype` of a
/// [`zet_metric_tracer_exp_desc_t`].
pub const ZET_STRUCTURE_TYPE_METRIC_TRACER_EXP_DESC: zet_structure_type_t = 0x0001_0008;

/// `ZET_METRICS_TRACER_EXP_NAME`: the extension's name in `zeDriverGetExtensionProperties`.
pub const ZET_METRICS_TRACER_EXP_NAME: &core::ffi::CStr = c"ZET_experimental_metric_tracer";
/// `ZET_METRIC_TRACER_EXP_VERSION_1_0`: the extension's only version.
pub const ZET_METRIC_TRACER_EXP_VERSION_1_0: u32 = ze_make_version(1, 0);

/// `ZET_METRIC_TYPE_EVENT_EXP_TIMESTAMP`: an event with only a timestamp; its value means nothing.
pub const ZET_METRIC_TYPE_EVENT_EXP_TIMESTAMP: zet_metric_type_t = 0x7fff_fff9;
/// `ZET_METRIC_TYPE_EVENT_EXP_START`: the first event of a start/end pair.
pub const ZET_METRIC_TYPE_EVENT_EXP_START: zet_metric_type_t = 0x7fff_fffa;
/// `ZET_METRIC_TYPE_EVENT_EXP_END`: the second event of a start/end pair.
pub const ZET_METRIC_TYPE_EVENT_EXP_END: zet_metric_type_t = 0x7fff_fffb;
/// `ZET_METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE`: the event's value only grows, and wraps.
pub const ZET_METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE: zet_metric_type_t = 0x7fff_fffc;

/// `zet_metric_tracer_exp_desc_t`: into (and out of) `zetMetricTracerCreateExp`. The driver
/// writes back the `notifyEveryNBytes` it really uses. `Default` sets the right `stype`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zet_metric_tracer_exp_desc_t {
    /// Must be [`ZET_STRUCTURE_TYPE_METRIC_TRACER_EXP_DESC`].
    pub stype: zet_structure_type_t,
    /// The next struct of the chain, or null.
    pub pNext: *const c_void,
    /// In/out: the notification event is signaled once this many raw bytes wait to be read.
    pub notifyEveryNBytes: u32,
}

impl Default for zet_metric_tracer_exp_desc_t {
    fn default() -> Self {
        Self { stype: ZET_STRUCTURE_TYPE_METRIC_TRACER_EXP_DESC, pNext: core::ptr::null(), notifyEveryNBytes: 0 }
    }
}

/// `zet_metric_entry_exp_t`: one decoded event, out of `zetMetricTracerDecodeExp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct zet_metric_entry_exp_t {
    /// The value; which member is meaningful says the decodable metric's `resultType`.
    pub value: zet_value_t,
    /// When the event happened (device time).
    pub timeStamp: u64,
    /// Index of the event's metric in the decodable metric array passed to the decode call.
    pub metricIndex: u32,
    /// True if the event happened on a sub-device (the tracer's device has sub-devices).
    pub onSubdevice: ze_bool_t,
    /// The sub-device's id when `onSubdevice` is true.
    pub subdeviceId: u32,
}

/// `zet_metric_tracer_exp_dditable_t` of `zet_ddi.h` (1.10): the slots a driver's
/// `zetGetMetricTracerExpProcAddrTable` fills.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct zet_metric_tracer_exp_dditable_t {
    /// `zetMetricTracerCreateExp`
    pub pfnCreateExp: Pfn,
    /// `zetMetricTracerDestroyExp`
    pub pfnDestroyExp: Pfn,
    /// `zetMetricTracerEnableExp`
    pub pfnEnableExp: Pfn,
    /// `zetMetricTracerDisableExp`
    pub pfnDisableExp: Pfn,
    /// `zetMetricTracerReadDataExp`
    pub pfnReadDataExp: Pfn,
    /// `zetMetricTracerDecodeExp`
    pub pfnDecodeExp: Pfn,
}

/// `zet_metric_decoder_exp_dditable_t` of `zet_ddi.h` (1.10): the slots a driver's
/// `zetGetMetricDecoderExpProcAddrTable` fills.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct zet_metric_decoder_exp_dditable_t {
    /// `zetMetricDecoderCreateExp`
    pub pfnCreateExp: Pfn,
    /// `zetMetricDecoderDestroyExp`
    pub pfnDestroyExp: Pfn,
    /// `zetMetricDecoderGetDecodableMetricsExp`
    pub pfnGetDecodableMetricsExp: Pfn,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tracer_descriptor_defaults_to_its_structure_type() {
        let d = zet_metric_tracer_exp_desc_t::default();
        assert_eq!(d.stype, ZET_STRUCTURE_TYPE_METRIC_TRACER_EXP_DESC);
        assert!(d.pNext.is_null());
        assert_eq!(ZET_METRICS_TRACER_EXP_NAME.to_bytes(), b"ZET_experimental_metric_tracer");
    }
}
