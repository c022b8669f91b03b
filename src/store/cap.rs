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
//! With the default 1 GiB cap and 16 counters at 1 kHz this keeps about
//! 1.8 hours at full resolution, then 3.5 hours at 256 ms buckets, 2.3 days
//! at 4 s, 37 days at 65 s... (each level's `cap / 32` buys 16x the time of
//! the level below). `Store::coarsening` reports the resulting spans so the UI
//! can say "history before 10:42:03 is at 4 s resolution".

use super::Store;
use super::pyramid::MAX_LEVEL;

/// Each coarse level's budget is `cap / COARSE_SHARE`.
pub(crate) const COARSE_SHARE: usize = 32;

/// Default cap: a quarter of physical memory, at most 1 GiB (1 GiB when the
/// amount of memory can't be read).
pub fn default_cap() -> usize {
    const GIB: usize = 1 << 30;
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
            .map(|kib| kib.saturating_mul(1024))
    });
    match total {
        Some(bytes) if bytes > 0 => (bytes / 4).clamp(16 << 20, GIB),
        _ => GIB,
    }
}

impl Store {
    /// Make room for `need` more bytes. Err(()) when nothing is left to give.
    pub(crate) fn make_room(&mut self, need: usize) -> Result<(), ()> {
        while self.memory_used() + need > self.cap {
            if !self.reclaim_step() {
                return Err(());
            }
        }
        Ok(())
    }

    /// Index of the stream whose `key` is the oldest time.
    fn oldest_by(&self, key: impl Fn(usize) -> Option<i64>) -> Option<usize> {
        (0..self.streams.len()).filter_map(|i| key(i).map(|t| (t, i))).min().map(|(_, i)| i)
    }

    /// One step of the policy in the module docs; false if nothing could go.
    fn reclaim_step(&mut self) -> bool {
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
}
