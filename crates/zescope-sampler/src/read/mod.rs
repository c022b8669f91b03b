//! The ways a run reads, behind one trait: [`Way`]. Each way is one folder here — exported
//! memory (`export/`: its reader, its queries of the driver's export, its device clock), the
//! metric tracer (`tracer/`: tracers and decoders, their reader), the time-based metric streamer
//! (`streamer/`: streamers and their events, the report plan, their reader), Sysman telemetry
//! (`telemetry/`: the domains and their counters) — and one line of [`ways`], the list a run is
//! built from and the inventory asks. What the ways share beside the trait: the samples a read
//! leaves (`batch.rs`), how driver objects are given back each once (`release.rs`), device report
//! times on the host clock (`report_time.rs`, the streamer's and the tracer's).
//!
//! A way takes part in a run's whole life:
//! - **before a run**, in the inventory: which listed groups it reads ([`Way::lists`], the
//!   inventory's `GroupEntry::ways` in the list's order, which the pickers read);
//! - **setup**, per device, each group in the target's order: it says whether it reads the group
//!   ([`Way::claim`], asked in the list's order: the first that reads a group takes it), sets up
//!   what must exist before the groups are activated ([`Way::before_activation`]: the tracer
//!   imports its groups' exported memory), and after the activation opens the group's streams
//!   ([`Way::open`]); then the device's own streams ([`Way::open_device`]: telemetry);
//! - **each tick**, one stream at a time in the run's order: [`Way::read`] appends its samples to
//!   the stream's [`Pieces`] and counts them in the tick's [`ReadOutcome`]; before the first tick
//!   [`Way::check_first`] (the layout's magic in exported memory), before a stop
//!   [`Way::drain`] (the tracer's last read);
//! - **teardown**: [`Way::release`] gives back every driver object the way holds (streamers and
//!   their events, tracers and decoders), before any import is freed. [`release`] is the only
//!   maker of the [`WaysReleased`] proof that freeing imports and deactivating groups require
//!   (`teardown.rs`), and it releases the ways in the reverse of the list's order.
//!
//! What a way holds on the driver lives in the way itself, and the ways live in the run's
//! `RunParts`, the one owner of everything a run holds: a teardown after an error, a panic or a
//! failed free reaches them as it reaches the imports. What two ways share — a device's
//! context, its activated groups, its imports of exported memory (the tracer's groups' memory
//! and the export way's buffers are deduplicated together) — stays with the device in
//! `RunParts` and is released after every way, in the order `teardown.rs` documents.

pub(crate) mod batch;
pub(crate) mod export;
mod release;
mod report_time;
pub(crate) mod streamer;
pub(crate) mod telemetry;
pub(crate) mod tracer;

use std::time::{Duration, Instant};

use crate::layout::{LayoutSet, Owner};
use zescope_ze::{Device, Metric, MetricGroup};

use super::protocol::{GroupEntry, ReadPath, RunConfig, SamplerError, SeriesInfo, StreamInfo, Target, Via};
use super::teardown::DeviceParts;
use batch::{Pieces, ReadOutcome};

/// How long the first checks of a run's streams ([`Way::check_first`]: one torn-free snapshot of
/// each exported buffer) may take, all together.
pub(crate) const FIRST_CHECK_BUDGET: Duration = Duration::from_millis(500);

/// Every way to read, in the order a group is offered to them. The tracer first (a
/// tracer-based group is only the tracer's), exported memory before the streamer (`auto`
/// prefers it); telemetry reads devices, not groups.
pub(crate) fn ways() -> Vec<Box<dyn Way>> {
    vec![
        Box::new(tracer::Tracer::default()),
        Box::new(export::Export::default()),
        Box::new(streamer::Streamer::default()),
        Box::new(telemetry::Telemetry::default()),
    ]
}

/// One way of reading, for a whole run: which listed groups it reads, what it sets up on each
/// device, the streams it reads, and what it gives back at the teardown. A stream is named by
/// its index among the way's own (as [`Opened::streams`] gave it).
pub(crate) trait Way {
    /// The `--via` word that asks for this way (`None`: it reads devices, not groups, as
    /// telemetry): what `--via`'s help lists, in [`ways`]' order ([`group_ways`]).
    fn via(&self) -> Option<Via> {
        None
    }

