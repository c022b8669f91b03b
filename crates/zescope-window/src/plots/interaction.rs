//! What the user does to the panes in a frame, gathered as they are drawn and applied once after
//! the last: cursors set by Shift+click or dragged by their line, the time axis zoomed by the
//! wheel about the pointer (or the pane list scrolled, when the gesture began there), panned,
//! fitted by a double-click; a pane's y lock, removal and Export; series dropped on a pane; the
//! hover readout.

use egui::{Id, Ui};
use egui_plot::{PlotPoint, PlotResponse};

use zescope_model::view::cursors::{Cursors, Which};
use zescope_model::view::{SeriesKey, TimeAxis, TimeView, data_x};
use zescope_store::Store;

use super::super::dialogs::FileKind;
use super::super::legend::LegendAction;
use super::super::panes::Panes;
use super::super::readout;
use super::super::state::AppState;
use super::PlotsOutcome;
use super::envelopes::PanePlot;
use super::geometry::HeaderClicks;

/// How near (points) a press must be to a cursor's line to drag it.
const GRAB_PX: f32 = 6.0;

/// A wheel that scrolled the pane list this recently (seconds) is still scrolling it.
const WHEEL_GESTURE_S: f64 = 0.3;

/// The frame's gestures so far.
pub(super) struct Gestures {
    /// Where the cursor being dragged is remembered between frames.
    grab_id: Id,
    /// Which cursor a drag on a plot is moving (kept across frames until the button is released).
    pub grabbed: Option<Which>,
    cursor_moved: bool,
    user_moved: Option<(f64, f64)>,
    wheel_zoom: Option<(f64, f64)>,
    fit: bool,
    /// Where a wheel gesture over the pane list is remembered: (time, pass).
    list_wheel: Id,
    now: f64,
    pass: u64,
    /// A wheel gesture that began scrolling the pane list goes on scrolling it when a plot comes
    /// under the pointer, rather than turning into a zoom.
    list_scrolling: bool,
    wheel: f32,
    plot_took_wheel: bool,
    /// Legend and drop actions, per pane.
    pub actions: Vec<(u64, LegendAction)>,
    remove_pane: Option<u64>,
    toggle_lock: Option<u64>,
    write: Option<(FileKind, usize)>,
}

impl Gestures {
    pub(super) fn begin(ui: &Ui) -> Gestures {
        let grab_id = Id::unique("zescope-cursor-drag");
        let list_wheel = Id::unique("zescope-pane-list-wheel");
        let now = ui.input(|i| i.time);
        // Within the gesture's time, or on the frame after one that scrolled the list (a slow
        // frame must not end a gesture that is still under way).
        let pass = ui.ctx().cumulative_pass_nr();
        let list_scrolling = ui
            .ctx()
            .data(|d| d.get_temp::<(f64, u64)>(list_wheel))
            .is_some_and(|(t, p)| now - t < WHEEL_GESTURE_S || pass <= p + 1);
        Gestures {
            grab_id,
            grabbed: ui.ctx().data(|d| d.get_temp::<Which>(grab_id)),
            cursor_moved: false,
            user_moved: None,
            wheel_zoom: None,
            fit: false,
            list_wheel,
            now,
            pass,
            list_scrolling,
            wheel: ui.input(|i| i.smooth_scroll_delta.y),
            plot_took_wheel: false,
            actions: Vec::new(),
            remove_pane: None,
            toggle_lock: None,
            write: None,
        }
    }

    /// Pane `i` (id `id`)'s header buttons.
    pub(super) fn header(&mut self, i: usize, id: u64, clicks: HeaderClicks) {
        if clicks.remove {
            self.remove_pane = Some(id);
        }
        if clicks.toggle_lock {
            self.toggle_lock = Some(id);
        }
        if let Some(kind) = clicks.write {
            self.write = Some((kind, i));
        }
    }

    /// A series dropped on pane `id` (its plot or its empty area `r`), and the scroll a new pane
    /// asked for.
    pub(super) fn drop_and_scroll(&mut self, r: &egui::Response, id: u64, panes: &mut Panes) {
        if let Some(key) = r.dnd_release_payload::<SeriesKey>() {
            self.actions.push((id, LegendAction::MoveTo((*key).clone(), Some(id))));
        }
        if panes.scroll_to == Some(id) {
            panes.scroll_to = None;
            r.scroll_to_me(Some(egui::Align::Center));
        }
    }

