//! Reading a device's telemetry through Sysman: the device's own stream ("Telemetry",
//! read path "sysman") after its groups' when the run asks for it (`RunConfig::telemetry`). It
//! reads no metric group. `sysman.rs` plans the stream from the domains the driver offers and
//! reads them (at most every `sysman::MIN_PERIOD`; `counters.rs`: energy, active time and bytes
//! that wrap or leap); Sysman handles need no release.

mod counters;
mod sysman;

use std::time::Instant;

use super::batch::ReadOutcome;
use super::{Claim, Dev, Group, Io, Opened, Way};
use crate::errors;
use crate::protocol::telemetry::{GROUP, LAYOUT};
use crate::protocol::{ReadPath, SamplerError, Via};
use sysman::TelemetryReader;

// A run of streamers with telemetry is read in batches (`Way::needs_ticks`): telemetry's period
// must not be shorter than a batch interval.
const _: () = assert!(sysman::MIN_PERIOD.as_nanos() >= crate::timing::BATCH_INTERVAL.as_nanos());

/// Sysman telemetry, for a whole run: a reader per device that offers any.
#[derive(Default)]
pub(crate) struct Telemetry {
    readers: Vec<TelemetryReader>,
}

impl Way for Telemetry {
    /// No group: telemetry is a device's.
    fn claim(&self, _dev: &Dev<'_>, _g: &Group<'_>, _via: Via) -> Claim {
        Claim::Passes(None)
    }

    /// The device's telemetry stream, when the run reads telemetry and the device offers any
    /// (what it lacks is in the notices).
    fn open_device(&mut self, dev: &mut Dev<'_>) -> Result<Opened, SamplerError> {
        if !dev.cfg.telemetry {
            return Ok(Opened::default());
        }
        let planned = sysman::plan(dev.device, dev.cfg.interval, dev.notices)
            .map_err(|e| errors::ze(&format!("reading the telemetry of {}", dev.device.info.name), &e))?;
        let Some((reader, series)) = planned else { return Ok(Opened::default()) };
        let info = dev.stream(GROUP.to_owned(), LAYOUT.to_owned(), series, ReadPath::Sysman);
        self.readers.push(reader);
        Ok(Opened::stream(self.readers.len() - 1, info))
    }

    /// One sample when its period has passed since the last.
    fn read(&mut self, s: usize, io: Io<'_>, out: &mut ReadOutcome) -> Result<(), SamplerError> {
        out.samples += self.readers[s]
            .read(Instant::now(), io.notices, io.pieces)
            .map_err(|e| errors::ze(&format!("reading the telemetry of {}", io.info.device), &e))?;
        Ok(())
    }

    /// No: telemetry is read at most every `sysman::MIN_PERIOD` (100 ms, five batch intervals),
    /// whatever the sampling interval, so it does not keep a run of streamers on every tick; read
    /// in batches, the run wakes when its period is due ([`Way::next_due`]).
    fn needs_ticks(&self) -> bool {
        false
    }

    /// The earliest of its readers' next reads: a run read in batches wakes for it too, so
    /// telemetry keeps its period however seldom the streamers need reading.
    fn next_due(&self) -> Option<Instant> {
        self.readers.iter().filter_map(TelemetryReader::next_due).min()
    }

    /// Nothing: Sysman handles are not released.
    fn release(self: Box<Self>, _errors: &mut Vec<String>) {}
}
