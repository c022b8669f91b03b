//! `zescope serve`'s live feed (`/live`, `docs/live-protocol.md`): every event of the run, kept
//! within a memory cap, for viewers that watch over a WebSocket.
//!
//! The contract:
//! - [`Feed`] is filled by serve's run loop (the thread that takes the sampler's events) and read
//!   by the viewers' threads ([`viewer`]). Filling encodes the event once ([`crate::live::wire`])
//!   and appends it under a mutex held for a push: the run loop never waits for a viewer, and a
//!   viewer never holds the lock while it writes to its socket.
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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
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

/// The feed of one `serve`.
pub struct Feed {
    /// Names this feed among others (a restarted server has another): a viewer's `from` is only
    /// meaningful for the feed it came from.
    pub id: String,
    /// Who may watch.
    pub access: access::Access,
    state: Mutex<State>,
    changed: Condvar,
    viewers: AtomicUsize,
}

#[derive(Default)]
struct State {
    hello: Option<Message>,
    /// Held events, oldest first; `frames[i]` is event `oldest + i`.
    frames: VecDeque<Message>,
    oldest: u64,
    bytes: usize,
    cap: usize,
    /// Per stream of the run: the ordinal its next row will have.
    ordinals: Vec<u64>,
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
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let id = format!("{:016x}", (nanos as u64) ^ (u64::from(std::process::id()) << 40));
        let state = State { cap, ..State::default() };
        Arc::new(Feed { id, access, state: Mutex::new(state), changed: Condvar::new(), viewers: AtomicUsize::new(0) })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The run started: its hello.
    pub fn started(&self, info: &RunInfo, inventory: &[DeviceEntry]) {
        let hello = Message::text(wire::hello(&self.id, info, inventory));
        let mut s = self.lock();
        s.hello = Some(hello);
        s.ordinals = vec![0; info.streams.len()];
        drop(s);
        self.changed.notify_all();
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

    /// A batch of samples of the run.
    pub fn batch(&self, b: &SampleBatch) {
        let mut s = self.lock();
        let Some(next) = s.ordinals.get_mut(b.stream) else { return };
        let first = *next;
        *next += b.timestamps.len() as u64;
        let frame = Message::binary(wire::batch(s.next(), first, b));
        self.push(&mut s, frame);
        drop(s);
        self.changed.notify_all();
    }

    /// Any other event of the run.
    pub fn event(&self, e: &wire::Event) {
        let mut s = self.lock();
        let frame = Message::text(wire::event(s.next(), e));
        self.push(&mut s, frame);
        drop(s);
        self.changed.notify_all();
    }

    /// The run ended: nothing more will come.
    pub fn end(&self) {
        self.lock().ended = true;
        self.changed.notify_all();
    }

    /// The hello, waiting at most `wait` for the run to start; `None` when it has not (or the
    /// feed ended without a run).
    pub fn hello(&self, wait: Duration) -> Option<Message> {
        let s = self.lock();
        let (s, _) = self
            .changed
            .wait_timeout_while(s, wait, |s| s.hello.is_none() && !s.ended)
            .unwrap_or_else(|p| p.into_inner());
        s.hello.clone()
    }

    /// Events from `from` on, at most about `max_bytes` of them (at least one), waiting at most
    /// `wait` for one to come.
    pub fn take(&self, from: u64, max_bytes: usize, wait: Duration) -> Taken {
        let s = self.lock();
        let (s, _) = self
            .changed
            .wait_timeout_while(s, wait, |s| s.next() <= from && !s.ended)
            .unwrap_or_else(|p| p.into_inner());
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
