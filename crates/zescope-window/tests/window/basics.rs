//! The real UI, driven by egui_kittest without a window or GPU, against a real sampler thread
//! on a private simulated driver: start a run and see a pane get data, pause, zoom while live
//! and return with End, search, an injected fault shown as a banner followed by a working run,
//! and quitting through the teardown.

use crate::support::pump;

use std::sync::Arc;

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use ze_sim::Sim;
use zescope_model::view::TimeAxis;
use zescope_model::view::timeview::Mode;
use zescope_window::ZescopeApp;
use zescope_window::settings::Settings;

fn app(sim: &Arc<Sim>) -> ZescopeApp {
    crate::support::app_on(sim, Settings::default())
}

fn harness(app: ZescopeApp) -> Harness<'static, ZescopeApp> {
    crate::support::harness_of(app, crate::support::WINDOW)
}

fn start(h: &mut Harness<'_, ZescopeApp>) {
    pump(h, "the inventory", |a| a.state.inventory.is_some());
    h.get_by_label("Start").click();
    pump(h, "a run with samples in a pane", |a| {
        a.state.ingest.run.is_some() && a.state.ingest.samples_total > 20 && !a.panes.arrangement.panes.is_empty()
    });
}

#[test]
fn start_shows_data_in_panes_and_quit_tears_down() {
    let sim = crate::support::sim(|_| {});
    let mut h = harness(app(&sim));
    start(&mut h);
    let a = h.state();
    assert_eq!(a.state.ingest.run.as_ref().unwrap().info.streams[0].group, "ComputeBasic");
    assert!(a.panes.arrangement.panes.len() >= 3, "one pane per unit");
    assert!(a.store.memory_used() > 0);
    h.get_by_label_contains("ComputeBasic/GpuPower");
    assert_eq!(sim.live_imports(), 1);
    crate::support::quit_discarding(&mut h);
    assert_eq!(h.state().quit, Some(Ok(())), "quit waited for the teardown");
    assert_eq!(sim.live_imports(), 0);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn pause_freezes_the_view_while_sampling_continues() {
    let sim = crate::support::sim(|_| {});
    let mut h = harness(app(&sim));
    start(&mut h);
    h.key_press(egui::Key::Space);
    h.step();
    assert_eq!(h.state().view.mode, Mode::Paused);
    let frozen = h.state().view.range(None);
    let before = h.state().state.ingest.samples_total;
    pump(&mut h, "samples while paused", |a| {
        a.state.ingest.samples_total > before + 20 && a.view.new_since_frozen > 20
    });
    assert_eq!(h.state().view.range(None), frozen, "the view did not move");
    let limit = h.state().view.data_limit().expect("a paused view has a data limit");
    let limit_ns = TimeAxis::of(&h.state().store).ns(limit);
    let pane = h.state().panes.arrangement.panes[0].id;
    let (_, t1, _) = h.state_mut().panes.plot(pane).last_query().expect("the pane drew");
    assert!(t1 <= limit_ns, "nothing newer than the pause is drawn ({t1} > {limit_ns})");
    h.get_by_label_contains("new samples");
    h.key_press(egui::Key::Space);
    h.step();
    assert!(h.state().view.is_live());
}

#[test]
fn zooming_while_live_leaves_follow_mode_and_end_returns() {
    let sim = crate::support::sim(|_| {});
    let mut h = harness(app(&sim));
    start(&mut h);
    // Scroll-zoom over the first pane's plot (where it was drawn: the overview strip above the
    // panes grows with them).
    h.step();
    let plot = h.state().plot_frames.iter().find_map(|(_, r)| *r).expect("a plot").center();
    h.hover_at(plot);
    h.step();
    h.event(egui::Event::Zoom(2.0));
    h.step();
    h.step();
    assert_eq!(h.state().view.mode, Mode::Zoomed, "a zoom while streaming leaves live mode");
    let before = h.state().state.ingest.samples_total;
    pump(&mut h, "more samples", |a| a.state.ingest.samples_total > before + 10);
    assert_eq!(h.state().view.mode, Mode::Zoomed, "data arriving does not undo the zoom");
    h.key_press(egui::Key::End);
    h.step();
    assert!(h.state().view.is_live());
}

#[test]
fn search_filters_groups_and_metrics() {
    let sim = crate::support::sim(|_| {});
    let mut h = harness(app(&sim));
    pump(&mut h, "the inventory", |a| a.state.inventory.is_some());
    h.step();
    assert!(h.query_by_label_contains("ComputeBasic").is_some());
    assert!(h.query_by_label_contains("MemoryTraffic").is_some());
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::F);
    h.step();
    h.step();
    let search = h.get_by_role(Role::TextInput);
    assert!(search.is_focused(), "Ctrl+F focuses the search box");
    search.type_text("bytesread");
    h.step();
    h.step();
    assert!(h.query_by_label_contains("ComputeBasic").is_none(), "non-matching groups are hidden");
    assert!(h.query_by_label_contains("MemoryTraffic").is_some(), "the group of a matching metric stays");
    assert!(h.query_by_label("BytesRead [bytes]").is_some(), "the matching metric is shown");
    assert!(h.query_by_label_contains("RenderBasic").is_some(), "and the streamed group of L3BytesRead");
    assert!(h.query_by_label_contains("MemoryTemperature").is_none());
}

