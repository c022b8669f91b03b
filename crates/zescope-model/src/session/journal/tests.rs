use super::*;
use crate::session::{self, RunHistory};
use crate::view::{Arrangement, TimeView};
use zescope_store::{SeriesDesc, SeriesKind, StreamDesc};

const SERIES: usize = 3;

/// A store of one stream of three series (a counter, a gauge, a noisy float), `cap` bytes.
fn store(cap: usize) -> (Store, StreamId) {
    let mut store = Store::new(cap);
    let series = (0..SERIES)
        .map(|s| SeriesDesc {
            name: format!("s{s}"),
            unit: "u".into(),
            kind: if s == 0 { SeriesKind::Cumulative { wrap: None } } else { SeriesKind::Gauge },
        })
        .collect();
    let id = store.begin_stream(StreamDesc { name: "g".into(), series });
    (store, id)
}

/// Appends samples `from..to` (1 ms apart, a little jitter).
fn append(store: &mut Store, id: StreamId, from: u64, to: u64) {
    let ts: Vec<i64> = (from..to).map(|i| 1_000_000_000 + i as i64 * 1_000_000 + (i % 7) as i64 * 13).collect();
    let values: Vec<f64> =
        (from..to).flat_map(|i| [i as f64 * 17.0, (i / 100) as f64, (i as f64 * 0.37).sin()]).collect();
    store.append(id, &ts, &values).unwrap();
}

fn checkpoint(j: &mut Journal, store: &Store) {
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    assert!(j.checkpoint(store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] }));
    while j.busy() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    j.poll().unwrap().unwrap();
}

fn capture(store: &Store) -> Session {
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    Session::capture(store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] })
}

/// Timestamps and value bits of the session's first stream.
fn samples(s: &Session) -> (Vec<i64>, Vec<u64>) {
    let raw = &s.streams[0].data.raw;
    (raw.timestamps.clone(), raw.values.iter().map(|v| v.to_bits()).collect())
}

#[test]
fn a_journal_cut_at_any_byte_opens_as_its_last_whole_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.ron");
    let (mut store, id) = store(usize::MAX);
    let mut j = Journal::new(path.clone());
    // Checkpoints at 3000, 6000 (a chunk sealed between), 9000 and 9500 samples: (file length,
    // the session it holds).
    let mut points = Vec::new();
    let mut at = 0;
    for to in [3000, 6000, 9000, 9500] {
        append(&mut store, id, at, to);
        at = to;
        checkpoint(&mut j, &store);
        let bytes = std::fs::read(&path).unwrap();
        assert!(points.last().is_none_or(|(len, _)| bytes.len() > *len), "each checkpoint appends");
        points.push((bytes.len(), capture(&store)));
    }
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(prelude().as_bytes()));
    let edges: Vec<usize> = points.iter().map(|p| p.0).collect();
    let near = |c: usize| edges.iter().any(|&e| c.abs_diff(e) <= 40);
    // Every byte around each checkpoint's end, and a stride elsewhere: what a kill there leaves.
    for cut in (prelude().len()..=bytes.len()).filter(|&c| c % 97 == 0 || near(c)) {
        let got = session::from_slice(&bytes[..cut]);
        match points.iter().rev().find(|(len, _)| *len <= cut) {
            None => {
                let e = got.unwrap_err().to_string();
                assert!(e.contains("stopped before its first checkpoint was whole"), "cut at {cut}: {e}");
            }
            Some((_, want)) => {
                let got = got.unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
                assert_eq!(samples(&got), samples(want), "cut at {cut}");
            }
        }
    }
    // A flipped byte in the last checkpoint's frames: the one before it.
    let mut bad = bytes.clone();
    let k = points[2].0 + 20;
    bad[k] ^= 0x40;
    assert_eq!(samples(&session::from_slice(&bad).unwrap()), samples(&points[2].1));
    // The window's progressive open reads it too.
    let opened = session::load(&path).unwrap();
    assert_eq!(samples(&opened), samples(&points[3].1));
}

#[test]
fn the_finished_file_is_the_save_of_the_store_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.ron");
    let (mut store, id) = store(usize::MAX);
    let mut j = Journal::new(path.clone());
    append(&mut store, id, 0, 5000);
    checkpoint(&mut j, &store);
    append(&mut store, id, 5000, 12_000);
    checkpoint(&mut j, &store);
    append(&mut store, id, 12_000, 12_345);
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    j.finish(&store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] }).unwrap();
    let want = session::to_bytes(&capture(&store)).unwrap();
    assert!(std::fs::read(&path).unwrap() == want, "the finished file is what a save writes");
}

#[test]
fn coarsening_and_compaction_keep_the_journal_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.ron");
    // A cap the samples outgrow: the oldest are coarsened, the chunks they were in left behind.
    let (mut store, id) = store(600 << 10);
    let mut j = Journal::new(path.clone());
    j.compact_min = 0;
    let mut sizes = Vec::new();
    let mut at = 0;
    for _ in 0..40 {
        append(&mut store, id, at, at + 2500);
        at += 2500;
        checkpoint(&mut j, &store);
        let got = session::load(&path).unwrap();
        assert_eq!(samples(&got), samples(&capture(&store)), "after {at} samples");
        assert_eq!(got.streams[0].data.coarse.len(), capture(&store).streams[0].data.coarse.len());
        sizes.push(std::fs::metadata(&path).unwrap().len());
    }
    assert!(store.retention(id).unwrap().spans.iter().any(|s| s.level > 0), "the cap coarsened history");
    assert!(sizes.windows(2).any(|w| w[1] < w[0]), "a checkpoint wrote the file anew, smaller: {sizes:?}");
    let live = session::to_bytes(&capture(&store)).unwrap().len() as u64;
    assert!(*sizes.last().unwrap() < 3 * live + 4096, "{sizes:?} against {live}");
}
