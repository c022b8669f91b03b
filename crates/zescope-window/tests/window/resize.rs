//! Panes shrink with the window, driven through egui_kittest against a sampler on a private
//! simulated driver: after the window was 1600 px wide, narrowing it to 800 px (and 660 px) keeps
//! every pane's Export and close buttons and its legend inside the window, and the source panel
//! gives up width it had in the wider window.

use crate::support::pump;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use zescope_window::ZescopeApp;
use zescope_window::settings::Settings;

fn assert_inside(h: &Harness<'_, ZescopeApp>, width: f32, what: &str) {
    // The source panel (320 px by default, as it was at 1600 px) takes at most 35 % of a narrower
    // window, so a width remembered from a wider window never crowds the panes out.
    let splitter = h.get_by_label("Resize panel").rect();
    let side = (0.35 * width).clamp(180.0, 320.0);
    assert!(splitter.max.x <= side + 25.0, "{what}: the source panel ends at {}, not by {side}", splitter.max.x);
    let closes: Vec<egui::Rect> = h.get_all_by_label("x").map(|n| n.rect()).collect();
    let writes: Vec<egui::Rect> = h.get_all_by_label("Export").map(|n| n.rect()).collect();
    let panes = h.state().panes.arrangement.panes.len();
    assert!(closes.len() >= panes && writes.len() >= panes, "{what}: every pane has its buttons");
    for r in closes.iter().chain(&writes) {
        assert!(r.min.x >= 0.0 && r.max.x <= width, "{what}: a pane button at {r:?} is outside 0..{width}");
    }
    // At 800 px the legend still fits: its last column (the mean) is on screen too. (Narrower,
    // the legend scrolls sideways.)
    for n in h.get_all_by_label("mean").filter(|_| width >= 800.0) {
        let r = n.rect();
        assert!(r.max.x <= width, "{what}: a legend header at {r:?} is outside 0..{width}");
    }
}

#[test]
fn narrowing_the_window_keeps_the_right_hand_controls_inside() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::with_inventory(crate::support::app_on(&sim, Settings::default()), [1600.0, 900.0]);
    h.get_by_label("Start").click();
    pump(&mut h, "panes with data", |a| a.state.ingest.samples_total > 20 && !a.panes.arrangement.panes.is_empty());
    h.step();
    assert_inside(&h, 1600.0, "at 1600 px");

    for width in [800.0, 660.0] {
        h.set_size(egui::vec2(width, 700.0));
        for _ in 0..4 {
            h.step();
        }
        assert_inside(&h, width, &format!("narrowed to {width} px"));
    }
    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
