//! The store's limits: the memory cap and what the UI sees of it, bytes per
//! value, and bad input (batches, imports) rejected with a reason.

use crate::model::{MS, Rng, desc, fill, sid};
use zescope_store::{BucketStats, CoarseBucket, Envelope, RawData, SeriesKind, Store, StoreError, StreamData};

const GAUGE: SeriesKind = SeriesKind::Gauge;

#[test]
fn the_cap_holds_and_the_ui_can_see_what_was_coarsened_and_evicted() {
    let cap = 4 << 20;
    let mut store = Store::new(cap);
    let old = store.begin_stream(desc(&[GAUGE; 8]));
    fill(&mut store, old, 0, 200_000, 8, |i, s| (i + s) as f64);
    store.end_stream(old);
    let live = store.begin_stream(desc(&[GAUGE; 8]));
    let start = 300_000 * MS;
    let mut rng = Rng(7);
    for k in 0..600 {
        let ts: Vec<i64> = (0..1000).map(|i| start + (k * 1000 + i) * MS).collect();
        let vals: Vec<f64> = (0..8000).map(|_| rng.unit()).collect();
        store.append(live, &ts, &vals).unwrap();
        assert!(store.memory_used() <= cap, "{} > {cap} after batch {k}", store.memory_used());
    }
    // The live stream keeps recent data at full resolution, older data coarser.
    let ret = store.retention(live).unwrap();
    let full = ret.spans.iter().find(|s| s.level == 0).expect("recent data at full resolution");
    assert_eq!(full.t_last, start + 599_999 * MS);
    let before = ret.coarsened_before().expect("older data coarsened");
    assert_eq!(before, full.t_first);
    assert!(ret.spans.iter().any(|s| s.level >= 1 && s.t_first < before));
    // The ended, older stream went first: coarsened to its top or evicted.
    let old_ret = store.retention(old).unwrap();
    assert!(old_ret.spans.iter().all(|s| s.level > 0), "{old_ret:?}");
    // Queries across the coarsened region still answer, at bucket resolution.
    let s = sid(&store, live, 0);
    let mut env = Envelope::new();
    store.envelope(s, start, start + 599_999 * MS, 1000, &mut env);
    assert!(!env.columns().is_empty());
    assert_eq!(store.nearest(s, start + 10 * MS), None, "coarsened history has no exact samples");
    let b = store.bucket_at(s, start + 10 * MS).unwrap();
    assert!(b.samples_per_bucket >= 256 && b.t_first <= start + 10 * MS);
    let st = store.stats(s, start + 10 * MS, start + 20 * MS);
    assert!(!st.exact && st.samples >= 256);
    // Lowering the cap takes effect at once.
    store.set_memory_cap(1 << 20);
    assert!(store.memory_used() <= 1 << 20);
}

#[test]
fn bytes_per_value_at_full_resolution_follow_the_data() {
    // Steady ramps: every sealed column packs to a header, so what is left is the min/max
    // pyramid beside the blocks (40 B per 256 samples per series), headers and the open block.
    for kind in [GAUGE, SeriesKind::Cumulative { wrap: None }] {
        let mut store = Store::new(1 << 30);
        let id = store.begin_stream(desc(&[kind; 16]));
        let n = 256 * 1024;
        fill(&mut store, id, 0, n, 16, |i, s| (i * 3 + s) as f64);
        let per_value = store.memory_used() as f64 / (n * 16) as f64;
        eprintln!("{kind:?} ramps: {per_value:.4} B/value");
        assert!(per_value <= 0.5, "{kind:?}: {per_value:.3} B/value");
        assert!(per_value >= 0.16, "{kind:?}: accounting misses the pyramid");
        assert_eq!(store.retention(id).unwrap().spans.len(), 1, "nothing coarsened");
    }
    // Full-precision noise over many binades: no encoding shrinks it much, none may grow it.
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[GAUGE; 16]));
    let mut rng = Rng(3);
    let n = 64 * 1024;
    let noise: Vec<f64> = (0..n * 16).map(|_| rng.unit()).collect();
    fill(&mut store, id, 0, n, 16, |i, s| noise[i * 16 + s]);
    let per_value = store.memory_used() as f64 / (n * 16) as f64;
    eprintln!("noise: {per_value:.4} B/value");
    assert!((6.0..=9.0).contains(&per_value), "{per_value:.3} B/value");
}

