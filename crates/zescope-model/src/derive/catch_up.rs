//! A derived series added to the run in progress, from the run's start: [`CatchUp`] binds it to
//! the run's deriver held back (paused), computes it over what the run recorded before it was
//! added, a slice at a time, as [`super::Backfill`] computes one over a recording, and, once it
//! has caught up with what the store holds, hands its state (running sums, windows, the values
//! held for its ticks) to the run's deriver, which derives it from every batch after.
//!
//! Contract: the values are those the run would have given deriving it from its start, across
//! the hand-over too (`integral` goes on from the sum of the samples before it); rows the store
//! no longer holds (summarised past its memory cap) are a gap before the first row it reads.
//! Batches that arrive while it catches up are stored and read from the store like the rest;
//! the run's deriver ignores them for it. Stepping happens between batches (the window steps it
//! per frame, then drains), so "caught up" is exact: nothing arrives between the last row read
//! and the hand-over.

use std::time::{Duration, Instant};

use zescope_store::{Store, StoreError};

use super::backfill::RunJob;
use super::{Derivation, Deriver, PIECE_ROWS};
use crate::session::RunHistory;
use crate::view::Ingest;
use crate::view::series::SeriesKey;

/// A derived series added to the run in progress, being computed over the run so far (see the
/// module docs).
#[derive(Debug)]
pub struct CatchUp {
    name: String,
    job: RunJob,
    done: u64,
    total: u64,
}

impl CatchUp {
    /// Adds `def` to `live`, the deriver bound to the run in progress (`ingest`'s), held back;
    /// opens its stream in `store` and files its series in `ingest` and `history`; returns the
    /// computation to step and the series' keys. Errs, changing nothing, as [`Deriver::add`].
    pub fn start(
        def: &Derivation,
        live: &mut Deriver,
        ingest: &mut Ingest,
        store: &mut Store,
        history: &mut RunHistory,
    ) -> Result<(CatchUp, Vec<SeriesKey>), String> {
        let run = ingest.run.as_mut().ok_or("no run in progress")?;
        // Bound alone to the run as it was, the way the run's deriver binds it.
        let mut info = run.info.clone();
        let mut deriver = Deriver::new(vec![def.clone()]);
        deriver.run_started(&mut info)?;
        let s = live.add(def.clone(), &mut run.info)?;
        live.set_paused(&def.name, true);
        let run_id = run.info.run;
        let ids = run.streams.clone();
        let keys = ingest.add_stream(store, &s);
        let out = *ingest.run.as_ref().and_then(|r| r.streams.last()).ok_or("no run in progress")?;
        history.stream_added(run_id, &s, out);
        let (job, total) = RunJob::new(&info, &ids, deriver, vec![out], store);
        Ok((CatchUp { name: def.name.clone(), job, done: 0, total }, keys))
    }

    /// The derived series' name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The run it is computed for.
    pub fn run(&self) -> u64 {
        self.job.run
    }

    /// The share computed of the rows the run held when it was added, 0 to 1.
    pub fn progress(&self) -> f64 {
        if self.total == 0 { 1.0 } else { (self.done as f64 / self.total as f64).min(1.0) }
    }

    /// Computes for about `budget` (at least one batch; past it, on to the end when at most
    /// [`PIECE_ROWS`] rows are left); once it has caught up with what `store` holds, hands the
    /// series over to `live` and says so (true).
    pub fn step(&mut self, store: &mut Store, budget: Duration, live: &mut Deriver) -> Result<bool, StoreError> {
        let start = Instant::now();
        loop {
            match self.job.feed_one(store) {
                Ok(Some(rows)) => self.done += rows as u64,
                Ok(None) => {
                    live.take_over(&self.name, &mut self.job.deriver);
                    return Ok(true);
                }
                Err(e) => {
                    // Derived from the next batch on (its own state, fed nothing yet) rather
                    // than not at all.
                    live.set_paused(&self.name, false);
                    return Err(e);
                }
            }
            // Within a piece of the end, on to it now: the run's batches add to what is left
            // between steps, and a step that stopped at its budget each time could stay behind.
            if start.elapsed() >= budget && self.job.rows_left(store) > PIECE_ROWS as u64 {
                return Ok(false);
            }
        }
    }

    /// Stops computing it: the run's deriver derives it from the next batch on (the store it
    /// read is being replaced).
    pub fn abandon(self, live: &mut Deriver) {
        live.set_paused(&self.name, false);
    }

    /// Computes what is left and hands it over (before its run's streams end).
    pub fn finish(&mut self, store: &mut Store, live: &mut Deriver) -> Result<(), StoreError> {
        while !self.step(store, Duration::from_secs(3600), live)? {}
        Ok(())
    }
}

#[cfg(test)]
#[path = "catch_up_tests.rs"]
mod tests;
