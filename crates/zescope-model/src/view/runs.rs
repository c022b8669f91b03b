//! How an envelope is drawn, wherever it is drawn (the window's plot, `zescope-window`'s
//! `envelope_plot/`, and written images, `write/image.rs`): which columns join into one unbroken stroke, and where a
//! column sits on the time axis.
//!
//! - A **gap-free run** is a maximal stretch of columns that hold a finite value with no gap
//!   (`break_before`) inside it. Nothing is drawn across a column without a value or across a gap,
//!   so a pause in sampling shows as a pause.
//! - A column is drawn at its middle, unless its time span is wider than [`WIDE_COLUMN_PX`] on
//!   the output: then across its whole span, so coarsened history and sparse data read as steps of
//!   their real width.
//! - Within a run, consecutive columns are **joined**: where a column's min..max does not overlap
//!   the previous column's, a vertical edge ([`join_before`]) spans the jump at the column's start,
//!   so a step change at about one sample per pixel reads as one continuous line with its edge.
//!   The edge is drawn only where the line would not show the jump by itself: for a state (its
//!   value holds until the next sample), or where two columns touch on the output (wide columns
//!   side by side). Samples that stand apart are joined by the slanting line alone, never by an
//!   edge back toward the previous value (a needle the samples do not hold).

use zescope_store::EnvelopeColumn;

/// Columns spanning more than this many pixels are drawn across their span, not at their middle.
pub const WIDE_COLUMN_PX: f64 = 2.0;

/// The gap-free runs of `cols`, in order (see the module docs); none is empty.
pub fn gap_free_runs(cols: &[EnvelopeColumn]) -> GapFreeRuns<'_> {
    GapFreeRuns { rest: cols }
}

/// Iterator of [`gap_free_runs`].
pub struct GapFreeRuns<'a> {
    rest: &'a [EnvelopeColumn],
}

impl<'a> Iterator for GapFreeRuns<'a> {
    type Item = &'a [EnvelopeColumn];

    fn next(&mut self) -> Option<&'a [EnvelopeColumn]> {
        let skip = self.rest.iter().position(|c| c.count > 0)?;
        let cols = &self.rest[skip..];
        let len = 1 + cols[1..].iter().position(|c| c.count == 0 || c.break_before).unwrap_or(cols.len() - 1);
        let (run, rest) = cols.split_at(len);
        self.rest = rest;
        Some(run)
    }
}

/// The time span `(from, to)` (ns) to draw column `c` across at `px_per_ns` pixels per
/// nanosecond: its whole span when wider than [`WIDE_COLUMN_PX`], else its middle twice.
pub fn column_span(c: &EnvelopeColumn, px_per_ns: f64) -> (i64, i64) {
    if ((c.t_end as f64 - c.t_start as f64) * px_per_ns).abs() > WIDE_COLUMN_PX {
        (c.t_start, c.t_end)
    } else {
        (c.t_mid(), c.t_mid())
    }
}

/// The vertical edge `(lo, hi)` that joins column `c` to the column before it in a run, when
/// their min..max ranges do not overlap (a step): from the previous column's nearer end to `c`'s.
/// `None` when they overlap (the band is continuous anyway) or either holds no value.
pub fn join_before(prev: &EnvelopeColumn, c: &EnvelopeColumn) -> Option<(f64, f64)> {
    if prev.count == 0 || c.count == 0 {
        return None;
    }
    if c.min > prev.max {
        Some((prev.max, c.min))
    } else if c.max < prev.min {
        Some((c.max, prev.min))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(t: i64, count: u64, break_before: bool) -> EnvelopeColumn {
        EnvelopeColumn {
            t_start: t,
            t_end: t + 10,
            min: 0.0,
            max: 1.0,
            mean: 0.5,
            count,
            non_finite: 0,
            samples: count,
            break_before,
        }
    }

    #[test]
    fn runs_break_at_gaps_and_empty_columns() {
        let cols = [col(0, 1, false), col(10, 1, false), col(20, 0, false), col(30, 2, false), col(40, 1, true)];
        let runs: Vec<Vec<i64>> = gap_free_runs(&cols).map(|r| r.iter().map(|c| c.t_start).collect()).collect();
        assert_eq!(runs, [vec![0, 10], vec![30], vec![40]]);
        assert_eq!(gap_free_runs(&[]).count(), 0);
        assert_eq!(gap_free_runs(&[col(0, 0, false)]).count(), 0);
    }

    fn flat(t: i64, v: f64) -> EnvelopeColumn {
        EnvelopeColumn { min: v, max: v, mean: v, ..col(t, 1, false) }
    }

    #[test]
    fn steps_are_joined_by_a_vertical_edge_overlaps_need_none() {
        // A frequency stepping 400 → 1600 → 1600 → 900, one sample per column.
        let cols = [flat(0, 400.0), flat(10, 1600.0), flat(20, 1600.0), flat(30, 900.0)];
        let joins: Vec<_> = cols.windows(2).map(|w| join_before(&w[0], &w[1])).collect();
        assert_eq!(joins, [Some((400.0, 1600.0)), None, Some((900.0, 1600.0))]);
        // Each joined pair now overlaps: the drawn line has no hole at any step.
        for (w, j) in cols.windows(2).zip(&joins) {
            let (lo, hi) = j.unwrap_or((w[1].min, w[1].max));
            assert!(lo <= w[0].max && hi >= w[0].min && lo <= w[1].max && hi >= w[1].min);
        }
        let band = EnvelopeColumn { min: 0.0, max: 1.0, ..col(40, 3, false) };
        assert_eq!(join_before(&flat(30, 0.5), &band), None, "a band that covers the last value");
        assert_eq!(join_before(&col(0, 0, false), &flat(10, 5.0)), None, "no value, nothing to join");
    }

    #[test]
    fn wide_columns_span_narrow_ones_sit_in_the_middle() {
        let c = col(100, 1, false);
        assert_eq!(column_span(&c, 0.1), (105, 105), "10 ns at 0.1 px/ns is 1 px");
        assert_eq!(column_span(&c, 1.0), (100, 110), "10 px wide");
    }
}
