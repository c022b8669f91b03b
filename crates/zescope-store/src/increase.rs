//! Totals of cumulative counters over a time range: how many bytes moved, how many joules were
//! spent between two instants.
//!
//! The total over `t0..=t1` is the sum of the increases *into* each full-resolution sample in
//! the range: `raw[i] - raw[i-1]` for every sample `i` with `t0 <= t[i] <= t1` whose predecessor
//! it connects to (the same rule as its rate, [`super::rate`]: the modulus is added across a
//! wrap; a reset, the first sample of a stream and the first sample after a gap add nothing; a
//! non-finite total adds nothing and is counted). Summed from the raw totals, so it is exact
//! where a sum of rates times intervals would round. Coarsened history keeps no totals: a range
//! reaching into it sums what is held at full resolution and says it is not exact.

use super::agg::to_option;
use super::column::BLOCK;
use super::rate::delta_raw;
use super::stream::StreamStore;
use super::{SeriesId, Store};

/// The total increase of a cumulative counter over a range (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Increase {
    /// Sum of the finite increases, in the counter's unit.
    pub total: f64,
    /// Increases summed.
    pub steps: u64,
    /// Increases left out because a total was NaN or infinite.
    pub non_finite: u64,
    /// False when part of the range lies in coarsened history (the total covers only the rest).
    pub exact: bool,
}

impl Store {
    /// The total increase of cumulative series `series` over `t0..=t1`; `None` for a gauge or a
    /// series of another store.
    pub fn increase(&self, series: SeriesId, t0: i64, t1: i64) -> Option<Increase> {
        let (i, k) = self.series_idx(series)?;
        self.streams[i].increase(k, t0, t1)
    }
}

impl StreamStore {
    fn increase(&self, s: usize, t0: i64, t1: i64) -> Option<Increase> {
        let wrap = (*self.wraps.get(s)?)?.wrap;
        let mut out = Increase { total: 0.0, steps: 0, non_finite: 0, exact: true };
        if t1 < t0 {
            return Some(out);
        }
        let (a, b) = (self.ord_start(t0), self.ord_end(t1));
        if a >= b {
            return Some(out);
        }
        out.exact = self.blocks.front().is_some_and(|f| f.first_ordinal <= a);
        let first = self.blocks.partition_point(|blk| blk.first_ordinal + blk.len as u64 <= a);
        let mut buf = [0.0; BLOCK];
        for idx in first..self.blocks.len() {
            let blk = &self.blocks[idx];
            if blk.first_ordinal >= b {
                break;
            }
            let lo = a.saturating_sub(blk.first_ordinal) as usize;
            let hi = ((b - blk.first_ordinal) as usize).min(blk.len);
            let col = blk.col(s, &mut buf);
            for j in lo..hi {
                let prev = if j > 0 {
                    Some(col[j - 1])
                } else if idx > 0 && blk.gap_before == 0 {
                    let p = &self.blocks[idx - 1];
                    Some(p.value(s, p.len - 1))
                } else {
                    // The predecessor of the oldest raw sample is coarsened away unless the
                    // stream starts here.
                    out.exact &= blk.first_ordinal == 0 || blk.gap_before != 0;
                    None
                };
                let Some(d) = prev.and_then(|p| to_option(delta_raw(p, col[j], wrap))) else {
                    continue;
                };
                if d.is_finite() {
                    out.total += d;
                    out.steps += 1;
                } else {
                    out.non_finite += 1;
                }
            }
        }
        Some(out)
    }
}
