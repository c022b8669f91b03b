//! SIGINT and SIGTERM as a flag: whoever runs a loop (the headless loop of record and serve, the
//! GUI) checks it and ends through the normal shutdown, so the sampler's teardown runs before the
//! process exits.
//!
//! The first signal raises the flag (and calls the registered wakers); a second one means the
//! user does not want to wait for the teardown: zescope says so on stderr and exits at once
//! with status 130.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

type Wakers = Arc<Mutex<Vec<Box<dyn Fn() + Send>>>>;

/// The process-wide termination flag, shared by clones. Created once per process by `install`.
#[derive(Clone)]
pub struct Termination {
    flag: Arc<AtomicBool>,
    wakers: Wakers,
}

impl Termination {
    /// Installs the handlers: a thread that watches SIGINT and SIGTERM. Falls back to a plain
    /// flag (no second-signal exit) if that thread cannot be set up.
    pub fn install() -> Termination {
        let t = Termination { flag: Arc::new(AtomicBool::new(false)), wakers: Arc::default() };
        let sigs = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM];
        match signal_hook::iterator::Signals::new(sigs) {
            Ok(mut signals) => {
                let (flag, wakers) = (Arc::clone(&t.flag), Arc::clone(&t.wakers));
                let spawned = std::thread::Builder::new().name("zescope-signals".into()).spawn(move || {
                    for _ in signals.forever() {
                        if flag.swap(true, Ordering::SeqCst) {
                            eprintln!("zescope: interrupted again; exiting without waiting for the teardown");
                            std::process::exit(130);
                        }
                        for w in wakers.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                            w();
                        }
                    }
                });
                if let Err(e) = spawned {
                    log::warn!("cannot watch for signals: {e}");
                }
            }
            Err(e) => {
                log::warn!("cannot watch for signals ({e}); falling back to a flag");
                for sig in sigs {
                    if let Err(e) = signal_hook::flag::register(sig, Arc::clone(&t.flag)) {
                        log::warn!("cannot handle signal {sig}: {e}");
                    }
                }
            }
        }
        t
    }

    /// A flag no signal raises, only [`Termination::request`]: for the loops' unit tests, which
    /// must not take SIGINT from the test process.
    #[cfg(test)]
    pub(crate) fn unwatched() -> Termination {
        Termination { flag: Arc::default(), wakers: Arc::default() }
    }

    /// True once SIGINT or SIGTERM has arrived.
    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Calls `wake` when a signal arrives (e.g. to repaint an idle window so it notices).
    pub(crate) fn on_signal(&self, wake: impl Fn() + Send + 'static) {
        self.wakers.lock().unwrap_or_else(|p| p.into_inner()).push(Box::new(wake));
    }

    /// Raises the flag from inside the program (e.g. a window close).
    pub fn request(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }
}

impl zescope_window::gui::Interrupt for Termination {
    fn requested(&self) -> bool {
        Termination::requested(self)
    }

    fn on_signal(&self, wake: Box<dyn Fn() + Send>) {
        Termination::on_signal(self, wake);
    }
}
