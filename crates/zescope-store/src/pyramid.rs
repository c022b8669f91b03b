//! The min/max pyramid: bucket summaries at 6 resolutions.
//!
//! Level 1 has one node per raw block (256 samples); each level above has one
//! node per [`FANOUT`] (16) nodes of the level below, so a level-`l` node spans
//! `256 * 16^(l-1)` samples and level 6 spans 2^28 (3 days at 1 kHz). Every
//! node keeps, per stream, a [`NodeMeta`] (time span, sample count, gaps) and,
//! per series, an [`Agg`] (min, max, sum, last, finite and non-finite counts).
//! Min and max make every spike visible at any zoom (a single-sample peak is
//! the max of every node above it); sums and counts give means and range
//! statistics without scanning.
//!
//! Why these numbers: a node costs 40 B per series. At 256 samples per level-1
//! node that is 0.156 B per value, and the levels above add 1/16 + 1/256 + ...
//! of that: 0.167 B per value in total. A query picks the level whose node
//! size is just below the samples per pixel column, so a column reads between
//! 1 and 16 nodes, wherever it is in a history of any length.
//!
//! From level 2 up, each series' nodes also keep a compact copy of their min
//! and max for drawing (`band.rs`, 8 bytes a node).
//!
//! Levels are created lazily (a stream of 300 samples has two levels), node
//! storage is [`Chunked`] so coarsening and eviction free memory from the
//! front, and the levels above are updated incrementally as samples arrive:
//! the newest node of every level is always current, so live data is queryable
//! the moment it is appended.
//!
//! Retention: level `l` may have dropped its oldest nodes ("coarsened to level
//! `l+1`") but only those whose data is already gone from level `l-1`; so the
//! finer a level, the later it starts, and the finest available level at any
//! point in time is well defined (see `StreamStore::resolution`).

use super::agg::Agg;
use super::band::{BAND_LEVEL, Bands};
use super::chunked::Chunked;

/// Children per node.
pub(crate) const FANOUT: u64 = 16;
/// Coarsest level (its nodes span 2^28 samples, so `Agg` counts fit in u32).
pub(crate) const MAX_LEVEL: usize = 6;

/// Raw blocks spanned by one node of `level` (>= 1).
#[inline]
pub(crate) const fn blocks_per_node(level: usize) -> u64 {
    FANOUT.pow(level as u32 - 1)
}

/// What a node covers, shared by all series of the stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NodeMeta {
    pub t_first: i64,
    pub t_last: i64,
    /// Ordinal of the first sample.
    pub first_ordinal: u64,
    pub samples: u64,
    /// Gap between the previous sample and this node's first (0 = connected).
    pub gap_before: i64,
    /// Largest gap between two samples inside this node (0 = none).
    pub max_gap: i64,
}

impl NodeMeta {
    /// Absorb a child node that follows the ones already absorbed.
    fn absorb(&mut self, c: &NodeMeta) {
        self.t_last = c.t_last;
        self.samples += c.samples;
        self.max_gap = self.max_gap.max(c.max_gap).max(c.gap_before);
    }
}

pub(crate) struct Level {
    pub meta: Chunked<NodeMeta>,
    /// One node storage per series.
    pub aggs: Vec<Chunked<Agg>>,
    /// The drawing bands of each series' nodes (`band.rs`); empty below [`BAND_LEVEL`].
    pub bands: Vec<Bands>,
}

impl Level {
    fn new(l: usize, n_series: usize) -> Level {
        let bands = if l >= BAND_LEVEL { n_series } else { 0 };
        Level {
            meta: Chunked::new(),
            aggs: (0..n_series).map(|_| Chunked::new()).collect(),
            bands: (0..bands).map(|_| Bands::new()).collect(),
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        self.meta.bytes()
            + self.aggs.iter().map(Chunked::bytes).sum::<usize>()
            + self.aggs.capacity() * size_of::<Chunked<Agg>>()
            + self.bands.iter().map(Bands::bytes).sum::<usize>()
            + self.bands.capacity() * size_of::<Bands>()
    }

    /// Upper bound of the bytes `n` more nodes can add.
    pub(crate) fn growth_bound(&self, n: u64) -> usize {
        self.meta.growth_bound(n)
            + self.aggs.iter().map(|a| a.growth_bound(n)).sum::<usize>()
            + self.bands.iter().map(|b| b.growth_bound(n)).sum::<usize>()
    }

    /// Bytes of one node of level `l` across the stream's series.
    pub(crate) fn node_bytes(l: usize, n_series: usize) -> usize {
        let band = if l >= BAND_LEVEL { 2 * size_of::<f32>() } else { 0 };
        size_of::<NodeMeta>() + n_series * (size_of::<Agg>() + band)
    }

    fn push(&mut self, m: u64, meta: NodeMeta, aggs: Option<&[Agg]>) {
        self.meta.push_at(m, meta);
        for (s, a) in self.aggs.iter_mut().enumerate() {
            a.push_at(m, aggs.map_or(Agg::EMPTY, |x| x[s]));
        }
        for (s, b) in self.bands.iter_mut().enumerate() {
            b.push_at(m, aggs.map_or(&Agg::EMPTY, |x| &x[s]));
        }
    }

    fn absorb(&mut self, p: u64, meta: &NodeMeta, aggs: Option<&[Agg]>) {
        self.meta.at_mut(p).absorb(meta);
        if let Some(x) = aggs {
            for (s, a) in self.aggs.iter_mut().enumerate() {
                let node = a.at_mut(p);
                node.merge(&x[s]);
                if let Some(b) = self.bands.get_mut(s) {
                    b.set(p, node);
                }
            }
        }
    }
}

pub(crate) struct Pyramid {
    /// `levels[l - 1]` is level `l`.
    pub levels: Vec<Level>,
    n_series: usize,
}

impl Pyramid {
    pub(crate) fn new(n_series: usize) -> Pyramid {
        Pyramid { levels: Vec::new(), n_series }
    }

