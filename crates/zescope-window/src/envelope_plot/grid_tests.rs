//! Kept columns against a fresh grid query, frame after frame.

use super::grid::KeptColumns;
use super::*;
use zescope_store::{EnvelopeColumn, SeriesDesc, SeriesKind, StreamDesc, StreamId};

const MS: i64 = 1_000_000;

/// 4 gauges (scanned in step) and 2 cumulative counters (drawn as rates) with NaN, infinities
/// and signed zeros, in a store with `cap` bytes.
fn store(cap: usize) -> (Store, StreamId, Vec<SeriesId>) {
    let kinds = [SeriesKind::Gauge; 4].into_iter().chain([SeriesKind::Cumulative { wrap: None }; 2]);
    let series =
        kinds.enumerate().map(|(k, kind)| SeriesDesc { name: format!("s{k}"), unit: "u".into(), kind }).collect();
    let mut store = Store::new(cap);
    let id = store.begin_stream(StreamDesc { name: "t".into(), series });
    let ids = (0..6).map(|k| store.series_id(id, k).unwrap()).collect();
    (store, id, ids)
}

fn value(i: i64, s: usize, total: &mut [f64; 2]) -> f64 {
    if s >= 4 {
        total[s - 4] += ((i * 7 + s as i64) % 13) as f64;
        return total[s - 4];
    }
    match (i + s as i64 * 31) % 211 {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => -0.0,
        3 => 0.0,
        r => ((i as f64) * 1e-3 * (s + 1) as f64).sin() * r as f64,
    }
}

/// What a frame of the test does to the view.
struct View {
    span: i64,
    columns: usize,
    limit: Option<i64>,
    /// A paused view's range, fixed.
    fixed: Option<(i64, i64)>,
}

/// Frames of appends; after each, the kept columns equal a fresh grid query of the same span.
/// Returns the frames served from kept columns plus those the caller draws afresh (the first
/// of a view).
fn run(cap: usize, frames: usize, mut view: impl FnMut(usize, i64, &mut View)) -> (u64, Store, StreamId) {
    let (mut store, id, ids) = store(cap);
    let mut kept = KeptColumns::default();
    let mut envs = vec![Envelope::new(); ids.len()];
    let (mut outs, mut cells) = (vec![Envelope::new(); ids.len()], vec![Vec::new(); ids.len()]);
    let mut total = [0.0; 2];
    let (mut i, mut t) = (0i64, 0i64);
    let mut fresh = 0;
    let mut v = View { span: 2_000 * MS, columns: 700, limit: None, fixed: None };
    for frame in 0..frames {
        // 1 to 9 samples a frame, a gap now and then.
        if frame % 397 == 396 {
            store.mark_gap(id);
            t += 50 * MS;
        }
        let k = 1 + (frame * 7 % 9);
        let mut ts = Vec::new();
        let mut vals = Vec::new();
        for _ in 0..k {
            t += MS + (i % 3) * 100_000;
            i += 1;
            ts.push(t);
            vals.extend((0..ids.len()).map(|s| value(i, s, &mut total)));
        }
        store.append(id, &ts, &vals).unwrap();
        view(frame, t, &mut v);
        let (t0, t1) = v.fixed.unwrap_or((t - v.span, t));
        if !kept.fill(&store, &ids, (t0, t1), v.columns, v.limit, &mut envs) {
            // The first frame of a view: the caller draws it from a fresh query.
            fresh += 1;
            continue;
        }
        let span = kept.span.expect("a span was queried");
        store.grid_envelopes(&ids, span, (span.t0, span.t1), i64::MIN..i64::MAX, &mut outs, &mut cells);
        for (s, (got, want)) in envs.iter().zip(&outs).enumerate() {
            assert!(got.is_exact());
            assert_eq!(got.samples_per_bucket(), want.samples_per_bucket(), "frame {frame} series {s}");
            let (g, w): (Vec<_>, Vec<_>) = (
                got.columns().iter().map(EnvelopeColumn::bits).collect(),
                want.columns().iter().map(EnvelopeColumn::bits).collect(),
            );
            // Once the history fills the view, most pixel columns hold samples.
            assert!(t0 <= 0 || g.len() > v.columns / 4, "frame {frame}: {} columns", g.len());
            if g != w {
                let at = g.iter().zip(&w).position(|(a, b)| a != b).unwrap_or(g.len().min(w.len()));
                panic!("frame {frame} series {s}: column {at} of {}/{} differs", g.len(), w.len());
            }
        }
    }
    assert!(kept.reused_frames > 0, "no frame reused columns");
    (kept.reused_frames + fresh, store, id)
}

#[test]
fn kept_columns_equal_a_fresh_query_over_live_frames() {
    let frames = 2_400;
    let (reused, store, id) = run(64 << 20, frames, |frame, t, v| match frame {
        // A resize, a zoom in, back out; a pause (with a time limit) that is panned, then live.
        800 => v.columns = 650,
        1_100 => v.span = 700 * MS,
        1_300 => v.span = 2_000 * MS,
        1_600 => {
            v.limit = Some(t);
            v.fixed = Some((t - v.span, t));
        }
        1_700..1_800 => {
            let (a, b) = v.fixed.unwrap();
            v.fixed = Some((a + MS / 3, b + MS / 3));
        }
        1_900 => {
            v.limit = None;
            v.fixed = None;
        }
        _ => {}
    });
    assert!(store.retention(id).unwrap().coarsened_before().is_none());
    // All but the frames that changed the view (two each) reused, the pause's included.
    assert!(reused as usize + 20 > frames, "{reused} of {frames} frames reused columns or were fresh");
}

#[test]
fn kept_columns_equal_a_fresh_query_while_the_cap_coarsens_history() {
    // A cap that holds ~20k samples: the oldest history is coarsened while the view follows
    // the newest; coarsening changes the history epoch, so those frames recompute.
    let frames = 6_000;
    let (reused, store, id) = run(400 << 10, frames, |frame, _, v| {
        if frame == 0 {
            v.span = 3_000 * MS;
        }
    });
    assert!(store.retention(id).unwrap().coarsened_before().is_some(), "the cap coarsened history");
    assert!(reused > 0, "frames between coarsening steps reused columns");
}
