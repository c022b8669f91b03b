//! A derived series computed over recorded data gives the values a live run deriving it from its
//! start gave: across pieces, streams on two clocks (equal times included), a gap, a wrap.

use super::*;
use crate::derive::tests::info as run;
use zescope_sampler::SampleBatch;

const MS: i64 = 1_000_000;

/// The derived values of the Derived stream holding `name`: (time, value) in order.
pub(in crate::derive) fn values_of(store: &Store, ingest: &Ingest, name: &str) -> Vec<(i64, f64)> {
    let key = SeriesKey { device: "dev".into(), group: GROUP.into(), metric: name.into() };
    let id = ingest.series[&key].ids[0];
    let mut out = Vec::new();
    store.for_each_raw_row(id.stream(), |t, row| out.push((t, row[id.index()])));
    out
}

/// A every ms for 20 000 ms (several pieces), its counter wrapping; S every 7 ms, sometimes at
/// A's times (first, so that live its sample counts "at or before"); a pause of 300 ms in A at
/// 12 s.
pub(in crate::derive) fn batches() -> Vec<SampleBatch> {
    let mut batches = Vec::new();
    let mut c = 0.0;
    for t in 1..20_000i64 {
        if (12_000..12_300).contains(&t) {
            continue;
        }
        if t % 7 == 0 {
            let y = (t % 100) as f64;
            batches.push(SampleBatch {
                run: 1,
                stream: 1,
                timestamps: vec![t * MS],
                values: vec![y],
                gap_before: false,
            });
        }
        c = (c + 37.0 + (t % 5) as f64) % 1000.0;
        let x = 10.0 + (t % 13) as f64;
        batches.push(SampleBatch {
            run: 1,
            stream: 0,
            timestamps: vec![t * MS],
            values: vec![x, c, 0.0],
            gap_before: t == 12_300,
        });
    }
    batches
}

/// The expression the tests derive: a rate across wraps, two clocks, a window, an integral.
pub(in crate::derive) const TEXT: &str = "rate(A/c) + S/y * avg(A/x, 50ms) - integral(A/x)";

/// Run 1 started in a store, its ingest and history, and its deriver deriving `live=TEXT` from
/// its start.
pub(in crate::derive) fn live_run() -> (Store, Ingest, RunHistory, Deriver) {
    let mut store = Store::new(1 << 28);
    let mut ingest = Ingest::default();
    let mut history = RunHistory::default();
    let mut live = Deriver::new(vec![Derivation::parse(&format!("live={TEXT}")).unwrap()]);
    let mut info = run();
    live.run_started(&mut info).unwrap();
    let r = ingest.run_started(&mut store, info.clone());
    history.run_started(&info, None, &r.streams);
    (store, ingest, history, live)
}

/// Files batch `b` of the run and the derived batches it drives, as the window does.
pub(in crate::derive) fn file(b: &SampleBatch, live: &mut Deriver, ingest: &mut Ingest, store: &mut Store) {
    for b in std::iter::once(b.clone()).chain(live.samples(b)) {
        ingest.samples(store, &b).unwrap();
    }
}

#[test]
fn computed_over_a_recording_it_gives_what_a_live_run_gave() {
    let text = TEXT;
    let (mut store, mut ingest, mut history, mut live) = live_run();
    for b in &batches() {
        file(b, &mut live, &mut ingest, &mut store);
    }
    ingest.run_stopped(&mut store, 1);
    ingest.run = None;

    let def = Derivation::parse(&format!("later={text}")).unwrap();
    let (mut fill, keys) = Backfill::start(&def, &mut history, &mut store, &mut ingest).unwrap();
    assert_eq!(keys.iter().map(SeriesKey::label).collect::<Vec<_>>(), ["Derived/later"]);
    assert_eq!(fill.progress(), 0.0);
    assert!(!fill.step(&mut store, Duration::ZERO).unwrap(), "one batch per step at a zero budget");
    assert!(fill.progress() > 0.0 && fill.progress() < 1.0);
    fill.run_to_end(&mut store).unwrap();
    assert!(fill.is_done() && fill.progress() == 1.0);

    let (want, got) = (values_of(&store, &ingest, "live"), values_of(&store, &ingest, "later"));
    assert_eq!(got.len(), want.len());
    assert!(want.len() > 19_000, "{}", want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.0, w.0);
        assert!(g.1 == w.1 || (g.1.is_nan() && w.1.is_nan()), "at {} ms: {} vs live {}", g.0 / MS, g.1, w.1);
    }
    assert!(want.iter().filter(|v| v.1.is_nan()).count() < 100, "gaps only where the rules put them");
    // Kept for a session saved: the run's definitions and the stream's meta.
    assert!(history.runs.iter().any(|r| r.derived.iter().any(|d| d.starts_with("later="))));
    // The wrapping counter's rate over the recording, against its closed form: c grows by
    // 37 + t mod 5 bytes each ms (wrapping at 1000 every 25 ms or so); after the pause, a gap.
    let (mut fill, _) =
        Backfill::start(&Derivation::parse("wr=rate(A/c)").unwrap(), &mut history, &mut store, &mut ingest).unwrap();
    fill.run_to_end(&mut store).unwrap();
    let got = values_of(&store, &ingest, "wr");
    assert_eq!(got.len(), want.len());
    for &(t, v) in &got {
        let ms = t / MS;
        if ms == 1 || ms == 12_300 {
            assert!(v.is_nan(), "at {ms} ms nothing to move from: {v}");
        } else {
            assert_eq!(v, (37 + ms % 5) as f64 * 1000.0, "at {ms} ms, across the wraps");
        }
    }
    // Again: refused, naming it.
    let e = Backfill::start(&def, &mut history, &mut store, &mut ingest).unwrap_err();
    assert!(e.contains("Derived/later is shown already"), "{e}");
    let bad = Derivation::parse("bad=A/xx * 2").unwrap();
    let e = Backfill::start(&bad, &mut history, &mut store, &mut ingest).unwrap_err();
    assert!(e.contains("run 1: derived series 'bad' names 'A/xx', no series of this run; it could mean A/x"), "{e}");
}
