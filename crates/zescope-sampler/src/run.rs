//! A running sampling run: each tick, every stream read by its way (`read/`: exported memory
//! snapshots decoded, streamer reports, tracer entries, telemetry), timestamped, batched into
//! each stream's pieces (`read/batch.rs`) and taken as batches.

use std::time::{Duration, Instant};

use zescope_ze::Device;

use super::errors;
use super::protocol::{ReadPath, RunInfo, SampleBatch, SamplerError};
use super::read::batch::{Pieces, ReadOutcome};
use super::read::{FIRST_CHECK_BUDGET, Io};
use super::teardown::{RunParts, Teardown};

/// How often the device's status is checked (a lost device stops the run).
const STATUS_PERIOD: Duration = Duration::from_millis(100);

pub(crate) struct Run {
    pub info: RunInfo,
    /// What the run holds on the driver, and its ways (`RunParts::ways`).
    parts: RunParts,
    /// Each stream's way (index in `parts.ways`) and its index among that way's streams, in
    /// `info.streams` order.
    streams: Vec<(usize, usize)>,
    pieces: Vec<Pieces>,
    /// Each device of the run, and whether its status is checked: false once
    /// `zeDeviceGetStatus` answered anything but success or DEVICE_LOST (the driver does not
    /// offer it, and lost-device detection is off for that device; an optional call).
    devices: Vec<(Device, bool)>,
    last_status: Instant,
    /// Features turned off during the run, not yet reported.
    notices: Vec<String>,
    /// The processes using each device (runs that read telemetry).
    processes: super::process_reader::ProcessReaders,
}

impl Run {
    pub(crate) fn new(info: RunInfo, parts: RunParts, streams: Vec<(usize, usize)>, devices: Vec<Device>) -> Run {
        // A tracer's events come when kernels run, so no span between them is a hole.
        let hole = crate::timing::hole(info.config.interval);
        let pieces = info
            .streams
            .iter()
            .map(|s| if s.read_path == ReadPath::Tracer { Pieces::default() } else { Pieces::with_holes(hole) })
            .collect();
        Run {
            info,
            parts,
            streams,
            pieces,
            devices: devices.into_iter().map(|d| (d, true)).collect(),
            last_status: Instant::now(),
            notices: Vec::new(),
            processes: Default::default(),
        }
    }

    /// Reads the devices' processes with `readers` on the ticks from now on.
    pub(crate) fn with_processes(mut self, readers: super::process_reader::ProcessReaders) -> Run {
        self.processes = readers;
        self
    }

    /// The process snapshots read since the last call.
    pub(crate) fn take_processes(&mut self) -> Vec<super::protocol::processes::ProcessSnapshot> {
        self.processes.take()
    }

    /// Each stream's first check (`read::Way::check_first`: the layout's magic against one
    /// torn-free snapshot of exported memory), all within `FIRST_CHECK_BUDGET`: a wrong layout is
    /// always refused, never waved through on a torn read.
    pub(crate) fn check_first(&mut self) -> Result<(), SamplerError> {
        let deadline = Instant::now() + FIRST_CHECK_BUDGET;
        let RunParts { devices, ways } = &mut self.parts;
        for (i, &(w, s)) in self.streams.iter().enumerate() {
            let io =
                Io { devices, info: &self.info.streams[i], notices: &mut self.notices, pieces: &mut self.pieces[i] };
            ways[w].check_first(s, io, deadline)?;
        }
        Ok(())
    }

    /// One tick: every stream read by its way, in the run's order, appended to its batch. An
    /// error means a stream cannot be read any more: the run must end.
    pub(crate) fn read(&mut self) -> Result<ReadOutcome, SamplerError> {
        let mut out = ReadOutcome::default();
        let RunParts { devices, ways } = &mut self.parts;
        for (i, &(w, s)) in self.streams.iter().enumerate() {
            let io =
                Io { devices, info: &self.info.streams[i], notices: &mut self.notices, pieces: &mut self.pieces[i] };
            ways[w].read(s, io, &mut out)?;
        }
        self.processes.poll(self.info.run, Instant::now(), &mut self.notices)?;
        Ok(out)
    }

    /// Whether the run is read in batches, not on every tick (`timing.rs`): a stream of it is read
    /// from the driver's buffer (`read::Way::buffered`: the streamer's, the tracer's) and none
    /// needs the tick at every sampling interval (`read::Way::needs_ticks`: exported memory;
    /// telemetry, read at most every 100 ms, does not).
    pub(crate) fn read_in_batches(&self) -> bool {
        let ways = || self.streams.iter().map(|&(w, _)| &self.parts.ways[w]);
        ways().any(|w| w.buffered()) && ways().all(|w| !w.needs_ticks())
    }

    /// The earliest time a way asks to be read besides the run's ticks (`read::Way::next_due`).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.streams.iter().filter_map(|&(w, _)| self.parts.ways[w].next_due()).min()
    }

    /// Waits, at most `timeout`, for the first notification a way offers to wait on
    /// (`read::Way::wait_notified`); `None` when none does.
    pub(crate) fn wait_notified(&mut self, timeout: Duration) -> Option<bool> {
        let mut waited: Vec<usize> = self.streams.iter().map(|&(w, _)| w).collect();
        waited.dedup();
        waited.into_iter().find_map(|w| self.parts.ways[w].wait_notified(timeout))
    }

    /// Each stream's last read before a stop releases it (`read::Way::drain`: the tracer's,
    /// so the events written up to the stop are kept). A failure ends nothing: it is a notice.
    pub(crate) fn drain(&mut self) {
        let RunParts { devices, ways } = &mut self.parts;
        for (i, &(w, s)) in self.streams.iter().enumerate() {
            let io =
                Io { devices, info: &self.info.streams[i], notices: &mut self.notices, pieces: &mut self.pieces[i] };
            ways[w].drain(s, io);
        }
    }

    /// Samples accumulated since the last call, in order; a stream has more than one batch when
    /// a gap fell inside its samples.
    pub(crate) fn take_batches(&mut self) -> Vec<SampleBatch> {
        let run = self.info.run;
        let mut out = Vec::new();
        for (i, p) in self.pieces.iter_mut().enumerate() {
            p.take(run, i, &mut out);
        }
        out
    }

    pub(crate) fn pending_samples(&self) -> usize {
        self.pieces.iter().map(Pieces::pending).sum()
    }

    /// The next samples do not connect to the previous ones (after a pause): samples still
    /// pending close their batch, so the gap falls between them and the next ones.
    pub(crate) fn mark_gap(&mut self) {
        for p in &mut self.pieces {
            p.break_batch();
        }
    }

    /// Every `STATUS_PERIOD`: is each device still there? Only DEVICE_LOST ends the run; any
    /// other answer means the driver does not offer the check, which is then off for the device.
    pub(crate) fn check_device(&mut self, now: Instant) -> Result<(), SamplerError> {
        if now.duration_since(self.last_status) < STATUS_PERIOD {
            return Ok(());
        }
        self.last_status = now;
        for (device, check) in self.devices.iter_mut().filter(|(_, check)| *check) {
            match device.status() {
                Ok(()) => {}
                Err(e) if super::optional::is_fatal(&e) => {
                    return Err(errors::ze(&format!("reading {}", device.info.name), &e));
                }
                Err(e) => {
                    *check = false;
                    self.notices.push(super::optional::off("lost-device detection", &e));
                }
            }
        }
        Ok(())
    }

    /// Features turned off since the last call.
    pub(crate) fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Tears the run down (the one teardown); returns what failed.
    pub(crate) fn stop(self) -> Teardown {
        self.parts.finish()
    }
}
