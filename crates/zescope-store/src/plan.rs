//! The column plan of an envelope query (see `envelope.rs`).
//!
//! Laying out columns needs only what all series of a stream share: node time
//! spans, sample counts, gaps. So it is done once per stream and query: walk
//! the pyramid level chosen for the zoom (descending where a coarser level is
//! needed to find the range, or to split a bucket around a visible gap),
//! assign each node (or raw sample) to the pixel column of its middle, and
//! record each column's time span, sample count, gap flag and the runs of
//! nodes or samples it is made of. Applying the plan to a series is then a
//! reduction over that series' aggregates along those runs.

use super::column::{BLOCK, Block};
use super::pyramid::blocks_per_node;
use super::stream::StreamStore;

/// A run of a column's samples: nodes `lo..hi` of a level, or raw samples
/// `lo..hi` of a block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Part {
    Nodes { level: u8, lo: u64, hi: u64 },
    Raw { block: u64, lo: u32, hi: u32 },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct PlanCol {
    pub t_start: i64,
    pub t_end: i64,
    pub samples: u64,
    pub break_before: bool,
    /// Its grid column (`grid.rs`), in a grid plan.
    pub cell: i64,
    /// The column's parts end here in `QueryPlan::parts` (they start where the
    /// previous column's end).
    pub parts_end: usize,
}

/// The column plan of one query on one stream (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct QueryPlan {
    pub cols: Vec<PlanCol>,
    pub parts: Vec<Part>,
    pub samples_per_bucket: u64,
    /// `Some(level)` when every column is exactly one run of nodes of that
    /// level (the common case, which `apply` has a fast path for).
    pub uniform: Option<u8>,
}

impl QueryPlan {
    /// Does the plan read raw samples (of sealed or open blocks), not only pyramid nodes?
    pub(crate) fn reads_raw(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Raw { .. }))
    }
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
    /// In a grid plan: its grid column, and the times `t_lo..t_hi` it covers.
    cell: i64,
    t_lo: i64,
    t_hi: i64,
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
    /// Column width of a grid plan (`grid.rs`: columns by integer division of an item's middle
    /// time); 0: columns from `t0` in steps of `1 / inv_w`.
    grid: i64,
    plan: &'a mut QueryPlan,
    /// The column being built (`samples == 0`: none yet).
    cur: Cur,
}

impl Planner<'_> {
    #[inline(always)]
    fn item(&mut self, part: Part, t_first: i64, t_last: i64, samples: u64, gap_before: i64) {
        if self.grid > 0 {
            return self.grid_item(part, t_first, t_last, samples, gap_before);
        }
        // Column of the item's middle: floor(x), tested against the current
        // column first (two compares instead of a floor).
        let x = match (t_first.checked_sub(self.t0), t_last.checked_sub(t_first)) {
            (Some(d), Some(span)) => (d as f64 + (span / 2) as f64) * self.inv_w,
            // Only at the far ends of the timeline.
            _ => ((t_first as f64 - self.t0 as f64) + (t_last as f64 - t_first as f64) * 0.5) * self.inv_w,
        };
        let c = &self.cur;
        if x >= c.lo && x < c.lo + 1.0 && gap_before < self.split_gap {
            return self.extend(part, t_last, samples);
        }
        self.start(x, part, t_first, t_last, samples, gap_before);
    }

    /// `item` in a grid plan: the column of the item's middle, `floor((t_first + t_last) / 2)`,
    /// divided by the width in integers, so an item lands in the same column in every walk.
    #[inline(always)]
    fn grid_item(&mut self, part: Part, t_first: i64, t_last: i64, samples: u64, gap_before: i64) {
        let mid = match t_last.checked_sub(t_first) {
            Some(span) => t_first + span / 2,
            None => ((t_first as i128 + t_last as i128).div_euclid(2)) as i64,
        };
        let c = &self.cur;
        if mid >= c.t_lo && mid < c.t_hi && gap_before < self.split_gap {
            return self.extend(part, t_last, samples);
        }
        let cell = mid.div_euclid(self.grid);
        let t_lo = cell * self.grid;
        self.start(cell as f64, part, t_first, t_last, samples, gap_before);
        self.cur.cell = cell;
        self.cur.t_lo = t_lo;
        self.cur.t_hi = t_lo.saturating_add(self.grid);
    }

    /// Add an item to the current column.
    #[inline(always)]
    fn extend(&mut self, part: Part, t_last: i64, samples: u64) {
        let c = &mut self.cur;
        c.t_end = t_last;
        c.samples += samples;
        let parts = &mut self.plan.parts;
        match (parts.last_mut(), part) {
            (Some(Part::Nodes { level, hi, .. }), Part::Nodes { level: l, lo, hi: h }) if *level == l && *hi == lo => {
                *hi = h
            }
            (Some(Part::Raw { block, hi, .. }), Part::Raw { block: b, lo, hi: h }) if *block == b && *hi == lo => {
                *hi = h
            }
            _ => parts.push(part),
        }
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
            cell: 0,
            t_lo: 0,
            t_hi: 0,
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
                cell: c.cell,
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
        let mut buf = [0i64; BLOCK];
        let ts = blk.timestamps(&mut buf);
        for (j, &t) in ts.iter().enumerate().take(hi).skip(lo) {
            let gap = if j == 0 { blk.gap_before } else { 0 };
            let part = Part::Raw { block: b, lo: j as u32, hi: j as u32 + 1 };
            self.item(part, t, t, 1, gap);
        }
        hi == blk.len
    }
}

