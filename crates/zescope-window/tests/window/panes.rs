//! Stacked panes, driven through egui_kittest against a sampler on a private simulated driver:
//! their plot areas start at one x (one y-label width for all, so the shared cursor is straight)
//! and end inside the window; y lock holds a pane's value axis; "+ Pane" brings the new pane into view, and an empty pane draws a
//! drop target, not an axis made up for no data. A legend's colour button shows the colour picked,
//! not the darker one a light colour is drawn in on the light theme.

use crate::support::pump;

use egui_kittest::kittest::Queryable;
use zescope_store::Store;
use zescope_window::ZescopeApp;
use zescope_window::settings::Settings;

const SIZE: [f32; 2] = [1280.0, 860.0];

#[test]
fn panes_line_up_and_a_new_pane_is_brought_into_view() {
    let sim = crate::support::sim(|_| {});
    let mut settings = Settings::default();
    settings.selection.groups = ["ComputeBasic".to_owned(), "MemoryTraffic".to_owned()].into_iter().collect();
    let app = ZescopeApp::new(Box::new(crate::support::sampler_on(&sim)), settings, Store::new(64 << 20));
    let mut h = crate::support::harness_of(app, SIZE);
    pump(&mut h, "samples in several panes", |a| {
        a.state.ingest.samples_total > 50 && a.panes.arrangement.panes.len() >= 3
    });
    for _ in 0..3 {
        h.step();
    }
    let frames: Vec<egui::Rect> = h.state().plot_frames.iter().filter_map(|(_, r)| *r).collect();
    assert!(frames.len() >= 2, "{:?}", h.state().plot_frames);
    let left = frames[0].left();
    for f in &frames {
        assert!((f.left() - left).abs() < 0.5, "time axes start at one x: {frames:?}");
        assert!((f.width() - frames[0].width()).abs() < 0.5, "and end at one x: {frames:?}");
        assert!(f.right() <= SIZE[0], "nothing cut at the right edge: {f:?}");
    }

    // y lock holds the first pane's value axis while data goes on arriving; again lets it fit.
    let first = h.state().panes.arrangement.panes[0].id;
    h.get_all_by_label("y lock").next().unwrap().click();
    h.step();
    h.step();
    let held = *h.state().panes.y_lock.get(&first).expect("the first pane is locked");
    let n = h.state().state.ingest.samples_total;
    pump(&mut h, "more samples", |a| a.state.ingest.samples_total > n + 50);
    h.step();
    assert_eq!(h.state().panes.y_lock.get(&first), Some(&held), "the axis stays where it was held");
    h.get_all_by_label("y lock").next().unwrap().click();
    h.step();
    assert!(h.state().panes.y_lock.is_empty(), "unlocked");

    // Panes are added below the fold; each is scrolled into view, as an empty drop target.
    let before = h.state().panes.arrangement.panes.len();
    for n in 1..=3 {
        h.get_by_label("+ Pane").click();
        for _ in 0..4 {
            h.step();
        }
        let title = format!("Pane {}", before + n);
        let r = h.get_by_label(&title).rect();
        assert!(r.top() >= 0.0 && r.bottom() <= SIZE[1], "{title} is on screen: {r:?}");
        let id = h.state().panes.arrangement.panes.last().unwrap().id;
        let drawn = h.state().plot_frames.iter().find(|(p, _)| *p == id).map(|(_, r)| *r);
        assert_eq!(drawn, Some(None), "the empty pane has no plot axes");
    }
    h.get_all_by_label_contains("Empty pane: drag a metric here").next().expect("the drop target says what to do");
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// Yellow picked for a series in the light theme: the plot and the name draw it darker (readable
/// on white), but the legend's colour button shows, and edits, the yellow picked.
#[test]
fn the_colour_button_shows_the_colour_picked_not_the_one_drawn() {
    use zescope_window::settings::Theme;
    const YELLOW: egui::Color32 = egui::Color32::from_rgb(255, 220, 0);

    let settings = Settings { theme: Theme::Light, ..Settings::default() };
    let mut h = crate::support::showing(&crate::support::example_session(), settings, SIZE, None);
    let key = h.state().panes.arrangement.panes[0].series[0].clone();
    h.state_mut().panes.arrangement.set_color(&key, [YELLOW.r(), YELLOW.g(), YELLOW.b()]);
    h.step();
    h.step();

    fn flatten(s: &egui::Shape, out: &mut Vec<egui::Shape>) {
        match s {
            egui::Shape::Vec(v) => v.iter().for_each(|s| flatten(s, out)),
            s => out.push(s.clone()),
        }
    }
    let mut shapes = Vec::new();
    h.output().shapes.iter().for_each(|c| flatten(&c.shape, &mut shapes));
    let button = shapes.iter().any(|s| matches!(s, egui::Shape::Rect(r) if r.fill == YELLOW));
    assert!(button, "a colour button filled with the yellow picked");
    let plotted_yellow =
        shapes.iter().any(|s| matches!(s, egui::Shape::Mesh(m) if m.vertices.iter().any(|v| v.color == YELLOW)));
    assert!(!plotted_yellow, "the plot draws it darker on white");
    assert_eq!(h.state().panes.arrangement.clone().color(&key), [YELLOW.r(), YELLOW.g(), YELLOW.b()], "kept as picked");
}
