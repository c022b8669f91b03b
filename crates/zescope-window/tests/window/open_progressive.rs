//! Opening a large session in the window progressively: the head and a first share of the
//! samples on the first frame (the status bar says how far), the rest a bounded share per
//! frame until every value is in; a file malformed part way keeps what was shown without
//! becoming the current file; opening, saving and quitting while a session opens are safe.

use std::path::{Path, PathBuf};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use zescope_model::session::{self, Capture, RunHistory, Session};
use zescope_model::view::TimeAxis;
use zescope_model::view::panes::Arrangement;
use zescope_model::view::timeview::TimeView;
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc, StreamId};
use zescope_window::ZescopeApp;
use zescope_window::banner::{BannerError, UiErrorKind};
use zescope_window::dialogs::ScriptedDialogs;
use zescope_window::files::FileAction;
use zescope_window::opening::PIECES_PER_FRAME;
use zescope_window::settings::Settings;

const MS: i64 = 1_000_000;

fn desc(name: &str, n: usize) -> StreamDesc {
    let series = (0..n)
        .map(|s| SeriesDesc {
            name: format!("{name}{s}"),
            unit: "u".into(),
            kind: if s % 2 == 0 { SeriesKind::Cumulative { wrap: None } } else { SeriesKind::Gauge },
        })
        .collect();
    StreamDesc { name: name.into(), series }
}

/// Appends `samples` rows of `n` series from `t0`, 1 ms apart with jitter, a pause halfway.
fn fill(store: &mut Store, id: StreamId, n: usize, samples: usize, t0: i64) {
    let mut t = t0;
    for start in (0..samples).step_by(10_000) {
        let rows = (samples - start).min(10_000);
        if start == samples / 20_000 * 10_000 {
            store.mark_gap(id);
            t += 500 * MS;
        }
        let (mut ts, mut vals) = (Vec::with_capacity(rows), Vec::with_capacity(rows * n));
        for i in start..start + rows {
            t += MS + (i as i64 * 7919) % 1000;
            ts.push(t);
            for s in 0..n {
                vals.push(if s % 2 == 0 { (i * (s + 1) * 3) as f64 } else { ((i * 31 + s) % 977) as f64 * 0.25 });
            }
        }
        store.append(id, &ts, &vals).unwrap();
    }
}

/// Two streams, 2.8M values: 16 series x 150 000 samples (its run ended), and 4 series x
/// 100 000 samples over the same time (still open when saved).
fn recorded() -> (Store, Session) {
    let mut store = Store::new(usize::MAX);
    let a = store.begin_stream(desc("a", 16));
    let b = store.begin_stream(desc("b", 4));
    fill(&mut store, a, 16, 150_000, 0);
    store.end_stream(a);
    fill(&mut store, b, 4, 100_000, 3 * MS / 2);
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    let s =
        Session::capture(&store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] });
    (store, s)
}

fn saved(dir: &Path, name: &str) -> (Store, PathBuf) {
    let (store, s) = recorded();
    let path = dir.join(name);
    session::save(&path, &s).unwrap();
    (store, path)
}

fn window(answers: Vec<Option<PathBuf>>) -> Harness<'static, ZescopeApp> {
    let mut app = ZescopeApp::new(Box::new(crate::support::NoSampler), Settings::default(), Store::new(1 << 30));
    app.files.dialogs = Box::new(ScriptedDialogs::answering(answers));
    crate::support::builder().with_size([1280.0, 860.0]).build_ui_state(|ui, a: &mut ZescopeApp| a.ui(ui), app)
}

fn samples_in(app: &ZescopeApp) -> u64 {
    app.store.streams().map(|s| s.appended).sum()
}

/// The percentage in the status bar's "opening NAME … P %".
fn shown_percent(h: &Harness<'_, ZescopeApp>, name: &str) -> u32 {
    (0..=100)
        .find(|p| h.query_by_label(&format!("opening {name} … {p} %")).is_some())
        .unwrap_or_else(|| panic!("no \"opening {name} … P %\" in the status bar"))
}

