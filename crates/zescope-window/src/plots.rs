//! The plot panes: one egui_plot per pane, fed only by store envelopes (`envelope_plot`), with
//! one time axis for all (linked x, shared cursor), zoom and pan that leave live mode, the exact
//! nearest samples on hover, and the legend/statistics table under each pane.
//!
//! Double-click on a plot fits the time axis to all the data. The wheel works as in other plot tools (PlotJuggler, rerun): over a plot it zooms the time
//! axis about the pointer (Ctrl+wheel and pinch too), Shift+wheel and dragging pan in time, and
//! anywhere else (legends, titles, gaps) it scrolls the pane list.

use egui::{Color32, Id, RichText, Ui};
use egui_plot::{Plot, VLine};

use zescope_store::Store;

use super::compare::Comparison;
use zescope_model::view::cursors::{Cursors, Which};
use zescope_model::view::{SeriesKey, TimeView, data_x};

use super::axes;
use super::empty_pane;
use super::envelope_plot::{PlotFrame, PlotSeries};
use super::legend::{self, LegendAction, LegendRow};
use super::panes::Panes;
use super::readout;
use super::state::AppState;

/// Colour of the A/B cursors.
const CURSOR: Color32 = Color32::from_rgb(240, 150, 40);

/// How near (points) a press must be to a cursor's line to drag it.
const GRAB_PX: f32 = 6.0;

/// A wheel that scrolled the pane list this recently (seconds) is still scrolling it.
const WHEEL_GESTURE_S: f64 = 0.3;

/// Height of a pane's plot, at least.
const MIN_PLOT_HEIGHT: f32 = 140.0;

/// What the panes did this frame.
#[derive(Default)]
pub struct PlotsOutcome {
    /// The hovered time (plot x), for the shared cursor.
    pub hover_x: Option<f64>,
    /// The x range shown.
    pub shown: Option<(f64, f64)>,
    /// A pane's context menu asked to export it: (what, pane index).
    pub write: Option<(super::dialogs::FileKind, usize)>,
    /// The plots' width in points (of the last plot drawn).
    pub plot_width: Option<f32>,
    /// Each pane's plot area, in order; `None` for a pane with nothing to plot.
    pub frames: Vec<(u64, Option<egui::Rect>)>,
    /// A legend asked for a trigger with this expression (to edit in the Triggers window).
    pub trigger: Option<String>,
}

/// What is drawn over the panes besides the data: markers, the A/B cursors (which a
/// Shift+click or a drag moves), a comparison run.
pub struct Overlays<'a> {
    /// The markers.
    pub markers: &'a [zescope_model::view::Mark],
    /// The triggers' firings, as bands of the time kept around each.
    pub firings: &'a [zescope_model::view::Mark],
    /// The A/B cursors.
    pub cursors: &'a mut Cursors,
    /// A second session overlaid in a lighter shade.
    pub compare: Option<&'a mut Comparison>,
}