    /// Number of levels (the coarsest is `top()`); 0 when nothing was stored.
    #[inline]
    pub(crate) fn top(&self) -> usize {
        self.levels.len()
    }

    /// Level `l` (1-based).
    #[inline]
    pub(crate) fn level(&self, l: usize) -> &Level {
        &self.levels[l - 1]
    }

    pub(crate) fn bytes(&self) -> usize {
        self.levels.iter().map(Level::bytes).sum::<usize>() + self.levels.capacity() * size_of::<Level>()
    }

    /// Upper bound of the bytes that adding `blocks` more level-1 nodes can add.
    pub(crate) fn growth_bound(&self, blocks: u64) -> usize {
        (1..=MAX_LEVEL)
            .map(|l| {
                let nodes = blocks / blocks_per_node(l) + 2;
                match self.levels.get(l - 1) {
                    Some(level) => level.growth_bound(nodes),
                    None => {
                        Level::new(l, self.n_series).growth_bound(nodes)
                            + size_of::<Level>() * 2 * MAX_LEVEL
                            + self.n_series * (size_of::<Chunked<Agg>>() + size_of::<Bands>())
                    }
                }
            })
            .sum()
    }

    /// Insert node `m` of level `l` (after every node the level has), merging
    /// it into the levels above and creating levels as they become useful.
    /// `aggs` (one per series) is `None` for a node whose samples will be
    /// added with [`Self::add`].
    pub(crate) fn insert(&mut self, l: usize, m: u64, meta: NodeMeta, aggs: Option<&[Agg]>) {
        while self.levels.len() < l {
            let next = self.levels.len() + 1;
            self.levels.push(Level::new(next, self.n_series));
        }
        self.levels[l - 1].push(m, meta, aggs);
        let first_block = m * blocks_per_node(l);
        for k in l + 1..=self.levels.len() {
            let p = first_block / blocks_per_node(k);
            let level = &mut self.levels[k - 1];
            if level.meta.contains(p) {
                level.absorb(p, &meta, aggs);
            } else {
                debug_assert!(p >= level.meta.end(), "ancestor {p} of level {k} was dropped");
                level.push(p, meta, aggs);
            }
        }
        self.grow();
    }

    /// Create the next level while the coarsest one has two nodes or more.
    fn grow(&mut self) {
        while self.levels.len() < MAX_LEVEL {
            let src = &self.levels[self.levels.len() - 1];
            if src.meta.end() - src.meta.start() < 2 {
                break;
            }
            let mut up = Level::new(self.levels.len() + 1, self.n_series);
            let mut aggs = vec![Agg::EMPTY; self.n_series];
            for m in src.meta.start()..src.meta.end() {
                let meta = *src.meta.at(m);
                for (s, a) in aggs.iter_mut().enumerate() {
                    *a = *src.aggs[s].at(m);
                }
                let with = (meta.samples > 0).then_some(aggs.as_slice());
                let p = m / FANOUT;
                if up.meta.contains(p) {
                    up.absorb(p, &meta, with);
                } else {
                    up.push(p, meta, with);
                }
            }
            self.levels.push(up);
        }
    }

    /// Merge the summary of new samples of series `s`, appended to block `b`,
    /// into every node that contains the block.
    #[inline]
    pub(crate) fn add(&mut self, b: u64, s: usize, agg: &Agg) {
        for (i, level) in self.levels.iter_mut().enumerate() {
            let m = b / blocks_per_node(i + 1);
            if level.aggs[s].contains(m) {
                let node = level.aggs[s].at_mut(m);
                let widens = agg.min < node.min || agg.max > node.max;
                node.merge(agg);
                if widens && let Some(b) = level.bands.get_mut(s) {
                    b.set(m, node);
                }
            }
        }
    }

