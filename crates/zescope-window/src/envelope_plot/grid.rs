//! A plot's columns kept from frame to frame on a fixed time grid.
//!
//! A live view slides a little every frame while its zoom and width stay put, and only its newest
//! columns get new samples. [`KeptColumns`] lays the columns on the store's fixed grid
//! (`crates/zescope-store/src/grid.rs`: column `k` covers `[k * w, (k + 1) * w)` ns, `w` the
//! view's span over its pixel columns, held while the zoom and the width do not change), snaps the visible range to
//! that grid and keeps, per series, the columns that can no longer change: those before the
//! store's frontier (the newest sample, or the newest node of the level walked) and inside the
//! range they were computed for. A frame then asks the store only for the columns after them
//! (the newest, partly filled ones, and any the view slid onto) and for the column of the sample
//! just before the view (which a line enters the view from). Reused columns are what a fresh grid
//! query over the frame's span gives, bit for bit (`tests.rs`).
//!
//! Everything is computed again when the store's history epoch changes (coarsening, eviction,
//! an import), when the width, the zoom, the series or a paused view's time limit change, when
//! the view moves back before the kept columns, or when the level walked changes. Views whose
//! level reads the store's drawing bands (long histories, `Store::grid_banded`) are not kept: the
//! caller draws them from a fresh `Store::draw_envelopes` query.

use std::collections::VecDeque;

use zescope_store::{Envelope, EnvelopeColumn, GridSpan, SeriesId, Store};

/// What must stay the same for kept columns to be reused.
#[derive(Clone, PartialEq)]
struct Key {
    width: i64,
    columns: usize,
    limit: Option<i64>,
    epoch: u64,
    series: Vec<SeriesId>,
}

/// Columns of one plot kept across frames (see the module docs).
#[derive(Default)]
pub(super) struct KeptColumns {
    key: Option<Key>,
    /// Every kept series holds all its columns of grid columns `from..done`, in `body`.
    from: i64,
    done: i64,
    /// Per series: its final columns and their grid columns (a sliding view drops a few from
    /// the front and adds a few at the back every frame: no shifting of the rest).
    body: Vec<VecDeque<EnvelopeColumn>>,
    cells: Vec<VecDeque<i64>>,
    /// Per series: samples per bucket of the level walked.
    level: Vec<u64>,
    /// Scratch outputs of store queries (reused allocations).
    head: Vec<Envelope>,
    head_cells: Vec<Vec<i64>>,
    tail: Vec<Envelope>,
    tail_cells: Vec<Vec<i64>>,
    /// Frames drawn from kept columns (tests count them).
    pub reused_frames: u64,
    /// The grid span of the last frame drawn from here.
    pub span: Option<GridSpan>,
    /// The last frame's key and grid columns `k0..=last`, whichever way it was drawn.
    prev: Option<(Key, i64, i64)>,
}

impl KeptColumns {
    /// Forget what is kept: the next frame computes every column.
    pub fn clear(&mut self) {
        self.key = None;
        self.span = None;
    }

