//! Crash safety: a process killed (SIGKILL) in the middle of saving over a session file leaves
//! the previous file loadable and intact. The child is this test binary again, run with
//! `ZESCOPE_CRASH_CHILD` set: it saves a large session over the file, again and again, until
//! it is killed.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use zescope_model::session::{self, Capture, RunHistory, Session};
use zescope_model::view::panes::Arrangement;
use zescope_model::view::timeview::TimeView;
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};

const CHILD: &str = "ZESCOPE_CRASH_CHILD";

fn make_session(samples: usize, seed: f64) -> Session {
    let mut store = Store::new(usize::MAX);
    let desc = StreamDesc {
        name: "crash".into(),
        series: (0..8)
            .map(|i| SeriesDesc { name: format!("s{i}"), unit: "u".into(), kind: SeriesKind::Gauge })
            .collect(),
    };
    let id = store.begin_stream(desc);
    let ts: Vec<i64> = (0..samples as i64).map(|i| i * 1_000_000).collect();
    let vals: Vec<f64> = (0..samples * 8).map(|i| (i as f64 * seed).sin()).collect();
    store.append(id, &ts, &vals).unwrap();
    let (h, l, v) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    Session::capture(&store, Capture { history: &h, arrangement: &l, view: &v, markers: &[] })
}

fn temp_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".tmp-"))
        .count()
}

#[test]
fn killing_a_save_midway_leaves_the_previous_file_intact() {
    if let Ok(path) = std::env::var(CHILD) {
        // The child: overwrite the file with a big session forever.
        let big = make_session(400_000, 0.37);
        loop {
            session::save(Path::new(&path), &big).unwrap();
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.ron");
    let previous = make_session(5_000, 0.11);
    let big = make_session(400_000, 0.37);
    let mut killed_midway = 0;
    for round in 0..4 {
        session::save(&path, &previous).unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &crate::test_name(module_path!(), "killing_a_save_midway_leaves_the_previous_file_intact"),
                "--nocapture",
            ])
            .env(CHILD, &path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the child is writing its temporary file, then a little more.
        let deadline = Instant::now() + Duration::from_secs(60);
        while temp_files(dir.path()) == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(10 * round));
        let midway = temp_files(dir.path()) > 0;
        child.kill().unwrap();
        child.wait().unwrap();
        let loaded = session::load(&path).expect("the file loads after the kill");
        assert!(loaded == previous || loaded == big, "round {round}: the file is neither the old nor the new session");
        if midway && loaded == previous {
            killed_midway += 1;
        }
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let p = e.unwrap().path();
            if p != path {
                std::fs::remove_file(p).unwrap();
            }
        }
    }
    assert!(killed_midway > 0, "no kill landed while a save was being written");
}
