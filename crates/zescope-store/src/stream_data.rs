//! A stream's whole history as plain data (session save/load): taken out and restored.
//!
//! [`StreamData`] is the plain-data form of everything a stream holds: its
//! coarsened history as buckets (the finest level that still holds each
//! stretch, oldest first) and its full-resolution samples (timestamps, raw
//! values row-major, where the gaps are). `Store::restore_stream` rebuilds an
//! equivalent stream from it, pyramid included, validating everything first:
//! a corrupt or hostile file gives a [`StoreError::InvalidData`] naming the
//! problem, never a panic or an unbounded allocation beyond the data given.

use serde::{Deserialize, Serialize};

use super::agg::{Agg, canon, missing, to_option};
use super::column::BLOCK;
use super::pyramid::{MAX_LEVEL, NodeMeta, blocks_per_node};
use super::stream::StreamStore;
use super::{Store, StoreError, StreamDesc, StreamId};

/// A stream's full history as plain data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamData {
    /// What the stream is (device, group, series).
    pub desc: StreamDesc,
    /// The stream's run ended (no more samples will come).
    pub ended: bool,
    /// Samples evicted before the history below.
    pub evicted_samples: u64,
    /// Coarsened history, oldest first, contiguous, coarsest first.
    pub coarse: Vec<CoarseBucket>,
    /// Full-resolution history, after the coarse one.
    pub raw: RawData,
}

/// One bucket of coarsened history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoarseBucket {
    /// Pyramid level (1..=6): the bucket spans `256 * 16^(level-1)` samples.
    pub level: u8,
    /// Position of the bucket in its level.
    pub index: u64,
    /// Timestamp of the bucket's first sample (ns).
    pub t_first: i64,
    /// Timestamp of the bucket's last sample (ns).
    pub t_last: i64,
    /// Ordinal of the first sample (its position in the stream).
    pub first_ordinal: u64,
    /// Samples in the bucket.
    pub samples: u64,
    /// Gap between the previous sample and this bucket (0: none).
    pub gap_before: i64,
    /// Largest gap inside the bucket (0: none).
    pub max_gap: i64,
    /// Per series (of the rate, for a cumulative counter).
    pub series: Vec<BucketStats>,
}

/// A bucket's summary of one series.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketStats {
    /// Smallest finite value.
    pub min: f64,
    /// Largest finite value.
    pub max: f64,
    /// Sum of the finite values.
    pub sum: f64,
    /// Value of the last sample (`None`: it has no value).
    pub last: Option<f64>,
    /// Finite values summarised.
    pub count: u32,
    /// Values that were NaN or infinite (not in min/max/sum).
    pub non_finite: u32,
    /// Of a counter's rates: Σ rate × interval (s) over its finite rates with an interval (what
    /// the counter rose by, in its plotted unit × s); 0 for other series. NaN: not known (a
    /// file from before session format version 7), estimated on import.
    pub area: f64,
    /// Of a counter's rates: Σ interval (s) over the same rates, which a time-weighted mean
    /// divides `area` by; 0 for other series, NaN as for `area`.
    pub dur: f64,
}

/// Full-resolution samples.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RawData {
    /// Block number of the first sample (its position in the pyramid).
    pub first_block: u64,
    /// Ordinal of the first sample.
    pub first_ordinal: u64,
    /// Sample timestamps (ns), ascending.
    pub timestamps: Vec<i64>,
    /// Row-major: `timestamps.len() * series` values (raw totals for
    /// cumulative counters).
    pub values: Vec<f64>,
    /// Indices of samples that a gap separates from the previous sample.
    pub gaps: Vec<usize>,
    /// When `gaps` starts with 0: how long the gap before the first sample
    /// was (its predecessor may be gone). 0 otherwise.
    pub first_gap: i64,
    /// Per series, the rate of the first sample (cumulative counters whose
    /// first sample has one; `None` otherwise). Its predecessor may be gone.
    pub first_rates: Vec<Option<f64>>,
}

/// Block numbers and ordinals beyond this are rejected: a stream at 1 MHz
/// would take 2000 years to get there, and arithmetic on them stays far from
/// overflowing.
const LIMIT: u64 = 1 << 56;

fn bad(msg: String) -> StoreError {
    StoreError::InvalidData(msg)
}

impl StreamStore {
    pub(crate) fn to_data(&self) -> StreamData {
        self.to_data_between(0, u64::MAX)
    }

