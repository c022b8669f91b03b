//! Point and range queries: hover readout, per-series statistics.
//!
//! `stats` is a segment-tree range query over the pyramid: whole nodes inside
//! the range are merged from their stored sums (at most 2 · 16 per level), and
//! only the two partial raw blocks at the ends are scanned, so a statistic over
//! an hour of kHz data costs the same as over a second. `nearest` answers with
//! an exact stored sample; in coarsened history there is none, and `bucket_at`
//! answers with the bucket instead.

use super::agg::{Agg, to_option};
use super::column::{BLOCK, Block};
use super::pyramid::blocks_per_node;
use super::stream::StreamStore;

/// One stored sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Time of the sample (ns).
    pub t: i64,
    /// The value (for a cumulative counter: its rate, or its raw total with
    /// `nearest_raw`). `None` when the sample has no value: the first rate of
    /// a stream, after a gap, or at a counter reset. NaN/inf are passed through.
    pub value: Option<f64>,
}

/// Statistics over a time range (see `Store::stats`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RangeStats {
    /// Min/max of the finite values; NaN when `count` is 0.
    pub min: f64,
    /// See `min`.
    pub max: f64,
    /// The mean of the finite values; of a cumulative counter's rates, time-weighted: Σ rate ×
    /// interval / Σ interval, what the counter rose by over the time that took (a rate is the
    /// mean over the interval since the sample before; a late read covers more time than one on
    /// time). NaN when `count` is 0.
    pub mean: f64,
    /// What `mean` averages over, to merge it with another's ([`RangeStats::merge`]): seconds
    /// of intervals for a counter's rates, the count of finite values otherwise.
    pub weight: f64,
    /// Value of the last sample in the range (`None`: no samples, or the last
    /// one has no value).
    pub last: Option<f64>,
    /// Finite values.
    pub count: u64,
    /// NaN/±inf values.
    pub non_finite: u64,
    /// All samples (including those with no value).
    pub samples: u64,
    /// Time span of the samples covered (meaningless when `samples` is 0).
    pub t_first: i64,
    /// See `t_first`.
    pub t_last: i64,
    /// False when coarsened history made the range snap outward to whole
    /// buckets (`t_first`/`t_last` then say how far).
    pub exact: bool,
}

impl RangeStats {
    /// Statistics of no samples: NaN min/max/mean, zero counts.
    pub const EMPTY: RangeStats = RangeStats {
        min: f64::NAN,
        max: f64::NAN,
        mean: f64::NAN,
        weight: 0.0,
        last: None,
        count: 0,
        non_finite: 0,
        samples: 0,
        t_first: 0,
        t_last: 0,
        exact: true,
    };
}

impl RangeStats {
    /// The statistics of this range and `other` together (two runs of one series, or two
    /// parts of a range): the mean weighted by each one's [`RangeStats::weight`], the last
    /// value the later one's (by `t_last`) where it has one.
    pub fn merge(self, other: RangeStats) -> RangeStats {
        if other.samples == 0 {
            return RangeStats { exact: self.exact && other.exact, ..self };
        }
        if self.samples == 0 {
            return RangeStats { exact: self.exact && other.exact, ..other };
        }
        let weight = self.weight + other.weight;
        let mean = match (self.count > 0, other.count > 0) {
            (true, true) if weight > 0.0 => self.mean * (self.weight / weight) + other.mean * (other.weight / weight),
            (true, _) => self.mean,
            (false, true) => other.mean,
            (false, false) => f64::NAN,
        };
        let later = other.t_last >= self.t_last;
        RangeStats {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
            mean,
            weight,
            last: if later { other.last.or(self.last) } else { self.last.or(other.last) },
            count: self.count + other.count,
            non_finite: self.non_finite + other.non_finite,
            samples: self.samples + other.samples,
            t_first: self.t_first.min(other.t_first),
            t_last: self.t_last.max(other.t_last),
            exact: self.exact && other.exact,
        }
    }
}

impl Default for RangeStats {
    fn default() -> Self {
        RangeStats::EMPTY
    }
}

