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
//! the layout once: a plan (`plan.rs`: which node or sample runs make up each column,
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
use super::decoded::{CacheUse, SeriesValues};
use super::plan::{Part, PlanCol, QueryPlan};
use super::pyramid::MAX_LEVEL;
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
    /// Smallest finite value in the column (NaN when `count` is 0).
    pub min: f64,
    /// Largest finite value in the column (NaN when `count` is 0).
    pub max: f64,
    /// Mean of the finite values, the point a line through a column is drawn at: of a
    /// counter's rates too, the mean of the values (not time-weighted as
    /// [`crate::RangeStats::mean`] is: a column is a pixel wide, and its raw values are read
    /// without their times).
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
    /// Every field as bits, so that columns compare bit for bit (NaNs equal, -0 apart from +0).
    pub fn bits(&self) -> [u64; 9] {
        let (c, b) = (self, f64::to_bits);
        [
            c.t_start as u64,
            c.t_end as u64,
            b(c.min),
            b(c.max),
            b(c.mean),
            c.count,
            c.non_finite,
            c.samples,
            c.break_before as u64,
        ]
    }

    /// Middle of the covered time span.
    pub fn t_mid(&self) -> i64 {
        ((self.t_start as i128 + self.t_end as i128) / 2) as i64
    }
}

/// A reusable envelope buffer: fill it with `Store::envelope` every frame;
/// after the first frames it no longer allocates.
#[derive(Clone, Debug, Default)]
pub struct Envelope {
    /// One column per pixel column asked for, oldest first.
    pub columns: Vec<EnvelopeColumn>,
    pub(crate) range: (i64, i64),
    pub(crate) requested: usize,
    pub(crate) samples_per_bucket: u64,
    pub(crate) plan: QueryPlan,
    /// Min and max of node columns came from the drawing bands (`Store::draw_envelopes`).
    pub(crate) banded: bool,
}

impl Envelope {
    /// An empty envelope (allocates nothing until filled).
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

    /// Whether every column is exact as [`EnvelopeColumn`] describes. False after
    /// `Store::draw_envelopes` read the drawing bands: then columns made of pyramid
    /// nodes have a min and max that enclose the exact ones (wider by at most an `f32`
    /// rounding, see `band.rs`), `count` is their sample count when they hold a finite
    /// value and 0 otherwise, `mean` is NaN and `non_finite` 0 (not computed).
    pub fn is_exact(&self) -> bool {
        !self.banded
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
        self.banded = false;
    }
}

/// Running summary of a column for one series (u64 counts: a column can
/// span more than 2^32 samples).
pub(super) struct Acc {
    pub min: f64,
    pub max: f64,
    pub sum: f64,
    pub n: u64,
    pub nf: u64,
}

