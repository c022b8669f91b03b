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

    /// Raises the flag from inside the program (e.g. a window close).
    pub fn request(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
