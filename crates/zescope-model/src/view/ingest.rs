//! The one path from sampler events to store writes, shared by the window (`zescope-window`'s
//! `drain.rs`), `zescope record` and the headless session recorder (`session::Recorder`), and
//! `zescope serve`.
//!
//! [`Ingest`] keeps what a consumer of the sampler needs to file its batches: the run in
//! progress (its store streams, one per metric group, and its series keys) and every counter
//! seen so far with its store series (one per run that sampled it). Contract:
//!
//! - [`Ingest::run_started`] opens one store stream per stream of the run, in the run's order,
//!   and files its series under their [`SeriesKey`]s (a counter seen in an earlier run gets one
//!   more store series); a new run replaces the one in progress.
//! - [`Ingest::samples`] appends a batch of the run in progress to its stream (a batch of another
//!   run, or of a stream the run does not have, is ignored: it is late), marking a gap first when
//!   the sampler says one came before; it returns how many samples were stored.
//! - [`Ingest::run_stopped`] ends the run's streams, if it is the run in progress.
//! - [`Ingest::notice`] adds what the run says mid-run (a feature turned off, a value out of
//!   range, a remote link's drop) to its `info.notices` (those known at its start are there
//!   already).
//!
//! What else the caller does with an event (inventory, statistics, errors, run history, pane
//! placement) is the caller's. The store is passed in rather than owned, since the window
//! replaces its store when it opens a session.

use std::collections::BTreeMap;

use zescope_sampler::{RunInfo, SampleBatch};
use zescope_store::{Store, StoreError, StreamId};

use super::series::{SeriesEntry, SeriesKey, stream_desc};

/// The run in progress.
#[derive(Clone, Debug)]
pub struct ActiveRun {
    /// What the sampler announced at the run's start (`Event::RunStarted`), plus the notices
    /// added since by [`Ingest::notice`].
    pub info: RunInfo,
    /// Its store streams, in the order of `info.streams`.
    pub streams: Vec<StreamId>,
    /// Its series keys, per stream.
    pub keys: Vec<Vec<SeriesKey>>,
}

/// Sampler events into store writes (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Ingest {
    /// Every counter seen so far, with its store series.
    pub series: BTreeMap<SeriesKey, SeriesEntry>,
    /// Series keys in the order they were first seen (stream order within a run).
    pub order: Vec<SeriesKey>,
    /// The run in progress; `None` before the first run and after the run in progress stopped.
    pub run: Option<ActiveRun>,
    /// Samples stored since this ingest began (or was reset).
    pub samples_total: u64,
}

impl Ingest {
    /// Are series of more than one device known (legends then name the device)?
    pub fn several_devices(&self) -> bool {
        let mut devices = self.order.iter().map(|k| &k.device);
        devices.next().is_some_and(|first| devices.any(|d| d != first))
    }

    /// Opens the run's streams in `store` and files its series; returns the run.
    pub fn run_started(&mut self, store: &mut Store, info: RunInfo) -> &ActiveRun {
        let mut streams = Vec::with_capacity(info.streams.len());
        let mut keys = Vec::with_capacity(info.streams.len());
        for s in &info.streams {
            let id = store.begin_stream(stream_desc(&info, s));
            keys.push(file_series(&mut self.series, &mut self.order, store, id, s));
            streams.push(id);
        }
        self.run.insert(ActiveRun { info, streams, keys })
    }

    /// Adds stream `s` (a derived series' stream, `derive::Deriver::add`, already pushed onto
    /// the run's `info.streams` by it) to the run in progress: opens its store stream and files
    /// its series; returns their keys (empty without a run in progress).
    pub fn add_stream(&mut self, store: &mut Store, s: &zescope_sampler::StreamInfo) -> Vec<SeriesKey> {
        let Some(run) = self.run.as_mut() else { return Vec::new() };
        if run.info.streams.len() == run.streams.len() {
            run.info.streams.push(s.clone());
        }
        let id = store.begin_stream(stream_desc(&run.info, s));
        let ks = file_series(&mut self.series, &mut self.order, store, id, s);
        run.streams.push(id);
        run.keys.push(ks.clone());
        ks
    }

