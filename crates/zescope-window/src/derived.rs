//! The window's derived series (View → New derived series…, a legend row's "Rate of…",
//! "Ratio to…", "Moving average…", or a view file's `derived`): definitions
//! (`docs/derived-series.md`) bound to each run as it starts, and to the run in progress when
//! added, evaluated on every batch `drain.rs` files (`derive::Deriver`), their values filed into
//! the store as series like any other. One added during a run is computed first over what the
//! run recorded before it was added, then taken live (`derive::CatchUp`); one added while a
//! recording is shown (an opened session) is computed over it once (`derive::Backfill`): either
//! a slice per frame within [`BACKFILL_BUDGET`], with its progress in the status bar.

use std::collections::VecDeque;
use std::time::Duration;

use zescope_model::derive::{Backfill, CatchUp, Derivation, Deriver};
use zescope_model::session::RunHistory;
use zescope_model::triggers::left_out::named;
use zescope_model::view::Ingest;
use zescope_model::view::series::SeriesKey;
use zescope_sampler::{Inventory, RunInfo};
use zescope_store::Store;

/// The time a frame spends computing derived series over a recording, at most (about).
pub const BACKFILL_BUDGET: Duration = Duration::from_millis(8);

/// The window's derived series and the editor's fields.
#[derive(Debug, Default)]
pub struct Derived {
    /// The definitions, bound to the run in progress.
    pub deriver: Deriver,
    /// The definition being written (`NAME=EXPR`).
    pub text: String,
    /// Why the last definition added was refused, or what became of it.
    pub said: Option<String>,
    /// The editor's Add was pressed: the app adds `text` (it holds the store) before its next
    /// drain.
    pub requested: bool,
    /// Derived series being computed over the recording shown, the first one first.
    pub backfills: VecDeque<Backfill>,
    /// Derived series added during the run, being computed over what it recorded before.
    pub catch_ups: VecDeque<CatchUp>,
}

impl Derived {
    /// What is wrong with `text` as a definition for `run` (the column where it does not parse,
    /// or the series it names that the run lacks: what to tick in the source list where `inv`,
    /// the window's own, has it, else what they could mean); `None`: fine.
    pub fn check(&self, run: Option<&RunInfo>, inv: Option<&Inventory>) -> Option<String> {
        let text = self.text.trim();
        if text.is_empty() {
            return None;
        }
        let def = match Derivation::parse(text) {
            Ok(d) => d,
            Err(e) => return Some(e.to_string()),
        };
        if self.deriver.derivations().iter().any(|d| d.name == def.name) {
            return Some(format!("'{}' is taken: name it otherwise", def.name));
        }
        let run = run?;
        let mut info = run.clone();
        let e = Deriver::new(vec![def.clone()]).run_started(&mut info).err()?;
        let defs = [def];
        Some(crate::left_out::advice(inv, run, &named(&defs, &[])).unwrap_or(e))
    }

    /// Adds the definition written (see [`Derived::create`]); the keys of the series made.
    pub fn add(&mut self, ingest: &mut Ingest, store: &mut Store, history: &mut RunHistory) -> Vec<SeriesKey> {
        let def = match Derivation::parse(self.text.trim()) {
            Ok(d) => d,
            Err(e) => {
                self.said = Some(e.to_string());
                return Vec::new();
            }
        };
        match self.create(def, ingest, store, history) {
            Ok(keys) => {
                self.text.clear();
                keys
            }
            Err(e) => {
                self.said = Some(e);
                Vec::new()
            }
        }
    }

