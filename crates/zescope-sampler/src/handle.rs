//! Starting the sampler thread, and the handle the rest of the program holds: its channels,
//! its options, and the shutdown that waits for its teardown (`thread.rs` is the loop itself).

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use crate::layout::LayoutSet;
use zescope_ze::{BuiltIn, Loader, Source};

use super::deadline::{Deadline, TidSlot, record_thread_id};
use super::protocol::*;
use super::thread::sampler_main;

/// Opens the source, on the sampler thread (again on `Refresh` while it is not open).
pub type Opener = Box<dyn FnMut() -> Result<Loader, zescope_ze::Error> + Send>;

/// How the sampler thread runs: layouts, channel sizes and periods.
#[derive(Clone)]
pub struct Options {
    /// Layouts to decode exported memory with (`LayoutSet::installed` by default).
    pub layouts: LayoutSet,
    /// Capacity of the event channel.
    pub event_capacity: usize,
    /// Sample values that may wait for a slow consumer before whole batches are dropped.
    pub max_waiting_values: usize,
    /// How often accumulated samples are sent: at the first read after this period (a run read
    /// in batches sends after every read), never on a wakeup of its own.
    pub batch_period: Duration,
    /// How often `Event::Health` is sent.
    pub health_period: Duration,
    /// The longest a run read in batches (its streams all the streamer's or the tracer's) leaves
    /// samples in the driver's buffer: its live latency, and about how often the sampler wakes
    /// for it ([`crate::BATCH_INTERVAL`] by default; `record`, which nobody watches live, asks
    /// more).
    pub batch_interval: Duration,
    /// What `Inventory::source.requested` says.
    pub requested: Source,
    /// Layout files that could not be used, reported when the sampler starts.
    pub layout_errors: Vec<String>,
    /// Called when events were delivered (see `outbox::Waker`).
    pub waker: Option<super::outbox::Waker>,
    /// Test hook (`crates/zescope-sampler/tests/sampler/panic.rs`): panic once inside the sampler after this many
    /// reads of a run, to prove a panic goes through the teardown. Always `None` in zescope.
    #[doc(hidden)]
    pub panic_after_reads: Option<u64>,
    /// Test hook (`crates/zescope-sampler/tests/sampler/panic.rs`): panic once right before the n-th (from 0) free of
    /// an import, part way through a teardown. Always `None` in zescope.
    #[doc(hidden)]
    pub panic_before_free: Option<u32>,
    /// Test hook (`crates/zescope-sampler/tests/sampler/run.rs`, the property test): the n-th
    /// (from 0) munmap of an exported buffer fails once, as a munmap the kernel refused. Always
    /// `None` in zescope.
    #[doc(hidden)]
    pub fail_munmap: Option<u32>,
    /// Test hook (`crates/zescope-sampler/tests/sampler/streamer_wake.rs`): a run of streamers
    /// ticks at its interval and reads every streamer on every tick (as before reads were apart
    /// from the sampling rate), to compare with the notification-driven run. Always `false` in
    /// zescope.
    #[doc(hidden)]
    pub poll_streamer: bool,
}

impl Default for Options {
    fn default() -> Self {
        let (layouts, errors) = LayoutSet::installed();
        Options {
            layouts,
            layout_errors: errors.iter().map(|e| e.to_string()).collect(),
            waker: None,
            panic_after_reads: None,
            panic_before_free: None,
            fail_munmap: None,
            poll_streamer: false,
            event_capacity: 256,
            max_waiting_values: 8 << 20,
            batch_period: Duration::from_millis(16),
            health_period: Duration::from_millis(500),
            batch_interval: crate::timing::BATCH_INTERVAL,
            requested: Source::Auto,
        }
    }
}

/// The only way to talk to the sampler thread. Dropping it shuts the thread down (waiting for the
/// teardown 3 s of the time the thread could run, [`SamplerHandle::begin_shutdown`]).
pub struct SamplerHandle {
    /// Commands to the thread (unbounded; never blocks).
    pub commands: Sender<Command>,
    /// Events from the thread (bounded: a consumer that does not drain it makes the sampler drop
    /// batches, never block).
    pub events: Receiver<Event>,
    thread: Option<JoinHandle<()>>,
    /// The sampler thread's id, once it runs (none for a handle [`SamplerHandle::from_parts`]).
    tid: TidSlot,
    /// Set by the first `begin_shutdown` or `shutdown`: every later wait ends by then too, so
    /// quitting is bounded by one deadline however many callers wait (the window, its exit hook,
    /// `Drop`).
    deadline: Option<Deadline>,
}