/// A bucket of (possibly coarsened) history (see `Store::bucket_at`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bucket {
    /// Time of the bucket's first sample (ns).
    pub t_first: i64,
    /// Time of the bucket's last sample (ns).
    pub t_last: i64,
    /// Statistics of the bucket's samples.
    pub stats: RangeStats,
    /// Samples per bucket at its resolution (1: an exact sample).
    pub samples_per_bucket: u64,
}

/// Range accumulator with u64 counts.
struct RangeAcc {
    agg: Agg,
    n: u64,
    nf: u64,
    samples: u64,
    span: Option<(i64, i64)>,
}

impl RangeAcc {
    fn new() -> RangeAcc {
        RangeAcc { agg: Agg::EMPTY, n: 0, nf: 0, samples: 0, span: None }
    }

    fn add(&mut self, t_first: i64, t_last: i64, a: &Agg, samples: u64) {
        self.agg.merge(a);
        self.n += a.n as u64;
        self.nf += a.nf as u64;
        self.samples += samples;
        self.span = Some((self.span.map_or(t_first, |s| s.0), t_last));
    }

    fn finish(self, t0: i64, t1: i64) -> RangeStats {
        let Some((t_first, t_last)) = self.span else {
            return RangeStats::EMPTY;
        };
        let (min, max) = if self.n > 0 { (self.agg.min, self.agg.max) } else { (f64::NAN, f64::NAN) };
        RangeStats {
            min,
            max,
            mean: self.agg.mean(),
            weight: self.agg.weight(),
            last: to_option(self.agg.last),
            count: self.n,
            non_finite: self.nf,
            samples: self.samples,
            t_first,
            t_last,
            exact: t_first >= t0 && t_last <= t1,
        }
    }
}

impl StreamStore {
    /// See `Store::stats`.
    pub(crate) fn stats(&self, s: usize, t0: i64, t1: i64) -> RangeStats {
        let top = self.pyramid.top();
        if t1 < t0 || top == 0 || s >= self.n_series() {
            return RangeStats::EMPTY;
        }
        let (a, b) = (self.ord_start(t0), self.ord_end(t1));
        if a >= b {
            return RangeStats::EMPTY;
        }
        let mut acc = RangeAcc::new();
        let meta = &self.pyramid.level(top).meta;
        let lo = meta.partition_point(meta.start(), meta.end(), |x| x.first_ordinal + x.samples <= a);
        self.range(s, top, lo, meta.end(), a, b, &mut acc);
        acc.finish(t0, t1)
    }

    #[expect(clippy::too_many_arguments, reason = "one recursive walk, its state spelled out")]
    fn range(&self, s: usize, l: usize, lo: u64, hi: u64, a: u64, b: u64, acc: &mut RangeAcc) -> bool {
        let level = self.pyramid.level(l);
        for m in lo.max(level.meta.start())..hi.min(level.meta.end()) {
            let meta = level.meta.at(m);
            let (start, end) = (meta.first_ordinal, meta.first_ordinal + meta.samples);
            if end <= a {
                continue;
            }
            if start >= b {
                return false;
            }
            if a > start || end > b {
                if l == 1
                    && let Some(blk) = self.block(m)
                {
                    self.scan(blk, s, a, b, acc);
                    continue;
                }
                if let Some((clo, chi)) = self.children(l, m) {
                    if !self.range(s, l - 1, clo, chi, a, b, acc) {
                        return false;
                    }
                    continue;
                }
            }
            acc.add(meta.t_first, meta.t_last, level.aggs[s].at(m), meta.samples);
        }
        true
    }

