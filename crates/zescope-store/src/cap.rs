//! The memory cap and what gives way when it is reached.
//!
//! The store accounts every byte it allocates (raw blocks, pyramid chunks,
//! their spines, descriptors). Before each append (in slices of at most 4096
//! samples) it computes an upper bound of what the slice can allocate and, while
//! `used + bound > cap`, runs one reclaim step. So `memory_used() <= cap` holds
//! after every call, by construction rather than by after-the-fact trimming.
//!
//! Policy, one step at a time, always oldest data first (across all streams):
//!
//! 1. Coarse history budget: each pyramid level `l` may hold at most
//!    `cap / 32` bytes of history that no finer level holds any more. Over
//!    that, its oldest chunk of nodes is dropped: that history is now at level
//!    `l + 1` (16x coarser), or evicted if `l` is the coarsest level.
//! 2. Otherwise the oldest raw block (256 samples, not the one a live stream is
//!    appending to) is dropped: its history is now at level 1 (256 samples per
//!    bucket, still with exact min/max/mean/count).
//! 3. Otherwise (no raw block left to give) the finest level with droppable
//!    history gives its oldest chunk, as in 1.
//! 4. Otherwise a whole stream is evicted: ended streams first, oldest first,
//!    then live ones (a live stream continues after a gap).
//!
//! The cache of decoded blocks (`decoded.rs`) counts against the cap. Once a query has used
//! it, steps 1 and 2 also run to keep its share (`min(64 MiB, cap / 32)`) free; before step 3
//! it is dropped, so it never costs history beyond full resolution.
//!
//! With the default 1 GiB cap and 16 counters at 1 kHz this keeps about
//! 1.8 hours at full resolution, then 3.5 hours at 256 ms buckets, 2.3 days
//! at 4 s, 37 days at 65 s... (each level's `cap / 32` buys 16x the time of
//! the level below). A live recording's oldest history therefore loses
//! resolution, not existence: level 6 (one bucket per 2^28 samples, 3 days
//! at 1 kHz) would need ~400 years to outgrow its share. What does get
//! evicted is ended streams (steps 1 and 4: once folded to their coarsest
//! level, or whole when nothing else is left) and, with a cap too small for
//! the streams' working set, whole live streams (step 4). `Store::coarsening`
//! reports the resulting spans and evicted counts so the UI can say "history
//! before 10:42:03 is at 4 s resolution".

use std::collections::VecDeque;

use super::Store;
use super::column::BLOCK;
use super::pyramid::{Level, MAX_LEVEL, blocks_per_node};
use super::stream::StreamStore;

/// Each coarse level's budget is `cap / COARSE_SHARE`.
pub(crate) const COARSE_SHARE: usize = 32;

/// Default cap: a quarter of the memory this process may use — the smallest of physical
/// memory, the address-space limit (`RLIMIT_AS`) and the control group's memory limit
/// (`limits.rs`) — kept within 16 MiB..=1 GiB (1 GiB when none of them can be read).
pub fn default_cap() -> usize {
    cap_for(super::limits::memory_limit())
}

/// [`default_cap`] for a process that may use `limit` bytes.
pub(crate) fn cap_for(limit: Option<u64>) -> usize {
    const GIB: u64 = 1 << 30;
    let cap = match limit {
        Some(bytes) if bytes > 0 => (bytes / 4).clamp(16 << 20, GIB),
        _ => GIB,
    };
    usize::try_from(cap).unwrap_or(usize::MAX)
}

impl Store {
    /// Make room for `need` more bytes. Err(()) when nothing is left to give.
    pub(crate) fn make_room(&mut self, need: usize) -> Result<(), ()> {
        // The cache of decoded blocks, once used, keeps its share free: full-resolution history
        // is coarsened for it (steps 1 and 2), nothing is evicted for it.
        let share = if self.decoded_mut().active() { super::decoded::share(self.cap) } else { 0 };
        if self.decoded_mut().bytes() > share {
            self.clear_decoded();
        }
        let free_for_cache = share - self.decoded_mut().bytes();
        while self.memory_used() + need + free_for_cache > self.cap {
            if !self.coarsen_step() {
                break;
            }
            self.history = super::grid::next_epoch();
        }
        while self.memory_used() + need > self.cap {
            if self.decoded_mut().bytes() > 0 {
                self.clear_decoded();
                continue;
            }
            if !self.reclaim_step() {
                return Err(());
            }
            self.history = super::grid::next_epoch();
        }
        Ok(())
    }