    /// Before any run, from what the inventory found of a group (`g.ways` still empty): the
    /// `--via` word that asks for this way if it would read the group, else `None` (a way that
    /// reads no group, as telemetry). It agrees with [`Way::claim`]: a way listed reads the group
    /// under its word, and under `auto` when no way before it in [`ways`] lists it.
    fn lists(&self, _g: &GroupEntry) -> Option<Via> {
        None
    }

    /// Whether it reads `g` on `dev` under `via`.
    fn claim(&self, dev: &Dev<'_>, g: &Group<'_>, via: Via) -> Claim;

    /// Whether it reads `g` too, beside the way that claimed it.
    fn also(&self, _dev: &Dev<'_>, _g: &Group<'_>) -> bool {
        false
    }

    /// Before the device's groups are activated, for each group it claimed: what must exist
    /// first.
    fn before_activation(&mut self, _dev: &mut Dev<'_>, _g: &Group<'_>) -> Result<Prepared, SamplerError> {
        Ok(Prepared::Ready)
    }

    /// After the activation, for each group it claimed (or reads too), in the target's order:
    /// its streams.
    fn open(&mut self, _dev: &mut Dev<'_>, _g: &Group<'_>) -> Result<Opened, SamplerError> {
        Ok(Opened::default())
    }

    /// After every group of the device: the device's own streams.
    fn open_device(&mut self, _dev: &mut Dev<'_>) -> Result<Opened, SamplerError> {
        Ok(Opened::default())
    }

    /// Before the run's first tick: is stream `s` what it was set up to read? Waits at most
    /// until `deadline` (one budget for every stream of the run); an error ends the setup.
    fn check_first(&mut self, _s: usize, _io: Io<'_>, _deadline: Instant) -> Result<(), SamplerError> {
        Ok(())
    }

