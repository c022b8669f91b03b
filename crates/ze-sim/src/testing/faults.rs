//! The simulated driver's faults, quirks and empty entry points as one list, for the tests that
//! combine them (the sampler's property test draws sets of them, the `record` tests run every
//! pair through `zescope record`), with what each may leave behind on its own terms. Each
//! variant names the configuration field it sets (docs/ze-sim.md describes them).

use crate::config::{FreeFault, ImportFd, SimConfig};

/// One thing a driver can do wrong or differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `faults.export_fd_minus_one`.
    FdMinusOne,
    /// `faults.export_size_zero`.
    SizeZero,
    /// `faults.export_size_oversized`.
    Oversized,
    /// `faults.import_fails`.
    ImportFails,
    /// `faults.group_properties_fail`.
    PropertiesFail,
    /// `faults.device_lost_after_samples: Some(3)`.
    DeviceLost,
    /// `faults.disable_refused`.
    DisableRefused,
    /// `quirks.overwrite_pnext`.
    OverwritePnext,
    /// `quirks.invalid_argument_on_unknown_chain`.
    InvalidArgument,
    /// `quirks.import_fd: ClosedByImport`.
    ImportClosedByImport,
    /// `quirks.import_fd: ClosedAtFree`.
    ImportClosedAtFree,
    /// `quirks.unmappable_export`.
    Unmappable,
    /// `faults.mem_free_fails: Some(Once)`.
    FreeFailsOnce,
    /// `faults.mem_free_fails: Some(Always)`.
    FreeFailsAlways,
    /// `faults.host_free_fails: Some(Once)`.
    HostFreeFailsOnce,
    /// `faults.host_free_fails: Some(Always)`.
    HostFreeFailsAlways,
    /// `quirks.export_only_while_active`.
    ExportOnlyWhileActive,
    /// `quirks.timestamp_valid_bits: Some(24)`.
    NarrowClock,
    /// `faults.timestamp_reset_after_samples: Some(5)`.
    ClockReset,
    /// `quirks.per_metric_sizes_differ`.
    SizesDiffer,
    /// `quirks.unsealed_export` and `faults.shrink_export_after_samples: Some(20)`.
    ShrinkingExport,
    /// `faults.streamer_open_busy`.
    StreamerBusy,
    /// `faults.streamer_open_denied`.
    StreamerDenied,
    /// `faults.streamer_read_fails_after: Some(2)`.
    StreamerReadFails,
    /// `faults.device_lost_after_reports: Some(30)`.
    StreamerDeviceLost,
    /// `faults.tracer_create_fails`.
    TracerCreateFails,
    /// `faults.decoder_create_fails`.
    DecoderCreateFails,
    /// `faults.tracer_enable_fails`.
    TracerEnableFails,
    /// `faults.tracer_read_fails_after: Some(2)`.
    TracerReadFails,
    /// `faults.activate_fails`.
    ActivateFails,
    /// `faults.enable_metrics_fails`.
    EnableMetricsFails,
    /// An optional entry point the driver leaves empty (only at the driver's creation).
    Empty(&'static str),
}

/// Runtime faults of a run's setup and of the metric tracer: each sends a start, or a run of a
/// tracer-based group, down a teardown path of its own. The sampler's property test draws them
/// with [`RUNTIME`]'s; they are not in [`all`] (the `record` tests' pairs read no tracer).
pub const SETUP_AND_TRACER: &[Fault] = &[
    Fault::TracerCreateFails,
    Fault::DecoderCreateFails,
    Fault::TracerEnableFails,
    Fault::TracerReadFails,
    Fault::ActivateFails,
    Fault::EnableMetricsFails,
];

/// The faults that can be switched on while the driver runs (`Sim::configure`).
pub const RUNTIME: &[Fault] = &[
    Fault::FdMinusOne,
    Fault::SizeZero,
    Fault::Oversized,
    Fault::ImportFails,
    Fault::PropertiesFail,
    Fault::DeviceLost,
    Fault::DisableRefused,
    Fault::OverwritePnext,
    Fault::InvalidArgument,
    Fault::ImportClosedByImport,
    Fault::ImportClosedAtFree,
    Fault::Unmappable,
    Fault::FreeFailsOnce,
    Fault::FreeFailsAlways,
    Fault::HostFreeFailsOnce,
    Fault::HostFreeFailsAlways,
    Fault::ExportOnlyWhileActive,
    Fault::NarrowClock,
    Fault::ClockReset,
    Fault::SizesDiffer,
    Fault::ShrinkingExport,
    Fault::StreamerBusy,
    Fault::StreamerDenied,
    Fault::StreamerReadFails,
    Fault::StreamerDeviceLost,
];