    /// The y range pane `id` shows: a click on its y lock holds it; a locked axis dragged or
    /// zoomed holds the new range.
    pub(super) fn y_range(&mut self, id: u64, y: (f64, f64), locked: bool, panes: &mut Panes) {
        if self.toggle_lock == Some(id) {
            self.toggle_lock = None;
            panes.toggle_y_lock(id, y);
        } else if locked {
            panes.y_lock.insert(id, y);
        }
    }

    /// What the pointer did on a plot; returns the x range the plot showed.
    pub(super) fn on_plot(
        &mut self,
        ui: &mut Ui,
        resp: &PlotResponse<Option<PlotPoint>>,
        pane: &PanePlot<'_>,
        cursors: &mut Cursors,
        (store, state): (&Store, &AppState),
        out: &mut PlotsOutcome,
    ) -> (f64, f64) {
        let (target, rows) = (pane.target, pane.rows);
        let axis = TimeAxis::of(store);
        // Cursors: Shift+click sets them, a drag that starts on a cursor's line moves it.
        let pointer_t = resp.inner.map(|p| axis.ns(p.x));
        if resp.response.drag_started()
            && let Some(pos) = resp.response.interact_pointer_pos()
        {
            let near = |t: Option<i64>| {
                t.map(|t| (resp.transform.position_from_point_x(axis.x(t)) - pos.x).abs()).filter(|d| *d <= GRAB_PX)
            };
            self.grabbed = match (near(cursors.a), near(cursors.b)) {
                (Some(a), Some(b)) => Some(if a <= b { Which::A } else { Which::B }),
                (Some(_), None) => Some(Which::A),
                (None, Some(_)) => Some(Which::B),
                (None, None) => self.grabbed,
            };
        }
        if let Some(w) = self.grabbed
            && (resp.response.dragged() || resp.response.drag_stopped())
        {
            if let Some(pos) = resp.response.interact_pointer_pos() {
                let x = resp.transform.value_from_position(pos).x;
                cursors.set(w, axis.ns(x));
            }
            self.cursor_moved = true;
        }
        if resp.response.clicked()
            && ui.input(|i| i.modifiers.shift)
            && let Some(t) = pointer_t
        {
            cursors.click(t);
        }
        let shown = resp.transform.bounds().range_x();
        let shown = (*shown.start(), *shown.end());
        if let Some((a, b)) = target {
            let tol = (b - a).abs() * 1e-6 + 1e-9;
            if (shown.0 - a).abs() > tol || (shown.1 - b).abs() > tol {
                self.user_moved = Some(shown);
            }
        }
        if resp.response.double_clicked() {
            self.fit = true;
        }
        if resp.response.hovered() && !self.list_scrolling {
            self.plot_took_wheel = true;
            // Out no further than the data, or what was shown when that was wider (a live window
            // longer than the run so far): never before the first sample.
            let bounds = data_x(store).map(|(a, b)| (a, b.max(shown.1)));
            let zoomed = wheel_over_plot(ui, shown, resp.inner.map(|p| p.x));
            self.wheel_zoom = self.wheel_zoom.or(zoomed.map(|z| bounds.map_or(z, |b| kept_within(z, b))));
        }
        if resp.response.hovered()
            && let Some(p) = resp.inner
        {
            out.hover_x = Some(p.x);
            let t = axis.ns(p.x);
            // The readout sits in the plot's top corner away from the pointer, never over the
            // data being read.
            let frame = *resp.transform.frame();
            let pointer_right = ui.input(|i| i.pointer.hover_pos()).is_some_and(|q| q.x > frame.center().x);
            let (at, align) = if pointer_right {
                (frame.left_top() + egui::vec2(8.0, 4.0), egui::RectAlign::BOTTOM_START)
            } else {
                (frame.right_top() + egui::vec2(-8.0, 4.0), egui::RectAlign::BOTTOM_END)
            };
            let mut tip = egui::containers::Tooltip::for_enabled(&resp.response);
            // Where it was put, even when the plot is partly scrolled out of view: egui's
            // alternatives would flip it above the plot, over the pane above and the side panel.
            tip.popup = tip.popup.anchor(egui::PopupAnchor::Position(at)).align(align).align_alternatives(&[]);
            let width = frame.width() - 16.0;
            let x_of = |t: i64| resp.transform.position_from_point_x(axis.x(t));
            let pointer_x = resp.transform.position_from_point_x(p.x);
            let now = super::super::marker_paint::newest(store);
            let marks = super::super::marker_paint::under(pane.markers, now, x_of, pointer_x);
            tip.show(|ui| {
                readout::readout(ui, rows, state, store, t, p.x, width);
                readout::markers(ui, marks.iter().map(|&i| &pane.markers[i]), store, width);
            });
        }
        shown
    }