impl StreamStore {
    /// Lay out the columns of a query over `t0..=t1` (see the module docs).
    pub(crate) fn plan(&self, t0: i64, t1: i64, columns: usize, plan: &mut QueryPlan) {
        let w = ((t1 as f64 - t0 as f64) / columns as f64).max(1.0);
        self.walk(t0, t1, columns, self.plan_level(t0, t1, columns), w, 0, plan);
    }

    /// Lay out the columns of a walk over `t0..=t1` at `level` on the grid of columns `width`
    /// ns wide (`grid.rs`).
    pub(crate) fn plan_grid(&self, t0: i64, t1: i64, width: i64, level: usize, plan: &mut QueryPlan) {
        let width = width.max(1);
        self.walk(t0, t1, 1, level, width as f64, width, plan);
    }

    /// The level a query over `t0..=t1` at `columns` walks: the coarsest whose buckets hold at
    /// most a column's samples (0: raw samples).
    pub(crate) fn plan_level(&self, t0: i64, t1: i64, columns: usize) -> usize {
        let top = self.pyramid.top();
        if columns == 0 || t1 < t0 || top == 0 {
            return 0;
        }
        let (o0, o1) = (self.ord_start(t0), self.ord_end(t1));
        let per_col = o1.saturating_sub(o0) as f64 / columns as f64;
        let mut target = 0;
        while target < top && ((blocks_per_node(target + 1) * BLOCK as u64) as f64) <= per_col {
            target += 1;
        }
        target
    }

    /// The walk of `plan` (`grid == 0`) and `plan_grid`.
    #[allow(clippy::too_many_arguments)]
    fn walk(&self, t0: i64, t1: i64, columns: usize, target: usize, w: f64, grid: i64, plan: &mut QueryPlan) {
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
        plan.samples_per_bucket = samples_per_bucket(target);
        let mut walk = Planner {
            st: self,
            a: o0.saturating_sub(1),
            b: o1.saturating_add(1),
            target,
            t0,
            inv_w: 1.0 / w,
            split_gap: w.ceil() as i64,
            grid,
            plan,
            cur: Cur {
                lo: f64::NAN,
                t_start: 0,
                t_end: 0,
                samples: 0,
                break_before: false,
                first_part: 0,
                cell: 0,
                t_lo: i64::MAX,
                t_hi: i64::MIN,
            },
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
}

/// Samples per bucket of pyramid level `level` (0: raw samples, 1).
pub(crate) fn samples_per_bucket(level: usize) -> u64 {
    if level == 0 { 1 } else { blocks_per_node(level) * BLOCK as u64 }
}
