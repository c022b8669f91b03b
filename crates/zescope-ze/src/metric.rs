//! Metric groups and metrics: properties, and the export-memory queries through `pNext`.
//!
//! Real drivers differ in how they treat a `pNext` chain, and zescope copes with each:
//! - a driver that overwrites the caller's `pNext` (Intel's NPU driver): detected by comparing
//!   the pointer after the call; the chain is then never followed and the export is treated as
//!   unavailable for that handle;
//! - a driver that answers ZE_RESULT_ERROR_INVALID_ARGUMENT when it recognises no struct in the
//!   chain (compute-runtime): the query is retried without the chain, and the group is marked as
//!   not exporting.

use level_zero_sys::*;

use super::error::{ZeError, check};
use super::loader::Ze;
use super::{c_string, query_array};

/// What a group says about exporting its memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupExport {
    /// The group's type flags include EXPORT_DMA_BUF: one buffer for the group.
    DmaBuf,
    /// No group-level export (metrics may still export individually).
    No,
    /// Unknown: the driver mishandled the query (the reason says how).
    Unknown(String),
}

/// What a metric group says about itself.
#[derive(Clone, Debug)]
pub struct GroupInfo {
    /// Name the driver reports.
    pub name: String,
    /// The driver's description.
    pub description: String,
    /// Domain: groups in one domain cannot be active together.
    pub domain: u32,
    /// `zet_metric_group_sampling_type_flags_t` bits.
    pub sampling: u32,
    /// How many metrics the group has.
    pub metric_count: u32,
    /// Whether the group exports its counters as one DMA-BUF.
    pub export: GroupExport,
    /// True for a group created at run time (`zetMetricGroupCreateExp`).
    pub user_created: bool,
}

/// Why zescope does not read a tracer-based group (see [`GroupInfo::tracer_based`]).
pub const TRACER_BASED_UNREAD: &str = "tracer-based: the workload writes events into its exported memory, read with the metric tracer, not through a layout";

impl GroupInfo {
    /// The sampling types as text ("time-based", "event-based", "time+event", "tracer-based" or
    /// "none").
    pub fn sampling_name(&self) -> &'static str {
        let time = self.sampling & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0;
        let event = self.sampling & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED != 0;
        match (time, event) {
            (true, true) => "time+event",
            (true, false) => "time-based",
            (false, true) => "event-based",
            (false, false) if self.tracer_based() => "tracer-based",
            (false, false) => "none",
        }
    }

    /// Read with the metric tracer only (sampling type EXP_TRACER_BASED, neither time- nor
    /// event-based): what such a group exports is the memory its events are written into, not
    /// counters a layout describes.
    pub fn tracer_based(&self) -> bool {
        let other = ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED | ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED;
        self.sampling & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED != 0 && self.sampling & other == 0
    }
}

/// The exported memory as the driver reports it (`fd` is the implementation's: never close it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExportProps {
    /// The exporter's file descriptor: borrowed, valid while the group's device is open.
    pub fd: i32,
    /// Size of the exported memory in bytes.
    pub size: usize,
}

/// Why an export query gave no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportQueryError {
    /// The query call failed.
    #[error("{0}")]
    Ze(#[from] ZeError),
    /// The driver replaced the `pNext` chain of the query.
    #[error("the driver overwrote the pNext chain of the query; its export properties cannot be trusted")]
    ChainClobbered,
    /// The driver does not know the export properties struct.
    #[error("the driver rejects the export properties struct (it does not support metric export memory)")]
    Unsupported,
}

/// A metric group of a device (predefined; groups created at run time are `CreatedGroup`).
#[derive(Clone)]
pub struct MetricGroup {
    /// The entry points it is reached through.
    pub ze: Ze,
    /// The loader's handle of the group's driver.
    pub driver: ze_driver_handle_t,
    /// The group's device.
    pub device: ze_device_handle_t,
    /// The group's handle.
    pub handle: zet_metric_group_handle_t,
    /// What the group reported when listed.
    pub info: GroupInfo,
}

impl MetricGroup {
    /// # Safety
    /// `handle` came from zetMetricGroupGet of `device` (or zetMetricGroupCreateExp).
    pub(crate) unsafe fn new(
        ze: Ze,
        driver: ze_driver_handle_t,
        device: ze_device_handle_t,
        handle: zet_metric_group_handle_t,
    ) -> Result<MetricGroup, ZeError> {
        let mut ty = zet_metric_group_type_exp_t::default();
        let ours: *mut core::ffi::c_void = (&mut ty as *mut zet_metric_group_type_exp_t).cast();
        let mut p = zet_metric_group_properties_t {
            stype: ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES,
            pNext: ours,
            ..Default::default()
        };
        // SAFETY: `p` and the chained `ty` live until the call returns.
        let r = unsafe { (ze.api.zetMetricGroupGetProperties)(handle, &mut p) };
        let export = if r == ZE_RESULT_ERROR_INVALID_ARGUMENT {
            // A driver that knows no struct of the chain: ask again without it.
            p = zet_metric_group_properties_t {
                stype: ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES,
                ..Default::default()
            };
            // SAFETY: as above, with no chain.
            check("zetMetricGroupGetProperties", unsafe { (ze.api.zetMetricGroupGetProperties)(handle, &mut p) })?;
            GroupExport::No
        } else {
            check("zetMetricGroupGetProperties", r)?;
            if p.pNext != ours {
                GroupExport::Unknown("the driver overwrote the query's pNext chain".into())
            } else if ty.r#type & ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF != 0 {
                GroupExport::DmaBuf
            } else {
                GroupExport::No
            }
        };
        let user_created = matches!(export, GroupExport::DmaBuf | GroupExport::No)
            && ty.r#type & ZET_METRIC_GROUP_TYPE_EXP_FLAG_USER_CREATED != 0;
        let info = GroupInfo {
            name: c_string(&p.name),
            description: c_string(&p.description),
            domain: p.domain,
            sampling: p.samplingType,
            metric_count: p.metricCount,
            export,
            user_created,
        };
        Ok(MetricGroup { ze, driver, device, handle, info })
    }

    /// The group's metrics, in the driver's order.
    pub fn metrics(&self) -> Result<Vec<Metric>, ZeError> {
        let handles = query_array("zetMetricGet", std::ptr::null_mut(), |n, out| {
            // SAFETY: see query_array.
            unsafe { (self.ze.api.zetMetricGet)(self.handle, n, out) }
        })?;
        // SAFETY: handles just returned by zetMetricGet for this group.
        handles.into_iter().map(|h| unsafe { Metric::new(self.ze.clone(), h) }).collect()
    }

    /// The group's exported memory (`fd`, `size`). Touches the exporter: call it only from the
    /// thread that owns the run (the sampler).
    pub fn query_export(&self) -> Result<ExportProps, ExportQueryError> {
        query_export(
            |p: &mut zet_metric_group_properties_t| {
                p.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
                // SAFETY: `p` and its chain live until the call returns.
                unsafe { (self.ze.api.zetMetricGroupGetProperties)(self.handle, p) }
            },
            "zetMetricGroupGetProperties",
        )
    }
}

