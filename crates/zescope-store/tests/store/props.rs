//! Property tests: the store's envelopes, statistics and point queries agree
//! with a brute-force scan of every sample ever appended, on random data with
//! spikes, NaN/±inf, gaps, wrapping and resetting cumulative counters, busy
//! time (a rate scaled into a percentage), states, slow and fast sampling, and
//! memory caps small enough to force coarsening and eviction.

use crate::model::checks::{check_draw_envelope, check_envelope, check_nearest, check_stats};
use crate::model::{Model, Rng, close, desc};
use proptest::prelude::*;
use zescope_store::{Envelope, SeriesKind, Store, StreamId};

#[derive(Debug, Clone)]
struct Scenario {
    seed: u64,
    kinds: Vec<u8>,
    /// Batches of an earlier, ended stream sharing the store (and the cap).
    prior: Vec<(u16, bool)>,
    /// (samples, mark a gap before the batch)
    batches: Vec<(u16, bool)>,
    cap_kib: Option<u32>,
    /// (a, b, columns): a query over the fractions a..b of the data's span.
    queries: Vec<(f64, f64, u16)>,
}

fn batches(max: usize) -> impl Strategy<Value = Vec<(u16, bool)>> {
    prop::collection::vec((1u16..1500, prop::bool::weighted(0.15)), 0..max)
}

fn plan() -> impl Strategy<Value = Scenario> {
    (
        any::<u64>(),
        prop::collection::vec(0u8..5, 1..=3),
        batches(20),
        batches(50).prop_filter("some data", |b| !b.is_empty()),
        // The smallest cap holds the largest batch with the bound of its pyramid growth
        // (every level's aggregates and drawing bands).
        prop_oneof![1 => Just(None), 3 => (120u32..500).prop_map(Some)],
        prop::collection::vec((-0.1f64..1.1, -0.1f64..1.1, prop_oneof![1u16..10, 10u16..400]), 1..6),
    )
        .prop_map(|(seed, kinds, prior, batches, cap_kib, queries)| Scenario {
            seed,
            kinds,
            prior,
            batches,
            cap_kib,
            queries,
        })
}

fn kind(k: u8) -> SeriesKind {
    match k {
        0 => SeriesKind::Gauge,
        1 => SeriesKind::Cumulative { wrap: None },
        2 => SeriesKind::Cumulative { wrap: Some(1000.0) },
        3 => SeriesKind::BusyTime { wrap: Some(1000.0), unit_s: 1e-6 },
        _ => SeriesKind::State,
    }
}

/// Build the store and the models (prior stream, if any, then the main one).
fn build(p: &Scenario) -> (Store, Vec<(StreamId, Model)>) {
    let kinds: Vec<SeriesKind> = p.kinds.iter().map(|&k| kind(k)).collect();
    let mut store = Store::new(p.cap_kib.map_or(1 << 30, |k| k as usize * 1024));
    let mut rng = Rng(p.seed | 1);
    let mut t: i64 = 1_000_000_000 + rng.below(1 << 20) as i64;
    let mut out = Vec::new();
    for (batches, end) in [(&p.prior, true), (&p.batches, false)] {
        if batches.is_empty() {
            continue;
        }
        let id = store.begin_stream(desc(&kinds));
        let model = feed(&mut store, id, &kinds, batches, &mut rng, &mut t);
        if end {
            store.end_stream(id);
        }
        out.push((id, model));
    }
    (store, out)
}

