//! The samples a way's read leaves, before they are sent: each stream's [`Pieces`] (its samples
//! not sent yet, split where a gap falls), what a tick's reads found ([`ReadOutcome`]), and
//! [`Reports`], how one read of a way that drains a driver's buffer of reports (the streamer, the
//! tracer) appends them and counts them.

use crate::protocol::SampleBatch;

/// A stream's samples not sent yet, in pieces separated by gaps.
#[derive(Default)]
pub(crate) struct Pieces {
    timestamps: Vec<i64>,
    values: Vec<f64>,
    /// The next sample does not connect to the previous one.
    gap_next: bool,
    /// Batches closed early because a gap fell inside them: (timestamps, values, gap_before).
    closed: Vec<(Vec<i64>, Vec<f64>, bool)>,
    /// Two samples further apart than this (ns) have a hole between them ([`Pieces::with_holes`]).
    hole_ns: Option<i64>,
    /// The time of the last sample appended, sent or not: the order and the holes are checked
    /// against it.
    last_ts: Option<i64>,
}

impl Pieces {
    /// Pieces in which two samples more than `hole` apart, by their own times, have a gap
    /// between them: the data of that time was lost (the process stopped or starved, a snapshot
    /// read late, reports the driver dropped), and no line should be drawn across it. Decided by
    /// the samples' times, not by when the sampler woke: a snapshot written just before a stop
    /// and read just after it is on the near side of the hole.
    pub(crate) fn with_holes(hole: std::time::Duration) -> Pieces {
        Pieces { hole_ns: Some(i64::try_from(hole.as_nanos()).unwrap_or(i64::MAX)), ..Pieces::default() }
    }

    /// The next sample starts a new piece: close what is pending so the gap falls between two
    /// batches (a batch only knows a gap before its first sample).
    pub(crate) fn break_batch(&mut self) {
        if !self.timestamps.is_empty() {
            let gap_before = std::mem::take(&mut self.gap_next);
            self.closed.push((std::mem::take(&mut self.timestamps), std::mem::take(&mut self.values), gap_before));
        }
        self.gap_next = true;
    }

    /// Room for `samples` more samples of `width` values each (a read that drains a buffer of
    /// reports grows its buffers once, not report by report).
    pub(crate) fn reserve(&mut self, samples: usize, width: usize) {
        self.timestamps.reserve(samples);
        self.values.reserve(samples.saturating_mul(width));
    }

    /// Appends a sample; false (and nothing appended) when `ts` does not follow the last one,
    /// sent or not: the store is never handed a non-increasing timestamp.
    pub(crate) fn push(&mut self, ts: i64, row: &[f64]) -> bool {
        if !self.follows(ts) {
            return false;
        }
        self.timestamps.push(ts);
        self.values.extend_from_slice(row);
        true
    }

    /// [`Pieces::push`] of sample `i` of `ts` with row `rows[i * width..(i + 1) * width]`, for
    /// each: the rows of consecutive samples that follow are copied at once, not row by row.
    /// How many were appended, and how many refused.
    pub(crate) fn push_rows(&mut self, ts: &[i64], rows: &[f64], width: usize) -> (u64, u64) {
        let (mut refused, mut from) = (0u64, 0usize);
        for (i, &t) in ts.iter().enumerate() {
            let place = self.place(t);
            if place != Place::Next {
                // The rows taken so far go in before a piece closes, or a row is refused.
                self.values.extend_from_slice(&rows[from * width..i * width]);
                from = i + usize::from(place == Place::Refused);
            }
            if self.enter(t, place) {
                self.timestamps.push(t);
            } else {
                refused += 1;
            }
        }
        self.values.extend_from_slice(&rows[from * width..ts.len() * width]);
        (ts.len() as u64 - refused, refused)
    }

    /// Whether a sample at `ts` may be appended (after the last one; a new piece begins when a
    /// hole falls before it), taking `ts` as the last time when it may.
    fn follows(&mut self, ts: i64) -> bool {
        self.enter(ts, self.place(ts))
    }

