//! A derived series computed over recorded data (an opened session): [`Backfill`] binds a
//! derivation to every run of what is shown, as a run in progress would be bound, opens its
//! derived streams in the store, and then computes them once, a slice at a time
//! ([`Backfill::step`], given a time budget, so a window stays live and shows the progress), by
//! the same incremental evaluation as a live run ([`super::Deriver`]): never recomputed per
//! frame.
//!
//! Contract: the rows of the streams a derivation reads are taken from the store a piece at a
//! time (`Store::raw_piece`: at most [`PIECE_ROWS`] rows per stream held, whatever the length of
//! the recording) and fed to the deriver in time order across streams (at equal times, a stream
//! that does not drive the series first, so its sample counts "at or before" the tick), with the
//! gaps the store holds; the derived values go into the store as any series, under its memory
//! cap. The values are those a live run deriving it from its start would have given. A run that
//! lacks a series the derivation names is left without it (said by [`Backfill::skipped`]); none
//! having them all is an error naming what each name could mean.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use zescope_sampler::{DevicePath, RunConfig, RunInfo, StreamInfo};
use zescope_store::{RawPiece, Store, StoreError, StreamId};

use super::{Derivation, Deriver, GROUP};
use crate::session::RunHistory;
use crate::view::series::stream_desc;
use crate::view::{Ingest, SeriesKey};

/// The most rows of one stream held at once.
pub const PIECE_ROWS: usize = 4096;

/// A derived series being computed over recorded data (see the module docs).
#[derive(Debug)]
pub struct Backfill {
    name: String,
    jobs: VecDeque<RunJob>,
    done: u64,
    total: u64,
    skipped: Vec<String>,
}

/// One run's share: its deriver, the streams it reads, the derived streams it fills.
#[derive(Debug)]
pub(super) struct RunJob {
    pub(super) run: u64,
    pub(super) deriver: Deriver,
    /// Per stream of the run as recorded (by index): where it is read from, if it is read.
    inputs: Vec<Option<Input>>,
    /// Does the stream drive a derived series (by index)?
    drives: Vec<bool>,
    /// The store stream of each derived stream, from run stream index `first_out` on.
    outs: Vec<StreamId>,
    first_out: usize,
}

#[derive(Debug)]
struct Input {
    id: StreamId,
    piece: RawPiece,
    /// Rows of `piece` fed already.
    at: usize,
    /// Where the next piece starts.
    next: u64,
}

impl Input {
    fn new(id: StreamId) -> Input {
        Input { id, piece: RawPiece::default(), at: 0, next: 0 }
    }

    /// The time of the next row to feed, reading a piece when the last is used up; `None` when
    /// the store holds no more (a run in progress may append more: asked again, it reads them).
    fn head(&mut self, store: &Store) -> Option<i64> {
        if self.at == self.piece.timestamps.len() {
            self.at = 0;
            if !store.raw_piece(self.id, self.next, PIECE_ROWS, &mut self.piece) {
                return None;
            }
            self.next = self.piece.next;
        }
        self.piece.timestamps.get(self.at).copied()
    }
}

impl Backfill {
    /// Binds `def` to every run of what is shown (`history`'s streams in `store`), opens its
    /// derived streams in `store` and files their series in `ingest` and `history` (so a session
    /// saved keeps them); returns the computation to step and the series' keys. Errs, changing
    /// nothing, when no run has every series it names (naming what they could mean), or the
    /// series is there already.
    pub fn start(
        def: &Derivation,
        history: &mut RunHistory,
        store: &mut Store,
        ingest: &mut Ingest,
    ) -> Result<(Backfill, Vec<SeriesKey>), String> {
        if ingest.series.keys().any(|k| k.group == GROUP && k.metric == def.name) {
            return Err(format!("Derived/{} is shown already: name it otherwise", def.name));
        }
        let mut runs: Vec<(u64, Vec<StreamId>)> = Vec::new();
        for (&id, m) in &history.streams {
            match runs.iter_mut().find(|(r, _)| *r == m.run) {
                Some((_, ids)) => ids.push(id),
                None => runs.push((m.run, vec![id])),
            }
        }
        let mut bound = Vec::new();
        let mut problems = Vec::new();
        for (run, ids) in runs {
            let mut info = run_info(run, &ids, history);
            let mut deriver = Deriver::new(vec![def.clone()]);
            match deriver.run_started(&mut info) {
                Ok(()) => bound.push((info, ids, deriver)),
                Err(e) => problems.push(format!("run {run}: {e}")),
            }
        }
        if bound.is_empty() {
            return Err(match problems.len() {
                0 => "nothing is shown to derive it from".to_owned(),
                _ => problems.join("; "),
            });
        }
        let mut out = Backfill { name: def.name.clone(), jobs: VecDeque::new(), done: 0, total: 0, skipped: problems };
        let mut keys = Vec::new();
        for (info, ids, deriver) in bound {
            let first_out = ids.len();
            let mut outs = Vec::new();
            for s in &info.streams[first_out..] {
                let id = store.begin_stream(stream_desc(&info, s));
                keys.extend(ingest.file_stream(store, id, s));
                history.stream_added(info.run, s, id);
                outs.push(id);
            }
            let (job, rows) = RunJob::new(&info, &ids, deriver, outs, store);
            out.total += rows;
            out.jobs.push_back(job);
        }
        Ok((out, keys))
    }

    /// The derived series' name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The share computed, 0 to 1.
    pub fn progress(&self) -> f64 {
        if self.total == 0 { 1.0 } else { (self.done as f64 / self.total as f64).min(1.0) }
    }

