//! The processes of a session: captured from the run history, saved beside the streams, read
//! back the same by the one-shot load, the progressive load and an autosave recovery; a file
//! without them (every file written before they were recorded) loads with none, and a saved
//! file without processes is written as before; a malformed record is refused by name.

use std::time::Duration;

use zescope_model::session::autosave::Autosaver;
use zescope_model::session::{self, Capture, LoadEvent, LoadJob, RunHistory, Session};
use zescope_model::view::panes::Arrangement;
use zescope_model::view::processes::{Host, NOT_ON_HOST};
use zescope_model::view::timeview::TimeView;
use zescope_sampler::processes::{ProcessSnapshot, ProcessUse};
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/example-session.ron");

/// Pid 7 is "trainer" on this host; nothing else is.
struct OneProcess;

impl Host for OneProcess {
    fn command(&self, pid: u32) -> Option<String> {
        (pid == 7).then(|| "trainer".to_owned())
    }
    fn start_time(&self, pid: u32) -> Option<u64> {
        (pid == 7).then_some(1)
    }
}

/// A store with one stream, and a history whose GPU had pid 7 throughout and pid 9 twice (it
/// left and came back: two processes), and whose NPU had pid 7 too.
fn recorded() -> (Store, RunHistory) {
    let mut store = Store::new(usize::MAX);
    let id = store.begin_stream(StreamDesc {
        name: "s".into(),
        series: vec![SeriesDesc { name: "a".into(), unit: "u".into(), kind: SeriesKind::Gauge }],
    });
    store.append(id, &[1_000_000_000, 2_000_000_000], &[1.0, 2.0]).unwrap();
    let mut history = RunHistory::default();
    let use_ = |pid, mem| ProcessUse { pid, memory_bytes: mem, shared_bytes: 4096, engines: 0b10010 };
    for (k, list) in
        [vec![use_(7, 100), use_(9, 5)], vec![use_(7, 200)], vec![use_(7, 300), use_(9, 6)]].into_iter().enumerate()
    {
        let snap = ProcessSnapshot { run: 1, target: 0, at_ns: (k as i64 + 1) * 1_000_000_000, processes: list };
        history.processes.ingest(&snap, "ze-sim GPU", &OneProcess);
    }
    let npu = ProcessSnapshot { run: 1, target: 1, at_ns: 1_500_000_000, processes: vec![use_(7, 1)] };
    history.processes.ingest(&npu, "ze-sim NPU", &OneProcess);
    (store, history)
}

fn captured(store: &Store, history: &RunHistory) -> Session {
    Session::capture(
        store,
        Capture { history, arrangement: &Arrangement::default(), view: &TimeView::default(), markers: &[] },
    )
}

#[test]
fn processes_are_saved_beside_the_streams_and_read_back_every_way() {
    let (store, history) = recorded();
    let s = captured(&store, &history);
    let gpu_nines: Vec<usize> = s.processes.iter().filter(|p| p.pid == 9).map(|p| p.samples.len()).collect();
    assert_eq!(gpu_nines, [1, 1], "pid 9 left and came back: two records");
    assert_eq!(s.processes[0].command.as_deref(), Some("trainer"));
    assert_eq!(s.processes.len(), 4);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.ron");
    session::save(&path, &s).unwrap();
    let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
    assert!(text.contains("processes: ["), "{}", &text[..text.len().min(3000)]);
    let loaded = session::load(&path).unwrap();
    assert_eq!(loaded.processes, s.processes);

    // The progressive load hands them over with the head.
    let mut job = LoadJob::spawn(path.clone());
    let head = loop {
        match job.next(Duration::from_secs(10)).expect("an event") {
            LoadEvent::Head(h) => break h,
            LoadEvent::Failed(e) => panic!("{e}"),
            _ => {}
        }
    };
    assert_eq!(head.session.processes, s.processes);
    job.stop();

    // Restored into the view: the same processes, none alive, commands as found then.
    let mut fresh = Store::new(usize::MAX);
    let restored = loaded.restore_into(&mut fresh).unwrap();
    let p = &restored.history.processes;
    assert_eq!(p.devices(), ["ze-sim GPU", "ze-sim NPU"]);
    assert!(p.list().iter().all(|x| !x.alive));
    assert_eq!(
        p.on("ze-sim GPU").filter(|x| x.pid == 9).map(|x| x.command_text()).collect::<Vec<_>>(),
        [NOT_ON_HOST; 2]
    );
    // Captured again, they are the same records.
    let again = captured(&fresh, &restored.history);
    assert_eq!(again.processes, s.processes);
}

#[test]
fn an_autosave_checkpoint_keeps_the_processes() {
    let (store, history) = recorded();
    let root = tempfile::tempdir().unwrap();
    let mut saver = Autosaver::in_root(root.path()).unwrap();
    let (arrangement, view) = (Arrangement::default(), TimeView::default());
    let ui = Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] };
    assert!(saver.checkpoint(&store, ui));
    saver.wait().unwrap();
    drop(saver);
    let found = crate::recoverable_once_released(root.path());
    let recovered = found.into_iter().next().expect("a checkpoint").load().unwrap();
    assert!(!recovered.processes.is_empty());
    assert_eq!(recovered.processes, captured(&store, &history).processes);
}

#[test]
fn files_without_processes_load_with_none_and_are_written_as_before() {
    let example = session::load(std::path::Path::new(EXAMPLE)).unwrap();
    assert!(example.processes.is_empty(), "a file from before processes were recorded");
    let bytes = session::to_bytes(&example).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("processes"), "nothing new is written for a session without processes");
}

#[test]
fn a_malformed_process_record_is_refused_by_name() {
    let (store, history) = recorded();
    let mut s = captured(&store, &history);
    s.processes[0].samples.swap(0, 1);
    let e = session::from_slice(&session::to_bytes(&s).unwrap()).unwrap_err().to_string();
    assert!(e.contains("processes[0].samples[1]") && e.contains("not after"), "{e}");
    s.processes[0].samples.clear();
    let e = session::from_slice(&session::to_bytes(&s).unwrap()).unwrap_err().to_string();
    assert!(e.contains("processes[0].samples") && e.contains("no samples"), "{e}");
}