    fn scan(&self, blk: &Block, s: usize, a: u64, b: u64, acc: &mut RangeAcc) {
        let fo = blk.first_ordinal;
        let lo = a.saturating_sub(fo) as usize;
        let hi = (b.saturating_sub(fo) as usize).min(blk.len);
        if lo >= hi {
            return;
        }
        let (mut tbuf, mut vbuf) = ([0i64; BLOCK], [0.0; BLOCK]);
        let ts = blk.timestamps(&mut tbuf);
        let vals = self.block_values(blk, s, &mut vbuf);
        let rate = self.wraps[s].is_some();
        for j in lo..hi {
            let mut a = Agg::EMPTY;
            if rate {
                a.push_rate(vals[j], self.secs_before(blk, ts, j));
            } else {
                a.push(vals[j]);
            }
            acc.add(ts[j], ts[j], &a, 1);
        }
    }

    /// Seconds between sample `j` of `blk` (times `ts`) and the one before it, which its rate
    /// is taken against (0: none, at the stream's start or after a gap).
    fn secs_before(&self, blk: &Block, ts: &[i64], j: usize) -> f64 {
        let before = match j {
            0 if blk.gap_before > 0 => None,
            0 => {
                let k = self.blocks.partition_point(|b| b.first_ordinal < blk.first_ordinal);
                match k.checked_sub(1) {
                    Some(k) => self.blocks.get(k).map(|p| p.t_last()),
                    None => self.head_before,
                }
            }
            _ => Some(ts[j - 1]),
        };
        before.map_or(0.0, |t| ts[j].saturating_sub(t) as f64 * 1e-9)
    }

    /// The stored sample at ordinal `o` (value or raw total), if held raw.
    fn sample_at(&self, o: u64, s: usize, raw: bool) -> Option<Sample> {
        let blk = self.block_of_ordinal(o)?;
        let j = (o - blk.first_ordinal) as usize;
        let v = if raw { blk.value(s, j) } else { self.value(blk, s, j) };
        Some(Sample { t: blk.ts_at(j), value: to_option(v) })
    }

    /// See `Store::nearest`.
    pub(crate) fn nearest(&self, s: usize, t: i64, raw: bool) -> Option<Sample> {
        let first_raw = self.blocks.front()?.t_first();
        if s >= self.n_series() || (t < first_raw && self.oldest_time().is_some_and(|o| o <= t)) {
            return None;
        }
        let e = self.ord_end(t);
        let before = e.checked_sub(1).and_then(|o| self.sample_at(o, s, raw));
        let after = self.sample_at(e, s, raw);
        match (before, after) {
            (Some(x), Some(y)) => Some(if t as i128 - x.t as i128 <= y.t as i128 - t as i128 { x } else { y }),
            (x, y) => x.or(y),
        }
    }

    /// See `Store::bucket_at`.
    pub(crate) fn bucket_at(&self, s: usize, t: i64) -> Option<Bucket> {
        if s >= self.n_series() {
            return None;
        }
        // The finest item starting at or before t (or the very first one).
        let mut l = self.pyramid.top();
        let level = self.pyramid.levels.last()?;
        let (mut lo, mut hi) = (level.meta.start(), level.meta.end());
        loop {
            let level = self.pyramid.level(l);
            let k = level.meta.partition_point(lo, hi, |x| x.t_first <= t);
            let m = if k == lo { lo } else { k - 1 };
            let meta = level.meta.get(m)?;
            if l == 1
                && let Some(blk) = self.block(m)
            {
                let j = blk.partition_point(t.saturating_add(1)).saturating_sub(1);
                let tj = blk.ts_at(j);
                let mut acc = RangeAcc::new();
                acc.add(tj, tj, &Agg::of(self.value(blk, s, j)), 1);
                return Some(Bucket { t_first: tj, t_last: tj, stats: acc.finish(tj, tj), samples_per_bucket: 1 });
            }
            match self.children(l, m) {
                Some((clo, chi)) => (l, lo, hi) = (l - 1, clo, chi),
                None => {
                    let mut acc = RangeAcc::new();
                    acc.add(meta.t_first, meta.t_last, level.aggs[s].at(m), meta.samples);
                    return Some(Bucket {
                        t_first: meta.t_first,
                        t_last: meta.t_last,
                        stats: acc.finish(meta.t_first, meta.t_last),
                        samples_per_bucket: blocks_per_node(l) * BLOCK as u64,
                    });
                }
            }
        }
    }
}
