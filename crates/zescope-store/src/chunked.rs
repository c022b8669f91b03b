//! Fixed-size chunk storage with a moving front.
//!
//! Pyramid levels grow at the back and are coarsened/evicted at the front. A
//! `Vec` would grow by doubling, so an append could suddenly need twice the
//! memory: the cap could not be kept exactly and the slack would be billed to
//! every stored value. A [`Chunked`] allocates `CHUNK` elements at a time
//! (so the accounted bytes are the real bytes, give or take one partial chunk)
//! and frees whole chunks from the front.
//!
//! Elements are addressed by a global `u64` index that never changes: node `m`
//! of a level stays node `m` after older nodes are dropped. Live indices are
//! `start()..end()`.

use std::collections::VecDeque;

/// Elements per chunk. A power of two so indexing is shifts and masks.
pub(crate) const CHUNK: usize = 32;
const CHUNK_U64: u64 = CHUNK as u64;

pub(crate) struct Chunked<T> {
    chunks: VecDeque<Box<[T]>>,
    /// Global index of `chunks[0][0]` (a multiple of `CHUNK`).
    first: u64,
    /// First live index (`first <= start <= end`).
    start: u64,
    /// One past the last live index.
    end: u64,
}

impl<T: Copy + Default> Chunked<T> {
    pub(crate) fn new() -> Self {
        Chunked { chunks: VecDeque::new(), first: 0, start: 0, end: 0 }
    }

    #[inline]
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    #[inline]
    pub(crate) fn end(&self) -> u64 {
        self.end
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.end
    }

    #[inline]
    pub(crate) fn contains(&self, i: u64) -> bool {
        i >= self.start && i < self.end
    }

    /// Element `i`; `i` must be live (callers check [`Self::contains`]).
    #[inline]
    pub(crate) fn at(&self, i: u64) -> &T {
        debug_assert!(self.contains(i));
        let off = (i - self.first) as usize;
        &self.chunks[off / CHUNK][off % CHUNK]
    }

    #[inline]
    pub(crate) fn get(&self, i: u64) -> Option<&T> {
        self.contains(i).then(|| self.at(i))
    }

    #[inline]
    pub(crate) fn at_mut(&mut self, i: u64) -> &mut T {
        debug_assert!(self.contains(i));
        let off = (i - self.first) as usize;
        &mut self.chunks[off / CHUNK][off % CHUNK]
    }

    /// The live elements from `i` up to `hi` or the end of `i`'s chunk,
    /// whichever comes first (`i` live, `i < hi`): a contiguous run to loop
    /// over without per-element index arithmetic.
    #[inline]
    pub(crate) fn run_from(&self, i: u64, hi: u64) -> &[T] {
        debug_assert!(self.contains(i) && i < hi);
        let off = (i - self.first) as usize;
        let (c, k) = (off / CHUNK, off % CHUNK);
        let len = (CHUNK - k).min((hi.min(self.end) - i) as usize);
        &self.chunks[c][k..k + len]
    }

    /// Append `v` at global index `i`. `i` must be `end()`, or anything at or
    /// after `end()` when the storage is empty (the storage then restarts there).
    pub(crate) fn push_at(&mut self, i: u64, v: T) {
        if self.is_empty() {
            if self.first + (self.chunks.len() * CHUNK) as u64 <= i || i < self.first {
                self.chunks.clear();
                self.first = i - i % CHUNK_U64;
            }
            self.start = i;
            self.end = i;
        }
        debug_assert_eq!(i, self.end, "Chunked::push_at must append");
        if ((i - self.first) as usize) / CHUNK >= self.chunks.len() {
            self.chunks.push_back(vec![T::default(); CHUNK].into_boxed_slice());
        }
        self.end += 1;
        *self.at_mut(i) = v;
    }

    /// One past the last index of the front chunk (what [`Self::pop_front_chunk`]
    /// would drop), or `None` when there is no live element.
    pub(crate) fn front_chunk_end(&self) -> Option<u64> {
        (!self.is_empty()).then(|| (self.first + CHUNK_U64).min(self.end))
    }

    /// Drop the front chunk; returns the live range it held.
    pub(crate) fn pop_front_chunk(&mut self) -> Option<std::ops::Range<u64>> {
        let cut = self.front_chunk_end()?;
        let dropped = self.start..cut;
        if cut == self.end {
            // The front chunk held everything: free it, the next push restarts.
            self.chunks.clear();
            self.first = cut - cut % CHUNK_U64;
            self.start = cut;
            self.end = cut;
        } else {
            self.chunks.pop_front();
            self.first += CHUNK_U64;
            self.start = cut;
        }
        Some(dropped)
    }

    /// Bytes held: the chunks plus the spine that points at them.
    pub(crate) fn bytes(&self) -> usize {
        self.chunks.len() * CHUNK * size_of::<T>() + self.chunks.capacity() * size_of::<Box<[T]>>()
    }

    /// Upper bound of the bytes that `n` more pushes can add.
    pub(crate) fn growth_bound(&self, n: u64) -> usize {
        if n == 0 {
            return 0;
        }
        let new_chunks = (n / CHUNK_U64 + 1) as usize;
        let spine = if self.chunks.len() + new_chunks > self.chunks.capacity() {
            // VecDeque at most doubles, or grows to exactly what is needed.
            (self.chunks.capacity() + new_chunks).max(4) * size_of::<Box<[T]>>()
        } else {
            0
        };
        new_chunks * CHUNK * size_of::<T>() + spine
    }

    /// Bytes of one chunk (what [`Self::pop_front_chunk`] frees).
    #[cfg(test)]
    pub(crate) const fn chunk_bytes() -> usize {
        CHUNK * size_of::<T>()
    }

    /// First index in `lo..hi` (live, `lo <= hi`) for which `pred` is false,
    /// given that `pred` is true then false along the range.
    pub(crate) fn partition_point(&self, lo: u64, hi: u64, mut pred: impl FnMut(&T) -> bool) -> u64 {
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.at(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_survive_front_drops() {
        let mut c = Chunked::<u64>::new();
        for i in 0..100 {
            c.push_at(i, i * 10);
        }
        assert_eq!(c.pop_front_chunk(), Some(0..32));
        assert_eq!((c.start(), c.end()), (32, 100));
        assert_eq!(c.get(31), None);
        assert_eq!(c.get(32), Some(&320));
        assert_eq!(*c.at(99), 990);
        assert_eq!(c.partition_point(32, 100, |&v| v < 505), 51);
    }

    #[test]
    fn bytes_track_chunks_and_growth_bound_covers_pushes() {
        let mut c = Chunked::<[u64; 5]>::new();
        assert_eq!(c.bytes(), 0);
        let bound = c.growth_bound(70);
        for i in 0..70 {
            c.push_at(i, [0; 5]);
        }
        assert!(c.bytes() <= bound, "{} > {}", c.bytes(), bound);
        assert!(c.bytes() >= 3 * Chunked::<[u64; 5]>::chunk_bytes());
        let before = c.bytes();
        c.pop_front_chunk();
        assert_eq!(before - c.bytes(), Chunked::<[u64; 5]>::chunk_bytes());
    }

    #[test]
    fn empty_storage_restarts_at_any_later_index() {
        let mut c = Chunked::<u32>::new();
        c.push_at(1000, 7);
        assert_eq!((c.start(), c.end()), (1000, 1001));
        assert_eq!(c.get(1000), Some(&7));
        // Dropping the only chunk leaves an empty storage that can continue.
        c.pop_front_chunk();
        assert!(c.is_empty());
        c.push_at(1001, 8);
        assert_eq!(c.get(1001), Some(&8));
    }
}