#[test]
fn bad_input_is_rejected_with_a_reason_and_changes_nothing() {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[GAUGE, GAUGE]));
    let e = store.append(id, &[1, 2], &[1.0, 2.0, 3.0]).unwrap_err();
    assert!(matches!(e, StoreError::BatchShape { timestamps: 2, values: 3, series: 2, expected: 4 }));
    assert!(e.to_string().contains("3 values for 2 timestamps and 2 series"), "{e}");
    store.append(id, &[10, 20], &[1.0, 2.0, 3.0, 4.0]).unwrap();
    let e = store.append(id, &[30, 30], &[0.0; 4]).unwrap_err();
    assert_eq!(e, StoreError::NonMonotonic { index: 1, prev: 30, t: 30 });
    let e = store.append(id, &[20], &[0.0; 2]).unwrap_err();
    assert_eq!(e, StoreError::NonMonotonic { index: 0, prev: 20, t: 20 });
    assert_eq!(store.sample_count(id), 2, "rejected batches store nothing");
    store.end_stream(id);
    assert_eq!(store.append(id, &[40], &[0.0; 2]), Err(StoreError::StreamEnded(id)));
    let mut other = Store::new(1 << 30);
    let foreign = other.begin_stream(desc(&[GAUGE]));
    let foreign = other.begin_stream(desc(&[GAUGE])).max(foreign);
    assert_eq!(store.append(foreign, &[1], &[1.0]), Err(StoreError::UnknownStream(foreign)));
    // Queries on unknown series answer "nothing", never panic.
    let bad = other.series_id(foreign, 0).unwrap();
    let mut env = Envelope::new();
    store.envelope(bad, 0, 100, 10, &mut env);
    assert!(env.columns().is_empty());
    assert_eq!(store.stats(bad, 0, 100).samples, 0);
    assert_eq!(store.nearest(bad, 0), None);
    // Reversed ranges and zero columns.
    let s = sid(&store, id, 0);
    store.envelope(s, 100, 0, 10, &mut env);
    assert!(env.columns().is_empty());
    store.envelope(s, 0, 100, 0, &mut env);
    assert!(env.columns().is_empty());
    assert_eq!(store.stats(s, 100, 0).samples, 0);
}

#[test]
fn a_cap_too_small_for_one_block_is_an_error_not_an_overrun() {
    let mut store = Store::new(16 * 1024);
    let id = store.begin_stream(desc(&[GAUGE; 64]));
    let e = store.append(id, &[1], &[0.0; 64]).unwrap_err();
    assert!(matches!(e, StoreError::CapTooSmall { stored: 0, .. }), "{e}");
    assert!(store.memory_used() <= 16 * 1024);
}

fn valid_data() -> StreamData {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[GAUGE, SeriesKind::Cumulative { wrap: None }]));
    fill(&mut store, id, 0, 3000, 2, |i, s| (i * (s + 1)) as f64);
    store.stream_data(id).unwrap()
}

#[test]
fn corrupt_stream_data_is_rejected_with_a_reason() {
    let mut store = Store::new(1 << 30);
    assert!(store.restore_stream(&valid_data()).is_ok());
    let bucket = CoarseBucket {
        level: 1,
        index: 0,
        t_first: 0,
        t_last: 10,
        first_ordinal: 0,
        samples: 256,
        gap_before: 0,
        max_gap: 0,
        series: vec![
            BucketStats {
                min: 0.0,
                max: 1.0,
                sum: 1.0,
                last: Some(1.0),
                count: 256,
                non_finite: 0,
                area: 0.0,
                dur: 0.0
            };
            2
        ],
    };
    type Corruption<'a> = Box<dyn Fn(&mut StreamData) + 'a>;
    let cases: Vec<(&str, Corruption)> = vec![
        ("values for", Box::new(|d| d.raw.values.pop().map(drop).unwrap_or(()))),
        ("does not increase", Box::new(|d| d.raw.timestamps.swap(3, 4))),
        ("gap indices", Box::new(|d| d.raw.gaps = vec![5, 5])),
        ("first rates", Box::new(|d| d.raw.first_rates = vec![None])),
        ("level 9", Box::new(|d| d.coarse = vec![CoarseBucket { level: 9, ..bucket.clone() }])),
        ("samples", Box::new(|d| d.coarse = vec![CoarseBucket { samples: 0, ..bucket.clone() }])),
        ("series", Box::new(|d| d.coarse = vec![CoarseBucket { series: vec![], ..bucket.clone() }])),
        (
            "out of range",
            Box::new(|d| d.coarse = vec![CoarseBucket { level: 6, index: u64::MAX / 2, ..bucket.clone() }]),
        ),
        ("out of range", Box::new(|d| d.coarse = vec![CoarseBucket { index: u64::MAX - 3, ..bucket.clone() }])),
        (
            "out of range",
            Box::new(|d| d.coarse = vec![CoarseBucket { first_ordinal: u64::MAX - 100, ..bucket.clone() }]),
        ),
        ("out of range", Box::new(|d| d.raw.first_ordinal = u64::MAX - 10)),
        ("out of range", Box::new(|d| d.raw.first_block = u64::MAX - 10)),
        (
            "more values than samples",
            Box::new(|d| {
                let mut b = bucket.clone();
                b.series[1].non_finite = 5;
                d.coarse = vec![b];
            }),
        ),
        (
            "does not follow",
            Box::new(|d| {
                d.coarse = vec![
                    bucket.clone(),
                    CoarseBucket { index: 5, first_ordinal: 256, t_first: 11, t_last: 20, ..bucket.clone() },
                ];
            }),
        ),
        ("do not follow the coarse history", Box::new(|d| d.coarse = vec![bucket.clone()])),
    ];
    for (want, corrupt) in cases {
        let mut d = valid_data();
        corrupt(&mut d);
        let e = store.restore_stream(&d).expect_err(want);
        assert!(matches!(e, StoreError::InvalidData(_)));
        assert!(e.to_string().contains(want), "{e} (expected: {want})");
    }
    // Data that is valid but tiny still imports (an empty stream).
    let empty = StreamData { raw: RawData::default(), coarse: vec![], ..valid_data() };
    let id = store.restore_stream(&empty).unwrap();
    assert_eq!(store.time_range(id), None);
}