    /// Where a sample at `ts` would go.
    fn place(&self, ts: i64) -> Place {
        match self.last_ts {
            Some(last) if ts <= last => Place::Refused,
            Some(last) if self.hole_ns.is_some_and(|hole| ts.saturating_sub(last) > hole) => Place::AfterHole,
            _ => Place::Next,
        }
    }

    /// [`Pieces::follows`] of a sample at `ts` whose [`Pieces::place`] is `place`.
    fn enter(&mut self, ts: i64, place: Place) -> bool {
        match place {
            Place::Refused => return false,
            Place::AfterHole => self.break_batch(),
            Place::Next => {}
        }
        self.last_ts = Some(ts);
        true
    }

    pub(crate) fn take(&mut self, run: u64, stream: usize, out: &mut Vec<SampleBatch>) {
        let batch = |(timestamps, values, gap_before)| SampleBatch { run, stream, timestamps, values, gap_before };
        out.extend(self.closed.drain(..).map(batch));
        if !self.timestamps.is_empty() {
            let gap_before = std::mem::take(&mut self.gap_next);
            // The batch leaves with its buffers; the next one's are taken as large at once (one
            // allocation each a batch, not a doubling every few ticks; a quarter over, so a batch a little
            // larger than the last is not copied to grow).
            let (n, v) = (self.timestamps.len(), self.values.len());
            let timestamps = std::mem::replace(&mut self.timestamps, Vec::with_capacity(n + n / 4));
            let values = std::mem::replace(&mut self.values, Vec::with_capacity(v + v / 4));
            out.push(batch((timestamps, values, gap_before)));
        }
    }

    pub(crate) fn pending(&self) -> usize {
        self.timestamps.len() + self.closed.iter().map(|c| c.0.len()).sum::<usize>()
    }
}

/// Where a sample goes in its stream's [`Pieces`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// On from the last sample.
    Next,
    /// A new piece: a hole falls between it and the last sample.
    AfterHole,
    /// Nowhere: not after the last sample.
    Refused,
}

/// What one tick's read found.
#[derive(Default, Debug, Clone, Copy)]
pub struct ReadOutcome {
    /// Samples decoded (one per stream that had a fresh snapshot).
    pub samples: u64,
    /// Streamers with no torn-free snapshot this tick (no sample).
    pub torn: u64,
    /// Streamers whose device timestamp had not moved since the last read (no sample).
    pub unchanged: u64,
    /// Device time reset, jumped backwards or leapt: the stream was re-anchored (a gap).
    pub clock_resets: u64,
    /// Streamer reads the driver answered with ZE_RESULT_WARNING_DROPPED_DATA (reports lost;
    /// a gap).
    pub dropped_reports: u64,
}

/// What one read of a buffer of reports gave (the streamer's reports, the tracer's entries), as
/// it appends them to its stream's [`Pieces`].
#[derive(Default)]
pub(crate) struct Reports {
    /// Reports decoded into samples.
    pub reports: u64,
    /// Reports whose time did not follow the previous sample's (not stored).
    pub out_of_order: u64,
    /// The driver said reports were dropped before these.
    pub dropped: bool,
}

impl Reports {
    /// A read whose driver said `dropped`: the samples it appends start a new piece (a gap).
    pub(crate) fn begin(dropped: bool, pieces: &mut Pieces) -> Reports {
        if dropped {
            pieces.break_batch();
        }
        Reports { dropped, ..Reports::default() }
    }

    /// Appends one sample, counted as a report, or as out of order when `ts` does not follow.
    pub(crate) fn push(&mut self, pieces: &mut Pieces, ts: i64, row: &[f64]) {
        if pieces.push(ts, row) {
            self.reports += 1;
        } else {
            self.out_of_order += 1;
        }
    }

    /// [`Reports::push`] of each of `ts` with its row ([`Pieces::push_rows`]).
    pub(crate) fn push_rows(&mut self, pieces: &mut Pieces, ts: &[i64], rows: &[f64], width: usize) {
        let (appended, refused) = pieces.push_rows(ts, rows, width);
        self.reports += appended;
        self.out_of_order += refused;
    }