impl SamplerHandle {
    /// Waits up to `timeout` for the inventory (the thread's first event), for the headless
    /// commands; errs with the source's error or when nothing came in time.
    pub fn wait_inventory(&self, timeout: Duration) -> Result<Inventory, String> {
        loop {
            match self.events.recv_timeout(timeout) {
                Ok(Event::Inventory(i)) => return Ok(i),
                Ok(Event::Error(e)) => return Err(e.to_string()),
                Ok(_) => {}
                Err(_) => return Err(format!("the sampler did not answer within {} s", timeout.as_secs())),
            }
        }
    }

    /// A handle on a thread other than the sampler that speaks its protocol: it takes
    /// `commands`' other end, sends `Event`s on `events`' other end (the inventory first, and
    /// `Event::ShutDown` last, on `Command::Shutdown`), and is `thread`. zescope's window watching
    /// a remote `zescope serve` is fed this way: the window drains it as it drains a sampler.
    pub fn from_parts(commands: Sender<Command>, events: Receiver<Event>, thread: JoinHandle<()>) -> SamplerHandle {
        SamplerHandle { commands, events, thread: Some(thread), tid: TidSlot::default(), deadline: None }
    }

    /// Sends a command; ignored once the thread has ended.
    pub fn send(&self, c: Command) {
        let _ = self.commands.send(c);
    }

    /// Asks for shutdown and arms the teardown's deadline, `timeout` from now, the first time only
    /// (later calls change nothing). The deadline counts the time the sampler thread could run: its
    /// waits for a CPU on a machine with more runnable threads than cores move it later, by at most
    /// nine timeouts (`deadline.rs`).
    pub fn begin_shutdown(&mut self, timeout: Duration) {
        if self.deadline.is_none() {
            let _ = self.commands.send(Command::Shutdown);
            self.deadline = Some(Deadline::arm(timeout, self.thread_id()));
        }
    }

    /// The sampler thread's id (`gettid`), once it runs; `None` for a handle of another thread.
    pub(crate) fn thread_id(&self) -> Option<u32> {
        self.tid.get().copied()
    }

    /// Whether the deadline armed by the first [`begin_shutdown`](Self::begin_shutdown) or
    /// [`shutdown`](Self::shutdown) has passed (`false` before one).
    pub fn shutdown_overdue(&self) -> bool {
        self.deadline.as_ref().is_some_and(Deadline::passed)
    }

    /// Asks for shutdown and waits for the teardown to finish, at most until the deadline the
    /// FIRST call armed ([`begin_shutdown`](Self::begin_shutdown) says how it counts).
    /// `Err(waited)` if the thread did not finish in time (it keeps running; the caller decides
    /// what to tell).
    pub fn shutdown(&mut self, timeout: Duration) -> Result<(), Duration> {
        let start = Instant::now();
        self.begin_shutdown(timeout);
        let Some(t) = self.thread.take() else { return Ok(()) };
        while !t.is_finished() {
            // Keep the channel moving so the sampler can deliver its last events.
            let _ = self.events.recv_timeout(Duration::from_millis(5));
            if self.shutdown_overdue() && !t.is_finished() {
                self.thread = Some(t);
                return Err(start.elapsed());
            }
        }
        let _ = t.join();
        Ok(())
    }
}

impl Drop for SamplerHandle {
    fn drop(&mut self) {
        // After a shutdown that timed out, its caller has reported it: do not wait again.
        if self.thread.is_some()
            && self.deadline.is_none()
            && let Err(waited) = self.shutdown(Duration::from_secs(3))
        {
            eprintln!("zescope: the sampler did not finish its teardown within {waited:?}");
        }
    }
}

/// Spawns the sampler thread opening `source` (see `spawn`), with `built_in` the driver the
/// program links in for `sim` and `auto`'s fallback (`Loader::open`).
pub fn spawn_source(source: Source, built_in: BuiltIn, mut options: Options) -> SamplerHandle {
    options.requested = source;
    spawn(Box::new(move || Loader::open(source, built_in)), options)
}

/// Spawns the sampler thread; `opener` runs on it, so every Level Zero object is created, used and
/// destroyed there. The first event is `Event::Inventory`.
pub fn spawn(opener: Opener, options: Options) -> SamplerHandle {
    let (ctx, crx) = crossbeam_channel::unbounded();
    let (etx, erx) = crossbeam_channel::bounded(options.event_capacity.max(1));
    let tid = TidSlot::default();
    let slot = tid.clone();
    let thread = std::thread::Builder::new()
        .name("zescope-sampler".into())
        .spawn(move || {
            record_thread_id(&slot);
            sampler_main(opener, options, crx, etx)
        })
        .expect("spawn the sampler thread");
    SamplerHandle { commands: ctx, events: erx, thread: Some(thread), tid, deadline: None }
}
