//! Faults and real-driver quirks to inject (re-exported from [`crate::config`]). Every field
//! defaults to "off", so a RON config names only what it wants, e.g.
//! `(faults: (mem_free_fails: Some(Once)), quirks: (import_fd: ClosedAtFree))`.

use serde::{Deserialize, Serialize};

/// Faults to inject. Each one makes the named call fail (or lie) the way a broken or
/// restricted driver would.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// `zeInit` fails with ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE.
    pub init_fails: bool,
    /// The driver reports no devices.
    pub no_devices: bool,
    /// `zetMetricGroupGetProperties` fails with ZE_RESULT_ERROR_UNKNOWN.
    pub group_properties_fail: bool,
    /// Export queries report `fd = -1`.
    pub export_fd_minus_one: bool,
    /// Export queries report `size = 0`.
    pub export_size_zero: bool,
    /// Export queries report a `size` larger than the memory behind the fd.
    pub export_size_oversized: bool,
    /// `zeMemAllocDevice` with an import descriptor fails.
    pub import_fails: bool,
    /// After this many snapshots the device is lost: calls return ZE_RESULT_ERROR_DEVICE_LOST
    /// and the buffers stop moving.
    pub device_lost_after_samples: Option<u64>,
    /// `zetDeviceDisableMetricsExp` fails with ZE_RESULT_ERROR_UNKNOWN.
    pub disable_refused: bool,
    /// `zeMemFree` of an IMPORT fails with ZE_RESULT_ERROR_UNKNOWN and the import stays alive
    /// (so tearing its exporter down afterwards is still refused and recorded). Frees of host
    /// allocations are not affected.
    pub mem_free_fails: Option<FreeFault>,
    /// `zeMemFree` of a HOST allocation fails with ZE_RESULT_ERROR_UNKNOWN and the memory stays
    /// allocated (so destroying its context afterwards is still refused and recorded). `Once`:
    /// only the first free of a host allocation.
    pub host_free_fails: Option<FreeFault>,
    /// After this many snapshots the device clock restarts near 0 (a jump backwards) and keeps
    /// counting from there; it happens once.
    pub timestamp_reset_after_samples: Option<u64>,
    /// With `quirks.unsealed_export`: after this many snapshots the driver truncates every
    /// active exported file to `shrink_export_to` bytes while the application may have it mapped.
    /// The driver's own writer then writes only what still fits (it never faults itself); a copy
    /// from an import past the new end fails with ZE_RESULT_ERROR_UNKNOWN. Without
    /// `unsealed_export` the config is refused (a sealed memfd cannot shrink).
    pub shrink_export_after_samples: Option<u64>,
    /// The size `shrink_export_after_samples` truncates to: a multiple of 4096 (default 0).
    pub shrink_export_to: u64,
    /// `zeContextDestroy` takes this long (ms) before it does its work, like a driver waiting
    /// for a hung engine: the last step of every teardown becomes slow (default 0).
    pub context_destroy_delay_ms: u64,
    /// `zetMetricStreamerOpen` fails with ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, as when another
    /// process holds the device's exclusive OA stream.
    pub streamer_open_busy: bool,
    /// `zetMetricStreamerOpen` fails with ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS, as under
    /// `perf_stream_paranoid=1` without CAP_PERFMON.
    pub streamer_open_denied: bool,
    /// After this many successful `zetMetricStreamerReadData` calls (per instance), every read
    /// fails with ZE_RESULT_ERROR_UNKNOWN.
    pub streamer_read_fails_after: Option<u64>,
    /// After this many streamer reports (counted across the instance's streamers) the device is
    /// lost: reads, waits and other calls answer ZE_RESULT_ERROR_DEVICE_LOST.
    pub device_lost_after_reports: Option<u64>,
    /// `zetMetricTracerCreateExp` fails with ZE_RESULT_ERROR_UNKNOWN.
    pub tracer_create_fails: bool,
    /// `zetMetricDecoderCreateExp` fails with ZE_RESULT_ERROR_UNKNOWN.
    pub decoder_create_fails: bool,
    /// `zetMetricTracerEnableExp` fails with ZE_RESULT_ERROR_UNKNOWN (the tracer stays disabled).
    pub tracer_enable_fails: bool,
    /// After this many successful `zetMetricTracerReadDataExp` calls (per instance), every read
    /// fails with ZE_RESULT_ERROR_UNKNOWN.
    pub tracer_read_fails_after: Option<u64>,
    /// `zetContextActivateMetricGroups` with groups to activate fails with
    /// ZE_RESULT_ERROR_UNKNOWN and activates nothing (deactivating, an empty list, still works).
    pub activate_fails: bool,
    /// `zetDeviceEnableMetricsExp` fails with ZE_RESULT_ERROR_UNKNOWN and enables nothing.
    pub enable_metrics_fails: bool,
}