pub fn show(
    ui: &mut Ui,
    panes: &mut Panes,
    store: &Store,
    state: &AppState,
    view: &mut TimeView,
    hover_x: Option<f64>,
    overlays: Overlays<'_>,
) -> PlotsOutcome {
    let Overlays { markers, firings, cursors, mut compare } = overlays;
    let mut out = PlotsOutcome::default();
    if let Some(c) = compare.as_deref_mut() {
        c.align(store, markers);
        c.prepare(panes.layout.panes.iter().map(|p| p.id));
    }
    // Which cursor a drag on a plot is moving (kept across frames until the button is released).
    let grab_id = Id::unique("zescope-cursor-drag");
    let mut grabbed: Option<Which> = ui.ctx().data(|d| d.get_temp::<Which>(grab_id));
    let mut cursor_moved = false;
    let target = view.range(data_x(store));
    out.shown = target;
    let link = Id::unique("zescope-time-axis");
    let specs = panes.layout.panes.clone();
    // Each pane as its menus name it: its number and what it plots ("2 · MHz").
    let numbers: Vec<(u64, String)> = specs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let units = pane_units_of(p, state);
            let what = if units.is_empty() { String::new() } else { format!(" · {}", units.join(", ")) };
            (p.id, format!("{}{what}", i + 1))
        })
        .collect();
    let n = specs.len().max(1) as f32;
    let legend_h: f32 = specs.iter().map(|p| 22.0 + 18.0 * p.series.len() as f32).sum();
    let plot_h = ((ui.available_height() - legend_h - 40.0 * n) / n).max(MIN_PLOT_HEIGHT);
    let bg = ui.visuals().extreme_bg_color;
    let y_id = Id::unique("zescope-pane-y-range");
    let pane_units: Vec<(u64, String)> = specs.iter().map(|p| (p.id, pane_unit(p, state))).collect();
    let y_width = axes::shared_y_width(ui, y_id, &pane_units);
    let mut actions: Vec<(u64, LegendAction)> = Vec::new();
    let mut user_moved: Option<(f64, f64)> = None;
    let mut wheel_zoom: Option<(f64, f64)> = None;
    let mut remove_pane = None;
    let mut fit = false;
    let mut toggle_lock = None;
    let mut export = None;
    // A wheel gesture that began scrolling the pane list goes on scrolling it when a plot comes
    // under the pointer, rather than turning into a zoom.
    let list_wheel = Id::unique("zescope-pane-list-wheel");
    let now = ui.input(|i| i.time);
    // Within the gesture's time, or on the frame after one that scrolled the list (a slow frame
    // must not end a gesture that is still under way).
    let pass = ui.ctx().cumulative_pass_nr();
    let list_scrolling = ui
        .ctx()
        .data(|d| d.get_temp::<(f64, u64)>(list_wheel))
        .is_some_and(|(t, p)| now - t < WHEEL_GESTURE_S || pass <= p + 1);
    let wheel = ui.input(|i| i.smooth_scroll_delta.y);
    let mut plot_took_wheel = false;
    let area = egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
        for (i, spec) in specs.iter().enumerate() {
            let rows: Vec<(SeriesKey, Color32, bool)> = spec
                .series
                .iter()
                .map(|k| (k.clone(), drawn(panes.color(k), bg), panes.layout.is_visible(k)))
                .collect();
            let units = pane_units_of(spec, state);
            let unit = if units.len() == 1 { units[0].clone() } else { String::new() };
            let states_only = !spec.series.is_empty()
                && spec.series.iter().all(|k| state.ingest.series.get(k).is_some_and(|e| e.is_state()));
            // The pane's buttons first, from the right edge, so a narrow window truncates the
            // title rather than pushing them out of sight.
            ui.horizontal(|ui| {
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    if ui.small_button("x").on_hover_text("remove this pane").clicked() {
                        remove_pane = Some(spec.id);
                    }
                    let locked = panes.y_lock.contains_key(&spec.id);
                    let lock = ui.selectable_label(locked, "y lock").on_hover_text(
                        "hold this pane's value axis where it is; then drag and Ctrl+wheel move and zoom it too",
                    );
                    if lock.clicked() {
                        toggle_lock = Some(spec.id);
                    }
                    ui.menu_button("Export", |ui| {
                        use zescope_model::write::{FORMATS, Scope};
                        for f in FORMATS.iter().filter(|f| f.in_window()) {
                            let label = match f.scope() {
                                Scope::Picture => format!("{}…", f.title()),
                                Scope::Samples => format!("{} of the visible data…", f.name()),
                                Scope::Session => continue,
                            };
                            if ui.button(label).clicked() {
                                ui.close();
                                export = Some((super::dialogs::FileKind::File(*f), i));
                            }
                        }
                    });
                    ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
                        ui.label(RichText::new(format!("Pane {}", i + 1)).strong());
                        if !units.is_empty() {
                            ui.add(egui::Label::new(RichText::new(units.join(", ")).weak()).truncate());
                        }
                    });
                });
            });
            let items: Vec<PlotSeries> = rows
                .iter()
                .filter(|(_, _, visible)| *visible)
                .flat_map(|(k, c, _)| {
                    let ids = state.ingest.series.get(k).map(|e| e.ids.clone()).unwrap_or_default();
                    ids.into_iter().enumerate().map(move |(run, id)| PlotSeries {
                        series: id,
                        name: format!("{}/{}#{run}", k.device, k.label()),
                        color: *c,
                    })
                })
                .collect();
            let limit = view.data_limit().map(|x| store.from_plot_x(x));
            let shown = if items.is_empty() {
                // Nothing to plot: no axes made up for no data, only where to drop a metric.
                let r = empty_pane::show(ui, MIN_PLOT_HEIGHT, spec.series.is_empty());
                if let Some(key) = r.dnd_release_payload::<SeriesKey>() {
                    actions.push((spec.id, LegendAction::MoveTo((*key).clone(), Some(spec.id))));
                }
                if panes.scroll_to == Some(spec.id) {
                    panes.scroll_to = None;
                    r.scroll_to_me(Some(egui::Align::Center));
                }
                out.frames.push((spec.id, None));
                target.unwrap_or((0.0, 1.0))
            } else {
                let y_lock = panes.y_lock.get(&spec.id).copied();
                let plot = Plot::new(("pane", spec.id))
                    .height(plot_h)
                    .link_axis(link, [true, false])
                    .allow_zoom([true, y_lock.is_some()])
                    .allow_drag([grabbed.is_none(), y_lock.is_some() && grabbed.is_none()])
                    .allow_scroll([true, false])
                    .allow_boxed_zoom(false)
                    .allow_double_click_reset(false)
                    .show_x(false)
                    .show_y(false)
                    // The plot area is not filled (the window's clear colour shows through, see
                    // `bare` in mod.rs): a fill shades every pixel of every pane once more per
                    // frame. Its outline is drawn below.
                    .show_background(false)
                    .grid_spacing(axes::GRID_MIN_PX..=300.0)
                    .custom_y_axes(vec![axes::y_axis(unit.clone(), y_width, states_only)])
                    .y_grid_spacer(axes::y_spacer)
                    .x_axis_formatter(axes::x_label);
                // The pane's series (and the comparison's) are queried and meshed before the plot
                // is shown, for the range the time view shows (`envelope_plot`).
                let frame = PlotFrame { x: target, y: y_lock, limit };
                let cache = panes.plot(spec.id);
                cache.query(store, &items, frame);
                let mut overlay = compare.as_deref_mut().and_then(|c| c.overlay(spec.id, &rows, bg));
                let mut data = cache.data_bounds();
                if let Some((plot, cstore, citems)) = overlay.as_mut() {
                    plot.query(cstore, citems, PlotFrame { limit: None, ..frame });
                    data.merge(&plot.data_bounds());
                }
                if let Some(t) = cache.predict(data) {
                    cache.mesh(store, &t);
                    if let Some((plot, cstore, _)) = overlay.as_mut() {
                        plot.mesh(cstore, &t);
                    }
                }
                let resp = plot.show(ui, |pui| {
                    if let Some((a, b)) = target {
                        pui.set_plot_bounds_x(a..=b);
                    }
                    // A held range, or the one a flat series gets (`flat_range`, as predicted).
                    match y_lock.or_else(|| super::envelope_plot::flat_range(&data)) {
                        Some((lo, hi)) => {
                            pui.set_auto_bounds([false, false]);
                            pui.set_plot_bounds_y(lo..=hi);
                        }
                        None => pui.set_auto_bounds([false, true]),
                    }
                    cache.add_to(pui, store);
                    if let Some((plot, cstore, _)) = overlay {
                        plot.add_to(pui, cstore);
                    }
                    if let Some(x) = hover_x {
                        pui.vline(VLine::new("cursor", x).color(Color32::from_gray(150)).width(1.0));
                    }
                    for (name, t) in [("A", cursors.a), ("B", cursors.b)] {
                        if let Some(t) = t {
                            pui.vline(VLine::new(name, store.to_plot_x(t)).color(CURSOR).width(1.5));
                        }
                    }
                    pui.pointer_coordinate()
                });
                let frame = *resp.transform.frame();
                // Throttle reasons of visible telemetry series as labelled bands.
                let throttle: Vec<_> = rows
                    .iter()
                    .filter(|(_, _, visible)| *visible)
                    .filter_map(|(k, _, _)| {
                        let e = state.ingest.series.get(k)?;
                        let names = zescope_sampler::telemetry::throttle_names(&e.info.description);
                        (!names.is_empty()).then(|| e.ids.iter().map(move |&id| (id, names.clone())))
                    })
                    .flatten()
                    .collect();
                if !throttle.is_empty() {
                    super::throttle::paint(ui, frame, &resp.transform, store, &throttle);
                }
                axes::remember_y(ui, y_id, spec.id, resp.transform.bounds().range_y(), frame.height());
                out.plot_width = Some(frame.width());
                let y = resp.transform.bounds().range_y();
                let y = (*y.start(), *y.end());
                if toggle_lock == Some(spec.id) {
                    toggle_lock = None;
                    panes.toggle_y_lock(spec.id, y);
                } else if y_lock.is_some() {
                    // Dragged or zoomed in y: the lock holds the new range.
                    panes.y_lock.insert(spec.id, y);
                }
                out.frames.push((spec.id, Some(frame)));
                super::marker_paint::paint(ui, frame, store, markers, |x| resp.transform.position_from_point_x(x));
                super::marker_paint::paint_strip(ui, frame, store, firings, |x| {
                    resp.transform.position_from_point_x(x)
                });
                for (name, t) in [("A", cursors.a), ("B", cursors.b)] {
                    let Some(t) = t else { continue };
                    let x = resp.transform.position_from_point_x(store.to_plot_x(t));
                    if (frame.left()..=frame.right()).contains(&x) {
                        ui.painter_at(frame).text(
                            egui::pos2(x + 3.0, frame.bottom() - 2.0),
                            egui::Align2::LEFT_BOTTOM,
                            name,
                            egui::FontId::proportional(12.0),
                            CURSOR,
                        );
                    }
                }
                // Cursors: Shift+click sets them, a drag that starts on a cursor's line moves it.
                ui.painter().rect_stroke(
                    resp.response.rect,
                    2.0,
                    ui.visuals().widgets.noninteractive.bg_stroke,
                    egui::StrokeKind::Inside,
                );
                let pointer_t = resp.inner.map(|p| store.from_plot_x(p.x));
                if resp.response.drag_started()
                    && let Some(pos) = resp.response.interact_pointer_pos()
                {
                    let near = |t: Option<i64>| {
                        t.map(|t| (resp.transform.position_from_point_x(store.to_plot_x(t)) - pos.x).abs())
                            .filter(|d| *d <= GRAB_PX)
                    };
                    grabbed = match (near(cursors.a), near(cursors.b)) {
                        (Some(a), Some(b)) => Some(if a <= b { Which::A } else { Which::B }),
                        (Some(_), None) => Some(Which::A),
                        (None, Some(_)) => Some(Which::B),
                        (None, None) => grabbed,
                    };
                }
                if let Some(w) = grabbed
                    && (resp.response.dragged() || resp.response.drag_stopped())
                {
                    if let Some(pos) = resp.response.interact_pointer_pos() {
                        let x = resp.transform.value_from_position(pos).x;
                        cursors.set(w, store.from_plot_x(x));
                    }
                    cursor_moved = true;
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
                        user_moved = Some(shown);
                    }
                }
                if resp.response.double_clicked() {
                    fit = true;
                }
                if resp.response.hovered() && !list_scrolling {
                    plot_took_wheel = true;
                    // Out no further than the data, or what was shown when that was wider (a
                    // live window longer than the run so far): never before the first sample.
                    let bounds = zescope_model::view::data_x(store).map(|(a, b)| (a, b.max(shown.1)));
                    let zoomed = wheel_over_plot(ui, shown, resp.inner.map(|p| p.x));
                    wheel_zoom = wheel_zoom.or(zoomed.map(|z| bounds.map_or(z, |b| kept_within(z, b))));
                }
                if resp.response.hovered()
                    && let Some(p) = resp.inner
                {
                    out.hover_x = Some(p.x);
                    let t = store.from_plot_x(p.x);
                    // The readout sits in the plot's top corner away from the pointer, never over
                    // the data being read.
                    let frame = *resp.transform.frame();
                    let pointer_right = ui.input(|i| i.pointer.hover_pos()).is_some_and(|q| q.x > frame.center().x);
                    let (at, align) = if pointer_right {
                        (frame.left_top() + egui::vec2(8.0, 4.0), egui::RectAlign::BOTTOM_START)
                    } else {
                        (frame.right_top() + egui::vec2(-8.0, 4.0), egui::RectAlign::BOTTOM_END)
                    };
                    let mut tip = egui::containers::Tooltip::for_enabled(&resp.response);
                    tip.popup = tip.popup.anchor(egui::PopupAnchor::Position(at)).align(align);
                    tip.show(|ui| readout::readout(ui, &rows, state, store, t, p.x));
                }
                if let Some(key) = resp.response.dnd_release_payload::<SeriesKey>() {
                    actions.push((spec.id, LegendAction::MoveTo((*key).clone(), Some(spec.id))));
                }
                if panes.scroll_to == Some(spec.id) {
                    panes.scroll_to = None;
                    resp.response.scroll_to_me(Some(egui::Align::Center));
                }
                shown
            };
            let t1 = store.from_plot_x(shown.1);
            let range = Some((store.from_plot_x(shown.0), limit.map_or(t1, |l| l.min(t1))));
            let legend_rows: Vec<LegendRow> = rows
                .iter()
                .map(|(k, c, v)| LegendRow { key: k, color: *c, picked: panes.color(k), visible: *v })
                .collect();
            for a in legend::show(ui, spec.id, &legend_rows, &numbers, state, store, range) {
                actions.push((spec.id, a));
            }
            ui.add_space(8.0);
        }
    });
    if wheel != 0.0 && !plot_took_wheel && ui.rect_contains_pointer(area.inner_rect) {
        ui.ctx().data_mut(|d| d.insert_temp(list_wheel, (now, pass)));
    }
    if cursor_moved {
        // The drag moved a cursor, not the time axis.
        user_moved = None;
    }
    if grabbed.is_some() && !ui.input(|i| i.pointer.primary_down()) {
        grabbed = None;
    }
    ui.ctx().data_mut(|d| match grabbed {
        Some(w) => {
            d.insert_temp(grab_id, w);
        }
        None => d.remove::<Which>(grab_id),
    });
    if fit {
        // Double-click: all the data, like Fit.
        view.fit(data_x(store));
        out.shown = view.range(data_x(store));
    } else if let Some(r) = wheel_zoom.or(user_moved) {
        view.user_moved(r);
        out.shown = Some(r);
    }
    out.write = export;
    if let Some(id) = remove_pane {
        panes.remove_pane(id);
    }
    for (pane, a) in actions {
        match a {
            LegendAction::Visible(k, v) => panes.layout.set_visible(&k, v),
            LegendAction::Color(k, c) => panes.set_color(&k, c),
            LegendAction::MoveTo(k, to) => panes.assign(&k, to),
            LegendAction::AlsoIn(k, to) => panes.layout.show_also(&k, to),
            LegendAction::Remove(k) => panes.layout.remove_series(pane, &k),
            LegendAction::Trigger(expr) => out.trigger = Some(expr),
        }
    }
    out
}

/// A series colour as drawn on the plot background `bg` (`view::contrast`: no yellow on white).
pub(crate) fn drawn(c: Color32, bg: Color32) -> Color32 {
    let [r, g, b] = zescope_model::view::contrast::on_background([c.r(), c.g(), c.b()], [bg.r(), bg.g(), bg.b()]);
    Color32::from_rgb(r, g, b)
}

/// The plotted units of a pane's series, each once, sorted.
fn pane_units_of(spec: &zescope_model::view::PaneSpec, state: &AppState) -> Vec<String> {
    let units: std::collections::BTreeSet<String> =
        spec.series.iter().filter_map(|k| state.ingest.series.get(k).map(|e| e.plotted_unit())).collect();
    units.into_iter().collect()
}

/// The unit a pane's y axis reads in: its series' one unit, or none when they differ.
fn pane_unit(spec: &zescope_model::view::PaneSpec, state: &AppState) -> String {
    match pane_units_of(spec, state).as_slice() {
        [one] => one.clone(),
        _ => String::new(),
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
