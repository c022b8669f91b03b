//! Sampler events into the window, at most `MAX_EVENTS` a frame (the rest wait for the next).
//! Runs and samples go through the view's [`Ingest`](zescope_model::view::Ingest) into the store, like
//! everywhere else (never while a recording is shown: see `view::Activity`); this adds what only the window does with them: the selection reconciled with the devices
//! found (`reconcile.rs`), run
//! history, placing new series in panes, counting samples that arrive while the view is frozen,
//! and errors as banners.

use zescope_model::view::TimeView;
use zescope_sampler::Event;
use zescope_store::Store;

use super::banner::{UiError, UiErrorKind};
use super::link::SamplerLink;
use super::panes::Panes;
use super::reconcile::reconcile;
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
    takes_samples: bool,
    state: &mut AppState,
    store: &mut Store,
    view: &mut TimeView,
    panes: &mut Panes,
    markers: &mut Vec<zescope_model::markers::Received>,
) -> Drained {
    let mut d = Drained::default();
    while d.events < MAX_EVENTS {
        let Some(ev) = link.try_recv() else { return d };
        d.events += 1;
        match ev {
            Event::Inventory(inv) => {
                // A server's devices are not this machine's: the user's remembered choice is kept
                // as it is for the next local run (a remote run shows the server's choice).
                let remote = inv.source.as_ref().is_some_and(crate::status::is_remote);
                if let Some(msg) = (!remote).then(|| reconcile(state, panes, &inv)).flatten() {
                    state.push_error(UiError::new(
                        UiErrorKind::Settings,
                        msg,
                        "check the ticked groups on the left and press Start",
                    ));
                }
                state.inventory = Some(inv);
            }
            Event::RunStarted(info) if !takes_samples => {
                // A run that was asked for before a file was opened: the file is not mixed
                // with live data, so the run stops and its samples are dropped as late.
                log::info!("run {} started while a recording is shown: stopped", info.run);
                link.send(zescope_sampler::Command::Stop);
            }
            Event::RunStarted(mut info) => {
                if let Err(e) = state.derived.deriver.run_started(&mut info) {
                    state.push_error(UiError::new(
                        UiErrorKind::Derived,
                        e,
                        "View → New derived series…: the run has no such series; this run derives none",
                    ));
                }
                // A remote server's run: the source panel shows what it samples (the user's own
                // choice is kept aside for the settings).
                let source = state.inventory.as_ref().and_then(|i| i.source.as_ref());
                let remote = source.is_some_and(crate::status::is_remote);
                if remote {
                    let theirs = crate::state::Selection::of_run(&info.config, state.inventory.as_ref());
                    let own = std::mem::replace(&mut state.selection, theirs);
                    state.own_selection.get_or_insert(own);
                }
                let run = state.ingest.run_started(store, info);
                state.triggers.run_started(&run.info);
                let keys = run.keys.concat();
                state.history.run_started(&run.info, state.inventory.as_ref(), &run.streams);
                state.last_device = Some(run.info.devices.join(" + "));
                if remote {
                    panes.remote_run(|k| state.ingest.series.contains_key(k));
                }
                panes.place_new(&keys, state);
                state.health = None;
                state.banners.retain(|b| !b.error.cleared_by_start());
            }
            Event::Samples(b) => {
                // The derived batches it drives follow it, filed as any other.
                let derived = state.derived.deriver.samples(&b);
                for b in std::iter::once(b).chain(derived) {
                    match state.ingest.samples(store, &b) {
                        Ok(n) => {
                            d.samples += n;
                            view.on_samples(n);
                            // Evaluated on ingest: every sample, whatever the plots show.
                            state.triggers.samples(&b);
                        }
                        Err(e) => state.push_error(UiError::new(
                            UiErrorKind::Store,
                            e.to_string(),
                            "stop the run and report this",
                        )),
                    }
                }
            }
            Event::Health(s) => {
                if state.ingest.run.as_ref().is_some_and(|r| r.info.run == s.run) {
                    state.health = Some(s);
                }
            }
            Event::Processes(p) if takes_samples => {
                let info = state.ingest.run.as_ref().map(|r| &r.info);
                state.history.processes.ingest_of_run(&p, info, &zescope_model::view::processes::ProcFs);
            }
            Event::Processes(_) => {}
            Event::RunStopped { run, .. } => {
                state.history.processes.run_stopped(run);
                state.derived.run_stopping(store, run);
                state.ingest.run_stopped(store, run);
                state.triggers.eval.run_stopped(run);
            }
            Event::Error(e) => state.push_error(e),
            Event::Notice { run, message } => state.ingest.notice(run, message),
            Event::Synced(_) => {}
            // A remote run's markers: filed with the markers socket's (`take_markers`).
            Event::Marker { kind, t_ns, name } => markers.push(zescope_model::markers::Received { kind, t_ns, name }),
            Event::ShutDown => {
                state.sampler_gone = true;
                d.shut_down = true;
            }
        }
    }
    d.more = true;
    d
}
