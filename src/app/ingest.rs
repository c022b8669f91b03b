//! Sampler events into the store and the UI state. Bounded work per frame: at most
//! `MAX_EVENTS` events are taken, the rest wait for the next frame.

use crate::sampler::{Event, RunInfo, SamplerError, StreamInfo};
use crate::store::{SeriesDesc, SeriesKind, Store, StreamDesc};

use super::link::SamplerLink;
use super::panes::Panes;
use super::state::{ActiveRun, AppState, SeriesEntry, SeriesKey};
use super::timeview::TimeView;

const MAX_EVENTS: usize = 2000;

/// What draining found, for the repaint decision.
#[derive(Default, Debug, Clone, Copy)]
pub struct Drained {
    pub events: usize,
    pub samples: u64,
    pub more: bool,
    pub shut_down: bool,
}

/// How the store describes one stream of a run (one per metric group).
pub fn stream_desc(info: &RunInfo, s: &StreamInfo) -> StreamDesc {
    StreamDesc {
        name: format!("{} / {} (run {})", info.device, s.group, info.run),
        series: s
            .series
            .iter()
            .map(|x| SeriesDesc {
                name: x.name.clone(),
                unit: x.unit.clone(),
                kind: match x.kind {
                    crate::layout::Kind::Gauge => SeriesKind::Gauge,
                    crate::layout::Kind::Cumulative => SeriesKind::Cumulative { wrap: x.wrap },
                },
            })
            .collect(),
    }
}

pub fn drain(
    link: &dyn SamplerLink,
    state: &mut AppState,
    store: &mut Store,
    view: &mut TimeView,
    panes: &mut Panes,
) -> Drained {
    let mut d = Drained::default();
    while d.events < MAX_EVENTS {
        let Some(ev) = link.try_recv() else { return d };
        d.events += 1;
        match ev {
            Event::Inventory(inv) => {
                if state.selection.device.is_none_or(|p| !inv.devices.iter().any(|d| d.path == p)) {
                    // Pick the first device that can be sampled, and its first sampleable group.
                    if let Some(dev) = inv.devices.iter().find(|d| d.groups.iter().any(|g| g.unavailable.is_none())) {
                        state.selection.device = Some(dev.path);
                        state.selection.groups.clear();
                        if let Some(g) = dev.groups.iter().find(|g| g.unavailable.is_none()) {
                            state.selection.groups.insert(g.name.clone());
                        }
                    }
                }
                state.inventory = Some(inv);
            }
            Event::RunStarted(info) => {
                let mut streams = Vec::new();
                let mut keys = Vec::new();
                for s in &info.streams {
                    let id = store.begin_stream(stream_desc(&info, s));
                    let mut ks = Vec::new();
                    for (i, x) in s.series.iter().enumerate() {
                        let key =
                            SeriesKey { device: info.device.clone(), group: s.group.clone(), metric: x.name.clone() };
                        let entry = state
                            .series
                            .entry(key.clone())
                            .or_insert_with(|| SeriesEntry { info: x.clone(), ids: Vec::new() });
                        entry.info = x.clone();
                        if let Some(sid) = store.series_id(id, i) {
                            entry.ids.push(sid);
                        }
                        ks.push(key);
                    }
                    streams.push(id);
                    keys.push(ks);
                }
                state.history.run_started(&info, state.inventory.as_ref(), &streams);
                panes.place_new(&keys.concat(), state);
                state.last_device = Some(info.device.clone());
                state.stats = None;
                state.notices = info.notices.clone();
                state.run = Some(ActiveRun { info, streams, keys, started: std::time::Instant::now() });
            }
            Event::Samples(b) => {
                let Some(run) = state.run.as_ref().filter(|r| r.info.run == b.run) else { continue };
                let Some(&stream) = run.streams.get(b.stream) else { continue };
                if b.gap_before {
                    store.mark_gap(stream);
                }
                if let Err(e) = store.append(stream, &b.timestamps, &b.values) {
                    state.push_error(SamplerError {
                        kind: crate::sampler::ErrorKind::Internal,
                        message: format!("samples could not be stored: {e}"),
                        hint: None,
                    });
                    continue;
                }
                let n = b.timestamps.len() as u64;
                d.samples += n;
                state.samples_total += n;
                view.on_samples(n);
            }
            Event::Stats(s) => {
                if state.run.as_ref().is_some_and(|r| r.info.run == s.run) {
                    state.stats = Some(s);
                }
            }
            Event::RunStopped { run, .. } => {
                if let Some(r) = state.run.take_if(|r| r.info.run == run) {
                    for s in r.streams {
                        store.end_stream(s);
                    }
                }
            }
            Event::Error(e) => state.push_error(e),
            Event::Notice { run, message } => {
                if state.run.as_ref().is_some_and(|r| r.info.run == run) {
                    state.notices.push(message);
                }
            }
            Event::Synced(_) => {}
            Event::ShutDown => {
                state.sampler_gone = true;
                d.shut_down = true;
            }
        }
    }
    d.more = true;
    d
}