fn feed(
    store: &mut Store,
    id: StreamId,
    kinds: &[SeriesKind],
    batches: &[(u16, bool)],
    rng: &mut Rng,
    t: &mut i64,
) -> Model {
    let n = kinds.len();
    let mut model = Model::new(kinds);
    let mut walk = vec![0.0f64; n];
    let mut totals = vec![0.0f64; n];
    let slow = rng.below(4) == 0;
    for &(len, gap) in batches {
        if gap {
            store.mark_gap(id);
            model.mark_gap();
            *t += rng.below(20_000_000_000) as i64;
        }
        let mut ts = Vec::with_capacity(len as usize);
        let mut vals = Vec::with_capacity(len as usize * n);
        for _ in 0..len {
            *t += match rng.below(1000) {
                0 => 5_000_000_000,
                _ if slow => 50_000_000 + rng.below(100_000_000) as i64,
                _ => 900_000 + rng.below(200_000) as i64,
            };
            ts.push(*t);
            for s in 0..n {
                let v = match kinds[s] {
                    SeriesKind::State => match rng.below(50) {
                        0 => f64::NAN,
                        k => (k % 3) as f64,
                    },
                    SeriesKind::Gauge => {
                        walk[s] += rng.unit() - 0.5;
                        match rng.below(400) {
                            0 => f64::NAN,
                            1 => f64::INFINITY,
                            2 => f64::NEG_INFINITY,
                            3 | 4 => walk[s] + (rng.unit() - 0.5) * 2e6,
                            _ => walk[s],
                        }
                    }
                    SeriesKind::Cumulative { wrap } | SeriesKind::BusyTime { wrap, .. } => {
                        totals[s] += rng.below(50) as f64;
                        if let Some(m) = wrap {
                            totals[s] %= m;
                        } else if rng.below(500) == 0 {
                            totals[s] = 0.0;
                        }
                        if rng.below(700) == 0 { f64::NAN } else { totals[s] }
                    }
                };
                vals.push(v);
            }
        }
        let evicted = store.retention(id).unwrap().evicted_samples;
        store.append(id, &ts, &vals).expect("append");
        assert!(store.memory_used() <= store.memory_cap(), "over the cap");
        // The cap may have evicted this live stream whole (the last resort):
        // it then continues after a gap.
        let now = store.retention(id).unwrap().evicted_samples;
        if now > evicted && now == model.ts.len() as u64 {
            model.mark_gap();
        }
        for (k, &tk) in ts.iter().enumerate() {
            model.push(tk, &vals[k * n..(k + 1) * n]);
        }
    }
    model
}

proptest! {
    // 40 cases keep `cargo test` quick; PROPTEST_CASES=2000 for a deeper run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(40),
        ..ProptestConfig::default()
    })]

    #[test]
    fn queries_match_a_brute_force_scan(p in plan()) {
        let (store, streams) = build(&p);
        let mut env = Envelope::new();
        let mut rng = Rng(p.seed ^ 0x9e37_79b9_7f4a_7c15 | 1);
        for (id, model) in &streams {
        let (id, model) = (*id, model);
        let (lo, hi) = (model.ts[0], *model.ts.last().unwrap());
        let span = (hi - lo).max(1) as f64;
        for (sid, _) in store.series(id) {
            check_envelope(&store, sid, model, lo, hi, 300, &mut env);
            for &(a, b, cols) in &p.queries {
                let t0 = lo + (a.min(b) * span) as i64;
                let t1 = lo + (a.max(b) * span) as i64;
                check_envelope(&store, sid, model, t0, t1, cols as usize, &mut env);
                check_draw_envelope(&store, sid, &env);
                check_stats(&store, sid, model, t0, t1);
            }
            for _ in 0..20 {
                let t = lo - 1000 + (rng.unit() * (span + 2000.0)) as i64;
                check_nearest(&store, sid, model, t);
            }
        }
        }
    }

    #[test]
    fn export_then_import_gives_the_same_answers(p in plan()) {
        let (store, streams) = build(&p);
        let (id, model) = streams.last().unwrap();
        let (id, model) = (*id, model);
        let data = store.stream_data(id).unwrap();
        let mut copy = Store::new(1 << 30);
        let id2 = copy.restore_stream(&data).expect("import");
        prop_assert_eq!(copy.retention(id2), store.retention(id));
        let (lo, hi) = (model.ts[0], *model.ts.last().unwrap());
        let span = (hi - lo).max(1) as f64;
        let (mut e1, mut e2) = (Envelope::new(), Envelope::new());
        for ((sid, _), (sid2, _)) in store.series(id).zip(copy.series(id2)) {
            for &(a, b, cols) in &p.queries {
                let t0 = lo + (a.min(b) * span) as i64;
                let t1 = lo + (a.max(b) * span) as i64;
                store.envelope(sid, t0, t1, cols as usize, &mut e1);
                copy.envelope(sid2, t0, t1, cols as usize, &mut e2);
                prop_assert_eq!(e1.columns().len(), e2.columns().len());
                for (x, y) in e1.columns().iter().zip(e2.columns()) {
                    prop_assert_eq!((x.t_start, x.t_end, x.samples, x.count, x.non_finite), (y.t_start, y.t_end, y.samples, y.count, y.non_finite));
                    prop_assert!(x.min == y.min || (x.min.is_nan() && y.min.is_nan()));
                    prop_assert!(x.max == y.max || (x.max.is_nan() && y.max.is_nan()));
                    prop_assert!(close(x.mean, y.mean));
                    prop_assert_eq!(x.break_before, y.break_before);
                }
                check_envelope(&copy, sid2, model, t0, t1, cols as usize, &mut e2);
            }
        }
        // The copy continues where the original stopped.
        if !data.ended {
            let t = model.ts.last().unwrap() + 1_000_000;
            let row = vec![1.0; data.desc.series.len()];
            copy.append(id2, &[t], &row).expect("append after import");
        }
    }
}

