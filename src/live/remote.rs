//! The window on a remote run (`zescope --connect HOST:PORT`): a thread that speaks the sampler's
//! protocol to the window ([`zescope_sampler::SamplerHandle::from_parts`]) and is fed by the
//! live feed's client ([`super::client::Follower`]), so the window drains, ingests and draws a
//! remote run exactly as a local one.
//!
//! - The inventory comes first: its source's description says `REMOTE HOST:PORT` (the window
//!   shows it where it names the source), with the run's devices once the hello came (an empty
//!   inventory, "connecting", before); it comes again, saying "REMOTE reconnecting HOST:PORT", while
//!   the link is down.
//! - Once a second while the link is up, the inventory comes again with the link's figures after
//!   the address: `REMOTE HOST:PORT · 12.5 KiB/s · rtt 0.4 ms` (bytes/s: the feed's frames
//!   received over that second; rtt: the round trip of a WebSocket ping, see
//!   [`Follower::rtt`], which needs no shared clock with the server). The achieved rate is the
//!   server's, in its health frames, shown as a local run's.
//! - The feed's events become the sampler's (`RunStarted`, `Samples`, `Health`, `Notice`,
//!   `Error`, `RunStopped`). The link dropping and coming back are notices: "REMOTE HOST:PORT:
//!   ... reconnecting" and "... reconnected". A try to connect that fails while no run is open
//!   (the first connection, or waiting for a server to come back) is an error of kind `Link`,
//!   once per reason: why (a refusal says what to do), where the window said "connecting" only.
//! - The server's markers (`zescope mark` on its host) come as `Event::Marker`: the window
//!   files them as its own socket's.
//! - It is read-only: `Start`, `SetInterval`, `Pause`, `Resume` and `Refresh` change nothing on
//!   the server (a notice says so, once); `Sync` is answered; `Shutdown` ends it. `Stop` leaves
//!   the feed (the window's "Disconnect", or opening a file): the run stops here (`RunStopped`,
//!   `Requested`) while the server's goes on; the source then says "REMOTE disconnected
//!   HOST:PORT" and the thread only answers `Sync` until `Shutdown`.

use std::cell::RefCell;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use zescope_sampler::{Command, ErrorKind, Event, Inventory, SamplerError, SamplerHandle, SourceInfo};

use super::client::{Follower, Got, Target};

/// Events waiting for the window at most (the thread waits when the window is behind).
const EVENTS: usize = 1 << 14;

/// The window's event channel, with its waker (the sampler's `Options::waker`): told after each
/// event, `true` when it was only data, as the sampler's outbox does.
struct Out {
    tx: Sender<Event>,
    waker: Option<zescope_sampler::Waker>,
}

impl Out {
    fn send(&self, e: Event) -> Result<(), ()> {
        let only_data = matches!(e, Event::Samples(_) | Event::Health(_));
        self.tx.send(e).map_err(|_| ())?;
        if let Some(w) = &self.waker {
            w(only_data);
        }
        Ok(())
    }

    fn send_timeout(&self, e: Event, wait: Duration) -> Result<(), ()> {
        self.tx.send_timeout(e, wait).map_err(|_| ())?;
        if let Some(w) = &self.waker {
            w(false);
        }
        Ok(())
    }
}

/// Starts the thread watching `target`; `waker` as the sampler's `Options::waker`.
pub fn spawn(target: Target, waker: Option<zescope_sampler::Waker>) -> SamplerHandle {
    let (ctx, crx) = crossbeam_channel::unbounded();
    let (tx, erx) = crossbeam_channel::bounded(EVENTS);
    let thread = std::thread::Builder::new()
        .name("zescope-remote".into())
        .spawn(move || watch(&target, &crx, &Out { tx, waker }))
        .expect("spawn the remote thread");
    SamplerHandle::from_parts(ctx, erx, thread)
}

/// What the source says while the link is down (first, where a narrow panel keeps it).
const RECONNECTING: &str = "reconnecting ";
/// And before the first connection.
const CONNECTING: &str = "connecting ";
/// And after the window's `Stop` left the feed (the server's run goes on).
const DISCONNECTED: &str = "disconnected ";

/// How often the link's figures are told.
const FIGURES: Duration = Duration::from_secs(1);

/// The link's figures after the address: " · 12.5 KiB/s · rtt 0.4 ms" (no rtt before a pong).
fn figures(bytes_per_s: f64, rtt: Option<Duration>) -> String {
    let rate = zescope_model::view::text::bytes(bytes_per_s.max(0.0) as usize);
    match rtt {
        Some(r) => format!(" · {rate}/s · rtt {:.1} ms", r.as_secs_f64() * 1e3),
        None => format!(" · {rate}/s"),
    }
}