impl Acc {
    pub(crate) const EMPTY: Acc = Acc { min: f64::INFINITY, max: f64::NEG_INFINITY, sum: 0.0, n: 0, nf: 0 };

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
    pub(crate) fn column(&self, col: &PlanCol) -> EnvelopeColumn {
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

    /// Merges nodes `lo..hi` of one level (stored in chunks: walked run by run).
    #[inline]
    pub(crate) fn merge_nodes(&mut self, aggs: &Chunked<Agg>, lo: u64, hi: u64) {
        let mut m = lo;
        while m < hi {
            let run = aggs.run_from(m, hi);
            for a in run {
                self.merge(a);
            }
            m += run.len() as u64;
        }
    }

    /// Adds a run of raw values (of one block), as `Agg::push` of each would but with the
    /// run's sum kept apart and added at the end, in one tight loop (`Agg::push_all`; live
    /// views at 1 kHz scan tens of thousands of raw values per series and frame).
    #[inline]
    fn scan(&mut self, vals: &[f64]) {
        let mut run = Agg::EMPTY;
        run.push_all(vals);
        self.merge(&run);
    }
}

impl StreamStore {
    /// Fill `out` (already reset) with series `s` laid out by `plan`; `draw`: from the
    /// drawing bands where the plan has them (see [`Envelope::is_exact`]); raw samples come
    /// through the cache of decoded blocks when there is one (`decoded.rs`).
    pub(crate) fn apply(
        &self,
        plan: &QueryPlan,
        s: usize,
        out: &mut Envelope,
        draw: bool,
        cache: Option<CacheUse<'_>>,
    ) {
        out.samples_per_bucket = plan.samples_per_bucket;
        if s >= self.n_series() {
            return;
        }
        // Node storage of this series per level, looked up once.
        let mut levels: [Option<&Chunked<Agg>>; MAX_LEVEL + 1] = [None; MAX_LEVEL + 1];
        for (l, slot) in levels.iter_mut().enumerate().skip(1).take(self.pyramid.top()) {
            *slot = Some(&self.pyramid.level(l).aggs[s]);
        }
        let bands = plan.uniform.filter(|_| draw).and_then(|l| self.pyramid.level(l as usize).bands.get(s));
        if let (Some(bands), Some(aggs)) = (bands, plan.uniform.and_then(|l| levels[l as usize])) {
            // Drawing a long history: 8 bytes a node instead of an `Agg`'s 56, read one storage
            // run at a time (`run`, nodes from `first`, offsets from `base`) as below.
            out.banded = true;
            out.columns.reserve(plan.cols.len());
            let (mut first, mut base, mut run): (u64, f64, &[[f32; 2]]) = (0, 0.0, &[]);
            for (col, part) in plan.cols.iter().zip(&plan.parts) {
                let Part::Nodes { lo, hi, .. } = *part else { unreachable!("uniform plans hold nodes") };
                let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
                let (mut m, hi) = (lo.max(bands.start()), hi.min(bands.end()));
                let mut exact = false;
                while m < hi {
                    if m < first || m - first >= run.len() as u64 {
                        let Some((b, r)) = bands.run_from(m) else {
                            exact = true;
                            break;
                        };
                        (first, base, run) = (m, b, r);
                    }
                    let k = (m - first) as usize;
                    let take = ((hi - m) as usize).min(run.len() - k);
                    let (mut a, mut b) = (f32::INFINITY, f32::NEG_INFINITY);
                    for &[l, h] in &run[k..k + take] {
                        a = if l < a { l } else { a };
                        b = if h > b { h } else { b };
                    }
                    if a <= b {
                        let (a, b) = (base + a as f64, base + b as f64);
                        min = if a < min { a } else { min };
                        max = if b > max { b } else { max };
                    }
                    m += take as u64;
                }
                let column = if exact {
                    // An inexact chunk (values too far apart for f32 offsets): the aggregates.
                    let mut acc = Acc::EMPTY;
                    acc.merge_nodes(aggs, lo.max(aggs.start()), hi.min(aggs.end()));
                    acc.column(col)
                } else if min <= max {
                    EnvelopeColumn {
                        t_start: col.t_start,
                        t_end: col.t_end,
                        min,
                        max,
                        mean: f64::NAN,
                        count: col.samples,
                        non_finite: 0,
                        samples: col.samples,
                        break_before: col.break_before,
                    }
                } else {
                    Acc::EMPTY.column(col)
                };
                out.columns.push(column);
            }
            return;
        }
        if let Some(aggs) = plan.uniform.and_then(|l| levels[l as usize]) {
            // The common layout: one run of nodes of one level per column, the columns in
            // order. The nodes are read through one storage run at a time (`run`, starting at
            // node `base`), not looked up column by column.
            out.columns.reserve(plan.cols.len());
            let (mut base, mut run): (u64, &[Agg]) = (0, &[]);
            for (col, part) in plan.cols.iter().zip(&plan.parts) {
                let Part::Nodes { lo, hi, .. } = *part else { unreachable!("uniform plans hold nodes") };
                let mut acc = Acc::EMPTY;
                let mut m = lo.max(aggs.start());
                let hi = hi.min(aggs.end());
                while m < hi {
                    if m < base || m - base >= run.len() as u64 {
                        run = aggs.run_from(m, aggs.end());
                        base = m;
                    }
                    let k = (m - base) as usize;
                    let take = ((hi - m) as usize).min(run.len() - k);
                    for a in &run[k..k + take] {
                        acc.merge(a);
                    }
                    m += take as u64;
                }
                out.columns.push(acc.column(col));
            }
            return;
        }
        // Values of the block the raw parts read, looked up once per block (parts are single samples).
        let mut decoded = SeriesValues::new(cache, s);
        let mut p = 0;
        for col in &plan.cols {
            let mut acc = Acc::EMPTY;
            for part in &plan.parts[p..col.parts_end] {
                match *part {
                    Part::Nodes { level, lo, hi } => {
                        let Some(aggs) = levels[level as usize] else {
                            continue;
                        };
                        acc.merge_nodes(aggs, lo, hi);
                    }
                    Part::Raw { block, lo, hi } => {
                        let Some(blk) = self.block(block) else {
                            continue;
                        };
                        let vals = decoded.get(self, block, blk);
                        let vals = &vals[(lo as usize).min(blk.len)..(hi as usize).min(blk.len)];
                        acc.scan(vals);
                    }
                }
            }
            p = col.parts_end;
            out.columns.push(acc.column(col));
        }
    }

    /// See `Store::envelope`.
    pub(crate) fn envelope(
        &self,
        s: usize,
        t0: i64,
        t1: i64,
        columns: usize,
        out: &mut Envelope,
        cache: Option<CacheUse<'_>>,
    ) {
        out.reset(t0, t1, columns);
        if s >= self.n_series() {
            return;
        }
        let mut plan = std::mem::take(&mut out.plan);
        self.plan(t0, t1, columns, &mut plan);
        self.apply(&plan, s, out, false, cache);
        out.plan = plan;
    }
}
