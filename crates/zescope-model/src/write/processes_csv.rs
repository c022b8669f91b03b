//! Processes as CSV: a file of their own beside the samples' CSV (`run.csv` →
//! `run.processes.csv`), one row per process and snapshot, in the order the processes were first
//! seen. Columns: `time_s` (seconds on the samples' `time_s` axis, 9 decimals), `device`, `pid`,
//! `started_s` (when this process was first listed: a pid listed again after a break, a second
//! process, has a later one — `pid` and `started_s` together name a process), `command` (its
//! command on this host, or `(not on this host)`), `memory_bytes`, `shared_bytes`, `engines` (the
//! kinds it uses, `compute+copy`). Commands and device names come from outside: one that could be
//! taken for a spreadsheet formula gets a `'` in front (`view::csv_text`).

use std::path::{Path, PathBuf};

use zescope_sampler::processes::engine_names;

use crate::view::Processes;
use crate::view::csv_text::csv_text;

/// Where the processes of the CSV at `csv` go: `NAME.processes.csv` beside it.
pub fn processes_path(csv: &Path) -> PathBuf {
    let stem = csv.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    csv.with_file_name(format!("{stem}.processes.csv"))
}

/// Writes every sample of `processes` to `path`; `origin` is the samples' time zero (ns; `None`:
/// the first process's first sample).
pub fn write_processes_csv(path: &Path, processes: &Processes, origin: Option<i64>) -> csv::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(["time_s", "device", "pid", "started_s", "command", "memory_bytes", "shared_bytes", "engines"])?;
    let Some(origin) = origin.or_else(|| processes.list().first().map(|p| p.first_ns())) else {
        return w.flush().map_err(Into::into);
    };
    let secs = |t: i64| format!("{:.9}", (t as i128 - origin as i128) as f64 * 1e-9);
    for p in processes.list() {
        let (device, command) = (csv_text(&p.device), csv_text(p.command_text()));
        let (pid, started) = (p.pid.to_string(), secs(p.first_ns()));
        for s in &p.samples {
            w.write_record([
                secs(s.t_ns).as_str(),
                device.as_ref(),
                &pid,
                &started,
                command.as_ref(),
                &s.memory_bytes.to_string(),
                &s.shared_bytes.to_string(),
                &engine_names(s.engines).join("+"),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::processes::Host;
    use zescope_sampler::processes::{ProcessSnapshot, ProcessUse};

    struct Nowhere;
    impl Host for Nowhere {
        fn command(&self, pid: u32) -> Option<String> {
            (pid == 1).then(|| "=cmd".to_owned())
        }
        fn start_time(&self, _: u32) -> Option<u64> {
            None
        }
    }

    #[test]
    fn one_row_per_process_and_snapshot_and_a_reused_pid_starts_again() {
        let mut p = Processes::default();
        let u = |pid| ProcessUse { pid, memory_bytes: 10 * pid as u64, shared_bytes: 1, engines: 0b10010 };
        for (t, list) in [(2, vec![u(1), u(2)]), (3, vec![u(1)]), (4, vec![u(1), u(2)])] {
            let snap = ProcessSnapshot { run: 1, target: 0, at_ns: t * 1_000_000_000, processes: list };
            p.ingest(&snap, "GPU", &Nowhere);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = processes_path(&dir.path().join("run.csv"));
        assert_eq!(path.file_name().unwrap(), "run.processes.csv");
        write_processes_csv(&path, &p, Some(1_000_000_000)).unwrap();
        let rows: Vec<csv::StringRecord> =
            csv::Reader::from_path(&path).unwrap().records().collect::<Result<_, _>>().unwrap();
        let row = |r: &csv::StringRecord| r.iter().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(rows.len(), 5);
        assert_eq!(row(&rows[0]), ["1.000000000", "GPU", "1", "1.000000000", "'=cmd", "10", "1", "compute+copy"]);
        assert_eq!(row(&rows[3])[..5], ["1.000000000", "GPU", "2", "1.000000000", "(not on this host)"]);
        assert_eq!(row(&rows[4])[..4], ["3.000000000", "GPU", "2", "3.000000000"], "pid 2 again: started anew");
    }
}
