//! The simulated device built into zescope: ze-sim's process-wide instance (configured by
//! `ZE_SIM_CONFIG`), handed to the safe layer as an in-process driver. Outside tests this is the
//! only place zescope names ze-sim: the crates below take the driver as a
//! [`zescope_ze::BuiltIn`] and depend on no simulator.

/// Starts the built-in simulated device: the [`zescope_ze::BuiltIn`] of `zescope`, for `--source
/// sim` and `auto`'s fallback (`Loader::open`, the sampler, `zescope doctor`).
pub fn built_in() -> Result<zescope_ze::InProcess, String> {
    ze_sim::in_process().map_err(|e| e.to_string())
}