#[test]
fn a_driver_fault_shows_a_banner_and_a_new_run_works() {
    let sim = crate::support::sim(|_| {});
    sim.configure(|f, _| f.import_fails = true);
    let mut h = harness(app(&sim));
    pump(&mut h, "the inventory", |a| a.state.inventory.is_some());
    h.get_by_label("Start").click();
    pump(&mut h, "an error banner", |a| !a.state.banners.is_empty());
    h.step();
    h.get_by_label("Driver error");
    h.get_by_label_contains("zeMemAllocDevice failed with");
    assert!(h.state().state.ingest.run.is_none());
    sim.configure(|f, _| f.import_fails = false);
    h.get_by_label("x").click();
    h.step();
    assert!(h.state().state.banners.is_empty(), "dismissed");
    h.get_by_label("Start").click();
    pump(&mut h, "samples from the new run", |a| a.state.ingest.samples_total > 10);
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn a_series_moves_to_a_new_pane_from_its_legend_menu() {
    let sim = crate::support::sim(|_| {});
    let mut h = harness(app(&sim));
    start(&mut h);
    h.step();
    let before = h.state().panes.arrangement.panes.len();
    h.get_by_label("ComputeBasic/GpuTime").click_secondary();
    h.step();
    h.step();
    h.get_by_label("Move to a new pane").click();
    h.step();
    let panes = &h.state().panes.arrangement.panes;
    assert_eq!(panes.len(), before + 1);
    assert_eq!(panes.last().unwrap().series.iter().map(|k| k.metric.as_str()).collect::<Vec<_>>(), ["GpuTime"]);
    assert!(panes[..before].iter().all(|p| p.series.iter().all(|k| k.metric != "GpuTime")), "moved, not copied");
}

#[test]
fn a_series_is_also_shown_in_a_new_pane_and_stays_in_its_own() {
    let sim = crate::support::sim(|_| {});
    let mut h = harness(app(&sim));
    start(&mut h);
    h.step();
    let before = h.state().panes.arrangement.panes.clone();
    let home = before.iter().position(|p| p.series.iter().any(|k| k.metric == "GpuTime")).expect("plotted");
    h.get_by_label("ComputeBasic/GpuTime").click_secondary();
    h.step();
    h.step();
    h.get_by_label("Also show in a new pane").click();
    h.step();
    h.step();
    let panes = &h.state().panes.arrangement.panes;
    assert_eq!(panes.len(), before.len() + 1);
    assert_eq!(panes.last().unwrap().series.iter().map(|k| k.metric.as_str()).collect::<Vec<_>>(), ["GpuTime"]);
    assert_eq!(panes[home].series, before[home].series, "still in its own pane");
    // Both panes draw it: two legends name it.
    assert_eq!(h.query_all_by_label("ComputeBasic/GpuTime").count(), 2);
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// Typed a key at a time, as a user types: every key lands in the search box (the × that shows
/// beside it once there is text does not take the focus away); Escape clears it; Ctrl+F selects
/// what is there, so typing replaces it.
#[test]
fn the_search_box_keeps_its_keys_clears_on_escape_and_ctrl_f_selects() {
    let sim = crate::support::sim(|_| {});
    let mut h = harness(app(&sim));
    pump(&mut h, "the inventory", |a| a.state.inventory.is_some());
    h.step();
    let type_keys = |h: &mut egui_kittest::Harness<'_, zescope_window::ZescopeApp>, text: &str| {
        for c in text.chars() {
            h.get_by_role(Role::TextInput).type_text(&c.to_string());
            h.step();
            h.step();
        }
    };
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::F);
    h.step();
    h.step();
    type_keys(&mut h, "busy");
    assert_eq!(h.state().search, "busy");
    assert!(h.get_by_role(Role::TextInput).is_focused(), "still typing into it");
    h.key_press(egui::Key::Escape);
    h.step();
    h.step();
    assert_eq!(h.state().search, "", "Esc clears the search");
    h.get_by_role(Role::TextInput).click();
    h.step();
    type_keys(&mut h, "gpu");
    assert_eq!(h.state().search, "gpu");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::F);
    h.step();
    h.step();
    type_keys(&mut h, "mem");
    assert_eq!(h.state().search, "mem", "Ctrl+F selected the old text: typing replaced it");
}