fn ui_errors(app: &ZescopeApp) -> Vec<(UiErrorKind, String)> {
    (app.state.banners.iter())
        .map(|b| match &b.error {
            BannerError::Ui(e) => (e.kind, e.message.clone()),
            BannerError::Sampler(e) => panic!("a sampler error: {e:?}"),
        })
        .collect()
}

/// Steps until the open is over, one piece per frame at least.
fn frames_until_opened(h: &mut Harness<'_, ZescopeApp>, pieces: usize) -> usize {
    for frame in 1..=pieces + 2 {
        h.step();
        if !h.state().opening() {
            return frame;
        }
    }
    panic!("still opening after {} frames", pieces + 2);
}

#[test]
fn a_large_session_shows_a_first_share_then_all_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let (original, path) = saved(dir.path(), "big.ron");
    let total: u64 = original.streams().map(|s| s.appended).sum();
    // 37 + 25 chunks of 4096 samples.
    let pieces = 62;
    let mut h = window(vec![]);
    h.step();
    h.state_mut().perform(Some(FileAction::Open(path.clone())));
    h.step();
    let a = h.state();
    let first = samples_in(a);
    assert!(first > 0 && first < total, "after the first frame part of it is in: {first} of {total}");
    assert!(first <= 2 * PIECES_PER_FRAME as u64 * 4096, "a bounded share per frame: {first}");
    assert_eq!(a.store.streams().count(), 2, "every stream is set up from the head");
    assert!(a.files.recording.as_deref() == Some(&path) && a.files.current.is_none());
    let (x0, x1) = a.view.frozen_range();
    let (t0, t1) = original.total_time_range().unwrap();
    let whole = (TimeAxis::of(&a.store).x(t0), TimeAxis::of(&a.store).x(t1));
    assert!((x0 - whole.0).abs() < 1e-6 && (x1 - whole.1).abs() < 1e-6, "fitted to all of it: {x0}..{x1} vs {whole:?}");
    assert!(!a.has_unsaved(), "nothing to lose while it opens");
    let pct = shown_percent(&h, "big.ron");
    assert!(pct < 100, "{pct} %");

    let frames = frames_until_opened(&mut h, pieces);
    assert!(frames >= pieces / PIECES_PER_FRAME - 2, "a bounded share per frame: done in {frames} frames");
    h.step();
    h.get_by_label("opened big.ron");
    let a = h.state();
    assert_eq!(samples_in(a), total);
    assert_eq!(a.files.current.as_deref(), Some(path.as_path()), "the current file once all of it is in");
    assert!(!a.has_unsaved(), "clean when fully opened");
    assert!(ui_errors(a).is_empty(), "{:?}", ui_errors(a));
    for info in original.streams() {
        let (want, got) = (original.stream_data(info.id).unwrap(), a.store.stream_data(info.id).unwrap());
        assert_eq!(got.raw.timestamps, want.raw.timestamps, "stream {:?}", info.id);
        assert!(got.raw.values.iter().zip(&want.raw.values).all(|(x, y)| x.to_bits() == y.to_bits()));
        assert_eq!(got, want, "stream {:?}: gaps, ended, everything as saved", info.id);
    }
}