    /// The history with only the raw samples of ordinals `from..to` (see
    /// `Store::stream_data_between`): blocks outside that range are not decoded.
    pub(crate) fn to_data_between(&self, from: u64, to: u64) -> StreamData {
        let mut coarse = Vec::new();
        for l in (1..=self.pyramid.top()).rev() {
            let nodes = self.pyramid.exclusive_nodes(l, self.finer_start(l));
            let level = self.pyramid.level(l);
            for m in level.meta.start()..level.meta.start() + nodes {
                let meta = level.meta.at(m);
                coarse.push(CoarseBucket {
                    level: l as u8,
                    index: m,
                    t_first: meta.t_first,
                    t_last: meta.t_last,
                    first_ordinal: meta.first_ordinal,
                    samples: meta.samples,
                    gap_before: meta.gap_before,
                    max_gap: meta.max_gap,
                    series: level
                        .aggs
                        .iter()
                        .map(|a| {
                            let a = a.at(m);
                            BucketStats {
                                min: a.min,
                                max: a.max,
                                sum: a.sum,
                                last: to_option(a.last),
                                count: a.n,
                                non_finite: a.nf,
                                area: a.area,
                                dur: a.dur,
                            }
                        })
                        .collect(),
                });
            }
        }
        let raw = self.raw_between(from, to);
        StreamData { desc: self.desc.clone(), ended: self.ended, evicted_samples: self.evicted, coarse, raw }
    }

    /// The raw part of [`Self::to_data_between`]: the samples of ordinals `from..to`, with the
    /// gaps, first gap and first rates of the whole raw history.
    pub(crate) fn raw_between(&self, from: u64, to: u64) -> RawData {
        let n = self.n_series();
        let mut raw = RawData {
            first_block: self.first_block,
            first_ordinal: self.blocks.front().map_or(self.total, |b| b.first_ordinal),
            ..RawData::default()
        };
        let mut index = 0;
        for blk in &self.blocks {
            if blk.gap_before > 0 {
                if index == 0 {
                    raw.first_gap = blk.gap_before;
                }
                raw.gaps.push(index);
            }
            let skip = from.saturating_sub(blk.first_ordinal).min(blk.len as u64) as usize;
            let end = to.saturating_sub(blk.first_ordinal).min(blk.len as u64) as usize;
            index += blk.len;
            if skip >= end {
                continue;
            }
            let mut tbuf = [0i64; BLOCK];
            raw.timestamps.extend_from_slice(&blk.timestamps(&mut tbuf)[skip..end]);
            let at = raw.values.len();
            raw.values.resize(at + (end - skip) * n, 0.0);
            let mut cbuf = [0.0; BLOCK];
            for s in 0..n {
                let col = blk.col(s, &mut cbuf);
                for (k, &v) in col[skip..end].iter().enumerate() {
                    raw.values[at + k * n + s] = v;
                }
            }
        }
        if !self.blocks.is_empty() {
            raw.first_rates = (0..n)
                .map(|s| match self.wraps[s] {
                    Some(_) => to_option(self.head_rate[self.cum_slot[s]]),
                    None => None,
                })
                .collect();
        }
        raw
    }

