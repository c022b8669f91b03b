//! A remote run's source (`zescope --connect HOST:PORT`, whose feed names it `REMOTE HOST:PORT`
//! with the link's figures): the source panel's badge says REMOTE, and the status bar shows the
//! server's address, the link's bytes/s and round trip where a local run names Level Zero.

use egui_kittest::kittest::Queryable;
use zescope_sampler::{Inventory, SourceInfo};
use zescope_store::Store;
use zescope_window::ZescopeApp;
use zescope_window::settings::Settings;

#[test]
fn a_remote_source_shows_the_remote_badge_and_the_links_figures_in_the_status_bar() {
    let mut app = ZescopeApp::new(Box::new(crate::support::NoSampler), Settings::default(), Store::new(64 << 20));
    app.auto_start = false;
    let description = "REMOTE gpu-box:9464 · 12.5 KiB/s · rtt 0.4 ms".to_owned();
    let source =
        SourceInfo { requested: zescope_ze::Source::Auto, simulated: true, description, fallback_reason: None };
    app.state.inventory = Some(Inventory { source: Some(source), devices: Vec::new() });
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);
    h.step();
    h.step();
    h.get_by_label(" REMOTE ");
    // Twice: the source panel's line and the status bar's.
    let figures: Vec<_> = h.query_all_by_label("REMOTE gpu-box:9464 · 12.5 KiB/s · rtt 0.4 ms").collect();
    assert_eq!(figures.len(), 2, "the source panel and the status bar name the server and the link's figures");
    // A simulated device served remotely is still said to be simulated.
    h.get_by_label(" SIMULATED ");
}
