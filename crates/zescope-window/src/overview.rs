//! The overview strip (View → Overview strip): the whole history above the panes, with the range
//! the panes show marked. A click or a drag on it moves the time view there, centred on the time
//! under the pointer and keeping its span.
//!
//! One lane per pane, top to bottom as the panes: each visible series of the pane (at most
//! [`MAX_PER_PANE`]) as a min/max band in its colour, on the pane's own scale (its y lock, else
//! the range of all its series over the whole history). The bands come from store envelopes
//! (the plots' query, `Store::envelope`), at one column per physical pixel, or fewer when the
//! series has fewer samples, so a column is never empty for want of samples; a column joins the
//! one with a value before it (its band spans the step and the time between them) unless they
//! are more than 1/[`BRIDGE_SHARE`] of the history apart, so a series reads as a band, not as
//! dots; a longer time without values is a pause in the data and stays a gap. The strip spans the plots' time axis exactly (their plot area's left
//! and right, as drawn last frame), so a time is at the same x on the strip as on a plot showing
//! all of it. The envelopes are computed again when the strip's series, width or start change,
//! when stored data changes other than at the end, and when the history grew at its end by one
//! column's time (`still_shows`): not at every sample of a live run.

use egui::epaint::Mesh;
use egui::{Color32, Rect, Sense, Stroke, Ui, pos2, vec2};

use zescope_model::view::{TimeView, data_x};
use zescope_store::{Envelope, SeriesId, Store};

use super::panes::Panes;
use super::state::AppState;
use zescope_model::view::TimeAxis;

/// Height of the strip in points, at least (a lane per pane: more panes make it taller, up to
/// [`MAX_HEIGHT`]).
pub const HEIGHT: f32 = 36.0;
/// Height of the strip in points, at most.
pub const MAX_HEIGHT: f32 = 56.0;
/// The most series of one pane drawn in its lane.
pub const MAX_PER_PANE: usize = 8;
/// Columns with values less than 1/this of the history apart are joined: the series went on
/// between them (a series read less often than its stream, as some telemetry is, has columns
/// without a value); a longer time between is a pause in the data and stays a gap.
pub const BRIDGE_SHARE: usize = 16;

/// The strip's accessible name (what a screen reader, or a test, finds it by).
pub const LABEL: &str = "Overview of the whole history";

/// One pane's lane: its series (store series of each run, colour) and its value range.
struct Lane {
    series: Vec<(Vec<SeriesId>, Color32)>,
    y_lock: Option<(f64, f64)>,
}

/// The strip's state, kept across frames.
#[derive(Default)]
pub struct Overview {
    /// Shown above the panes (remembered in the settings).
    pub shown: bool,
    lanes: Vec<Lane>,
    /// Per series of every lane, in order: one envelope per run.
    envs: Vec<Vec<Envelope>>,
    /// `(t0, t1, columns, store version, series)` the envelopes hold.
    key: Option<(i64, i64, usize, u64, Vec<SeriesId>)>,
    /// Where the strip was drawn last frame.
    pub strip: Option<Rect>,
    /// The part of the strip marked as shown by the panes, last frame.
    pub marked: Option<Rect>,
    /// Each lane's band rectangles (one per column drawn), last frame: what the strip shows.
    pub bands: Vec<Vec<Rect>>,
    /// Where the strip stays while it is pressed.
    held: Option<Rect>,
}

impl Overview {
    /// A strip with nothing drawn yet, shown or hidden.
    pub fn new(shown: bool) -> Overview {
        Overview { shown, ..Overview::default() }
    }

