//! Property test: the phase table's numbers (mean, min, max, totals, energy, mean power) equal
//! a direct computation over the samples fed to the store, on random data with NaNs, gaps,
//! wrapping and resetting cumulative counters, busy time (a share in %, its total the time
//! busy), a state (no mean, no total: an average of ids is no id), a counter sampled in two
//! runs, and random phases (some reaching past the data, some empty).

use std::collections::BTreeMap;

use proptest::prelude::*;
use zescope_model::view::phases::{PhaseRange, PhaseRow, phase_table};
use zescope_model::view::{SeriesEntry, SeriesKey};
use zescope_sampler::SeriesInfo;
use zescope_sampler::layout::Kind;
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};

/// The series of every run: (metric, unit, kind as the store keeps it).
const SERIES: [(&str, &str, SeriesKind); 6] = [
    ("power", "W", SeriesKind::Gauge),
    ("energy", "mJ", SeriesKind::Cumulative { wrap: Some(5000.0) }),
    ("bytes", "B", SeriesKind::Cumulative { wrap: None }),
    ("temp", "C", SeriesKind::Gauge),
    ("busy", "us", SeriesKind::BusyTime { wrap: Some(1_000_000.0), unit_s: 1e-6 }),
    ("context", "", SeriesKind::State),
];

/// One run as fed: timestamps, rows, and which samples a gap separates from the previous one.
#[derive(Clone, Debug)]
struct Run {
    ts: Vec<i64>,
    rows: Vec<[f64; 6]>,
    gap: Vec<bool>,
}

fn run(start: i64) -> impl Strategy<Value = Run> {
    prop::collection::vec((1i64..3_000_000, 0u8..20, any::<u32>(), prop::bool::weighted(0.03)), 1..900).prop_map(
        move |steps| {
            let (mut t, mut e, mut b, mut busy) = (start, 0.0, 0.0, 0.0);
            let mut out = Run { ts: vec![], rows: vec![], gap: vec![] };
            for (dt, pick, r, gap) in steps {
                t += dt;
                e = (e + (r % 700) as f64) % 5000.0;
                b = if pick == 0 { (r % 50) as f64 } else { b + (r % 4096) as f64 };
                let nan = pick == 1;
                let power = if nan { f64::NAN } else { (r % 1000) as f64 / 7.0 };
                let bytes = if pick == 2 { f64::NAN } else { b };
                out.ts.push(t);
                // Busy µs: at most the time elapsed (a share up to 100 %), wrapping at 10^6.
                busy = (busy + ((r >> 8) as i64 % (dt / 1000 + 1)) as f64) % 1_000_000.0;
                let context = ((r >> 4) % 3 * 16) as f64;
                out.rows.push([power, e, bytes, -((r % 90) as f64), busy, context]);
                out.gap.push(gap);
            }
            out
        },
    )
}

fn info(k: usize) -> SeriesInfo {
    let (name, unit, kind) = SERIES[k];
    SeriesInfo {
        name: name.into(),
        description: String::new(),
        unit: unit.into(),
        kind: match kind {
            SeriesKind::Gauge => Kind::Gauge,
            SeriesKind::Cumulative { .. } => Kind::Cumulative,
            SeriesKind::BusyTime { .. } => Kind::Busy,
            SeriesKind::State => Kind::State,
        },
        wrap: kind.rate_wrap().flatten(),
    }
}

/// What the table must say for series `k` over `t0..=t1`, from the samples as fed.
struct Direct {
    values: Vec<f64>,
    total: f64,
    /// Samples in the range, with a value or not.
    raw: usize,
    /// Seconds from each run's first sample in the range to its last, summed over the runs.
    measured_s: f64,
    /// Of a running total's rates: Σ rate × interval and Σ interval (s), its mean's weights.
    area: f64,
    dur: f64,
}