    /// Record `count` new samples, the last at `t_last`, in block `b`.
    pub(crate) fn extend(&mut self, b: u64, t_last: i64, count: u64) {
        for (i, level) in self.levels.iter_mut().enumerate() {
            let m = b / blocks_per_node(i + 1);
            if level.meta.contains(m) {
                let meta = level.meta.at_mut(m);
                meta.t_last = t_last;
                meta.samples += count;
            }
        }
    }

    /// First block whose data level `l` still holds, `None` if it holds none.
    pub(crate) fn start_block(&self, l: usize) -> Option<u64> {
        let level = self.levels.get(l - 1)?;
        (!level.meta.is_empty()).then(|| level.meta.start() * blocks_per_node(l))
    }

    /// Nodes of level `l` (below the top) whose data no finer level holds any
    /// more, given the first block the finer data starts at (`None`: the finer
    /// data is gone entirely). Dropping them coarsens that history to `l + 1`.
    pub(crate) fn exclusive_nodes(&self, l: usize, finer_start: Option<u64>) -> u64 {
        let Some(level) = self.levels.get(l - 1) else {
            return 0;
        };
        let limit = match finer_start {
            Some(b) => (b / blocks_per_node(l)).min(level.meta.end()),
            None => level.meta.end(),
        };
        limit.saturating_sub(level.meta.start())
    }

    /// Is the front chunk of level `l` entirely exclusive (see above)?
    pub(crate) fn front_chunk_exclusive(&self, l: usize, finer_start: Option<u64>) -> bool {
        let Some(level) = self.levels.get(l - 1) else {
            return false;
        };
        match (level.meta.front_chunk_end(), finer_start) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(end), Some(b)) => end * blocks_per_node(l) <= b,
        }
    }

    /// Drop the front chunk of level `l`; returns the metas of what it held
    /// (merged into one) so the caller can account for evicted samples.
    pub(crate) fn pop_front_chunk(&mut self, l: usize) -> Option<NodeMeta> {
        let level = &mut self.levels[l - 1];
        let range = level.meta.front_chunk_end().map(|e| level.meta.start()..e)?;
        let mut merged = *level.meta.at(range.start);
        for m in range.start + 1..range.end {
            merged.absorb(level.meta.at(m));
        }
        level.meta.pop_front_chunk();
        for a in &mut level.aggs {
            a.pop_front_chunk();
        }
        for b in &mut level.bands {
            b.pop_front_chunk();
        }
        Some(merged)
    }

    /// Drop every node of every level; levels are grown again from the next
    /// insert (whose ancestors may reuse indices the old nodes had).
    pub(crate) fn clear(&mut self) {
        self.levels = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(t: i64, samples: u64) -> NodeMeta {
        NodeMeta { t_first: t, t_last: t + samples as i64 - 1, first_ordinal: 0, samples, gap_before: 0, max_gap: 0 }
    }

    #[test]
    fn levels_appear_as_needed_and_aggregate_their_children() {
        let mut p = Pyramid::new(1);
        for b in 0..40u64 {
            p.insert(1, b, meta(b as i64 * 1000, 0), None);
            p.add(b, 0, &Agg::of(b as f64));
            p.extend(b, b as i64 * 1000 + 255, 256);
        }
        // 40 level-1 nodes -> 3 level-2 nodes -> 1 level-3 node.
        assert_eq!(p.top(), 3);
        let l2 = p.level(2);
        assert_eq!((l2.meta.start(), l2.meta.end()), (0, 3));
        let a = l2.aggs[0].at(1);
        assert_eq!((a.min, a.max, a.n, a.last), (16.0, 31.0, 16, 31.0));
        assert_eq!(l2.meta.at(1).samples, 16 * 256);
        let top = p.level(3).aggs[0].at(0);
        assert_eq!((top.min, top.max, top.n), (0.0, 39.0, 40));
        assert_eq!(p.level(3).meta.at(0).t_last, 39 * 1000 + 255);
    }

    #[test]
    fn gaps_inside_a_node_are_remembered() {
        let mut p = Pyramid::new(1);
        for b in 0..3u64 {
            let mut m = meta(b as i64 * 1000, 0);
            if b == 2 {
                m.gap_before = 600;
            }
            p.insert(1, b, m, None);
            p.add(b, 0, &Agg::of(1.0));
            p.extend(b, b as i64 * 1000 + 10, 1);
        }
        assert_eq!(p.level(2).meta.at(0).max_gap, 600);
        assert_eq!(p.level(2).meta.at(0).gap_before, 0);
        assert_eq!(p.level(1).meta.at(2).gap_before, 600);
    }
}
