//! Drawing bands: a compact copy of the pyramid's min and max, for drawing.
//!
//! A plot over a long history reads about two pyramid nodes per pixel column
//! and series, and only their min and max: drawn from the 40-byte [`Agg`]s,
//! 64 series over 1554 columns read 6 MB a frame. [`Bands`] keeps, per series
//! and pyramid level (from [`BAND_LEVEL`] up), each node's min and max as two
//! `f32` offsets from a base shared by the [`CHUNK`] nodes of one storage
//! chunk: 8 bytes a node (plus 8 a chunk), read 5x faster.
//!
//! The offsets are rounded outward: `base + lo as f64 <= min` and
//! `base + hi as f64 >= max`, computed exactly as the reader computes them,
//! so a band never hides a sample. It is wider by at most an `f32` rounding
//! of the offset, about 6e-8 of the distance from the chunk's base (its first
//! finite value): under automatic y bounds, which span every visible column,
//! that is below a ten-thousandth of a pixel, and it stays small against the
//! values themselves, whatever their magnitude (a 1.5 GHz clock varying by a
//! kHz keeps its kHz). A chunk whose values are too far apart for `f32`
//! offsets is marked inexact and read from the aggregates instead.
//!
//! Only drawing uses bands: statistics, readouts and exports read the exact
//! aggregates. Storage mirrors [`Chunked`](super::chunked::Chunked): the same
//! chunk boundaries, so both drop the same nodes when history is coarsened.

use std::collections::VecDeque;

use super::agg::Agg;
use super::chunked::CHUNK;

/// Lowest pyramid level that keeps bands. Level 1 (a node per 256 samples)
/// would add 0.031 B to every stored value; from level 2 up they cost 0.002 B.
pub(crate) const BAND_LEVEL: usize = 2;

const CHUNK_U64: u64 = CHUNK as u64;
/// A node with no finite value: the min above the max.
const EMPTY: [f32; 2] = [f32::INFINITY, f32::NEG_INFINITY];

#[derive(Clone)]
struct BandChunk {
    /// What the offsets are from (meaningful once `based`).
    base: f64,
    /// A finite value has arrived, so `base` is set.
    based: bool,
    /// Some value is too far from `base` for an `f32` offset: read the aggregates.
    inexact: bool,
    v: [[f32; 2]; CHUNK],
}

impl BandChunk {
    fn new() -> Box<BandChunk> {
        Box::new(BandChunk { base: 0.0, based: false, inexact: false, v: [EMPTY; CHUNK] })
    }

    fn set(&mut self, k: usize, a: &Agg) {
        if a.min > a.max {
            self.v[k] = EMPTY;
            return;
        }
        if !self.based {
            self.base = a.min;
            self.based = true;
        }
        match (down(a.min, self.base), up(a.max, self.base)) {
            (Some(lo), Some(hi)) => self.v[k] = [lo, hi],
            _ => {
                self.inexact = true;
                self.v[k] = [f32::NEG_INFINITY, f32::INFINITY];
            }
        }
    }
}

/// The largest `f32` offset `f` with `base + f <= v` (`v` finite), `None` when out of range.
fn down(v: f64, base: f64) -> Option<f32> {
    let mut f = (v - base) as f32;
    while f.is_finite() && base + f as f64 > v {
        f = f.next_down();
    }
    f.is_finite().then_some(f)
}

/// The smallest `f32` offset `f` with `base + f >= v` (`v` finite), `None` when out of range.
fn up(v: f64, base: f64) -> Option<f32> {
    let mut f = (v - base) as f32;
    while f.is_finite() && (base + f as f64) < v {
        f = f.next_up();
    }
    f.is_finite().then_some(f)
}

/// Bands of one series at one level, addressed by node index (see the module docs).
pub(crate) struct Bands {
    chunks: VecDeque<Box<BandChunk>>,
    /// Node index of `chunks[0].v[0]` (a multiple of `CHUNK`).
    first: u64,
    start: u64,
    end: u64,
}

impl Bands {
    pub(crate) fn new() -> Bands {
        Bands { chunks: VecDeque::new(), first: 0, start: 0, end: 0 }
    }

