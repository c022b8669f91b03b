//! The window's panes: the user's [`Arrangement`] (`view::panes`: placement, colours,
//! visibility) plus what only the screen needs, each pane's plot cache and egui colours.

use std::collections::HashMap;

use egui::Color32;

use zescope_model::view::panes::Arrangement;
use zescope_model::view::series::SeriesKey;

use super::envelope_plot::EnvelopePlot;
use super::state::AppState;

/// The arrangement plus the per-pane plot caches (not saved).
#[derive(Default)]
pub struct Panes {
    /// Placement, colours and visibility of the series: what sessions and settings save.
    pub arrangement: Arrangement,
    /// The user's own arrangement while a remote run's is shown: what the settings keep.
    pub(crate) own: Option<Arrangement>,
    /// The panes remembered for the server watched (`settings::Remote::layout`): what its first
    /// run shown starts in.
    pub(crate) remote_layout: Option<Arrangement>,
    /// The arrangement shown is an opened recording's (its session's panes): `own` holds the
    /// user's, which the next live run comes back to.
    pub(crate) of_file: bool,
    plots: HashMap<u64, EnvelopePlot>,
    /// A pane to bring into view on the next frame (one just added).
    pub(crate) scroll_to: Option<u64>,
    /// The panes are shown from their top on the next frame: they were laid out afresh (a
    /// recording opened, a run's own panes back, the window launched), and the scroll offset
    /// kept from other panes (or from the last launch, in egui's remembered state) would open
    /// them in the middle.
    pub(crate) scroll_to_top: bool,
    /// Panes whose value axis is held (y lock), with the range it is held at.
    pub y_lock: HashMap<u64, (f64, f64)>,
}

impl Panes {
    /// Panes laid out as `arrangement`, with empty plot caches.
    pub(crate) fn with_arrangement(arrangement: Arrangement) -> Panes {
        Panes {
            arrangement,
            own: None,
            remote_layout: None,
            of_file: false,
            plots: HashMap::new(),
            scroll_to: None,
            scroll_to_top: true,
            y_lock: HashMap::new(),
        }
    }

    /// Shows `file`'s panes, an opened recording's: the user's own are kept aside (once: they may
    /// be aside already, under a remote run's or another recording's) for the settings and the
    /// next live run ([`Self::leave_file`]).
    pub(crate) fn show_file(&mut self, file: Arrangement) {
        let own = self.own.take().unwrap_or_else(|| std::mem::take(&mut self.arrangement));
        self.show(file);
        (self.own, self.of_file) = (Some(own), true);
    }

    /// A live run replaces the recording shown: the user's own panes come back (a recording's
    /// panes stayed, and the settings kept them: a live run of other groups started under panes
    /// that could show nothing).
    pub(crate) fn leave_file(&mut self) {
        if self.of_file {
            self.back_to_own();
        }
    }

    /// The user's own panes, when another's (a server's run, a recording) are shown, shown
    /// again; the panes remembered for the server watched stay.
    pub(crate) fn back_to_own(&mut self) {
        let Some(own) = self.own.take() else { return };
        self.show(own);
    }

    /// `arrangement` shown afresh (no plot caches, no y locks, nobody's panes aside), the panes
    /// remembered for the server watched kept.
    fn show(&mut self, arrangement: Arrangement) {
        let remote_layout = self.remote_layout.take();
        *self = Panes::with_arrangement(arrangement);
        self.remote_layout = remote_layout;
    }

    /// Pane `pane`'s plot cache, kept across frames.
    pub fn plot(&mut self, pane: u64) -> &mut EnvelopePlot {
        self.plots.entry(pane).or_default()
    }

    /// New series get panes by the default placement policy.
    pub(crate) fn place_new(&mut self, keys: &[SeriesKey], state: &AppState) {
        self.arrangement.place_new(keys, &state.ingest.series);
    }

    /// A remote run starts: the panes show what the window holds data of. The user's own
    /// arrangement is kept aside for the settings (once, across the server's runs), the panes
    /// remembered for this server (if any) are put up instead, and series with no data here
    /// (`seen` lacks them: a remembered layout of other groups) leave the panes, panes emptied
    /// so going with them, so the server's series are not placed below panes that can show
    /// nothing.
    pub(crate) fn remote_run(&mut self, seen: impl Fn(&SeriesKey) -> bool) {
        if self.own.is_none() {
            self.own = Some(self.arrangement.clone());
            if let Some(theirs) = self.remote_layout.take() {
                self.arrangement = theirs;
                self.plots.clear();
                self.y_lock.clear();
            }
        }
        let mut emptied = Vec::new();
        for p in &mut self.arrangement.panes {
            let before = p.series.len();
            p.series.retain(|k| seen(k));
            if before > 0 && p.series.is_empty() {
                emptied.push(p.id);
            }
        }
        for id in emptied {
            self.remove_pane(id);
        }
    }

    /// Adds an empty pane at the end and scrolls to it on the next frame; returns its id.
    pub fn add_pane(&mut self) -> u64 {
        let id = self.arrangement.add_pane();
        self.scroll_to = Some(id);
        id
    }

    /// Removes pane `id` with its series and its plot cache; an unknown id changes nothing.
    pub(crate) fn remove_pane(&mut self, id: u64) {
        self.arrangement.remove_pane(id);
        self.plots.remove(&id);
        self.y_lock.remove(&id);
    }

    /// y lock: holds pane `id`'s value axis at `range` (what it shows now), or lets it fit its
    /// data again. Nonsense ranges are not held.
    pub(crate) fn toggle_y_lock(&mut self, id: u64, range: (f64, f64)) {
        if self.y_lock.remove(&id).is_none() && range.0.is_finite() && range.1.is_finite() && range.1 > range.0 {
            self.y_lock.insert(id, range);
        }
    }

    /// Moves series `key` out of wherever it was into pane `to`; `None` or an unknown id puts it
    /// in a new pane at the end.
    pub fn assign(&mut self, key: &SeriesKey, to: Option<u64>) {
        self.arrangement.assign(key, to);
    }

    /// The series' colour (assigned from the palette the first time it is asked for).
    pub(crate) fn color(&mut self, key: &SeriesKey) -> Color32 {
        let [r, g, b] = self.arrangement.color(key);
        Color32::from_rgb(r, g, b)
    }

    /// Sets the series' colour (alpha is dropped: the arrangement keeps RGB).
    pub(crate) fn set_color(&mut self, key: &SeriesKey, c: Color32) {
        self.arrangement.set_color(key, [c.r(), c.g(), c.b()]);
    }

    /// Back to no panes (the next run lays them out again); colours are kept.
    pub(crate) fn reset(&mut self) {
        self.arrangement.reset();
        self.plots.clear();
        self.y_lock.clear();
        self.scroll_to_top = true;
    }
}
