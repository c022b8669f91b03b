//! Sampler events into the window, at most `MAX_EVENTS` a frame (the rest wait for the next).
//! Runs and samples go through the view's [`Ingest`](crate::view::Ingest) into the store, like
//! everywhere else; this adds what only the window does with them: the default selection, run
//! history, placing new series in panes, counting samples that arrive while the view is frozen,
//! and errors as banners.

use crate::sampler::Event;
use crate::store::Store;
use crate::view::TimeView;

use super::banner::{UiError, UiErrorKind};
use super::link::SamplerLink;
use super::panes::Panes;
use super::state::AppState;

const MAX_EVENTS: usize = 2000;

/// What draining found, for the repaint decision.
#[derive(Default, Debug, Clone, Copy)]
pub struct Drained {
    pub events: usize,
    pub samples: u64,
    pub more: bool,
    pub shut_down: bool,
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
                let run = state.ingest.run_started(store, info);
                let keys = run.keys.concat();
                state.history.run_started(&run.info, state.inventory.as_ref(), &run.streams);
                state.last_device = Some(run.info.device.clone());
                panes.place_new(&keys, state);
                state.stats = None;
            }
            Event::Samples(b) => match state.ingest.samples(store, &b) {
                Ok(n) => {
                    d.samples += n;
                    view.on_samples(n);
                }
                Err(e) => state.push_error(UiError::new(
                    UiErrorKind::Store,
                    format!("samples could not be stored: {e}"),
                    "stop the run and report this",
                )),
            },
            Event::Stats(s) => {
                if state.ingest.run.as_ref().is_some_and(|r| r.info.run == s.run) {
                    state.stats = Some(s);
                }
            }
            Event::RunStopped { run, .. } => {
                state.ingest.run_stopped(store, run);
            }
            Event::Error(e) => state.push_error(e),
            Event::Notice { run, message } => state.ingest.notice(run, message),
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
