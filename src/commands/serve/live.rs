//! `zescope serve`'s live feed (`/live`, `docs/live-protocol.md`): every event of the run, kept
//! within a memory cap, for viewers that watch over a WebSocket.
//!
//! The contract:
//! - [`Feed`] is filled by serve's run loop (the thread that takes the sampler's events) and read
//!   by the viewers' threads ([`viewer`]). Filling encodes the event once ([`crate::live::wire`];
//!   batches packed, protocol 2's [`crate::live::packed`]) and appends it under a mutex held for
//!   a push: the run loop never waits for a viewer, and a viewer never holds the lock while it
//!   writes to its socket. A viewer of protocol 1 turns the packed batches it takes into plain
//!   ones on its own thread.
//! - A stream's rows are sent in batches of at most [`BATCH_ROWS`] rows, each sent once it is full
//!   or its first row is [`BATCH_WAIT`] old (a packed column's header costs the same for 3 rows as
//!   for 256), and before any other event: rows and the other events keep the order they came in,
//!   per stream. A row's age counts from its sample's time (CLOCK_MONOTONIC), or from when it
//!   came in if that is later (a device clock mapped a little ahead): the sampler delivers rows
//!   in batches of its own (every 16 ms), and those go out as they come, without waiting a
//!   second time. Due rows go out on time though no more come (a viewer waiting for
//!   events wakes when the first pending row is due).
//! - The history holds every event from the oldest still held to the newest, numbered by `seq`
//!   without holes; when its frames exceed the cap ([`DEFAULT_HISTORY`] unless `--history`), the
//!   oldest go first. A viewer that asks for events no longer held is told so (a `gap` frame)
//!   and gets the rest.
//! - At most [`MAX_VIEWERS`] watch at once; one more is told why in its close frame (1013).
//! - Who may watch is [`access`]'s policy: anyone on loopback, beyond it only with the token.
//! - [`Feed::end`] once the run ended: each viewer gets what is left, then a normal close;
//!   [`Feed::wait_viewers`] lets serve give them a moment before it exits.

pub mod access;
pub mod viewer;

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use tungstenite::Message;
use zescope_sampler::{DeviceEntry, RunInfo, SampleBatch};

use crate::live::wire;
pub use wire::Event;

/// The feed's event for a firing of `trigger`.
pub fn wire_event_firing(trigger: String, f: &zescope_model::triggers::Firing) -> Event {
    Event::Firing { trigger, t_ns: f.t_ns, series: f.series.to_string(), value: f.value }
}

/// The path the feed is offered on.
pub const PATH: &str = "/live";
/// Viewers watching at once.
pub const MAX_VIEWERS: usize = 8;
/// The history's default cap (bytes of encoded frames).
pub const DEFAULT_HISTORY: usize = 256 << 20;
/// The most rows a batch of the feed holds (a packed block).
pub const BATCH_ROWS: usize = crate::live::packed::BLOCK;
/// How old a stream's first pending row gets before its rows are sent. The sampler hands serve
/// a stream's rows every 16 ms (its batch period; a batch-read run after each read), so rows
/// arrive batched already and go out as they come; this only gathers rows that come fresh, a
/// few at a time, and keeps them from waiting for a frame of the window (`docs/benchmarks.md`,
/// "Sample to screen").
pub const BATCH_WAIT: Duration = Duration::from_millis(2);

/// The instant a row sampled at `t_ns` (CLOCK_MONOTONIC) was read; now if that is later.
fn sampled(t_ns: i64) -> Instant {
    let age = zescope_sampler::monotonic_ns().saturating_sub(t_ns).max(0);
    let now = Instant::now();
    now.checked_sub(Duration::from_nanos(age.unsigned_abs())).unwrap_or(now)
}

/// The feed of one `serve`.
pub struct Feed {
    /// Names this feed among others (a restarted server has another): a viewer's `from` is only
    /// meaningful for the feed it came from.
    pub id: String,
    /// Who may watch.
    pub access: access::Access,
    state: Mutex<State>,
    changed: Condvar,
    /// The viewers' bells ([`Feed::bell`]), rung with `changed`.
    bells: Mutex<Vec<Weak<OwnedFd>>>,
    viewers: AtomicUsize,
    /// [`BATCH_WAIT`], or less (tests).
    wait: Duration,
}

#[derive(Default)]
struct State {
    /// The hello, in protocols 1 and 2.
    hello: Option<[Message; 2]>,
    /// Held events, oldest first; `frames[i]` is event `oldest + i`.
    frames: VecDeque<Message>,
    oldest: u64,
    bytes: usize,
    cap: usize,
    /// Per stream of the run: the ordinal its next row will have.
    ordinals: Vec<u64>,
    /// Per stream: rows not yet sent, and since when the first of them waits (its sample's
    /// time, or when it came in if that is later).
    pending: Vec<Option<(SampleBatch, Instant)>>,
    ended: bool,
}

