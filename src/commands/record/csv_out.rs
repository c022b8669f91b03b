//! `zescope record`'s CSV, in the one CSV format (`write::csv`: time since the first sample, one
//! column per counter of every stream, named `GROUP/METRIC`, or `DEVICE/GROUP/METRIC` when the
//! run samples several devices). A row holds one stream's sample; other streams' cells are empty.
//! The header is written when the run starts.
//!
//! Batches of different streams (groups, devices) arrive one after another and overlap in time,
//! so rows wait in time order until every stream has passed them (at most `MAX_WAIT` behind the
//! newest sample: a stream that stalls does not hold the file back) and are written then; the
//! file's rows are in time order.
//!
//! Beside it go the workload's markers (`NAME.markers.csv`) and the processes that used the
//! devices (`NAME.processes.csv`, `write::write_processes_csv`), written at the end.

use std::collections::BTreeMap;

use zescope_model::write::{CsvWriter, column};
use zescope_sampler::{RunInfo, SampleBatch};

/// How far behind the newest sample rows may wait for a slower stream (ns).
const MAX_WAIT: i64 = 2_000_000_000;

pub(super) struct CsvOut {
    /// Where the samples go; the markers go beside it (`write::markers_path`).
    path: std::path::PathBuf,
    /// The workload's markers that arrived.
    pub(super) markers: zescope_model::view::Markers,
    /// The processes using the devices; they go beside the samples (`write::processes_path`).
    pub(super) processes: zescope_model::view::Processes,
    file: Option<std::fs::File>,
    w: Option<CsvWriter<std::fs::File>>,
    /// First column of each stream.
    starts: Vec<usize>,
    /// Rows not written yet, by (time, stream, arrival) so equal times keep their order.
    waiting: BTreeMap<(i64, usize, u64), Vec<f64>>,
    arrivals: u64,
    /// The newest time each stream delivered.
    newest: Vec<Option<i64>>,
}

impl CsvOut {
    /// Samples to `f` (at `path`), at most `marker_cap` markers beside them.
    pub(super) fn new(f: std::fs::File, path: std::path::PathBuf, marker_cap: usize) -> CsvOut {
        CsvOut {
            path,
            markers: zescope_model::view::Markers::with_cap(marker_cap),
            processes: Default::default(),
            file: Some(f),
            w: None,
            starts: Vec::new(),
            waiting: BTreeMap::new(),
            arrivals: 0,
            newest: Vec::new(),
        }
    }

    /// Writes `NAME.markers.csv` beside the samples when markers arrived, on the samples' time
    /// zero (call after [`CsvOut::finish`]).
    pub(super) fn write_markers(&self) -> Result<(), String> {
        if self.markers.is_empty() {
            return Ok(());
        }
        let path = zescope_model::write::markers_path(&self.path);
        let origin = self.w.as_ref().and_then(CsvWriter::origin);
        zescope_model::write::write_markers_csv(&path, self.markers.marks(), origin)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Writes `NAME.processes.csv` beside the samples when processes were listed, on the
    /// samples' time zero (call after [`CsvOut::finish`]).
    pub(super) fn write_processes(&self) -> Result<(), String> {
        if self.processes.is_empty() {
            return Ok(());
        }
        let path = zescope_model::write::processes_path(&self.path);
        let origin = self.w.as_ref().and_then(CsvWriter::origin);
        zescope_model::write::write_processes_csv(&path, &self.processes, origin)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    pub(super) fn header(&mut self, info: &RunInfo) -> csv::Result<()> {
        let Some(file) = self.file.take() else { return Ok(()) };
        let mut columns = Vec::new();
        for s in &info.streams {
            self.starts.push(columns.len());
            let prefix = match info.devices.len() {
                1 => s.group.clone(),
                _ => format!("{}/{}", s.device, s.group),
            };
            columns.extend(s.series.iter().map(|x| column(&format!("{prefix}/{}", x.name), &x.unit)));
        }
        self.newest = vec![None; info.streams.len()];
        self.w = Some(CsvWriter::new(file, &columns, None)?);
        Ok(())
    }

    pub(super) fn rows(&mut self, info: &RunInfo, b: &SampleBatch) -> csv::Result<()> {
        let (Some(stream), Some(newest)) = (info.streams.get(b.stream), self.newest.get_mut(b.stream)) else {
            return Ok(());
        };
        let n = stream.series.len();
        for (i, &t) in b.timestamps.iter().enumerate() {
            self.arrivals += 1;
            self.waiting.insert((t, b.stream, self.arrivals), b.values[i * n..(i + 1) * n].to_vec());
        }
        if let Some(&t) = b.timestamps.last() {
            *newest = Some(newest.map_or(t, |x| x.max(t)));
        }
        Ok(())
    }

    /// Writes the rows every stream has passed (and those `MAX_WAIT` behind the newest), then
    /// flushes the file.
    pub(super) fn flush(&mut self) -> std::io::Result<()> {
        // A stream that has delivered nothing yet holds rows back too (up to `MAX_WAIT`).
        let slowest = self.newest.iter().try_fold(i64::MAX, |m, t| t.map(|t| m.min(t))).unwrap_or(i64::MIN);
        if let Some(&newest) = self.newest.iter().flatten().max() {
            self.write_until(slowest.max(newest - MAX_WAIT))?;
        }
        self.w.as_mut().map_or(Ok(()), CsvWriter::flush)
    }

    /// Writes every row left and flushes.
    pub(super) fn finish(&mut self) -> std::io::Result<()> {
        self.write_until(i64::MAX)?;
        self.w.as_mut().map_or(Ok(()), CsvWriter::flush)
    }

    fn write_until(&mut self, t: i64) -> std::io::Result<()> {
        let Some(w) = self.w.as_mut() else { return Ok(()) };
        let later = match t {
            i64::MAX => BTreeMap::new(),
            t => self.waiting.split_off(&(t.saturating_add(1), 0, 0)),
        };
        for ((t, stream, _), values) in std::mem::replace(&mut self.waiting, later) {
            let start = self.starts[stream];
            w.row(t, values.into_iter().enumerate().map(|(k, v)| (start + k, v))).map_err(std::io::Error::other)?;
        }
        Ok(())
    }
}
