//! Reading the processes that use each device of a run (`zesDeviceProcessesGetState`, Sysman) on
//! the sampler thread, for runs that read telemetry: once every
//! [`PERIOD`](super::protocol::processes::PERIOD) per device, on the first tick at or after each
//! deadline (a whole number of periods after the first read), each read a
//! [`ProcessSnapshot`] stamped with the run's clock, sent with the samples.
//!
//! Optional, as every Sysman call: a device whose driver lacks the entry point, or whose first
//! read fails, gets one notice at the start and no snapshots; one whose reads fail later gets one
//! notice and no more snapshots. Only ZE_RESULT_ERROR_DEVICE_LOST ends the run (the status check
//! would find it anyway). Nothing is held that a teardown would have to release.

use std::time::Instant;

use zescope_ze::{Device, Sysman, ZeError};

use super::errors;
use super::host::monotonic_ns;
use super::optional::{is_fatal, off};
use super::protocol::SamplerError;
use super::protocol::processes::{PERIOD, ProcessSnapshot, ProcessUse};

/// The feature's name in notices.
const FEATURE: &str = "the process list";

/// Reads one device's processes.
struct Reader {
    /// The device's index in the run's targets.
    target: usize,
    /// Its name in the run, for errors.
    name: String,
    /// Put before its notices: its name, when the run has several devices.
    prefix: String,
    sysman: Sysman,
    next: Instant,
    on: bool,
}

fn snapshot(sysman: &Sysman) -> Result<Vec<ProcessUse>, ZeError> {
    Ok(sysman
        .processes()?
        .iter()
        .map(|p| ProcessUse {
            pid: p.processId,
            memory_bytes: p.memSize,
            shared_bytes: p.sharedSize,
            engines: p.engines,
        })
        .collect())
}

/// Every device's reader of a run, and the snapshots not sent yet.
#[derive(Default)]
pub(crate) struct ProcessReaders {
    readers: Vec<Reader>,
    pending: Vec<ProcessSnapshot>,
}

impl ProcessReaders {
    /// Readers for `devices` (the run's, in target order, named as the run names them): each
    /// device's first read happens here, so a device without the call is named in `notices`
    /// before the run starts. Errs only for a lost device.
    pub(crate) fn plan(devices: &[Device], names: &[String], notices: &mut Vec<String>) -> Result<Self, SamplerError> {
        let mut out = ProcessReaders::default();
        let several = devices.len() > 1;
        for (target, (device, name)) in devices.iter().zip(names).enumerate() {
            let prefix = if several { format!("{name}: ") } else { String::new() };
            let say = |n: String| format!("{prefix}{n}");
            if device.ze.api.zesDeviceProcessesGetState.is_none() {
                notices.push(say(format!(
                    "{FEATURE} is off for this run: the driver does not offer zesDeviceProcessesGetState"
                )));
                continue;
            }
            // Without Sysman the telemetry's notice says so already.
            let Ok(sysman) = Sysman::open(device) else { continue };
            match snapshot(&sysman) {
                Ok(_) => {}
                Err(e) if is_fatal(&e) => return Err(errors::ze(&format!("listing the processes of {name}"), &e)),
                Err(e) => {
                    notices.push(say(off(FEATURE, &e)));
                    continue;
                }
            }
            out.readers.push(Reader { target, name: name.clone(), prefix, sysman, next: Instant::now(), on: true });
        }
        Ok(out)
    }

    /// On a tick: reads each device whose deadline has come (a whole number of periods after its
    /// first read: a tick a little early for one reads at the next, and the grid stays). A
    /// failing read turns its device's list off with a notice; a lost device is an error.
    pub(crate) fn poll(&mut self, run: u64, now: Instant, notices: &mut Vec<String>) -> Result<(), SamplerError> {
        for r in self.readers.iter_mut().filter(|r| r.on && now >= r.next) {
            r.next = crate::timing::next_deadline(Some(r.next), now, PERIOD);
            match snapshot(&r.sysman) {
                Ok(processes) => {
                    self.pending.push(ProcessSnapshot { run, target: r.target, at_ns: monotonic_ns(), processes })
                }
                Err(e) if is_fatal(&e) => return Err(errors::ze(&format!("listing the processes of {}", r.name), &e)),
                Err(e) => {
                    r.on = false;
                    notices.push(format!("{}{}", r.prefix, off(FEATURE, &e)));
                }
            }
        }
        Ok(())
    }

    /// The snapshots read since the last call, in the order they were read.
    pub(crate) fn take(&mut self) -> Vec<ProcessSnapshot> {
        std::mem::take(&mut self.pending)
    }
}
