//! Envelopes on a fixed time grid, for views that keep their columns from frame to frame.
//!
//! An ordinary envelope query (`envelope.rs`) lays its columns out from the start of the range
//! it is asked for, so a view that slides by a millisecond gets columns with new edges, every one
//! of them computed again. A grid query instead puts column `k` over `[k * width, (k + 1) *
//! width)` ns of store time, whatever the range asked for: an item (a raw sample or a pyramid
//! node) belongs to the column of its middle, found by integer division, so it lands in the same
//! column in every query whose walk reaches it. A view can then keep the columns it computed and
//! ask only for the ones it lacks (`zescope-window`'s `envelope_plot/grid.rs`):
//!
//! - [`GridSpan`] is the view (its snapped range and the column width). The pyramid level walked
//!   is chosen from the whole span, as a fresh query of it would, and each [`Envelope`] says
//!   which (`samples_per_bucket`): a view keeps columns only while that stays the same.
//! - [`Store::grid_envelopes`] walks part of the span (`walk`) and returns the columns whose grid
//!   column lies in `keep`. A column whose items all lie inside the walk is exactly the column a
//!   walk of the whole span gives (same items, same order, same reduction): the walk takes every
//!   item that holds a sample at or after the sample before `walk.0`, and items are whole, so the
//!   items of a column at or after `walk.0`'s column are all taken.
//! - Appending samples changes only columns at or after [`Store::grid_frontier`]: raw samples
//!   never change once stored, and a pyramid node changes only while it is the newest of its
//!   level. Anything else that changes stored data (coarsening, eviction, imports) changes
//!   [`Store::history_epoch`].
//!
//! Grid columns are exact ([`Envelope::is_exact`]): they are computed from the aggregates, not
//! from the drawing bands (`band.rs`), whose reading depends on the other nodes of a chunk and so
//! may change for old nodes when a new one arrives. A view whose span reads banded levels is
//! drawn through `Store::draw_envelopes` instead ([`Store::grid_banded`]).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use super::band::BAND_LEVEL;
use super::envelope::{Envelope, EnvelopeColumn};
use super::lanes;
use super::plan::QueryPlan;
use super::stream::StreamStore;
use super::{SeriesId, Store};

/// Epochs are unique across stores, so a view that is handed another store recomputes.
static EPOCHS: AtomicU64 = AtomicU64::new(1);

/// A fresh history epoch (see [`Store::history_epoch`]).
pub(super) fn next_epoch() -> u64 {
    EPOCHS.fetch_add(1, Ordering::Relaxed)
}

/// The span of a view on a fixed grid: grid columns `t0.div_euclid(width) ..=
/// t1.div_euclid(width)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridSpan {
    /// Column width in ns (at least 1).
    pub width: i64,
    /// The view's first time (ns): its level of detail is chosen from `t0..=t1`.
    pub t0: i64,
    /// The view's last time (ns).
    pub t1: i64,
}

impl GridSpan {
    /// The grid column holding time `t`.
    pub fn cell(&self, t: i64) -> i64 {
        t.div_euclid(self.width.max(1))
    }

    /// First time of grid column `k` (saturating).
    pub fn start(&self, k: i64) -> i64 {
        k.saturating_mul(self.width.max(1))
    }

    /// Grid columns in the span.
    fn cells(&self) -> usize {
        let n = self.cell(self.t1) as i128 - self.cell(self.t0) as i128 + 1;
        n.clamp(1, usize::MAX as i128) as usize
    }
}

impl Store {
    /// Changes whenever data already stored changes: coarsening, eviction, imports. Not on
    /// appends (see the module docs). Unique across stores.
    pub fn history_epoch(&self) -> u64 {
        self.history
    }

    /// A fresh query of `span` would read the drawing bands for some series: its columns are
    /// not kept (see the module docs).
    pub fn grid_banded(&self, series: &[SeriesId], span: GridSpan) -> bool {
        self.grid_streams(series).any(|st| st.plan_level(span.t0, span.t1, span.cells()) >= BAND_LEVEL)
    }

    /// Appending samples changes no grid column of `span` before the one holding the returned
    /// time (for the streams of `series`). `i64::MIN` when a stream holds nothing yet.
    pub fn grid_frontier(&self, series: &[SeriesId], span: GridSpan) -> i64 {
        self.grid_streams(series)
            .map(|st| {
                if st.ended {
                    return i64::MAX;
                }
                let Some(newest) = st.newest_time().filter(|_| st.pyramid.top() > 0) else {
                    return i64::MIN;
                };
                // The newest node of the level walked still grows (and may be split by a gap);
                // at raw level, the newest block's samples are taken as changing too until it is
                // sealed (sealing stores each value exactly, but the walk need not rely on it).
                let l = st.plan_level(span.t0, span.t1, span.cells()).max(1);
                let meta = &st.pyramid.level(l).meta;
                let last = meta.end().checked_sub(1).filter(|&m| m >= meta.start());
                last.map_or(i64::MIN, |m| meta.at(m).t_first.min(newest))
            })
            .min()
            .unwrap_or(i64::MAX)
    }

