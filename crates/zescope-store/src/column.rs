//! Raw sample blocks: the full-resolution data.
//!
//! A stream's samples are stored in blocks of [`BLOCK`] samples. The newest
//! block of a stream is *open*: it takes samples, plainly laid out (the shared
//! timestamps as a [`TsBlock`], one `f64` column per series, column-major),
//! allocated at its final size (or taken over, cleared, from the block just
//! sealed, whose storage it no longer needs). When the stream moves on to the next
//! block (this one is full, or a gap closes it) the block is *sealed*: its
//! timestamps and each series' column are encoded (`pack.rs`: frame of
//! reference, delta, XOR or runs, whichever is smallest) into one allocation of
//! exactly the bytes needed, headed by the byte offset of every column (`u16`s
//! when the block fits in 64 KiB, as 16 series of counters always do). A
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
    /// Where [`Block::seal`] encodes (the columns, and where each starts), reused from block to block.
    static SCRATCH: std::cell::RefCell<(Vec<u8>, Vec<usize>)> = const {
        std::cell::RefCell::new((Vec::new(), Vec::new()))
    };
}

/// Samples per block (= samples per level-1 pyramid node).
pub(crate) const BLOCK: usize = 256;

/// The open block's storage, boxed so that the (many) sealed blocks' `Block`s stay small.
struct Open {
    ts: TsBlock,
    values: Box<[f64]>,
}

/// The storage of a block that was sealed, to be reused by the next one.
pub(crate) struct Spare(Box<Open>);

enum Data {
    Open(Box<Open>),
    /// Offsets of the `1 + n` columns (timestamps first), then the columns. The offsets are
    /// `u16`s when the whole block fits in 64 KiB, `u32`s otherwise.
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
    pub(crate) fn new(n_series: usize, t_first: i64, gap_before: i64, first_ordinal: u64) -> Block {
        Block {
            data: Data::Open(Box::new(Open {
                ts: TsBlock::new(t_first),
                values: vec![0.0; BLOCK * n_series].into_boxed_slice(),
            })),
            len: 0,
            gap_before,
            first_ordinal,
            t_first,
            t_last: t_first,
        }
    }

    /// [`Self::new`], in the storage a sealed block handed back (cleared) when there is one.
    pub(crate) fn reusing(
        spare: Option<Spare>,
        n_series: usize,
        t_first: i64,
        gap_before: i64,
        first_ordinal: u64,
    ) -> Block {
        let Some(Spare(mut open)) = spare.filter(|s| s.0.values.len() == BLOCK * n_series) else {
            return Block::new(n_series, t_first, gap_before, first_ordinal);
        };
        open.ts.reset(t_first);
        open.values.fill(0.0);
        Block { data: Data::Open(open), len: 0, gap_before, first_ordinal, t_first, t_last: t_first }
    }