    /// Draws the strip over the plots' time axis (`axis`: the plot area's left and right, as
    /// drawn last frame; the whole width when unknown) and moves `view` when it is clicked or
    /// dragged. Nothing is drawn without data.
    pub(crate) fn show(
        &mut self,
        ui: &mut Ui,
        panes: &mut Panes,
        state: &AppState,
        store: &Store,
        view: &mut TimeView,
        axis: Option<(f32, f32)>,
    ) {
        // While the strip is pressed (through the release), it stays where it was: the view it
        // moves changes the plots' value labels and so where their time axis starts.
        let axis = self.held.map(|r| (r.left(), r.right())).or(axis);
        self.strip = None;
        self.marked = None;
        self.bands.clear();
        let Some((first, last)) = data_x(store) else { return };
        let span = (last - first).max(1e-9);
        let bg = ui.visuals().extreme_bg_color;
        self.pick(panes, state, bg);
        let lanes = self.lanes.len().max(1);
        let height = (lanes as f32 * 12.0).clamp(HEIGHT, MAX_HEIGHT);
        let (row, _) = ui.allocate_exact_size(vec2(ui.available_width(), height), Sense::hover());
        let (l, r) = match axis {
            Some((l, r)) if r - l > 10.0 && l >= row.left() - 1.0 && r <= row.right() + 1.0 => (l, r),
            _ => (row.left(), row.right()),
        };
        let rect = Rect::from_x_y_ranges(l..=r, row.y_range());
        let resp = ui.interact(rect, egui::Id::unique("zescope-overview"), Sense::click_and_drag());
        let resp = resp.on_hover_text("the whole history; click or drag to move the view there");
        resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, LABEL));
        let to_x = |x: f64| rect.left() + ((x - first) / span) as f32 * rect.width();
        let to_t = |px: f32| first + f64::from((px - rect.left()) / rect.width().max(1.0)) * span;

        if let Some(p) = resp.interact_pointer_pos()
            && (resp.is_pointer_button_down_on() || resp.clicked() || resp.dragged())
            && let Some((a, b)) = view.range(Some((first, last)))
        {
            let t = to_t(p.x.clamp(rect.left(), rect.right()));
            let half = 0.5 * (b - a);
            view.user_moved((t - half, t + half));
        }
        self.held = (resp.is_pointer_button_down_on() || resp.dragged()).then_some(rect);

        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 2.0, bg);
        let pixels = super::envelope_plot::pixel_columns(rect.width(), ui.ctx().pixels_per_point());
        let (t0, t1) = (TimeAxis::of(store).ns(first), TimeAxis::of(store).ns(last));
        let ids: Vec<SeriesId> =
            self.lanes.iter().flat_map(|lane| lane.series.iter().flat_map(|(ids, _)| ids.iter().copied())).collect();
        let key = (t0, t1, pixels, store.version(), ids);
        if !self.key.as_ref().is_some_and(|k| still_shows(k, &key)) {
            self.envs.clear();
            for lane in &self.lanes {
                for (run_ids, _) in &lane.series {
                    let envs = run_ids
                        .iter()
                        .map(|&id| {
                            // No more columns than samples: a column without one would be a hole.
                            let samples = store.sample_count(id.stream()).max(2);
                            let columns = pixels.min(usize::try_from(samples).unwrap_or(usize::MAX));
                            let mut env = Envelope::new();
                            store.envelope(id, t0, t1, columns, &mut env);
                            env
                        })
                        .collect();
                    self.envs.push(envs);
                }
            }
            self.key = Some(key);
        }
        let lane_h = rect.height() / lanes as f32;
        let mut mesh = Mesh::default();
        let mut envs = self.envs.iter();
        for (li, lane) in self.lanes.iter().enumerate() {
            let mine: Vec<&Vec<Envelope>> = envs.by_ref().take(lane.series.len()).collect();
            let cols = || mine.iter().flat_map(|e| e.iter()).flat_map(|e| e.columns()).filter(|c| c.count > 0);
            let (lo, hi) = lane.y_lock.unwrap_or_else(|| {
                let lo = cols().map(|c| c.min).filter(|v| v.is_finite()).fold(f64::INFINITY, f64::min);
                let hi = cols().map(|c| c.max).filter(|v| v.is_finite()).fold(f64::NEG_INFINITY, f64::max);
                (lo, hi)
            });
            if !(lo.is_finite() && hi.is_finite()) {
                self.bands.push(Vec::new());
                continue;
            }
            let range = if hi > lo { hi - lo } else { 1.0 };
            let (top, bottom) = (rect.top() + li as f32 * lane_h + 1.0, rect.top() + (li + 1) as f32 * lane_h - 1.0);
            let y = |v: f64| bottom - (((v.clamp(lo, hi) - lo) / range) as f32) * (bottom - top);
            let mut rects = Vec::new();
            for (envs, (_, color)) in mine.iter().zip(&lane.series) {
                for env in envs.iter() {
                    band(env, |c| to_x(TimeAxis::of(store).x(c)), &y, &mut |r| {
                        mesh.add_colored_rect(r, *color);
                        rects.push(r);
                    });
                }
            }
            self.bands.push(rects);
        }
        painter.add(mesh);

        if let Some((a, b)) = view.range(Some((first, last))) {
            let (l, r) = (to_x(a).clamp(rect.left(), rect.right()), to_x(b).clamp(rect.left(), rect.right()));
            let marked = Rect::from_x_y_ranges(l..=r.max(l), rect.y_range());
            let sel = ui.visuals().selection.bg_fill;
            painter.rect_filled(marked, 0.0, sel.gamma_multiply(0.25));
            painter.rect_stroke(marked, 0.0, Stroke::new(1.0, sel), egui::StrokeKind::Inside);
            self.marked = Some(marked);
        }
        log::debug!("strip at {:?}", rect);
        self.strip = Some(rect);
    }

    /// Each pane's visible series that have data (at most [`MAX_PER_PANE`]), colours and y lock.
    fn pick(&mut self, panes: &mut Panes, state: &AppState, bg: Color32) {
        self.lanes.clear();
        for pane in panes.arrangement.panes.clone() {
            let mut series: Vec<(Vec<SeriesId>, Color32)> = Vec::new();
            for k in &pane.series {
                if series.len() == MAX_PER_PANE {
                    break;
                }
                if !panes.arrangement.is_visible(k) {
                    continue;
                }
                if let Some(e) = state.ingest.series.get(k).filter(|e| !e.ids.is_empty()) {
                    series.push((e.ids.clone(), super::pane_row::drawn(panes.color(k), bg)));
                }
            }
            if !series.is_empty() {
                self.lanes.push(Lane { series, y_lock: panes.y_lock.get(&pane.id).copied() });
            }
        }
    }
}

