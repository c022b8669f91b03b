//! Reading a metric group with the metric tracer and its decoder, for tracer-based
//! groups (sampling type EXP_TRACER_BASED), which nothing else reads. Before the activation each
//! group's exported memory is imported (the order of Intel's conformance suite); after it, per
//! device one tracer on all of the device's tracer-based groups, its decoder, and the tracer
//! enabled (`open.rs`: the tracers and decoders; `reader.rs`: how entries become samples). At a stop the
//! tracer is read one last time; at the teardown every tracer is disabled, every decoder
//! destroyed, then every tracer, before the imports are freed.
//!
//! Without the tracer's entry points (a loader older than API 1.10) its groups are left out of
//! the run with one notice per device; a driver that refuses any step turns the tracer off for
//! the run with a notice (an optional feature; DEVICE_LOST ends the setup).

mod open;
mod reader;

use zescope_ze::MetricGroup;

use super::batch::ReadOutcome;
use super::export::{export_of, exports, import, validate_export};
use super::{Claim, Dev, Group, Io, Opened, Prepared, Way};
use crate::errors;
use crate::protocol::{GroupEntry, ReadPath, SamplerError, Via};
use open::{Tracers, describe};
use reader::{TracerReader, plan};

/// The metric tracer, for a whole run: every tracer and decoder, a reader per stream (one per
/// device), and while a device is set up, its tracer-based groups.
#[derive(Default)]
pub(crate) struct Tracer {
    tracers: Tracers,
    readers: Vec<TracerReader>,
    /// The device being set up, and its tracer-based groups to open the tracer on.
    device: Option<usize>,
    groups: Vec<MetricGroup>,
    /// The last device whose tracer was opened (once, at its first tracer-based group).
    opened_on: Option<usize>,
    /// The last device told the tracer is off.
    told_off: Option<usize>,
}

impl Way for Tracer {
    /// A tracer-based group, under `tracer`.
    fn via(&self) -> Option<Via> {
        Some(Via::Tracer)
    }

    fn lists(&self, g: &GroupEntry) -> Option<Via> {
        g.tracer.then_some(Via::Tracer)
    }

    /// Every tracer-based group, under `auto` or `tracer`; a tracer-based group is refused under
    /// another choice, and any other group under `tracer`.
    fn claim(&self, _dev: &Dev<'_>, g: &Group<'_>, via: Via) -> Claim {
        let name = &g.group.info.name;
        match (g.group.info.tracer_based(), via) {
            (true, Via::Auto | Via::Tracer) => Claim::Reads,
            (true, _) => Claim::Refuses(errors::config(
                format!("metric group {name}: {}", zescope_ze::TRACER_BASED_UNREAD),
                Some("read it with the metric tracer (`--via tracer` or auto)"),
            )),
            (false, Via::Tracer) => Claim::Refuses(errors::config(
                format!("metric group {name} is not tracer-based: the metric tracer cannot read it"),
                Some("read it through its exported memory or the streamer (`--via auto`)"),
            )),
            (false, _) => Claim::Passes(None),
        }
    }

    /// Imports the group's exported memory (the workload writes its events there); without the
    /// tracer's entry points, leaves the group out (one notice per device).
    fn before_activation(&mut self, dev: &mut Dev<'_>, g: &Group<'_>) -> Result<Prepared, SamplerError> {
        let name = &g.group.info.name;
        if let Err(e) = zescope_ze::tracer::available(&dev.device.ze) {
            if self.told_off != Some(dev.d) {
                self.told_off = Some(dev.d);
                dev.notices.push(format!(
                    "the metric tracer is off for this run ({e}): tracer-based group {name} is not read, the rest of \
                     the run goes on"
                ));
            }
            return Ok(Prepared::Skip(errors::config(
                format!("the chosen groups are tracer-based and the metric tracer is not offered ({e})"),
                Some("use a Level Zero loader of API 1.10 or newer (`zescope doctor` shows the loader's version)"),
            )));
        }
        if exports(g.group, g.metrics) {
            let (fd, size) = export_of(g.group, g.metrics)?;
            validate_export(name, fd, size)?;
            import(dev.parts, fd, size, name)?;
        }
        if self.device != Some(dev.d) {
            self.device = Some(dev.d);
            self.groups.clear();
        }
        self.groups.push(g.group.clone());
        Ok(Prepared::Ready)
    }

    /// At the device's first tracer-based group: creates, enables and plans the tracer on all of
    /// them. The group is read by it whether or not the tracer gives a stream.
    fn open(&mut self, dev: &mut Dev<'_>, _g: &Group<'_>) -> Result<Opened, SamplerError> {
        let read = Opened { reads: true, ..Opened::default() };
        if self.opened_on == Some(dev.d) {
            return Ok(read);
        }
        self.opened_on = Some(dev.d);
        let traced: Vec<&MetricGroup> = self.groups.iter().collect();
        let names: Vec<&str> = traced.iter().map(|g| g.info.name.as_str()).collect();
        let names = names.join(" + ");
        let i = match self.tracers.open(&dev.parts.dc.ctx, dev.device, &traced) {
            Ok(i) => i,
            Err(e) => {
                let z = e.ze();
                if crate::optional::is_fatal(&z) {
                    return Err(errors::ze(&format!("starting the metric tracer of {names}"), &z));
                }
                dev.notices.push(format!(
                    "{} (tracer-based group {names} is not read)",
                    crate::optional::off("the metric tracer", &z)
                ));
                return Ok(read);
            }
        };
        let (series, columns) = plan(self.tracers.decodable(i), dev.wanted());
        if series.is_empty() {
            return Ok(read);
        }
        let info = dev.stream(names, describe(self.tracers.notify_bytes(i)), series, ReadPath::Tracer);
        self.readers.push(TracerReader::new(i, dev.device.clone(), columns));
        Ok(Opened::stream(self.readers.len() - 1, info))
    }

    /// What the tracer collected since the last read, one sample per entry time (after a gap
    /// where the driver dropped events).
    fn read(&mut self, s: usize, io: Io<'_>, out: &mut ReadOutcome) -> Result<(), SamplerError> {
        self.readers[s]
            .read(&mut self.tracers, io.notices, io.pieces)
            .map_err(|e| errors::ze(&format!("reading the metric tracer of {}", io.info.group), &e))?
            .count(out);
        Ok(())
    }

    /// One last read before a stop disables the tracer, so the events written up to the stop
    /// are kept; a failure ends nothing (the run is stopping): it is a notice.
    fn drain(&mut self, s: usize, io: Io<'_>) {
        if let Err(e) = self.readers[s].read(&mut self.tracers, io.notices, io.pieces) {
            io.notices.push(format!(
                "the last read of the metric tracer of {} failed: {e}; events after the previous read are lost",
                io.info.group
            ));
        }
    }

    /// The tracer's entries wait in its buffer with their own times: a run of tracers is read in
    /// batches.
    fn buffered(&self) -> bool {
        true
    }

    /// Disables every tracer, then destroys every decoder, then every tracer.
    fn release(self: Box<Self>, errors: &mut Vec<String>) {
        self.tracers.release(errors);
    }
}
