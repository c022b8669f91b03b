//! A derived series added to a run in progress gives the values the run gave deriving it from
//! its start: over the rows recorded before it was added, across batches that arrive while it
//! catches up, and after the hand-over (an integral goes on from its sum).

use super::*;
use crate::derive::backfill::tests::{TEXT, batches, file, live_run, values_of};

const MS: i64 = 1_000_000;

fn same(got: &[(i64, f64)], want: &[(i64, f64)], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.0, w.0, "{what}");
        assert!(g.1 == w.1 || (g.1.is_nan() && w.1.is_nan()), "{what} at {} ms: {} vs {}", g.0 / MS, g.1, w.1);
    }
}

#[test]
fn added_during_a_run_it_gives_what_the_run_gave_deriving_it_from_its_start() {
    let text = TEXT;
    let (mut store, mut ingest, mut history, mut live) = live_run();
    let all = batches();
    let (before, after) = all.split_at(9_000);
    for b in before {
        file(b, &mut live, &mut ingest, &mut store);
    }

    let def = Derivation::parse(&format!("later={text}")).unwrap();
    let (mut up, keys) = CatchUp::start(&def, &mut live, &mut ingest, &mut store, &mut history).unwrap();
    assert_eq!(keys.iter().map(SeriesKey::label).collect::<Vec<_>>(), ["Derived/later"]);
    assert_eq!((up.name(), up.run(), up.progress()), ("later", 1, 0.0));
    // A name taken, or one the run lacks: refused, nothing added.
    let shown = ingest.series.len();
    let e = CatchUp::start(&def, &mut live, &mut ingest, &mut store, &mut history).unwrap_err();
    assert!(e.contains("'later' is defined already"), "{e}");
    let bad = Derivation::parse("bad=A/xx * 2").unwrap();
    let e = CatchUp::start(&bad, &mut live, &mut ingest, &mut store, &mut history).unwrap_err();
    assert!(e.contains("names 'A/xx', no series of this run; it could mean A/x"), "{e}");
    assert_eq!(ingest.series.len(), shown);

    // One slice between batches (a zero budget: one feed each), so batches arrive while it
    // catches up, and it hands over part way through the rest.
    let mut handed_over = None;
    let mut fin = None;
    for (i, b) in after.iter().enumerate() {
        if handed_over.is_none() && up.step(&mut store, Duration::ZERO, &mut live).unwrap() {
            handed_over = Some(i);
        }
        if i == 6_000 {
            // Added and finished at once (what a run's stop does), then taken live.
            let def = Derivation::parse(&format!("fin={text}")).unwrap();
            let (mut f, _) = CatchUp::start(&def, &mut live, &mut ingest, &mut store, &mut history).unwrap();
            f.finish(&mut store, &mut live).unwrap();
            assert_eq!(f.progress(), 1.0);
            fin = Some(f);
            // Added and abandoned (the window's store replaced): derived from the next batch on.
            let def = Derivation::parse(&format!("ab={text}")).unwrap();
            let (a, _) = CatchUp::start(&def, &mut live, &mut ingest, &mut store, &mut history).unwrap();
            a.abandon(&mut live);
        }
        file(b, &mut live, &mut ingest, &mut store);
    }
    let at = handed_over.expect("caught up before the run's end");
    assert!(at > 100 && at < 5_000, "handed over after {at} batches");
    assert!(fin.is_some());
    ingest.run_stopped(&mut store, 1);

    let want = values_of(&store, &ingest, "live");
    assert!(want.len() > 19_000, "{}", want.len());
    assert!(want.iter().filter(|v| v.1.is_nan()).count() < 100, "gaps only where the rules put them");
    same(&values_of(&store, &ingest, "later"), &want, "later");
    same(&values_of(&store, &ingest, "fin"), &want, "fin");
    let ab = values_of(&store, &ingest, "ab");
    let first = after[6_000].timestamps[0];
    assert!(!ab.is_empty() && ab[0].0 == first, "abandoned: from the next batch on, {:?}", ab.first());
    // Kept for a session saved.
    assert!(history.runs.iter().any(|r| r.derived.iter().any(|d| d.starts_with("later="))));
}
