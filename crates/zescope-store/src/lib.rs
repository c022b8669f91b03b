//! Time-series store: long histories of many counters that plot in constant
//! time, under an explicit memory cap.
//!
//! # Shape
//!
//! A *stream* is one run of the sampler: one timeline of strictly increasing
//! `i64` nanosecond timestamps shared by `n` *series* (one per counter), stored
//! in blocks of 256 samples (`column.rs`). Full blocks are *sealed*: their
//! timestamps and each series' column are compressed (`pack.rs`: frame of
//! reference, delta, XOR or runs, whichever is smallest for that column). Over the
//! blocks sits a min/max *pyramid* (`pyramid.rs`), uncompressed: per series, a
//! bucket summary (min, max, sum, last, finite and non-finite counts) per 256
//! samples, per 4096, per 65536, ... (fan-out 16, 6 levels). Cumulative
//! counters are plotted as rates, derived at ingest ([`rate`]). Queries:
//! envelopes for plotting (`plan.rs` lays out the columns once per stream,
//! `envelope.rs` fills them per series), exact samples and range statistics
//! (`query.rs`), totals of cumulative counters (`increase.rs`). The cap and what gives way under it: `cap.rs`. Save/load:
//! `stream_data.rs`. Each file's docs say why it is built the way it is.
//!
//! # Cache of decoded blocks
//!
//! A live view reads the same sealed blocks raw, frame after frame; `decoded.rs` keeps what
//! they decode to. Key: (stream, series, block number), checked against the block's first
//! ordinal, length and first timestamp; sealed blocks only (they never change until coarsened
//! away); a cumulative counter's first rate is worked out again on every hit, so answers are
//! exactly the uncached ones. Budget: 64 MiB, at most `cap / 32`. Counted in
//! [`Store::memory_used`] (values, slot table and index); once queried, its share is kept free
//! under the cap by coarsening full-resolution history, and it is dropped before any history
//! is evicted (`cap.rs`). Entries used in the current or previous epoch (a change of the data,
//! or four times its slots in lookups) are not replaced, so a view larger than the budget keeps
//! a stable part cached. The cache sits behind a mutex taken once per query; a query
//! that finds it busy decodes without it. Raw-level envelopes of four series of one stream
//! are scanned in step (`lanes.rs`), the same columns bit for bit.
//!
//! # Memory arithmetic (full resolution, per stored value)
//!
//! With `n` series per stream and blocks of `B = 256` samples, what a sealed
//! value costs depends on the data; the rest is fixed:
//!
//! | what                                | bytes per value            | n = 16   |
//! |-------------------------------------|----------------------------|----------|
//! | the value, packed                   | its column's width / 8     | 0 – 8    |
//! | timestamps (delta, jitter's width)  | width / 8 / n              | ~0.13 at 20 µs jitter |
//! | column headers and offsets (~10 B)  | 10 / B (+ ts header / n)   | ~0.04    |
//! | pyramid aggs (40 B per node)        | 40 / B · 16/15             | 0.167    |
//! | pyramid metas (48 B, shared)        | 48 / B · 16/15 / n         | 0.0125   |
//! | block struct (~80 B, shared)        | 80 / B / n (·2 slack)      | 0.02–0.04 |
//!
//! A column's width is that of its range (frame of reference) or of the range
//! of its steps (delta): a steady or stepping reading packs to almost nothing,
//! a cumulative total to the bits of its largest step in the block, an integer
//! reading to the bits of its spread, a noisy float to its mantissa's noisy
//! bits (about 52: 6.6 B). Random data cannot go below its entropy; the
//! benchmark data (`benches/shapes`) carries about 2.6 B per value, and
//! `cargo bench --bench store` prints what the store measures for it (see
//! docs/benchmarks.md). The newest block of each stream stays open (plain
//! `f64`s) until it is full. Slower sampling than ~60 Hz stores the open
//! block's timestamps as `i64` (+0.25 B at 16 series while open).
//!
//! # Cost of a query
//!
//! "The envelope of series S over time range R at N pixel columns" walks the
//! pyramid level whose bucket holds at most one column's worth of samples, so
//! it reads fewer than 16·N buckets plus O(16 · levels) to find the start:
//! the same at 1M and at 10M samples. Spikes survive at every zoom level
//! because every bucket keeps its exact min and max. [`Store::envelopes`]
//! shares the column plan between the series of a stream.
//!
//! # Time
//!
//! Time is `i64` nanoseconds on one monotonic timeline. The store's *origin*
//! is the first timestamp ever appended (or set explicitly); plots use `f64`
//! seconds since the origin, mapped by the model's `TimeAxis` (`zescope_model::view::TimeAxis`),
//! the one time ↔ plot mapping.

