//! Driver profiles: the documented behaviours of one public driver, bundled under a name so a
//! configuration says `(profile: Some(NpuDriverLike))` instead of a dozen quirks. A profile turns
//! its behaviours ON on top of the rest of the configuration (flags set, options filled where the
//! configuration left them empty, entry points added to `empty_entry_points`); it never turns
//! anything off and never changes the devices. [`Profile::config`] gives a whole configuration
//! with the devices such a driver presents (an NPU for the NPU driver, a GPU for
//! compute-runtime), which is also what the loader classifies a driver by.
//!
//! Each behaviour, with the public source it follows, is listed in `docs/ze-sim.md` and
//! `docs/level-zero-calls.md`.

use serde::{Deserialize, Serialize};

use crate::config::{DeviceConfig, DeviceKind, Export, SimConfig};
use crate::faults::ImportFd;
use crate::sysman::{EnergyDrop, SysmanPiece};

/// A bundle of one public driver's behaviours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Profile {
    /// Intel's NPU driver (linux-npu-driver, `umd/level_zero_driver`): properties copied over the
    /// caller's (pNext lost), no metric export memory, no
    /// `zetMetricGroupCalculateMultipleMetricValuesExp` or custom groups, NOT_READY for a streamer
    /// on a group not activated, periods under 1 ms refused, a read period of at least 1024
    /// reports, nothing written back into the streamer descriptor, reads limited to the size the
    /// previous size query answered, one open streamer per device; Sysman with engine groups only.
    NpuDriverLike,
    /// Intel's GPU driver (compute-runtime, `level_zero/`): INVALID_ARGUMENT for a pNext chain
    /// with a struct it does not support for the group, the imported fd closed by the import,
    /// a streamer size query that answers the maximum, group types as combined bits
    /// (OTHER | MARKER | USER_CREATED, EXPORT_DMA_BUF on top where a group exports); Sysman whose
    /// energy counter falls back to ~200 J once (and comes back), with no temperature sensors,
    /// zero memory bandwidth, and engine groups refused to a user without root.
    ComputeRuntimeLike,
    /// A GPU driver built to the specification as it stands in 2026: size queries of
    /// `zetMetricStreamerReadData` (`*pRawDataSize == 0`, deprecated since 1.16) refused with
    /// INVALID_ARGUMENT (the tracer's are refused by default, in every profile), a counter-based notification event
    /// refused by `zetMetricStreamerOpen` (1.21), and a timer synchronized with the host whose
    /// global timestamp `zeDeviceGetGlobalTimestamps` answers in host ns while metric timestamps
    /// stay ticks (2026-05; the timer counts 19.2 MHz unless the configuration says otherwise).
    Spec2026,
}

/// Entry points Intel's NPU driver leaves empty (null in its DDI tables).
const NPU_EMPTY: &[&str] = &[
    "zetMetricGroupCalculateMultipleMetricValuesExp",
    "zetMetricGroupCreateExp",
    "zetMetricGroupAddMetricExp",
    "zetMetricGroupCloseExp",
    "zetMetricGroupDestroyExp",
    "zetDeviceEnableMetricsExp",
    "zetDeviceDisableMetricsExp",
    "zesDeviceEnumFrequencyDomains",
    "zesDeviceEnumPowerDomains",
    "zesDeviceEnumTemperatureSensors",
    "zesDeviceEnumMemoryModules",
];