    /// Coarsens the oldest history one step (steps 1 and 2 of the policy: never an eviction),
    /// whatever the cap: for a reader that must hold less than the cap allows (a session decoded
    /// into memory). False when nothing is left to coarsen.
    pub fn coarsen_oldest(&mut self) -> bool {
        if !self.coarsen_step() {
            return false;
        }
        self.version += 1;
        self.history = super::grid::next_epoch();
        true
    }

    /// Index of the stream whose `key` is the oldest time.
    fn oldest_by(&self, key: impl Fn(usize) -> Option<i64>) -> Option<usize> {
        (0..self.streams.len()).filter_map(|i| key(i).map(|t| (t, i))).min().map(|(_, i)| i)
    }

    /// One step of the policy in the module docs; false if nothing could go.
    fn reclaim_step(&mut self) -> bool {
        if self.coarsen_step() {
            return true;
        }
        for l in 1..=MAX_LEVEL {
            if let Some(i) = self.oldest_by(|i| self.streams[i].level_droppable(l)) {
                self.streams[i].drop_level_front(l);
                self.refresh(i);
                return true;
            }
        }
        let victim = self
            .oldest_by(|i| {
                let s = &self.streams[i];
                s.ended.then(|| s.oldest_time()).flatten()
            })
            .or_else(|| self.oldest_by(|i| self.streams[i].oldest_time()));
        if let Some(i) = victim {
            self.streams[i].evict_all();
            self.refresh(i);
            return true;
        }
        false
    }

    /// Steps 1 and 2 of the policy: coarsening, never eviction of a whole stream's history
    /// (step 1 evicts only what a coarse level's own budget has no room for).
    fn coarsen_step(&mut self) -> bool {
        let share = self.cap / COARSE_SHARE;
        for l in 1..=MAX_LEVEL {
            let held: usize = self.streams.iter().map(|s| s.exclusive_bytes(l)).sum();
            if held > share
                && let Some(i) = self.oldest_by(|i| self.streams[i].level_droppable(l))
            {
                self.streams[i].drop_level_front(l);
                self.refresh(i);
                return true;
            }
        }
        if let Some(i) = self.oldest_by(|i| self.streams[i].raw_coarsenable()) {
            self.streams[i].coarsen_raw_front();
            self.refresh(i);
            return true;
        }
        false
    }
}

/// A stretch of a stream's history held at one resolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolutionSpan {
    /// Time of the first sample in the span (ns).
    pub t_first: i64,
    /// Time of the last sample in the span (ns).
    pub t_last: i64,
    /// Pyramid level: 0 is full resolution.
    pub level: u8,
    /// Samples per bucket at this level (1 at full resolution).
    pub samples_per_bucket: u64,
    /// Buckets (or samples, at level 0) held.
    pub buckets: u64,
    /// Samples the span stands for.
    pub samples: u64,
}

impl ResolutionSpan {
    /// Typical time per bucket.
    pub fn bucket_ns(&self) -> i64 {
        self.t_last.saturating_sub(self.t_first) / self.buckets.max(1) as i64
    }
}

/// What the memory cap did to a stream's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Oldest samples no longer held at any resolution.
    pub evicted_samples: u64,
    /// What is held, oldest first; coarsened spans, then full resolution.
    pub spans: Vec<ResolutionSpan>,
}

impl Retention {
    /// Time before which history is coarsened (the start of the full
    /// resolution span), if any history is coarsened.
    pub fn coarsened_before(&self) -> Option<i64> {
        let first_full = self.spans.iter().find(|s| s.level == 0)?;
        self.spans.iter().any(|s| s.level > 0).then_some(first_full.t_first)
    }
}

