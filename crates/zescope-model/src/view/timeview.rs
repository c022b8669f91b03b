//! What part of the timeline the panes show: live (a window sliding with the newest sample),
//! paused (frozen where it was, while data keeps arriving), or zoomed (wherever the user put it).
//! Pure state, shared by every pane: the time axis is one.

use serde::{Deserialize, Serialize};

use crate::view::TimeAxis;
use zescope_store::Store;

/// The data's x extent (seconds since the store's origin), over every stream: what a live view
/// follows and what "all" means.
pub fn data_x(store: &Store) -> Option<(f64, f64)> {
    let (a, b) = store.total_time_range()?;
    Some((TimeAxis::of(store).x(a), TimeAxis::of(store).x(b)))
}

/// The time range (store ns) `view` shows of `store`'s data; `None` when live with no data.
pub fn shown_range(view: &TimeView, store: &Store) -> Option<(i64, i64)> {
    view.range(data_x(store)).map(|(a, b)| (TimeAxis::of(store).ns(a), TimeAxis::of(store).ns(b)))
}

/// Length of the live window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ViewLength {
    /// The last 10 seconds.
    Sec10,
    /// The last minute (the default).
    #[default]
    Min1,
    /// The last 10 minutes.
    Min10,
    /// Everything the store holds.
    All,
}

impl ViewLength {
    /// Every window length, shortest first, as the menus offer them.
    pub const ALL: [ViewLength; 4] = [ViewLength::Sec10, ViewLength::Min1, ViewLength::Min10, ViewLength::All];

    /// Its length in seconds; `None` for [`ViewLength::All`].
    fn seconds(self) -> Option<f64> {
        match self {
            ViewLength::Sec10 => Some(10.0),
            ViewLength::Min1 => Some(60.0),
            ViewLength::Min10 => Some(600.0),
            ViewLength::All => None,
        }
    }

    /// Its name in menus and buttons ("10 s", "1 min", "10 min", "all").
    pub fn label(self) -> &'static str {
        match self {
            ViewLength::Sec10 => "10 s",
            ViewLength::Min1 => "1 min",
            ViewLength::Min10 => "10 min",
            ViewLength::All => "all",
        }
    }
}

/// Whether the view follows the data, and if not, why it stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The window follows the newest sample.
    Live,
    /// Frozen by the user (Space); sampling goes on.
    Paused,
    /// Moved or zoomed by the user.
    Zoomed,
}

/// The one time axis of every pane: what it shows and how it moves (see the module docs). Plot x
/// is seconds since the store's origin.
#[derive(Clone, Debug)]
pub struct TimeView {
    /// Live, paused or zoomed; change it through the methods, which keep the rest in step.
    pub mode: Mode,
    /// The window length a live view shows.
    pub window: ViewLength,
    /// The x range (seconds since the store's origin) while not live.
    frozen: (f64, f64),
    /// Samples that arrived since the view stopped following.
    pub new_since_frozen: u64,
    /// While paused: the newest data time (plot x) at the moment of pausing. Nothing later is
    /// shown, so a paused view stays exactly as it was even where its range reaches ahead.
    paused_data_end: Option<f64>,
}

impl Default for TimeView {
    fn default() -> Self {
        TimeView {
            mode: Mode::Live,
            window: ViewLength::default(),
            frozen: (0.0, 1.0),
            new_since_frozen: 0,
            paused_data_end: None,
        }
    }
}

impl TimeView {
    /// A view as a session saved it: mode, window length and the range shown
    /// while not live.
    pub fn restored(mode: Mode, window: ViewLength, frozen: (f64, f64)) -> TimeView {
        TimeView { mode, window, frozen, new_since_frozen: 0, paused_data_end: None }
    }

    /// The range shown while not live (last set by pause or zoom).
    pub fn frozen_range(&self) -> (f64, f64) {
        self.frozen
    }

    /// Does the view follow the newest sample ([`Mode::Live`])?
    pub fn is_live(&self) -> bool {
        self.mode == Mode::Live
    }

    /// The x range to show, given the data's `(first, last)` x; `None` when live with no data.
    pub fn range(&self, data: Option<(f64, f64)>) -> Option<(f64, f64)> {
        if self.mode != Mode::Live {
            return Some(self.frozen);
        }
        let (first, last) = data?;
        Some(match self.window.seconds() {
            // Until the data fills the window, it grows from the left edge; then it slides.
            Some(w) if last - first < w => (first, first + w),
            Some(w) => (last - w, last),
            None if last > first => (first, last),
            None => (first - 1.0, last),
        })
    }

