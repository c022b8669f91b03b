//! One stream (one sampler run): raw blocks, the pyramid, and ingest.
//!
//! Ingest is batch-shaped: the sampler hands over rows of `n_series` values
//! with their timestamps. Each batch is cut at block boundaries; per block
//! slice and per series the values are transposed into the block's column,
//! NaNs canonicalised, cumulative totals turned into rates, and the slice's
//! [`Agg`] is merged once into the newest node of every level. Nothing is
//! allocated per sample: a new block takes over the storage of the one it
//! seals, and every 32 blocks a chunk of pyramid nodes is allocated.
//!
//! Coarsening and eviction ("drop the oldest raw block", "drop the oldest
//! chunk of level `l`", "drop everything") live in `cap.rs`, next to the
//! store-wide policy that decides which one runs.

use std::collections::VecDeque;

use super::StreamDesc;
use super::agg::{Agg, canon, missing};
use super::column::{BLOCK, Block};
use super::pyramid::{MAX_LEVEL, NodeMeta, Pyramid, blocks_per_node};
use super::rate::{Rule, rate_raw, rate_secs_clamped};
use super::timeline::TsBlock;

pub(crate) struct StreamStore {
    pub desc: StreamDesc,
    /// Per series: `None` for a value plotted as read (gauge, state), `Some(rule)` for a running
    /// total plotted as a rate (cumulative counter, busy time).
    pub wraps: Vec<Option<Rule>>,
    /// Per series: index into `head_rate` (cumulative series only).
    pub cum_slot: Vec<usize>,
    pub blocks: VecDeque<Block>,
    /// Block number of `blocks[0]` (of the next block when `blocks` is empty).
    pub first_block: u64,
    pub pyramid: Pyramid,
    /// The newest block takes more samples.
    pub open: bool,
    /// `mark_gap` was called: the next sample starts a new segment.
    pub gap_pending: bool,
    pub ended: bool,
    pub last_t: Option<i64>,
    /// Last raw row (for the rate of the next sample).
    pub last_raw: Vec<f64>,
    /// The next sample has a predecessor to take a rate against.
    pub rate_valid: bool,
    /// Samples ever appended (= the next sample's ordinal).
    pub total: u64,
    /// Busy shares clamped to 0–100 % at ingest (one per sample and series).
    pub busy_clamps: u64,
    /// Samples evicted (no longer represented at any resolution).
    pub evicted: u64,
    /// Heap bytes of the blocks in `blocks`.
    pub blocks_heap: usize,
    /// Rates to use for the next sample instead of deriving them (import of a
    /// history whose first raw sample's predecessor is gone).
    pub rate_override: Option<Vec<f64>>,
    /// Per cumulative series: the rate of the first sample of `blocks[0]`
    /// (its predecessor may be coarsened away; every later block takes the
    /// rate of its first sample against the block before it).
    pub head_rate: Vec<f64>,
    /// The time of the sample `head_rate` was taken against (`None`: not known, or no rate).
    pub head_before: Option<i64>,
}

impl StreamStore {
    pub(crate) fn new(desc: StreamDesc) -> StreamStore {
        let n = desc.series.len();
        let mut n_cum = 0;
        let mut cum_slot = vec![usize::MAX; n];
        let wraps = desc
            .series
            .iter()
            .enumerate()
            .map(|(s, d)| {
                let rule = Rule::of(&d.kind)?;
                cum_slot[s] = n_cum;
                n_cum += 1;
                Some(rule)
            })
            .collect();
        StreamStore {
            desc,
            wraps,
            cum_slot,
            blocks: VecDeque::new(),
            first_block: 0,
            pyramid: Pyramid::new(n),
            open: false,
            gap_pending: false,
            ended: false,
            last_t: None,
            last_raw: vec![f64::NAN; n],
            rate_valid: false,
            total: 0,
            busy_clamps: 0,
            evicted: 0,
            blocks_heap: 0,
            rate_override: None,
            head_rate: vec![missing(); n_cum],
            head_before: None,
        }
    }

    #[inline]
    pub(crate) fn n_series(&self) -> usize {
        self.desc.series.len()
    }

    /// Block number the next new block gets.
    #[inline]
    pub(crate) fn next_block(&self) -> u64 {
        self.first_block + self.blocks.len() as u64
    }

    /// Raw block `b`, if it is still held at full resolution.
    #[inline]
    pub(crate) fn block(&self, b: u64) -> Option<&Block> {
        b.checked_sub(self.first_block).and_then(|i| self.blocks.get(i as usize))
    }

    /// Value of series `s` at sample `j` of `blk` (a block of this stream):
    /// the stored value for a gauge, the rate (or the "missing" marker) for a
    /// cumulative counter.
    #[inline]
    pub(crate) fn value(&self, blk: &Block, s: usize, j: usize) -> f64 {
        match self.wraps[s] {
            None => blk.value(s, j),
            Some(_) if j == 0 => self.first_rate(blk, s),
            Some(rule) => {
                rate_raw(blk.value(s, j - 1), blk.value(s, j), blk.ts_at(j).saturating_sub(blk.ts_at(j - 1)), rule)
            }
        }
    }

