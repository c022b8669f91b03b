//! Decoded sealed blocks, kept from one query to the next.
//!
//! A live view of the last minute at 1 kHz shows ~60,000 samples per series: fewer than 256
//! per pixel column, so the envelope walk reads raw samples (`envelope.rs`), and those sit in
//! sealed (compressed) blocks that never change until the cap coarsens them away. Every frame
//! of a live view would decode the same blocks again; this cache keeps what
//! `StreamStore::block_values` made of them.
//!
//! - Key: (stream, series, block number). A hit also checks the block's first ordinal, length
//!   and first timestamp, so an entry never answers for another block (a coarsened block's
//!   number is never reused; imports clear the cache anyway). Only sealed blocks are cached: the
//!   open block still changes. For a cumulative counter the first value is the rate against the
//!   previous block, which never changes while that block exists (blocks leave from the front
//!   only); once it is coarsened away the stream's head rate stands in, so the oldest block's
//!   first value is worked out again on every hit: exactly what an uncached query gives.
//! - Budget: at most [`BUDGET`] bytes, and at most `cap / 32` of the store's cap (the share of
//!   one coarse pyramid level). Once a query has used the cache, the store keeps that share
//!   free for it: appends coarsen full-resolution history as if it were taken (`cap.rs`), and
//!   when nothing else is left to give, the cache is dropped before any history is evicted.
//!   Its bytes (values, slot table, index) are part of `Store::memory_used`.
//! - Replacement: entries carry the *epoch* of their last use. The epoch advances when the
//!   store's data changes (a live view: every frame) and after four times the cache's slots
//!   (at least 256) in lookups (a paused view moving over its history). An entry used in the current or the
//!   previous epoch is not replaced: when every slot is that fresh, a miss decodes without
//!   caching, so a view showing more than the budget keeps a stable part of it cached instead
//!   of cycling through all of it. A query that finds the cache busy (another thread) decodes
//!   without it.
//!
//! Which queries read it: envelopes (`Store::envelope`, `Store::envelopes`) at raw level. A
//! view that moves to a new stretch of history every frame misses every time.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::column::{BLOCK, Block};
use super::stream::StreamStore;

/// Most bytes the cache holds: the last minute of 128 series at 1 kHz (and at most
/// `cap / CAP_SHARE`: 32 MiB under the default 1 GiB cap).
pub(crate) const BUDGET: usize = 64 << 20;

/// The cache's share of the cap is at most `cap / CAP_SHARE`.
const CAP_SHARE: usize = 32;

/// Slots looked at for one replacement.
const PROBES: usize = 16;

/// Bytes of one slot's values.
const VALUES: usize = BLOCK * 8;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    stream: u32,
    series: u32,
    block: u64,
}

/// Multiplicative hashing of the key's words (the keys are small integers, not adversarial).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type Index = HashMap<Key, u32, BuildHasherDefault<KeyHasher>>;

struct Slot {
    key: Key,
    first_ordinal: u64,
    t_first: i64,
    len: u32,
    /// Epoch of the last use.
    used: u64,
    values: Box<[f64; BLOCK]>,
}

/// The cache (see the module docs). Lives in the store behind a mutex.
#[derive(Default)]
pub(crate) struct DecodedCache {
    index: Index,
    slots: Vec<Slot>,
    /// Next slot to consider for replacement.
    hand: usize,
    epoch: u64,
    /// Store version the epoch was last advanced for.
    version: u64,
    /// Lookups in the current epoch.
    lookups: usize,
    /// A query has used the cache: the store keeps its share free.
    active: bool,
    /// Lookups answered from the cache, ever.
    hits: u64,
    /// Entries replaced by others, ever.
    replaced: u64,
}

/// The cache's share of a store capped at `cap` bytes.
pub(crate) fn share(cap: usize) -> usize {
    BUDGET.min(cap / CAP_SHARE)
}