/// Whether the envelopes computed for `old` still show the store as `new` finds it: the same
/// series, width and start, and either nothing stored since or only a growth at the end by less
/// than one of the strip's columns (their columns are drawn at their own times, so that growth is
/// under a pixel not yet drawn). A live run so redraws the strip from the store once a column's
/// time (a second for a quarter hour on 1000 pixels), not at every sample: a spike shows on the
/// strip within one column's time. Any other change (a start evicted, data filled in while the
/// end stays, another width) computes them again.
fn still_shows(old: &(i64, i64, usize, u64, Vec<SeriesId>), new: &(i64, i64, usize, u64, Vec<SeriesId>)) -> bool {
    let (t0, t1, pixels, version, ids) = old;
    if (t0, pixels, ids) != (&new.0, &new.2, &new.4) {
        return false;
    }
    if (t1, version) == (&new.1, &new.3) {
        return true;
    }
    let column = (t1 - t0) / (*pixels).max(1) as i64;
    new.1 > *t1 && new.1 - t1 < column
}

/// The band of one envelope: per column with samples, a rectangle from its min to its max,
/// stretched to reach the column with samples before it (so consecutive columns touch, also
/// across columns without a value) unless the time between them is longer than 1/[`BRIDGE_SHARE`]
/// of the envelope's: a pause in the data.
fn band(env: &Envelope, x: impl Fn(i64) -> f32, y: &impl Fn(f64) -> f32, out: &mut impl FnMut(Rect)) {
    let cols = env.columns();
    let (Some(a), Some(b)) = (cols.first(), cols.last()) else { return };
    let bridge = (b.t_end.saturating_sub(a.t_start) / BRIDGE_SHARE as i64).max(1);
    // The previous column with a value: its end, its min and max.
    let mut prev: Option<(i64, f64, f64)> = None;
    for c in cols {
        if c.count == 0 || !c.min.is_finite() || !c.max.is_finite() {
            continue;
        }
        let (mut lo, mut hi) = (c.min, c.max);
        let mut xa = x(c.t_start);
        if let Some((end, plo, phi)) = prev
            && c.t_start.saturating_sub(end) <= bridge
        {
            // Join the previous column: span the step between them, and the time between.
            lo = lo.min(phi);
            hi = hi.max(plo);
            xa = xa.min(x(end));
        }
        let xb = x(c.t_end).max(xa + 1.0);
        let (top, bottom) = (y(hi), y(lo));
        out(Rect::from_min_max(pos2(xa, top.min(bottom - 1.0)), pos2(xb, bottom)));
        prev = Some((c.t_end, c.min, c.max));
    }
}

#[cfg(test)]
mod tests {
    use super::still_shows;
    use zescope_store::SeriesId;

    #[test]
    fn envelopes_are_kept_only_while_the_history_grew_by_less_than_a_column() {
        let ids: Vec<SeriesId> = Vec::new();
        // 1000 pixels over 0..1e9 ns: a column is 1 ms.
        let old = (0, 1_000_000_000, 1000, 7, ids.clone());
        let grown = |dt: i64, version: u64| (0, 1_000_000_000 + dt, 1000, version, ids.clone());
        assert!(still_shows(&old, &old.clone()), "nothing changed");
        assert!(still_shows(&old, &grown(999_999, 8)), "grown by less than a column");
        assert!(!still_shows(&old, &grown(1_000_000, 8)), "grown by a column: computed again");
        assert!(!still_shows(&old, &grown(0, 8)), "data changed while the end stayed (filled in)");
        assert!(!still_shows(&old, &grown(-5, 8)), "the end moved back");
        assert!(!still_shows(&old, &(1, 1_000_000_000, 1000, 7, ids.clone())), "the start moved (evicted)");
        assert!(!still_shows(&old, &(0, 1_000_000_000, 999, 7, ids.clone())), "another width");
    }
}