    #[inline]
    fn slot(&mut self, i: u64) -> (&mut BandChunk, usize) {
        debug_assert!(i >= self.start && i < self.end);
        let off = (i - self.first) as usize;
        (&mut self.chunks[off / CHUNK], off % CHUNK)
    }

    /// Append node `i` summarised by `a`, as `Chunked::push_at` appends.
    pub(crate) fn push_at(&mut self, i: u64, a: &Agg) {
        if self.start == self.end {
            if self.first + (self.chunks.len() * CHUNK) as u64 <= i || i < self.first {
                self.chunks.clear();
                self.first = i - i % CHUNK_U64;
            }
            self.start = i;
            self.end = i;
        }
        debug_assert_eq!(i, self.end, "Bands::push_at must append");
        if ((i - self.first) as usize) / CHUNK >= self.chunks.len() {
            self.chunks.push_back(BandChunk::new());
        }
        self.end += 1;
        let (c, k) = self.slot(i);
        c.set(k, a);
    }

    /// Node `i` (live) now summarises `a` (its min may only have fallen and its max risen).
    #[inline]
    pub(crate) fn set(&mut self, i: u64, a: &Agg) {
        let (c, k) = self.slot(i);
        c.set(k, a);
    }

    /// Drop the front chunk, as `Chunked::pop_front_chunk` does.
    pub(crate) fn pop_front_chunk(&mut self) {
        if self.start == self.end {
            return;
        }
        let cut = (self.first + CHUNK_U64).min(self.end);
        if cut == self.end {
            self.chunks.clear();
            self.first = cut - cut % CHUNK_U64;
            self.end = cut;
        } else {
            self.chunks.pop_front();
            self.first += CHUNK_U64;
        }
        self.start = cut;
    }

    pub(crate) fn bytes(&self) -> usize {
        self.chunks.len() * size_of::<BandChunk>() + self.chunks.capacity() * size_of::<Box<BandChunk>>()
    }

    /// Upper bound of the bytes that `n` more pushes can add.
    pub(crate) fn growth_bound(&self, n: u64) -> usize {
        if n == 0 {
            return 0;
        }
        let new_chunks = (n / CHUNK_U64 + 1) as usize;
        let spine = if self.chunks.len() + new_chunks > self.chunks.capacity() {
            (self.chunks.capacity() + new_chunks).max(4) * size_of::<Box<BandChunk>>()
        } else {
            0
        };
        new_chunks * size_of::<BandChunk>() + spine
    }

    #[inline]
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    #[inline]
    pub(crate) fn end(&self) -> u64 {
        self.end
    }

    /// The live nodes from `i` (live) to the end of its chunk: the chunk's base and the nodes'
    /// offsets, `None` when the chunk is inexact (read the aggregates).
    #[inline]
    pub(crate) fn run_from(&self, i: u64) -> Option<(f64, &[[f32; 2]])> {
        debug_assert!(i >= self.start && i < self.end);
        let off = (i - self.first) as usize;
        let (c, k) = (&self.chunks[off / CHUNK], off % CHUNK);
        let len = (CHUNK - k).min((self.end - i) as usize);
        (!c.inexact).then(|| (c.base, &c.v[k..k + len]))
    }

