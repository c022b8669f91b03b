//! The window's derived series (View → New derived series…, or a legend row's "Rate of…",
//! "Ratio to…", "Moving average…"): definitions (`docs/derived-series.md`) bound to each run as
//! it starts, and to the run in progress when added, evaluated on every batch `drain.rs` files
//! (`derive::Deriver`), their values filed into the store as series like any other.

use zescope_model::derive::{Derivation, Deriver};
use zescope_model::view::Ingest;
use zescope_model::view::series::SeriesKey;
use zescope_sampler::RunInfo;
use zescope_store::Store;

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
}

impl Derived {
    /// What is wrong with `text` as a definition for `run` (the column where it does not parse,
    /// or the series it names that the run lacks, with what they could mean); `None`: fine.
    pub fn check(&self, run: Option<&RunInfo>) -> Option<String> {
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
        let mut info = run?.clone();
        Deriver::new(vec![def]).run_started(&mut info).err()
    }

    /// Adds the definition written: to the run in progress (its series filed into `store` and
    /// returned, to place in panes) and to every run from now on.
    pub fn add(
        &mut self,
        ingest: &mut Ingest,
        store: &mut Store,
        history: &mut zescope_model::session::RunHistory,
    ) -> Vec<SeriesKey> {
        let def = match Derivation::parse(self.text.trim()) {
            Ok(d) => d,
            Err(e) => {
                self.said = Some(e.to_string());
                return Vec::new();
            }
        };
        let Some(run) = ingest.run.as_mut() else {
            self.said = Some(match self.deriver.define(def) {
                Ok(()) => "no run in progress: derived from the next run on".into(),
                Err(e) => e,
            });
            self.text.clear();
            return Vec::new();
        };
        let run_id = run.info.run;
        match self.deriver.add(def, &mut run.info) {
            Ok(s) => {
                let keys = ingest.add_stream(store, &s);
                if let Some(id) = ingest.run.as_ref().and_then(|r| r.streams.last()) {
                    history.stream_added(run_id, &s, *id);
                }
                self.said = None;
                self.text.clear();
                keys
            }
            Err(e) => {
                self.said = Some(e);
                Vec::new()
            }
        }
    }
}