impl DecodedCache {
    /// Heap bytes held (values, slot table, index), an upper bound of what is allocated.
    pub(crate) fn bytes(&self) -> usize {
        // The index as hashbrown lays it out: a power of two of buckets (capacity * 8 / 7),
        // each an entry plus a control byte, and a group of trailing control bytes.
        let index = if self.index.capacity() == 0 {
            0
        } else {
            let buckets = (self.index.capacity() * 8).div_ceil(7).next_power_of_two();
            buckets * (size_of::<(Key, u32)>() + 1) + 16
        };
        self.slots.capacity() * size_of::<Slot>() + self.slots.len() * VALUES + index
    }

    /// Whether a query has used the cache (its share is then kept free).
    pub(crate) fn active(&self) -> bool {
        self.active
    }

    /// Drops every entry (the share stays free for it once used).
    pub(crate) fn clear(&mut self) {
        let (active, hits, replaced) = (self.active, self.hits, self.replaced);
        *self = DecodedCache { active, hits, replaced, ..DecodedCache::default() };
    }

    /// The values held in slot `i` (as [`CacheUse::values`] returned it).
    #[inline]
    pub(crate) fn slot_values(&self, i: usize) -> &[f64; BLOCK] {
        &self.slots[i].values
    }

    /// Lookups answered from the cache since the store was made.
    pub(crate) fn hits(&self) -> u64 {
        self.hits
    }

    /// Entries replaced by others since the store was made.
    #[cfg(test)]
    pub(crate) fn replaced(&self) -> u64 {
        self.replaced
    }

    /// Blocks held.
    #[cfg(test)]
    pub(crate) fn slots(&self) -> usize {
        self.slots.len()
    }

    /// A query starts: `version` is the store's, `room` what the cache may hold in all.
    pub(crate) fn begin(&mut self, version: u64) {
        self.active = true;
        if version != self.version {
            self.version = version;
            self.next_epoch();
        }
    }

    fn next_epoch(&mut self) {
        self.epoch += 1;
        self.lookups = 0;
    }

    /// The slot holding series `series` of sealed block `blk` (number `block` of stream
    /// `stream`), marked used; `None` on a miss.
    fn find(&mut self, stream: u32, series: usize, block: u64, blk: &Block) -> Option<usize> {
        self.lookups += 1;
        if self.lookups > 4 * self.slots.len().max(64) {
            self.next_epoch();
        }
        let key = Key { stream, series: series as u32, block };
        let &i = self.index.get(&key)?;
        let slot = &mut self.slots[i as usize];
        if slot.first_ordinal != blk.first_ordinal || slot.len as usize != blk.len || slot.t_first != blk.t_first() {
            return None;
        }
        slot.used = self.epoch;
        self.hits += 1;
        Some(i as usize)
    }

    /// Keeps `values` (what [`Self::find`] missed) if a slot is free or stale and `room` (bytes
    /// the cache may hold in all) allows; returns the slot.
    fn put(
        &mut self,
        stream: u32,
        series: usize,
        block: u64,
        blk: &Block,
        values: &[f64],
        room: usize,
    ) -> Option<usize> {
        if !blk.is_sealed() || values.len() != blk.len {
            return None;
        }
        let key = Key { stream, series: series as u32, block };
        let i = match self.index.get(&key) {
            // A stale entry under the same key (another block once had this number).
            Some(&i) => i as usize,
            None => self.free_slot(room)?,
        };
        let slot = &mut self.slots[i];
        slot.values[..values.len()].copy_from_slice(values);
        slot.first_ordinal = blk.first_ordinal;
        slot.len = blk.len as u32;
        slot.t_first = blk.t_first();
        slot.used = self.epoch;
        if slot.key != key {
            self.replaced += u64::from(slot.len > 0);
            self.index.remove(&slot.key);
            slot.key = key;
            self.index.insert(key, i as u32);
        }
        Some(i)
    }

