//! The overview strip (View → Overview strip): a thin plot of the whole history above the panes,
//! with the range the panes show marked. A click or a drag on it moves the time view there,
//! centred on the time under the pointer and keeping its span.
//!
//! It draws one series per pane (the pane's first visible one), each scaled to its own
//! min..max, from store envelopes at one column per physical pixel, never from raw points; the
//! envelopes are computed again only when the store or the strip's width changes.

use egui::epaint::Mesh;
use egui::{Color32, Rect, Sense, Stroke, Ui, pos2, vec2};

use crate::store::{Envelope, SeriesId, Store};
use crate::view::{TimeView, data_x};

use super::panes::Panes;
use super::state::AppState;

/// Height of the strip in points.
pub const HEIGHT: f32 = 36.0;

/// The strip's accessible name (what a screen reader, or a test, finds it by).
pub const LABEL: &str = "Overview of the whole history";

/// The strip's state, kept across frames.
#[derive(Default)]
pub struct Overview {
    /// Shown above the panes (remembered in the settings).
    pub shown: bool,
    /// Per drawn series: its store series (one per run) and colour.
    series: Vec<(Vec<SeriesId>, Color32)>,
    envs: Vec<Envelope>,
    /// `(t0, t1, columns, store version)` the envelopes hold.
    key: Option<(i64, i64, usize, u64)>,
    /// Where the strip was drawn last frame.
    pub strip: Option<Rect>,
    /// The part of the strip marked as shown by the panes, last frame.
    pub marked: Option<Rect>,
}

impl Overview {
    /// A strip with nothing drawn yet, shown or hidden.
    pub fn new(shown: bool) -> Overview {
        Overview { shown, ..Overview::default() }
    }

    /// Draws the strip over the whole width of `ui` and moves `view` when it is clicked or
    /// dragged. Nothing is drawn without data.
    pub(crate) fn show(
        &mut self,
        ui: &mut Ui,
        panes: &mut Panes,
        state: &AppState,
        store: &Store,
        view: &mut TimeView,
    ) {
        self.strip = None;
        self.marked = None;
        let Some((first, last)) = data_x(store) else { return };
        let span = (last - first).max(1e-9);
        let (rect, resp) = ui.allocate_exact_size(vec2(ui.available_width(), HEIGHT), Sense::click_and_drag());
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

        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
        let bg = ui.visuals().extreme_bg_color;
        self.pick(panes, state, bg);
        let columns = super::envelope_plot::pixel_columns(rect.width(), ui.ctx().pixels_per_point());
        let key = (store.from_plot_x(first), store.from_plot_x(last), columns, store.version());
        let ids: Vec<SeriesId> = self.series.iter().flat_map(|(ids, _)| ids.iter().copied()).collect();
        if self.key != Some(key) || self.envs.len() != ids.len() {
            self.envs.resize_with(ids.len(), Envelope::new);
            store.envelopes(&ids, key.0, key.1, columns, &mut self.envs);
            self.key = Some(key);
        }
        let mut mesh = Mesh::default();
        let mut envs = self.envs.iter();
        for (run_ids, color) in &self.series {
            let mine: Vec<&Envelope> = envs.by_ref().take(run_ids.len()).collect();
            let cols = || mine.iter().flat_map(|e| e.columns()).filter(|c| c.count > 0 && c.min.is_finite());
            let lo = cols().map(|c| c.min).fold(f64::INFINITY, f64::min);
            let hi = cols().filter(|c| c.max.is_finite()).map(|c| c.max).fold(f64::NEG_INFINITY, f64::max);
            if !(lo.is_finite() && hi.is_finite()) {
                continue;
            }
            let range = if hi > lo { hi - lo } else { 1.0 };
            let y = |v: f64| rect.bottom() - 2.0 - ((v - lo) / range) as f32 * (rect.height() - 4.0);
            for c in cols() {
                let (xa, xb) = (to_x(store.to_plot_x(c.t_start)), to_x(store.to_plot_x(c.t_end)));
                let (top, bottom) = (y(c.max.min(hi)), y(c.min));
                let r = Rect::from_min_max(pos2(xa, top - 0.5), pos2(xb.max(xa + 1.0), bottom + 0.5));
                mesh.add_colored_rect(r, *color);
            }
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
        self.strip = Some(rect);
    }

    /// Each pane's first visible series that has data, with its colour.
    fn pick(&mut self, panes: &mut Panes, state: &AppState, bg: Color32) {
        self.series.clear();
        for pane in panes.layout.panes.clone() {
            let first = pane
                .series
                .iter()
                .filter(|k| panes.layout.is_visible(k))
                .find(|k| state.ingest.series.get(*k).is_some_and(|e| !e.ids.is_empty()));
            if let Some(k) = first {
                let ids = state.ingest.series[k].ids.clone();
                self.series.push((ids, super::plots::drawn(panes.color(k), bg)));
            }
        }
    }
}