/// The properties above are only as strong as the cases they see: check that
/// the plans do reach coarsened history, eviction, and walks above raw level.
#[test]
fn plans_reach_coarsening_eviction_and_coarse_levels() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut coarse, mut evicted, mut levels) = (0, 0, std::collections::BTreeSet::new());
    let mut env = Envelope::new();
    for _ in 0..40 {
        let p = plan().new_tree(&mut runner).unwrap().current();
        let (store, streams) = build(&p);
        for (id, model) in &streams {
            let ret = store.retention(*id).unwrap();
            coarse += usize::from(ret.spans.iter().any(|s| s.level > 0));
            evicted += usize::from(ret.evicted_samples > 0);
            let (lo, hi) = (model.ts[0], *model.ts.last().unwrap());
            let sid = store.series(*id).next().unwrap().0;
            for &(a, b, cols) in &p.queries {
                let span = (hi - lo) as f64;
                store.envelope(
                    sid,
                    lo + (a.min(b) * span) as i64,
                    lo + (a.max(b) * span) as i64,
                    cols as usize,
                    &mut env,
                );
                levels.insert(env.samples_per_bucket());
            }
        }
    }
    assert!(coarse >= 5 && evicted >= 1, "coarsened {coarse}, evicted {evicted}");
    assert!(levels.len() >= 3, "bucket sizes walked: {levels:?}");
}

