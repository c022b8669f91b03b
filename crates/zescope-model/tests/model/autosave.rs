//! Autosave: checkpoints are incremental (a full chunk is written to its file once), a
//! checkpoint left behind by a zescope that is gone is found and recovers the session exactly
//! as it was at the checkpoint (coarsened history included), and a clean exit leaves nothing.

use std::collections::BTreeMap;
use std::path::Path;

use zescope_model::session::autosave::{Autosaver, find_recoverable_in};
use zescope_model::session::{Capture, RunHistory, Session};
use zescope_model::view::panes::Arrangement;
use zescope_model::view::timeview::TimeView;
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc, StreamId};

const MS: i64 = 1_000_000;

struct Feed {
    t: i64,
    i: u64,
}

impl Feed {
    fn push(&mut self, store: &mut Store, id: StreamId, samples: usize) {
        let (mut ts, mut vals) = (Vec::new(), Vec::new());
        for _ in 0..samples {
            self.t += MS;
            self.i += 1;
            ts.push(self.t);
            vals.extend([(self.i % 97) as f64, (self.i * 4096) as f64, (self.i as f64).sqrt()]);
        }
        store.append(id, &ts, &vals).unwrap();
    }
}

fn stream(store: &mut Store) -> StreamId {
    store.begin_stream(StreamDesc {
        name: "s".into(),
        series: vec![
            SeriesDesc { name: "a".into(), unit: "u".into(), kind: SeriesKind::Gauge },
            SeriesDesc { name: "b".into(), unit: "B".into(), kind: SeriesKind::Cumulative { wrap: None } },
            SeriesDesc { name: "c".into(), unit: "u".into(), kind: SeriesKind::Gauge },
        ],
    })
}

fn chunk_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("c-"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn checkpoints_are_incremental_and_a_dead_sessions_checkpoint_recovers_it() {
    let root = tempfile::tempdir().unwrap();
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    let ui = Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] };
    let mut store = Store::new(usize::MAX);
    let id = stream(&mut store);
    let mut feed = Feed { t: 0, i: 0 };
    feed.push(&mut store, id, 10_000);
    store.mark_gap(id);
    feed.t += 5_000 * MS;
    feed.push(&mut store, id, 3_000);

    let mut saver = Autosaver::in_root(root.path()).unwrap();
    assert!(saver.checkpoint(&store, ui));
    saver.wait().unwrap();
    let first = chunk_files(saver.dir());
    assert_eq!(first.len(), 4, "13000 samples: 3 full chunks and the growing last one, each a file");
    let head = std::fs::read_to_string(saver.dir().join("checkpoint.ron")).unwrap();
    assert!(head.contains("version: 7,"), "checkpoints are written in the session file's current version: {head}");
    let crc_ok = |bytes: &Vec<u8>| {
        let (data, crc) = bytes.split_at(bytes.len() - 4);
        zescope_model::session::crc32c(data).to_le_bytes() == crc
    };
    assert!(
        first.values().all(crc_ok),
        "every chunk file ends with its data's CRC-32C, as in a session's data section"
    );
    assert!(find_recoverable_in(root.path()).is_empty(), "a running session's checkpoint is not offered");

    feed.push(&mut store, id, 9_000);
    assert!(saver.checkpoint(&store, ui));
    saver.wait().unwrap();
    let second = chunk_files(saver.dir());
    assert_eq!(second.len(), 6, "22000 samples: 5 full chunks and the last one");
    let full = |name: &str| name.ends_with("-4096.bin");
    assert_eq!(first.keys().filter(|n| full(n)).count(), 3);
    for (name, bytes) in first.iter().filter(|(n, _)| full(n)) {
        assert_eq!(second.get(name), Some(bytes), "{name} was kept as it was");
    }
    let grown = first.keys().find(|n| !full(n)).unwrap();
    assert!(!second.contains_key(grown), "the last chunk's earlier file ({grown}) is gone once it grew");

    // The process "crashes": the autosaver goes away without discarding.
    drop(saver);
    let found = crate::recoverable_once_released(root.path());
    assert_eq!(found.len(), 1);
    let recovered = found[0].load().expect("recover");
    assert_eq!(recovered, Session::capture(&store, ui), "exactly the session at the checkpoint");
    found.into_iter().next().unwrap().discard().unwrap();
    assert!(find_recoverable_in(root.path()).is_empty());
}

#[test]
fn coarsening_between_checkpoints_drops_old_chunk_files_and_still_recovers() {
    let root = tempfile::tempdir().unwrap();
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    let ui = Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] };
    // 240 000 samples x 3 series take more than 1 MiB even in sealed blocks: the cap coarsens.
    let mut store = Store::new(1 << 20);
    let id = stream(&mut store);
    let mut feed = Feed { t: 0, i: 0 };
    let mut saver = Autosaver::in_root(root.path()).unwrap();
    for _ in 0..6 {
        feed.push(&mut store, id, 40_000);
        assert!(saver.checkpoint(&store, ui));
        saver.wait().unwrap();
    }
    let retention = store.retention(id).unwrap();
    assert!(retention.coarsened_before().is_some(), "the cap coarsened the oldest samples: {retention:?}");
    let files = chunk_files(saver.dir()).len() as u64;
    let raw = retention.spans.iter().find(|s| s.level == 0).unwrap().samples;
    assert!(files <= raw / 4096 + 1, "{files} chunk files for {raw} raw samples: old ones were removed");
    drop(saver);
    let found = crate::recoverable_once_released(root.path());
    assert_eq!(found[0].load().unwrap(), Session::capture(&store, ui));
}

#[test]
fn a_clean_exit_leaves_nothing_to_recover() {
    let root = tempfile::tempdir().unwrap();
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    let ui = Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] };
    let mut store = Store::new(usize::MAX);
    let id = stream(&mut store);
    Feed { t: 0, i: 0 }.push(&mut store, id, 100);
    let mut saver = Autosaver::in_root(root.path()).unwrap();
    saver.checkpoint(&store, ui);
    saver.discard();
    assert!(find_recoverable_in(root.path()).is_empty());
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
}