    /// Build a stream from validated-on-the-way data.
    pub(crate) fn from_data(data: &StreamData) -> Result<StreamStore, StoreError> {
        let n = data.desc.series.len();
        let mut st = StreamStore::new(data.desc.clone());
        // Where the previous bucket ended: (block, ordinal, time).
        let mut end: Option<(u64, u64, i64)> = None;
        let mut prev_level = usize::MAX;
        let mut aggs = vec![Agg::EMPTY; n];
        for (k, b) in data.coarse.iter().enumerate() {
            let l = b.level as usize;
            if !(1..=MAX_LEVEL).contains(&l) {
                return Err(bad(format!("bucket {k}: level {l} is not in 1..={MAX_LEVEL}")));
            }
            if l > prev_level {
                return Err(bad(format!("bucket {k}: level {l} after finer level {prev_level}")));
            }
            prev_level = l;
            let span = blocks_per_node(l);
            let first_block = b
                .index
                .checked_mul(span)
                .filter(|f| f.checked_add(span).is_some_and(|e| e <= LIMIT))
                .ok_or_else(|| bad(format!("bucket {k}: index {} out of range", b.index)))?;
            if b.first_ordinal > LIMIT {
                return Err(bad(format!("bucket {k}: first ordinal {} out of range", b.first_ordinal)));
            }
            let max_samples = span * BLOCK as u64;
            if b.samples == 0 || b.samples > max_samples {
                return Err(bad(format!("bucket {k}: {} samples (1..={max_samples} at level {l})", b.samples)));
            }
            if b.t_first > b.t_last || b.gap_before < 0 || b.max_gap < 0 {
                return Err(bad(format!("bucket {k}: inconsistent times or gaps")));
            }
            if b.series.len() != n {
                return Err(bad(format!("bucket {k}: {} series, the stream has {n}", b.series.len())));
            }
            if let Some((eb, eo, et)) = end
                && (first_block != eb || b.first_ordinal != eo || b.t_first <= et)
            {
                return Err(bad(format!("bucket {k} does not follow bucket {}", k - 1)));
            }
            for (s, x) in b.series.iter().enumerate() {
                if x.count as u64 + x.non_finite as u64 > b.samples {
                    return Err(bad(format!("bucket {k}, series {s}: more values than samples")));
                }
                // A file from before version 7 keeps no rate's intervals in a bucket: its rates
                // count as their mean over the time the bucket covers (from the sample before
                // it where it follows on, its first rate being against that one; else from its
                // first), so a mean over several buckets weighs each by its time; within a
                // bucket the mean of its values stands for the time-weighted one.
                let (area, dur) = if !(x.area.is_nan() || x.dur.is_nan()) {
                    (x.area, x.dur)
                } else {
                    let start = match end {
                        Some((_, _, et)) if b.gap_before == 0 => et,
                        _ => b.t_first,
                    };
                    let dur = if st.wraps[s].is_some() && x.count > 0 && x.sum.is_finite() {
                        b.t_last.saturating_sub(start) as f64 * 1e-9
                    } else {
                        0.0
                    };
                    (if dur > 0.0 { x.sum / x.count as f64 * dur } else { 0.0 }, dur)
                };
                if !(dur.is_finite() && dur >= 0.0) {
                    return Err(bad(format!("bucket {k}, series {s}: a rate's intervals of {dur} s")));
                }
                aggs[s] = Agg {
                    min: x.min,
                    max: x.max,
                    sum: x.sum,
                    last: x.last.map_or_else(missing, canon),
                    n: x.count,
                    nf: x.non_finite,
                    area,
                    dur,
                };
            }
            let meta = NodeMeta {
                t_first: b.t_first,
                t_last: b.t_last,
                first_ordinal: b.first_ordinal,
                samples: b.samples,
                gap_before: b.gap_before,
                max_gap: b.max_gap,
            };
            st.pyramid.insert(l, b.index, meta, Some(&aggs));
            end = Some((first_block + span, b.first_ordinal + b.samples, b.t_last));
        }
        if let Some((eb, eo, et)) = end {
            (st.first_block, st.total, st.last_t) = (eb, eo, Some(et));
        }
        let raw = &data.raw;
        if data.evicted_samples > st.total.max(raw.first_ordinal) {
            return Err(bad("more evicted samples than samples before the history".into()));
        }
        st.restore_raw(raw, true)?;
        st.evicted = data.evicted_samples;
        if data.ended {
            st.ended = true;
            st.open = false;
        }
        Ok(st)
    }
}

