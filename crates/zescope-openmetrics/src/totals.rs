//! The streamer's counts as running totals: a time-based streamer gives each report's count of
//! bytes, cycles or events, which the sampler turns into that report's rate (a unit "X/s"). A
//! gauge of the newest rate tells a scrape about the last report alone (10 µs to 1 ms of a
//! 15 s scrape interval); the sum of every report's count is what Prometheus's `rate()` and
//! `increase()` need, exactly as exported memory's running totals are. So such a series is
//! served as a counter (`_total`, in the count's unit) whose value is the sum of its reports'
//! counts since the run started: each report's rate times the report's span.
//!
//! # The span of a report
//!
//! A report's time is the end of the span it counts; its span is the time since the report
//! before it. Reports come every period; a longer time since the last one is reports the driver
//! dropped (their counts are lost), so a time more than half again the span seen last counts the
//! report for that span, not for the hole. The run's first report has no report before it and
//! adds nothing. A value not read (NaN) adds nothing.
//!
//! Which values are summed is the [`Catalog`]'s decision ([`Catalog::summed`], the one rule for
//! `serve`, its OTLP export and the backfill of a session): those of the streamer with a unit
//! "X/s".

use crate::catalog::Catalog;

/// The unit of the count a series of `unit` sums to, when its reports' rates are summed: "X"
/// of "X/s".
pub fn count_unit(unit: &str) -> Option<&str> {
    unit.trim().strip_suffix("/s").filter(|c| !c.is_empty())
}

/// The running totals of a catalog's summed values (the module's docs).
#[derive(Clone, Debug)]
pub struct Totals {
    /// Per value of the run: its total, or `None` for a value served as it is.
    totals: Vec<Option<f64>>,
    /// Per stream: where its values start, and the time and span of its last report.
    streams: Vec<Stream>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Stream {
    start: usize,
    len: usize,
    last: Option<i64>,
    span: Option<i64>,
}

impl Totals {
    /// Zero totals for `catalog`'s summed values.
    pub fn new(catalog: &Catalog) -> Totals {
        let totals = (0..catalog.width).map(|v| catalog.summed(v).then_some(0.0)).collect::<Vec<_>>();
        let streams = (catalog.stream_starts.iter().enumerate())
            .map(|(s, &start)| {
                let end = catalog.stream_starts.get(s + 1).copied().unwrap_or(catalog.width).max(start);
                Stream { start, len: end - start, ..Stream::default() }
            })
            .collect();
        Totals { totals, streams }
    }

    /// Adds the reports of stream `stream`: `times` (ns, increasing) and their values, row-major
    /// (one row of the stream's series a report).
    pub fn add(&mut self, stream: usize, times: &[i64], values: &[f64]) {
        let Some(s) = self.streams.get_mut(stream).filter(|s| s.len > 0) else { return };
        let totals = &mut self.totals[s.start..s.start + s.len];
        if totals.iter().all(Option::is_none) {
            return;
        }
        for (&t, row) in times.iter().zip(values.chunks_exact(s.len)) {
            let Some(span) = s.span_of(t) else { continue };
            let secs = span as f64 * 1e-9;
            for (total, &v) in totals.iter_mut().zip(row) {
                if let Some(total) = total
                    && v.is_finite()
                {
                    *total += v * secs;
                }
            }
        }
    }

    /// The total of value `value` of the run; `None` when it is not summed.
    pub fn total(&self, value: usize) -> Option<f64> {
        self.totals.get(value).copied().flatten()
    }
}

impl Stream {
    /// The span (ns) a report at `t` counts for, taking `t` as the last report's time; `None`
    /// for the first report and for a time that does not follow the last.
    fn span_of(&mut self, t: i64) -> Option<i64> {
        let last = self.last.replace(t);
        let since = t.checked_sub(last?).filter(|&d| d > 0)?;
        match self.span {
            // A hole: the report counts for the span seen last.
            Some(span) if since > span.saturating_add(span / 2) => Some(span),
            _ => {
                self.span = Some(since);
                Some(since)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{RunDescription, SeriesDescription, StreamDescription};
    use zescope_sampler::ReadPath;
    use zescope_sampler::layout::Kind;

    fn catalog(read_path: ReadPath, units: &[&str]) -> Catalog {
        let series = units
            .iter()
            .enumerate()
            .map(|(i, u)| SeriesDescription {
                name: format!("M{i}"),
                description: String::new(),
                unit: (*u).into(),
                kind: Kind::Gauge,
            })
            .collect();
        let run = RunDescription {
            devices: Vec::new(),
            streams: vec![StreamDescription { device: 0, group: "G".into(), read_path, series }],
        };
        Catalog::new(&run)
    }

    #[test]
    fn a_count_unit_is_what_a_second_of_it_counts() {
        assert_eq!(count_unit("bytes/s"), Some("bytes"));
        assert_eq!(count_unit("GB/s"), Some("GB"));
        assert_eq!(count_unit("events/s"), Some("events"));
        assert_eq!(count_unit("/s"), None);
        assert_eq!(count_unit("%"), None);
        assert_eq!(count_unit("MHz"), None);
    }

    #[test]
    fn reports_add_their_rate_times_their_span_from_the_second_on() {
        let c = catalog(ReadPath::Streamer, &["bytes/s", "%", "cycles/s"]);
        let mut t = Totals::new(&c);
        assert_eq!((t.total(0), t.total(1), t.total(2)), (Some(0.0), None, Some(0.0)));
        // Reports every 10 µs: 1e9 bytes/s is 10 000 bytes a report.
        let times = [1_000_000, 1_010_000, 1_020_000, 1_030_000];
        let rows = [1e9, 50.0, 2e9, 1e9, 60.0, 2e9, 3e9, 70.0, 4e9, 1e9, 80.0, f64::NAN];
        t.add(0, &times, &rows);
        assert_eq!(t.total(0), Some(10_000.0 + 30_000.0 + 10_000.0), "the first report has no span");
        assert_eq!(t.total(2), Some(20_000.0 + 40_000.0), "a value not read adds nothing");
        assert_eq!(t.total(1), None, "a share is served as it is");
    }

    #[test]
    fn a_hole_counts_the_report_for_its_span_and_batches_continue_where_the_last_ended() {
        let c = catalog(ReadPath::Streamer, &["events/s"]);
        let mut t = Totals::new(&c);
        t.add(0, &[0, 1_000_000], &[5.0, 1000.0]);
        assert_eq!(t.total(0), Some(1.0), "1 ms at 1000 events/s");
        // The next batch: 9 ms later (8 reports dropped), then on every millisecond again.
        t.add(0, &[10_000_000, 11_000_000], &[1000.0, 2000.0]);
        assert_eq!(t.total(0), Some(1.0 + 1.0 + 2.0), "the report after the hole counts one period");
        // A time that does not follow the last adds nothing and is not a span.
        t.add(0, &[11_000_000, 12_000_000], &[7e9, 3000.0]);
        assert_eq!(t.total(0), Some(4.0 + 3.0));
    }

    #[test]
    fn exported_memory_and_other_streams_are_not_summed() {
        let c = catalog(ReadPath::Mapped, &["GB/s"]);
        let mut t = Totals::new(&c);
        t.add(0, &[0, 1_000], &[1.0, 2.0]);
        assert_eq!(t.total(0), None);
        t.add(5, &[0, 1_000], &[1.0, 2.0]);
        assert_eq!(t.total(1), None, "a stream the catalog does not have");
    }
}
