//! Reading a metric group's exported memory (`ZET_experimental_metric_export_memory`) through a
//! layout: the way zescope is built for. The group's (or its metrics' one shared) `fd` and `size`
//! are queried and checked, the buffer is imported into the device's context once per file
//! (`dmabuf`: mapped, read from its file, or copied through the device), and each tick takes a
//! torn-free snapshot of it, decodes it with the layout and stamps it with the device's time
//! (mapped onto the host clock) where the layout has a timestamp.
//!
//! It reads every group that exports memory (unless `--via` asks otherwise), and beside the
//! metric tracer a tracer-based group whose memory a layout names. What it holds — imports and
//! mappings — belongs to the device (`RunParts`), shared with the tracer's imports and released
//! after every way. `memory.rs` queries, checks and imports a group's exported memory (the
//! tracer's imports too); `clock.rs` places the layout's device timestamps on the host clock.

mod clock;
mod memory;

use std::time::{Duration, Instant};

use crate::layout::Decoder;

use super::batch::ReadOutcome;
use super::{Claim, Dev, Group, Io, Opened, Way};
use crate::dmabuf::ReadError;
use crate::errors;
use crate::host::monotonic_ns;
use crate::protocol::{GroupEntry, SamplerError, SeriesInfo, Via};
use clock::{Clock, Placed};
pub(crate) use memory::{export_of, exports, import, validate_export};
use memory::{metric_descs, time_based};

/// Reads one group's exported memory at each tick, through its layout.
pub(crate) struct ExportReader {
    /// The device (in `RunParts`) whose import `buffer` is.
    device: usize,
    buffer: usize,
    decoder: Decoder,
    snapshot: Vec<u8>,
    row: Vec<f64>,
    /// Device time onto host time; `None` when the layout has no timestamp (host read time is
    /// used).
    clock: Option<Clock>,
}

impl ExportReader {
    fn new(device: usize, buffer: usize, decoder: Decoder) -> ExportReader {
        let n = decoder.fields.len();
        ExportReader {
            device,
            buffer,
            snapshot: vec![0; decoder.span],
            row: vec![0.0; n],
            clock: decoder.timestamp.as_ref().map(Clock::new),
            decoder,
        }
    }
}

/// Exported memory, for a whole run: a reader per stream.
#[derive(Default)]
pub(crate) struct Export {
    readers: Vec<ExportReader>,
}

impl Way for Export {
    /// A group whose exported memory a layout reads (not a tracer-based one: the tracer's),
    /// under `export`.
    fn via(&self) -> Option<Via> {
        Some(Via::Export)
    }

    fn lists(&self, g: &GroupEntry) -> Option<Via> {
        (!g.tracer && g.export_unavailable.is_none() && g.unavailable.is_none()).then_some(Via::Export)
    }

    /// Groups that export memory, under `auto` or `export`; a group that exports none is refused
    /// under `export` (and passed by under `auto`, saying why). Tracer-based groups are the
    /// tracer's.
    fn claim(&self, _dev: &Dev<'_>, g: &Group<'_>, via: Via) -> Claim {
        if g.group.info.tracer_based() {
            return Claim::Passes(None);
        }
        match (via, exports(g.group, g.metrics)) {
            (Via::Auto | Via::Export, true) => Claim::Reads,
            (Via::Export, false) => match export_of(g.group, g.metrics) {
                Ok(_) => Claim::Reads,
                Err(mut e) => {
                    if time_based(g.group) {
                        e.hint = Some("read it with the time-based streamer instead (`--via streamer` or auto)".into());
                    }
                    Claim::Refuses(e)
                }
            },
            (Via::Auto, false) => match export_of(g.group, g.metrics) {
                Ok(_) => Claim::Reads,
                Err(e) => Claim::Passes(Some(e)),
            },
            _ => Claim::Passes(None),
        }
    }

    /// The memory of a tracer-based group is read too where a layout names the group.
    fn also(&self, dev: &Dev<'_>, g: &Group<'_>) -> bool {
        g.group.info.tracer_based() && dev.layouts.select_naming_group(&dev.owner(g.group)).is_some()
    }

