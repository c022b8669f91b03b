//! Recording a session headless: sampler events in, a session file out.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::app::state::{SeriesEntry, SeriesKey};
use crate::sampler::{Inventory, RunInfo, SampleBatch};
use crate::store::{Store, StreamId};

use super::{Capture, RunHistory, SaveJob, Session};

/// A session built from sampler events without a window (`zescope record --out run.ron`): the
/// same store, run history and default pane layout the window would have, saved atomically every
/// `SESSION_CHECKPOINT` (in the background) and at the end.
pub struct Recorder {
    path: PathBuf,
    inventory: Inventory,
    store: Store,
    history: RunHistory,
    series: BTreeMap<SeriesKey, SeriesEntry>,
    /// Series keys in the order their streams started.
    keys: Vec<SeriesKey>,
    run: Option<(u64, Vec<StreamId>)>,
    job: Option<SaveJob>,
    last_save: Instant,
}

const SESSION_CHECKPOINT: Duration = Duration::from_secs(30);

impl Recorder {
    pub fn new(path: PathBuf, inventory: Inventory) -> Recorder {
        Recorder {
            path,
            inventory,
            store: Store::with_default_cap(),
            history: Default::default(),
            series: Default::default(),
            keys: Vec::new(),
            run: None,
            job: None,
            last_save: Instant::now(),
        }
    }

    pub fn started(&mut self, info: &RunInfo) {
        let mut ids = Vec::new();
        for s in &info.streams {
            let id = self.store.begin_stream(crate::app::ingest::stream_desc(info, s));
            for (k, x) in s.series.iter().enumerate() {
                let key = SeriesKey { device: info.device.clone(), group: s.group.clone(), metric: x.name.clone() };
                if !self.keys.contains(&key) {
                    self.keys.push(key.clone());
                }
                let e = self.series.entry(key).or_insert_with(|| SeriesEntry { info: x.clone(), ids: Vec::new() });
                e.ids.extend(self.store.series_id(id, k));
            }
            ids.push(id);
        }
        self.history.run_started(info, Some(&self.inventory), &ids);
        self.run = Some((info.run, ids));
    }

    pub fn samples(&mut self, b: &SampleBatch) -> Result<(), String> {
        let Some(&id) = self.run.as_ref().filter(|r| r.0 == b.run).and_then(|r| r.1.get(b.stream)) else {
            return Ok(());
        };
        if b.gap_before {
            self.store.mark_gap(id);
        }
        self.store.append(id, &b.timestamps, &b.values).map_err(|e| format!("samples could not be stored: {e}"))
    }

    pub fn stopped(&mut self, run: u64) {
        if let Some((_, ids)) = self.run.take_if(|r| r.0 == run) {
            ids.into_iter().for_each(|id| self.store.end_stream(id));
        }
    }

    pub fn session(&self) -> Session {
        let layout = crate::export::default_layout(&self.keys, &self.series);
        let view = crate::app::timeview::TimeView::default();
        let ui = Capture { history: &self.history, layout: &layout, view: &view, markers: &[] };
        Session::capture(&self.store, ui)
    }

    pub fn checkpoint(&mut self) -> Result<(), String> {
        if let Some(Err(e)) = self.job.as_mut().and_then(|j| j.try_finish()) {
            return Err(e.to_string());
        }
        if self.job.as_ref().is_some_and(|j| !j.is_finished()) || self.last_save.elapsed() < SESSION_CHECKPOINT {
            return Ok(());
        }
        self.last_save = Instant::now();
        self.job = Some(SaveJob::spawn(self.session(), self.path.clone()));
        Ok(())
    }

    pub fn finish(&mut self) -> Result<(), String> {
        if let Some(job) = self.job.take() {
            let _ = job.wait();
        }
        super::save(&self.path, &self.session()).map_err(|e| e.to_string())
    }
}
