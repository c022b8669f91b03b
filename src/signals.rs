//! SIGINT and SIGTERM as a flag: whoever runs a loop (record, the GUI) checks it and ends
//! through the normal shutdown, so the sampler's teardown runs before the process exits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Clone)]
pub struct Termination(Arc<AtomicBool>);

impl Termination {
    /// Installs the handlers (once per call; cheap). Falls back to a flag that never trips if
    /// the handlers cannot be installed.
    pub fn install() -> Termination {
        let flag = Arc::new(AtomicBool::new(false));
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            if let Err(e) = signal_hook::flag::register(sig, Arc::clone(&flag)) {
                log::warn!("cannot handle signal {sig}: {e}");
            }
        }
        Termination(flag)
    }

    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Also repaints `ctx` when a signal arrives, so an idle window notices it at once.
    pub fn wake_on_signal(&self, ctx: egui::Context) {
        let flag = Arc::clone(&self.0);
        let signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]);
        match signals {
            Ok(mut signals) => {
                let _ = std::thread::Builder::new().name("zescope-signals".into()).spawn(move || {
                    for _ in signals.forever() {
                        flag.store(true, Ordering::Relaxed);
                        ctx.request_repaint();
                    }
                });
            }
            Err(e) => log::warn!("cannot watch for signals: {e}"),
        }
    }

    /// Raises the flag from inside the program (e.g. a window close).
    pub fn request(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
