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

/// Before a server's run comes (connecting, or the link down), the window says it waits for one:
/// it showed the user's own panes, each "No data … Pick them on the left and start a run" (no
/// Start exists for a remote source), "No devices found." in warning colour, and a "Level Zero"
/// badge for a server it had not reached.
#[test]
fn a_server_not_yet_reached_is_said_to_be_awaited_not_shown_as_empty_panes() {
    let mut settings = Settings::default();
    settings.arrangement.assign(&crate::support::gpu_key("ComputeBasic", "GpuTime"), None);
    settings.arrangement.assign(&crate::support::gpu_key("ComputeBasic", "GpuPower"), None);
    let mut app = ZescopeApp::new(Box::new(crate::support::NoSampler), settings, Store::new(64 << 20));
    app.auto_start = false;
    let description = "REMOTE connecting gpu-box:9464".to_owned();
    let source =
        SourceInfo { requested: zescope_ze::Source::Auto, simulated: false, description, fallback_reason: None };
    app.state.inventory = Some(Inventory { source: Some(source), devices: Vec::new() });
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);
    h.step();
    h.step();
    h.get_by_label_contains("Watching a zescope serve: connecting gpu-box:9464, no run received yet.");
    assert!(h.query_by_label_contains("No data for this pane").is_none(), "no empty panes");
    h.get_by_label("The server's devices come with its run.");
    assert!(h.query_by_label("No devices found.").is_none());
    assert!(h.query_by_label(" Level Zero ").is_none(), "no kind said of a server not reached");
    h.get_by_label(" REMOTE ");
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

/// A link that says when it was shut down.
struct Watched(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl zescope_window::link::SamplerLink for Watched {
    fn send(&self, _: zescope_sampler::Command) {}
    fn try_recv(&self) -> Option<zescope_sampler::Event> {
        None
    }
    fn shutdown(&mut self, _: std::time::Duration) -> Result<(), std::time::Duration> {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

/// File → Connect…: the dialog offers the servers connected to lately (the newest filled in),
/// refuses an address without a port and a connector's refusal in place, and on Connect
/// replaces the source with the link the connector opened (the old one shut down), whose
/// inventory then shows REMOTE; the server goes first in the remembered addresses.
#[test]
fn file_connect_offers_recent_servers_and_replaces_the_source_with_the_remote_link() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use zescope_window::connect::Remote;
    let remote = |a: &str| Remote { addr: a.to_owned(), token_file: None, layout: None };
    let settings =
        Settings { recent_remotes: vec![remote("gpu-box:9464"), remote("npu-rig:9464")], ..Settings::default() };
    let old_down = Arc::new(AtomicBool::new(false));
    let mut app = ZescopeApp::new(Box::new(Watched(Arc::clone(&old_down))), settings, Store::new(64 << 20));
    app.auto_start = false;
    let asked = Arc::new(Mutex::new(Vec::<Remote>::new()));
    let log = Arc::clone(&asked);
    app.connector = Some(Box::new(move |r: &Remote| {
        log.lock().unwrap().push(r.clone());
        if r.addr.starts_with("refused") {
            return Err("refused: cannot read the token file".to_owned());
        }
        let description = format!("REMOTE {}", r.addr);
        let source =
            SourceInfo { requested: zescope_ze::Source::Auto, simulated: false, description, fallback_reason: None };
        let inv = zescope_sampler::Event::Inventory(Inventory { source: Some(source), devices: Vec::new() });
        Ok(Box::new(Events(std::sync::Mutex::new([inv].into_iter().collect()))) as Box<_>)
    }));
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);
    h.step();
    h.get_by_label("File").click();
    h.step();
    h.step();
    h.get_by_label("Connect…").click();
    h.step();
    h.step();
    assert!(h.state().connect.open, "the dialog opened");
    assert_eq!(h.state().connect.addr, "gpu-box:9464", "filled in with the newest server");
    h.get_by_label("npu-rig:9464").click();
    h.step();
    assert_eq!(h.state().connect.addr, "npu-rig:9464", "a recent server fills the address in");
    let field = |h: &egui_kittest::Harness<'static, ZescopeApp>, text: &str| {
        h.get_by_label("Server address (HOST:PORT):").set_text_value_accesskit(text);
    };
    field(&h, "no-port");
    h.step();
    h.get_by_label("Connect").click();
    h.step();
    h.step();
    h.get_by_label_contains("is not HOST:PORT");
    assert!(asked.lock().unwrap().is_empty(), "an address without a port is refused before connecting");
    field(&h, "refused:1");
    h.step();
    h.get_by_label("Connect").click();
    h.step();
    h.step();
    h.get_by_label_contains("cannot read the token file");
    assert!(h.state().connect.open && !old_down.load(Ordering::SeqCst), "a refusal keeps the dialog and the source");
    field(&h, "lab-7:9500");
    h.step();
    h.get_by_label("Connect").click();
    for _ in 0..4 {
        h.step();
    }
    assert_eq!(asked.lock().unwrap().last(), Some(&remote("lab-7:9500")));
    assert!(old_down.load(Ordering::SeqCst), "the old source was shut down");
    assert!(!h.state().connect.open, "the dialog closed");
    h.get_by_label(" REMOTE ");
    assert_eq!(h.query_all_by_label("REMOTE lab-7:9500").count(), 2, "the source panel and the status bar");
    let recent: Vec<&str> = h.state().recent_remotes.iter().map(|r| r.addr.as_str()).collect();
    assert_eq!(recent, ["lab-7:9500", "gpu-box:9464", "npu-rig:9464"], "remembered first, once");
    // Remembered in the settings file as the other recents are.
    let text = ron::to_string(&Settings { recent_remotes: h.state().recent_remotes.clone(), ..Settings::default() });
    let back: Settings = ron::from_str(&text.unwrap()).unwrap();
    assert_eq!(back.recent_remotes, h.state().recent_remotes);
}