impl State {
    fn next(&self) -> u64 {
        self.oldest + self.frames.len() as u64
    }
}

/// What a viewer takes from the feed at once.
#[derive(Debug, Default)]
pub struct Taken {
    /// Events before `frames` that were asked for but are no longer held: `(from, to)`.
    pub gap: Option<(u64, u64)>,
    /// The first of `frames`.
    pub first: u64,
    /// Events `first..`, in order.
    pub frames: Vec<Message>,
    /// The run ended and nothing after `frames` will come.
    pub ended: bool,
}

/// A viewer's place among [`MAX_VIEWERS`]; given back when dropped.
pub struct Watching {
    feed: Arc<Feed>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.feed.viewers.fetch_sub(1, Ordering::SeqCst);
        self.feed.changed.notify_all();
    }
}

impl Feed {
    /// An empty feed keeping at most `cap` bytes of history.
    pub fn new(cap: usize, access: access::Access) -> Arc<Feed> {
        Feed::batching(cap, access, BATCH_WAIT)
    }

    /// As [`Feed::new`], a stream's rows waiting at most `wait` for more.
    pub fn batching(cap: usize, access: access::Access, wait: Duration) -> Arc<Feed> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let id = format!("{:016x}", (nanos as u64) ^ (u64::from(std::process::id()) << 40));
        let state = State { cap, ..State::default() };
        let viewers = AtomicUsize::new(0);
        let bells = Mutex::new(Vec::new());
        Arc::new(Feed { id, access, state: Mutex::new(state), changed: Condvar::new(), bells, viewers, wait })
    }

    /// Tells whoever waits that the feed changed: the threads waiting on `changed`, and each
    /// viewer's bell (a viewer gone drops its bell).
    fn ring(&self) {
        self.changed.notify_all();
        let mut bells = self.bells.lock().unwrap_or_else(|p| p.into_inner());
        bells.retain(|b| match b.upgrade() {
            Some(fd) => {
                // A full count (never, in practice) still leaves the bell readable: it rang.
                let _ = rustix::io::write(&*fd, &1u64.to_ne_bytes());
                true
            }
            None => false,
        });
    }

    /// A bell (an eventfd, non-blocking) rung whenever the feed changes, for a viewer that waits
    /// on its socket and the feed at once (`poll`); `None` if the system gives none.
    pub fn bell(&self) -> Option<Arc<OwnedFd>> {
        let flags = rustix::event::EventfdFlags::NONBLOCK | rustix::event::EventfdFlags::CLOEXEC;
        let fd = Arc::new(rustix::event::eventfd(0, flags).ok()?);
        self.bells.lock().unwrap_or_else(|p| p.into_inner()).push(Arc::downgrade(&fd));
        Some(fd)
    }

    /// How long until the first pending row is due (`None`: none pending); a viewer that waits
    /// on its own wakes by then, so due rows go out though no more come.
    pub fn due_in(&self) -> Option<Duration> {
        let s = self.lock();
        self.next_due(&s).map(|d| d.saturating_duration_since(Instant::now()))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The run started: its hello.
    pub fn started(&self, info: &RunInfo, inventory: &[DeviceEntry]) {
        let hello = [1, 2].map(|p| Message::text(wire::hello(&self.id, info, inventory, p)));
        let mut s = self.lock();
        s.hello = Some(hello);
        s.ordinals = vec![0; info.streams.len()];
        s.pending = vec![None; info.streams.len()];
        drop(s);
        self.ring();
    }

    fn push(&self, s: &mut State, frame: Message) {
        s.bytes += frame.len();
        s.frames.push_back(frame);
        while s.bytes > s.cap && s.frames.len() > 1 {
            if let Some(f) = s.frames.pop_front() {
                s.bytes -= f.len();
                s.oldest += 1;
            }
        }
    }

    /// Sends stream `i`'s pending rows as a batch; whether there were any.
    fn send_pending(&self, s: &mut State, i: usize) -> bool {
        let Some((b, _)) = s.pending.get_mut(i).and_then(Option::take) else { return false };
        let first = s.ordinals[i];
        s.ordinals[i] += b.timestamps.len() as u64;
        let frame = Message::binary(crate::live::packed::batch(s.next(), first, &b));
        self.push(s, frame);
        true
    }

    /// When the first pending row that is not yet due will be.
    fn next_due(&self, s: &State) -> Option<Instant> {
        s.pending.iter().flatten().map(|(_, since)| *since + self.wait).min()
    }

    /// Sends the pending rows that are due (all of them with `all`); whether any were.
    fn send_due(&self, s: &mut State, all: bool) -> bool {
        let due: Vec<usize> = (0..s.pending.len())
            .filter(|&i| s.pending[i].as_ref().is_some_and(|(_, since)| all || since.elapsed() >= self.wait))
            .collect();
        for &i in &due {
            let _ = self.send_pending(s, i);
        }
        !due.is_empty()
    }

    /// A batch of samples of the run: its rows join the stream's pending ones (sent when full,
    /// or due).
    pub fn batch(&self, b: &SampleBatch) {
        let mut s = self.lock();
        let n = b.timestamps.len();
        if b.stream >= s.ordinals.len() || n == 0 {
            return;
        }
        let k = b.values.len() / n;
        // A gap starts a batch of its own (the flag is its first row's).
        let mut sent = b.gap_before && self.send_pending(&mut s, b.stream);
        let mut rows = 0;
        while rows < n {
            let (p, _) = s.pending[b.stream].get_or_insert_with(|| {
                let gap_before = b.gap_before && rows == 0;
                let empty = SampleBatch {
                    run: b.run,
                    stream: b.stream,
                    timestamps: Vec::new(),
                    values: Vec::new(),
                    gap_before,
                };
                (empty, sampled(b.timestamps[rows]))
            });
            let take = (BATCH_ROWS - p.timestamps.len()).min(n - rows);
            p.timestamps.extend_from_slice(&b.timestamps[rows..rows + take]);
            p.values.extend_from_slice(&b.values[rows * k..(rows + take) * k]);
            rows += take;
            if p.timestamps.len() >= BATCH_ROWS {
                sent |= self.send_pending(&mut s, b.stream);
            }
        }
        sent |= self.send_due(&mut s, false);
        drop(s);
        if sent {
            self.ring();
        }
    }

    /// Any other event of the run (after the rows that came before it).
    pub fn event(&self, e: &wire::Event) {
        let mut s = self.lock();
        self.send_due(&mut s, true);
        let frame = Message::text(wire::event(s.next(), e));
        self.push(&mut s, frame);
        drop(s);
        self.ring();
    }

    /// The run ended: nothing more will come.
    pub fn end(&self) {
        let mut s = self.lock();
        self.send_due(&mut s, true);
        s.ended = true;
        drop(s);
        self.ring();
    }

    /// The hello of `protocol` (1 or 2), waiting at most `wait` for the run to start; `None`
    /// when it has not (or the feed ended without a run).
    pub fn hello(&self, wait: Duration, protocol: u64) -> Option<Message> {
        let s = self.lock();
        let (s, _) = self
            .changed
            .wait_timeout_while(s, wait, |s| s.hello.is_none() && !s.ended)
            .unwrap_or_else(|p| p.into_inner());
        s.hello.as_ref().map(|h| h[usize::from(protocol != 1)].clone())
    }

    /// Events from `from` on, at most about `max_bytes` of them (at least one), waiting at most
    /// `wait` for one to come.
    pub fn take(&self, from: u64, max_bytes: usize, wait: Duration) -> Taken {
        let deadline = Instant::now() + wait;
        let mut s = self.lock();
        loop {
            // Rows that waited long enough go now, though no more came (a sampler between
            // deliveries, or stalled).
            if self.send_due(&mut s, false) {
                self.ring();
            }
            let now = Instant::now();
            if s.next() > from || s.ended || now >= deadline {
                break;
            }
            let until = self.next_due(&s).map_or(deadline, |d| d.min(deadline));
            let left = until.saturating_duration_since(now).max(Duration::from_micros(100));
            s = self.changed.wait_timeout(s, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        let gap = (from < s.oldest).then_some((from, s.oldest));
        let first = from.max(s.oldest);
        let mut frames = Vec::new();
        let mut bytes = 0;
        let skip = usize::try_from(first - s.oldest).unwrap_or(usize::MAX);
        for f in s.frames.iter().skip(skip) {
            if !frames.is_empty() && bytes + f.len() > max_bytes {
                break;
            }
            bytes += f.len();
            frames.push(f.clone());
        }
        let ended = s.ended && first + frames.len() as u64 >= s.next();
        Taken { gap, first, frames, ended }
    }

    /// The next `seq` (events held: `oldest..next`) and the oldest held.
    pub fn span(&self) -> (u64, u64) {
        let s = self.lock();
        (s.oldest, s.next())
    }

    /// A place among the viewers, or `None` when [`MAX_VIEWERS`] watch already.
    pub fn watch(self: &Arc<Self>) -> Option<Watching> {
        let taken =
            self.viewers.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < MAX_VIEWERS).then_some(n + 1));
        taken.ok().map(|_| Watching { feed: Arc::clone(self) })
    }

    /// Viewers watching now.
    pub fn viewers(&self) -> usize {
        self.viewers.load(Ordering::SeqCst)
    }

    /// Waits until no viewer watches, at most until `deadline`.
    pub fn wait_viewers(&self, deadline: Instant) {
        let mut s = self.lock();
        while self.viewers() > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            s = self.changed.wait_timeout(s, left.min(Duration::from_millis(50))).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}

#[cfg(test)]
mod tests;
