//! Raw-level envelopes of several series of one stream at once.
//!
//! A live view reads tens of thousands of raw samples per series and frame. A column's sum,
//! min and max of one series are each a chain of dependent floating-point operations, one link
//! per sample (several cycles each), so a scan of one series at a time waits on them. Walking
//! [`LANES`] series (gauges or counters' rates) of one plan in step keeps that many independent chains in flight, while each
//! series still meets its own samples in the order `StreamStore::apply` does: the columns are
//! bit for bit the same.

use super::agg::{Agg, is_missing};
use super::chunked::Chunked;
use super::column::BLOCK;
use super::decoded::{CacheUse, DecodedCache};
use super::envelope::{Acc, Envelope};
use super::plan::{Part, QueryPlan};
use super::pyramid::MAX_LEVEL;
use super::stream::StreamStore;

/// Series walked in step.
pub(crate) const LANES: usize = 4;

/// Where a lane's values of the current block are: a slot of the cache, or its own buffer.
#[derive(Clone, Copy)]
enum Src {
    Slot(usize),
    Buf,
}

impl StreamStore {
    /// `apply` for the series `series` of this stream into `outs` (already reset), for a plan
    /// that reads raw samples (not a uniform one).
    pub(crate) fn apply_lanes(
        &self,
        plan: &QueryPlan,
        series: [usize; LANES],
        outs: &mut [Envelope],
        mut cache: Option<CacheUse<'_>>,
    ) {
        for out in outs.iter_mut() {
            out.samples_per_bucket = plan.samples_per_bucket;
        }
        let mut levels: [[Option<&Chunked<Agg>>; LANES]; MAX_LEVEL + 1] = [[None; LANES]; MAX_LEVEL + 1];
        for (l, slot) in levels.iter_mut().enumerate().skip(1).take(self.pyramid.top()) {
            for (k, &s) in series.iter().enumerate() {
                slot[k] = Some(&self.pyramid.level(l).aggs[s]);
            }
        }
        let mut bufs = [[0.0f64; BLOCK]; LANES];
        let mut srcs = [Src::Buf; LANES];
        let mut current = u64::MAX;
        let mut p = 0;
        for col in &plan.cols {
            let mut accs = [Acc::EMPTY; LANES];
            for part in &plan.parts[p..col.parts_end] {
                match *part {
                    Part::Nodes { level, lo, hi } => {
                        for (acc, aggs) in accs.iter_mut().zip(levels[level as usize]) {
                            if let Some(aggs) = aggs {
                                acc.merge_nodes(aggs, lo, hi);
                            }
                        }
                    }
                    Part::Raw { block, lo, hi } => {
                        let Some(blk) = self.block(block) else {
                            continue;
                        };
                        if block != current {
                            current = block;
                            for k in 0..LANES {
                                srcs[k] = match cache.as_mut() {
                                    Some(c) => {
                                        c.values(self, series[k], block, blk, &mut bufs[k]).map_or(Src::Buf, Src::Slot)
                                    }
                                    None => {
                                        self.block_values(blk, series[k], &mut bufs[k]);
                                        Src::Buf
                                    }
                                };
                            }
                        }
                        let (lo, hi) = ((lo as usize).min(blk.len), (hi as usize).min(blk.len));
                        let held: Option<&DecodedCache> = cache.as_ref().map(|c| &*c.cache);
                        let run = |k: usize| -> &[f64] {
                            match (srcs[k], held) {
                                (Src::Slot(i), Some(c)) => &c.slot_values(i)[lo..hi],
                                _ => &bufs[k][lo..hi],
                            }
                        };
                        scan_lanes(&mut accs, [run(0), run(1), run(2), run(3)]);
                    }
                }
            }
            p = col.parts_end;
            for (out, acc) in outs.iter_mut().zip(&accs) {
                out.columns.push(acc.column(col));
            }
        }
    }
}