    /// The runs left without the series, and why.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// Is it computed (every derived stream ended)?
    pub fn is_done(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Computes for about `budget` (at least one batch); whether it is done.
    pub fn step(&mut self, store: &mut Store, budget: Duration) -> Result<bool, StoreError> {
        let start = Instant::now();
        while let Some(job) = self.jobs.front_mut() {
            match job.feed_one(store)? {
                Some(rows) => self.done += rows as u64,
                None => {
                    job.outs.iter().for_each(|&id| store.end_stream(id));
                    self.jobs.pop_front();
                }
            }
            if start.elapsed() >= budget {
                break;
            }
        }
        Ok(self.jobs.is_empty())
    }

    /// Computes it all (for `zescope export`-like callers and benchmarks).
    pub fn run_to_end(&mut self, store: &mut Store) -> Result<(), StoreError> {
        while !self.step(store, Duration::from_secs(3600))? {}
        Ok(())
    }
}

/// Is derived stream `s` of `info` driven by stream `k` ("derived from GROUP", on its device)?
fn driven_by(s: &StreamInfo, info: &RunInfo, k: usize) -> bool {
    let d = &info.streams[k];
    s.device == d.device && s.layout.strip_prefix(super::LAYOUT_PREFIX) == Some(d.group.as_str())
}

impl RunJob {
    /// The job of `deriver`, bound to run `info` (as recorded: its streams `ids` in `store`, then
    /// the derived ones, filed as `outs`); with the rows it reads now.
    pub(super) fn new(
        info: &RunInfo,
        ids: &[StreamId],
        deriver: Deriver,
        outs: Vec<StreamId>,
        store: &Store,
    ) -> (RunJob, u64) {
        let first_out = ids.len();
        let mut rows = 0;
        let mut inputs: Vec<Option<Input>> = (0..first_out).map(|_| None).collect();
        for k in deriver.streams_read().into_iter().filter(|&k| k < first_out) {
            rows += store.sample_count(ids[k]);
            inputs[k] = Some(Input::new(ids[k]));
        }
        let drives = (0..first_out).map(|k| info.streams[first_out..].iter().any(|s| driven_by(s, info, k))).collect();
        (RunJob { run: info.run, deriver, inputs, drives, outs, first_out }, rows)
    }

    /// Rows the store holds that are not fed yet.
    pub(super) fn rows_left(&self, store: &Store) -> u64 {
        let left =
            |i: &Input| store.sample_count(i.id).saturating_sub(i.next) + (i.piece.timestamps.len() - i.at) as u64;
        self.inputs.iter().flatten().map(left).sum()
    }

    /// Feeds the next rows in time order (one stream's, up to the next row of another); the
    /// rows fed, `None` at the end.
    pub(super) fn feed_one(&mut self, store: &mut Store) -> Result<Option<usize>, StoreError> {
        // (time, drives) of each stream's next row: at equal times, one that only feeds first.
        let mut heads: Vec<(i64, bool, usize)> = Vec::new();
        for (k, input) in self.inputs.iter_mut().enumerate() {
            if let Some(t) = input.as_mut().and_then(|i| i.head(store)) {
                heads.push((t, self.drives[k], k));
            }
        }
        heads.sort_unstable();
        let Some(&(_, drives, k)) = heads.first() else { return Ok(None) };
        let bound = heads.get(1).map(|&(t, d, _)| (t, d));
        let Some(input) = self.inputs[k].as_mut() else { return Ok(None) };
        let p = &input.piece;
        let width = if p.timestamps.is_empty() { 0 } else { p.values.len() / p.timestamps.len() };
        let from = input.at;
        let mut to = from + 1;
        while to < p.timestamps.len() && bound.is_none_or(|b| (p.timestamps[to], drives) < b) {
            to += 1;
        }
        let gap_before = from == 0 && p.gap_before;
        let out =
            self.deriver.rows(self.run, k, &p.timestamps[from..to], &p.values[from * width..to * width], gap_before);
        input.at = to;
        for b in out {
            let Some(&id) = b.stream.checked_sub(self.first_out).and_then(|i| self.outs.get(i)) else { continue };
            if b.gap_before {
                store.mark_gap(id);
            }
            store.append(id, &b.timestamps, &b.values)?;
        }
        Ok(Some(to - from))
    }
}

/// The run `run` as recorded (its streams `ids`, as `history` describes them), for binding.
fn run_info(run: u64, ids: &[StreamId], history: &RunHistory) -> RunInfo {
    let streams = ids
        .iter()
        .enumerate()
        .filter_map(|(index, id)| {
            let m = history.streams.get(id)?;
            let series = m
                .series
                .iter()
                .map(|x| {
                    let (kind, wrap) = x.kind.kind();
                    zescope_sampler::SeriesInfo {
                        name: x.metric.clone(),
                        description: x.description.clone(),
                        unit: x.unit.clone(),
                        kind,
                        wrap,
                    }
                })
                .collect();
            Some(StreamInfo {
                index,
                target: 0,
                device: m.device.clone(),
                group: m.group.clone(),
                layout: m.layout.clone(),
                series,
                read_path: m.read_path(),
            })
        })
        .collect();
    RunInfo {
        run,
        config: RunConfig::single(DevicePath::default(), Vec::new(), Duration::from_millis(1)),
        devices: Vec::new(),
        simulated: false,
        streams,
        imports: 0,
        notices: Vec::new(),
    }
}

#[cfg(test)]
#[path = "backfill_tests.rs"]
pub(super) mod tests;