#[test]
fn extreme_timestamps_and_values_never_panic() {
    let mut store = Store::new(1 << 30);
    let kinds = [GAUGE, SeriesKind::Cumulative { wrap: Some(f64::MAX) }];
    let id = store.begin_stream(desc(&kinds));
    let ts = [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1];
    let vals = [f64::MAX, f64::MIN, f64::MIN_POSITIVE, -0.0, 1e308, 1e308, -1e308, 0.0, f64::NAN, 1.0, 2.0, 3.0];
    store.append(id, &ts, &vals).unwrap();
    store.mark_gap(id);
    store.append(id, &[i64::MAX], &[1.0, 1.0]).unwrap();
    let mut env = Envelope::new();
    for k in 0..2 {
        let s = store.series_id(id, k).unwrap();
        for (t0, t1) in [(i64::MIN, i64::MAX), (i64::MIN, i64::MIN), (i64::MAX, i64::MAX), (-5, 5)] {
            for columns in [1, 7, 1000] {
                store.envelope(s, t0, t1, columns, &mut env);
                let _ = store.stats(s, t0, t1);
            }
            let _ = (store.nearest(s, t0), store.nearest_raw(s, t1), store.bucket_at(s, t0));
        }
        store.envelope(s, i64::MIN, i64::MAX, 3, &mut env);
        let total: u64 = env.columns().iter().map(|c| c.samples).sum();
        assert_eq!(total, 7, "every sample is in some column");
    }
    let data = store.stream_data(id).unwrap();
    let mut copy = Store::new(1 << 30);
    copy.restore_stream(&data).unwrap();
}

#[test]
fn stream_data_round_trips_through_ron() {
    let mut store = Store::new(300 << 10);
    let kinds = [GAUGE, SeriesKind::Cumulative { wrap: Some(65536.0) }];
    let id = store.begin_stream(desc(&kinds));
    fill(&mut store, id, 0, 30_000, 2, |i, s| match (i % 997, s) {
        (0, 0) => f64::NAN,
        (_, 0) => (i as f64).sin(),
        _ => ((i * 37) % 65536) as f64,
    });
    store.end_stream(id);
    let data = store.stream_data(id).unwrap();
    assert!(!data.coarse.is_empty(), "the small cap coarsened some history");
    let text = ron::to_string(&data).unwrap();
    let back: StreamData = ron::from_str(&text).unwrap();
    // NaN != NaN: compare the re-serialised text instead of the values.
    assert_eq!(ron::to_string(&back).unwrap(), text);
    let mut copy = Store::new(1 << 30);
    let id2 = copy.restore_stream(&back).unwrap();
    assert_eq!(copy.retention(id2), store.retention(id));
    let (t0, t1) = store.time_range(id).unwrap();
    for k in 0..2 {
        let (a, b) = (store.series_id(id, k).unwrap(), copy.series_id(id2, k).unwrap());
        let (x, y) = (store.stats(a, t0, t1), copy.stats(b, t0, t1));
        assert_eq!((x.samples, x.count, x.non_finite, x.min, x.max), (y.samples, y.count, y.non_finite, y.min, y.max));
    }
}
