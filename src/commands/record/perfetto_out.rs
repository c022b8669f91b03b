//! `zescope record --perfetto OUT.pftrace`: the run written as a Perfetto trace while it records
//! (`write::PerfettoTrace`: tracks when the run starts, a packet per sample as batches arrive,
//! the workload's markers as they come), flushed every second, so the file grows with the
//! recording and nothing of it is held in memory; a killed recording keeps what was flushed.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use zescope_model::markers::{Kind, Received};
use zescope_model::session::{ClockRecord, KindRecord, RunHistory, SeriesMeta};
use zescope_model::write::{OpenRange, PerfettoTrace, TraceHead};
use zescope_sampler::{Inventory, RunInfo, SampleBatch};

pub(super) struct PerfettoOut {
    pub(super) path: PathBuf,
    file: Option<File>,
    inventory: Option<Inventory>,
    trace: Option<PerfettoTrace<BufWriter<File>>>,
    /// The run's devices, source and start, for the trace's metadata.
    history: RunHistory,
    /// The trace's stream of each (run, stream of the run).
    streams: HashMap<(u64, usize), usize>,
    /// The workload's markers, kept to the recording's limit and matched as `record` keeps them.
    pub(super) markers: zescope_model::view::Markers,
    /// Markers that came before the run started (the trace is written from then).
    early: Vec<Received>,
    /// Open ranges by name, newest last.
    open: HashMap<String, Vec<OpenRange>>,
}

impl PerfettoOut {
    /// A trace to `path` (created now), at most `marker_cap` markers in it.
    pub(super) fn create(path: PathBuf, inventory: Inventory, marker_cap: usize) -> Result<PerfettoOut, String> {
        let file = File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(PerfettoOut {
            path,
            file: Some(file),
            inventory: Some(inventory),
            trace: None,
            history: RunHistory::default(),
            streams: HashMap::new(),
            markers: zescope_model::view::Markers::with_cap(marker_cap),
            early: Vec::new(),
            open: HashMap::new(),
        })
    }

    /// A run started: the trace's head (first run only) and the run's tracks.
    pub(super) fn started(&mut self, info: &RunInfo) -> std::io::Result<()> {
        self.history.run_started(info, self.inventory.as_ref(), &[]);
        if self.trace.is_none() {
            let Some(file) = self.file.take() else { return Ok(()) };
            let recorded = self.history.recorded();
            let at_ns = recorded.clocks.map_or_else(|| ClockRecord::now().monotonic_ns, |c| c.monotonic_ns);
            let head = TraceHead {
                recorded,
                source: self.history.source.clone(),
                devices: self.history.devices.clone(),
                at_ns,
            };
            self.trace = Some(PerfettoTrace::new(BufWriter::with_capacity(1 << 20, file), head)?);
            for m in std::mem::take(&mut self.early) {
                self.marker(&m)?;
            }
        }
        let Some(trace) = self.trace.as_mut() else { return Ok(()) };
        for (k, s) in info.streams.iter().enumerate() {
            if s.series.is_empty() {
                continue;
            }
            let series: Vec<SeriesMeta> = s
                .series
                .iter()
                .map(|x| SeriesMeta {
                    metric: x.name.clone(),
                    unit: x.unit.clone(),
                    kind: KindRecord::of(x.kind, x.wrap),
                    description: x.description.clone(),
                })
                .collect();
            let n = trace.stream(&s.device, &s.group, &series)?;
            self.streams.insert((info.run, k), n);
        }
        Ok(())
    }

    /// A batch of samples.
    pub(super) fn rows(&mut self, info: &RunInfo, b: &SampleBatch) -> std::io::Result<()> {
        let (Some(trace), Some(&k), Some(stream)) =
            (self.trace.as_mut(), self.streams.get(&(info.run, b.stream)), info.streams.get(b.stream))
        else {
            return Ok(());
        };
        let n = stream.series.len();
        for (i, &t) in b.timestamps.iter().enumerate() {
            if let Some(row) = b.values.get(i * n..(i + 1) * n) {
                trace.row(k, t, row)?;
            }
        }
        Ok(())
    }

    /// A marker of the workload: kept (within the limit, an end matching an open range) and
    /// written.
    pub(super) fn marker(&mut self, m: &Received) -> std::io::Result<()> {
        let Some(trace) = self.trace.as_mut() else {
            if self.early.len() < self.markers.cap() {
                self.early.push(m.clone());
            }
            return Ok(());
        };
        if !self.markers.apply(m.kind, m.t_ns, &m.name) {
            return Ok(());
        }
        match m.kind {
            Kind::Instant => trace.instant(m.t_ns, &m.name),
            Kind::Begin => {
                let r = trace.range_begin(m.t_ns, &m.name)?;
                self.open.entry(m.name.clone()).or_default().push(r);
                Ok(())
            }
            Kind::End => match self.open.get_mut(&m.name).and_then(Vec::pop) {
                Some(r) => trace.range_end(r, m.t_ns),
                None => Ok(()),
            },
        }
    }

    /// Flushes what was written.
    pub(super) fn flush(&mut self) -> std::io::Result<()> {
        self.trace.as_mut().map_or(Ok(()), PerfettoTrace::flush)
    }

    /// Ends the throttle bands still open and makes the file durable; a run that never started
    /// leaves an empty file.
    pub(super) fn finish(&mut self) -> std::io::Result<()> {
        let Some(trace) = self.trace.take() else { return Ok(()) };
        let out = trace.finish()?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()
    }
}
