//! Checks of store answers against the brute-force [`Model`].

use super::{Model, close};
use zescope_store::{Envelope, SeriesId, Store, StreamId};

/// Where full resolution starts (model index) and how many samples were evicted.
fn regions(store: &Store, id: StreamId, model: &Model) -> (usize, usize) {
    let ret = store.retention(id).unwrap();
    let raw_start = ret
        .spans
        .iter()
        .find(|s| s.level == 0)
        .map_or(model.ts.len(), |s| model.ts.partition_point(|&t| t < s.t_first));
    (raw_start, ret.evicted_samples as usize)
}

fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
        (None, None) => true,
        _ => false,
    }
}

pub fn check_envelope(store: &Store, sid: SeriesId, model: &Model, t0: i64, t1: i64, n: usize, env: &mut Envelope) {
    let s = sid.index();
    let (raw_start, evicted) = regions(store, sid.stream(), model);
    store.envelope(sid, t0, t1, n, env);
    let cols = env.columns();
    let w = ((t1 - t0) as f64 / n as f64).max(1.0);
    let split = w.ceil() as i64;
    let mut covered: Option<(usize, usize)> = None;
    let mut gaps_seen = 0;
    for (k, c) in cols.iter().enumerate() {
        let r = model.range(c.t_start, c.t_end);
        assert!(!r.is_empty(), "column {k} covers no sample: {c:?}");
        assert_eq!(model.ts[r.start], c.t_start, "column {k} starts between samples");
        assert_eq!(model.ts[r.end - 1], c.t_end, "column {k} ends between samples");
        assert!(r.start >= evicted, "column {k} shows evicted samples");
        if let Some((_, end)) = covered {
            assert_eq!(r.start, end, "column {k} does not follow the previous column");
        }
        covered = Some((covered.map_or(r.start, |c| c.0), r.end));
        let want = model.summary(s, r.clone());
        assert_eq!(c.samples, want.samples, "column {k} sample count");
        assert_eq!(c.count, want.count, "column {k} finite count");
        assert_eq!(c.non_finite, want.non_finite, "column {k} non-finite count");
        if want.count > 0 {
            assert_eq!((c.min, c.max), (want.min, want.max), "column {k} min/max");
            assert!(close(c.mean, want.sum / want.count as f64), "column {k} mean");
        } else {
            assert!(c.min.is_nan() && c.max.is_nan() && c.mean.is_nan());
        }
        assert_eq!(c.break_before, model.gap[r.start], "column {k} break_before");
        gaps_seen += (r.start + 1..r.end).filter(|&i| model.gap[i]).count() + usize::from(c.break_before);
        if r.start >= raw_start {
            for i in r.start + 1..r.end {
                assert!(
                    !model.gap[i] || model.ts[i] - model.ts[i - 1] < split,
                    "column {k} hides a {} ns gap (column width {w})",
                    model.ts[i] - model.ts[i - 1]
                );
            }
            if env.samples_per_bucket() == 1 && c.t_start >= t0 && c.t_end <= t1 {
                assert!(((c.t_end - c.t_start) as f64) < w, "raw column {k} is wider than a pixel");
            }
        }
    }
    let want = model.range(t0, t1);
    let need = (want.start.saturating_sub(1).max(evicted), (want.end + 1).min(model.ts.len()));
    if need.0 < need.1 {
        let (a, b) = covered.expect("samples in range but no columns");
        assert!(a <= need.0 && b >= need.1, "columns cover {a}..{b}, need {need:?}");
    }
    assert!(cols.len() <= n + 4 + gaps_seen, "{} columns for {n} pixels", cols.len());
}