/// Reclaim primitives: the policy above picks which one runs.
impl StreamStore {
    /// Start time of the oldest raw block that may be coarsened (not the
    /// block a live stream is appending to).
    pub(crate) fn raw_coarsenable(&self) -> Option<i64> {
        let closed = self.blocks.len() - usize::from(self.open);
        (closed > 0).then(|| self.blocks[0].t_first())
    }

    /// Drop the oldest raw block: its history is now at level-1 resolution.
    pub(crate) fn coarsen_raw_front(&mut self) {
        if self.blocks.len() >= 2 {
            let next = &self.blocks[1];
            self.head_before = (next.gap_before == 0).then(|| self.blocks[0].t_last());
            for s in 0..self.n_series() {
                if self.wraps[s].is_some() {
                    self.head_rate[self.cum_slot[s]] = self.first_rate(next, s);
                }
            }
        }
        if let Some(b) = self.blocks.pop_front() {
            self.blocks_heap -= b.heap_bytes();
            self.first_block += 1;
            if self.blocks.is_empty() {
                self.open = false;
            }
        }
    }

    /// First block held at a resolution finer than level `l` (`None`: none).
    pub(crate) fn finer_start(&self, l: usize) -> Option<u64> {
        if l == 1 { (!self.blocks.is_empty()).then_some(self.first_block) } else { self.pyramid.start_block(l - 1) }
    }

    /// Bytes of level-`l` nodes that hold history no finer level holds.
    pub(crate) fn exclusive_bytes(&self, l: usize) -> usize {
        self.pyramid.exclusive_nodes(l, self.finer_start(l)) as usize * Level::node_bytes(l, self.n_series())
    }

    /// Start time of the front chunk of level `l` if it may be dropped
    /// (all of it is held by no finer level).
    pub(crate) fn level_droppable(&self, l: usize) -> Option<i64> {
        if l > self.pyramid.top() || !self.pyramid.front_chunk_exclusive(l, self.finer_start(l)) {
            return None;
        }
        let meta = &self.pyramid.level(l).meta;
        Some(meta.at(meta.start()).t_first)
    }

    /// Drop the front chunk of level `l`: coarsened to level `l + 1`, or
    /// evicted when `l` is the coarsest level.
    pub(crate) fn drop_level_front(&mut self, l: usize) {
        let top = self.pyramid.top();
        if let Some(gone) = self.pyramid.pop_front_chunk(l)
            && l == top
        {
            self.evicted += gone.samples;
        }
    }

    /// Evict everything held; a live stream continues after a gap.
    pub(crate) fn evict_all(&mut self) {
        self.first_block = self.next_block();
        self.blocks = VecDeque::new();
        self.blocks_heap = 0;
        self.pyramid.clear();
        self.evicted = self.total;
        self.open = false;
        self.mark_gap();
    }

    /// What is held at which resolution (oldest first).
    pub(crate) fn retention(&self) -> Retention {
        let mut spans = Vec::new();
        for l in (1..=self.pyramid.top()).rev() {
            let nodes = self.pyramid.exclusive_nodes(l, self.finer_start(l));
            if nodes == 0 {
                continue;
            }
            let meta = &self.pyramid.level(l).meta;
            let (a, b) = (meta.at(meta.start()), meta.at(meta.start() + nodes - 1));
            spans.push(ResolutionSpan {
                t_first: a.t_first,
                t_last: b.t_last,
                level: l as u8,
                samples_per_bucket: blocks_per_node(l) * BLOCK as u64,
                buckets: nodes,
                samples: b.first_ordinal + b.samples - a.first_ordinal,
            });
        }
        if let (Some(a), Some(b)) = (self.blocks.front(), self.blocks.back()) {
            spans.push(ResolutionSpan {
                t_first: a.t_first(),
                t_last: b.t_last(),
                level: 0,
                samples_per_bucket: 1,
                buckets: b.first_ordinal + b.len as u64 - a.first_ordinal,
                samples: b.first_ordinal + b.len as u64 - a.first_ordinal,
            });
        }
        Retention { evicted_samples: self.evicted, spans }
    }
}
