//! A stream's full-resolution rows read a piece at a time from an ordinal on
//! ([`Store::raw_piece`]): for work over a whole stream spread over many calls (a derived series
//! computed over an opened session), each call holding one piece, never the stream.
//!
//! Contract: a piece is whole blocks (256 samples; the first may start inside one) from the
//! block holding ordinal `from`, up to about `max` rows, and never spans a gap: it stops before a
//! block that starts after one, and says whether a gap came before its first row. Rows no longer
//! held at full resolution (coarsened or evicted since) are skipped, and the piece then starts
//! after a gap. Values are raw (running totals for cumulative counters), row-major.

use super::column::BLOCK;
use super::{Store, StreamId};

/// Rows of one stream (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawPiece {
    /// Sample times (ns), oldest first.
    pub timestamps: Vec<i64>,
    /// One raw value per series per row, row-major.
    pub values: Vec<f64>,
    /// A gap (or rows no longer held) came before the first row.
    pub gap_before: bool,
    /// The ordinal after the last row: where the next piece starts.
    pub next: u64,
}

impl Store {
    /// Rows of stream `s` from ordinal `from` on, about `max` of them (at least one block), into
    /// `out` (cleared first); false when there are none (the end, or an unknown stream).
    pub fn raw_piece(&self, s: StreamId, from: u64, max: usize, out: &mut RawPiece) -> bool {
        out.timestamps.clear();
        out.values.clear();
        out.gap_before = false;
        let Some(st) = self.streams.get(s.0 as usize) else { return false };
        let n = st.n_series();
        let start = st.blocks.partition_point(|b| b.first_ordinal + b.len as u64 <= from);
        let (mut tbuf, mut cbuf) = ([0i64; BLOCK], [0.0; BLOCK]);
        for (k, blk) in st.blocks.iter().enumerate().skip(start) {
            let skip = from.saturating_sub(blk.first_ordinal).min(blk.len as u64) as usize;
            if k == start {
                out.gap_before = (skip == 0 && blk.gap_before > 0) || blk.first_ordinal > from;
            } else if blk.gap_before > 0 || out.timestamps.len() >= max {
                break;
            }
            let ts = &blk.timestamps(&mut tbuf)[skip..];
            out.timestamps.extend_from_slice(ts);
            let at = out.values.len();
            out.values.resize(at + ts.len() * n, 0.0);
            for c in 0..n {
                for (j, &v) in blk.col(c, &mut cbuf)[skip..].iter().enumerate() {
                    out.values[at + j * n + c] = v;
                }
            }
            out.next = blk.first_ordinal + blk.len as u64;
        }
        !out.timestamps.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use crate::{RawPiece, SeriesDesc, SeriesKind, Store, StreamDesc};

    #[test]
    fn pieces_cover_the_stream_once_and_stop_at_gaps() {
        let mut store = Store::new(1 << 26);
        let desc =
            |n: &str| SeriesDesc { name: n.into(), unit: "B".into(), kind: SeriesKind::Cumulative { wrap: None } };
        let s = store.begin_stream(StreamDesc { name: "s".into(), series: vec![desc("a"), desc("b")] });
        let rows = |r: std::ops::Range<i64>| -> (Vec<i64>, Vec<f64>) {
            (r.clone().map(|t| t * 1000).collect(), r.flat_map(|t| [t as f64, -(t as f64)]).collect())
        };
        let (t, v) = rows(0..1000);
        store.append(s, &t, &v).unwrap();
        store.mark_gap(s);
        let (t, v) = rows(5000..5300);
        store.append(s, &t, &v).unwrap();
        store.end_stream(s);
        let mut p = RawPiece::default();
        let (mut from, mut seen, mut gaps) = (0, Vec::new(), Vec::new());
        while store.raw_piece(s, from, 300, &mut p) {
            assert_eq!(p.values.len(), 2 * p.timestamps.len());
            for (k, &t) in p.timestamps.iter().enumerate() {
                assert_eq!(p.values[2 * k], (t / 1000) as f64, "raw totals, row-major");
                assert_eq!(p.values[2 * k + 1], -((t / 1000) as f64));
            }
            gaps.push((p.timestamps[0] / 1000, p.gap_before));
            seen.extend_from_slice(&p.timestamps);
            from = p.next;
        }
        let (want, _) = rows(0..1000);
        let (after, _) = rows(5000..5300);
        assert_eq!(seen, [want, after].concat(), "every row once, in order");
        assert!(gaps.contains(&(5000, true)), "the piece after the gap starts there and says so: {gaps:?}");
        assert_eq!(gaps.iter().filter(|g| g.1).count(), 1, "{gaps:?}");
        // From inside a block.
        assert!(store.raw_piece(s, 10, 5, &mut p));
        assert_eq!((p.timestamps[0], p.gap_before), (10_000, false));
    }
}
