//! Where a `record` writes: the session or CSV (`--out`), and the rows of a batch to it and to
//! the Perfetto trace (`--perfetto`).

use zescope_model::session::Recorder;
use zescope_sampler::RunInfo;

use super::RecordArgs;
use super::csv_out::CsvOut;
use super::perfetto_out::PerfettoOut;

/// Writes `b` to the session or CSV and to the Perfetto trace, whichever are asked for; an
/// error names the file.
pub(super) fn write_rows(
    args: &RecordArgs,
    out: &mut Option<Out>,
    perfetto: &mut Option<Box<PerfettoOut>>,
    info: &RunInfo,
    b: &zescope_sampler::SampleBatch,
) -> Result<(), String> {
    if let Some(p) = perfetto.as_mut() {
        p.rows(info, b).map_err(|e| format!("writing {}: {e}", p.path.display()))?;
    }
    if let Some(o) = out.as_mut() {
        let path = args.out.as_deref().unwrap_or(std::path::Path::new("the output"));
        o.rows(info, b).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Where a `record` writes.
pub(super) enum Out {
    Csv(Box<CsvOut>),
    Session(Box<Recorder>),
}

impl Out {
    pub(super) fn header(&mut self, info: &RunInfo) -> Result<(), String> {
        match self {
            Out::Csv(c) => c.header(info).map_err(|e| e.to_string()),
            Out::Session(s) => {
                s.started(info);
                Ok(())
            }
        }
    }

    pub(super) fn rows(&mut self, info: &RunInfo, b: &zescope_sampler::SampleBatch) -> Result<(), String> {
        match self {
            Out::Csv(c) => c.rows(info, b).map_err(|e| e.to_string()),
            Out::Session(s) => s.samples(b),
        }
    }

    pub(super) fn marker(&mut self, m: &zescope_model::markers::Received) {
        self.marker_at(m.kind, m.t_ns, &m.name);
    }

    pub(super) fn marker_at(&mut self, kind: zescope_markers::Kind, t_ns: i64, name: &str) {
        match self {
            Out::Csv(c) => {
                c.markers.apply(kind, t_ns, name);
            }
            Out::Session(s) => s.marker(kind, t_ns, name),
        }
    }

    /// The markers kept so far.
    pub(super) fn markers(&self) -> &zescope_model::view::Markers {
        match self {
            Out::Csv(c) => &c.markers,
            Out::Session(s) => s.markers(),
        }
    }

    pub(super) fn stopped(&mut self, run: u64) {
        match self {
            Out::Csv(c) => c.processes.run_stopped(run),
            Out::Session(s) => s.stopped(run),
        }
    }

    /// The processes using a device of `run` (the run being recorded).
    pub(super) fn processes(&mut self, run: Option<&RunInfo>, p: &zescope_sampler::processes::ProcessSnapshot) {
        match self {
            Out::Csv(c) => {
                c.processes.ingest_of_run(p, run, &zescope_model::view::processes::ProcFs);
            }
            Out::Session(s) => s.processes(p),
        }
    }

    /// CSV: flush the rows so far. Session: checkpoint the file in the background now and then
    /// (appending what is new).
    pub(super) fn flush(&mut self) -> Result<(), String> {
        match self {
            Out::Csv(c) => c.flush().map_err(|e| e.to_string()),
            Out::Session(s) => s.checkpoint(),
        }
    }

    /// Everything written and durable.
    pub(super) fn finish(&mut self) -> Result<(), String> {
        match self {
            Out::Csv(c) => {
                c.finish().map_err(|e| e.to_string())?;
                c.write_markers()?;
                c.write_processes()
            }
            Out::Session(s) => s.finish(),
        }
    }
}
