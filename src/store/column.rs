//! Raw sample blocks: the full-resolution data.
//!
//! A stream's samples are stored in blocks of [`BLOCK`] samples. The newest
//! block of a stream is *open*: it takes samples, plainly laid out (the shared
//! timestamps as a [`TsBlock`], one `f64` column per series, column-major),
//! allocated once at its final size. When the stream moves on to the next
//! block (this one is full, or a gap closes it) the block is *sealed*: its
//! timestamps and each series' column are encoded (`pack.rs`: frame of
//! reference, delta or XOR, whichever is smallest) into one allocation of
//! exactly the bytes needed, headed by the byte offset of every column. A
//! sealed block decodes a column at a time; a frame-of-reference column reads
//! a single value directly.
//!
//! For a cumulative counter the column holds the raw totals; the rate of a
//! block's first sample is taken against the previous block's last total (the
//! stream keeps the rate of its oldest block's first sample, whose predecessor
//! may have been coarsened away).
//!
//! A block is closed early when a gap is marked: every gap lies on a block
//! boundary, so no pyramid node at level 1 ever straddles one. Block number `b`
//! of a stream is pyramid node `b` at level 1.

use super::pack;
use super::timeline::TsBlock;

thread_local! {
    /// Where [`Block::seal`] encodes, reused from block to block.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Samples per block (= samples per level-1 pyramid node).
pub(crate) const BLOCK: usize = 256;

enum Data {
    Open {
        ts: TsBlock,
        values: Box<[f64]>,
    },
    /// `u32` offsets of the `1 + n` columns (timestamps first), then the columns.
    Sealed(Box<[u8]>),
}

pub(crate) struct Block {
    data: Data,
    /// Samples stored.
    pub len: usize,
    /// Time between the previous sample and sample 0 when a gap separates
    /// them, 0 otherwise.
    pub gap_before: i64,
    /// Ordinal (0-based position in the stream) of sample 0.
    pub first_ordinal: u64,
    t_first: i64,
    t_last: i64,
}

impl Block {
    pub fn new(n_series: usize, t_first: i64, gap_before: i64, first_ordinal: u64) -> Block {
        Block {
            data: Data::Open { ts: TsBlock::new(t_first), values: vec![0.0; BLOCK * n_series].into_boxed_slice() },
            len: 0,
            gap_before,
            first_ordinal,
            t_first,
            t_last: t_first,
        }
    }

    /// Heap bytes of the block as allocated.
    pub fn heap_bytes(&self) -> usize {
        match &self.data {
            Data::Open { ts, values } => ts.heap_bytes() + values.len() * 8,
            Data::Sealed(b) => b.len(),
        }
    }

    /// Heap bytes of a new open block, with the larger timestamp encoding.
    pub fn worst_heap_bytes(n_series: usize) -> usize {
        BLOCK * 8 + BLOCK * n_series * 8
    }

    /// Heap bytes a sealed block can take at most (more than an open one: headers).
    pub fn worst_sealed_bytes(n_series: usize) -> usize {
        (n_series + 1) * (4 + pack::WORST_COLUMN)
    }

    #[inline]
    pub fn t_first(&self) -> i64 {
        self.t_first
    }

    #[inline]
    pub fn t_last(&self) -> i64 {
        self.t_last
    }

    /// The open block's storage, to append samples `len..` to; `None` once sealed.
    pub fn open_mut(&mut self) -> Option<(&mut TsBlock, &mut [f64])> {
        match &mut self.data {
            Data::Open { ts, values } => Some((ts, values)),
            Data::Sealed(_) => None,
        }
    }

    /// Records that samples up to `len` are written, the last at `t_last`.
    pub fn filled(&mut self, len: usize, t_last: i64) {
        self.len = len;
        self.t_last = t_last;
    }

    /// Whether the block is sealed (encoded).
    pub fn is_sealed(&self) -> bool {
        matches!(self.data, Data::Sealed(_))
    }

    /// Encodes the block (it takes no more samples). The encoding is written to a scratch
    /// buffer kept by the thread, then copied into one allocation of exactly its size.
    pub fn seal(&mut self, n_series: usize) {
        let Data::Open { ts, values } = &self.data else { return };
        let len = self.len;
        let sealed = SCRATCH.with_borrow_mut(|out| {
            out.clear();
            out.resize((n_series + 1) * 4, 0);
            let mut t = [0i64; BLOCK];
            (0..len).for_each(|j| t[j] = ts.get(j));
            pack::encode_i64(&t[..len], out);
            for s in 0..n_series {
                let at = out.len() as u32;
                out[(s + 1) * 4..(s + 2) * 4].copy_from_slice(&at.to_le_bytes());
                pack::encode_f64(&values[s * BLOCK..s * BLOCK + len], out);
            }
            let at = ((n_series + 1) * 4) as u32;
            out[..4].copy_from_slice(&at.to_le_bytes());
            Box::<[u8]>::from(&out[..])
        });
        self.data = Data::Sealed(sealed);
    }

    /// Encoded column `c` of a sealed block (0: timestamps, `1 + s`: series `s`).
    fn column_bytes(b: &[u8], c: usize) -> &[u8] {
        let offset = |k: usize| {
            let mut a = [0u8; 4];
            a.copy_from_slice(b.get(k * 4..k * 4 + 4).unwrap_or(&[0; 4]));
            u32::from_le_bytes(a) as usize
        };
        let start = offset(c);
        let header = offset(0);
        let next = (c + 1) * 4;
        let end = if next < header { offset(c + 1) } else { b.len() };
        b.get(start..end).unwrap_or(&[])
    }

    /// Timestamp of sample `j`.
    #[inline]
    pub fn ts_at(&self, j: usize) -> i64 {
        match &self.data {
            Data::Open { ts, .. } => ts.get(j),
            Data::Sealed(b) => pack::i64_at(Block::column_bytes(b, 0), self.len, j),
        }
    }

    /// The stored timestamps, decoded into `buf` if need be.
    pub fn timestamps<'a>(&self, buf: &'a mut [i64; BLOCK]) -> &'a [i64] {
        match &self.data {
            Data::Open { ts, .. } => (0..self.len).for_each(|j| buf[j] = ts.get(j)),
            Data::Sealed(b) => pack::decode_i64(Block::column_bytes(b, 0), &mut buf[..self.len]),
        }
        &buf[..self.len]
    }

    /// First index in `0..len` whose timestamp is `>= t`.
    pub fn partition_point(&self, t: i64) -> usize {
        match &self.data {
            Data::Open { ts, .. } => ts.partition_point(self.len, t),
            Data::Sealed(_) => {
                let mut buf = [0i64; BLOCK];
                self.timestamps(&mut buf).partition_point(|&x| x < t)
            }
        }
    }

    /// The stored samples of series `s`, decoded into `buf` if need be.
    #[inline]
    pub fn col<'a>(&'a self, s: usize, buf: &'a mut [f64; BLOCK]) -> &'a [f64] {
        match &self.data {
            Data::Open { values, .. } => &values[s * BLOCK..s * BLOCK + self.len],
            Data::Sealed(b) => {
                pack::decode_f64(Block::column_bytes(b, s + 1), &mut buf[..self.len]);
                &buf[..self.len]
            }
        }
    }

    /// Stored value `j` of series `s`.
    #[inline]
    pub fn value(&self, s: usize, j: usize) -> f64 {
        match &self.data {
            Data::Open { values, .. } => values[s * BLOCK + j],
            Data::Sealed(b) => pack::f64_at(Block::column_bytes(b, s + 1), self.len, j),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_block_reads_as_it_did_open() {
        let n = 3;
        let mut b = Block::new(n, 1_000, 0, 0);
        let len = 200;
        let ts: Vec<i64> = (0..len as i64).map(|j| 1_000 + j * 997 + j % 3).collect();
        let (t, v) = b.open_mut().unwrap();
        t.write(0, &ts);
        for j in 0..len {
            v[j] = j as f64 * 3.0;
            v[BLOCK + j] = (j as f64).sin();
            v[2 * BLOCK + j] = 7.5;
        }
        b.filled(len, ts[len - 1]);
        let open_bytes = b.heap_bytes();
        let mut before = Vec::new();
        let mut buf = [0.0; BLOCK];
        for s in 0..n {
            before.push(b.col(s, &mut buf).to_vec());
        }
        b.seal(n);
        assert!(b.is_sealed());
        assert!(b.heap_bytes() < open_bytes / 2, "{} of {open_bytes}", b.heap_bytes());
        assert!(b.heap_bytes() <= Block::worst_sealed_bytes(n));
        let mut tbuf = [0; BLOCK];
        assert_eq!(b.timestamps(&mut tbuf), &ts[..]);
        assert_eq!((b.t_first(), b.t_last(), b.ts_at(57)), (1_000, ts[len - 1], ts[57]));
        assert_eq!(b.partition_point(ts[10] + 1), 11);
        for (s, col) in before.iter().enumerate() {
            assert_eq!(b.col(s, &mut buf), &col[..]);
            assert_eq!(b.value(s, 123).to_bits(), col[123].to_bits());
        }
        assert!(b.open_mut().is_none());
    }
}
