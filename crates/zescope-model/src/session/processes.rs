//! The processes that used the sampled devices, as a session file keeps them (`processes`, a
//! list beside `markers`; absent when none were seen, so files without it load as before and a
//! file with it loads in builds that predate it, which ignore it), and the conversion to and from
//! the view's [`Processes`].
//!
//! Each record is one process's life on one device in one run, as `view::processes` tells them
//! apart: a pid listed again after a break is a second record. Its command is kept as it was
//! found on the recording host (`None`: not a process of that host). Samples are
//! `(t_ns, memory_bytes, shared_bytes, engines)`, `t_ns` on the recording's clock (the streams'),
//! strictly increasing; engines are `ZES_ENGINE_TYPE_FLAG_*` bits.

use serde::{Deserialize, Serialize};

use crate::view::processes::{Process, ProcessSample, Processes};

use super::SessionError;

/// One process's use of one device during one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessRecord {
    /// The run it was seen in (`runs[].run`).
    pub run: u64,
    /// The device, as the run named it (`devices[].name`, and the streams' `device`).
    pub device: String,
    /// Its pid on the host whose driver listed it.
    pub pid: u32,
    /// Its command on the recording host; `None`: the pid was not a process of that host.
    #[serde(default)]
    pub command: Option<String>,
    /// `(t_ns, memory_bytes, shared_bytes, engines)`, one per snapshot it was listed in.
    pub samples: Vec<(i64, u64, u64, u32)>,
}

/// Longest command kept in a file.
const MAX_COMMAND: usize = 4096;

/// The records of `p`, in the order first seen.
pub(super) fn records(p: &Processes) -> Vec<ProcessRecord> {
    p.list()
        .iter()
        .map(|x| ProcessRecord {
            run: x.run,
            device: x.device.clone(),
            pid: x.pid,
            command: x.command.clone(),
            samples: x.samples.iter().map(|s| (s.t_ns, s.memory_bytes, s.shared_bytes, s.engines)).collect(),
        })
        .collect()
}

/// The view's processes of a file's records (checked by [`check`] first).
pub(super) fn processes(records: &[ProcessRecord]) -> Processes {
    Processes::from_list(
        records
            .iter()
            .map(|r| Process {
                run: r.run,
                device: r.device.clone(),
                pid: r.pid,
                command: r.command.clone(),
                samples: r
                    .samples
                    .iter()
                    .map(|&(t_ns, memory_bytes, shared_bytes, engines)| ProcessSample {
                        t_ns,
                        memory_bytes,
                        shared_bytes,
                        engines,
                    })
                    .collect(),
                alive: false,
                host_start: None,
            })
            .collect(),
    )
}

/// At most `max_items` records, each with at least one sample in strictly increasing time and a
/// command of at most 4096 bytes; the error names the record and sample.
pub(super) fn check(records: &[ProcessRecord], max_items: usize) -> Result<(), SessionError> {
    if records.len() > max_items {
        return Err(SessionError::invalid(
            "processes",
            format!("{} entries, more than the {max_items} allowed", records.len()),
        ));
    }
    for (i, r) in records.iter().enumerate() {
        if r.samples.is_empty() {
            return Err(SessionError::invalid(format!("processes[{i}].samples"), "a process with no samples"));
        }
        if let Some(j) = r.samples.windows(2).position(|w| w[1].0 <= w[0].0) {
            let msg = format!("at {} ns, not after the sample before it ({} ns)", r.samples[j + 1].0, r.samples[j].0);
            return Err(SessionError::invalid(format!("processes[{i}].samples[{}]", j + 1), msg));
        }
        if r.command.as_ref().is_some_and(|c| c.len() > MAX_COMMAND) {
            return Err(SessionError::invalid(
                format!("processes[{i}].command"),
                format!("longer than {MAX_COMMAND} bytes"),
            ));
        }
    }
    Ok(())
}