    /// `(min, max)` enclosing the finite values of nodes `lo..hi` (clamped to the live ones):
    /// `(inf, -inf)` when they hold none, `None` when part of them is in an inexact chunk.
    #[cfg(test)]
    pub(crate) fn span(&self, lo: u64, hi: u64) -> Option<(f64, f64)> {
        let (mut m, hi) = (lo.max(self.start), hi.min(self.end));
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        while m < hi {
            let off = (m - self.first) as usize;
            let (c, k) = (&self.chunks[off / CHUNK], off % CHUNK);
            let take = (CHUNK - k).min((hi - m) as usize);
            if c.inexact {
                return None;
            }
            let (mut a, mut b) = (f32::INFINITY, f32::NEG_INFINITY);
            for &[l, h] in &c.v[k..k + take] {
                a = if l < a { l } else { a };
                b = if h > b { h } else { b };
            }
            if a <= b {
                min = min.min(c.base + a as f64);
                max = max.max(c.base + b as f64);
            }
            m += take as u64;
        }
        Some((min, max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agg_of(vals: &[f64]) -> Agg {
        let mut a = Agg::EMPTY;
        vals.iter().for_each(|&v| a.push(v));
        a
    }

    /// Exact min and max of the finite values of nodes `lo..hi`.
    fn exact(nodes: &[Agg], lo: usize, hi: usize) -> (f64, f64) {
        nodes[lo..hi].iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), n| (a.min(n.min), b.max(n.max)))
    }

    #[test]
    fn spans_enclose_the_exact_min_and_max_and_stay_tight() {
        let mut noise = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = || {
            noise ^= noise << 13;
            noise ^= noise >> 7;
            noise ^= noise << 17;
            (noise >> 11) as f64 / (1u64 << 53) as f64
        };
        // Magnitudes where f32 alone would lose the detail: a 1.5 GHz clock moving by
        // a few Hz, tiny values, a counter in the billions, values of both signs.
        for (offset, scale) in [(1.5e9, 3.0), (0.0, 1e-30), (4.0e9, 1e5), (-7.0, 20.0), (1e30, 1e20)] {
            let mut bands = Bands::new();
            let mut nodes = Vec::new();
            for i in 0..200u64 {
                let vals: Vec<f64> = (0..5).map(|_| offset + (rnd() - 0.5) * scale).collect();
                let a = agg_of(&vals);
                bands.push_at(i, &a);
                nodes.push(a);
            }
            for (lo, hi) in [(0, 200), (3, 4), (31, 33), (40, 170), (199, 200)] {
                let (min, max) = bands.span(lo as u64, hi as u64).expect("offsets in range");
                let (emin, emax) = exact(&nodes, lo, hi);
                assert!(min <= emin && max >= emax, "{offset}: [{min}, {max}] does not enclose [{emin}, {emax}]");
                // Wider by at most a few f32 roundings of the spread around the chunk's base.
                let slack = 1e-6 * scale + 8.0 * f64::EPSILON * (offset.abs() + scale);
                assert!(emin - min <= slack && max - emax <= slack, "{offset}: [{min}, {max}] vs [{emin}, {emax}]");
            }
        }
    }

    #[test]
    fn growing_nodes_and_empty_ones_are_tracked() {
        let mut bands = Bands::new();
        let mut a = Agg::EMPTY;
        a.push(f64::NAN);
        bands.push_at(0, &a);
        assert_eq!(bands.span(0, 1), Some((f64::INFINITY, f64::NEG_INFINITY)), "no finite value: empty");
        a.push(0.1);
        bands.set(0, &a);
        a.push(-3.3);
        bands.set(0, &a);
        bands.push_at(1, &Agg::of(f64::INFINITY));
        let (min, max) = bands.span(0, 2).unwrap();
        assert!((-3.3 - 1e-6..=-3.3).contains(&min) && (0.1..0.1 + 1e-6).contains(&max), "[{min}, {max}]");
    }

    #[test]
    fn values_too_far_apart_fall_back_to_the_aggregates() {
        let mut bands = Bands::new();
        bands.push_at(0, &Agg::of(0.0));
        bands.push_at(1, &Agg::of(1e300));
        assert_eq!(bands.span(0, 1), None);
        // The next chunk has its own base.
        for i in 2..CHUNK_U64 + 2 {
            bands.push_at(i, &Agg::of(1e300));
        }
        let (min, max) = bands.span(CHUNK_U64, CHUNK_U64 + 2).unwrap();
        assert!(min <= 1e300 && max >= 1e300);
    }

    #[test]
    fn front_chunks_drop_like_the_aggregates() {
        let mut bands = Bands::new();
        for i in 0..70u64 {
            bands.push_at(i, &Agg::of(i as f64));
        }
        let before = bands.bytes();
        bands.pop_front_chunk();
        assert_eq!(before - bands.bytes(), size_of::<BandChunk>());
        let (min, max) = bands.span(0, 70).unwrap();
        assert!((31.9..=32.0).contains(&min) && (69.0..69.1).contains(&max), "[{min}, {max}]");
        bands.pop_front_chunk();
        bands.pop_front_chunk();
        assert_eq!(bands.span(0, 70), Some((f64::INFINITY, f64::NEG_INFINITY)));
        bands.push_at(70, &Agg::of(5.0));
        assert_eq!(bands.span(70, 71).map(|(a, b)| a <= 5.0 && b >= 5.0), Some(true));
    }
}
