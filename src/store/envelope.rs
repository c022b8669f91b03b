//! Envelopes: what a series looks like at N pixel columns.
//!
//! An envelope query picks the level whose buckets are just finer than a
//! pixel column (samples per column / 256 / 16^k), walks that level's nodes
//! across the visible range once and groups them into columns by the time at
//! their middle. A column is therefore a whole number of buckets: its edges
//! snap to bucket edges (each [`EnvelopeColumn`] says exactly which time span
//! it covers), and it costs the 1 to 16 nodes it is made of, not a scan of its
//! samples. Below 256 samples per column the walk reads raw samples, so a
//! zoomed-in view shows every sample exactly.
//!
//! The walk is split in two so a plot of many counters of one stream pays for
//! the layout once: a [`Plan`] (which node or sample runs make up each column,
//! their time spans and gaps) is computed from the stream's shared node
//! metadata, then applied per series, which is a tight reduction over that
//! series' aggregates (`Store::envelopes`).
//!
//! Cost: with `S` the bucket size chosen, the walk reads `count / S <= 16 N`
//! nodes, plus `O(16 · levels)` to find where to start, whatever the length of
//! the history. At raw level it reads the at most `256 N` samples in range.
//!
//! What the columns promise (and the property tests check against a brute
//! force scan):
//! - min, max, count, non-finite count and sample count are exact for the
//!   samples in `t_start..=t_end`, the mean is their finite mean; min and max
//!   ignore non-finite values, which are counted instead;
//! - the columns cover, without overlap and in order, every sample in the
//!   requested range plus the one before and the one after it (so a line can
//!   enter and leave the view); in coarsened history a column is at least a
//!   whole coarse bucket;
//! - `break_before` is set exactly when a gap (pause, restart) separates a
//!   column's first sample from the previous sample; a gap at least one
//!   column wide is never inside a column (the walk descends to split the
//!   bucket), unless it is in history so coarsened the bucket can't be split.

use super::agg::Agg;
use super::chunked::Chunked;
use super::column::{BLOCK, Block};
use super::pyramid::{MAX_LEVEL, blocks_per_node};
use super::stream::StreamStore;

/// One column of an [`Envelope`]. Times are nanoseconds on the store's
/// timeline. When `count` is 0 (only non-finite or rate-less samples),
/// `min`, `max` and `mean` are NaN.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnvelopeColumn {
    /// Time of the first sample in the column.
    pub t_start: i64,
    /// Time of the last sample in the column.
    pub t_end: i64,
    pub min: f64,
    pub max: f64,
    /// Mean of the finite values.
    pub mean: f64,
    /// Finite values.
    pub count: u64,
    /// NaN/±inf values (not in min/max/mean).
    pub non_finite: u64,
    /// All samples, including those with no value (a cumulative counter's
    /// first sample, resets).
    pub samples: u64,
    /// A gap separates this column from the previous sample: don't draw a
    /// line into it.
    pub break_before: bool,
}

impl EnvelopeColumn {
    /// Middle of the covered time span.
    pub fn t_mid(&self) -> i64 {
        self.t_start + (self.t_end - self.t_start) / 2
    }
}

/// A reusable envelope buffer: fill it with `Store::envelope` every frame;
/// after the first frames it no longer allocates.
#[derive(Clone, Debug, Default)]
pub struct Envelope {
    pub(crate) columns: Vec<EnvelopeColumn>,
    pub(crate) range: (i64, i64),
    pub(crate) requested: usize,
    pub(crate) samples_per_bucket: u64,
    pub(crate) plan: Plan,
}

impl Envelope {
    pub fn new() -> Envelope {
        Envelope::default()
    }

    /// The columns, oldest first.
    pub fn columns(&self) -> &[EnvelopeColumn] {
        &self.columns
    }

    /// The time range and column count of the last query.
    pub fn request(&self) -> (i64, i64, usize) {
        (self.range.0, self.range.1, self.requested)
    }

    /// Samples per bucket of the level the query walked (1: raw samples).
    /// Coarsened history in range may be coarser.
    pub fn samples_per_bucket(&self) -> u64 {
        self.samples_per_bucket
    }