    /// After the last pane: the wheel, the cursors' drag, the time axis and the panes' changes.
    pub(super) fn finish(
        mut self,
        ui: &Ui,
        list: egui::Rect,
        view: &mut TimeView,
        panes: &mut Panes,
        store: &Store,
        out: &mut PlotsOutcome,
    ) {
        if self.wheel != 0.0 && !self.plot_took_wheel && ui.rect_contains_pointer(list) {
            ui.ctx().data_mut(|d| d.insert_temp(self.list_wheel, (self.now, self.pass)));
        }
        if self.cursor_moved {
            // The drag moved a cursor, not the time axis.
            self.user_moved = None;
        }
        if self.grabbed.is_some() && !ui.input(|i| i.pointer.primary_down()) {
            self.grabbed = None;
        }
        ui.ctx().data_mut(|d| match self.grabbed {
            Some(w) => {
                d.insert_temp(self.grab_id, w);
            }
            None => d.remove::<Which>(self.grab_id),
        });
        if self.fit {
            // Double-click: all the data, like Fit.
            view.fit(data_x(store));
            out.shown = view.range(data_x(store));
        } else if let Some(r) = self.wheel_zoom.or(self.user_moved) {
            view.user_moved(r);
            out.shown = Some(r);
        }
        out.write = self.write;
        if let Some(id) = self.remove_pane {
            panes.remove_pane(id);
        }
        for (pane, a) in self.actions {
            match a {
                LegendAction::Visible(k, v) => panes.arrangement.set_visible(&k, v),
                LegendAction::Color(k, c) => panes.set_color(&k, c),
                LegendAction::MoveTo(k, to) => panes.assign(&k, to),
                LegendAction::AlsoIn(k, to) => panes.arrangement.show_also(&k, to),
                LegendAction::Remove(k) => panes.arrangement.remove_series(pane, &k),
                LegendAction::Trigger(expr) => out.trigger = Some(expr),
                LegendAction::Derive(def) => out.derive = Some(def),
            }
        }
    }
}

/// Plain wheel over a plot: the time range `shown` zoomed about the pointer's time `at` (wheel
/// up zooms in, at egui's Ctrl+wheel speed), or `None` without a vertical wheel. Takes the
/// wheel either way, so the pane list does not scroll under the pointer (egui has already turned
/// Shift+wheel into a sideways scroll, which the plot took as a pan, and Ctrl+wheel into zoom).
fn wheel_over_plot(ui: &Ui, shown: (f64, f64), at: Option<f64>) -> Option<(f64, f64)> {
    let dy = ui.input_mut(|i| std::mem::take(&mut i.smooth_scroll_delta).y);
    let speed = ui.ctx().options(|o| o.input_options.scroll_zoom_speed);
    let at = at?;
    if dy == 0.0 {
        return None;
    }
    let f = f64::from((dy * speed).exp());
    Some((at - (at - shown.0) / f, at + (shown.1 - at) / f))
}

/// `r` moved (and narrowed if it must) to lie within `bounds`: a zoom out stops at the data.
fn kept_within(r: (f64, f64), bounds: (f64, f64)) -> (f64, f64) {
    let width = (r.1 - r.0).min(bounds.1 - bounds.0);
    let a = r.0.max(bounds.0).min(bounds.1 - width);
    (a, a + width)
}
