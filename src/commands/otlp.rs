//! `--otlp` of `serve` and `record`: the run pushed to an OpenTelemetry Collector
//! (`zescope-otlp`, docs/otel.md).
//!
//! [`Push`] sits in the run loop's handler, on the consumer's thread: when the run starts it
//! starts an exporter for the run's OTel plan; on each batch it keeps the newest value of each of
//! the batch's series, with the time it was read (the sample's `CLOCK_MONOTONIC` time on the wall
//! clock, through the clocks read together when the run started, as a saved session relates
//! them), in a slot the exporter reads at its export interval (a copy under a lock held for that
//! copy only). A streamer's count is kept as the running sum of its reports' counts
//! (`zescope_openmetrics::Totals`), exported as a monotonic sum. Nothing here waits on the
//! collector: the exporter's thread posts, and counts what a collector did not take.

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

/// The newest value of each series of the run and the time it was read.
#[derive(Default)]
struct Slot {
    values: Vec<f64>,
    times: Vec<u64>,
}

/// The export of a run, fed by the consumer.
pub struct Push {
    config: Config,
    exporter: Option<Exporter>,
    /// The newest values and the times they were read (ns since the Unix epoch), read by the
    /// exporter.
    slot: Arc<Mutex<Slot>>,
    /// Wall clock minus `CLOCK_MONOTONIC`, read when the run started (ns).
    wall_minus_monotonic: i64,
    /// Where each stream's values start, and how many it has.
    streams: Vec<(usize, usize)>,
}

impl Push {
    /// Nothing exported until [`Push::started`].
    pub fn new(config: Config) -> Push {
        Push { config, exporter: None, slot: Arc::default(), wall_minus_monotonic: 0, streams: Vec::new() }
    }

    /// The run started: exports `plan` (laid out by `catalog`) from now on; errs when the
    /// exporter cannot start (its endpoint).
    pub fn started(&mut self, info: &RunInfo, catalog: &Catalog, plan: Arc<Plan>) -> Result<(), String> {
        self.stop();
        *self.slot.lock().unwrap_or_else(|p| p.into_inner()) =
            Slot { values: vec![f64::NAN; catalog.width], times: vec![0; catalog.width] };
        let clocks = zescope_model::session::ClockRecord::now();
        self.wall_minus_monotonic = clocks.realtime_ns - clocks.monotonic_ns;
        self.streams = info
            .streams
            .iter()
            .enumerate()
            .map(|(s, st)| (catalog.stream_starts.get(s).copied().unwrap_or(usize::MAX), st.series.len()))
            .collect();
        let slot = Arc::clone(&self.slot);
        let source: zescope_otlp::Source = Arc::new(move |visit: &mut dyn FnMut(&[f64], &[u64])| {
            let (values, times) = {
                let s = slot.lock().unwrap_or_else(|p| p.into_inner());
                (s.values.clone(), s.times.clone())
            };
            visit(&values, &times);
        });
        self.exporter = Some(Exporter::start(&self.config, plan, source)?);
        Ok(())
    }

    /// Keeps the newest readable value of each series of `b`, and when it was read.
    pub fn samples(&mut self, b: &SampleBatch) {
        let Some(&(start, k)) = self.streams.get(b.stream) else { return };
        if k == 0 || b.values.len() < k {
            return;
        }
        let offset = self.wall_minus_monotonic;
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let Slot { values, times } = &mut *slot;
        let (Some(values), Some(times)) = (values.get_mut(start..start + k), times.get_mut(start..start + k)) else {
            return;
        };
        for (i, (v, t)) in values.iter_mut().zip(times).enumerate() {
            let newest = b.values.chunks_exact(k).zip(&b.timestamps).rev().find(|(row, _)| !row[i].is_nan());
            if let Some((row, &at)) = newest {
                *v = row[i];
                *t = u64::try_from(at.saturating_add(offset)).unwrap_or(0);
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