/// Properties structs with a `pNext` field (group and metric).
trait Chained: Default {
    fn next(&mut self) -> &mut *mut core::ffi::c_void;
}
impl Chained for zet_metric_group_properties_t {
    fn next(&mut self) -> &mut *mut core::ffi::c_void {
        &mut self.pNext
    }
}
impl Chained for zet_metric_properties_t {
    fn next(&mut self) -> &mut *mut core::ffi::c_void {
        &mut self.pNext
    }
}

fn query_export<P: Chained>(
    call: impl FnOnce(&mut P) -> ze_result_t,
    name: &'static str,
) -> Result<ExportProps, ExportQueryError> {
    let mut e = zet_export_dma_buf_exp_properties_t::default();
    let ours: *mut core::ffi::c_void = (&mut e as *mut zet_export_dma_buf_exp_properties_t).cast();
    let mut p = P::default();
    *p.next() = ours;
    let r = call(&mut p);
    if r == ZE_RESULT_ERROR_INVALID_ARGUMENT {
        return Err(ExportQueryError::Unsupported);
    }
    check(name, r)?;
    if *p.next() != ours {
        return Err(ExportQueryError::ChainClobbered);
    }
    Ok(ExportProps { fd: e.fd, size: e.size })
}

/// What a metric says about itself.
#[derive(Clone, Debug)]
pub struct MetricInfo {
    /// Name the driver reports.
    pub name: String,
    /// The driver's description.
    pub description: String,
    /// Hardware component it counts in.
    pub component: String,
    /// Unit text (may be empty).
    pub units: String,
    /// `zet_metric_type_t`.
    pub metric_type: zet_metric_type_t,
    /// `zet_value_type_t` of its results.
    pub value_type: zet_value_type_t,
}

impl MetricInfo {
    /// The metric reports its own exported memory (type EXP_EXPORT_DMA_BUF).
    pub fn exports_dma_buf(&self) -> bool {
        self.metric_type == ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF
    }

    /// The metric type as text.
    pub fn type_name(&self) -> &'static str {
        match self.metric_type {
            ZET_METRIC_TYPE_DURATION => "duration",
            ZET_METRIC_TYPE_EVENT => "event",
            ZET_METRIC_TYPE_EVENT_WITH_RANGE => "event-with-range",
            ZET_METRIC_TYPE_THROUGHPUT => "throughput",
            ZET_METRIC_TYPE_TIMESTAMP => "timestamp",
            ZET_METRIC_TYPE_FLAG => "flag",
            ZET_METRIC_TYPE_RATIO => "ratio",
            ZET_METRIC_TYPE_RAW => "raw",
            ZET_METRIC_TYPE_IP_EXP => "ip",
            ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF => "export-dma-buf",
            _ => "other",
        }
    }
}

/// One metric of a group. Not destroyed by zescope.
#[derive(Clone)]
pub struct Metric {
    /// The entry points it is reached through.
    pub ze: Ze,
    /// The metric's handle.
    pub handle: zet_metric_handle_t,
    /// What the metric reported when listed.
    pub info: MetricInfo,
}

impl Metric {
    /// # Safety
    /// `handle` came from zetMetricGet (or zetMetricDecoderGetDecodableMetricsExp).
    pub(crate) unsafe fn new(ze: Ze, handle: zet_metric_handle_t) -> Result<Metric, ZeError> {
        let mut p = zet_metric_properties_t { stype: ZET_STRUCTURE_TYPE_METRIC_PROPERTIES, ..Default::default() };
        // SAFETY: valid properties struct with a null chain.
        check("zetMetricGetProperties", unsafe { (ze.api.zetMetricGetProperties)(handle, &mut p) })?;
        let info = MetricInfo {
            name: c_string(&p.name),
            description: c_string(&p.description),
            component: c_string(&p.component),
            units: c_string(&p.resultUnits),
            metric_type: p.metricType,
            value_type: p.resultType,
        };
        Ok(Metric { ze, handle, info })
    }

    /// The metric's exported memory. Touches the exporter: sampler thread only.
    pub fn query_export(&self) -> Result<ExportProps, ExportQueryError> {
        query_export(
            |p: &mut zet_metric_properties_t| {
                p.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES;
                // SAFETY: `p` and its chain live until the call returns.
                unsafe { (self.ze.api.zetMetricGetProperties)(self.handle, p) }
            },
            "zetMetricGetProperties",
        )
    }
}
