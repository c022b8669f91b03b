use super::*;
use crate::session::{Capture, RunHistory, load_reporting, save};
use crate::view::{Arrangement, TimeView};
use zescope_store::{SeriesDesc, SeriesKind, StreamDesc};

/// A session of 8 gauges × 200 000 samples at 1 kHz (12.8 MiB of values decoded, ~14 MiB with
/// timestamps), saved in `dir`.
fn saved(dir: &Path) -> (std::path::PathBuf, u64) {
    let n = 8usize;
    let samples = 200_000usize;
    let mut store = Store::new(1 << 30);
    let series =
        (0..n).map(|k| SeriesDesc { name: format!("c{k}"), unit: "u".into(), kind: SeriesKind::Gauge }).collect();
    let id = store.begin_stream(StreamDesc { name: "g".into(), series });
    for block in 0..(samples / 10_000) {
        let ts: Vec<i64> = (0..10_000).map(|i| ((block * 10_000 + i) as i64 + 1) * 1_000_000).collect();
        let vals: Vec<f64> = (0..10_000 * n).map(|v| ((v * 7919 + block) % 1000) as f64).collect();
        store.append(id, &ts, &vals).unwrap();
    }
    store.end_stream(id);
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    let s =
        Session::capture(&store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] });
    let path = dir.join("big.ron");
    save(&path, &s).unwrap();
    (path, (samples * n) as u64)
}

#[test]
fn a_session_past_the_cap_opens_coarsened_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let (path, values) = saved(dir.path());
    let whole = {
        let mut store = Store::new(1 << 30);
        let o = open_into(&path, &mut store).unwrap();
        assert_eq!(o.notice, None, "every sample held: nothing to say");
        assert_eq!(store.streams().map(|s| s.appended).sum::<u64>(), values / 8);
        store.total_time_range().unwrap()
    };

    // One-shot, under a cap the decoded samples do not fit: opened, not refused.
    let cap = 4 << 20;
    let (s, notice) = load_reporting(&path, cap).unwrap();
    let notice = notice.expect("a notice says what was coarsened");
    assert!(notice.contains("history before") && notice.contains("summarised"), "{notice}");
    let data = &s.streams[0].data;
    assert!(s.raw_values() < values && s.raw_values() > 0, "{} of {values} values at full resolution", s.raw_values());
    assert!(!data.coarse.is_empty(), "the older history is there, coarsened");
    let decoded = convert_bytes(&s);
    assert!(decoded <= cap, "{decoded} bytes decoded within the cap of {cap}");
    // The whole time span is still there, the newest samples exact.
    assert_eq!(data.coarse[0].t_first, whole.0);
    assert_eq!(*data.raw.timestamps.last().unwrap(), whole.1);
    // And it saves and opens again.
    let again = dir.path().join("again.ron");
    save(&again, &s).unwrap();
    assert_eq!(crate::session::load_with_cap(&again, cap).unwrap(), s);

    // Into a store of a small cap: the store keeps its cap, the notice says so.
    let mut store = Store::new(2 << 20);
    let o = open_into(&path, &mut store).unwrap();
    assert!(store.memory_used() <= 2 << 20);
    assert!(o.notice.is_some_and(|n| n.contains("memory cap of 2 MiB")), "{:?}", store.coarsening());
    assert_eq!(store.total_time_range(), Some(whole));
}

/// Bytes `s` takes decoded, as the one-shot load counts them.
fn convert_bytes(s: &Session) -> u64 {
    s.streams
        .iter()
        .map(|x| {
            let n = x.data.desc.series.len();
            crate::session::convert::decoded_bytes(x.data.raw.timestamps.len() as u64, n)
                + crate::session::convert::coarse_bytes(x.data.coarse.len() as u64, n)
        })
        .sum()
}
