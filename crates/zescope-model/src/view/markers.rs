//! Markers on the samples' time axis: instants and named ranges, set by the user in the window or
//! sent by the workload (`zescope_markers`, `zescope mark`). The window draws them on every pane,
//! sessions save them, exports draw and list them.
//!
//! A range begins with `begin(name)` and ends at the next `end(name)` for the same name (the
//! newest open range of that name, so same-named ranges may nest); until then it is open and
//! drawn up to the newest sample. An `end` that matches no open range is counted and dropped.
//!
//! A list holds at most its cap of markers ([`Markers::with_cap`]; [`DEFAULT_MAX_MARKS`] for a
//! live session unless the user set another, [`MAX_MARKS`] for a saved session's list, as many as
//! a session file may hold); more are counted in `refused` and dropped, so whatever is made of
//! the list (a session, an SVG with its markers, the phase table) stays bounded.

use std::collections::HashMap;

use zescope_markers::Kind;

/// At most this many markers are kept in any list (as many as a session file may hold).
pub const MAX_MARKS: usize = 1 << 20;

/// At most this many markers are kept per session unless the user sets another bound
/// (`crate::markers::Limits`).
pub const DEFAULT_MAX_MARKS: usize = 100_000;

/// Instants' colour (sRGB).
pub const INSTANT_RGB: [u8; 3] = [200, 120, 220];

/// Range colours (sRGB), chosen by name.
const RANGE_RGB: [[u8; 3]; 6] =
    [[90, 160, 255], [255, 170, 60], [90, 200, 120], [230, 90, 110], [170, 130, 250], [60, 200, 200]];

/// A marker's colour: one for instants, for ranges one by name (the same name, the same colour on
/// screen and in images).
pub fn mark_rgb(mark: &Mark) -> [u8; 3] {
    if mark.is_instant() {
        return INSTANT_RGB;
    }
    let h = mark.label.bytes().fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    RANGE_RGB[h as usize % RANGE_RGB.len()]
}

/// What a marker covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// A point in time.
    Instant,
    /// A range that ended at `end_ns`.
    Range {
        /// When it ended (ns, the samples' clock), not before its start.
        end_ns: i64,
    },
    /// A range that has begun and not ended (yet).
    Open,
}

/// One marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// When it was set, or its range began (ns of `CLOCK_MONOTONIC`, the samples' clock).
    pub t_ns: i64,
    /// Its name.
    pub label: String,
    /// Instant, closed or open range.
    pub span: Span,
}

impl Mark {
    /// Where it ends: `t_ns` for an instant, the end of a closed range, `now_ns` for an open one.
    pub fn end_ns(&self, now_ns: i64) -> i64 {
        match self.span {
            Span::Instant => self.t_ns,
            Span::Range { end_ns } => end_ns,
            Span::Open => now_ns.max(self.t_ns),
        }
    }

    /// An instant, not a range.
    pub fn is_instant(&self) -> bool {
        self.span == Span::Instant
    }
}

/// The markers of what is shown, in the order they were set.
#[derive(Clone, Debug)]
pub struct Markers {
    marks: Vec<Mark>,
    /// Open ranges by name: indices into `marks`, oldest first.
    open: HashMap<String, Vec<usize>>,
    /// At most this many are kept (at most [`MAX_MARKS`]).
    cap: usize,
    /// `end`s that matched no open range.
    pub unmatched_ends: u64,
    /// Markers refused because the cap was reached.
    pub over_cap: u64,
    /// Markers refused because the cap was reached, or with an end before their start.
    pub refused: u64,
    /// Bumped by every change to the markers (one added, a range closed, all cleared).
    revision: u64,
}

impl Default for Markers {
    /// An empty list with the cap of a session, [`DEFAULT_MAX_MARKS`].
    fn default() -> Markers {
        Markers::with_cap(DEFAULT_MAX_MARKS)
    }
}

