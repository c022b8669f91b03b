//! File → Export → Perfetto trace… on an opened recording: asks where (as a Perfetto trace) and
//! writes a trace holding a counter track for every series of the session.

use egui_kittest::kittest::Queryable;
use zescope_store::Store;
use zescope_window::ZescopeApp;
use zescope_window::dialogs::{FileKind, ScriptedDialogs};
use zescope_window::settings::Settings;

use std::sync::Arc;

#[test]
fn the_export_menu_writes_a_perfetto_trace() {
    let dir = tempfile::tempdir().unwrap();
    let example = crate::support::example_session();
    let trace = dir.path().join("run.pftrace");
    let dialogs = Arc::new(ScriptedDialogs::answering([Some(example.clone()), Some(trace.clone())]));
    let mut app = ZescopeApp::new(Box::new(crate::support::NoSampler), Settings::default(), Store::new(64 << 20));
    app.files.dialogs = Box::new(dialogs.clone());
    let mut h = crate::support::harness_of(app, crate::support::WINDOW);
    h.step();
    let open = h.state_mut().files.ask_open();
    h.state_mut().perform(open);
    crate::support::pump(&mut h, "the recording", |a| a.files.recording.is_some() && !a.opening());

    h.get_by_label("File").click();
    h.run();
    // The File menu's Export submenu opens on hover (the panes have Export menus of their own:
    // try each until the entry shows).
    let writes = h.get_all_by_label("Export").count();
    for i in 0..writes {
        if h.query_by_label("Perfetto trace…").is_some() {
            break;
        }
        h.get_all_by_label("Export").nth(i).unwrap().hover();
        h.run();
    }
    h.get_by_label("Perfetto trace…").click();
    h.step();
    crate::support::pump(&mut h, "the export", |a| trace.exists() && a.files.writing().is_none());
    assert!(h.state().state.banners.is_empty(), "no error");
    let asked: Vec<FileKind> = dialogs.asked.lock().unwrap().iter().map(|(k, _)| *k).collect();
    assert_eq!(asked, [FileKind::Session, FileKind::File(&zescope_model::write::Perfetto)]);

    let bytes = std::fs::read(&trace).unwrap();
    assert_eq!(bytes.first(), Some(&0x0a), "a Trace: its first field is a packet");
    let session = zescope_model::session::load(&example).unwrap();
    let contains = |needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
    let mut names = 0;
    for s in &session.streams {
        for x in &s.meta.series {
            let name = format!("{}/{}/{}", s.meta.device, s.meta.group, x.metric);
            assert!(contains(&name), "no counter track {name}");
            names += 1;
        }
    }
    assert!(names > 0);
    assert!(contains("zescope session"), "the metadata instant");
}