    pub(crate) fn reset(&mut self, t0: i64, t1: i64, n: usize) {
        self.columns.clear();
        self.range = (t0, t1);
        self.requested = n;
        self.samples_per_bucket = 0;
    }
}

/// A run of a column's samples: nodes `lo..hi` of a level, or raw samples
/// `lo..hi` of a block.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    Nodes { level: u8, lo: u64, hi: u64 },
    Raw { block: u64, lo: u32, hi: u32 },
}

#[derive(Clone, Copy, Debug)]
struct PlanCol {
    t_start: i64,
    t_end: i64,
    samples: u64,
    break_before: bool,
    /// The column's parts end here in `Plan::parts` (they start where the
    /// previous column's end).
    parts_end: usize,
}

/// The column layout of one query on one stream (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
    cols: Vec<PlanCol>,
    parts: Vec<Part>,
    samples_per_bucket: u64,
    /// `Some(level)` when every column is exactly one run of nodes of that
    /// level (the common case, which `apply` has a fast path for).
    uniform: Option<u8>,
}

/// `x.floor()` without a libm call (baseline x86-64 has no rounding
/// instruction), for the range of column indices.
#[inline]
fn floor_i64(x: f64) -> i64 {
    let i = x as i64;
    if (i as f64) > x { i - 1 } else { i }
}

/// The column being laid out.
#[derive(Clone, Copy)]
struct Cur {
    /// The column in units of column widths from `t0`: `lo <= x < lo + 1`.
    lo: f64,
    t_start: i64,
    t_end: i64,
    samples: u64,
    break_before: bool,
    /// Index of its first part.
    first_part: usize,
}

struct Planner<'a> {
    st: &'a StreamStore,
    /// Ordinal range to cover.
    a: u64,
    b: u64,
    /// Finest level to use (0 = raw samples).
    target: usize,
    t0: i64,
    inv_w: f64,
    /// A gap at least this long must not be inside a column.
    split_gap: i64,
    plan: &'a mut Plan,
    /// The column being built (`samples == 0`: none yet).
    cur: Cur,
}

impl Planner<'_> {
    #[inline(always)]
    fn item(&mut self, part: Part, t_first: i64, t_last: i64, samples: u64, gap_before: i64) {
        // Column of the item's middle: floor(x), tested against the current
        // column first (two compares instead of a floor).
        let x = (t_first + (t_last - t_first) / 2 - self.t0) as f64 * self.inv_w;
        let c = &mut self.cur;
        if x >= c.lo && x < c.lo + 1.0 && gap_before < self.split_gap {
            c.t_end = t_last;
            c.samples += samples;
            let parts = &mut self.plan.parts;
            match (parts.last_mut(), part) {
                (Some(Part::Nodes { level, hi, .. }), Part::Nodes { level: l, lo, hi: h })
                    if *level == l && *hi == lo =>
                {
                    *hi = h
                }
                (Some(Part::Raw { block, hi, .. }), Part::Raw { block: b, lo, hi: h }) if *block == b && *hi == lo => {
                    *hi = h
                }
                _ => parts.push(part),
            }
            return;
        }
        self.start(x, part, t_first, t_last, samples, gap_before);
    }

    /// Close the current column (if any) and start the next with an item.
    #[inline(never)]
    fn start(&mut self, x: f64, part: Part, t_first: i64, t_last: i64, samples: u64, gap_before: i64) {
        self.close();
        self.cur = Cur {
            lo: floor_i64(x) as f64,
            t_start: t_first,
            t_end: t_last,
            samples,
            break_before: gap_before > 0,
            first_part: self.plan.parts.len(),
        };
        self.plan.parts.push(part);
    }

    fn close(&mut self) {
        let c = self.cur;
        if c.samples > 0 {
            self.plan.cols.push(PlanCol {
                t_start: c.t_start,
                t_end: c.t_end,
                samples: c.samples,
                break_before: c.break_before,
                parts_end: self.plan.parts.len(),
            });
        }
        debug_assert!(c.samples == 0 || c.first_part < self.plan.parts.len());
    }

    /// Walk nodes `lo..hi` of level `l`; false once past the range.
    fn level(&mut self, l: usize, lo: u64, hi: u64) -> bool {
        let st = self.st;
        let level = st.pyramid.level(l);
        let (mut m, hi) = (lo.max(level.meta.start()), hi.min(level.meta.end()));
        let coarser = l > self.target;
        while m < hi {
            // One contiguous run of nodes (within a storage chunk) at a time.
            let metas = level.meta.run_from(m, hi);
            for (k, meta) in metas.iter().enumerate() {
                if meta.first_ordinal + meta.samples <= self.a {
                    continue;
                }
                if meta.first_ordinal >= self.b {
                    return false;
                }
                let node = m + k as u64;
                if coarser || (l > 1 && meta.max_gap >= self.split_gap) {
                    if l == 1 {
                        if let Some(blk) = st.block(node) {
                            if !self.raw(node, blk) {
                                return false;
                            }
                            continue;
                        }
                    } else if let Some((clo, chi)) = st.children(l, node) {
                        if !self.level(l - 1, clo, chi) {
                            return false;
                        }
                        continue;
                    }
                }
                let part = Part::Nodes { level: l as u8, lo: node, hi: node + 1 };
                self.item(part, meta.t_first, meta.t_last, meta.samples, meta.gap_before);
            }
            m += metas.len() as u64;
        }
        true
    }

    /// Walk the raw samples of block `b` within the ordinal range.
    fn raw(&mut self, b: u64, blk: &Block) -> bool {
        let fo = blk.first_ordinal;
        let lo = self.a.saturating_sub(fo) as usize;
        let hi = (self.b.saturating_sub(fo) as usize).min(blk.len);
        for j in lo..hi {
            let t = blk.ts.get(j);
            let gap = if j == 0 { blk.gap_before } else { 0 };
            let part = Part::Raw { block: b, lo: j as u32, hi: j as u32 + 1 };
            self.item(part, t, t, 1, gap);
        }
        hi == blk.len
    }
}