    /// Exact envelopes of `series` on the grid of `span`, from a walk of `walk.0..=walk.1`:
    /// `outs[k]` receives the columns of `series[k]` whose grid column is in `keep`, and
    /// `cells[k]` their grid columns (several columns share one where a gap splits it).
    pub fn grid_envelopes(
        &self,
        series: &[SeriesId],
        span: GridSpan,
        walk: (i64, i64),
        keep: Range<i64>,
        outs: &mut [Envelope],
        cells: &mut [Vec<i64>],
    ) {
        let n = series.len().min(outs.len()).min(cells.len());
        let columns = span.cells();
        let width = span.width.max(1);
        let mut i = 0;
        while i < n {
            let stream = series[i].stream;
            let j = i + series[i..n].iter().take_while(|s| s.stream == stream).count();
            let Some(st) = self.streams.get(stream.0 as usize) else {
                outs[i..j].iter_mut().for_each(|o| o.reset(span.t0, span.t1, columns));
                cells[i..j].iter_mut().for_each(Vec::clear);
                i = j;
                continue;
            };
            let level = st.plan_level(span.t0, span.t1, columns);
            let mut plan = std::mem::take(&mut outs[i].plan);
            st.plan_grid(walk.0, walk.1, width, level, &mut plan);
            self.apply_plan(
                stream.0 as usize,
                &plan,
                &series[i..j],
                &mut outs[i..j],
                false,
                (span.t0, span.t1, columns),
            );
            for (out, cells) in outs[i..j].iter_mut().zip(&mut cells[i..j]) {
                out.samples_per_bucket = super::plan::samples_per_bucket(level);
                cells.clear();
                let mut k = 0;
                out.columns.retain(|_| {
                    let cell = plan.cols[k].cell;
                    k += 1;
                    let kept = keep.contains(&cell);
                    if kept {
                        cells.push(cell);
                    }
                    kept
                });
            }
            outs[i].plan = plan;
            i = j;
        }
    }

    /// The streams of `series`, each once per run of consecutive series.
    fn grid_streams<'a>(&'a self, series: &'a [SeriesId]) -> impl Iterator<Item = &'a StreamStore> + 'a {
        series
            .iter()
            .enumerate()
            .filter(|&(k, s)| k == 0 || series[k - 1].stream != s.stream)
            .filter_map(|(_, s)| self.streams.get(s.stream.0 as usize))
    }

    /// Apply `plan` (of stream `stream`) to `series` (all of that stream) into `outs`, each
    /// reset to `request` first: raw runs of series four at a time (`lanes.rs`), the
    /// rest one series at a time; `draw`: from the drawing bands where the plan has them. Many
    /// series over a plan of pyramid nodes only are split over two threads (`crate::par`).
    pub(super) fn apply_plan(
        &self,
        stream: usize,
        plan: &QueryPlan,
        series: &[SeriesId],
        outs: &mut [Envelope],
        draw: bool,
        request: (i64, i64, usize),
    ) {
        let st = &self.streams[stream];
        let (t0, t1, columns) = request;
        // Lanes pay off over runs of samples, not over a sample or two per column.
        let samples: u64 = plan.cols.iter().map(|c| c.samples).sum();
        let dense = plan.uniform.is_none() && samples >= 8 * plan.cols.len() as u64;
        let run = |series: &[SeriesId], outs: &mut [Envelope]| {
            let mut decoded = self.decoded_cache();
            let n = series.len().min(outs.len());
            let mut k = 0;
            while k < n {
                // Raw samples go through `lanes.rs` several series at once.
                let lanes = (k + lanes::LANES <= n && dense)
                    .then(|| std::array::from_fn(|x| series[k + x].index()))
                    .filter(|g: &[usize; lanes::LANES]| g.iter().all(|&s| s < st.n_series()));
                let use_ = decoded.as_deref_mut().map(|c| self.cache_use(c, stream));
                if let Some(g) = lanes {
                    let group = &mut outs[k..k + lanes::LANES];
                    group.iter_mut().for_each(|o| o.reset(t0, t1, columns));
                    st.apply_lanes(plan, g, group, use_);
                    k += lanes::LANES;
                } else {
                    outs[k].reset(t0, t1, columns);
                    st.apply(plan, series[k].index(), &mut outs[k], draw, use_);
                    k += 1;
                }
            }
            self.decoded_done(decoded);
        };
        let n = series.len().min(outs.len());
        // A plan of pyramid nodes only reads no decoded blocks (whose cache one thread at a time
        // may use): its series split over two threads, at a multiple of the lanes' width.
        let half = (n / 2).next_multiple_of(lanes::LANES);
        if half < n && crate::par::worth_it(n * plan.cols.len()) && !plan.reads_raw() {
            let (sa, sb) = series[..n].split_at(half);
            let (oa, ob) = outs[..n].split_at_mut(half);
            crate::par::join(true, || run(sa, oa), || run(sb, ob));
        } else {
            run(series, outs);
        }
    }
}

impl Envelope {
    /// Make this envelope the concatenation of `parts`, as a query of `request` at the level of
    /// `samples_per_bucket` would have filled it (exact columns).
    pub fn assemble(&mut self, request: (i64, i64, usize), samples_per_bucket: u64, parts: &[&[EnvelopeColumn]]) {
        self.reset(request.0, request.1, request.2);
        self.samples_per_bucket = samples_per_bucket;
        self.columns.reserve(parts.iter().map(|p| p.len()).sum());
        for p in parts {
            self.columns.extend_from_slice(p);
        }
    }
}