    /// One tick of stream `s`: its samples appended to `io.pieces`, counted in `out`. An error
    /// means the stream cannot be read any more: the run ends.
    fn read(&mut self, s: usize, io: Io<'_>, out: &mut ReadOutcome) -> Result<(), SamplerError>;

    /// The last read of stream `s` before a stop releases it (a failure is a notice).
    fn drain(&mut self, _s: usize, _io: Io<'_>) {}

    /// Whether its streams are read from the driver's buffer, every sample with the hardware's
    /// own time (the streamer's reports, the tracer's entries), so a run of them is read in
    /// batches (`timing.rs`) rather than on every tick, unless another stream
    /// [needs the ticks](Way::needs_ticks).
    fn buffered(&self) -> bool {
        false
    }

    /// Whether its streams must be read at every sampling interval: a live snapshot read at the
    /// sampling rate (exported memory). Those read from the driver's buffer need not, nor a
    /// stream read at most every period longer than a batch interval (telemetry): a run of such
    /// streams only is read in batches.
    fn needs_ticks(&self) -> bool {
        !self.buffered()
    }

    /// When a stream of it must next be read, where that is not the run's tick nor its batch
    /// deadline (telemetry's period in a run read in batches); `None`: no such time.
    fn next_due(&self) -> Option<Instant> {
        None
    }

    /// Waits, at most `timeout`, for the driver's notification that data waits to be read:
    /// `Some(true)` when it came, `Some(false)` when the time ran out, `None` when the way has
    /// no notification to wait on (the caller sleeps to its deadline instead).
    fn wait_notified(&mut self, _timeout: Duration) -> Option<bool> {
        None
    }

    /// Gives back every driver object it holds, each once, attempting all of them (failures go
    /// to `errors`). Called only by [`release`], before any import is freed.
    fn release(self: Box<Self>, errors: &mut Vec<String>);
}

/// A way's answer to "do you read this group?".
pub(crate) enum Claim {
    /// It does.
    Reads,
    /// It does not, and says why when no way does (`None`: nothing to say). The first reason
    /// is the error; the later ones add their message to it as a clause ("..., and it has no
    /// time-based sampling for the metric streamer").
    Passes(Option<SamplerError>),
    /// The group cannot be read as the run asks: the setup ends with this error.
    Refuses(SamplerError),
}

/// What [`Way::before_activation`] decided for a group.
pub(crate) enum Prepared {
    /// Activate it and open it.
    Ready,
    /// Leave it out of the run (a notice says why); the error is the device's if nothing else
    /// of it is read.
    Skip(SamplerError),
}

/// What [`Way::open`] (or [`Way::open_device`]) gave.
#[derive(Default)]
pub(crate) struct Opened {
    /// New streams: their index among the way's, and what each announces (`index` is set by
    /// the setup).
    pub streams: Vec<(usize, StreamInfo)>,
    /// The group is read even without a stream of its own (a device's one tracer reads all of
    /// its tracer-based groups).
    pub reads: bool,
    /// The driver refused the group: it is left out of the run (and of the run's config), with
    /// a notice; the error is the device's if nothing else of it is read.
    pub refused: Option<SamplerError>,
}

impl Opened {
    /// One stream.
    pub(crate) fn stream(s: usize, info: StreamInfo) -> Opened {
        Opened { streams: vec![(s, info)], reads: true, refused: None }
    }
}

/// The `--via` word of every way that reads groups, in the order a group is offered to them:
/// under `auto` a group is read by the first of them that reads it. From the ways themselves
/// (`Way::via`), so `--via`'s help names a new way without being edited.
pub fn group_ways() -> Vec<Via> {
    ways().iter().filter_map(|w| w.via()).collect()
}

/// The ways that would read a group described as `g` (its `ways` left aside), each named by its
/// `--via` word, the one `auto` takes first: what the inventory fills [`GroupEntry::ways`] with,
/// for a caller that describes a group without a sampler (`zescope list`).
pub fn listed_ways(g: &GroupEntry) -> Vec<Via> {
    listing(&ways(), g)
}

/// The ways that would read the group the inventory lists as `g` (each named by its `--via`
/// word), in the order [`ways`] offers a group to them: the first reads it under `auto`.
pub(crate) fn listing(ways: &[Box<dyn Way>], g: &GroupEntry) -> Vec<Via> {
    ways.iter().filter_map(|w| w.lists(g)).collect()
}

/// The way that reads `g` under `via`: the first of `ways` that claims it; else the error of
/// the first that refuses it, or of the reasons the ways passed it by.
pub(crate) fn resolve(ways: &[Box<dyn Way>], dev: &Dev<'_>, g: &Group<'_>, via: Via) -> Result<usize, SamplerError> {
    decide(ways.iter().map(|w| w.claim(dev, g, via))).map_err(|why| {
        why.unwrap_or_else(|| {
            super::errors::config(format!("metric group {}: no way zescope knows reads it", g.group.info.name), None)
        })
    })
}

/// The index of the first claim that reads, asking no further; else the first refusal, or the
/// reasons given so far joined into one error (`None`: no reason given).
fn decide(claims: impl Iterator<Item = Claim>) -> Result<usize, Option<SamplerError>> {
    let mut why: Option<SamplerError> = None;
    for (i, claim) in claims.enumerate() {
        match claim {
            Claim::Reads => return Ok(i),
            Claim::Refuses(e) => return Err(Some(e)),
            Claim::Passes(Some(e)) => match &mut why {
                None => why = Some(e),
                Some(w) => w.message = format!("{}, and {}", w.message, e.message),
            },
            Claim::Passes(None) => {}
        }
    }
    Err(why)
}

/// Proof that every way of a run gave back its driver objects: what freeing imports and
/// deactivating groups require. Only [`release`] makes one.
pub(crate) struct WaysReleased(());

/// Releases every way, in the reverse of [`ways`]' order (telemetry, streamers, exported
/// memory, tracers: the streamers close before the tracers are disabled, as the teardown has
/// always done; the rules order nothing between them).
pub(crate) fn release(ways: Vec<Box<dyn Way>>, errors: &mut Vec<String>) -> WaysReleased {
    for w in ways.into_iter().rev() {
        w.release(errors);
    }
    WaysReleased(())
}

/// One metric group being set up, as the driver lists it.
pub(crate) struct Group<'a> {
    pub group: &'a MetricGroup,
    pub metrics: &'a [Metric],
}

/// One device of a run being set up, as a way sees it.
pub(crate) struct Dev<'a> {
    /// Its index in the run (`RunParts`, `RunConfig::targets`).
    pub d: usize,
    pub device: &'a Device,
    /// Its name in the run (`RunInfo::devices`).
    pub name: &'a str,
    /// Its driver's UUID as a string (layouts match it).
    pub driver_uuid: String,
    pub simulated: bool,
    pub layouts: &'a LayoutSet,
    pub cfg: &'a RunConfig,
    /// The run's batch interval, should it be read in batches (`Options::batch_interval`).
    pub batch: std::time::Duration,
    pub target: &'a Target,
    /// Its context, activation and imports.
    pub parts: &'a mut DeviceParts,
    /// The run's notices.
    pub notices: &'a mut Vec<String>,
}