/// Running summary of a column for one series (u64 counts: a column can
/// span more than 2^32 samples).
struct Acc {
    min: f64,
    max: f64,
    sum: f64,
    n: u64,
    nf: u64,
}

impl Acc {
    #[inline(always)]
    fn merge(&mut self, a: &Agg) {
        if a.min < self.min {
            self.min = a.min;
        }
        if a.max > self.max {
            self.max = a.max;
        }
        self.sum += a.sum;
        self.n += a.n as u64;
        self.nf += a.nf as u64;
    }

    #[inline(always)]
    fn column(&self, col: &PlanCol) -> EnvelopeColumn {
        let (min, max, mean) =
            if self.n > 0 { (self.min, self.max, self.sum / self.n as f64) } else { (f64::NAN, f64::NAN, f64::NAN) };
        EnvelopeColumn {
            t_start: col.t_start,
            t_end: col.t_end,
            min,
            max,
            mean,
            count: self.n,
            non_finite: self.nf,
            samples: col.samples,
            break_before: col.break_before,
        }
    }

    #[inline(always)]
    fn push(&mut self, v: f64) {
        let mut a = Agg::EMPTY;
        a.push(v);
        self.merge(&a);
    }
}

impl StreamStore {
    /// Lay out the columns of a query over `t0..=t1` (see the module docs).
    pub(crate) fn plan(&self, t0: i64, t1: i64, columns: usize, plan: &mut Plan) {
        plan.cols.clear();
        plan.parts.clear();
        plan.samples_per_bucket = 0;
        plan.uniform = None;
        let top = self.pyramid.top();
        if columns == 0 || t1 < t0 || top == 0 {
            return;
        }
        let o0 = self.ord_start(t0);
        let o1 = self.ord_end(t1);
        let per_col = o1.saturating_sub(o0) as f64 / columns as f64;
        let mut target = 0;
        while target < top && ((blocks_per_node(target + 1) * BLOCK as u64) as f64) <= per_col {
            target += 1;
        }
        plan.samples_per_bucket = if target == 0 { 1 } else { blocks_per_node(target) * BLOCK as u64 };
        let w = ((t1 - t0) as f64 / columns as f64).max(1.0);
        let mut walk = Planner {
            st: self,
            a: o0.saturating_sub(1),
            b: o1.saturating_add(1),
            target,
            t0,
            inv_w: 1.0 / w,
            split_gap: w.ceil() as i64,
            plan,
            cur: Cur { lo: f64::NAN, t_start: 0, t_end: 0, samples: 0, break_before: false, first_part: 0 },
        };
        let level = self.pyramid.level(top);
        let a = walk.a;
        let lo = level.meta.partition_point(level.meta.start(), level.meta.end(), |x| x.first_ordinal + x.samples <= a);
        walk.level(top, lo, level.meta.end());
        walk.close();
        plan.uniform = match plan.parts.first() {
            Some(&Part::Nodes { level, .. })
                if plan.parts.len() == plan.cols.len()
                    && plan.parts.iter().all(|p| matches!(*p, Part::Nodes { level: l, .. } if l == level)) =>
            {
                Some(level)
            }
            _ => None,
        };
    }

