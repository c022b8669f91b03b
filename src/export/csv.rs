//! CSV of the data: a `time_s` column (seconds since the session's first
//! sample) and one column per visible series of the exported panes, headed
//! `group/metric [unit]`, like `zescope record` writes.
//!
//! Values are the store's full-resolution samples exactly as stored (written
//! in Rust's shortest round-trip form, so they parse back to the same `f64`):
//! gauges as read, cumulative counters as their running totals, in the stored
//! unit. A row is one sample of one stream; series of other streams (another
//! metric group, another run) have an empty cell in it. Rows are in time
//! order. History the memory cap has coarsened into summaries has no samples
//! left and is not in the CSV.

use std::collections::BTreeMap;
use std::path::Path;

use crate::store::{SeriesId, Store, StreamId};

use super::{ExportError, ExportSpec};

/// Write the CSV; returns the number of data rows.
pub fn csv(store: &Store, spec: &ExportSpec, path: &Path) -> Result<usize, ExportError> {
    // Columns: every visible series once, in pane order.
    let mut columns: Vec<(String, Vec<SeriesId>)> = Vec::new();
    for s in spec.panes.iter().flat_map(|p| &p.series).filter(|s| s.visible) {
        if !columns.iter().any(|(_, ids)| *ids == s.ids) {
            columns.push((format!("{} [{}]", s.label, s.raw_unit), s.ids.clone()));
        }
    }
    if columns.is_empty() {
        return Err(ExportError::Empty("no visible series".into()));
    }
    // Per stream: (column, series index in the stream).
    let mut feeds: BTreeMap<StreamId, Vec<(usize, usize)>> = BTreeMap::new();
    for (c, (_, ids)) in columns.iter().enumerate() {
        for id in ids {
            feeds.entry(id.stream()).or_default().push((c, id.index()));
        }
    }
    let (t0, t1) = spec.resolved_range(store).unwrap_or((i64::MAX, i64::MIN));
    // (time, stream order, cells of that stream's columns)
    let mut rows: Vec<(i64, usize, Vec<f64>)> = Vec::new();
    for (order, (&stream, feed)) in feeds.iter().enumerate() {
        store.for_each_raw_row(stream, |t, row| {
            if (t0..=t1).contains(&t) {
                rows.push((t, order, feed.iter().map(|&(_, k)| row.get(k).copied().unwrap_or(f64::NAN)).collect()));
            }
        });
    }
    rows.sort_by_key(|r| (r.0, r.1));
    let feeds: Vec<&Vec<(usize, usize)>> = feeds.values().collect();
    let io = |e: std::io::Error| ExportError::Io { path: path.to_owned(), source: e };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(file));
    let err = |e: csv::Error| ExportError::Csv(e.to_string());
    let header = std::iter::once("time_s".to_owned()).chain(columns.iter().map(|(h, _)| h.clone()));
    w.write_record(header).map_err(err)?;
    let mut record = vec![String::new(); columns.len() + 1];
    for (t, order, cells) in &rows {
        record.iter_mut().for_each(String::clear);
        record[0] = format!("{:.9}", store.to_plot_x(*t));
        for (&(c, _), v) in feeds[*order].iter().zip(cells) {
            record[c + 1] = v.to_string();
        }
        w.write_record(&record).map_err(err)?;
    }
    w.flush().map_err(io)?;
    Ok(rows.len())
}
