//! The cache of decoded blocks (`decoded.rs`) answers exactly what decoding does: across
//! frames of a sliding view, after blocks are coarsened away, after entries are replaced; its
//! bytes are counted and give way under the cap.

use super::column::BLOCK;
use super::*;

const MS: i64 = 1_000_000;

/// Gauges (smooth, with NaNs and infinities) and cumulative counters (with and without a wrap).
fn kinds() -> Vec<SeriesKind> {
    vec![
        SeriesKind::Gauge,
        SeriesKind::Gauge,
        SeriesKind::Cumulative { wrap: Some(65_536.0) },
        SeriesKind::Cumulative { wrap: None },
    ]
}

fn value(i: u64, s: usize) -> f64 {
    let x = i as f64;
    match s {
        0 => (x * 1e-3).sin() * 10.0 + if i % 997 == 3 { 50.0 } else { 0.0 },
        1 if i % 331 == 7 => f64::NAN,
        1 if i % 1021 == 11 => f64::INFINITY,
        1 => (i % 97) as f64,
        2 => ((i * i) % 65_536) as f64,
        _ => (i * 3 + i / 7) as f64,
    }
}

fn stream(store: &mut Store) -> StreamId {
    let series = kinds()
        .into_iter()
        .enumerate()
        .map(|(k, kind)| SeriesDesc { name: format!("s{k}"), unit: "u".into(), kind })
        .collect();
    store.begin_stream(StreamDesc { name: "t".into(), series })
}

/// Time of sample `k`: 1 kHz, 3 ms more across each gap.
fn t(k: u64) -> i64 {
    k as i64 * MS + (k / 5000) as i64 * 3 * MS
}

/// Appends samples `from..to` (1 kHz), a gap before every 5000th.
fn append(store: &mut Store, id: StreamId, from: u64, to: u64) {
    let n = kinds().len();
    let mut i = from;
    while i < to {
        if i > 0 && i.is_multiple_of(5000) {
            store.mark_gap(id);
        }
        let end = to.min((i / 5000 + 1) * 5000);
        let ts: Vec<i64> = (i..end).map(t).collect();
        let vals: Vec<f64> = (i..end).flat_map(|k| (0..n).map(move |s| value(k, s))).collect();
        store.append(id, &ts, &vals).unwrap();
        i = end;
    }
}

/// Every series' envelope over `t0..=t1` through the store (with its cache: `envelopes` for all,
/// then `envelope` for each) equals the envelope decoded without a cache.
fn check(store: &Store, id: StreamId, t0: i64, t1: i64, cols: usize) {
    let ids: Vec<SeriesId> = (0..kinds().len()).map(|k| store.series_id(id, k).unwrap()).collect();
    let mut cached = vec![Envelope::new(); ids.len()];
    store.envelopes(&ids, t0, t1, cols, &mut cached);
    let st = &store.streams[id.0 as usize];
    for (k, &sid) in ids.iter().enumerate() {
        let mut plain = Envelope::new();
        st.envelope(k, t0, t1, cols, &mut plain, None);
        assert_eq!(plain.samples_per_bucket(), 1, "the view reads raw samples");
        assert!(plain.columns().len() > cols / 2);
        let want: Vec<_> = plain.columns().iter().map(EnvelopeColumn::bits).collect();
        let got: Vec<_> = cached[k].columns().iter().map(EnvelopeColumn::bits).collect();
        assert!(got == want, "series {k} over {t0}..={t1}: envelopes differ from the decoded ones");
        let mut one = Envelope::new();
        store.envelope(sid, t0, t1, cols, &mut one);
        let got: Vec<_> = one.columns().iter().map(EnvelopeColumn::bits).collect();
        assert!(got == want, "series {k} over {t0}..={t1}: one envelope differs from the decoded one");
    }
}

fn hits(store: &Store) -> u64 {
    store.decoded.lock().unwrap().hits()
}

#[test]
fn a_sliding_view_reads_cached_blocks_and_sees_what_decoding_sees() {
    let mut store = Store::new(1 << 30);
    let id = stream(&mut store);
    append(&mut store, id, 0, 40_000);
    let mut n = 40_000;
    for frame in 0..12 {
        // A live view of the last 20 s at 500 columns: 40 samples per column, raw.
        check(&store, id, t(n - 20_000), t(n), 500);
        append(&mut store, id, n, n + 1 + frame * 37);
        n += 1 + frame * 37;
        assert!(store.memory_used() <= store.memory_cap());
    }
    let bytes = store.decoded.lock().unwrap().bytes();
    assert!(bytes > 78 * 4 * BLOCK * 8, "the view's blocks are cached: {bytes} bytes");
    assert_eq!(store.decoded_bytes.load(std::sync::atomic::Ordering::Relaxed), bytes);
    // Eleven frames after the first found the window's blocks decoded (4 series, ~78 blocks).
    assert!(hits(&store) > 11 * 4 * 70, "{} hits", hits(&store));
}