    /// Heap bytes of the block as allocated.
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.data {
            Data::Open(o) => size_of::<Open>() + o.ts.heap_bytes() + o.values.len() * 8,
            Data::Sealed(b) => b.len(),
        }
    }

    /// Heap bytes of a new open block, with the larger timestamp encoding.
    pub(crate) fn worst_heap_bytes(n_series: usize) -> usize {
        size_of::<Open>() + BLOCK * 8 + BLOCK * n_series * 8
    }

    /// Heap bytes a sealed block can take at most (more than an open one: headers).
    pub(crate) fn worst_sealed_bytes(n_series: usize) -> usize {
        (n_series + 1) * (4 + pack::WORST_COLUMN)
    }

    #[inline]
    pub(crate) fn t_first(&self) -> i64 {
        self.t_first
    }

    #[inline]
    pub(crate) fn t_last(&self) -> i64 {
        self.t_last
    }

    /// The open block's storage, to append samples `len..` to; `None` once sealed.
    pub(crate) fn open_mut(&mut self) -> Option<(&mut TsBlock, &mut [f64])> {
        match &mut self.data {
            Data::Open(o) => Some((&mut o.ts, &mut o.values)),
            Data::Sealed(_) => None,
        }
    }

    /// Records that samples up to `len` are written, the last at `t_last`.
    pub(crate) fn filled(&mut self, len: usize, t_last: i64) {
        self.len = len;
        self.t_last = t_last;
    }

    /// Whether the block is sealed (encoded).
    pub(crate) fn is_sealed(&self) -> bool {
        matches!(self.data, Data::Sealed(_))
    }

    /// Encodes the block (it takes no more samples). The columns are encoded into a scratch
    /// buffer kept by the thread, then copied behind their offsets into one allocation of
    /// exactly the bytes needed.
    /// Returns the open storage, for [`Self::reusing`].
    pub(crate) fn seal(&mut self, n_series: usize) -> Option<Spare> {
        let sealed = self.encode(n_series)?;
        match std::mem::replace(&mut self.data, Data::Sealed(sealed)) {
            Data::Open(open) => Some(Spare(open)),
            Data::Sealed(_) => None,
        }
    }

    /// [`Self::seal`], unless the encoding is larger than the open block (a stream that ended
    /// seals its last block without reserving memory for it first).
    pub(crate) fn seal_if_smaller(&mut self, n_series: usize) {
        if let Some(sealed) = self.encode(n_series).filter(|b| b.len() <= self.heap_bytes()) {
            self.data = Data::Sealed(sealed);
        }
    }

    /// The sealed form of an open block.
    fn encode(&self, n_series: usize) -> Option<Box<[u8]>> {
        let Data::Open(o) = &self.data else { return None };
        let Open { ts, values } = &**o;
        let len = self.len;
        let sealed = SCRATCH.with_borrow_mut(|(body, starts)| {
            body.clear();
            starts.clear();
            let mut t = [0i64; BLOCK];
            ts.read(&mut t[..len]);
            pack::encode_i64(&t[..len], body);
            for s in 0..n_series {
                starts.push(body.len());
                pack::encode_f64(&values[s * BLOCK..s * BLOCK + len], body);
            }
            let narrow = (n_series + 1) * 2 + body.len() <= u16::MAX as usize;
            let header = (n_series + 1) * if narrow { 2 } else { 4 };
            let mut out = Vec::with_capacity(header + body.len());
            for at in std::iter::once(0).chain(starts.iter().copied()) {
                let at = at + header;
                if narrow {
                    out.extend_from_slice(&(at as u16).to_le_bytes());
                } else {
                    out.extend_from_slice(&(at as u32).to_le_bytes());
                }
            }
            out.extend_from_slice(body);
            out.into_boxed_slice()
        });
        Some(sealed)
    }

    /// Encoded column `c` of a sealed block (0: timestamps, `1 + s`: series `s`).
    fn column_bytes(b: &[u8], c: usize) -> &[u8] {
        let w = if b.len() <= u16::MAX as usize { 2 } else { 4 };
        let offset = |k: usize| {
            let mut a = [0u8; 4];
            if let Some(x) = b.get(k * w..k * w + w) {
                a[..w].copy_from_slice(x);
            }
            u32::from_le_bytes(a) as usize
        };
        let start = offset(c);
        let header = offset(0);
        let next = (c + 1) * w;
        let end = if next < header { offset(c + 1) } else { b.len() };
        b.get(start..end).unwrap_or(&[])
    }

    /// Timestamp of sample `j`.
    #[inline]
    pub(crate) fn ts_at(&self, j: usize) -> i64 {
        match &self.data {
            Data::Open(o) => o.ts.get(j),
            Data::Sealed(b) => pack::i64_at(Block::column_bytes(b, 0), self.len, j),
        }
    }

    /// The stored timestamps, decoded into `buf` if need be.
    pub(crate) fn timestamps<'a>(&self, buf: &'a mut [i64; BLOCK]) -> &'a [i64] {
        match &self.data {
            Data::Open(o) => o.ts.read(&mut buf[..self.len]),
            Data::Sealed(b) => pack::decode_i64(Block::column_bytes(b, 0), &mut buf[..self.len]),
        }
        &buf[..self.len]
    }

    /// First index in `0..len` whose timestamp is `>= t`.
    pub(crate) fn partition_point(&self, t: i64) -> usize {
        match &self.data {
            Data::Open(o) => o.ts.partition_point(self.len, t),
            Data::Sealed(_) => {
                let mut buf = [0i64; BLOCK];
                self.timestamps(&mut buf).partition_point(|&x| x < t)
            }
        }
    }

    /// The stored samples of series `s`, decoded into `buf` if need be.
    #[inline]
    pub(crate) fn col<'a>(&'a self, s: usize, buf: &'a mut [f64; BLOCK]) -> &'a [f64] {
        match &self.data {
            Data::Open(o) => &o.values[s * BLOCK..s * BLOCK + self.len],
            Data::Sealed(b) => {
                pack::decode_f64(Block::column_bytes(b, s + 1), &mut buf[..self.len]);
                &buf[..self.len]
            }
        }
    }

    /// Stored value `j` of series `s`.
    #[inline]
    pub(crate) fn value(&self, s: usize, j: usize) -> f64 {
        match &self.data {
            Data::Open(o) => o.values[s * BLOCK + j],
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
        // Small enough for 16-bit column offsets: 2 bytes per column.
        let Data::Sealed(bytes) = &b.data else { unreachable!() };
        assert_eq!(u16::from_le_bytes([bytes[0], bytes[1]]) as usize, (n + 1) * 2);
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

    #[test]
    fn a_block_over_64_kib_takes_32_bit_offsets() {
        // 48 series of noisy floats: about 1.7 KiB each once packed.
        let n = 48;
        let mut b = Block::new(n, 0, 0, 0);
        let ts: Vec<i64> = (0..BLOCK as i64).map(|j| j * 1_000_000).collect();
        let (t, v) = b.open_mut().unwrap();
        t.write(0, &ts);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for slot in v.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *slot = 50.0 + 40.0 * (x >> 11) as f64 / (1u64 << 53) as f64;
        }
        let want = v.to_vec();
        b.filled(BLOCK, ts[BLOCK - 1]);
        b.seal(n);
        assert!(b.heap_bytes() > u16::MAX as usize, "{}", b.heap_bytes());
        let Data::Sealed(bytes) = &b.data else { unreachable!() };
        assert_eq!(u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize, (n + 1) * 4);
        let mut buf = [0.0; BLOCK];
        for s in [0, 17, n - 1] {
            assert_eq!(b.col(s, &mut buf), &want[s * BLOCK..(s + 1) * BLOCK]);
        }
        let mut tbuf = [0; BLOCK];
        assert_eq!(b.timestamps(&mut tbuf), &ts[..]);
    }
}