fn source(addr: &str, simulated: bool, state: &str) -> SourceInfo {
    SourceInfo {
        requested: zescope_ze::Source::Auto,
        simulated,
        description: format!("REMOTE {state}{addr}"),
        fallback_reason: None,
    }
}

fn watch(target: &Target, commands: &Receiver<Command>, events: &Out) {
    let addr = target.addr.as_str();
    let inventory = Inventory { source: Some(source(addr, false, CONNECTING)), devices: Vec::new() };
    let _ = events.send(Event::Inventory(inventory));
    let pending: RefCell<Vec<Command>> = RefCell::new(Vec::new());
    // `Stop` ends the watching (not the server's run): once seen, the feed is left.
    let disconnect = std::cell::Cell::new(false);
    let shutdown = || {
        pending.borrow_mut().extend(commands.try_iter());
        disconnect.get() || pending.borrow().iter().any(|c| matches!(c, Command::Shutdown | Command::Stop))
    };
    let mut follower = Follower::new(target.clone());
    follower.follow_restarts = true;
    let (mut run, mut open, mut told_read_only) = (0u64, false, false);
    // The devices and kind of the run last announced, for the inventory that says the link's state.
    let mut known: (Vec<zescope_sampler::DeviceEntry>, bool) = (Vec::new(), false);
    // `tail`: the link's state before the address ("reconnecting "), or its figures after it.
    let link = |known: &(Vec<zescope_sampler::DeviceEntry>, bool), tail: &str| {
        let source = if tail.starts_with(' ') {
            let mut s = source(addr, known.1, "");
            s.description.push_str(tail);
            Some(s)
        } else {
            Some(source(addr, known.1, tail))
        };
        let _ = events.send(Event::Inventory(Inventory { source, devices: known.0.clone() }));
    };
    // The feed's bytes at the last figures, and when.
    let (mut counted, mut at, mut up) = (0u64, std::time::Instant::now(), false);
    loop {
        let got = follower.next(&shutdown);
        if at.elapsed() >= FIGURES {
            let per_s = (follower.bytes - counted) as f64 / at.elapsed().as_secs_f64();
            (counted, at) = (follower.bytes, std::time::Instant::now());
            if up {
                link(&known, &figures(per_s, follower.rtt));
            }
        }
        for c in pending.borrow_mut().drain(..) {
            match c {
                Command::Sync(n) => {
                    let _ = events.send(Event::Synced(n));
                }
                Command::Shutdown => {}
                Command::Stop => disconnect.set(true),
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
                known = (devices, info.simulated);
                link(&known, "");
                (run, open, up) = (info.run, true, true);
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
            Got::Marker(kind, t_ns, name) => Event::Marker { kind, t_ns, name },
            Got::Link(Some(why)) => {
                up = false;
                link(&known, RECONNECTING);
                Event::Notice { run, message: format!("REMOTE {addr}: {why}; reconnecting") }
            }
            Got::Link(None) => {
                up = true;
                link(&known, "");
                Event::Notice { run, message: format!("REMOTE {addr}: reconnected") }
            }
            // During a run the drop's notice says the link is down; before one (or after the
            // server's ended) nothing else would: the window said "connecting" forever to a
            // server that refused it.
            Got::Unreachable(why) if !open => Event::Error(SamplerError {
                kind: ErrorKind::Link,
                message: format!("REMOTE {why}"),
                hint: Some("File → Connect… for another server (this one is tried again every few seconds)".into()),
            }),
            Got::Unreachable(_) => continue,
        };
        if events.send(event).is_err() {
            break;
        }
    }
    let stopped = match disconnect.get() {
        true => zescope_sampler::StopReason::Requested,
        false => zescope_sampler::StopReason::Shutdown,
    };
    if open {
        let _ = events.send_timeout(Event::RunStopped { run, reason: stopped }, Duration::from_millis(100));
    }
    if disconnect.get() && !pending.borrow().iter().any(|c| matches!(c, Command::Shutdown)) {
        drop(follower);
        link(&known, DISCONNECTED);
        let message =
            format!("REMOTE {addr}: disconnected; the server's run goes on (File → Connect… to watch it again)");
        let _ = events.send(Event::Notice { run, message });
        idle(commands, events);
    }
    let _ = events.send_timeout(Event::ShutDown, Duration::from_millis(100));
}

/// After a disconnect: answers `Sync` until `Shutdown` (or the window is gone); nothing else
/// can be done from here (a new connection is a new window source, File → Connect…).
fn idle(commands: &Receiver<Command>, events: &Out) {
    while let Ok(c) = commands.recv() {
        match c {
            Command::Sync(n) if events.send(Event::Synced(n)).is_err() => return,
            Command::Shutdown => return,
            _ => {}
        }
    }
}