/// An extreme or random number for a mutated field.
fn wild(rng: &mut Rng) -> u64 {
    match rng.below(6) {
        0 => 0,
        1 => u64::MAX - rng.below(3),
        2 => i64::MAX as u64 - rng.below(3),
        3 => rng.below(64),
        4 => rng.below(1 << 20),
        _ => rng.next_u64(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(40),
        ..ProptestConfig::default()
    })]

    /// A range of raw samples (what an incremental checkpoint copies) is exactly that slice of
    /// the whole export, and the rest of the history is the same.
    #[test]
    fn a_range_of_raw_samples_is_that_slice_of_the_whole(p in plan(), a in 0.0f64..1.2, b in 0.0f64..1.2) {
        let (store, streams) = build(&p);
        let (id, _) = streams.last().unwrap();
        let whole = store.stream_data(*id).unwrap();
        let (first, held) = (whole.raw.first_ordinal, whole.raw.timestamps.len() as u64);
        let at = |x: f64| first.saturating_sub(8) + (x * (held + 16) as f64) as u64;
        let (from, to) = (at(a.min(b)), at(a.max(b)));
        let part = store.stream_data_between(*id, from, to).unwrap();
        let (lo, hi) = (from.clamp(first, first + held) - first, to.clamp(first, first + held) - first);
        let n = whole.desc.series.len();
        prop_assert_eq!(&part.raw.timestamps[..], &whole.raw.timestamps[lo as usize..hi as usize]);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&part.raw.values), bits(&whole.raw.values[lo as usize * n..hi as usize * n]));
        prop_assert_eq!(&part.raw.gaps, &whole.raw.gaps);
        prop_assert_eq!((part.raw.first_ordinal, part.raw.first_block), (whole.raw.first_ordinal, whole.raw.first_block));
        prop_assert_eq!(part.coarse.len(), whole.coarse.len());
    }

    /// Session files are untrusted: whatever a mutated `StreamData` says,
    /// importing it returns an error or a store that answers queries; it
    /// never panics.
    #[test]
    fn imports_of_mutated_data_never_panic(p in plan(), mutation_seed in any::<u64>()) {
        let (store, streams) = build(&p);
        let (id, _) = streams.last().unwrap();
        let mut data = store.stream_data(*id).unwrap();
        let mut rng = Rng(mutation_seed | 1);
        for _ in 0..1 + rng.below(3) {
            let v = wild(&mut rng);
            let nb = data.coarse.len().max(1) as u64;
            let b = rng.below(nb) as usize;
            let nr = data.raw.timestamps.len().max(1) as u64;
            let r = rng.below(nr) as usize;
            match rng.below(14) {
                0 => if let Some(x) = data.coarse.get_mut(b) { x.level = v as u8 },
                1 => if let Some(x) = data.coarse.get_mut(b) { x.index = v },
                2 => if let Some(x) = data.coarse.get_mut(b) { x.samples = v },
                3 => if let Some(x) = data.coarse.get_mut(b) { x.first_ordinal = v },
                4 => if let Some(x) = data.coarse.get_mut(b) { x.t_first = v as i64 },
                5 => if let Some(x) = data.coarse.get_mut(b) { x.gap_before = v as i64 },
                6 => if let Some(x) = data.coarse.get_mut(b).and_then(|x| x.series.first_mut()) { x.count = v as u32 },
                7 => if let Some(t) = data.raw.timestamps.get_mut(r) { *t = v as i64 },
                8 => data.raw.first_block = v,
                9 => data.raw.first_ordinal = v,
                10 => data.raw.gaps.push(v as usize),
                11 => data.raw.first_gap = v as i64,
                12 => data.evicted_samples = v,
                _ => if b < data.coarse.len() { data.coarse.remove(b); },
            }
        }
        let mut copy = Store::new(1 << 30);
        if let Ok(id2) = copy.restore_stream(&data) {
            let mut env = Envelope::new();
            let range = copy.time_range(id2);
            for (sid, _) in copy.series(id2) {
                for (t0, t1) in [(i64::MIN, i64::MAX), range.unwrap_or((0, 0))] {
                    copy.envelope(sid, t0, t1, 200, &mut env);
                    let _ = (copy.stats(sid, t0, t1), copy.nearest(sid, t0), copy.bucket_at(sid, t1));
                }
            }
            let _ = copy.stream_data(id2);
            let row = vec![1.0; data.desc.series.len()];
            let t = range.map_or(0, |r| r.1.saturating_add(1));
            let _ = copy.append(id2, &[t, t.saturating_add(1)], &[row.clone(), row].concat());
            for (sid, _) in copy.series(id2) {
                copy.envelope(sid, i64::MIN, i64::MAX, 50, &mut env);
            }
        }
    }
}