/// The byte offset of raw chunk `c` of the first stream in a version 2 file.
fn chunk_offset(bytes: &[u8], c: usize) -> usize {
    let line = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let second = &bytes[line..];
    let end = second.iter().position(|&b| b == b'\n').unwrap();
    let len: usize = std::str::from_utf8(&second[..end]).unwrap().rsplit(' ').next().unwrap().parse().unwrap();
    let mut pos = line + end + 1 + len;
    for _ in 0..c {
        let (mut n, mut shift) = (0usize, 0);
        loop {
            let b = bytes[pos];
            pos += 1;
            n |= ((b & 0x7f) as usize) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        pos += n;
    }
    pos
}

#[test]
fn a_file_malformed_part_way_keeps_what_was_shown_but_is_not_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (_, path) = saved(dir.path(), "bad.ron");
    let mut bytes = std::fs::read(&path).unwrap();
    // Chunk 20 of the first stream: after its length (2-3 bytes), its count (2 bytes) and its
    // first column's length (1-2 bytes), a mode byte no column has.
    let at = chunk_offset(&bytes, 20);
    for b in &mut bytes[at + 3..at + 12] {
        *b = 0x0b;
    }
    std::fs::write(&path, &bytes).unwrap();
    let mut h = window(vec![None]);
    h.step();
    h.state_mut().perform(Some(FileAction::Open(path.clone())));
    frames_until_opened(&mut h, 62);
    h.step();
    let a = h.state();
    let errors = ui_errors(a);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, UiErrorKind::Open);
    assert!(errors[0].1.contains("streams[0].raw.chunks[20]"), "names the stream and chunk: {}", errors[0].1);
    assert!(samples_in(a) >= 20 * 4096, "the chunks before it stay shown: {}", samples_in(a));
    assert!(a.files.current.is_none(), "the partial data is not the file");
    assert!(a.has_unsaved(), "partial data is not what any file holds");
    h.get_by_label_contains("could not be opened completely");
    // Save asks for a name (the scripted dialog cancels): the file is left alone.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::S);
    h.step();
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "the original is untouched");

    // Cut short, the file is refused at once by the chunk it ends in: nothing changes.
    let cut = dir.path().join("cut.ron");
    std::fs::write(&cut, &bytes[..chunk_offset(&bytes, 30) + 10]).unwrap();
    let samples = samples_in(h.state());
    h.state_mut().perform(Some(FileAction::Open(cut.clone())));
    h.step();
    h.step();
    h.get_by_label("Discard").click();
    h.step();
    let a = h.state();
    let errors = ui_errors(a);
    // Under the banner's title ("Cannot open"): the file and why, the title not said again.
    let named = |m: &str| m.starts_with(&format!("{}: ", cut.display())) && m.contains("chunks[30]");
    assert!(
        errors.iter().any(|(k, m)| *k == UiErrorKind::Open && named(m) && !m.contains("cannot open")),
        "{errors:?}"
    );
    assert_eq!(samples_in(a), samples, "what was shown stays");
    assert!(!a.opening() && a.files.current.is_none());
}

#[test]
fn opening_saving_and_quitting_while_a_session_opens_are_safe() {
    let dir = tempfile::tempdir().unwrap();
    let (_, big) = saved(dir.path(), "big.ron");
    let small = dir.path().join("small.ron");
    let mut store = Store::new(usize::MAX);
    let id = store.begin_stream(desc("c", 2));
    fill(&mut store, id, 2, 5_000, 0);
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    let s =
        Session::capture(&store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] });
    session::save(&small, &s).unwrap();

    let mut h = window(vec![]);
    h.step();
    h.state_mut().perform(Some(FileAction::Open(big.clone())));
    h.step();
    assert!(h.state().opening());
    // Saving now would write part of it: refused with a message, nothing written.
    let other = dir.path().join("other.ron");
    h.state_mut().perform(Some(FileAction::Save(other.clone())));
    h.step();
    assert!(!other.exists());
    assert!(ui_errors(h.state()).iter().any(|(k, m)| *k == UiErrorKind::Save && m.contains("still opening")));
    // Opening another file cancels this one.
    h.state_mut().perform(Some(FileAction::Open(small.clone())));
    frames_until_opened(&mut h, 4);
    let a = h.state();
    assert_eq!(a.files.current.as_deref(), Some(small.as_path()));
    assert_eq!(a.store.streams().count(), 1);
    let shown = a.store.streams().next().unwrap().id;
    assert_eq!(a.store.stream_data(shown).unwrap(), store.stream_data(id).unwrap());

    // Quitting while one opens does not ask (the data is in its file) and stops it.
    h.state_mut().perform(Some(FileAction::Open(big)));
    h.step();
    assert!(h.state().opening());
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Q);
    h.step();
    assert!(h.state().quit.is_some(), "quits without asking");
    assert!(!h.state().opening(), "the open was cancelled");
}