/// A sampler on a private simulated driver whose source says `REMOTE gpu-box:9464` (as the live
/// feed's thread names it): the run the test starts (while `server` is set) stands for the
/// server's; the window's own commands are logged and only `Sync` and `Stop` go through.
struct AsRemote {
    inner: zescope_sampler::SamplerHandle,
    sent: std::sync::Arc<std::sync::Mutex<Vec<zescope_sampler::Command>>>,
    server: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl zescope_window::link::SamplerLink for AsRemote {
    fn send(&self, c: zescope_sampler::Command) {
        use zescope_sampler::Command;
        if self.server.load(std::sync::atomic::Ordering::SeqCst) {
            return self.inner.send(c);
        }
        self.sent.lock().unwrap().push(c.clone());
        if matches!(c, Command::Sync(_) | Command::Stop) {
            self.inner.send(c);
        }
    }
    fn try_recv(&self) -> Option<zescope_sampler::Event> {
        let mut e = zescope_window::link::SamplerLink::try_recv(&self.inner)?;
        if let zescope_sampler::Event::Inventory(inv) = &mut e
            && let Some(s) = &mut inv.source
        {
            s.description = "REMOTE gpu-box:9464".to_owned();
        }
        Some(e)
    }
    fn shutdown(&mut self, timeout: std::time::Duration) -> Result<(), std::time::Duration> {
        zescope_window::link::SamplerLink::shutdown(&mut self.inner, timeout)
    }
}

/// A window with `settings` on a link that acts as a remote one (`AsRemote`), whose server runs
/// `group` every 3 ms; returns it once samples came, with the commands the window sent.
fn watching(
    settings: Settings,
    group: &str,
    size: [f32; 2],
) -> (egui_kittest::Harness<'static, ZescopeApp>, std::sync::Arc<std::sync::Mutex<Vec<zescope_sampler::Command>>>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use zescope_sampler::{Command, DevicePath, RunConfig};
    let sim = crate::support::sim(|_| {});
    let sent = Arc::new(Mutex::new(Vec::new()));
    let server = Arc::new(AtomicBool::new(false));
    let link =
        AsRemote { inner: crate::support::sampler_on(&sim), sent: Arc::clone(&sent), server: Arc::clone(&server) };
    let mut app = ZescopeApp::new(Box::new(link), settings, Store::new(64 << 20));
    app.auto_start = false;
    let mut h = crate::support::with_inventory(app, size);
    let cfg = RunConfig::single(DevicePath::default(), vec![group.to_owned()], std::time::Duration::from_millis(3));
    server.store(true, Ordering::SeqCst);
    h.state_mut().send(Command::Start(cfg));
    server.store(false, Ordering::SeqCst);
    crate::support::pump(&mut h, "the server's run", |a| a.state.ingest.samples_total > 10);
    (h, sent)
}

/// A remote run is the server's: the source panel ticks what the server samples (not the
/// user's own choice, which the settings keep), shows its way and interval as text, greys every
/// tick, and offers Disconnect instead of Stop, Start or an interval slider. Before, the slider
/// and Stop were there and did nothing.
#[test]
fn a_remote_runs_source_panel_shows_the_servers_choice_read_only() {
    use std::time::Duration;
    use zescope_sampler::Command;
    // The user's own choice: 10 ms, the default; the server's run: ComputeBasic every 3 ms.
    let (mut h, sent) = watching(Settings::default(), "ComputeBasic", crate::support::WINDOW);
    h.step();
    let sel = &h.state().state.selection;
    assert_eq!(sel.interval, Duration::from_millis(3), "the server's interval, not the user's 10 ms");
    assert!(sel.groups.contains("ComputeBasic") && sel.groups.len() == 1, "the server's groups: {:?}", sel.groups);
    h.get_by_label("(the server's)");
    h.get_by_label("Disconnect");
    assert!(h.query_by_label("Stop").is_none() && h.query_by_label("Start").is_none(), "no Stop or Start");
    assert!(h.query_by_label("Interval").is_some(), "the interval is named");
    let group = h.get_by_label_contains("ComputeBasic  · domain");
    assert!(format!("{group:?}").contains("disabled: true"), "the server's group tick is greyed: {group:?}");
    // Disconnect: the run stops here.
    h.get_by_label("Disconnect").click();
    crate::support::pump(&mut h, "the run stopped", |a| a.state.ingest.run.is_none());
    let sent = sent.lock().unwrap();
    assert!(sent.iter().any(|c| matches!(c, Command::Stop)), "Disconnect sent Stop");
    assert!(
        !sent.iter().any(|c| matches!(c, Command::Start(_) | Command::SetInterval(_))),
        "the window never asked the server to start or change: {sent:?}"
    );
}

/// A server's inventory (its devices, here without the group the user remembers) is not this
/// machine's: the user's own choice stays as it was, and no "remembered settings adjusted" banner
/// tells them to press a Start a remote run does not have.
#[test]
fn a_remote_inventory_leaves_the_users_remembered_choice_alone() {
    use zescope_sampler::{DevicePath, Event};
    let path = DevicePath::default();
    let device = zescope_sampler::testing::gpu_entry(path, "ze-sim GPU", Vec::new());
    let description = "REMOTE gpu-box:9464".to_owned();
    let source =
        SourceInfo { requested: zescope_ze::Source::Auto, simulated: true, description, fallback_reason: None };
    let inventory = Inventory { source: Some(source), devices: vec![device] };
    let link = Events(std::sync::Mutex::new([Event::Inventory(inventory)].into_iter().collect()));
    let mut app = ZescopeApp::new(Box::new(link), Settings::default(), Store::new(64 << 20));
    app.auto_start = false;
    app.state.selection.pick(path, ["ComputeBasic".to_owned()].into_iter().collect());
    let before = app.state.selection.clone();
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);
    h.step();
    h.step();
    h.get_by_label(" REMOTE ");
    assert!(h.query_by_label("Remembered settings adjusted").is_none(), "no banner about the user's settings");
    assert_eq!(h.state().state.selection, before, "the user's choice, untouched");
}