/// Entry points whose absence changes the paths zescope takes: the device-copy path, the
/// device clock, run-time metric enabling, the streamer's calculation and the extension query.
pub const EMPTY: &[Fault] = &[
    Fault::Empty("zeMemAllocHost"),
    Fault::Empty("zeCommandListCreateImmediate"),
    Fault::Empty("zeCommandListAppendMemoryCopy"),
    Fault::Empty("zeDeviceGetGlobalTimestamps"),
    Fault::Empty("zetDeviceDisableMetricsExp"),
    Fault::Empty("zetMetricGroupCalculateMultipleMetricValuesExp"),
    Fault::Empty("zeDriverGetExtensionProperties"),
    Fault::Empty("zeEventHostSynchronize"),
];

/// Every fault, runtime ones first.
pub fn all() -> Vec<Fault> {
    RUNTIME.iter().chain(EMPTY).copied().collect()
}

impl Fault {
    /// Switches the fault on in `cfg`.
    pub fn apply(self, cfg: &mut SimConfig) {
        if let Fault::Empty(name) = self {
            cfg.empty_entry_points.push(name.to_string());
            return;
        }
        self.configure(&mut cfg.faults, &mut cfg.quirks);
    }

    /// Switches a runtime fault on (an `Empty` one is ignored: it only works at creation).
    pub fn configure(self, x: &mut crate::config::Faults, q: &mut crate::config::Quirks) {
        match self {
            Fault::FdMinusOne => x.export_fd_minus_one = true,
            Fault::SizeZero => x.export_size_zero = true,
            Fault::Oversized => x.export_size_oversized = true,
            Fault::ImportFails => x.import_fails = true,
            Fault::PropertiesFail => x.group_properties_fail = true,
            Fault::DeviceLost => x.device_lost_after_samples = Some(3),
            Fault::DisableRefused => x.disable_refused = true,
            Fault::OverwritePnext => q.overwrite_pnext = true,
            Fault::InvalidArgument => q.invalid_argument_on_unknown_chain = true,
            Fault::ImportClosedByImport => q.import_fd = ImportFd::ClosedByImport,
            Fault::ImportClosedAtFree => q.import_fd = ImportFd::ClosedAtFree,
            Fault::Unmappable => q.unmappable_export = true,
            Fault::FreeFailsOnce => x.mem_free_fails = Some(FreeFault::Once),
            Fault::FreeFailsAlways => x.mem_free_fails = Some(FreeFault::Always),
            Fault::HostFreeFailsOnce => x.host_free_fails = Some(FreeFault::Once),
            Fault::HostFreeFailsAlways => x.host_free_fails = Some(FreeFault::Always),
            Fault::ExportOnlyWhileActive => q.export_only_while_active = true,
            Fault::NarrowClock => q.timestamp_valid_bits = Some(24),
            Fault::ClockReset => x.timestamp_reset_after_samples = Some(5),
            Fault::SizesDiffer => q.per_metric_sizes_differ = true,
            Fault::ShrinkingExport => {
                q.unsealed_export = true;
                x.shrink_export_after_samples = Some(20);
            }
            Fault::StreamerBusy => x.streamer_open_busy = true,
            Fault::StreamerDenied => x.streamer_open_denied = true,
            Fault::StreamerReadFails => x.streamer_read_fails_after = Some(2),
            Fault::StreamerDeviceLost => x.device_lost_after_reports = Some(30),
            Fault::TracerCreateFails => x.tracer_create_fails = true,
            Fault::DecoderCreateFails => x.decoder_create_fails = true,
            Fault::TracerEnableFails => x.tracer_enable_fails = true,
            Fault::TracerReadFails => x.tracer_read_fails_after = Some(2),
            Fault::ActivateFails => x.activate_fails = true,
            Fault::EnableMetricsFails => x.enable_metrics_fails = true,
            Fault::Empty(_) => {}
        }
    }

    /// The leaks this fault alone may provoke when it stays on until the process ends (the
    /// driver refuses a free or a disable for good): the object it keeps alive and everything
    /// zescope must then leave alone behind it. Empty for every other fault.
    pub fn may_leave(self) -> &'static [&'static str] {
        match self {
            Fault::FreeFailsAlways => &[
                "import_not_freed",
                "group_left_activated",
                "context_not_destroyed",
                "metrics_left_enabled",
                "user_group_not_destroyed",
            ],
            Fault::HostFreeFailsAlways => &[
                "host_allocation_not_freed",
                "group_left_activated",
                "context_not_destroyed",
                "metrics_left_enabled",
                "user_group_not_destroyed",
            ],
            Fault::DisableRefused | Fault::Empty("zetDeviceDisableMetricsExp") => &["metrics_left_enabled"],
            _ => &[],
        }
    }
}