impl StreamStore {
    /// Append restored full-resolution samples after what the stream holds, checking them
    /// first (nothing is stored when they are refused). `first`: the stream's first raw
    /// samples, right after its coarse history, whose `first_block`, `first_ordinal`,
    /// `first_gap` and `first_rates` apply; later pieces ignore those. `raw.gaps` index `raw`'s
    /// own samples.
    pub(crate) fn restore_raw(&mut self, raw: &RawData, first: bool) -> Result<(), StoreError> {
        let n = self.n_series();
        let k = raw.timestamps.len();
        if raw.values.len() != k.saturating_mul(n) {
            return Err(bad(format!("raw: {} values for {k} timestamps x {n} series", raw.values.len())));
        }
        if let Some(w) = raw.timestamps.windows(2).position(|w| w[1] <= w[0]) {
            return Err(bad(format!("raw: timestamp {} does not increase", w + 1)));
        }
        if raw.gaps.windows(2).any(|w| w[1] <= w[0]) || raw.gaps.last().is_some_and(|&g| g >= k) {
            return Err(bad("raw: gap indices must increase and be within the samples".into()));
        }
        if first && (raw.gaps.first() == Some(&0)) != (raw.first_gap > 0) {
            return Err(bad("raw: first_gap must be > 0 exactly when gaps starts with 0".into()));
        }
        if first && !(raw.first_rates.is_empty() || raw.first_rates.len() == n) {
            return Err(bad(format!("raw: {} first rates for {n} series", raw.first_rates.len())));
        }
        let Some(&t0) = raw.timestamps.first() else {
            return Ok(());
        };
        let (first_block, first_ordinal) = if first {
            if let Some(et) = self.last_t
                && (raw.first_block != self.first_block || raw.first_ordinal != self.total || t0 <= et)
            {
                return Err(bad("raw samples do not follow the coarse history".into()));
            }
            (raw.first_block, raw.first_ordinal)
        } else {
            if self.last_t.is_some_and(|lt| t0 <= lt) {
                return Err(bad("raw: the samples do not come after the ones before them".into()));
            }
            (self.next_block(), self.total)
        };
        let blocks = k.div_ceil(BLOCK) as u64 + raw.gaps.len() as u64;
        if first_block.checked_add(blocks).is_none_or(|e| e > LIMIT)
            || first_ordinal.checked_add(k as u64).is_none_or(|e| e > LIMIT)
        {
            return Err(bad("raw: block numbers or ordinals out of range".into()));
        }
        if first && raw.first_gap > 0 {
            match t0.checked_sub(raw.first_gap) {
                Some(t) if self.last_t.is_none_or(|et| et == t) => self.last_t = Some(t),
                _ => {
                    return Err(bad("raw: first_gap does not match the coarse history".into()));
                }
            }
        }
        if first {
            (self.first_block, self.total) = (first_block, first_ordinal);
            if raw.first_rates.iter().any(Option::is_some) {
                self.rate_override = Some(
                    (0..n)
                        .filter(|&s| self.wraps[s].is_some())
                        .map(|s| raw.first_rates[s].map_or_else(missing, canon))
                        .collect(),
                );
            }
        }
        let mut bounds: Vec<usize> = raw.gaps.clone();
        bounds.push(k);
        let mut from = 0;
        for &to in &bounds {
            if from > 0 || raw.gaps.first() == Some(&0) {
                self.gap_pending = self.last_t.is_some();
            }
            if to > from {
                self.ingest(&raw.timestamps[from..to], &raw.values[from * n..to * n]);
            }
            from = to;
        }
        self.rate_override = None;
        Ok(())
    }
}

impl Store {
    /// Everything a stream holds, as plain data (see [`StreamData`]).
    pub fn stream_data(&self, s: StreamId) -> Option<StreamData> {
        self.streams.get(s.0 as usize).map(StreamStore::to_data)
    }

    /// Like [`Self::stream_data`], but `raw.timestamps` and `raw.values`
    /// hold only the samples from ordinal `from` on (from the first held one
    /// if that is later); every other field, `raw.gaps` indices included,
    /// describes the whole history. For incremental checkpoints, which already
    /// have the older samples: the cost is that of the samples returned (and of
    /// the coarse history), the blocks before `from` are not decoded.
    pub fn stream_data_from(&self, s: StreamId, from: u64) -> Option<StreamData> {
        self.stream_data_between(s, from, u64::MAX)
    }

    /// Like [`Self::stream_data_from`], with only the raw samples of ordinals
    /// `from..to` (those of them held); `from == to` gives the history without
    /// a raw sample. Only the blocks holding those samples are decoded.
    pub fn stream_data_between(&self, s: StreamId, from: u64, to: u64) -> Option<StreamData> {
        self.streams.get(s.0 as usize).map(|st| st.to_data_between(from, to))
    }

    /// The raw part of [`Self::stream_data_between`] alone (no coarse history copied).
    pub fn raw_between(&self, s: StreamId, from: u64, to: u64) -> Option<RawData> {
        self.streams.get(s.0 as usize).map(|st| st.raw_between(from, to))
    }

    /// Add a stream rebuilt from its plain data, as a new stream of this store.
    /// If it does not fit under the cap, the cap policy coarsens/evicts
    /// (oldest history first, the restored stream included).
    pub fn restore_stream(&mut self, data: &StreamData) -> Result<StreamId, StoreError> {
        self.version += 1;
        self.history = super::grid::next_epoch();
        self.clear_decoded();
        let st = StreamStore::from_data(data)?;
        if self.origin.is_none() {
            self.origin = st.oldest_time();
        }
        let id = StreamId(self.streams.len() as u32);
        self.streams.push(st);
        self.stream_bytes.push(0);
        self.refresh(self.streams.len() - 1);
        let _ = self.make_room(0);
        Ok(id)
    }