impl Markers {
    /// An empty list that keeps at most `cap` markers (at most [`MAX_MARKS`]).
    pub fn with_cap(cap: usize) -> Markers {
        Markers {
            marks: Vec::new(),
            open: HashMap::new(),
            cap: cap.min(MAX_MARKS),
            unmatched_ends: 0,
            over_cap: 0,
            refused: 0,
            revision: 0,
        }
    }

    /// The markers of `marks` (a saved session's, up to [`MAX_MARKS`]), open ranges open again.
    pub fn from_marks(marks: impl IntoIterator<Item = Mark>) -> Markers {
        let mut m = Markers::with_cap(MAX_MARKS);
        for mark in marks {
            m.push(mark);
        }
        m
    }

    /// At most this many are kept.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Adds a marker as it is (instant, closed or open range).
    pub fn push(&mut self, mark: Mark) -> bool {
        if self.marks.len() >= self.cap {
            self.over_cap += 1;
            self.refused += 1;
            return false;
        }
        if mark.end_ns(mark.t_ns) < mark.t_ns {
            self.refused += 1;
            return false;
        }
        if mark.span == Span::Open {
            self.open.entry(mark.label.clone()).or_default().push(self.marks.len());
        }
        self.marks.push(mark);
        self.revision += 1;
        true
    }

    /// An instant at `t_ns`.
    pub fn instant(&mut self, t_ns: i64, label: &str) -> bool {
        self.push(Mark { t_ns, label: label.to_owned(), span: Span::Instant })
    }

    /// A range named `label` begins at `t_ns`.
    pub fn begin(&mut self, t_ns: i64, label: &str) -> bool {
        self.push(Mark { t_ns, label: label.to_owned(), span: Span::Open })
    }

    /// The newest open range named `label` ends at `t_ns`; `false` (counted) when none is open
    /// or it began after `t_ns`.
    pub fn end(&mut self, t_ns: i64, label: &str) -> bool {
        let Some(stack) = self.open.get_mut(label) else {
            self.unmatched_ends += 1;
            return false;
        };
        let i = *stack.last().expect("open lists are never empty");
        if self.marks[i].t_ns > t_ns {
            self.unmatched_ends += 1;
            return false;
        }
        stack.pop();
        if stack.is_empty() {
            self.open.remove(label);
        }
        self.marks[i].span = Span::Range { end_ns: t_ns };
        self.revision += 1;
        true
    }

    /// Applies a workload's marker.
    pub fn apply(&mut self, kind: Kind, t_ns: i64, label: &str) -> bool {
        match kind {
            Kind::Instant => self.instant(t_ns, label),
            Kind::Begin => self.begin(t_ns, label),
            Kind::End => self.end(t_ns, label),
        }
    }

    /// Names marker `index` `label` (trimmed; a workload's name rules: 1 to
    /// `zescope_markers::protocol::MAX_NAME` bytes, no control characters). An open range keeps
    /// waiting for its workload's `end` under the name it began with. `false` when there is no
    /// such marker, the name breaks the rules or is already its name.
    pub fn rename(&mut self, index: usize, label: &str) -> bool {
        let label = label.trim();
        if zescope_markers::protocol::check_name(label).is_err() {
            return false;
        }
        match self.marks.get_mut(index) {
            Some(m) if m.label != label => {
                m.label = label.to_owned();
                self.revision += 1;
                true
            }
            _ => false,
        }
    }

    /// Every marker, in the order set.
    pub fn marks(&self) -> &[Mark] {
        &self.marks
    }