fn direct(runs: &[Run], k: usize, t0: i64, t1: i64) -> Direct {
    let mut d = Direct { values: vec![], total: 0.0, raw: 0, measured_s: 0.0, area: 0.0, dur: 0.0 };
    let kind = SERIES[k].2;
    let wrap = kind.rate_wrap();
    for r in runs {
        let inside: Vec<i64> = r.ts.iter().copied().filter(|t| (t0..=t1).contains(t)).collect();
        if let (Some(first), Some(last)) = (inside.first(), inside.last()) {
            d.measured_s += (last - first) as f64 / 1e9;
        }
        for i in 0..r.ts.len() {
            if r.ts[i] < t0 || r.ts[i] > t1 {
                continue;
            }
            d.raw += 1;
            let v = r.rows[i][k];
            match wrap {
                None => d.values.push(v),
                Some(w) => {
                    if i == 0 || r.gap[i] {
                        continue;
                    }
                    // Written out, not the store's functions, so a fault in them shows: the
                    // increase (across a wrap, none across a reset) per second, a busy time as
                    // its share of the elapsed time in % clamped to 0–100.
                    let prev = r.rows[i - 1][k];
                    let mut inc = v - prev;
                    if inc < 0.0 {
                        match w {
                            Some(m) if inc + m >= 0.0 => inc += m,
                            _ => continue,
                        }
                    }
                    if !inc.is_finite() {
                        continue;
                    }
                    let secs = (r.ts[i] - r.ts[i - 1]) as f64 * 1e-9;
                    let per_s = inc / secs;
                    let rate = match kind {
                        SeriesKind::BusyTime { unit_s, .. } => (per_s * unit_s * 100.0).clamp(0.0, 100.0),
                        _ => per_s,
                    };
                    d.values.push(rate);
                    if rate.is_finite() {
                        // A rate is the mean over its interval: the mean of rates weighs each
                        // by its interval.
                        d.area += rate * secs;
                        d.dur += secs;
                    }
                    d.total += inc;
                }
            }
        }
    }
    d.values.retain(|v| v.is_finite());
    d
}

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// A running total's total over a phase. Where the phase counted nothing (no increase: its only
/// samples are a run's first, or have no value, or follow one with none) the table may leave it
/// blank: the store keeps no running total for a sample without a value, so whether such a phase
/// "has a sample" is the store's to say; blank and 0 both say nothing was counted.
fn total_is(total: Option<f64>, d: &Direct) -> bool {
    match total {
        Some(t) => close(t, d.total),
        None => d.values.is_empty() && d.total == 0.0,
    }
}

