//! `--otlp` of `serve` and `record`: the run pushed to an OpenTelemetry Collector
//! (`zescope-otlp`, docs/otel.md).
//!
//! [`Push`] sits in the run loop's handler, on the consumer's thread: when the run starts it
//! starts an exporter for the run's OTel plan; on each batch it keeps the newest value of each of
//! the batch's series in a slot the exporter reads at its export interval (a copy under a lock
//! held for that copy only). Nothing here waits on the collector: the exporter's threads post,
//! and count what a collector did not take.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use zescope_openmetrics::otel::Plan;
use zescope_openmetrics::{Catalog, RunDescription};
use zescope_otlp::{Config, Exporter, Stats};
use zescope_sampler::{DeviceEntry, RunInfo, SampleBatch};

/// How long the last export may take when the run ends.
const LAST_EXPORT: Duration = Duration::from_secs(5);

/// The run's catalog and OTel plan (what serve plans for its page too).
pub fn plan(info: &RunInfo, inventory: &[DeviceEntry]) -> (Catalog, Plan) {
    let run = RunDescription::live(info, inventory);
    let catalog = Catalog::new(&run);
    let plan = crate::commands::serve::xpumd::plan(&run, &catalog, info, inventory);
    (catalog, plan)
}

/// The export of a run, fed by the consumer.
pub struct Push {
    config: Config,
    exporter: Option<Exporter>,
    /// The newest values, read by the exporter.
    slot: Arc<Mutex<Vec<f64>>>,
    /// Where each stream's values start, and how many it has.
    streams: Vec<(usize, usize)>,
}

impl Push {
    /// Nothing exported until [`Push::started`].
    pub fn new(config: Config) -> Push {
        Push { config, exporter: None, slot: Arc::default(), streams: Vec::new() }
    }

    /// The run started: exports `plan` (laid out by `catalog`) from now on; errs when the
    /// exporter cannot start (its endpoint).
    pub fn started(&mut self, info: &RunInfo, catalog: &Catalog, plan: Arc<Plan>) -> Result<(), String> {
        self.stop();
        *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = vec![f64::NAN; catalog.width];
        self.streams = info
            .streams
            .iter()
            .enumerate()
            .map(|(s, st)| (catalog.stream_starts.get(s).copied().unwrap_or(usize::MAX), st.series.len()))
            .collect();
        let slot = Arc::clone(&self.slot);
        let source: zescope_otlp::Source = Arc::new(move |visit: &mut dyn FnMut(&[f64])| {
            let values = slot.lock().unwrap_or_else(|p| p.into_inner()).clone();
            visit(&values);
        });
        self.exporter = Some(Exporter::start(&self.config, plan, source)?);
        Ok(())
    }

    /// Keeps the newest readable value of each series of `b`.
    pub fn samples(&mut self, b: &SampleBatch) {
        let Some(&(start, k)) = self.streams.get(b.stream) else { return };
        if k == 0 || b.values.len() < k {
            return;
        }
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let Some(values) = slot.get_mut(start..start + k) else { return };
        for (i, v) in values.iter_mut().enumerate() {
            if let Some(x) = b.values.chunks_exact(k).rev().map(|row| row[i]).find(|x| !x.is_nan()) {
                *v = x;
            }
        }
    }

    /// The running export's counts.
    pub fn stats(&self) -> Option<Arc<Stats>> {
        self.exporter.as_ref().map(Exporter::stats)
    }

    /// Exports a last time and stops (waiting at most a few seconds for the collector).
    pub fn stop(&mut self) {
        if let Some(e) = self.exporter.take() {
            e.shutdown(LAST_EXPORT);
        }
    }
}

impl Drop for Push {
    fn drop(&mut self) {
        self.stop();
    }
}
