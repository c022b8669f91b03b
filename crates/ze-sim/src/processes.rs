//! The processes using a device (`zesDeviceProcessesGetState`), as a schedule over the time since
//! the driver started, the same for every read at the same moment and for every run of the same
//! seed and configuration ([`ProcessesConfig`]).
//!
//! On a GPU (its tiles answer the same list):
//!
//! - a long-lived workload (engines compute and copy) whose memory follows the workload's phase:
//!   3 GiB idle, 5 GiB compute-bound, 8 GiB memory-bound (±1 % noise), 64 MiB shared;
//! - a media process (engines media and copy: 512 MiB, 256 MiB shared) that exits at
//!   `exit_at_ms`; from `reuse_at_ms` on, a NEW process (render engines, 1 GiB) has its pid;
//! - short jobs: every `job_period_ms` one starts with a fresh pid (compute, 256 MiB × 1..3) and
//!   ends half a period later.
//!
//! On an NPU: one inference process (compute, 256 MiB idle, 768 MiB busy). On both, the
//! application itself (its real pid) while it holds a context of this driver, with 2 MiB per
//! context of its own and the exported memory it imported on that device as shared memory
//! (`include_self`).
//!
//! The simulated processes' pids are above Linux's largest pid (`PID_MAX_LIMIT`, 2^22) and
//! depend on the seed, so they never name a process of the host. A call whose count is too small
//! for the list fills what fits and answers ZE_RESULT_ERROR_INVALID_SIZE, as the specification
//! says.

use level_zero_sys::*;
use serde::{Deserialize, Serialize};

use crate::config::DeviceKind;
use crate::instance::{AllocKind, Instance};
use crate::ops_driver::R;
use crate::workload::{Phase, noise, phase_at};

/// The schedule of the simulated processes (`sysman.processes` in a configuration).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProcessesConfig {
    /// When the GPU's media process exits, ms after the driver started (default 6000).
    pub exit_at_ms: u64,
    /// When a new process with the exited one's pid appears, ms after the driver started; after
    /// `exit_at_ms` (default 9000).
    pub reuse_at_ms: u64,
    /// Every this many ms a short job starts on the GPU with a fresh pid and runs for half of it;
    /// 0: no jobs (default 4000).
    pub job_period_ms: u64,
    /// The application itself is listed while it holds a context (default true).
    pub include_self: bool,
}

impl Default for ProcessesConfig {
    fn default() -> Self {
        ProcessesConfig { exit_at_ms: 6000, reuse_at_ms: 9000, job_period_ms: 4000, include_self: true }
    }
}

impl ProcessesConfig {
    /// Rejects a reuse before the exit and job periods too short to be seen, naming the field.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.reuse_at_ms <= self.exit_at_ms {
            return Err(format!(
                "sysman.processes.reuse_at_ms = {} must come after exit_at_ms = {}: a pid is reused only once \
                 its process has exited",
                self.reuse_at_ms, self.exit_at_ms
            ));
        }
        if self.job_period_ms != 0 && self.job_period_ms < 200 {
            return Err(format!(
                "sysman.processes.job_period_ms = {} is neither 0 nor at least 200",
                self.job_period_ms
            ));
        }
        Ok(())
    }
}

/// Linux's largest pid (`PID_MAX_LIMIT` on 64-bit): no host process has a pid above it.
const PID_MAX_LIMIT: u32 = 1 << 22;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn state(pid: u32, mem: u64, shared: u64, engines: zes_engine_type_flags_t) -> zes_process_state_t {
    zes_process_state_t { processId: pid, memSize: mem, sharedSize: shared, engines, ..Default::default() }
}

impl Instance {
    /// The first simulated pid: above any host pid, and different for different seeds.
    fn first_pid(&self) -> u32 {
        PID_MAX_LIMIT + 1000 + (self.config.seed % 1000) as u32 * 1000
    }

    /// The processes using device `d` (or its root) now.
    pub(crate) fn processes(&self, d: usize) -> R<Vec<zes_process_state_t>> {
        if self.shared.is_lost() {
            return Err(ZE_RESULT_ERROR_DEVICE_LOST);
        }
        let root = self.devices[d].parent.unwrap_or(d);
        let t = self.shared.seconds_at(crate::writer::monotonic_ns());
        let ms = (t * 1e3) as u64;
        let cfg = &self.config.sysman.processes;
        let base = self.first_pid();
        let seed = self.shared.seed();
        let n = noise(seed, 9300 + root as u64, ms / 1000);
        let busy = |idle: f64, compute: f64, memory: f64| match phase_at(t) {
            Phase::Idle => idle,
            Phase::Compute => compute,
            Phase::MemoryBound => memory,
        };
        let mut out = Vec::new();
        match self.devices[root].cfg.kind {
            DeviceKind::Gpu => {
                let main = busy(3.0, 5.0, 8.0) * (1.0 + 0.01 * n) * GIB as f64;
                out.push(state(base, main as u64, 64 * MIB, ZES_ENGINE_TYPE_FLAG_COMPUTE | ZES_ENGINE_TYPE_FLAG_DMA));
                if ms < cfg.exit_at_ms {
                    let media = ZES_ENGINE_TYPE_FLAG_MEDIA | ZES_ENGINE_TYPE_FLAG_DMA;
                    out.push(state(base + 1, 512 * MIB, 256 * MIB, media));
                } else if ms >= cfg.reuse_at_ms {
                    out.push(state(base + 1, GIB, 0, ZES_ENGINE_TYPE_FLAG_RENDER));
                }
                // A job per period (none when the period is 0), running for its first half.
                if let Some(k) = ms.checked_div(cfg.job_period_ms)
                    && ms - k * cfg.job_period_ms < cfg.job_period_ms / 2
                {
                    let mem = 256 * MIB * (1 + k % 3);
                    out.push(state(base + 100 + k as u32, mem, 0, ZES_ENGINE_TYPE_FLAG_COMPUTE));
                }
            }
            DeviceKind::Npu => {
                let mem = busy(256.0, 768.0, 768.0) * MIB as f64;
                out.push(state(base + 2, mem as u64, 0, ZES_ENGINE_TYPE_FLAG_COMPUTE));
            }
        }
        if cfg.include_self && !self.contexts.is_empty() {
            let on_root = |dev: usize| self.devices[dev].parent.unwrap_or(dev) == root;
            let imported: u64 = self
                .allocs
                .values()
                .filter_map(|a| match &a.kind {
                    AllocKind::Import { group, .. } if on_root(self.groups[*group].device) => Some(a.size as u64),
                    _ => None,
                })
                .sum();
            out.push(state(std::process::id(), 2 * MIB * self.contexts.len() as u64, imported, 0));
        }
        Ok(out)
    }

    /// `zesDeviceProcessesGetState`: the count, or the list (ERROR_INVALID_SIZE when `count` is
    /// too small; what fits is filled).
    pub(crate) fn processes_get_state(
        &self,
        d: usize,
        count: &mut u32,
        out: Option<&mut [zes_process_state_t]>,
    ) -> R<()> {
        let list = self.processes(d)?;
        let Some(out) = out else {
            *count = list.len() as u32;
            return Ok(());
        };
        let n = list.len().min(out.len());
        out[..n].copy_from_slice(&list[..n]);
        *count = n as u32;
        if n < list.len() { Err(ZE_RESULT_ERROR_INVALID_SIZE) } else { Ok(()) }
    }
}