    /// Files the series of stream `s`, opened in `store` as `id` apart from any run in progress
    /// (a derived series computed over recorded data, `derive::Backfill`); returns their keys.
    pub fn file_stream(&mut self, store: &Store, id: StreamId, s: &zescope_sampler::StreamInfo) -> Vec<SeriesKey> {
        file_series(&mut self.series, &mut self.order, store, id, s)
    }

    /// Stores a batch of the run in progress; returns the samples stored (0 for a late batch).
    pub fn samples(&mut self, store: &mut Store, b: &SampleBatch) -> Result<u64, StoreError> {
        let Some(&stream) = self.run.as_ref().filter(|r| r.info.run == b.run).and_then(|r| r.streams.get(b.stream))
        else {
            return Ok(0);
        };
        if b.gap_before {
            store.mark_gap(stream);
        }
        store.append(stream, &b.timestamps, &b.values)?;
        let n = b.timestamps.len() as u64;
        self.samples_total += n;
        Ok(n)
    }

    /// Adds a notice of run `run` (ignored for another run).
    pub fn notice(&mut self, run: u64, message: String) {
        if let Some(r) = self.run.as_mut().filter(|r| r.info.run == run) {
            r.info.notices.push(message);
        }
    }

    /// Ends the streams of run `run` if it is the one in progress; returns whether it was.
    pub fn run_stopped(&mut self, store: &mut Store, run: u64) -> bool {
        match self.run.take_if(|r| r.info.run == run) {
            Some(r) => {
                r.streams.into_iter().for_each(|s| store.end_stream(s));
                true
            }
            None => false,
        }
    }
}

/// Files the series of stream `s` (store stream `id`) under their keys, a key not seen before at
/// the end of `order`; returns the keys in the stream's order.
fn file_series(
    series: &mut BTreeMap<SeriesKey, SeriesEntry>,
    order: &mut Vec<SeriesKey>,
    store: &Store,
    id: StreamId,
    s: &zescope_sampler::StreamInfo,
) -> Vec<SeriesKey> {
    let mut ks = Vec::with_capacity(s.series.len());
    for (i, x) in s.series.iter().enumerate() {
        let key = SeriesKey { device: s.device.clone(), group: s.group.clone(), metric: x.name.clone() };
        if !series.contains_key(&key) {
            order.push(key.clone());
        }
        let entry = series.entry(key.clone()).or_insert_with(|| SeriesEntry { info: x.clone(), ids: Vec::new() });
        entry.info = x.clone();
        entry.ids.extend(store.series_id(id, i));
        ks.push(key);
    }
    ks
}

#[cfg(test)]
mod tests {
    use super::*;
    use zescope_sampler::layout::Kind;
    use zescope_sampler::{DevicePath, RunConfig, SeriesInfo, StreamInfo};

    fn series(name: &str) -> SeriesInfo {
        SeriesInfo { name: name.into(), description: String::new(), unit: "W".into(), kind: Kind::Gauge, wrap: None }
    }

    fn run(run: u64, groups: &[(&str, &[&str])]) -> RunInfo {
        RunInfo {
            run,
            config: RunConfig::single(
                DevicePath { driver: 0, device: 0, sub_device: None },
                groups.iter().map(|g| g.0.to_owned()).collect(),
                std::time::Duration::from_millis(1),
            ),
            devices: vec!["dev".into()],
            simulated: true,
            streams: groups
                .iter()
                .enumerate()
                .map(|(index, (g, ms))| StreamInfo {
                    index,
                    target: 0,
                    device: "dev".into(),
                    group: g.to_string(),
                    layout: "l".into(),
                    series: ms.iter().map(|m| series(m)).collect(),
                    read_path: zescope_sampler::ReadPath::Mapped,
                })
                .collect(),
            imports: groups.len(),
            notices: Vec::new(),
        }
    }

