//! A running sampling run: per stream, snapshot the buffer, decode, timestamp, batch.

use std::time::{Duration, Instant};

use crate::layout::Decoder;
use crate::ze::Device;

use super::errors;
use super::export::os::monotonic_ns;
use super::protocol::{RunInfo, SampleBatch, SamplerError};
use super::teardown::{RunParts, Teardown};

/// How often the device's status is checked (a lost device stops the run).
const STATUS_PERIOD: Duration = Duration::from_millis(100);

pub struct StreamReader {
    buffer: usize,
    decoder: Decoder,
    snapshot: Vec<u8>,
    row: Vec<f64>,
    timestamps: Vec<i64>,
    values: Vec<f64>,
    last_device_ts: Option<u64>,
    /// host ns − device ns, fixed at the first snapshot.
    offset: Option<i64>,
    gap_next: bool,
}

impl StreamReader {
    pub fn new(buffer: usize, decoder: Decoder) -> StreamReader {
        let n = decoder.fields.len();
        StreamReader {
            buffer,
            snapshot: vec![0; decoder.span],
            row: vec![0.0; n],
            decoder,
            timestamps: Vec::new(),
            values: Vec::new(),
            last_device_ts: None,
            offset: None,
            gap_next: false,
        }
    }
}

/// What one tick's read found.
#[derive(Default, Debug, Clone, Copy)]
pub struct ReadOutcome {
    pub samples: u64,
    pub torn: u64,
    pub unchanged: u64,
}

pub struct Run {
    pub info: RunInfo,
    parts: RunParts,
    streams: Vec<StreamReader>,
    device: Device,
    last_status: Instant,
}

impl Run {
    pub fn new(info: RunInfo, parts: RunParts, streams: Vec<StreamReader>, device: Device) -> Run {
        Run { info, parts, streams, device, last_status: Instant::now() }
    }

    /// Checks the layout's magic against the first snapshot of every stream.
    pub fn check_first_snapshot(&mut self) -> Result<(), SamplerError> {
        for s in &mut self.streams {
            let seqlock = s.decoder.seqlock;
            let buf = self.parts.buffers_mut().get_mut(s.buffer);
            if buf.snapshot(seqlock, &mut s.snapshot).is_ok() {
                s.decoder.check_magic(&s.snapshot).map_err(|e| errors::layout(e.to_string()))?;
            }
        }
        Ok(())
    }

    /// One tick: a snapshot of every stream's buffer, decoded and appended to its batch.
    pub fn read(&mut self) -> ReadOutcome {
        let mut out = ReadOutcome::default();
        for s in &mut self.streams {
            let seqlock = s.decoder.seqlock;
            let buf = self.parts.buffers_mut().get_mut(s.buffer);
            if buf.snapshot(seqlock, &mut s.snapshot).is_err() {
                out.torn += 1;
                continue;
            }
            let now = monotonic_ns();
            let ts = match s.decoder.decode(&s.snapshot, &mut s.row) {
                Some(device_ts) => {
                    if s.last_device_ts == Some(device_ts) {
                        out.unchanged += 1;
                        continue; // the producer has not written since the last read
                    }
                    s.last_device_ts = Some(device_ts);
                    let offset = *s.offset.get_or_insert(now - device_ts as i64);
                    device_ts as i64 + offset
                }
                None => now,
            };
            if s.timestamps.last().is_some_and(|&last| ts <= last) {
                out.unchanged += 1;
                continue; // never hand the store a non-increasing timestamp
            }
            s.timestamps.push(ts);
            s.values.extend_from_slice(&s.row);
            out.samples += 1;
        }
        out
    }

    /// Samples accumulated since the last call, one batch per stream that has any.
    pub fn take_batches(&mut self) -> Vec<SampleBatch> {
        let run = self.info.run;
        self.streams
            .iter_mut()
            .enumerate()
            .filter(|(_, s)| !s.timestamps.is_empty())
            .map(|(i, s)| {
                let gap_before = std::mem::take(&mut s.gap_next);
                SampleBatch {
                    run,
                    stream: i,
                    timestamps: std::mem::take(&mut s.timestamps),
                    values: std::mem::take(&mut s.values),
                    gap_before,
                }
            })
            .collect()
    }

    pub fn pending_samples(&self) -> usize {
        self.streams.iter().map(|s| s.timestamps.len()).sum()
    }

    /// The next samples do not connect to the previous ones (after a pause).
    pub fn mark_gap(&mut self) {
        for s in &mut self.streams {
            s.gap_next = true;
        }
    }

    /// Every `STATUS_PERIOD`: is the device still there?
    pub fn check_device(&mut self, now: Instant) -> Result<(), SamplerError> {
        if now.duration_since(self.last_status) < STATUS_PERIOD {
            return Ok(());
        }
        self.last_status = now;
        self.device.status().map_err(|e| errors::ze(&format!("reading {}", self.device.info.name), &e))
    }

    /// Tears the run down (the one teardown); returns what failed.
    pub fn stop(self) -> Teardown {
        self.parts.finish()
    }
}
