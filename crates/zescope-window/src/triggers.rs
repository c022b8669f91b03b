//! The window's triggers (View → Triggers, or a legend's "Trigger on this series…"): the
//! expressions (`docs/triggers.md`) evaluated on every batch as `drain.rs` files it
//! (`triggers::Evaluator`, on ingest, not on the plot), their firings listed (time, trigger,
//! series, value) and drawn as labelled bands of the time kept around each on every pane.
//! "Show" centres the view on a firing; "Pause on trigger" does so by itself at each firing while
//! sampling goes on; "Keep" saves the time around each firing, once it has passed, as a session of
//! its own in a folder.

use std::path::PathBuf;
use std::time::Duration;

use zescope_model::session::{Capture, Session};
use zescope_model::triggers::{Evaluator, Firing, Trigger};
use zescope_model::view::TimeAxis;
use zescope_model::view::{Mark, Span, TimeView};
use zescope_sampler::{RunInfo, SampleBatch};
use zescope_store::Store;

/// The most firings the list keeps (older ones leave it; the counts go on).
pub const MAX_FIRINGS: usize = 10_000;

/// How long after a firing's time after has passed its window is kept (ns): the run's streams
/// arrive a little apart, and the slowest must have brought its samples up to the end.
pub const KEEP_SLACK_NS: i64 = 1_000_000_000;

/// The window's triggers, their firings, and the Triggers window's fields.
pub struct Triggers {
    /// The triggers, bound to the run in progress.
    pub eval: Evaluator,
    /// Firings, oldest first (at most [`MAX_FIRINGS`]).
    pub firings: Vec<Firing>,
    fired: Vec<Firing>,
    /// Firings since the app last looked (pause on trigger, keep).
    fresh: Vec<Firing>,
    /// The expression being written.
    pub text: String,
    /// Why the expression was refused (with its column).
    pub error: Option<String>,
    /// Time kept (and shown) before and after each firing, for triggers added from now on.
    pub pre: Duration,
    /// See `pre`.
    pub post: Duration,
    /// Centre the view on each firing as it comes (the view stops following; sampling goes on).
    pub pause_on_trigger: bool,
    /// Firings are drawn along the bottom of every pane.
    pub on_panes: bool,
    /// Save the time around each firing as a session in this folder.
    pub keep: Option<PathBuf>,
    /// Firings whose time after has not all arrived yet, to keep.
    waiting: Vec<Firing>,
    /// Sessions kept so far.
    pub kept: Vec<PathBuf>,
    /// Per trigger: why it watches nothing of the run in progress (`None`: it watches something,
    /// or no run has started since it was added).
    unbound: Vec<Option<String>>,
}

impl Default for Triggers {
    fn default() -> Triggers {
        Triggers {
            eval: Evaluator::default(),
            firings: Vec::new(),
            fired: Vec::new(),
            fresh: Vec::new(),
            text: String::new(),
            error: None,
            pre: zescope_model::triggers::syntax::DEFAULT_AROUND,
            post: zescope_model::triggers::syntax::DEFAULT_AROUND,
            pause_on_trigger: false,
            on_panes: true,
            keep: None,
            waiting: Vec::new(),
            kept: Vec::new(),
            unbound: Vec::new(),
        }
    }
}

/// `v` with at most 3 significant decimals, for an expression to edit.
pub(crate) fn round(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" { "0".into() } else { s.into() }
}

impl Triggers {
    /// A run started: every trigger watches its series; those that watch nothing say so in the
    /// window.
    pub(crate) fn run_started(&mut self, info: &RunInfo) {
        self.eval.run_started(info);
        let offered = zescope_model::triggers::names::offered(info);
        self.unbound =
            self.eval.triggers().iter().map(|t| zescope_model::triggers::names::unmatched(t, &offered)).collect();
    }

    /// A batch was filed: evaluates it.
    pub(crate) fn samples(&mut self, b: &SampleBatch) {
        self.fired.clear();
        self.eval.samples(b, &mut self.fired);
        self.take_fired();
    }

    /// A marker of the workload arrived.
    pub(crate) fn marker(&mut self, name: &str, t_ns: i64) {
        self.fired.clear();
        self.eval.marker(name, t_ns, &mut self.fired);
        self.take_fired();
    }

    fn take_fired(&mut self) {
        if self.fired.is_empty() {
            return;
        }
        self.fresh.extend(self.fired.iter().cloned());
        self.firings.append(&mut self.fired);
        if self.firings.len() > MAX_FIRINGS {
            self.firings.drain(..self.firings.len() - MAX_FIRINGS);
        }
    }

