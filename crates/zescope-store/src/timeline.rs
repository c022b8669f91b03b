//! Timestamp encoding for one block of samples.
//!
//! Timestamps are shared by every series of a stream, so their cost is divided
//! by the number of counters, but at 16 counters an `i64` per sample would still
//! cost 0.5 B per value: the whole budget above the 8 B of the value itself.
//! Within a block (at most [`super::column::BLOCK`] samples) they are stored as
//! an `i64` base and `u32` offsets from it: 4 B per sample, 0.25 B per value at
//! 16 counters. A block whose span outgrows `u32` nanoseconds (4.29 s: slower
//! than ~60 Hz sampling) switches to plain `i64`s; that costs 1 KiB more per
//! block, which the ingest path reserves against the memory cap up front.

use super::column::BLOCK;

pub(crate) enum TsBlock {
    Delta { base: i64, d: Box<[u32]> },
    Full(Box<[i64]>),
}

impl TsBlock {
    pub(crate) fn new(base: i64) -> TsBlock {
        TsBlock::Delta { base, d: vec![0u32; BLOCK].into_boxed_slice() }
    }

    /// [`Self::new`] in this storage: offsets again (zeroed) from `base`.
    pub(crate) fn reset(&mut self, base: i64) {
        match self {
            TsBlock::Delta { base: b, d } => {
                *b = base;
                d.fill(0);
            }
            TsBlock::Full(_) => *self = TsBlock::new(base),
        }
    }

    /// Bytes on the heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            TsBlock::Delta { .. } => BLOCK * 4,
            TsBlock::Full(_) => BLOCK * 8,
        }
    }

    /// Extra bytes a switch to `i64`s can cost (see the module docs).
    pub(crate) const fn conversion_bytes() -> usize {
        BLOCK * 4
    }

    #[inline]
    pub(crate) fn get(&self, i: usize) -> i64 {
        match self {
            TsBlock::Delta { base, d } => base + d[i] as i64,
            TsBlock::Full(v) => v[i],
        }
    }

    /// The timestamps of samples `0..out.len()`.
    pub(crate) fn read(&self, out: &mut [i64]) {
        match self {
            TsBlock::Delta { base, d } => out.iter_mut().zip(d.iter()).for_each(|(o, &d)| *o = base + d as i64),
            TsBlock::Full(v) => out.copy_from_slice(&v[..out.len()]),
        }
    }

    /// Store the timestamps of samples `off..off + ts.len()` (`ts` increasing,
    /// all at or after the base).
    pub(crate) fn write(&mut self, off: usize, ts: &[i64]) {
        if let TsBlock::Delta { base, d } = self {
            let last = ts.last().copied().unwrap_or(*base);
            if last.checked_sub(*base).is_some_and(|d| d <= u32::MAX as i64) {
                for (slot, &t) in d[off..off + ts.len()].iter_mut().zip(ts) {
                    *slot = (t - *base) as u32;
                }
                return;
            }
            let full: Box<[i64]> = (0..BLOCK).map(|i| *base + d[i] as i64).collect();
            *self = TsBlock::Full(full);
        }
        if let TsBlock::Full(v) = self {
            v[off..off + ts.len()].copy_from_slice(ts);
        }
    }

    /// First index in `0..len` whose timestamp is `>= t`.
    pub(crate) fn partition_point(&self, len: usize, t: i64) -> usize {
        match self {
            TsBlock::Delta { base, d } => {
                if t <= *base {
                    return 0;
                }
                let off = match t.checked_sub(*base) {
                    Some(off) if off <= u32::MAX as i64 => off,
                    _ => return len,
                };
                d[..len].partition_point(|&x| (x as i64) < off)
            }
            TsBlock::Full(v) => v[..len].partition_point(|&x| x < t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_encoding_round_trips_and_switches_when_the_span_is_too_long() {
        let mut b = TsBlock::new(1_000);
        b.write(0, &[1_000, 2_000, 3_000]);
        assert!(matches!(b, TsBlock::Delta { .. }));
        b.write(3, &[3_000 + u32::MAX as i64 + 5]);
        assert!(matches!(b, TsBlock::Full(_)));
        assert_eq!(b.heap_bytes(), BLOCK * 8);
        let got: Vec<i64> = (0..4).map(|i| b.get(i)).collect();
        assert_eq!(got, vec![1_000, 2_000, 3_000, 3_000 + u32::MAX as i64 + 5]);
        assert_eq!(b.partition_point(4, 2_500), 2);
        assert_eq!(b.partition_point(4, i64::MAX), 4);
    }

    #[test]
    fn partition_point_on_deltas() {
        let mut b = TsBlock::new(-50);
        b.write(0, &[-50, -10, 0, 40]);
        assert_eq!(b.partition_point(4, i64::MIN), 0);
        assert_eq!(b.partition_point(4, -10), 1);
        assert_eq!(b.partition_point(4, -9), 2);
        assert_eq!(b.partition_point(4, 41), 4);
    }
}