    /// Space: live → paused where it is now (`data` is the data's extent); paused or zoomed →
    /// live.
    pub fn toggle_pause(&mut self, data: Option<(f64, f64)>) {
        match self.mode {
            Mode::Live => {
                let shown = self.range(data).unwrap_or(self.frozen);
                self.freeze(Mode::Paused, shown);
                self.paused_data_end = data.map(|(_, last)| last);
            }
            Mode::Paused | Mode::Zoomed => self.follow(),
        }
    }

    /// The newest time (plot x) to show: set while paused.
    pub fn data_limit(&self) -> Option<f64> {
        if self.mode == Mode::Paused { self.paused_data_end } else { None }
    }

    /// End: back to the live window.
    pub fn follow(&mut self) {
        self.mode = Mode::Live;
        self.new_since_frozen = 0;
    }

    /// The user dragged or zoomed the time axis to `range`: stop following.
    pub fn user_moved(&mut self, range: (f64, f64)) {
        if range.1 > range.0 && range.0.is_finite() && range.1.is_finite() {
            self.freeze(Mode::Zoomed, range);
        }
    }

    /// Shows the whole of `data` (an opened recording, Fit): the view stops following. A single
    /// instant gets a second either side; no data changes nothing.
    pub fn fit(&mut self, data: Option<(f64, f64)>) {
        let Some((first, last)) = data else { return };
        let range = if last > first { (first, last) } else { (first - 1.0, last + 1.0) };
        self.user_moved(range);
    }

    /// Choosing a window length goes back to following.
    pub fn set_window(&mut self, w: ViewLength) {
        self.window = w;
        self.follow();
    }

    /// `n` samples were stored: counted in [`TimeView::new_since_frozen`] unless live.
    pub fn on_samples(&mut self, n: u64) {
        if self.mode != Mode::Live {
            self.new_since_frozen += n;
        }
    }

    fn freeze(&mut self, mode: Mode, range: (f64, f64)) {
        if self.mode == Mode::Live {
            self.new_since_frozen = 0;
        }
        self.mode = mode;
        self.frozen = range;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_follows_the_newest_sample_with_the_chosen_window() {
        let mut v = TimeView::default();
        assert_eq!(v.range(None), None);
        v.set_window(ViewLength::Sec10);
        assert_eq!(v.range(Some((0.0, 100.0))), Some((90.0, 100.0)));
        assert_eq!(v.range(Some((0.0, 101.0))), Some((91.0, 101.0)));
        assert_eq!(v.range(Some((5.0, 8.0))), Some((5.0, 15.0)), "a young run fills the window from the left");
        v.set_window(ViewLength::All);
        assert_eq!(v.range(Some((3.0, 101.0))), Some((3.0, 101.0)));
    }

    #[test]
    fn pause_freezes_counts_new_samples_and_resumes() {
        let mut v = TimeView::default();
        v.set_window(ViewLength::Sec10);
        v.toggle_pause(Some((0.0, 50.0)));
        assert_eq!(v.mode, Mode::Paused);
        assert_eq!(v.data_limit(), Some(50.0), "nothing newer than the pause is shown");
        v.on_samples(7);
        v.on_samples(3);
        assert_eq!(v.range(Some((0.0, 80.0))), Some((40.0, 50.0)), "frozen while data arrives");
        assert_eq!(v.new_since_frozen, 10);
        v.toggle_pause(None);
        assert!(v.is_live());
        assert_eq!(v.data_limit(), None);
        assert_eq!(v.new_since_frozen, 0);
        assert_eq!(v.range(Some((0.0, 80.0))), Some((70.0, 80.0)));
    }

    #[test]
    fn zoom_or_pan_leaves_live_and_end_returns() {
        let mut v = TimeView::default();
        v.user_moved((12.0, 14.0));
        assert_eq!(v.mode, Mode::Zoomed);
        assert_eq!(v.range(Some((0.0, 99.0))), Some((12.0, 14.0)));
        v.user_moved((f64::NAN, 3.0));
        assert_eq!(v.range(None), Some((12.0, 14.0)), "nonsense ranges are ignored");
        v.follow();
        assert!(v.is_live());
    }

    #[test]
    fn fit_shows_all_data_whatever_the_window() {
        let mut v = TimeView::default();
        v.fit(Some((2.0, 7.0)));
        assert_eq!((v.mode, v.range(Some((2.0, 7.0)))), (Mode::Zoomed, Some((2.0, 7.0))), "5 s fill the axis");
        v.fit(Some((4.0, 4.0)));
        assert_eq!(v.range(None), Some((3.0, 5.0)), "one instant still has a width");
        v.fit(None);
        assert_eq!(v.range(None), Some((3.0, 5.0)), "no data leaves the view alone");
    }
}