    /// Adds the expression typed (or `text`); false, with [`Triggers::error`] set, when it does not
    /// parse or names no series of the run in progress (the error names those it could mean).
    /// Without a run it is bound when the next one starts.
    pub fn add(&mut self, text: &str, run: Option<&RunInfo>) -> bool {
        let parsed = Trigger::parse(text).map_err(|e| e.to_string()).and_then(|t| match run {
            Some(info) => {
                match zescope_model::triggers::names::unmatched(&t, &zescope_model::triggers::names::offered(info)) {
                    Some(e) => Err(e),
                    None => Ok(t),
                }
            }
            None => Ok(t),
        });
        match parsed {
            Ok(t) => {
                let i = self.eval.add(t.around(self.pre, self.post), run);
                self.unbound.resize(i, None);
                self.unbound.push(None);
                self.error = None;
                self.text.clear();
                true
            }
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    /// Adds those of `triggers` (a view's) whose expression is not one of these already; returns
    /// how many were added. The triggers there were, and their firings, stay.
    pub fn merge(&mut self, triggers: Vec<Trigger>, run: Option<&RunInfo>) -> usize {
        let mut added = 0;
        for t in triggers {
            if self.eval.triggers().iter().any(|have| have.text == t.text) {
                continue;
            }
            let unbound = run.and_then(|info| {
                zescope_model::triggers::names::unmatched(&t, &zescope_model::triggers::names::offered(info))
            });
            let i = self.eval.add(t, run);
            self.unbound.resize(i, None);
            self.unbound.push(unbound);
            added += 1;
        }
        added
    }

    /// Time kept around a firing of trigger `i`: (before, after) in ns.
    pub(crate) fn around(&self, i: usize) -> (i64, i64) {
        let ns = |d: Duration| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
        self.eval.triggers().get(i).map_or((0, 0), |t| (ns(t.pre), ns(t.post)))
    }

    /// The firings as bands to draw (the time kept around each, named by its trigger).
    pub fn bands(&self) -> Vec<Mark> {
        self.firings
            .iter()
            .map(|f| {
                let (pre, post) = self.around(f.trigger);
                let name = self.eval.triggers().get(f.trigger).map_or("", |t| t.text.as_str());
                Mark {
                    t_ns: f.t_ns.saturating_sub(pre),
                    label: format!("trigger: {name}"),
                    span: Span::Range { end_ns: f.t_ns.saturating_add(post) },
                }
            })
            .collect()
    }

    /// Centres `view` on the firing at `t_ns`, as wide as the live window (or the time kept
    /// around it): the view stops following.
    pub fn show_firing(view: &mut TimeView, store: &Store, t_ns: i64, around: (i64, i64)) {
        use zescope_model::view::ViewLength;
        let window = match view.window {
            ViewLength::Sec10 => Some(10.0),
            ViewLength::Min1 => Some(60.0),
            ViewLength::Min10 => Some(600.0),
            ViewLength::All => None,
        };
        let half = window.map_or((around.0 + around.1) as f64 * 0.5e-9, |w| w / 2.0).max(0.5);
        let x = TimeAxis::of(store).x(t_ns);
        view.user_moved((x - half, x + half));
    }

    /// After the frame's events: with "pause on trigger", centres the view on the newest firing.
    pub(crate) fn pause(&mut self, view: &mut TimeView, store: &Store) {
        let fresh = std::mem::take(&mut self.fresh);
        if self.pause_on_trigger
            && let Some(f) = fresh.last()
        {
            Triggers::show_firing(view, store, f.t_ns, self.around(f.trigger));
        }
        if self.keep.is_some() {
            self.waiting.extend(fresh);
        }
    }

    /// Are firings waiting to be kept?
    pub(crate) fn waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// With "keep": saves the windows whose time after has passed (all waiting ones when
    /// `ended`: the run stopped). Errors are for a banner.
    pub(crate) fn keep(&mut self, store: &Store, ui: &Capture<'_>, ended: bool) -> Vec<String> {
        let Some(dir) = self.keep.clone() else {
            self.waiting.clear();
            return Vec::new();
        };
        let newest = store.total_time_range().map_or(i64::MIN, |(_, last)| last);
        let mut errors = Vec::new();
        let mut waiting = std::mem::take(&mut self.waiting);
        waiting.retain(|f| {
            let (pre, post) = self.around(f.trigger);
            let end = f.t_ns.saturating_add(post);
            if end.saturating_add(KEEP_SLACK_NS) > newest && !ended {
                return true;
            }
            let n = self.kept.len() + 1;
            let path = dir.join(format!("trigger-{n}-{}.ron", f.t_ns));
            match keep_session(store, ui, f.t_ns.saturating_sub(pre), end, &path) {
                Ok(()) => self.kept.push(path),
                Err(e) => errors.push(format!("keeping the firing at {}: {e}", path.display())),
            }
            false
        });
        self.waiting = waiting;
        errors
    }

    /// Removes trigger `i` with its firings (its later triggers move up one).
    pub(crate) fn remove(&mut self, i: usize, run: Option<&RunInfo>) {
        self.eval.remove(i, run);
        if i < self.unbound.len() {
            self.unbound.remove(i);
        }
        self.firings.retain(|f| f.trigger != i);
        self.firings.iter_mut().filter(|f| f.trigger > i).for_each(|f| f.trigger -= 1);
        self.waiting.clear();
    }

    /// Why trigger `i` watches nothing of the run in progress, if it does not.
    pub(crate) fn unbound(&self, i: usize) -> Option<&str> {
        self.unbound.get(i).and_then(|u| u.as_deref())
    }
}

/// Where kept firings go unless the user says otherwise: `zescope/triggered` in the user's data
/// folder, else the current folder.
pub(crate) fn default_keep_dir() -> PathBuf {
    directories::ProjectDirs::from("io.github", "zescope", "zescope")
        .map_or_else(|| PathBuf::from("triggered"), |d| d.data_dir().join("triggered"))
}

/// Saves the samples of `store` in `[from, to]` as a session at `path`, described by `ui` (the
/// streams keep their order, so the run history names them).
pub fn keep_session(store: &Store, ui: &Capture<'_>, from: i64, to: i64, path: &std::path::Path) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut part = Store::new(store.memory_cap());
    for s in store.streams() {
        let id = part.begin_stream(s.desc.clone());
        let width = s.desc.series.len();
        let (mut ts, mut vals) = (Vec::new(), Vec::new());
        store.for_each_raw_row(s.id, |t, row| {
            if t >= from && t <= to && row.len() == width {
                ts.push(t);
                vals.extend_from_slice(row);
            }
        });
        if !ts.is_empty() {
            part.append(id, &ts, &vals).map_err(|e| e.to_string())?;
        }
        part.end_stream(id);
    }
    let session = Session::capture(&part, *ui);
    zescope_model::session::save(path, &session).map_err(|e| e.to_string())
}
