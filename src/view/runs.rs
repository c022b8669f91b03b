//! How an envelope is drawn, wherever it is drawn (the window's plot, `app/envelope_plot.rs`, and
//! exported images, `export/image.rs`): which columns join into one unbroken stroke, and where a
//! column sits on the time axis.
//!
//! - A **gap-free run** is a maximal stretch of columns that hold a finite value with no gap
//!   (`break_before`) inside it. Nothing is drawn across a column without a value or across a gap,
//!   so a pause in sampling shows as a pause.
//! - A column is drawn at its middle, unless its time span is wider than [`WIDE_COLUMN_PX`] on
//!   the output: then across its whole span, so coarsened history and sparse data read as steps of
//!   their real width.

use crate::store::EnvelopeColumn;

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

    #[test]
    fn wide_columns_span_narrow_ones_sit_in_the_middle() {
        let c = col(100, 1, false);
        assert_eq!(column_span(&c, 0.1), (105, 105), "10 ns at 0.1 px/ns is 1 px");
        assert_eq!(column_span(&c, 1.0), (100, 110), "10 px wide");
    }
}