#[test]
fn coarsened_blocks_leave_the_cache_exact() {
    // A cap that holds less than the 130,000 samples appended at full resolution.
    let cap = 1 << 20;
    let mut store = Store::new(cap);
    let id = stream(&mut store);
    append(&mut store, id, 0, 30_000);
    let mut n = 30_000;
    let mut coarsened = false;
    for _ in 0..40 {
        // The view starts at the oldest raw sample, so the new head block (whose first rate is
        // now the stream's head rate) is in it once its predecessor is coarsened away.
        let head = store.streams[id.0 as usize].blocks.front().unwrap().t_first();
        check(&store, id, head, head + 15_000 * MS, 300);
        append(&mut store, id, n, n + 2_500);
        n += 2_500;
        assert!(store.memory_used() <= cap, "{} > {cap}", store.memory_used());
        coarsened |= store.streams[id.0 as usize].first_block > 0;
    }
    assert!(coarsened, "the cap coarsened raw blocks ({} bytes used)", store.memory_used());
    assert!(hits(&store) > 0);
}

#[test]
fn replaced_entries_leave_the_cache_exact_and_inside_its_room() {
    // Room for a few dozen blocks, a view of ~300 blocks of 4 series: entries are replaced as
    // the view moves (every append starts an epoch).
    let mut store = Store::new(1 << 30);
    let id = stream(&mut store);
    append(&mut store, id, 0, 100_000);
    let room = 120 << 10;
    for frame in 0..10u64 {
        let (t0, t1) = (t(frame * 7_000), t(frame * 7_000 + 75_000));
        {
            let st = &store.streams[id.0 as usize];
            let mut cache = store.decoded.lock().unwrap();
            cache.begin(store.version);
            for s in 0..kinds().len() {
                let mut plain = Envelope::new();
                st.envelope(s, t0, t1, 1_000, &mut plain, None);
                let want: Vec<_> = plain.columns().iter().map(EnvelopeColumn::bits).collect();
                // Twice: the second pass finds what the first one kept.
                for pass in 0..2 {
                    let mut cached = Envelope::new();
                    let use_ = decoded::CacheUse { cache: &mut cache, stream: id.0, room };
                    st.envelope(s, t0, t1, 1_000, &mut cached, Some(use_));
                    let got: Vec<_> = cached.columns().iter().map(EnvelopeColumn::bits).collect();
                    assert!(got == want, "frame {frame} series {s} pass {pass}");
                    assert!(cache.bytes() <= room, "{} > {room}", cache.bytes());
                }
            }
        }
        let n = 100_000 + frame;
        append(&mut store, id, n, n + 1);
    }
    let cache = store.decoded.lock().unwrap();
    assert!((1..60).contains(&cache.slots()), "{} slots", cache.slots());
    assert!(cache.hits() > 0 && cache.replaced() > 0, "{} hits, {} replaced", cache.hits(), cache.replaced());
}

#[test]
fn the_cache_is_counted_and_gives_way_under_the_cap() {
    let mut store = Store::new(1 << 30);
    let id = stream(&mut store);
    append(&mut store, id, 0, 20_000);
    let before = store.memory_used();
    check(&store, id, 0, t(19_999), 400);
    let cached = store.decoded.lock().unwrap().bytes();
    assert!(cached > 0);
    assert_eq!(store.memory_used(), before + cached);
    // A cap just above the data: the cache is dropped before any history is evicted.
    let cap = store.data_used() + 4096;
    store.set_memory_cap(cap);
    assert!(store.memory_used() <= cap, "{} > {cap}", store.memory_used());
    assert_eq!(store.retention(id).unwrap().evicted_samples, 0);
    // Queries under the tight cap stay under it, and still answer exactly.
    check(&store, id, 0, t(19_999), 400);
    assert!(store.memory_used() <= cap, "{} > {cap}", store.memory_used());
    // Appends keep the cache's share free once it is in use: the share is the cap's 32nd.
    store.set_memory_cap(4 << 20);
    append(&mut store, id, 20_000, 120_000);
    check(&store, id, t(110_000), t(119_999), 400);
    assert!(store.memory_used() <= 4 << 20);
    assert!(store.data_used() + decoded::share(4 << 20) <= 4 << 20);
    // An import drops it.
    let data = store.stream_data(id).unwrap();
    store.restore_stream(&data).unwrap();
    assert_eq!(store.decoded.lock().unwrap().bytes(), 0);
}