impl Profile {
    /// The profile's name as documented ("npu-driver-like", "compute-runtime-like").
    pub fn name(self) -> &'static str {
        match self {
            Profile::NpuDriverLike => "npu-driver-like",
            Profile::ComputeRuntimeLike => "compute-runtime-like",
            Profile::Spec2026 => "spec-2026",
        }
    }

    /// The devices a driver of this kind presents: the built-in NPU, its groups readable only by
    /// the time-based streamer (the NPU driver exports no memory), or the built-in GPU (both GPU
    /// profiles).
    pub fn devices(self) -> Vec<DeviceConfig> {
        let builtin = SimConfig::default().devices;
        match self {
            Profile::NpuDriverLike => {
                let mut npu: Vec<DeviceConfig> = builtin.into_iter().filter(|d| d.kind == DeviceKind::Npu).collect();
                for g in npu.iter_mut().flat_map(|d| d.groups.iter_mut()) {
                    g.stream = true;
                    g.export = Export::None;
                }
                npu
            }
            Profile::ComputeRuntimeLike | Profile::Spec2026 => {
                builtin.into_iter().filter(|d| d.kind == DeviceKind::Gpu).collect()
            }
        }
    }

    /// A whole configuration: the built-in one with this profile and [`Profile::devices`].
    pub fn config(self) -> SimConfig {
        SimConfig { profile: Some(self), devices: self.devices(), ..SimConfig::default() }
    }

    /// Turns this profile's behaviours on in `cfg` (see the module docs).
    pub(crate) fn apply(self, cfg: &mut SimConfig) {
        let q = &mut cfg.quirks;
        match self {
            Profile::NpuDriverLike => {
                q.overwrite_pnext = true;
                q.no_export_extension = true;
                q.streamer_not_ready_when_inactive = true;
                q.streamer_min_period_ns.get_or_insert(1_000_000);
                q.streamer_notify_floor.get_or_insert(1024);
                q.streamer_desc_untouched = true;
                q.streamer_read_limited_to_size_query = true;
                q.streamer_size_query_available = true;
                q.one_streamer_per_device = true;
                for name in NPU_EMPTY {
                    if !cfg.empty_entry_points.iter().any(|e| e == name) {
                        cfg.empty_entry_points.push((*name).to_owned());
                    }
                }
            }
            Profile::ComputeRuntimeLike => {
                q.invalid_argument_on_unknown_chain = true;
                if q.import_fd == ImportFd::Kept {
                    q.import_fd = ImportFd::ClosedByImport;
                }
                let s = &mut cfg.sysman;
                // Energy since boot, as the cards showed (~22 MJ), then ~200 J for a while.
                if s.counter_start == 0 {
                    s.counter_start = 22_000_000_000_000;
                }
                s.energy_drop.get_or_insert(EnergyDrop { at_ms: 1500, to_j: 200.0, lasts_ms: Some(300) });
                s.no_temperature_sensors = true;
                s.zero_memory_bandwidth = true;
                if !s.root_only.contains(&SysmanPiece::Engines) {
                    s.root_only.push(SysmanPiece::Engines);
                }
                q.group_type_bits_combined = true;
            }
            Profile::Spec2026 => {
                q.streamer_no_size_query = true;
                q.counter_based_events_refused = true;
                q.global_timestamps_host_ns = true;
                q.timer_hz.get_or_insert(19_200_000);
            }
        }
    }
}

impl SimConfig {
    /// The configuration with its profile's behaviours turned on (itself when it has none): what
    /// an instance runs with.
    pub fn resolved(&self) -> SimConfig {
        let mut cfg = self.clone();
        if let Some(p) = cfg.profile {
            p.apply(&mut cfg);
        }
        cfg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_adds_its_behaviours_and_keeps_the_rest() {
        let mut cfg = SimConfig { profile: Some(Profile::NpuDriverLike), ..SimConfig::default() };
        cfg.empty_entry_points.push("zeDeviceGetStatus".into());
        cfg.quirks.streamer_min_period_ns = Some(2_000_000);
        let r = cfg.resolved();
        assert!(r.quirks.overwrite_pnext && r.quirks.streamer_desc_untouched);
        assert_eq!(r.quirks.streamer_min_period_ns, Some(2_000_000), "a value the configuration gave stays");
        assert_eq!(r.quirks.streamer_notify_floor, Some(1024));
        assert!(r.empty_entry_points.iter().any(|e| e == "zeDeviceGetStatus"));
        assert!(r.empty_entry_points.iter().any(|e| e == "zetMetricGroupCalculateMultipleMetricValuesExp"));
        assert_eq!(r.resolved(), r, "applying twice changes nothing");
        assert!(r.validate().is_ok(), "{:?}", r.validate());
        let cr = Profile::ComputeRuntimeLike.config().resolved();
        assert!(cr.quirks.invalid_argument_on_unknown_chain && !cr.quirks.streamer_size_query_available);
        assert!(cr.sysman.no_temperature_sensors && cr.sysman.zero_memory_bandwidth);
        assert!(cr.sysman.energy_drop.is_some());
        assert!(cr.devices.iter().all(|d| d.kind == DeviceKind::Gpu));
        assert!(cr.quirks.group_type_bits_combined && cr.sysman.root_only == [SysmanPiece::Engines]);
        assert_eq!(cr.resolved(), cr, "applying twice changes nothing");
        assert!(r.quirks.one_streamer_per_device);
        let new = Profile::Spec2026.config().resolved();
        assert!(new.quirks.streamer_no_size_query && !new.quirks.tracer_size_query);
        assert!(new.quirks.counter_based_events_refused && new.quirks.global_timestamps_host_ns);
        assert_eq!(new.quirks.timer_hz, Some(19_200_000));
        assert!(new.validate().is_ok(), "{:?}", new.validate());
        assert!(
            Profile::NpuDriverLike
                .devices()
                .iter()
                .all(|d| d.kind == DeviceKind::Npu && d.groups.iter().all(|g| g.stream && g.export == Export::None))
        );
    }

    #[test]
    fn profiles_are_named_in_ron() {
        let cfg = SimConfig::from_ron("(profile: Some(ComputeRuntimeLike))", "t").unwrap();
        assert_eq!(cfg.profile, Some(Profile::ComputeRuntimeLike));
        assert_eq!(Profile::NpuDriverLike.name(), "npu-driver-like");
        let cfg = SimConfig::from_ron("(profile: Some(Spec2026))", "t").unwrap();
        assert_eq!(cfg.profile.map(Profile::name), Some("spec-2026"));
    }
}