    /// [`Self::value`] of every sample of `blk` for series `s`, decoding the block once.
    pub(crate) fn block_values<'a>(&self, blk: &Block, s: usize, out: &'a mut [f64; BLOCK]) -> &'a [f64] {
        let len = blk.len;
        match self.wraps[s] {
            None => {
                let mut buf = [0.0; BLOCK];
                let col = blk.col(s, &mut buf);
                out[..len].copy_from_slice(col);
            }
            Some(rule) => {
                let (mut cbuf, mut tbuf) = ([0.0; BLOCK], [0i64; BLOCK]);
                let col = blk.col(s, &mut cbuf);
                let ts = blk.timestamps(&mut tbuf);
                if len > 0 {
                    out[0] = self.first_rate(blk, s);
                }
                for j in 1..len {
                    out[j] = rate_raw(col[j - 1], col[j], ts[j].saturating_sub(ts[j - 1]), rule);
                }
            }
        }
        &out[..len]
    }

    /// Rate of the first sample of `blk` for cumulative series `s`.
    pub(crate) fn first_rate(&self, blk: &Block, s: usize) -> f64 {
        let k = self.blocks.partition_point(|b| b.first_ordinal < blk.first_ordinal);
        if k == 0 {
            return self.head_rate[self.cum_slot[s]];
        }
        if blk.gap_before > 0 {
            return missing();
        }
        let prev = &self.blocks[k - 1];
        let rule = self.wraps[s].unwrap_or(Rule { wrap: None, scale: 1.0, share: false });
        rate_raw(prev.value(s, prev.len - 1), blk.value(s, 0), blk.t_first().saturating_sub(prev.t_last()), rule)
    }

    /// Bytes held by this stream outside its own struct (which lives in the
    /// store's stream table).
    pub(crate) fn heap_bytes(&self) -> usize {
        let d = &self.desc;
        let strings = d.name.capacity() + d.series.iter().map(|s| s.name.capacity() + s.unit.capacity()).sum::<usize>();
        strings
            + d.series.capacity() * size_of::<super::SeriesDesc>()
            + self.wraps.capacity() * size_of::<Option<Rule>>()
            + self.cum_slot.capacity() * size_of::<usize>()
            + self.last_raw.capacity() * 8
            + self.head_rate.capacity() * 8
            + self.blocks.capacity() * size_of::<Block>()
            + self.blocks_heap
            + self.pyramid.bytes()
    }

    /// Upper bound of the bytes that appending `k` samples can add.
    pub(crate) fn growth_bound(&self, k: usize) -> usize {
        if k == 0 {
            return 0;
        }
        let free = match self.blocks.back() {
            Some(b) if self.open && !self.gap_pending => BLOCK - b.len,
            _ => 0,
        };
        let new_blocks = k.saturating_sub(free).div_ceil(BLOCK);
        let spine = if self.blocks.len() + new_blocks > self.blocks.capacity() {
            (2 * self.blocks.capacity() + new_blocks + 4) * size_of::<Block>()
        } else {
            0
        };
        // Every block but the last one started is sealed (the open one now, too).
        let n = self.n_series();
        new_blocks * Block::worst_heap_bytes(n).max(Block::worst_sealed_bytes(n))
            + Block::worst_sealed_bytes(n)
            + TsBlock::conversion_bytes()
            + spine
            + self.pyramid.growth_bound(new_blocks as u64)
    }

    /// Append validated samples (`vals` row-major, timestamps strictly
    /// increasing after `last_t`). The caller has reserved the memory.
    pub(crate) fn ingest(&mut self, ts: &[i64], vals: &[f64]) {
        let n = self.n_series();
        let k = ts.len();
        let mut i = 0;
        while i < k {
            let full = self.blocks.back().is_none_or(|b| b.len == BLOCK || b.is_sealed());
            if !self.open || full || self.gap_pending {
                self.start_block(ts[i]);
            }
            let b_idx = self.next_block() - 1;
            let head = self.blocks.len() == 1;
            let blk = self.blocks.back_mut().expect("a block was just ensured");
            let off = blk.len;
            let m = (k - i).min(BLOCK - off);
            let heap_before = blk.heap_bytes();
            let Some((tsb, values)) = blk.open_mut() else {
                // Not reached (a sealed block is never the newest); start a new one if it were.
                self.open = false;
                continue;
            };
            tsb.write(off, &ts[i..i + m]);
            if off == 0 && head {
                self.head_before = self.last_t.filter(|_| self.rate_valid || self.rate_override.is_some());
            }
            // Seconds between consecutive samples of the slice, shared by every cumulative series
            // (the same expression `rate_raw` evaluates, so the rates are bit for bit the same).
            let mut secs = [0.0f64; BLOCK];
            let mut rates = [0.0f64; BLOCK];
            if self.cum_slot.iter().any(|&c| c != usize::MAX) {
                for (d, w) in secs[1..m].iter_mut().zip(ts[i..i + m].windows(2)) {
                    *d = w[1].saturating_sub(w[0]) as f64 * 1e-9;
                }
            }
            for s in 0..n {
                let mut agg = Agg::EMPTY;
                let col = &mut values[s * BLOCK + off..s * BLOCK + off + m];
                match self.wraps[s] {
                    None => {
                        // Series `s` of each row, without an index check per value, copied and
                        // summarised in one pass.
                        agg.copy_and_push(col, vals[i * n + s..].iter().step_by(n).copied());
                    }
                    Some(rule) => {
                        // The first sample of the slice takes its rate against
                        // the previous slice (or has none, or an imported one).
                        let raw = canon(vals[i * n + s]);
                        col[0] = raw;
                        // With the seconds since the sample before (0: not known).
                        let since = |lt: Option<i64>| lt.map_or(0.0, |lt| ts[i].saturating_sub(lt) as f64 * 1e-9);
                        let (r, since) = match &self.rate_override {
                            // An imported rate: against the sample before the history held
                            // raw, whose time is known when coarse history or a gap says it.
                            Some(o) => (o[self.cum_slot[s]], since(self.last_t)),
                            None if self.rate_valid => {
                                let dt = ts[i].saturating_sub(self.last_t.unwrap_or(0)) as f64 * 1e-9;
                                let (r, clamped) = rate_secs_clamped(self.last_raw[s], raw, dt, rule);
                                self.busy_clamps += u64::from(clamped);
                                (r, dt)
                            }
                            None => (missing(), 0.0),
                        };
                        if off == 0 && head {
                            self.head_rate[self.cum_slot[s]] = r;
                        }
                        agg.push_rate(r, since);
                        // The totals first, then their rates (no chain from one rate to the
                        // next), then the rates' summary.
                        let rows = vals.get((i + 1) * n + s..).unwrap_or(&[]).iter().step_by(n);
                        for (slot, &v) in col[1..].iter_mut().zip(rows) {
                            *slot = canon(v);
                        }
                        for ((r, p), &dt) in rates[1..m].iter_mut().zip(col.windows(2)).zip(&secs[1..m]) {
                            let (v, clamped) = rate_secs_clamped(p[0], p[1], dt, rule);
                            *r = v;
                            self.busy_clamps += u64::from(clamped);
                        }
                        agg.push_rates(&rates[1..m], &secs[1..m]);
                    }
                }
                self.pyramid.add(b_idx, s, &agg);
            }
            let last = i + m - 1;
            for (s, r) in self.last_raw.iter_mut().enumerate() {
                *r = canon(vals[last * n + s]);
            }
            self.last_t = Some(ts[last]);
            self.rate_valid = true;
            self.rate_override = None;
            blk.filled(off + m, ts[last]);
            self.blocks_heap += blk.heap_bytes() - heap_before;
            self.pyramid.extend(b_idx, ts[last], m as u64);
            self.total += m as u64;
            i += m;
        }
    }

    fn start_block(&mut self, t: i64) {
        let gap = match (self.gap_pending, self.last_t) {
            (true, Some(lt)) => t.saturating_sub(lt),
            _ => 0,
        };
        if gap > 0 {
            self.rate_valid = false;
        }
        let mut spare = None;
        if let Some(prev) = self.blocks.back_mut() {
            let before = prev.heap_bytes();
            spare = prev.seal(self.desc.series.len());
            self.blocks_heap = self.blocks_heap - before + prev.heap_bytes();
        }
        let b = self.next_block();
        let blk = Block::reusing(spare, self.n_series(), t, gap, self.total);
        self.blocks_heap += blk.heap_bytes();
        self.blocks.push_back(blk);
        let meta =
            NodeMeta { t_first: t, t_last: t, first_ordinal: self.total, samples: 0, gap_before: gap, max_gap: 0 };
        self.pyramid.insert(1, b, meta, None);
        self.open = true;
        self.gap_pending = false;
    }

    /// The stream takes no more samples: its newest block is sealed (encoded) now, unless that
    /// would take more memory than it does open.
    pub(crate) fn end(&mut self) {
        self.ended = true;
        self.open = false;
        let n = self.n_series();
        if let Some(b) = self.blocks.back_mut() {
            let before = b.heap_bytes();
            b.seal_if_smaller(n);
            self.blocks_heap = self.blocks_heap - before + b.heap_bytes();
        }
    }

    /// The next sample does not connect to the previous one.
    pub(crate) fn mark_gap(&mut self) {
        if self.last_t.is_some() {
            self.gap_pending = true;
            self.rate_valid = false;
        }
    }

    /// Oldest time held at any resolution.
    pub(crate) fn oldest_time(&self) -> Option<i64> {
        self.pyramid.levels.iter().filter(|l| !l.meta.is_empty()).map(|l| l.meta.at(l.meta.start()).t_first).min()
    }

    /// Newest time held.
    pub(crate) fn newest_time(&self) -> Option<i64> {
        let l = self.pyramid.levels.first()?;
        (!l.meta.is_empty()).then(|| l.meta.at(l.meta.end() - 1).t_last)
    }
}

/// Levels are capped; a sanity check the arithmetic in the docs relies on.
const _: () = assert!(blocks_per_node(MAX_LEVEL) * BLOCK as u64 <= u32::MAX as u64);