    /// The closed ranges as (name, start ns, end ns), in the order they began.
    pub fn closed_ranges(&self) -> impl Iterator<Item = (&str, i64, i64)> + '_ {
        self.marks.iter().filter_map(|m| match m.span {
            Span::Range { end_ns } => Some((m.label.as_str(), m.t_ns, end_ns)),
            _ => None,
        })
    }

    /// How many markers are kept.
    pub fn len(&self) -> usize {
        self.marks.len()
    }

    /// No markers.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// Forgets every marker and count; the cap stays, the revision moves on.
    pub fn clear(&mut self) {
        let revision = self.revision + 1;
        *self = Markers::with_cap(self.cap);
        self.revision = revision;
    }

    /// Changes so far: two lists with the same revision, one a later state of the other, hold
    /// the same markers.
    pub fn revision(&self) -> u64 {
        self.revision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rename_changes_the_name_and_the_revision_and_keeps_an_open_range_closable() {
        let mut m = Markers::default();
        m.instant(5, "M1");
        m.begin(10, "phase");
        let r = m.revision();
        assert!(m.rename(0, "  warm-up "));
        assert_eq!(m.marks()[0].label, "warm-up");
        assert!(m.revision() > r, "a rename is a change to save");
        let r = m.revision();
        for bad in ["", "   ", "a\nb", &"x".repeat(201)] {
            assert!(!m.rename(0, bad), "{bad:?} refused");
        }
        assert!(!m.rename(0, "warm-up"), "the same name changes nothing");
        assert!(!m.rename(7, "x"), "no such marker");
        assert_eq!((m.revision(), m.marks()[0].label.as_str()), (r, "warm-up"));
        assert!(m.rename(1, "compute"));
        assert!(m.end(20, "phase"), "the workload ends its range by the name it began with");
        assert_eq!(m.closed_ranges().collect::<Vec<_>>(), vec![("compute", 10, 20)]);
    }

    #[test]
    fn ends_close_the_newest_open_range_of_their_name() {
        let mut m = Markers::default();
        m.begin(10, "outer");
        m.begin(20, "inner");
        m.begin(30, "outer");
        m.instant(35, "tick");
        assert!(m.end(40, "outer"));
        assert!(m.end(50, "inner"));
        assert!(!m.end(55, "nothing"));
        assert!(m.end(60, "outer"));
        assert!(!m.end(70, "outer"), "both outers are closed");
        let closed: Vec<_> = m.closed_ranges().collect();
        assert_eq!(closed, vec![("outer", 10, 60), ("inner", 20, 50), ("outer", 30, 40)]);
        assert_eq!(m.unmatched_ends, 2);
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn open_ranges_reach_until_now_and_stay_open_after_a_reload() {
        let mut m = Markers::default();
        m.begin(100, "load");
        assert_eq!(m.marks()[0].end_ns(250), 250);
        assert_eq!(m.closed_ranges().count(), 0);
        let mut again = Markers::from_marks(m.marks().to_vec());
        assert!(again.end(300, "load"));
        assert_eq!(again.closed_ranges().collect::<Vec<_>>(), vec![("load", 100, 300)]);
    }

    #[test]
    fn an_end_before_its_begin_or_a_backwards_range_is_refused() {
        let mut m = Markers::default();
        m.begin(100, "p");
        assert!(!m.end(50, "p"));
        assert_eq!(m.marks()[0].span, Span::Open);
        assert!(!m.push(Mark { t_ns: 10, label: "r".into(), span: Span::Range { end_ns: 5 } }));
        assert_eq!((m.unmatched_ends, m.refused, m.len()), (1, 1, 1));
    }

    #[test]
    fn past_its_cap_a_list_refuses_and_counts_and_clearing_keeps_the_cap() {
        assert_eq!(Markers::default().cap(), DEFAULT_MAX_MARKS);
        let mut m = Markers::with_cap(3);
        for k in 0..10 {
            m.instant(k, "tick");
        }
        assert!(!m.begin(20, "late"));
        assert_eq!((m.len(), m.over_cap, m.refused), (3, 8, 8));
        m.clear();
        assert_eq!((m.len(), m.over_cap, m.cap()), (0, 0, 3));
        assert_eq!(Markers::with_cap(usize::MAX).cap(), MAX_MARKS);
        let saved: Vec<Mark> = (0..5).map(|t| Mark { t_ns: t, label: "s".into(), span: Span::Instant }).collect();
        assert_eq!(Markers::from_marks(saved).len(), 5, "a saved session's list keeps what the file held");
    }
}