    /// More full-resolution samples for stream `s`, restored from a session piece by piece:
    /// `restore_stream` took its head (coarse history, no raw samples, not ended), then the
    /// pieces come oldest first, the first with `first` set (see [`StreamData::raw`]; `gaps`
    /// index the piece's own samples). The result is the stream a one-shot restore of all of
    /// it gives (when it fits under the cap). Refused pieces store nothing.
    pub fn restore_more(&mut self, s: StreamId, raw: &RawData, first: bool) -> Result<(), StoreError> {
        self.version += 1;
        self.history = super::grid::next_epoch();
        self.clear_decoded();
        let i = self.idx(s)?;
        let need = self.streams[i].growth_bound(raw.timestamps.len());
        // Best effort, as for a whole restore: the cap policy makes room afterwards too.
        let _ = self.make_room(need);
        let result = self.streams[i].restore_raw(raw, first);
        if self.origin.is_none() {
            self.origin = self.streams[i].oldest_time();
        }
        self.refresh(i);
        let _ = self.make_room(0);
        result
    }

    /// Call `f(t, row)` for every full-resolution sample of a stream, oldest
    /// first; `row` holds one raw value per series (totals for cumulative
    /// counters).
    pub fn for_each_raw_row(&self, s: StreamId, mut f: impl FnMut(i64, &[f64])) {
        let Some(st) = self.streams.get(s.0 as usize) else {
            return;
        };
        let n = st.n_series();
        let mut rows = vec![0.0; n * BLOCK];
        let (mut tbuf, mut cbuf) = ([0i64; BLOCK], [0.0; BLOCK]);
        for blk in &st.blocks {
            for k in 0..n {
                for (j, &v) in blk.col(k, &mut cbuf).iter().enumerate() {
                    rows[j * n + k] = v;
                }
            }
            for (j, &t) in blk.timestamps(&mut tbuf).iter().enumerate() {
                f(t, &rows[j * n..(j + 1) * n]);
            }
        }
    }
}

/// A stream's full-resolution rows read one block (256 samples) at a time, oldest first
/// ([`Store::raw_rows`]): what a writer merging several streams in time order pulls from, holding
/// one decoded block per stream, not the stream.
pub struct RawRows<'a> {
    blocks: std::collections::vec_deque::Iter<'a, super::column::Block>,
    n: usize,
    rows: Vec<f64>,
    ts: [i64; BLOCK],
    cbuf: [f64; BLOCK],
    len: usize,
    at: usize,
}

impl RawRows<'_> {
    /// Decodes the next block when the current one is used up; false at the end.
    fn fill(&mut self) -> bool {
        while self.at >= self.len {
            let Some(blk) = self.blocks.next() else { return false };
            for k in 0..self.n {
                for (j, &v) in blk.col(k, &mut self.cbuf).iter().enumerate() {
                    self.rows[j * self.n + k] = v;
                }
            }
            let mut ts = [0i64; BLOCK];
            let got = blk.timestamps(&mut ts);
            self.len = got.len();
            self.ts[..self.len].copy_from_slice(got);
            self.at = 0;
        }
        true
    }

    /// The next row's time, without taking it.
    pub fn peek_time(&mut self) -> Option<i64> {
        self.fill().then(|| self.ts[self.at])
    }

    /// The next row: its time and its values (one per series of the stream).
    pub fn next_row(&mut self) -> Option<(i64, &[f64])> {
        if !self.fill() {
            return None;
        }
        let j = self.at;
        self.at += 1;
        Some((self.ts[j], &self.rows[j * self.n..(j + 1) * self.n]))
    }
}

impl Store {
    /// The full-resolution rows of stream `s` (none for an unknown stream), a block at a time.
    pub fn raw_rows(&self, s: StreamId) -> RawRows<'_> {
        let st = self.streams.get(s.0 as usize);
        let n = st.map_or(0, |st| st.n_series());
        RawRows {
            blocks: st.map_or_else(|| EMPTY_BLOCKS.iter(), |st| st.blocks.iter()),
            n,
            rows: vec![0.0; n * BLOCK],
            ts: [0; BLOCK],
            cbuf: [0.0; BLOCK],
            len: 0,
            at: 0,
        }
    }
}

/// No blocks, for an unknown stream's rows.
static EMPTY_BLOCKS: std::collections::VecDeque<super::column::Block> = std::collections::VecDeque::new();
