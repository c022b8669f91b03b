//! The one CSV format, written by `zescope record --out x.csv` (rows as batches arrive) and by
//! export (`zescope export --csv`, the window's CSV export: rows from the store).
//!
//! - Columns: `time_s`, then one per series, headed `group/metric [unit]` ([`column()`]).
//! - **Time origin**: `time_s` is seconds since the recording's first sample, printed with 9
//!   decimals (ns). That is the store's origin ([`Store::origin_ns`]): the first timestamp a
//!   store takes, kept in sessions, so the times in a CSV written while recording and in one
//!   exported later from the saved session are the same, and equal the x of the plots.
//! - Column names come from drivers and layouts: one that could be taken for a spreadsheet
//!   formula gets a `'` in front (`view::csv_text`); values are numbers and stay as they are.
//! - Values exactly as stored, in Rust's shortest round-trip form (they parse back to the same
//!   `f64`): gauges as read, cumulative counters as their running totals, in the stored unit
//!   ([`Csv`], "raw running totals"). [`CsvShown`] ("as shown", `export --csv-shown`) writes
//!   what the window plots instead: a cumulative counter's rate per second and busy time's share
//!   in %, headed with the plotted unit (`ns/s`, `%`); a sample with no rate has an empty cell.
//! - A row is one sample of one stream (metric group, run); series of other streams have an empty
//!   cell in it. Rows are in time order.
//!
//! Export writes the store's full-resolution samples of the visible series of the exported panes;
//! history the memory cap has coarsened into summaries has no samples left and is not in it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use crate::view::csv_text::csv_text;
use zescope_store::{SeriesId, Store, StreamId};

use super::{Format, Input, Scope, WriteError, WriteSpec};

/// A column's header: `group/metric [unit]` (`label` is `group/metric`, or
/// `device/group/metric` when series of several devices are exported).
pub fn column(label: &str, unit: &str) -> String {
    format!("{label} [{unit}]")
}

/// Writes the CSV format of the module docs: the header first, then rows.
pub struct CsvWriter<W: Write> {
    w: csv::Writer<W>,
    /// Time zero; `None` until the first row when not known up front.
    origin: Option<i64>,
    record: Vec<String>,
}

impl<W: Write> CsvWriter<W> {
    /// Writes the header (`time_s` and `columns`). `origin` is the store's origin (ns); `None`
    /// takes the first row's time, which is what a store would take.
    pub fn new(w: W, columns: &[String], origin: Option<i64>) -> csv::Result<CsvWriter<W>> {
        let mut w = csv::Writer::from_writer(w);
        let header: Vec<std::borrow::Cow<str>> =
            std::iter::once("time_s".into()).chain(columns.iter().map(|c| csv_text(c))).collect();
        w.write_record(header.iter().map(|c| c.as_bytes()))?;
        Ok(CsvWriter { w, origin, record: vec![String::new(); columns.len() + 1] })
    }

    /// The time (ns) that is 0 in the file: the origin given, else the first row's time.
    pub fn origin(&self) -> Option<i64> {
        self.origin
    }

