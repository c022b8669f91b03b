//! `zescope export --openmetrics`: a saved session as OpenMetrics text with timestamps, for
//! `promtool tsdb create-blocks-from openmetrics` to backfill into Prometheus.
//!
//! Each run of the session is described from the session's records ([`described`]: its devices
//! from `runs` and `devices`, its streams with how each was read) and planned by
//! `zescope-openmetrics`' [`Catalog`], the planner `zescope serve` plans its live run with, so
//! backfilled history and live scrapes of the same configuration are one series: one family
//! name, one label set. [`Backfill`] writes the text. Times are the recording's wall clock:
//! `Recorded::started_unix_ms` at the session's time origin, plus the monotonic time since.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use zescope_openmetrics::{Backfill, Catalog, DeviceDescription, RunDescription, SeriesDescription, StreamDescription};
use zescope_store::{Store, StreamId};

use super::{Format, Input, Scope};
use crate::session::{DeviceRecord, SeriesMeta, Session};

/// The session's runs as the planner takes them, in the order their first streams come, each
/// with the indices of its streams in `session.streams` (in the run's stream order). A run's
/// devices are its `runs` records' devices in order; a stream whose device no record of its run
/// names (captured outside a run) adds the first device of that name, or one known by name only.
/// Every look-up is hashed: a file may hold 2^20 devices and runs and 4096 streams.
pub(crate) fn described(session: &Session) -> Vec<(RunDescription, Vec<usize>)> {
    let mut records: HashMap<u64, Vec<&DeviceRecord>> = HashMap::new();
    for r in &session.runs {
        if let Some(d) = session.devices.get(r.device as usize) {
            records.entry(r.run).or_default().push(d);
        }
    }
    let mut by_name: HashMap<&str, &DeviceRecord> = HashMap::new();
    for d in &session.devices {
        by_name.entry(d.name.as_str()).or_insert(d);
    }
    // Per run: its description, its streams' indices, its devices by name.
    let mut runs: Vec<(RunDescription, Vec<usize>, HashMap<String, usize>)> = Vec::new();
    let mut run_at: HashMap<u64, usize> = HashMap::new();
    for (i, s) in session.streams.iter().enumerate() {
        let meta = &s.meta;
        let at = *run_at.entry(meta.run).or_insert_with(|| {
            let devices: Vec<DeviceDescription> =
                records.get(&meta.run).into_iter().flatten().map(|d| device(d)).collect();
            let mut names = HashMap::new();
            for (k, d) in devices.iter().enumerate() {
                names.entry(d.name.clone()).or_insert(k);
            }
            runs.push((RunDescription { devices, streams: Vec::new() }, Vec::new(), names));
            runs.len() - 1
        });
        let (run, indices, names) = &mut runs[at];
        let device = *names.entry(meta.device.clone()).or_insert_with(|| {
            run.devices.push(match by_name.get(meta.device.as_str()) {
                Some(d) => device(d),
                None => DeviceDescription {
                    name: meta.device.clone(),
                    identity: None,
                    pci_bdf: None,
                    simulated: session.source.simulated,
                },
            });
            run.devices.len() - 1
        });
        let series = meta.series.iter().map(series).collect();
        let read_path = meta.read_path();
        run.streams.push(StreamDescription { device, group: meta.group.clone(), read_path, series });
        indices.push(i);
    }
    runs.into_iter().map(|(run, indices, _)| (run, indices)).collect()
}

/// A recorded series as the planner takes it.
fn series(x: &SeriesMeta) -> SeriesDescription {
    let kind = x.kind.kind().0;
    SeriesDescription { name: x.metric.clone(), description: x.description.clone(), unit: x.unit.clone(), kind }
}

/// A recorded device as the planner takes it: its identity is known when the file has its UUID
/// or driver version (a device the inventory described; both are empty/0 otherwise).
fn device(d: &DeviceRecord) -> DeviceDescription {
    let known = !d.uuid.is_empty() || d.driver_version != 0;
    DeviceDescription {
        name: d.name.clone(),
        identity: known.then(|| (d.uuid.clone(), d.driver_version)),
        pci_bdf: d.pci_bdf.clone(),
        simulated: d.simulated,
    }
}

/// Writes `session` (restored into `store`, its streams as `streams`) to `path`; returns the
/// number of samples written.
pub fn openmetrics(session: &Session, store: &Store, streams: &[StreamId], path: &Path) -> Result<u64, String> {
    let start_ms = session.recorded.started_unix_ms;
    if start_ms <= 0 {
        return Err("the session does not say when it was recorded (recorded.started_unix_ms is 0), so its \
                    samples cannot be given timestamps"
            .into());
    }
    let origin = store.origin_ns().unwrap_or(0);
    let runs = described(session);
    let mut catalog = Catalog::default();
    let mut order = Vec::new();
    for (run, indices) in &runs {
        catalog.add_run(run);
        order.extend(indices.iter().copied());
    }
    let mut backfill = Backfill::new(&catalog);
    for (stream, &i) in order.iter().enumerate() {
        let Some(&id) = streams.get(i) else { continue };
        store.for_each_raw_row(id, |t, row| {
            backfill.row(stream, start_ms + (t - origin).div_euclid(1_000_000), row);
        });
    }
    let (text, written) = backfill.finish();
    if written == 0 {
        return Err("the session holds no samples".into());
    }
    crate::session::write_atomic(path, |file| {
        file.write_all(text.as_bytes()).map_err(|e| crate::session::SessionError::io(path, "cannot write", e))
    })
    .map_err(|e| e.to_string())?;
    Ok(written)
}

/// Every sample as timestamped OpenMetrics text (`--openmetrics`).
pub struct OpenMetrics;

impl Format for OpenMetrics {
    fn key(&self) -> &'static str {
        "openmetrics"
    }
    fn value_name(&self) -> &'static str {
        "OUT.om"
    }
    fn help(&self) -> &'static str {
        "Write every sample of the session as timestamped OpenMetrics text here, for `promtool tsdb \
         create-blocks-from openmetrics` (names as `zescope serve` gives them)"
    }
    fn extension(&self) -> &'static str {
        "om"
    }
    fn name(&self) -> &'static str {
        "OpenMetrics"
    }
    fn title(&self) -> &'static str {
        "OpenMetrics text"
    }
    fn scope(&self) -> Scope {
        Scope::Session
    }
    fn in_window(&self) -> bool {
        false
    }
    fn write(&self, input: &Input<'_>, path: &Path, _progress: &dyn Fn(f32)) -> Result<String, String> {
        let n = openmetrics(input.session, input.store, input.streams, path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(format!("{} ({})", path.display(), crate::view::text::plural(n, "sample", "samples")))
    }
}

#[cfg(test)]
#[path = "openmetrics_tests.rs"]
mod tests;