/// `Acc::scan` of each lane's run (all of one length), the lanes in step. Branch-free, so the
/// lanes can share vector registers: a non-finite value enters the min as +inf, the max as
/// -inf and the sum as +0.0, which change nothing (the sum starts at +0.0, so it is never
/// -0.0, the one value adding +0.0 would change). A counter's rate may be the "no value"
/// marker (`agg::missing`: its first sample, a reset), which counts neither as a value nor as
/// non-finite.
#[inline]
fn scan_lanes(accs: &mut [Acc; LANES], runs: [&[f64]; LANES]) {
    let mut min = accs.each_ref().map(|a| a.min);
    let mut max = accs.each_ref().map(|a| a.max);
    let (mut sum, mut n, mut none) = ([0.0f64; LANES], [0u64; LANES], [0u64; LANES]);
    let [r0, r1, r2, r3] = runs;
    let len = r0.len().min(r1.len()).min(r2.len()).min(r3.len());
    for j in 0..len {
        let vs = [r0[j], r1[j], r2[j], r3[j]];
        for k in 0..LANES {
            let v = vs[k];
            let finite = v.is_finite();
            let lo = if finite { v } else { f64::INFINITY };
            let hi = if finite { v } else { f64::NEG_INFINITY };
            min[k] = if lo < min[k] { lo } else { min[k] };
            max[k] = if hi > max[k] { hi } else { max[k] };
            sum[k] += if finite { v } else { 0.0 };
            n[k] += u64::from(finite);
            none[k] += u64::from(is_missing(v));
        }
    }
    for k in 0..LANES {
        let a = &mut accs[k];
        a.min = min[k];
        a.max = max[k];
        a.sum += sum[k];
        a.n += n[k];
        a.nf += len as u64 - n[k] - none[k];
    }
}

#[cfg(test)]
mod tests {
    use super::super::{EnvelopeColumn, SeriesDesc, SeriesKind, Store, StreamDesc};
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn series_in_step_give_the_columns_of_one_series_at_a_time() {
        // 6 series (a group of 4 in step, 2 one at a time) with NaNs, infinities, signed zeros
        // and a gap; two of them cumulative counters (one resetting: rates without a value),
        // one in each group; a cap small enough that the oldest history is coarsened.
        let n = 6;
        let kind = |k: usize| match k {
            1 => SeriesKind::Cumulative { wrap: None },
            4 => SeriesKind::Cumulative { wrap: Some(4_294_967_296.0) },
            _ => SeriesKind::Gauge,
        };
        let series = (0..n).map(|k| SeriesDesc { name: format!("s{k}"), unit: "u".into(), kind: kind(k) }).collect();
        let mut store = Store::new(3 << 20);
        let id = store.begin_stream(StreamDesc { name: "t".into(), series });
        let value = |i: i64, s: usize| match (i + s as i64) % 409 {
            // Counters: totals that reset to 0 every 5,000 samples (wrap None: the rate there
            // has no value), or wrap around 2^32.
            _ if s == 1 => ((i % 5_000) * 37) as f64,
            _ if s == 4 => ((i * 1_000_003) % 4_294_967_296) as f64,
            0 => f64::NAN,
            1 => f64::NEG_INFINITY,
            2 => -0.0,
            3 => 0.0,
            r => ((i as f64) * 1e-3 * (s + 1) as f64).sin() * r as f64,
        };
        for chunk in 0..60 {
            if chunk == 55 {
                store.mark_gap(id);
            }
            let ts: Vec<i64> =
                (chunk * 2_000..(chunk + 1) * 2_000).map(|i| i * MS + (chunk >= 55) as i64 * 7 * MS).collect();
            let vals: Vec<f64> = ts.iter().flat_map(|&t| (0..n).map(move |s| value(t / MS, s))).collect();
            store.append(id, &ts, &vals).unwrap();
        }
        let st = &store.streams[id.0 as usize];
        assert!(st.first_block > 0, "the cap coarsened the oldest blocks");
        let head = st.blocks.front().unwrap().t_first();
        assert!(head < 100_000 * MS, "the gap is held raw: raw from {head}");
        let ids: Vec<_> = (0..n).map(|k| store.series_id(id, k).unwrap()).collect();
        // Raw around the gap; raw next to coarsened history (node and raw parts in one plan);
        // the whole history (nodes only, a uniform plan).
        for (t0, t1, cols) in
            [(105_000 * MS, 115_000 * MS, 700), (head - 9_000 * MS, head + 9_000 * MS, 500), (0, 120_100 * MS, 300)]
        {
            for frame in 0..2 {
                let mut outs = vec![Envelope::new(); n];
                store.envelopes(&ids, t0, t1, cols, &mut outs);
                for (k, out) in outs.iter().enumerate() {
                    let mut one = Envelope::new();
                    st.envelope(k, t0, t1, cols, &mut one, None);
                    assert!(one.columns().len() > cols / 3, "{t0}..{t1}: {} columns", one.columns().len());
                    let want: Vec<_> = one.columns().iter().map(EnvelopeColumn::bits).collect();
                    let got: Vec<_> = out.columns().iter().map(EnvelopeColumn::bits).collect();
                    assert!(got == want, "{t0}..{t1} frame {frame}: series {k} differs");
                    assert_eq!(out.samples_per_bucket(), one.samples_per_bucket());
                }
            }
        }
    }
}