/// Which frees of imports fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FreeFault {
    /// Only the first free of an import (in this driver instance) fails; later ones succeed.
    Once,
    /// Every free of an import fails.
    Always,
}

/// Who owns the fd the application passes to an import (`ze_external_memory_import_fd_t.fd`).
/// Real drivers differ; the application cannot ask which one it runs on, so it must import a
/// dup it keeps until after `zeMemFree` and close afterwards only if still open and still the
/// same file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ImportFd {
    /// The driver never closes the fd it was given (the application closes its dup).
    #[default]
    Kept,
    /// `zeMemAllocDevice` closes the fd it imports (compute-runtime since 2026-03).
    ClosedByImport,
    /// `zeMemFree` of that import closes the fd it was imported from.
    ClosedAtFree,
}

/// Behaviours of real drivers that are legal but awkward.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Quirks {
    /// GetProperties overwrites the caller's `pNext` (as Intel's NPU driver does).
    pub overwrite_pnext: bool,
    /// GetProperties answers ZE_RESULT_ERROR_INVALID_ARGUMENT when it recognises no struct in a
    /// non-empty `pNext` chain (as compute-runtime does).
    pub invalid_argument_on_unknown_chain: bool,
    /// Who closes the fd passed to an import (default: nobody but the application).
    pub import_fd: ImportFd,
    /// The driver predates metric export memory: it knows neither the group-type nor the export
    /// struct and skips them in chains (with `invalid_argument_on_unknown_chain`, it rejects them).
    pub no_export_extension: bool,
    /// The exported fd cannot be mapped by the application (readers must copy through the
    /// device instead).
    pub unmappable_export: bool,
    /// The old behaviour: export memory exists only while its group is activated. An export
    /// query on an inactive group succeeds but reports `fd = -1, size = 0` (the properties are
    /// still answered, as a driver that allocates the buffer at activation would), and
    /// deactivation tears the exporter down (closes its fds). By default an export query answers
    /// the fd whether or not the group is active, as the spec's sample code assumes.
    pub export_only_while_active: bool,
    /// The device timestamp written into exported buffers (and returned by
    /// `zeDeviceGetGlobalTimestamps`, and reported as `timestampValidBits`) keeps only its low N
    /// bits (16..=64): with 24 bits of ns the clock wraps every 16.8 ms.
    pub timestamp_valid_bits: Option<u32>,
    /// The device's global timer counts at this rate (Hz) instead of 1 GHz, as Intel GPUs' do
    /// (19.2 MHz, 12.5 MHz, 38.4 MHz): `zeDeviceGetGlobalTimestamps` returns ticks (their low
    /// `timestamp_valid_bits` bits), `timerResolution` says ns per tick (rounded) to the 1.0
    /// query and ticks per second to the 1.2 one, and a streamer report's timestamp metric is
    /// that tick count in ns (so it wraps with the ticks). Exported buffers keep their ns
    /// timestamps, as their layout says.
    pub timer_hz: Option<u64>,
    /// The exported memfd is not sealed against shrinking or growing, and the file is one page
    /// longer than the `size` reported (still page-aligned).
    pub unsealed_export: bool,
    /// With per-metric export, the metrics sharing one file report different `size` values:
    /// the last reports the full (page-aligned) size, the others only the bytes the header and
    /// counters use.
    pub per_metric_sizes_differ: bool,
    /// `zetMetricTracerReadDataExp` answers a size query (`*pRawDataSize == 0` or no buffer)
    /// with the bytes waiting, as drivers before the size query's deprecation did. By default it
    /// is refused with ZE_RESULT_ERROR_INVALID_ARGUMENT, as the specification since its
    /// deprecation and compute-runtime do (Intel's conformance suite expects the refusal).
    pub tracer_size_query: bool,
    /// `zetMetricTracerDecodeExp` given fewer entries than the data holds decodes the first ones
    /// but leaves `*pRawDataSize` as it was, instead of lowering it to the bytes it processed:
    /// a caller that decodes in chunks must find out another way that data is left.
    pub tracer_decode_keeps_size: bool,
    /// `zetMetricStreamerOpen` on a group not activated answers ZE_RESULT_NOT_READY (a
    /// success-class code) and writes no handle, as Intel's NPU driver does, instead of
    /// ZE_RESULT_ERROR_INVALID_ARGUMENT.
    pub streamer_not_ready_when_inactive: bool,
    /// The shortest sampling period (ns) `zetMetricStreamerOpen` accepts: a shorter one is
    /// refused with ZE_RESULT_ERROR_INVALID_ARGUMENT (Intel's NPU driver: 1 ms).
    pub streamer_min_period_ns: Option<u32>,
    /// The notification event is signaled only once at least this many reports wait, whatever
    /// `notifyEveryNReports` asked (Intel's NPU driver raises its read period to 1024 reports).
    pub streamer_notify_floor: Option<u32>,
    /// `zetMetricStreamerOpen` writes nothing back into the descriptor: the period is used as
    /// asked (not rounded) and the caller's `notifyEveryNReports` stays (Intel's NPU driver).
    pub streamer_desc_untouched: bool,
    /// The old behaviour: a size query of `zetMetricStreamerReadData` (`*pRawDataSize == 0`)
    /// answers the bytes of the reports there to read (Intel's NPU driver). By default it answers
    /// the most the streamer can hold (its buffer, or `maxReportCount` reports), as the
    /// specification keeps the deprecated size query since 1.16 and compute-runtime does.
    pub streamer_size_query_available: bool,
    /// `zetMetricStreamerReadData` copies at most the bytes the previous size query answered
    /// (nothing before the first), as Intel's NPU driver does.
    pub streamer_read_limited_to_size_query: bool,
    /// `zetMetricStreamerReadData` refuses a size query (`*pRawDataSize == 0` or no buffer) with
    /// ZE_RESULT_ERROR_INVALID_ARGUMENT: a driver of the specification after 1.16 deprecated it.
    pub streamer_no_size_query: bool,
    /// One metric streamer per DEVICE: a second `zetMetricStreamerOpen` on the device, on any
    /// group, answers ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE (Intel's NPU driver: one stream of
    /// the kernel's per device). By default one streamer per domain of a device may be open.
    pub one_streamer_per_device: bool,
    /// `zet_metric_group_type_exp_t` holds several bits, as compute-runtime fills it: every
    /// predefined group reports OTHER | MARKER | USER_CREATED, an exporting group EXPORT_DMA_BUF
    /// on top. By default a group reports EXPORT_DMA_BUF or OTHER alone (USER_CREATED only for a
    /// created group).
    pub group_type_bits_combined: bool,
    /// `zeDriverGetExtensionProperties` does not list `ZET_experimental_metric_export_memory`,
    /// though the groups export (the name reached the headers only with loader 1.29: drivers
    /// built before did not list it). A client must go by the group-type bit.
    pub export_extension_unlisted: bool,
    /// `zetMetricStreamerOpen` refuses a notification event of a counter-based pool
    /// (`ze_event_pool_counter_based_exp_desc_t` in the pool's chain) with
    /// ZE_RESULT_ERROR_INVALID_ARGUMENT, as the specification does since 1.21.
    pub counter_based_events_refused: bool,
    /// The device's timer is synchronized with the host (its ns are CLOCK_MONOTONIC's) and
    /// `zeDeviceGetGlobalTimestamps` answers the device's global timestamp in host ns, not in
    /// ticks (the 2026-05 specification); metric timestamps stay ticks of the timer (see
    /// `timer_hz`), keeping `timestamp_valid_bits`.
    pub global_timestamps_host_ns: bool,
    /// The device's timer runs this many parts per million fast (negative: slow) against the
    /// host's CLOCK_MONOTONIC (-1000 ..= 1000), as two crystals do (an Intel GPU's timer and the
    /// host's differ by tens of ppm): exported buffers' timestamps, `zeDeviceGetGlobalTimestamps`'
    /// device value and streamer reports' timestamp metric all drift from the host clock by that
    /// much since the driver started. Not with `global_timestamps_host_ns` (a synchronized timer).
    pub timer_drift_ppm: Option<i32>,
}