#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![forbid(unsafe_code)]

mod agg;
mod band;
pub mod bits;
mod cap;
mod chunked;
mod column;
mod decoded;
#[cfg(test)]
mod decoded_tests;
mod desc;
mod envelope;
mod error;
mod grid;
mod increase;
mod lanes;
mod limits;
mod locate;
pub mod pack;
pub mod par;
mod piece;
mod plan;
mod pyramid;
mod query;
pub mod rate;
mod stream;
mod stream_data;
mod timeline;
pub mod xor;

pub use cap::default_cap;
pub use cap::{ResolutionSpan, Retention};
pub use desc::{SeriesDesc, SeriesId, SeriesKind, StreamDesc, StreamId, StreamSummary};
pub use envelope::{Envelope, EnvelopeColumn};
pub use error::StoreError;
pub use grid::GridSpan;
pub use increase::Increase;
pub use piece::RawPiece;
pub use query::{Bucket, RangeStats, Sample};
pub use stream_data::{BucketStats, CoarseBucket, RawData, RawRows, StreamData};

use stream::StreamStore;

/// The time-series store. See the module docs.
pub struct Store {
    streams: Vec<StreamStore>,
    /// Cached `heap_bytes()` per stream.
    stream_bytes: Vec<usize>,
    origin: Option<i64>,
    cap: usize,
    /// Bumped by every change to the data, so caches of query results know when to refresh.
    version: u64,
    /// Changes when stored data does, not on appends (`grid.rs`).
    history: u64,
    /// Recent column plans: plot panes showing one stream over one range at one width share
    /// a layout, so it is worked out once per frame, not once per pane.
    plans: std::sync::Mutex<Vec<(PlanKey, plan::QueryPlan)>>,
    /// Decoded sealed blocks reused from query to query (`decoded.rs`).
    decoded: std::sync::Mutex<decoded::DecodedCache>,
    /// `decoded`'s bytes as of the end of the last query or change, for `memory_used`.
    decoded_bytes: std::sync::atomic::AtomicUsize,
}

// The window's thread owns the store; loading builds one on another thread and hands it over.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Store>();
};

/// (stream, t0, t1, columns, store version) of a cached plan.
type PlanKey = (u32, i64, i64, usize, u64);

/// Plans kept in the cache.
const PLAN_CACHE: usize = 8;

/// Samples appended per reservation against the cap.
const SLICE: usize = 4096;