    fn batch(run: u64, stream: usize, t: &[i64], values: &[f64], gap_before: bool) -> SampleBatch {
        SampleBatch { run, stream, timestamps: t.to_vec(), values: values.to_vec(), gap_before }
    }

    #[test]
    fn a_run_opens_a_stream_per_group_and_files_its_series() {
        let mut store = Store::new(1 << 24);
        let mut ingest = Ingest::default();
        let r = ingest.run_started(&mut store, run(1, &[("A", &["x", "y"]), ("B", &["z"])]));
        assert_eq!(r.streams.len(), 2);
        assert_eq!(r.keys[1][0].label(), "B/z");
        let labels: Vec<String> = ingest.order.iter().map(SeriesKey::label).collect();
        assert_eq!(labels, ["A/x", "A/y", "B/z"]);
        assert_eq!(store.streams().count(), 2);

        assert_eq!(ingest.samples(&mut store, &batch(1, 1, &[10, 20], &[1.0, 2.0], false)).unwrap(), 2);
        assert_eq!(ingest.samples(&mut store, &batch(1, 0, &[15], &[1.0, 2.0], false)).unwrap(), 1);
        assert_eq!(ingest.samples_total, 3);
        let z = ingest.series[&ingest.order[2]].ids[0];
        assert_eq!(store.sample_count(z.stream()), 2);
    }

    #[test]
    fn late_batches_are_ignored_and_stopping_ends_the_streams() {
        let mut store = Store::new(1 << 24);
        let mut ingest = Ingest::default();
        ingest.run_started(&mut store, run(1, &[("A", &["x"])]));
        assert_eq!(ingest.samples(&mut store, &batch(7, 0, &[1], &[1.0], false)).unwrap(), 0, "another run");
        assert_eq!(ingest.samples(&mut store, &batch(1, 3, &[1], &[1.0], false)).unwrap(), 0, "no such stream");
        assert!(!ingest.run_stopped(&mut store, 7));
        assert!(ingest.run_stopped(&mut store, 1));
        assert!(ingest.run.is_none());
        assert!(store.streams().all(|s| s.ended));
        assert_eq!(ingest.samples(&mut store, &batch(1, 0, &[2], &[1.0], false)).unwrap(), 0, "after the stop");
    }

    #[test]
    fn notices_join_the_run_they_belong_to() {
        let mut store = Store::new(1 << 24);
        let mut ingest = Ingest::default();
        let mut info = run(1, &[("A", &["x"])]);
        info.notices.push("run-time metrics enable is off".into());
        ingest.run_started(&mut store, info);
        ingest.notice(1, "lost-device detection is off".into());
        ingest.notice(9, "of another run".into());
        let notices = &ingest.run.as_ref().unwrap().info.notices;
        assert_eq!(notices, &["run-time metrics enable is off", "lost-device detection is off"]);
    }

    #[test]
    fn a_counter_seen_again_gets_another_store_series() {
        let mut store = Store::new(1 << 24);
        let mut ingest = Ingest::default();
        ingest.run_started(&mut store, run(1, &[("A", &["x"])]));
        ingest.run_stopped(&mut store, 1);
        ingest.run_started(&mut store, run(2, &[("A", &["x"])]));
        assert_eq!(ingest.order.len(), 1);
        assert_eq!(ingest.series[&ingest.order[0]].ids.len(), 2);
    }

    #[test]
    fn refused_samples_are_an_error() {
        let mut store = Store::new(1 << 24);
        let mut ingest = Ingest::default();
        ingest.run_started(&mut store, run(1, &[("A", &["x", "y"])]));
        assert!(ingest.samples(&mut store, &batch(1, 0, &[1], &[1.0], false)).is_err(), "one value for two series");
        assert_eq!(ingest.samples_total, 0);
    }
}