    /// One row at time `t` (ns) with `cells` as (column index, value); other cells stay empty.
    pub fn row(&mut self, t: i64, cells: impl IntoIterator<Item = (usize, f64)>) -> csv::Result<()> {
        let origin = *self.origin.get_or_insert(t);
        self.record.iter_mut().for_each(String::clear);
        self.record[0] = format!("{:.9}", (t as i128 - origin as i128) as f64 * 1e-9);
        for (c, v) in cells {
            if let Some(cell) = self.record.get_mut(c + 1) {
                *cell = v.to_string();
            }
        }
        self.w.write_record(&self.record)
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

/// Write the CSV of `spec` from `store` (raw values); returns the number of data rows.
pub fn csv(store: &Store, spec: &WriteSpec, path: &Path) -> Result<usize, WriteError> {
    csv_with_progress(store, spec, path, Values::Raw, &|_| {})
}

/// Write the CSV of `spec` from `store` with `values`; returns the number of data rows.
pub fn csv_of(store: &Store, spec: &WriteSpec, path: &Path, values: Values) -> Result<usize, WriteError> {
    csv_with_progress(store, spec, path, values, &|_| {})
}

/// Which values a CSV holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// As stored: cumulative counters and busy time as their running totals, in the stored unit.
    Raw,
    /// As the window shows them: a cumulative counter's rate per second, busy time as a busy
    /// share in %, each sample's as the store derives it (empty where it has none: a stream's
    /// first sample, after a gap, at a reset), in the plotted unit; gauges and states as read.
    Shown,
}

/// [`csv`], telling `progress` the share of the rows written (0.0 to 1.0) every few thousand
/// rows. The streams are merged in time order a block at a time (`Store::raw_rows`): what it
/// holds is a block per stream, however long the session.
pub(super) fn csv_with_progress(
    store: &Store,
    spec: &WriteSpec,
    path: &Path,
    values: Values,
    progress: &dyn Fn(f32),
) -> Result<usize, WriteError> {
    // Columns: every visible series once, in pane order, headed with the unit of its values.
    let mut columns: Vec<(String, Vec<SeriesId>)> = Vec::new();
    for s in spec.panes.iter().flat_map(|p| &p.series).filter(|s| s.visible) {
        if !columns.iter().any(|(_, ids)| *ids == s.ids) {
            let unit = if values == Values::Shown { &s.unit } else { &s.raw_unit };
            columns.push((column(&s.label, unit), s.ids.clone()));
        }
    }
    if columns.is_empty() {
        return Err(WriteError::Empty("no visible series".into()));
    }
    // Per stream: (column, series index in the stream).
    let mut feeds: BTreeMap<StreamId, Vec<(usize, usize)>> = BTreeMap::new();
    for (c, (_, ids)) in columns.iter().enumerate() {
        for id in ids {
            feeds.entry(id.stream()).or_default().push((c, id.index()));
        }
    }
    let (t0, t1) = spec.resolved_range(store).unwrap_or((i64::MAX, i64::MIN));
    let total: u64 = feeds.keys().map(|&s| store.sample_count(s)).sum::<u64>().max(1);
    let mut cursors: Vec<(zescope_store::RawRows<'_>, &Vec<(usize, usize)>)> =
        feeds.iter().map(|(&s, feed)| (store.raw_rows(s), feed)).collect();
    // The stream of each cursor (kept in step with `cursors`).
    let mut feeds_of: Vec<StreamId> = feeds.keys().copied().collect();
    let io = |e: std::io::Error| WriteError::Io { path: path.to_owned(), source: e };
    let err = |e: csv::Error| WriteError::Csv(e.to_string());
    let file = std::fs::File::create(path).map_err(io)?;
    let headers: Vec<String> = columns.into_iter().map(|(h, _)| h).collect();
    // Time zero: the store's origin, else the first row written.
    let mut w = CsvWriter::new(std::io::BufWriter::new(file), &headers, store.origin_ns()).map_err(err)?;
    let (mut rows, mut read) = (0usize, 0u64);
    loop {
        // The stream whose next row is the oldest (the first such stream on a tie).
        let next = cursors.iter_mut().enumerate().filter_map(|(i, (c, _))| c.peek_time().map(|t| (t, i))).min();
        let Some((_, i)) = next else { break };
        let (cursor, feed) = &mut cursors[i];
        let Some((t, row)) = cursor.next_row() else { break };
        read += 1;
        if read % 4096 == 0 {
            progress((read as f64 / total as f64).min(1.0) as f32);
        }
        if t > t1 {
            // Past the range: this stream has nothing more to give.
            cursors.remove(i);
            feeds_of.remove(i);
            continue;
        }
        if t < t0 {
            continue;
        }
        let stream = feeds_of[i];
        let value = |k: usize| match values {
            Values::Shown if derived(store, stream, k) => store
                .series_id(stream, k)
                .and_then(|id| store.nearest(id, t))
                .filter(|s| s.t == t)
                .and_then(|s| s.value)
                .unwrap_or(f64::NAN),
            _ => row.get(k).copied().unwrap_or(f64::NAN),
        };
        w.row(t, feed.iter().map(|&(c, k)| (c, value(k))).filter(|&(_, v)| !(values == Values::Shown && v.is_nan())))
            .map_err(err)?;
        rows += 1;
    }
    w.flush().map_err(io)?;
    progress(1.0);
    Ok(rows)
}

/// Is series `k` of `stream` shown as a value derived from its samples (a rate, a busy share)
/// rather than as read?
fn derived(store: &Store, stream: StreamId, k: usize) -> bool {
    store.series_id(stream, k).and_then(|id| store.series_desc(id)).is_some_and(|d| d.kind.rate_wrap().is_some())
}

/// The visible series' samples as CSV (`--csv`): raw values, running totals of cumulative
/// counters included, with `NAME.markers.csv` beside it when markers touch the range.
pub struct Csv;

impl Format for Csv {
    fn key(&self) -> &'static str {
        "csv"
    }
    fn value_name(&self) -> &'static str {
        "CSV"
    }
    fn help(&self) -> &'static str {
        "Write a CSV of the exported series' samples here, as stored (running totals of counters)"
    }
    fn extension(&self) -> &'static str {
        "csv"
    }
    fn name(&self) -> &'static str {
        "CSV (raw running totals)"
    }
    fn title(&self) -> &'static str {
        "CSV table, raw running totals"
    }
    fn scope(&self) -> Scope {
        Scope::Samples
    }
    fn write(&self, input: &Input<'_>, path: &Path, progress: &dyn Fn(f32)) -> Result<String, String> {
        write_csv(input, path, Values::Raw, progress)
    }
}