    /// Makes derived series `def`: in the run in progress from the run's start (computed in the
    /// background over what the run recorded, then live; its series filed into `store` and
    /// returned, to place in panes); over the recording shown, computed in the background from
    /// its start; with neither, from the next run on. It is bound to every run after. Errs,
    /// changing nothing, for a name taken or a series it names that is lacking.
    pub fn create(
        &mut self,
        def: Derivation,
        ingest: &mut Ingest,
        store: &mut Store,
        history: &mut RunHistory,
    ) -> Result<Vec<SeriesKey>, String> {
        if self.deriver.derivations().iter().any(|d| d.name == def.name) {
            return Err(format!("derived series '{}' is defined already", def.name));
        }
        if ingest.run.is_some() {
            let (up, keys) = CatchUp::start(&def, &mut self.deriver, ingest, store, history)?;
            self.said = None;
            self.catch_ups.push_back(up);
            return Ok(keys);
        }
        if history.streams.is_empty() {
            self.deriver.define(def)?;
            self.said = Some("no run in progress: derived from the next run on".into());
            return Ok(Vec::new());
        }
        let (fill, keys) = Backfill::start(&def, history, store, ingest)?;
        self.said = Some(match fill.skipped() {
            [] => format!("Derived/{}: computing over the recording shown", def.name),
            s => format!("Derived/{}: computing over the recording shown; not in {}", def.name, s.join("; ")),
        });
        self.deriver.define(def)?;
        self.backfills.push_back(fill);
        Ok(keys)
    }

    /// Computes derived series over the run so far, then over the recording shown, for about
    /// `budget`; whether any is left (another frame is wanted). A store error stops that one,
    /// said (one added during the run is then derived from the next batch on).
    pub fn step_backfills(&mut self, store: &mut Store, budget: Duration) -> bool {
        if let Some(up) = self.catch_ups.front_mut() {
            let step = up.step(store, budget, &mut self.deriver);
            if !matches!(step, Ok(false)) {
                self.said = step.err().map(|e| format!("Derived/{}: derived from now on only: {e}", up.name()));
                self.catch_ups.pop_front();
            }
            return !self.catch_ups.is_empty() || !self.backfills.is_empty();
        }
        let Some(fill) = self.backfills.front_mut() else { return false };
        match fill.step(store, budget) {
            Ok(false) => {}
            Ok(true) => {
                self.said = Some(format!("Derived/{}: computed over the recording shown", fill.name()));
                self.backfills.pop_front();
            }
            Err(e) => {
                self.said = Some(format!("Derived/{}: could not be stored: {e}", fill.name()));
                self.backfills.pop_front();
            }
        }
        !self.backfills.is_empty()
    }

    /// Finishes the derived series added during run `run` that are still computed over what it
    /// recorded before (its streams are about to end).
    pub fn run_stopping(&mut self, store: &mut Store, run: u64) {
        while let Some(k) = self.catch_ups.iter().position(|u| u.run() == run) {
            let mut up = self.catch_ups.remove(k).expect("found");
            if let Err(e) = up.finish(store, &mut self.deriver) {
                self.said = Some(format!("Derived/{}: derived from now on only: {e}", up.name()));
            }
        }
    }

    /// Stops computing derived series over what was shown (the store is replaced); one added
    /// during a run is derived from its next batch on.
    pub fn stop_computing(&mut self) {
        self.backfills.clear();
        self.catch_ups.drain(..).for_each(|u| u.abandon(&mut self.deriver));
    }

    /// Is a derived series being computed in the background?
    pub fn computing(&self) -> bool {
        !self.backfills.is_empty() || !self.catch_ups.is_empty()
    }

    /// The status bar's text while a derived series is computed over the run so far or the
    /// recording shown: "deriving NAME … 37 %" and the share done.
    pub fn progress(&self) -> Option<(String, f32)> {
        let (name, p) = match self.catch_ups.front() {
            Some(u) => (u.name(), u.progress()),
            None => self.backfills.front().map(|f| (f.name(), f.progress()))?,
        };
        Some((format!("deriving {name} … {:.0} %", (p * 100.0).floor().min(99.0)), p as f32))
    }
}

/// A name for a series made from `key`'s: its metric's letters, digits and underscores
/// (`avg_GpuUtilization`).
pub(crate) fn name_of(key: &SeriesKey) -> String {
    key.metric.chars().filter(|c| c.is_alphanumeric() || *c == '_').collect()
}