    fn open(&mut self, dev: &mut Dev<'_>, g: &Group<'_>) -> Result<Opened, SamplerError> {
        let (group, metrics) = (g.group, g.metrics);
        let name = &group.info.name;
        let (fd, size) = export_of(group, metrics)?;
        validate_export(name, fd, size)?;
        let owner = dev.owner(group);
        let layout = dev.layouts.select(&owner).ok_or_else(|| {
            errors::layout(format!(
                "no layout matches metric group {name} on {} (driver {})",
                dev.device.info.name, owner.driver_uuid
            ))
        })?;
        let mut decoder =
            Decoder::new(layout, name, &metric_descs(metrics), size).map_err(|e| errors::layout(e.to_string()))?;
        if !dev.target.custom_group {
            let chosen = &dev.target.metrics;
            let wanted: Vec<String> =
                chosen.iter().filter(|m| metrics.iter().any(|x| &x.info.name == *m)).cloned().collect();
            if !chosen.is_empty() && wanted.is_empty() {
                return Ok(Opened::default());
            }
            decoder.select(&wanted).map_err(|e| errors::layout(e.to_string()))?;
        }
        let buffer = import(dev.parts, fd, size, name)?;
        let imported = dev.parts.buffers.get_mut(buffer).size;
        if decoder.span > imported {
            return Err(errors::export(format!(
                "metric group {name} reports {size} bytes of exported memory, but the same buffer was imported with \
                 {imported} bytes for another group, less than its layout reads ({} bytes)",
                decoder.span
            )));
        }
        let read_path = dev.parts.buffers.get_mut(buffer).read_path();
        let series = decoder
            .fields
            .iter()
            .map(|f| SeriesInfo {
                name: f.name.clone(),
                description: f.description.clone(),
                unit: f.unit.clone(),
                kind: f.kind,
                wrap: if f.kind.is_running_total() { f.value.wrap().map(|w| w * f.scale.abs()) } else { None },
            })
            .collect();
        let info = dev.stream(name.clone(), decoder.layout.clone(), series, read_path);
        self.readers.push(ExportReader::new(dev.d, buffer, decoder));
        Ok(Opened::stream(self.readers.len() - 1, info))
    }

    /// Checks the layout's magic against one torn-free snapshot, trying until `deadline`: a
    /// wrong layout is always refused, never waved through on a torn read.
    fn check_first(&mut self, s: usize, io: Io<'_>, deadline: Instant) -> Result<(), SamplerError> {
        let r = &mut self.readers[s];
        let seqlock = r.decoder.seqlock;
        let buf = io.devices[r.device].buffers.get_mut(r.buffer);
        loop {
            match buf.snapshot(seqlock, &mut r.snapshot) {
                Ok(()) => break,
                Err(ReadError::Failed(m)) => {
                    return Err(errors::export(format!("reading {}: {m}", r.decoder.layout)));
                }
                Err(ReadError::Torn) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
                Err(ReadError::Torn) => {
                    return Err(errors::export(format!(
                        "no consistent snapshot of the exported memory within {:?}: its sequence word (layout {}) \
                         never held still",
                        super::FIRST_CHECK_BUDGET,
                        r.decoder.layout
                    )));
                }
            }
        }
        r.decoder.check_magic(&r.snapshot).map_err(|e| errors::layout(e.to_string()))
    }

    /// A snapshot of the buffer, decoded and appended; a torn one is counted and skipped, one
    /// whose device time has not moved too.
    fn read(&mut self, s: usize, io: Io<'_>, out: &mut ReadOutcome) -> Result<(), SamplerError> {
        let r = &mut self.readers[s];
        let seqlock = r.decoder.seqlock;
        let buf = io.devices[r.device].buffers.get_mut(r.buffer);
        match buf.snapshot(seqlock, &mut r.snapshot) {
            Ok(()) => {}
            Err(ReadError::Torn) => {
                out.torn += 1;
                return Ok(());
            }
            Err(ReadError::Failed(m)) => {
                return Err(errors::export(format!("reading {}: {m}", io.info.group)));
            }
        }
        let now = monotonic_ns();
        let device_ts = r.decoder.decode(&r.snapshot, &mut r.row);
        let ts = match (&mut r.clock, device_ts) {
            (Some(clock), Some(raw)) => {
                let before = clock.resets;
                let placed = clock.place(raw, now);
                out.clock_resets += clock.resets - before;
                match placed {
                    Placed::Unchanged => {
                        out.unchanged += 1;
                        return Ok(()); // the producer has not written since the last read
                    }
                    Placed::At { host_ns, gap } => {
                        if gap {
                            io.pieces.break_batch();
                        }
                        host_ns
                    }
                }
            }
            _ => now,
        };
        if io.pieces.push(ts, &r.row) {
            out.samples += 1;
        } else {
            out.unchanged += 1;
        }
        Ok(())
    }

    /// Nothing of its own: its imports are the device's, freed after every way.
    fn release(self: Box<Self>, _errors: &mut Vec<String>) {}
}