pub fn check_stats(store: &Store, sid: SeriesId, model: &Model, t0: i64, t1: i64) {
    let (_, evicted) = regions(store, sid.stream(), model);
    let st = store.stats(sid, t0, t1);
    let mut want = model.range(t0, t1);
    want.start = want.start.max(evicted);
    let r = if st.exact || st.samples == 0 {
        want.clone()
    } else {
        let r = model.range(st.t_first, st.t_last);
        assert!(r.start <= want.start && r.end >= want.end, "inexact stats must cover the range");
        r
    };
    if r.start >= r.end {
        assert_eq!(st.samples, 0);
        return;
    }
    let m = model.summary(sid.index(), r.clone());
    assert_eq!((st.samples, st.count, st.non_finite), (m.samples, m.count, m.non_finite));
    assert_eq!((st.t_first, st.t_last), (model.ts[r.start], model.ts[r.end - 1]));
    if m.count > 0 {
        assert_eq!((st.min, st.max), (m.min, m.max));
        assert!(close(st.mean, m.mean()), "mean {} vs {}", st.mean, m.mean());
    }
    assert!(same(st.last, m.last), "last {:?} vs {:?}", st.last, m.last);
}

pub fn check_nearest(store: &Store, sid: SeriesId, model: &Model, t: i64) {
    let (raw_start, _) = regions(store, sid.stream(), model);
    let s = sid.index();
    match store.nearest(sid, t) {
        Some(x) => {
            let i = model.ts.partition_point(|&u| u < x.t);
            assert!(i >= raw_start && model.ts[i] == x.t, "nearest is not a stored sample");
            assert!(same(x.value, model.value(i, s)), "nearest value");
            let d = (x.t - t).abs();
            let better = model.ts[raw_start..].iter().any(|&u| (u - t).abs() < d);
            assert!(!better, "a stored sample is nearer to {t} than {}", x.t);
            let raw = store.nearest_raw(sid, t).unwrap();
            assert_eq!(raw.t, x.t);
            assert!(same(raw.value, Some(model.raw[i][s])));
        }
        None => {
            let in_coarse = raw_start > 0 && t < model.ts.get(raw_start).copied().unwrap_or(i64::MAX);
            assert!(raw_start == model.ts.len() || in_coarse, "no nearest sample to {t}");
        }
    }
}

/// `Store::draw_envelopes` lays out the columns `exact` (a `Store::envelope` of `sid`) holds
/// and encloses each one's min and max, wider by at most an f32 rounding of the series' range.
/// Returns whether the drawing bands were read (else the columns must be the exact ones).
pub fn check_draw_envelope(store: &Store, sid: SeriesId, exact: &Envelope) -> bool {
    let (t0, t1, columns) = exact.request();
    let mut outs = [Envelope::new()];
    store.draw_envelopes(&[sid], t0, t1, columns, &mut outs);
    let drawn = outs[0].columns();
    assert_eq!(drawn.len(), exact.columns().len());
    // The bands' offsets are from a value of the same series, anywhere in the history.
    let all = store.stats(sid, i64::MIN, i64::MAX);
    let slack = 1e-6 * if all.count > 0 { (all.max - all.min).max(1.0) } else { 1.0 };
    for (d, e) in drawn.iter().zip(exact.columns()) {
        assert_eq!((d.t_start, d.t_end, d.samples, d.break_before), (e.t_start, e.t_end, e.samples, e.break_before));
        assert_eq!(d.count > 0, e.count > 0, "a drawn column holds a value exactly when the exact one does");
        if e.count > 0 {
            assert!(d.min <= e.min && d.max >= e.max, "[{}, {}] does not enclose [{}, {}]", d.min, d.max, e.min, e.max);
            assert!(
                e.min - d.min <= slack && d.max - e.max <= slack,
                "[{}, {}] vs [{}, {}]",
                d.min,
                d.max,
                e.min,
                e.max
            );
        }
        if outs[0].is_exact() {
            assert_eq!((d.min.to_bits(), d.max.to_bits(), d.count), (e.min.to_bits(), e.max.to_bits(), e.count));
        }
    }
    !outs[0].is_exact()
}
