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
use super::column::{BLOCK, Block};
use super::pyramid::{FANOUT, NodeMeta, blocks_per_node};
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

/// Accumulator of the column being built (u64 counts: a column can span
/// more than 2^32 samples).
#[derive(Clone, Copy)]
struct Acc {
    col: i64,
    t_start: i64,
    t_end: i64,
    min: f64,
    max: f64,
    sum: f64,
    n: u64,
    nf: u64,
    samples: u64,
    break_before: bool,
}

struct Walk<'a> {
    st: &'a StreamStore,
    s: usize,
    /// Ordinal range to cover.
    a: u64,
    b: u64,
    /// Finest level to use (0 = raw samples).
    target: usize,
    t0: i64,
    inv_w: f64,
    /// A gap at least this long must not be inside a column.
    split_gap: i64,
    out: &'a mut Vec<EnvelopeColumn>,
    cur: Option<Acc>,
}

impl Walk<'_> {
    #[inline]
    fn column_of(&self, t_mid: i64) -> i64 {
        ((t_mid - self.t0) as f64 * self.inv_w).floor() as i64
    }

    #[inline]
    fn item(&mut self, t_first: i64, t_last: i64, agg: &Agg, samples: u64, gap_before: i64) {
        let col = self.column_of(t_first + (t_last - t_first) / 2);
        if let Some(c) = &mut self.cur {
            if c.col == col && gap_before < self.split_gap {
                c.t_end = t_last;
                c.min = c.min.min(agg.min);
                c.max = c.max.max(agg.max);
                c.sum += agg.sum;
                c.n += agg.n as u64;
                c.nf += agg.nf as u64;
                c.samples += samples;
                return;
            }
            let done = *c;
            self.flush(done);
        }
        self.cur = Some(Acc {
            col,
            t_start: t_first,
            t_end: t_last,
            min: agg.min,
            max: agg.max,
            sum: agg.sum,
            n: agg.n as u64,
            nf: agg.nf as u64,
            samples,
            break_before: gap_before > 0,
        });
    }

    fn flush(&mut self, c: Acc) {
        let (min, max, mean) = if c.n > 0 {
            (c.min, c.max, c.sum / c.n as f64)
        } else {
            (f64::NAN, f64::NAN, f64::NAN)
        };
        self.out.push(EnvelopeColumn {
            t_start: c.t_start,
            t_end: c.t_end,
            min,
            max,
            mean,
            count: c.n,
            non_finite: c.nf,
            samples: c.samples,
            break_before: c.break_before,
        });
    }

    /// Walk nodes `lo..hi` of level `l`; false once past the range.
    fn level(&mut self, l: usize, lo: u64, hi: u64) -> bool {
        let st = self.st;
        let level = st.pyramid.level(l);
        let (lo, hi) = (lo.max(level.meta.start()), hi.min(level.meta.end()));
        for m in lo..hi {
            let meta = level.meta.at(m);
            if meta.first_ordinal + meta.samples <= self.a {
                continue;
            }
            if meta.first_ordinal >= self.b {
                return false;
            }
            if l > self.target || (l > 1 && meta.max_gap >= self.split_gap) {
                if l == 1 {
                    if let Some(blk) = st.block(m) {
                        if !self.raw(blk) {
                            return false;
                        }
                        continue;
                    }
                } else if let Some((clo, chi)) = st.children(l, m) {
                    if !self.level(l - 1, clo, chi) {
                        return false;
                    }
                    continue;
                }
            }
            self.node(meta, level.aggs[self.s].at(m));
        }
        true
    }

    #[inline]
    fn node(&mut self, meta: &NodeMeta, agg: &Agg) {
        self.item(
            meta.t_first,
            meta.t_last,
            agg,
            meta.samples,
            meta.gap_before,
        );
    }

    /// Walk the raw samples of `blk` within the ordinal range.
    fn raw(&mut self, blk: &Block) -> bool {
        let fo = blk.first_ordinal;
        let lo = self.a.saturating_sub(fo) as usize;
        let hi = (self.b.saturating_sub(fo) as usize).min(blk.len);
        for j in lo..hi {
            let t = blk.ts.get(j);
            let v = self.st.value(blk, self.s, j);
            let gap = if j == 0 { blk.gap_before } else { 0 };
            self.item(t, t, &Agg::of(v), 1, gap);
        }
        hi == blk.len
    }
}

impl StreamStore {
    /// See `Store::envelope`.
    pub fn envelope(&self, s: usize, t0: i64, t1: i64, columns: usize, out: &mut Envelope) {
        out.reset(t0, t1, columns);
        let top = self.pyramid.top();
        if columns == 0 || t1 < t0 || top == 0 || s >= self.n_series() {
            return;
        }
        let o0 = self.ord_start(t0);
        let o1 = self.ord_end(t1);
        let per_col = o1.saturating_sub(o0) as f64 / columns as f64;
        let mut target = 0;
        while target < top && ((blocks_per_node(target + 1) * BLOCK as u64) as f64) <= per_col {
            target += 1;
        }
        out.samples_per_bucket = if target == 0 {
            1
        } else {
            blocks_per_node(target) * BLOCK as u64
        };
        let w = ((t1 - t0) as f64 / columns as f64).max(1.0);
        let mut walk = Walk {
            st: self,
            s,
            a: o0.saturating_sub(1),
            b: o1.saturating_add(1),
            target,
            t0,
            inv_w: 1.0 / w,
            split_gap: w.ceil() as i64,
            out: &mut out.columns,
            cur: None,
        };
        let level = self.pyramid.level(top);
        let a = walk.a;
        let lo = level
            .meta
            .partition_point(level.meta.start(), level.meta.end(), |x| {
                x.first_ordinal + x.samples <= a
            });
        walk.level(top, lo, level.meta.end());
        if let Some(c) = walk.cur.take() {
            walk.flush(c);
        }
        debug_assert!(FANOUT.is_power_of_two());
    }
}