    /// Fill `out` (already reset) with series `s` laid out by `plan`.
    pub(crate) fn apply(&self, plan: &Plan, s: usize, out: &mut Envelope) {
        out.samples_per_bucket = plan.samples_per_bucket;
        if s >= self.n_series() {
            return;
        }
        let gauge = self.wraps[s].is_none();
        // Node storage of this series per level, looked up once.
        let mut levels: [Option<&Chunked<Agg>>; MAX_LEVEL + 1] = [None; MAX_LEVEL + 1];
        for (l, slot) in levels.iter_mut().enumerate().skip(1).take(self.pyramid.top()) {
            *slot = Some(&self.pyramid.level(l).aggs[s]);
        }
        if let Some(aggs) = plan.uniform.and_then(|l| levels[l as usize]) {
            // The common layout: one run of nodes of one level per column,
            // each column starting where the previous ended.
            for (col, part) in plan.cols.iter().zip(&plan.parts) {
                let Part::Nodes { lo, hi, .. } = *part else { unreachable!("uniform plans hold nodes") };
                let mut acc = Acc { min: f64::INFINITY, max: f64::NEG_INFINITY, sum: 0.0, n: 0, nf: 0 };
                let mut m = lo;
                loop {
                    let run = aggs.run_from(m, hi);
                    for a in run {
                        acc.merge(a);
                    }
                    m += run.len() as u64;
                    if m >= hi {
                        break;
                    }
                }
                out.columns.push(acc.column(col));
            }
            return;
        }
        let mut p = 0;
        for col in &plan.cols {
            let mut acc = Acc { min: f64::INFINITY, max: f64::NEG_INFINITY, sum: 0.0, n: 0, nf: 0 };
            for part in &plan.parts[p..col.parts_end] {
                match *part {
                    Part::Nodes { level, lo, hi } => {
                        let Some(aggs) = levels[level as usize] else {
                            continue;
                        };
                        let mut m = lo;
                        loop {
                            let run = aggs.run_from(m, hi);
                            for a in run {
                                acc.merge(a);
                            }
                            m += run.len() as u64;
                            if m >= hi {
                                break;
                            }
                        }
                    }
                    Part::Raw { block, lo, hi } => {
                        let Some(blk) = self.block(block) else {
                            continue;
                        };
                        if gauge {
                            for &v in &blk.col(s)[lo as usize..hi as usize] {
                                acc.push(v);
                            }
                        } else {
                            for j in lo as usize..hi as usize {
                                acc.push(self.value(blk, s, j));
                            }
                        }
                    }
                }
            }
            p = col.parts_end;
            out.columns.push(acc.column(col));
        }
    }

    /// See `Store::envelope`.
    pub fn envelope(&self, s: usize, t0: i64, t1: i64, columns: usize, out: &mut Envelope) {
        out.reset(t0, t1, columns);
        if s >= self.n_series() {
            return;
        }
        let mut plan = std::mem::take(&mut out.plan);
        self.plan(t0, t1, columns, &mut plan);
        self.apply(&plan, s, out);
        out.plan = plan;
    }
}