/// A remembered layout of other groups (ComputeBasic and the telemetry, from the user's own
/// runs) does not stand above a server's run of RenderBasic as panes that can show nothing: the
/// server's series fill the panes from the top, and the user's layout is what the settings keep.
#[test]
fn a_remote_run_of_other_groups_is_shown_from_the_top_and_the_users_layout_is_kept_for_the_settings() {
    let key = crate::support::gpu_key;
    let mut settings = Settings::default();
    settings.arrangement.assign(&key("ComputeBasic", "GpuTime"), None);
    settings.arrangement.assign(&key("Telemetry", "Package power"), None);
    let own = settings.arrangement.clone();
    let (mut h, _) = watching(settings, "RenderBasic", [1280.0, 3000.0]);
    h.step();
    h.step();
    let panes = &h.state().panes.arrangement.panes;
    assert!(!panes.is_empty(), "the server's series are in panes");
    assert!(
        panes.iter().all(|p| !p.series.is_empty() && p.series.iter().all(|k| k.group == "RenderBasic")),
        "only the server's series, none of the remembered groups: {panes:?}"
    );
    assert!(h.query_by_label_contains("No data for this pane").is_none(), "no pane that can show nothing");
    assert_eq!(h.state().settings().arrangement, own, "the user's own layout is what the settings keep");
}

