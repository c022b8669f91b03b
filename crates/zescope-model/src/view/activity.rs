//! The window's one state, derived from three facts: is a session file shown, does a run go on,
//! does the time axis follow the newest sample. The toolbar and the status bar both read it, so
//! they never contradict each other ("LIVE" while stopped, "FILE" and "LIVE" together).
//!
//! An opened recording is never mixed with live data: opening a file stops the run first, and a
//! run that starts while a file is shown replaces it (Start leaves the recording).

use super::timeview::Mode;

/// What the window shows, as one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// A run goes on and the view follows its newest sample.
    Live,
    /// A run goes on; the view is frozen (paused) or moved by the user (zoomed). Sampling
    /// continues: the data waits to be followed again.
    Paused {
        /// The user moved the view (rather than pausing it).
        zoomed: bool,
    },
    /// No run and no file: what the last run recorded (if anything) is shown as it is.
    Stopped,
    /// A session file (or a recovered checkpoint) is shown; nothing is sampled into it.
    File,
}

impl Activity {
    /// The state of a window that shows a file (`recording`), has a run in progress (`running`)
    /// and a time axis in `mode`. A shown file wins: a run cannot add to it.
    pub fn of(recording: bool, running: bool, mode: Mode) -> Activity {
        match (recording, running, mode) {
            (true, _, _) => Activity::File,
            (false, false, _) => Activity::Stopped,
            (false, true, Mode::Live) => Activity::Live,
            (false, true, Mode::Paused) => Activity::Paused { zoomed: false },
            (false, true, Mode::Zoomed) => Activity::Paused { zoomed: true },
        }
    }

    /// The badge the toolbar shows for it.
    pub fn badge(self) -> &'static str {
        match self {
            Activity::Live => "LIVE",
            Activity::Paused { zoomed: false } => "PAUSED",
            Activity::Paused { zoomed: true } => "ZOOMED",
            Activity::Stopped => "STOPPED",
            Activity::File => "FILE",
        }
    }

    /// Whether samples of a run may be filed into what is shown (never into an opened file).
    pub fn takes_samples(self) -> bool {
        self != Activity::File
    }

    /// Whether Pause makes sense (a live run is followed).
    pub fn can_pause(self) -> bool {
        self == Activity::Live
    }

    /// Whether "Follow live" makes sense (a run goes on, the view does not follow it).
    pub fn can_follow(self) -> bool {
        matches!(self, Activity::Paused { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_state_from_file_run_and_view() {
        for mode in [Mode::Live, Mode::Paused, Mode::Zoomed] {
            for running in [false, true] {
                let a = Activity::of(true, running, mode);
                assert_eq!(a, Activity::File, "a shown file is never live ({running}, {mode:?})");
                assert!(!a.takes_samples() && !a.can_pause() && !a.can_follow());
            }
            let stopped = Activity::of(false, false, mode);
            assert_eq!(stopped, Activity::Stopped, "no run is never LIVE ({mode:?})");
            assert!(!stopped.can_pause() && !stopped.can_follow() && stopped.takes_samples());
        }
        let live = Activity::of(false, true, Mode::Live);
        assert_eq!((live.badge(), live.can_pause(), live.can_follow()), ("LIVE", true, false));
        let paused = Activity::of(false, true, Mode::Paused);
        assert_eq!((paused.badge(), paused.can_pause(), paused.can_follow()), ("PAUSED", false, true));
        assert_eq!(Activity::of(false, true, Mode::Zoomed).badge(), "ZOOMED");
    }
}