impl Store {
    /// A store that never holds more than `cap_bytes`.
    pub fn new(cap_bytes: usize) -> Store {
        Store {
            streams: Vec::new(),
            stream_bytes: Vec::new(),
            origin: None,
            cap: cap_bytes,
            version: 0,
            history: grid::next_epoch(),
            plans: std::sync::Mutex::new(Vec::new()),
            decoded: std::sync::Mutex::new(decoded::DecodedCache::default()),
            decoded_bytes: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// A store with [`default_cap`].
    pub fn with_default_cap() -> Store {
        Store::new(default_cap())
    }

    /// Changes whenever the data does (appends, gaps, ends, coarsening, imports): equal versions
    /// mean equal answers to every query.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// First timestamp ever appended (ns), unless a loaded session set it; `None` while empty.
    pub fn origin_ns(&self) -> Option<i64> {
        self.origin
    }

    /// Sets the origin (ns) that plot x values are relative to.
    pub fn set_origin(&mut self, ns: i64) {
        self.version += 1;
        self.origin = Some(ns);
    }

    /// Start a stream (one sampler run).
    pub fn begin_stream(&mut self, desc: StreamDesc) -> StreamId {
        self.version += 1;
        let id = StreamId(self.streams.len() as u32);
        self.streams.push(StreamStore::new(desc));
        self.stream_bytes.push(0);
        self.refresh(self.streams.len() - 1);
        // Best effort: a descriptor alone is tiny, but keep the invariant.
        let _ = self.make_room(0);
        id
    }

    fn idx(&self, s: StreamId) -> Result<usize, StoreError> {
        let i = s.0 as usize;
        if i < self.streams.len() { Ok(i) } else { Err(StoreError::UnknownStream(s)) }
    }

    fn series_idx(&self, s: SeriesId) -> Option<(usize, usize)> {
        let i = s.stream.0 as usize;
        let st = self.streams.get(i)?;
        (s.index() < st.n_series()).then_some((i, s.index()))
    }

    pub(crate) fn refresh(&mut self, i: usize) {
        self.stream_bytes[i] = self.streams[i].heap_bytes();
    }

    /// Append a row-major batch: `timestamps.len()` samples,
    /// `values.len() == timestamps.len() * n_series`. The batch is checked
    /// whole before anything is stored.
    pub fn append(&mut self, s: StreamId, timestamps: &[i64], values: &[f64]) -> Result<(), StoreError> {
        self.version += 1;
        let i = self.idx(s)?;
        let st = &self.streams[i];
        if st.ended {
            return Err(StoreError::StreamEnded(s));
        }
        let n = st.n_series();
        let expected = timestamps.len().checked_mul(n);
        if expected != Some(values.len()) {
            return Err(StoreError::BatchShape {
                timestamps: timestamps.len(),
                values: values.len(),
                series: n,
                expected: expected.unwrap_or(usize::MAX),
            });
        }
        let mut prev = st.last_t;
        for (index, &t) in timestamps.iter().enumerate() {
            if let Some(p) = prev
                && t <= p
            {
                return Err(StoreError::NonMonotonic { index, prev: p, t });
            }
            prev = Some(t);
        }
        let Some(&first) = timestamps.first() else {
            return Ok(());
        };
        self.origin.get_or_insert(first);
        let mut stored = 0;
        while stored < timestamps.len() {
            let k = (timestamps.len() - stored).min(SLICE);
            let need = self.streams[i].growth_bound(k);
            if self.make_room(need).is_err() {
                return Err(StoreError::CapTooSmall { cap: self.cap, used: self.memory_used(), needed: need, stored });
            }
            self.streams[i].ingest(&timestamps[stored..stored + k], &values[stored * n..(stored + k) * n]);
            self.refresh(i);
            stored += k;
        }
        Ok(())
    }

    /// The next sample of `s` does not connect to the previous one (pause).
    pub fn mark_gap(&mut self, s: StreamId) {
        self.version += 1;
        if let Ok(i) = self.idx(s) {
            self.streams[i].mark_gap();
        }
    }

    /// The run is over; the stream takes no more samples.
    pub fn end_stream(&mut self, s: StreamId) {
        self.version += 1;
        if let Ok(i) = self.idx(s) {
            self.streams[i].end();
            self.refresh(i);
        }
    }

    fn info(&self, i: usize) -> StreamSummary<'_> {
        let st = &self.streams[i];
        StreamSummary {
            id: StreamId(i as u32),
            desc: &st.desc,
            ended: st.ended,
            appended: st.total,
            time_range: st.oldest_time().zip(st.newest_time()),
        }
    }

    /// All streams, oldest first.
    pub fn streams(&self) -> impl Iterator<Item = StreamSummary<'_>> {
        (0..self.streams.len()).map(|i| self.info(i))
    }