fn check(row: &PhaseRow, d: &Direct, k: usize) {
    let n = d.values.len();
    assert_eq!(row.samples, n as u64, "{}: samples", row.series);
    let state = matches!(SERIES[k].2, SeriesKind::State);
    let mean = match (n, state) {
        (0, _) | (_, true) => f64::NAN,
        _ if d.dur > 0.0 => d.area / d.dur,
        _ => d.values.iter().sum::<f64>() / n as f64,
    };
    let min = d.values.iter().copied().reduce(f64::min).unwrap_or(f64::NAN);
    let max = d.values.iter().copied().reduce(f64::max).unwrap_or(f64::NAN);
    assert!(close(row.mean, mean), "{}: mean {} vs {mean}", row.series, row.mean);
    assert!(close(row.min, min) && close(row.max, max), "{}: min/max {row:?} vs {min} {max}", row.series);
    assert!(row.exact);
    assert!(close(row.measured_s, d.measured_s), "{}: measured {} s vs {} s", row.series, row.measured_s, d.measured_s);
    if d.raw == 0 {
        // Nothing sampled in the phase: no total and no energy (blank, not 0).
        assert_eq!((row.total, row.energy_j, row.power_w), (None, None, None), "{}: an empty phase", row.series);
        return;
    }
    match k {
        0 => {
            assert_eq!(row.total, None);
            if n == 0 {
                assert_eq!((row.energy_j, row.power_w), (None, None));
            } else {
                assert!(close(row.power_w.unwrap(), mean), "mean power of a W gauge is its mean");
                // Over the time measured, never over time without samples (a phase reaching
                // past the data, the time between two runs).
                match row.energy_j {
                    Some(e) => assert!(close(e, mean * d.measured_s), "{e} J vs {mean} W over {} s", d.measured_s),
                    None => assert_eq!(d.measured_s, 0.0, "no energy only where no time was measured"),
                }
            }
        }
        1 => {
            assert!(total_is(row.total, d), "energy total {:?} vs {}", row.total, d.total);
            if row.total.is_none() {
                assert_eq!((row.energy_j, row.power_w), (None, None), "nothing counted, no energy");
                return;
            }
            assert!(close(row.energy_j.unwrap(), d.total * 1e-3), "mJ counter in J");
            match row.power_w {
                Some(w) => assert!(close(w, d.total * 1e-3 / d.measured_s), "{w} W over {} s", d.measured_s),
                None => assert_eq!(d.measured_s, 0.0),
            }
        }
        2 => {
            assert!(total_is(row.total, d), "bytes total {:?} vs {}", row.total, d.total);
            assert_eq!((row.energy_j, row.power_w), (None, None), "bytes are not energy");
        }
        4 => {
            assert!(total_is(row.total, d), "busy µs total {:?} vs {}", row.total, d.total);
            assert_eq!(row.total_unit, "us", "the time busy, in the counter's unit");
            assert_eq!(row.unit, "%");
            assert!(d.values.iter().all(|v| (0.0..=100.0 + 1e-9).contains(v)), "shares in %: {:?}", d.values);
            assert_eq!((row.energy_j, row.power_w), (None, None));
        }
        5 => {
            assert!(row.mean.is_nan(), "a state has no mean: {row:?}");
            assert_eq!((row.total, row.energy_j, row.power_w), (None, None, None), "nor a total");
            assert_eq!(row.total_unit, "");
        }
        _ => assert_eq!((row.total, row.energy_j, row.power_w), (None, None, None)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn phase_table_equals_a_direct_computation(
        a in run(1_000_000_000),
        b in prop::option::of(run(10_000_000_000)),
        phases in prop::collection::vec((-0.2f64..1.2, -0.2f64..1.2), 1..5),
    ) {
        let runs: Vec<Run> = std::iter::once(a).chain(b).collect();
        let mut store = Store::new(usize::MAX);
        let mut ids = vec![Vec::new(); SERIES.len()];
        for r in &runs {
            let desc = StreamDesc {
                name: "run".into(),
                series: SERIES
                    .iter()
                    .map(|(n, u, kind)| SeriesDesc { name: (*n).into(), unit: (*u).into(), kind: *kind })
                    .collect(),
            };
            let s = store.begin_stream(desc);
            for i in 0..r.ts.len() {
                if r.gap[i] {
                    store.mark_gap(s);
                }
                store.append(s, &r.ts[i..=i], &r.rows[i]).unwrap();
            }
            store.end_stream(s);
            for (k, v) in ids.iter_mut().enumerate() {
                v.push(store.series_id(s, k).unwrap());
            }
        }
        let series: BTreeMap<SeriesKey, SeriesEntry> = (0..SERIES.len())
            .map(|k| {
                let key = SeriesKey { device: "d".into(), group: "g".into(), metric: SERIES[k].0.into() };
                (key, SeriesEntry { info: info(k), ids: ids[k].clone() })
            })
            .collect();
        let (lo, hi) = store.total_time_range().unwrap();
        let at = |f: f64| lo + ((hi - lo) as f64 * f) as i64;
        let ranges: Vec<PhaseRange> =
            phases.iter().enumerate().map(|(i, &(x, y))| PhaseRange::new(format!("p{i}"), at(x), at(y))).collect();
        let table = phase_table(&store, &series, &ranges);
        prop_assert_eq!(table.rows.len(), ranges.len() * SERIES.len());
        for r in &ranges {
            for (key, entry) in &series {
                let k = SERIES.iter().position(|s| s.0 == key.metric).unwrap();
                let row = table.rows.iter().find(|x| x.phase == r.name && x.series == key.label()).unwrap();
                prop_assert!(close(row.duration_s, (r.end_ns - r.start_ns) as f64 * 1e-9));
                prop_assert_eq!(&row.unit, &entry.plotted_unit());
                check(row, &direct(&runs, k, r.start_ns, r.end_ns), k);
            }
        }
    }
}

/// Telemetry's "Package energy" is a gauge of the energy since its run started (it starts again
/// at 0 with each run): over a phase, what was spent is its last value less its first within each
/// run, summed over the runs; it has no mean; a phase with no sample has no energy and no total.
#[test]
fn energy_since_the_run_started_is_last_less_first_per_run_summed() {
    let mut store = Store::new(usize::MAX);
    let mut ids = Vec::new();
    let desc = || StreamDesc {
        name: "telemetry".into(),
        series: vec![
            SeriesDesc { name: "Package energy".into(), unit: "J".into(), kind: SeriesKind::Gauge },
            SeriesDesc {
                name: "busy".into(),
                unit: "us".into(),
                kind: SeriesKind::BusyTime { wrap: None, unit_s: 1e-6 },
            },
        ],
    };
    // Run 1: 0..10 s, 100 J/s from 0; run 2: 20..30 s, 50 J/s from 0 again.
    for (start, per_s) in [(0i64, 100.0), (20, 50.0)] {
        let s = store.begin_stream(desc());
        for i in 0..=10i64 {
            let t = (start + i) * 1_000_000_000;
            store.append(s, &[t], &[per_s * i as f64, 1e5 * i as f64]).unwrap();
        }
        store.end_stream(s);
        ids.push(s);
    }
    let entry = |k: usize, unit: &str, kind: Kind| SeriesEntry {
        info: SeriesInfo { name: String::new(), description: String::new(), unit: unit.into(), kind, wrap: None },
        ids: ids.iter().map(|&s| store.series_id(s, k).unwrap()).collect(),
    };
    let key = |m: &str| SeriesKey { device: "d".into(), group: "Telemetry".into(), metric: m.into() };
    let series: BTreeMap<SeriesKey, SeriesEntry> =
        [(key("Package energy"), entry(0, "J", Kind::Gauge)), (key("busy"), entry(1, "us", Kind::Busy))]
            .into_iter()
            .collect();
    let s = |x: i64| x * 1_000_000_000;
    let ranges = [
        PhaseRange::new("across", s(5), s(25)),
        PhaseRange::new("within", s(2), s(8)),
        PhaseRange::new("between runs", s(12), s(18)),
    ];
    let table = phase_table(&store, &series, &ranges);
    let row = |phase: &str, m: &str| table.rows.iter().find(|r| r.phase == phase && r.key.metric == m).unwrap();
    let across = row("across", "Package energy");
    // Run 1 from 500 J (5 s) to 1000 J (10 s), run 2 from 0 J (20 s) to 250 J (25 s): 750 J in
    // the 10 s measured of the phase's 20 (nothing was measured between the runs).
    assert_eq!(across.energy_j, Some(750.0), "{across:?}");
    assert_eq!(across.total, Some(750.0));
    assert_eq!(across.total_unit, "J");
    assert_eq!((across.duration_s, across.measured_s), (20.0, 10.0));
    assert_eq!(across.power_w, Some(75.0), "over the time measured, not 37.5 W over the phase");
    assert!(across.mean.is_nan(), "no mean of energy since a start: {across:?}");
    assert_eq!(row("within", "Package energy").energy_j, Some(600.0));
    let empty = row("between runs", "Package energy");
    assert_eq!((empty.total, empty.energy_j, empty.power_w), (None, None, None), "{empty:?}");
    let busy = row("between runs", "busy");
    assert_eq!(busy.total, None, "no samples: blank, not 0 s ({busy:?})");
    assert!(row("within", "busy").total.is_some());
}
