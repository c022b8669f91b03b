//! Raw sample blocks: the full-resolution data.
//!
//! A stream's samples are stored in blocks of [`BLOCK`] samples. A block holds
//! the shared timestamps ([`TsBlock`]) and one `f64` column per series, laid out
//! column-major so a query scanning one series reads contiguous memory. A block
//! is allocated once at its final size: no `Vec` doubling, so the accounted
//! bytes are the real bytes.
//!
//! For a cumulative counter the column holds the raw totals; the rate of a
//! block's first sample is taken against the previous block's last total (the
//! stream keeps the rate of its oldest block's first sample, whose predecessor
//! may have been coarsened away).
//!
//! A block is closed early when a gap is marked: every gap lies on a block
//! boundary, so no pyramid node at level 1 ever straddles one. Block number `b`
//! of a stream is pyramid node `b` at level 1.

use super::timeline::TsBlock;

/// Samples per block (= samples per level-1 pyramid node).
pub(crate) const BLOCK: usize = 256;

pub(crate) struct Block {
    pub ts: TsBlock,
    /// `BLOCK * n_series` values, series `s` at `s * BLOCK ..`.
    pub values: Box<[f64]>,
    /// Samples stored.
    pub len: usize,
    /// Time between the previous sample and sample 0 when a gap separates
    /// them, 0 otherwise.
    pub gap_before: i64,
    /// Ordinal (0-based position in the stream) of sample 0.
    pub first_ordinal: u64,
}

impl Block {
    pub fn new(n_series: usize, t_first: i64, gap_before: i64, first_ordinal: u64) -> Block {
        Block {
            ts: TsBlock::new(t_first),
            values: vec![0.0; BLOCK * n_series].into_boxed_slice(),
            len: 0,
            gap_before,
            first_ordinal,
        }
    }

    /// Heap bytes of a block as allocated.
    pub fn heap_bytes(&self) -> usize {
        self.ts.heap_bytes() + self.values.len() * 8
    }

    /// Heap bytes of a new block, with the larger timestamp encoding.
    pub fn worst_heap_bytes(n_series: usize) -> usize {
        BLOCK * 8 + BLOCK * n_series * 8
    }

    #[inline]
    pub fn t_first(&self) -> i64 {
        self.ts.get(0)
    }

    #[inline]
    pub fn t_last(&self) -> i64 {
        self.ts.get(self.len.saturating_sub(1))
    }

    /// The stored samples of series `s`.
    #[inline]
    pub fn col(&self, s: usize) -> &[f64] {
        &self.values[s * BLOCK..s * BLOCK + self.len]
    }
}