    /// Summary of stream `s`; `None` for a stream of another store.
    pub fn stream(&self, s: StreamId) -> Option<StreamSummary<'_>> {
        self.idx(s).ok().map(|i| self.info(i))
    }

    /// The series of a stream with their ids (empty for an unknown stream).
    pub fn series(&self, s: StreamId) -> impl Iterator<Item = (SeriesId, &SeriesDesc)> {
        let descs = self.streams.get(s.0 as usize).map_or(&[][..], |st| &st.desc.series[..]);
        descs.iter().enumerate().map(move |(k, d)| (SeriesId { stream: s, index: k as u32 }, d))
    }

    /// Id of series number `index` of stream `s`.
    pub fn series_id(&self, s: StreamId, index: usize) -> Option<SeriesId> {
        let st = self.streams.get(s.0 as usize)?;
        (index < st.n_series()).then_some(SeriesId { stream: s, index: index as u32 })
    }

    /// The description of series `s`; `None` for a series of another store.
    pub fn series_desc(&self, s: SeriesId) -> Option<&SeriesDesc> {
        let (i, k) = self.series_idx(s)?;
        Some(&self.streams[i].desc.series[k])
    }

    /// Busy shares (series of busy time) clamped to 0–100 % as samples were filed, over every
    /// stream: each is a sample whose time did not match its counter's (`rate`'s module docs).
    pub fn busy_clamps(&self) -> u64 {
        self.streams.iter().map(|st| st.busy_clamps).sum()
    }

    /// Samples ever appended to a stream.
    pub fn sample_count(&self, s: StreamId) -> u64 {
        self.streams.get(s.0 as usize).map_or(0, |st| st.total)
    }

    /// Oldest and newest time a stream holds.
    pub fn time_range(&self, s: StreamId) -> Option<(i64, i64)> {
        let st = self.streams.get(s.0 as usize)?;
        st.oldest_time().zip(st.newest_time())
    }

    /// Oldest and newest time any stream holds.
    pub fn total_time_range(&self) -> Option<(i64, i64)> {
        let ranges = self.streams.iter().filter_map(|st| st.oldest_time().zip(st.newest_time()));
        ranges.reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
    }

    /// The envelope of a series over `t0..=t1` at `columns` pixel columns (see
    /// [`EnvelopeColumn`] for what each column promises). For a cumulative
    /// counter: of its rate. An unknown series or empty range gives no columns.
    pub fn envelope(&self, series: SeriesId, t0: i64, t1: i64, columns: usize, out: &mut Envelope) {
        match self.series_idx(series) {
            Some((i, k)) => {
                let mut cache = self.decoded_cache();
                let use_ = cache.as_deref_mut().map(|c| self.cache_use(c, i));
                self.streams[i].envelope(k, t0, t1, columns, out, use_);
                self.decoded_done(cache);
            }
            None => out.reset(t0, t1, columns),
        }
    }

    /// Envelopes of several series over the same range and columns, in one
    /// pass per stream: consecutive series of the same stream share the
    /// column plan, so 16 counters cost little more than one.
    /// `outs[k]` receives `series[k]` (extra series or outputs are ignored).
    pub fn envelopes(&self, series: &[SeriesId], t0: i64, t1: i64, columns: usize, outs: &mut [Envelope]) {
        self.envelopes_for(series, t0, t1, columns, outs, false);
    }

    /// [`Self::envelopes`] for drawing: columns made of pyramid nodes take their min and
    /// max from the compact drawing bands, which enclose the exact ones and cost a fifth of
    /// the memory traffic, and leave the mean and non-finite count out (see
    /// [`Envelope::is_exact`]). Statistics and readouts use the exact queries.
    pub fn draw_envelopes(&self, series: &[SeriesId], t0: i64, t1: i64, columns: usize, outs: &mut [Envelope]) {
        self.envelopes_for(series, t0, t1, columns, outs, true);
    }

    fn envelopes_for(&self, series: &[SeriesId], t0: i64, t1: i64, columns: usize, outs: &mut [Envelope], draw: bool) {
        let n = series.len().min(outs.len());
        let mut i = 0;
        while i < n {
            let stream = series[i].stream;
            let j = i + series[i..n].iter().take_while(|s| s.stream == stream).count();
            let Some(st) = self.streams.get(stream.0 as usize) else {
                outs[i..j].iter_mut().for_each(|o| o.reset(t0, t1, columns));
                i = j;
                continue;
            };
            let mut plan = std::mem::take(&mut outs[i].plan);
            let key = (stream.0, t0, t1, columns, self.version);
            let mut cache = self.plans.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, cached)) = cache.iter().find(|(k, _)| *k == key) {
                plan.clone_from(cached);
            } else {
                st.plan(t0, t1, columns, &mut plan);
                if cache.len() >= PLAN_CACHE {
                    cache.remove(0);
                }
                cache.push((key, plan.clone()));
            }
            drop(cache);
            self.apply_plan(stream.0 as usize, &plan, &series[i..j], &mut outs[i..j], draw, (t0, t1, columns));
            outs[i].plan = plan;
            i = j;
        }
    }

    /// The stored sample nearest to `t` (exact time and value; for a
    /// cumulative counter its rate). `None` when `t` lies in coarsened history
    /// (use [`Self::bucket_at`]) or nothing is held.
    pub fn nearest(&self, series: SeriesId, t: i64) -> Option<Sample> {
        let (i, k) = self.series_idx(series)?;
        self.streams[i].nearest(k, t, false)
    }

    /// Like [`Self::nearest`], with a cumulative counter's raw total.
    pub fn nearest_raw(&self, series: SeriesId, t: i64) -> Option<Sample> {
        let (i, k) = self.series_idx(series)?;
        self.streams[i].nearest(k, t, true)
    }

    /// The finest bucket held at `t` (the last one starting at or before `t`,
    /// else the first): a single exact sample at full resolution, a coarse
    /// bucket in coarsened history.
    pub fn bucket_at(&self, series: SeriesId, t: i64) -> Option<Bucket> {
        let (i, k) = self.series_idx(series)?;
        self.streams[i].bucket_at(k, t)
    }

    /// Min, max, mean, last, counts over the samples in `t0..=t1`, from the
    /// pyramid's sums (only the partial blocks at the two ends are scanned).
    pub fn stats(&self, series: SeriesId, t0: i64, t1: i64) -> RangeStats {
        match self.series_idx(series) {
            Some((i, k)) => self.streams[i].stats(k, t0, t1),
            None => RangeStats::EMPTY,
        }
    }

    /// The cache of decoded blocks for one query, unless another thread is using it (the query
    /// then decodes without it).
    fn decoded_cache(&self) -> Option<std::sync::MutexGuard<'_, decoded::DecodedCache>> {
        let mut cache = self.decoded.try_lock().ok()?;
        cache.begin(self.version);
        Some(cache)
    }

    /// What a query on stream `i` may do with the cache.
    fn cache_use<'a>(&self, cache: &'a mut decoded::DecodedCache, i: usize) -> decoded::CacheUse<'a> {
        let room = decoded::share(self.cap).min(self.cap.saturating_sub(self.data_used()));
        decoded::CacheUse { cache, stream: i as u32, room }
    }

    /// A query is done with the cache: its bytes as they are now.
    fn decoded_done(&self, cache: Option<std::sync::MutexGuard<'_, decoded::DecodedCache>>) {
        if let Some(c) = cache {
            self.decoded_bytes.store(c.bytes(), std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The cache of decoded blocks, from a method that changes the store.
    fn decoded_mut(&mut self) -> &mut decoded::DecodedCache {
        self.decoded.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    /// Drops the entries of the cache of decoded blocks.
    pub(crate) fn clear_decoded(&mut self) {
        self.decoded_mut().clear();
        *self.decoded_bytes.get_mut() = 0;
    }

    /// Envelope lookups of a series' block that the cache of decoded blocks answered, since
    /// the store was made: benchmarks print it to show which frames the cache served.
    pub fn decoded_cache_hits(&self) -> u64 {
        self.decoded.lock().map_or(0, |c| c.hits())
    }

    /// Bytes held, by the store's own accounting. Never above the cap.
    pub fn memory_used(&self) -> usize {
        self.data_used() + self.decoded_bytes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// [`Self::memory_used`] but for the cache of decoded blocks.
    fn data_used(&self) -> usize {
        size_of::<Store>()
            + self.streams.capacity() * size_of::<StreamStore>()
            + self.stream_bytes.capacity() * size_of::<usize>()
            + self.stream_bytes.iter().sum::<usize>()
    }

    /// The memory cap in bytes (as given to `new` or `set_memory_cap`).
    pub fn memory_cap(&self) -> usize {
        self.cap
    }

    /// Change the cap; a lower cap coarsens/evicts at once.
    pub fn set_memory_cap(&mut self, bytes: usize) {
        self.version += 1;
        self.cap = bytes;
        let _ = self.make_room(0);
    }

    /// What the cap did to each stream's history (see [`Retention`]).
    pub fn coarsening(&self) -> Vec<(StreamId, Retention)> {
        (0..self.streams.len()).map(|i| (StreamId(i as u32), self.streams[i].retention())).collect()
    }

    /// What the cap did to stream `s`'s history; `None` for a stream of another store.
    pub fn retention(&self, s: StreamId) -> Option<Retention> {
        self.streams.get(s.0 as usize).map(StreamStore::retention)
    }
}