/// Keys meant for a text field never fire the single-letter shortcuts: Enter adds a trigger and
/// the field keeps the keys, so the next expression's `m` adds no marker and its spaces do not
/// pause the view.
#[test]
fn keys_typed_after_enter_in_a_field_fire_no_shortcut() {
    let sim = crate::support::sim(|_| {});
    let mut h = harness(app(&sim));
    pump(&mut h, "the inventory", |a| a.state.inventory.is_some());
    h.get_by_label("Start").click();
    pump(&mut h, "samples", |a| a.state.ingest.samples_total > 10);
    h.state_mut().windows.triggers.open = true;
    h.step();
    h.step();
    // The trigger field: the text box right of the source panel's search box.
    let in_triggers = |h: &egui_kittest::Harness<'_, zescope_window::ZescopeApp>| {
        let boxes: Vec<egui::Rect> = h.get_all_by_role(Role::TextInput).map(|n| n.rect()).collect();
        assert_eq!(boxes.len(), 2, "the search box and the trigger field");
        boxes.into_iter().max_by(|a, b| a.left().total_cmp(&b.left())).unwrap()
    };
    let at = in_triggers(&h).center();
    crate::support::click_at(&mut h, at);
    h.step();
    for c in "ComputeBasic/GpuUtilization > 80".chars() {
        let node = h.get_all_by_role(Role::TextInput).find(|n| n.rect().contains(at)).unwrap();
        node.type_text(&c.to_string());
        h.step();
    }
    h.key_press(egui::Key::Enter);
    h.step();
    h.step();
    assert_eq!(h.state().state.triggers.eval.triggers().len(), 1, "{:?}", h.state().state.triggers.error);
    let markers = h.state().markers.len();
    let live = h.state().view.is_live();
    for key in [egui::Key::M, egui::Key::Space, egui::Key::A] {
        h.key_press(key);
        h.step();
    }
    assert_eq!(h.state().markers.len(), markers, "no marker from an m typed for the field");
    assert_eq!(h.state().view.is_live(), live, "no pause from a space typed for the field");
    assert!(h.state().cursors.a.is_none(), "no cursor from an a typed for the field");
    // A click elsewhere ends the typing: M adds a marker again.
    let plot = h.state().plot_frames.iter().find_map(|(_, r)| *r).expect("a plot");
    crate::support::click_at(&mut h, plot.center());
    h.step();
    h.key_press(egui::Key::M);
    h.step();
    assert_eq!(h.state().markers.len(), markers + 1);
    crate::support::quit_discarding(&mut h);
}

/// In a small window (900x600) the hover readout of a pane partly scrolled out of view stays in
/// the panes' column: it was flipped above the plot and pushed left over the side panel.
#[test]
fn the_hover_readout_stays_beside_the_side_panel_in_a_small_window() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_of(app(&sim), [900.0, 600.0]);
    start(&mut h);
    h.step();
    let side_right = h.get_by_role(Role::TextInput).rect().right();
    // The lowest plot drawn, near its right edge and its top: the pane below the first, cut by
    // the window's bottom.
    let frames: Vec<egui::Rect> = h.state().plot_frames.iter().filter_map(|(_, r)| *r).collect();
    let plot = frames.iter().filter(|r| r.top() < 560.0).max_by(|a, b| a.top().total_cmp(&b.top())).copied();
    let plot = plot.unwrap_or_else(|| panic!("a plot starting in the window: {frames:?}"));
    h.hover_at(egui::pos2(plot.right() - 20.0, plot.top() + 10.0));
    for _ in 0..30 {
        h.step();
        if h.query_by_label_contains("t = ").is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let readout = h.get_by_label_contains("t = ").rect();
    assert!(readout.left() >= side_right, "the readout {readout:?} covers the side panel (to x = {side_right})");
}

/// At 1600 wide the hover readout covers what it must and no more: under 40 % of the plot's width
/// (it was ~600 px, its columns sized for texts far longer than a value and a time).
#[test]
fn the_hover_readout_covers_little_of_a_wide_plot() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_of(app(&sim), [1600.0, 1000.0]);
    start(&mut h);
    h.step();
    let plot = h.state().plot_frames.iter().find_map(|(_, r)| *r).expect("a plot");
    h.hover_at(egui::pos2(plot.right() - 20.0, plot.top() + 10.0));
    for _ in 0..30 {
        h.step();
        if h.query_all_by_label_contains("t = ").count() > 0 && h.query_all_by_label_contains("@ ").count() > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let inside = |r: egui::Rect| plot.contains(r.center());
    let left = h.get_all_by_label_contains("t = ").map(|n| n.rect()).filter(|r| inside(*r)).map(|r| r.left());
    let left = left.fold(f32::INFINITY, f32::min);
    // Its rightmost texts: the sample times and how old a sample is (the pointer is past the last).
    let times = h.get_all_by_label_contains("@ ").chain(h.get_all_by_label_contains(" s before"));
    let right = times.map(|n| n.rect()).filter(|r| inside(*r)).map(|r| r.right());
    let right = right.fold(left, f32::max);
    assert!(left.is_finite(), "a readout in the plot");
    let width = right - left;
    assert!(
        width < 0.4 * plot.width() && width < 480.0,
        "the readout is {width} wide over a plot {} wide",
        plot.width()
    );
}