impl Dev<'_> {
    /// Whose layout reads `g`'s memory.
    pub(crate) fn owner<'b>(&'b self, g: &'b MetricGroup) -> Owner<'b> {
        Owner {
            simulated: self.simulated,
            driver_uuid: &self.driver_uuid,
            device: &self.device.info.name,
            group: &g.info.name,
        }
    }

    /// The metrics chosen of a predefined group (empty: all; a created group has all of its own).
    pub(crate) fn wanted(&self) -> &[String] {
        if self.target.custom_group { &[] } else { &self.target.metrics }
    }

    /// One stream of this device, read by `read_path`: `group`'s (or the device's own), `layout`
    /// saying how it is read, its `series` (its `index` is set by the setup).
    pub(crate) fn stream(
        &self,
        group: String,
        layout: String,
        series: Vec<SeriesInfo>,
        read_path: ReadPath,
    ) -> StreamInfo {
        StreamInfo { index: 0, target: self.d, device: self.name.to_owned(), group, layout, series, read_path }
    }
}

/// What a tick's read of one stream works with.
pub(crate) struct Io<'a> {
    /// Every device's context, activation and imports.
    pub devices: &'a mut [DeviceParts],
    /// The stream, as announced.
    pub info: &'a StreamInfo,
    /// The run's notices.
    pub notices: &'a mut Vec<String>,
    /// The stream's samples not sent yet.
    pub pieces: &'a mut Pieces,
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use crate::errors;

    #[test]
    fn a_group_goes_to_the_first_way_that_reads_it_and_no_further() {
        let asked = RefCell::new(0);
        let claims = [Claim::Passes(None), Claim::Reads, Claim::Refuses(errors::config("not asked", None))];
        let chosen = decide(claims.into_iter().inspect(|_| *asked.borrow_mut() += 1));
        assert_eq!(chosen.map_err(|_| ()), Ok(1));
        assert_eq!(*asked.borrow(), 2, "the ways after the one that reads are not asked");
        let e = decide([Claim::Refuses(errors::config("refused", Some("do this"))), Claim::Reads].into_iter())
            .expect_err("a refusal ends the choice")
            .expect("with its error");
        assert_eq!((e.message.as_str(), e.hint.as_deref()), ("refused", Some("do this")));
    }

    #[test]
    fn when_no_way_reads_a_group_their_reasons_make_one_error() {
        let first = errors::export("metric group X cannot be sampled: it exports no memory".to_owned());
        let claims = [
            Claim::Passes(Some(first)),
            Claim::Passes(None),
            Claim::Passes(Some(errors::config("it has no time-based sampling for the metric streamer", None))),
        ];
        let e = decide(claims.into_iter()).expect_err("nothing reads it").expect("a reason");
        assert_eq!(
            e.message,
            "metric group X cannot be sampled: it exports no memory, and it has no time-based sampling for the metric \
             streamer"
        );
        assert_eq!(e.kind, errors::export(String::new()).kind, "the first reason's kind");
        assert!(decide([Claim::Passes(None)].into_iter()).expect_err("nothing reads it").is_none());
    }

    /// A way that only records when it is released.
    struct Logged(&'static str, Rc<RefCell<Vec<&'static str>>>);

    impl Way for Logged {
        fn claim(&self, _: &Dev<'_>, _: &Group<'_>, _: Via) -> Claim {
            Claim::Passes(None)
        }
        fn read(&mut self, _: usize, _: Io<'_>, _: &mut ReadOutcome) -> Result<(), SamplerError> {
            Ok(())
        }
        fn release(self: Box<Self>, _: &mut Vec<String>) {
            self.1.borrow_mut().push(self.0);
        }
    }

    #[test]
    fn ways_are_released_in_the_reverse_of_the_list() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let list: Vec<Box<dyn Way>> = ["tracer", "export", "streamer", "telemetry"]
            .map(|n| Box::new(Logged(n, log.clone())) as Box<dyn Way>)
            .into();
        let mut errors = Vec::new();
        let _proof: WaysReleased = release(list, &mut errors);
        assert_eq!(*log.borrow(), ["telemetry", "streamer", "export", "tracer"], "streamers close before tracers");
        assert!(errors.is_empty());
        assert_eq!(ways().len(), 4, "one line each: tracer, export, streamer, telemetry");
    }
}
