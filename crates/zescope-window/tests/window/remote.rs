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

/// A link that hands over the events given, once.
struct Events(std::sync::Mutex<std::collections::VecDeque<zescope_sampler::Event>>);

impl zescope_window::link::SamplerLink for Events {
    fn send(&self, _: zescope_sampler::Command) {}
    fn try_recv(&self) -> Option<zescope_sampler::Event> {
        self.0.lock().unwrap().pop_front()
    }
    fn shutdown(&mut self, _: std::time::Duration) -> Result<(), std::time::Duration> {
        Ok(())
    }
}

#[test]
fn a_remote_runs_markers_land_on_the_windows_markers() {
    use zescope_markers::Kind;
    use zescope_sampler::Event;
    let marker = |kind, t_ns, name: &str| Event::Marker { kind, t_ns, name: name.to_owned() };
    let events = [
        marker(Kind::Instant, 1_000, "loaded"),
        marker(Kind::Begin, 2_000, "phase"),
        marker(Kind::End, 5_000, "phase"),
    ];
    let link = Events(std::sync::Mutex::new(events.into_iter().collect()));
    let mut app = ZescopeApp::new(Box::new(link), Settings::default(), Store::new(64 << 20));
    app.auto_start = false;
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);
    h.step();
    let marks = h.state().markers.marks();
    let got: Vec<_> = marks.iter().map(|m| (m.label.as_str(), m.t_ns, m.end_ns(i64::MAX))).collect();
    assert_eq!(
        got,
        [("loaded", 1_000, 1_000), ("phase", 2_000, 5_000)],
        "the server's markers, as the socket's are filed"
    );
}