/// The panes a user arranged while watching a server come back the next time the window watches
/// it: its run starts in them (a series the server no longer serves leaves them, one it serves
/// anew is placed after), and the settings keep them with the server beside the user's own.
#[test]
fn a_servers_panes_are_remembered_with_it_and_its_next_run_starts_in_them() {
    use zescope_window::connect::Remote;
    let key = crate::support::gpu_key;
    let mut theirs = zescope_model::view::Arrangement::default();
    // As the user left them: two counts together, the utilisation alone, and a series of a
    // group the server served then.
    let together = theirs.add_pane();
    theirs.assign(&key("RenderBasic", "L3BytesRead"), Some(together));
    theirs.assign(&key("RenderBasic", "RenderBusyCycles"), Some(together));
    theirs.assign(&key("RenderBasic", "RenderUtilization"), None);
    theirs.assign(&key("ComputeBasic", "GpuTime"), None);
    let mut settings = Settings::default();
    settings.arrangement.assign(&key("Telemetry", "Package power"), None);
    let own = settings.arrangement.clone();
    settings.recent_remotes =
        vec![Remote { addr: "gpu-box:9464".into(), token_file: None, layout: Some(theirs.clone()) }];
    let (mut h, _) = watching(settings, "RenderBasic", [1280.0, 3000.0]);
    h.step();
    let panes = h.state().panes.arrangement.panes.clone();
    let series: Vec<Vec<&str>> = panes.iter().map(|p| p.series.iter().map(|k| k.metric.as_str()).collect()).collect();
    assert_eq!(series[0], ["L3BytesRead", "RenderBusyCycles"], "the remembered panes first: {series:?}");
    assert_eq!(series[1][0], "RenderUtilization", "{series:?}");
    let all: Vec<&str> = series.concat();
    assert!(!all.contains(&"GpuTime"), "a series the server no longer serves left: {series:?}");
    for m in ["RenderBusyTime", "RenderFrequency"] {
        assert!(all.contains(&m), "{m}, served but not remembered, is placed: {series:?}");
    }
    let saved = h.state().settings();
    assert_eq!(saved.arrangement, own, "the user's own panes are what the settings keep for local runs");
    assert_eq!(
        saved.recent_remotes[0].layout.as_ref(),
        Some(&h.state().panes.arrangement),
        "and the server's panes, as shown, with the server"
    );
}

/// What a remote run says is not "driver features off": a link that dropped and came back is
/// counted as the run's notices in the status bar and listed under what the run has said in Help →
/// Diagnostics, whose checks are said to be this machine's, not the server's (before, the status
/// bar read "2 driver features off" and the Diagnostics window named the server's run "this
/// window's run" above a red FAIL for this machine's missing GPU).
#[test]
fn a_remote_runs_link_notices_and_diagnostics_name_what_they_are_of() {
    let (mut h, _) = watching(Settings::default(), "ComputeBasic", crate::support::WINDOW);
    let info = &h.state().state.ingest.run.as_ref().unwrap().info;
    let (run, before) = (info.run, info.notices.len());
    // As the link tells its figures.
    let source = h.state_mut().state.inventory.as_mut().and_then(|i| i.source.as_mut()).unwrap();
    source.description = "REMOTE gpu-box:9464 · 12.5 KiB/s · rtt 0.4 ms".to_owned();
    for m in ["the link dropped: connection reset; reconnecting", "reconnected"] {
        h.state_mut().state.ingest.notice(run, format!("REMOTE gpu-box:9464: {m}"));
    }
    h.step();
    let n = before + 2;
    h.get_by_label(&format!("{n} notices"));
    assert!(h.query_by_label_contains("driver feature").is_none(), "a link's drop is no driver feature");
    h.get_by_label("Help").click();
    h.step();
    h.step();
    h.get_by_label("Diagnostics…").click();
    crate::support::pump(&mut h, "the checks", |a| a.windows.diagnostics.results().is_some());
    h.step();
    h.get_by_label("The run this window watches, on the server gpu-box:9464");
    assert!(h.query_by_label_contains("This window's run").is_none(), "the run is the server's");
    h.get_by_label("What the run has said");
    h.get_by_label("• REMOTE gpu-box:9464: reconnected");
    h.get_by_label_contains(
        "of this machine (the window's), not of the server: `zescope doctor` there checks its devices",
    );
    crate::support::quit_discarding(&mut h);
}