    /// Fill `envs` (one per series) with the columns of `series` in a view of `t0..=t1` (ns)
    /// `columns` pixel columns wide, nothing after `limit`. False, having filled nothing, for a view
    /// that reads the drawing bands.
    #[allow(clippy::too_many_arguments)]
    pub fn fill(
        &mut self,
        store: &Store,
        series: &[SeriesId],
        (t0, t1): (i64, i64),
        columns: usize,
        limit: Option<i64>,
        envs: &mut [Envelope],
    ) -> bool {
        let columns = columns.max(1);
        let exact = (t1 as f64 - t0 as f64) / columns as f64;
        // Keep the width while the zoom stays: the range's ends are rounded to ns, so its
        // length varies by a few ns as the view slides.
        let width = match &self.key {
            Some(k) if k.columns == columns && (exact - k.width as f64).abs() < 0.75 => k.width,
            _ => (exact.round() as i64).max(1),
        };
        let probe = GridSpan { width, t0, t1 };
        let k0 = probe.cell(t0);
        // The last grid column is walked whole, unless a time limit ends the view before.
        let whole = probe.start(probe.cell(t1)).saturating_add(width - 1);
        let end = limit.map_or(whole, |l| l.min(whole));
        let span = GridSpan { width, t0: probe.start(k0), t1: end };
        let key = Key { width, columns, limit, epoch: store.history_epoch(), series: series.to_vec() };
        let last = span.cell(end);
        // Columns are laid on the grid only where they can be reused: from the second frame of
        // one zoom whose views overlap. Until then (a zoom gesture, jumps through the history)
        // the caller's fresh query costs what it always did.
        let reuse = self.key.as_ref() == Some(&key) && k0 >= self.from && k0 < self.done;
        let settled = self.prev.as_ref().is_some_and(|(k, a, b)| *k == key && k0 <= *b && last >= *a);
        self.prev = Some((key.clone(), k0, last));
        if !(reuse || settled) || store.grid_banded(series, span) {
            self.clear();
            return false;
        }
        let n = series.len();
        for v in [&mut self.head, &mut self.tail] {
            v.resize_with(n, Envelope::new);
        }
        for v in [&mut self.head_cells, &mut self.tail_cells] {
            v.resize_with(n, Vec::new);
        }
        self.cells.resize_with(n, VecDeque::new);
        self.body.resize_with(n, VecDeque::new);
        let mut kept = false;
        if reuse {
            // The columns after the kept ones, and the one the view enters from.
            let kf = self.done.clamp(k0, last.saturating_add(1));
            store.grid_envelopes(
                series,
                span,
                (span.start(kf), end),
                kf..i64::MAX,
                &mut self.tail,
                &mut self.tail_cells,
            );
            store.grid_envelopes(series, span, (span.t0, span.t0), i64::MIN..k0, &mut self.head, &mut self.head_cells);
            kept = self.tail.iter().zip(&self.level).all(|(e, &l)| e.samples_per_bucket() == l);
            if kept {
                for (body, cells) in self.body.iter_mut().zip(&mut self.cells) {
                    // Drop what slid out of view and what was not final.
                    let a = cells.partition_point(|&c| c < k0);
                    let b = cells.partition_point(|&c| c < kf);
                    body.truncate(b);
                    cells.truncate(b);
                    body.drain(..a);
                    cells.drain(..a);
                }
                self.reused_frames += 1;
            }
        }
        if !kept {
            store.grid_envelopes(
                series,
                span,
                (span.t0, end),
                i64::MIN..i64::MAX,
                &mut self.tail,
                &mut self.tail_cells,
            );
            for s in 0..n {
                // Split off the column(s) before the view: they are the head.
                let a = self.tail_cells[s].partition_point(|&c| c < k0);
                let (head, tail) = (&mut self.head[s], &mut self.tail[s]);
                head.columns.clear();
                head.columns.extend(tail.columns.drain(..a));
                self.head_cells[s].clear();
                self.tail_cells[s].drain(..a);
                self.body[s].clear();
                self.cells[s].clear();
            }
            self.level = self.tail.iter().map(Envelope::samples_per_bucket).collect();
        }
        let request = (t0, t1, columns);
        for s in 0..n.min(envs.len()) {
            let (b0, b1) = self.body[s].as_slices();
            let parts = [self.head[s].columns(), b0, b1, self.tail[s].columns()];
            envs[s].assemble(request, self.level[s], &parts);
        }
        // Keep what is final: columns before the frontier, and inside the span walked.
        let done = span.cell(store.grid_frontier(series, span)).min(last);
        for s in 0..n {
            let tail = &self.tail[s];
            let b = self.tail_cells[s].partition_point(|&c| c < done);
            self.body[s].extend(&tail.columns()[..b]);
            self.cells[s].extend(&self.tail_cells[s][..b]);
        }
        self.from = k0;
        self.done = done.max(k0);
        self.key = Some(key);
        self.span = Some(span);
        true
    }
}
