//! `record --trigger`: only the time around firings is written. The triggers are evaluated on
//! every batch as it arrives (`triggers::Evaluator`), their firings open windows
//! (`triggers::Keeper`), and only the samples inside them reach the output. Each firing is also a
//! marker of the recording ("trigger: EXPR"), and the firings are listed beside the output in
//! `NAME.firings.csv` (`triggers::firings_csv`).

use std::path::{Path, PathBuf};

use zescope_model::triggers::{Evaluator, Firing, Keeper, Trigger};
use zescope_sampler::{RunInfo, SampleBatch};

/// The most firings `NAME.firings.csv` lists (later ones are counted, not listed).
const MAX_LISTED: usize = 1_000_000;

/// The triggers of a recording, their firings, and what they keep.
pub(super) struct Triggered {
    eval: Evaluator,
    keeper: Keeper,
    fired: Vec<Firing>,
    /// Firings listed for the index.
    pub(super) firings: Vec<Firing>,
    /// The first sample written (the output's time zero).
    pub(super) origin: Option<i64>,
    /// Samples written.
    pub(super) kept: u64,
}

impl Triggered {
    /// `triggers` keeping `pre` before and `post` after each firing.
    pub(super) fn new(triggers: Vec<Trigger>, pre: std::time::Duration, post: std::time::Duration) -> Triggered {
        let ns = |d: std::time::Duration| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
        Triggered {
            eval: Evaluator::new(triggers),
            keeper: Keeper::new(ns(pre), ns(post)),
            fired: Vec::new(),
            firings: Vec::new(),
            origin: None,
            kept: 0,
        }
    }

    /// A run started: binds the triggers; errs naming any that would watch nothing (with the
    /// names it could mean), before anything is written.
    pub(super) fn started(&mut self, info: &RunInfo) -> Result<(), String> {
        zescope_model::triggers::names::check(self.eval.triggers(), info)?;
        self.eval.run_started(info);
        let widths: Vec<usize> = info.streams.iter().map(|s| s.series.len()).collect();
        self.keeper.run_started(info.run, &widths);
        Ok(())
    }

    /// Evaluates a batch, opens the windows of its firings and writes what they keep; returns the
    /// firings (for the markers).
    pub(super) fn samples(
        &mut self,
        b: &SampleBatch,
        write: &mut impl FnMut(SampleBatch) -> Result<(), String>,
    ) -> Result<&[Firing], String> {
        self.fired.clear();
        self.eval.samples(b, &mut self.fired);
        let (origin, kept) = (&mut self.origin, &mut self.kept);
        let mut emit = |out: SampleBatch| {
            if let Some(&t) = out.timestamps.first() {
                *origin = Some(origin.map_or(t, |o: i64| o.min(t)));
            }
            *kept += out.timestamps.len() as u64;
            write(out)
        };
        for f in &self.fired {
            self.keeper.open(f.t_ns, &mut emit)?;
        }
        self.keeper.samples(b, &mut emit)?;
        let room = MAX_LISTED.saturating_sub(self.firings.len());
        self.firings.extend(self.fired.iter().take(room).cloned());
        Ok(&self.fired)
    }

    /// A marker of the workload: fires the marker triggers, opening their windows.
    pub(super) fn marker(
        &mut self,
        name: &str,
        t_ns: i64,
        write: &mut impl FnMut(SampleBatch) -> Result<(), String>,
    ) -> Result<(), String> {
        self.fired.clear();
        self.eval.marker(name, t_ns, &mut self.fired);
        for f in &self.fired {
            self.keeper.open(f.t_ns, write)?;
        }
        self.firings.append(&mut self.fired);
        Ok(())
    }

    /// Firings so far, all triggers together.
    pub(super) fn count(&self) -> u64 {
        self.eval.counts().iter().sum()
    }

    /// The number of windows kept (overlapping ones joined).
    pub(super) fn windows(&self) -> usize {
        self.keeper.windows().count()
    }

    /// Writes the index of firings to `NAME.firings.csv` beside `out`.
    pub(super) fn write_index(&self, out: &Path) -> Result<PathBuf, String> {
        let path = firings_path(out);
        let origin = self.origin.or(self.firings.first().map(|f| f.t_ns)).unwrap_or(0);
        let text = zescope_model::triggers::firings_csv(&self.firings, self.eval.triggers(), origin);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }
}

/// `run.ron` → `run.firings.csv` beside it.
fn firings_path(out: &Path) -> PathBuf {
    let stem = out.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    out.with_file_name(format!("{stem}.firings.csv"))
}
