//! The window on a remote run (`zescope --connect HOST:PORT`): a thread that speaks the sampler's
//! protocol to the window ([`zescope_sampler::SamplerHandle::from_parts`]) and is fed by the
//! live feed's client ([`super::client::Follower`]), so the window drains, ingests and draws a
//! remote run exactly as a local one.
//!
//! - The inventory comes first: its source's description says `REMOTE HOST:PORT` (the window
//!   shows it where it names the source), with the run's devices once the hello came (an empty
//!   inventory, "connecting", before).
//! - The feed's events become the sampler's (`RunStarted`, `Samples`, `Health`, `Notice`,
//!   `Error`, `RunStopped`). The link dropping and coming back are notices: "REMOTE HOST:PORT:
//!   ... reconnecting" and "... reconnected".
//! - It is read-only: `Start`, `Stop`, `SetInterval`, `Pause`, `Resume` and `Refresh` change
//!   nothing on the server (a notice says so, once); `Sync` is answered; `Shutdown` ends it.

use std::cell::RefCell;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use zescope_sampler::{Command, ErrorKind, Event, Inventory, SamplerError, SamplerHandle, SourceInfo};

use super::client::{Follower, Got, Target};

/// Events waiting for the window at most (the thread waits when the window is behind).
const EVENTS: usize = 1 << 14;

/// Starts the thread watching `target`.
pub fn spawn(target: Target) -> SamplerHandle {
    let (ctx, crx) = crossbeam_channel::unbounded();
    let (etx, erx) = crossbeam_channel::bounded(EVENTS);
    let thread = std::thread::Builder::new()
        .name("zescope-remote".into())
        .spawn(move || watch(&target, &crx, &etx))
        .expect("spawn the remote thread");
    SamplerHandle::from_parts(ctx, erx, thread)
}

fn source(addr: &str, simulated: bool, state: &str) -> SourceInfo {
    SourceInfo {
        requested: zescope_ze::Source::Auto,
        simulated,
        description: format!("REMOTE {addr}{state}"),
        fallback_reason: None,
    }
}

fn watch(target: &Target, commands: &Receiver<Command>, events: &Sender<Event>) {
    let addr = target.addr.as_str();
    let inventory = Inventory { source: Some(source(addr, false, " (connecting)")), devices: Vec::new() };
    let _ = events.send(Event::Inventory(inventory));
    let pending: RefCell<Vec<Command>> = RefCell::new(Vec::new());
    let shutdown = || {
        pending.borrow_mut().extend(commands.try_iter());
        pending.borrow().iter().any(|c| matches!(c, Command::Shutdown))
    };
    let mut follower = Follower::new(target.clone());
    follower.follow_restarts = true;
    let (mut run, mut open, mut told_read_only) = (0u64, false, false);
    loop {
        let got = follower.next(&shutdown);
        for c in pending.borrow_mut().drain(..) {
            match c {
                Command::Sync(n) => {
                    let _ = events.send(Event::Synced(n));
                }
                Command::Shutdown => {}
                _ if told_read_only => {}
                _ => {
                    told_read_only = true;
                    let message = format!(
                        "REMOTE {addr}: the run is the server's; it cannot be started, stopped or changed from here"
                    );
                    let _ = events.send(Event::Notice { run, message });
                }
            }
        }
        let Some(got) = got else { break };
        let event = match got {
            Got::Started(info, devices) => {
                let inventory = Inventory { source: Some(source(addr, info.simulated, "")), devices };
                let _ = events.send(Event::Inventory(inventory));
                (run, open) = (info.run, true);
                Event::RunStarted(*info)
            }
            Got::Samples(b) => Event::Samples(b),
            Got::Health(h) => Event::Health(h),
            Got::Notice(r, message) => Event::Notice { run: r, message },
            Got::Error(message) => Event::Error(SamplerError {
                kind: ErrorKind::Driver,
                message: format!("REMOTE {addr}: {message}"),
                hint: None,
            }),
            Got::Stopped(r, reason) => {
                open = false;
                Event::RunStopped { run: r, reason }
            }
            Got::Marker(..) => continue,
            Got::Link(Some(why)) => Event::Notice { run, message: format!("REMOTE {addr}: {why}; reconnecting") },
            Got::Link(None) => Event::Notice { run, message: format!("REMOTE {addr}: reconnected") },
        };
        if events.send(event).is_err() {
            break;
        }
    }
    if open {
        let _ = events.send_timeout(
            Event::RunStopped { run, reason: zescope_sampler::StopReason::Shutdown },
            Duration::from_millis(100),
        );
    }
    let _ = events.send_timeout(Event::ShutDown, Duration::from_millis(100));
}