/// The status bar's note of the last outcome stays on the bar's one line however long, and
/// "saved …" goes once samples come in that the file does not hold.
#[test]
fn the_status_note_keeps_one_line_and_a_save_note_goes_with_new_samples() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_of(app(&sim), [900.0, 600.0]);
    start(&mut h);
    let long = format!("exported {}.csv", "a-long-file-name-".repeat(8));
    h.state_mut().files.note = Some(long.clone());
    h.step();
    h.step();
    let source = h.get_by_label("simulated device").rect();
    let note = h.get_by_label(&long).rect();
    assert!((note.center().y - source.center().y).abs() < 2.0, "one line: note {note:?}, source {source:?}");
    h.state_mut().files.note = Some("saved run.ron".into());
    let n = h.state().state.ingest.samples_total;
    pump(&mut h, "samples after the note", |a| a.state.ingest.samples_total > n);
    h.step();
    assert!(h.query_by_label("saved run.ron").is_none(), "the note outlived the samples after it");
    crate::support::quit_discarding(&mut h);
}

/// A run over several devices and groups: its description is cut short on the status bar (whole
/// on hover), so the bar's figures (memory last) stay on its one line.
#[test]
fn a_long_run_description_keeps_the_status_bar_on_one_line() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_of(app(&sim), [1600.0, 1000.0]);
    start(&mut h);
    // As a GPU + NPU + tile run names itself: each device with its groups.
    {
        let info = &mut h.state_mut().state.ingest.run.as_mut().unwrap().info;
        let (t, d) = (info.config.targets[0].clone(), info.devices[0].clone());
        for k in 0..4 {
            let mut t = t.clone();
            t.groups.push(format!("KernelTrace{k}"));
            info.config.targets.push(t);
            info.devices.push(format!("{d} tile {k}"));
        }
    }
    h.step();
    h.step();
    let source = h.get_by_label("simulated device").rect();
    // The status bar's memory figure: the lowest label "memory … of …".
    let memory = h
        .get_all_by_label_contains(" of ")
        .map(|n| n.rect())
        .filter(|r| r.center().y > source.top() - 40.0)
        .max_by(|a, b| a.right().total_cmp(&b.right()))
        .expect("the memory figure");
    assert!((memory.center().y - source.center().y).abs() < 2.0, "one line: memory {memory:?}, source {source:?}");
    crate::support::quit_discarding(&mut h);
}

/// In a small window the status bar's items wrap whole: no item is split over two lines ("…
/// of 100 Hz" on one, "requested" on the next).
#[test]
fn status_bar_items_wrap_whole_in_a_small_window() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_of(app(&sim), [900.0, 600.0]);
    start(&mut h);
    // Notes of every length up to the bar's cut: one of them puts the rate at the bar's end.
    for n in 0..24 {
        h.state_mut().files.note = Some(format!("exported {}", "x".repeat(n * 2)));
        h.step();
        h.step();
        let source = h.get_by_label("simulated device").rect();
        // The bar's figures ("… Hz of 100 Hz requested", "memory … of …"): each on one line.
        for r in h.get_all_by_label_contains(" of ").map(|n| n.rect()).filter(|r| r.top() >= source.top() - 10.0) {
            assert!(
                r.height() < 1.5 * source.height(),
                "note of {n}: an item split over lines: {r:?}, a line is {source:?}"
            );
        }
    }
    crate::support::quit_discarding(&mut h);
}

/// Help → Keyboard shortcuts in a small window: every line is inside the window (was cut at the
/// screen's right edge at 900x600).
#[test]
fn the_shortcuts_fit_a_small_window() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_of(app(&sim), [900.0, 600.0]);
    h.step();
    h.get_by_label("Help").click();
    h.run();
    h.get_by_label("Keyboard shortcuts").click();
    h.run();
    h.step();
    for (_, what) in zescope_window::windows::SHORTCUTS {
        let r = h.get_by_label(what).rect();
        assert!(r.right() <= 900.0, "{what:?} runs off the window: {r:?}");
    }
}
