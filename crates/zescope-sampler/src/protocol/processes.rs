//! The processes using a device, as the sampler reads them (`zesDeviceProcessesGetState`, once
//! every [`PERIOD`] per device of a run that reads telemetry, on the first tick at or after each
//! deadline) and sends them:
//! `Event::Processes` with one [`ProcessSnapshot`] per device and read, stamped on the run's one
//! clock (CLOCK_MONOTONIC ns, the samples' time axis).
//!
//! A snapshot is what the driver listed at that moment, nothing more: which process is which
//! over time (a pid that leaves and comes back, or that the host gives to a new process) is for
//! the consumers to decide (`zescope-model`'s `view::processes`).

use std::time::Duration;

use level_zero_sys::*;

/// Time between the deadlines of one device's reads of its processes (each read on the first
/// tick at or after one).
pub const PERIOD: Duration = Duration::from_secs(1);

/// One process using a device, as the driver reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessUse {
    /// The process id on the host whose driver answered.
    pub pid: u32,
    /// Device memory the process allocated, bytes (not necessarily resident).
    pub memory_bytes: u64,
    /// Shared device memory mapped into the process, bytes.
    pub shared_bytes: u64,
    /// The kinds of engine it uses: `ZES_ENGINE_TYPE_FLAG_*` bits (see [`engine_names`]).
    pub engines: u32,
}

/// The processes one device of a run listed at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessSnapshot {
    /// The run.
    pub run: u64,
    /// Index of the device in the run's `RunConfig::targets` (and `RunInfo::devices`).
    pub target: usize,
    /// When it was read, ns on CLOCK_MONOTONIC (the samples' clock).
    pub at_ns: i64,
    /// Every process the driver listed, in its order.
    pub processes: Vec<ProcessUse>,
}

/// The names of the engine kinds in `flags`, in bit order: "other", "compute", "3d", "media",
/// "copy" (DMA), "render"; bits without a name as "bit N".
pub fn engine_names(flags: u32) -> Vec<String> {
    const NAMES: [(u32, &str); 6] = [
        (ZES_ENGINE_TYPE_FLAG_OTHER, "other"),
        (ZES_ENGINE_TYPE_FLAG_COMPUTE, "compute"),
        (ZES_ENGINE_TYPE_FLAG_3D, "3d"),
        (ZES_ENGINE_TYPE_FLAG_MEDIA, "media"),
        (ZES_ENGINE_TYPE_FLAG_DMA, "copy"),
        (ZES_ENGINE_TYPE_FLAG_RENDER, "render"),
    ];
    (0..32)
        .map(|b| 1u32 << b)
        .filter(|bit| flags & bit != 0)
        .map(|bit| match NAMES.iter().find(|(f, _)| *f == bit) {
            Some((_, n)) => (*n).to_owned(),
            None => format!("bit {}", bit.trailing_zeros()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_are_named_in_bit_order_and_unknown_bits_by_number() {
        assert_eq!(engine_names(0), Vec::<String>::new());
        assert_eq!(engine_names(ZES_ENGINE_TYPE_FLAG_DMA | ZES_ENGINE_TYPE_FLAG_COMPUTE), ["compute", "copy"]);
        assert_eq!(engine_names(1 << 9 | ZES_ENGINE_TYPE_FLAG_MEDIA), ["media", "bit 9"]);
    }
}