    /// Adds what a later part of the same read gave.
    pub(crate) fn add(&mut self, part: Reports) {
        self.reports += part.reports;
        self.out_of_order += part.out_of_order;
        self.dropped |= part.dropped;
    }

    /// Counts the read in the tick's outcome: reports as samples, those out of order as
    /// unchanged, a drop as one dropped read.
    pub(crate) fn count(self, out: &mut ReadOutcome) {
        out.samples += self.reports;
        out.unchanged += self.out_of_order;
        out.dropped_reports += self.dropped as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn samples_further_apart_than_a_hole_are_split_there_across_sends_too() {
        let mut p = Pieces::with_holes(Duration::from_secs(1));
        let ms = 1_000_000i64;
        assert!(p.push(0, &[1.0]) && p.push(2 * ms, &[2.0]));
        // Sent: the next sample still knows the last one's time.
        let mut out = Vec::new();
        p.take(1, 0, &mut out);
        assert!(p.push(3 * ms, &[3.0]), "1 ms on: no hole");
        // A snapshot written just before a stop of 1.8 s, then the first one after it.
        assert!(p.push(4 * ms, &[4.0]) && p.push(1804 * ms, &[5.0]) && p.push(1805 * ms, &[6.0]));
        p.take(1, 0, &mut out);
        let batches: Vec<(Vec<i64>, bool)> = out.iter().map(|b| (b.timestamps.clone(), b.gap_before)).collect();
        assert_eq!(
            batches,
            [(vec![0, 2 * ms], false), (vec![3 * ms, 4 * ms], false), (vec![1804 * ms, 1805 * ms], true)]
        );
        // A sample not after the last one is refused, after a send too.
        assert!(!p.push(1805 * ms, &[7.0]) && !p.push(3 * ms, &[7.0]));
        // Without holes (a tracer's events), any span connects.
        let mut t = Pieces::default();
        assert!(t.push(0, &[1.0]) && t.push(3_600_000 * ms, &[2.0]));
        let mut out = Vec::new();
        t.take(1, 0, &mut out);
        assert_eq!(out.iter().map(|b| b.gap_before).collect::<Vec<_>>(), [false]);
    }

    #[test]
    fn rows_pushed_at_once_make_the_pieces_rows_pushed_one_by_one_make() {
        let ms = 1_000_000i64;
        // In order, a repeat, one from the past, a hole of 2 s, the same again right after it.
        let ts = [5 * ms, 6 * ms, 6 * ms, 2 * ms, 7 * ms, 2007 * ms, 2008 * ms, 2008 * ms, 2009 * ms];
        let rows: Vec<f64> = (0..ts.len() * 2).map(|v| v as f64).collect();
        let (mut one, mut all) =
            (Pieces::with_holes(Duration::from_secs(1)), Pieces::with_holes(Duration::from_secs(1)));
        assert!(one.push(ms, &[-1.0, -2.0]) && all.push(ms, &[-1.0, -2.0]));
        let mut pushed = (0u64, 0u64);
        for (t, row) in ts.iter().zip(rows.chunks_exact(2)) {
            if one.push(*t, row) {
                pushed.0 += 1;
            } else {
                pushed.1 += 1;
            }
        }
        assert_eq!(all.push_rows(&ts, &rows, 2), pushed);
        assert_eq!(pushed, (6, 3));
        let batches = |p: &mut Pieces| {
            let mut out = Vec::new();
            p.take(1, 0, &mut out);
            out.into_iter().map(|b| (b.timestamps, b.values, b.gap_before)).collect::<Vec<_>>()
        };
        let expected = batches(&mut one);
        assert_eq!(batches(&mut all), expected);
        assert_eq!(expected.len(), 2, "the hole splits them");
        assert_eq!(expected[1].1, [10.0, 11.0, 12.0, 13.0, 16.0, 17.0]);
        assert!(expected[1].2, "a gap before the piece after the hole");
    }
}