    /// A new slot if `room` allows, else one not used in this epoch or the previous.
    fn free_slot(&mut self, room: usize) -> Option<usize> {
        if self.slots.len() == self.slots.capacity() {
            // Grow the table (and the index with it) only as far as `room` allows.
            let mut want = (self.slots.capacity() * 2).max(64).min(room / VALUES);
            while want > self.slots.capacity() && self.bytes_with(want) > room {
                want = self.slots.capacity().max(want * 3 / 4);
            }
            if want > self.slots.capacity() {
                self.slots.reserve_exact(want - self.slots.len());
                self.index.reserve(want - self.index.len());
            }
        }
        if self.slots.len() < self.slots.capacity() && self.bytes() + VALUES <= room {
            let i = self.slots.len();
            let key = Key { stream: u32::MAX, series: u32::MAX, block: u64::MAX };
            let values = Box::new([0.0; BLOCK]);
            self.slots.push(Slot { key, first_ordinal: u64::MAX, t_first: 0, len: 0, used: 0, values });
            return Some(i);
        }
        let n = self.slots.len();
        for _ in 0..PROBES.min(n) {
            let i = self.hand % n;
            self.hand = (i + 1) % n;
            if self.slots[i].used + 1 < self.epoch {
                return Some(i);
            }
        }
        None
    }

    /// [`Self::bytes`] once the slot table holds `slots` slots (their values included).
    fn bytes_with(&self, slots: usize) -> usize {
        let buckets = (slots * 8).div_ceil(7).next_power_of_two();
        slots * (size_of::<Slot>() + VALUES) + buckets * (size_of::<(Key, u32)>() + 1) + 16
    }
}

/// What a query may do with the cache: the cache, the stream queried, and the bytes the cache
/// may hold in all.
pub(crate) struct CacheUse<'a> {
    pub cache: &'a mut DecodedCache,
    pub stream: u32,
    pub room: usize,
}

/// The values (`StreamStore::block_values`) of one series, block after block, from the cache
/// when it holds them; what is decoded goes into the cache when it has room.
pub(crate) struct SeriesValues<'a> {
    cache: Option<CacheUse<'a>>,
    series: usize,
    /// Block number of what `slot` or `buf` holds.
    block: u64,
    /// The cache's slot holding `block`; `None`: `buf` does.
    slot: Option<usize>,
    buf: [f64; BLOCK],
}

impl<'a> SeriesValues<'a> {
    pub(crate) fn new(cache: Option<CacheUse<'a>>, series: usize) -> SeriesValues<'a> {
        SeriesValues { cache, series, block: u64::MAX, slot: None, buf: [0.0; BLOCK] }
    }

    /// The values of block number `block` (`blk`) of `st`.
    #[inline]
    pub(crate) fn get(&mut self, st: &StreamStore, block: u64, blk: &Block) -> &[f64] {
        if block != self.block {
            self.load(st, block, blk);
        }
        match (&self.cache, self.slot) {
            (Some(c), Some(i)) => &c.cache.slots[i].values[..blk.len],
            _ => &self.buf[..blk.len],
        }
    }

    fn load(&mut self, st: &StreamStore, block: u64, blk: &Block) {
        self.block = block;
        self.slot = match self.cache.as_mut() {
            Some(c) => c.values(st, self.series, block, blk, &mut self.buf),
            None => {
                st.block_values(blk, self.series, &mut self.buf);
                None
            }
        };
    }
}

impl CacheUse<'_> {
    /// The values of series `s` of block number `block` (`blk`) of `st`: the slot of the cache
    /// that holds them, or `None` when they are in `buf`.
    pub(crate) fn values(
        &mut self,
        st: &StreamStore,
        s: usize,
        block: u64,
        blk: &Block,
        buf: &mut [f64; BLOCK],
    ) -> Option<usize> {
        if !blk.is_sealed() {
            st.block_values(blk, s, buf);
            return None;
        }
        if let Some(i) = self.cache.find(self.stream, s, block, blk) {
            if st.wraps[s].is_some()
                && blk.len > 0
                && st.blocks.front().is_some_and(|b| b.first_ordinal == blk.first_ordinal)
            {
                // The oldest block: its predecessor may have been coarsened away since it was
                // cached, and the head rate stands in. A block with a predecessor kept the rate
                // against it (sealed blocks never change; blocks go from the front only).
                self.cache.slots[i].values[0] = st.first_rate(blk, s);
            }
            return Some(i);
        }
        let vals = st.block_values(blk, s, buf);
        self.cache.put(self.stream, s, block, blk, vals, self.room)
    }
}