/// The visible series' samples as CSV as the window shows them (`--csv-shown`): rates per second
/// and busy shares in %, headed with the plotted units.
pub struct CsvShown;

impl Format for CsvShown {
    fn key(&self) -> &'static str {
        "csv-shown"
    }
    fn value_name(&self) -> &'static str {
        "CSV"
    }
    fn help(&self) -> &'static str {
        "Write a CSV of the exported series' samples here, as shown (rates per second, busy shares in %)"
    }
    fn extension(&self) -> &'static str {
        "csv"
    }
    fn name(&self) -> &'static str {
        "CSV (as shown: rates, %)"
    }
    fn title(&self) -> &'static str {
        "CSV table, as shown"
    }
    fn scope(&self) -> Scope {
        Scope::Samples
    }
    fn write(&self, input: &Input<'_>, path: &Path, progress: &dyn Fn(f32)) -> Result<String, String> {
        write_csv(input, path, Values::Shown, progress)
    }
}

fn write_csv(input: &Input<'_>, path: &Path, values: Values, progress: &dyn Fn(f32)) -> Result<String, String> {
    let (store, spec) = (input.store, input.spec);
    let rows = csv_with_progress(store, spec, path, values, progress).map_err(|e| e.to_string())?;
    let mut said = format!("{} ({})", path.display(), crate::view::text::plural(rows as u64, "row", "rows"));
    // The markers that touch the written range, in a file beside it.
    let (a, b) = spec.resolved_range(store).unwrap_or((i64::MIN, i64::MAX));
    let now = store.total_time_range().map_or(b, |r| r.1);
    let marks: Vec<_> = spec.markers.iter().filter(|m| m.end_ns(now) >= a && m.t_ns <= b).cloned().collect();
    if !marks.is_empty() {
        let mp = super::markers_path(path);
        super::write_markers_csv(&mp, &marks, store.origin_ns()).map_err(|e| format!("{}: {e}", mp.display()))?;
        said += &format!(", {} ({})", mp.display(), crate::view::text::plural(marks.len() as u64, "marker", "markers"));
    }
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_timed_from_the_origin_with_empty_cells_elsewhere() {
        let mut out = Vec::new();
        {
            let cols = [column("g/a", "W"), column("h/b", "ns")];
            let mut w = CsvWriter::new(&mut out, &cols, None).unwrap();
            w.row(1_000_000_000, [(0, 1.5)]).unwrap();
            w.row(1_250_000_001, [(1, 0.1)]).unwrap();
            w.flush().unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "time_s,g/a [W],h/b [ns]\n0.000000000,1.5,\n0.250000001,,0.1\n");
    }

    #[test]
    fn column_names_that_look_like_formulas_are_neutralised_and_negative_values_stay_numbers() {
        let mut out = Vec::new();
        {
            let cols = [column("=cmd|' /C calc'!A0", "W"), column("g/-x", "W"), column("@g/m", "")];
            let mut w = CsvWriter::new(&mut out, &cols, None).unwrap();
            w.row(0, [(0, -1.5), (1, -2.0)]).unwrap();
            w.flush().unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "time_s,'=cmd|' /C calc'!A0 [W],g/-x [W],'@g/m []\n0.000000000,-1.5,-2,\n");
    }

    #[test]
    fn a_known_origin_is_kept() {
        let mut out = Vec::new();
        {
            let mut w = CsvWriter::new(&mut out, &[column("g/a", "W")], Some(500)).unwrap();
            w.row(1_500, [(0, 2.0)]).unwrap();
            w.flush().unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "time_s,g/a [W]\n0.000001000,2\n");
    }
}
