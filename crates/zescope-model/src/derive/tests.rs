//! Each function against a reference computed independently: closed forms of the signals fed,
//! or a brute-force recomputation over the whole history at every tick.

use super::*;
use zescope_sampler::layout::Kind;
use zescope_sampler::{DevicePath, ReadPath, RunConfig, RunInfo, SampleBatch, SeriesInfo, StreamInfo};

const MS: i64 = 1_000_000;

fn series(name: &str, unit: &str, kind: Kind, wrap: Option<f64>) -> SeriesInfo {
    SeriesInfo { name: name.into(), description: String::new(), unit: unit.into(), kind, wrap }
}

/// A run of two streams: `A` (x: W gauge, c: B cumulative wrapping at 1000, b: ns busy) and
/// `S` (y: % gauge). Run 1.
pub(super) fn info() -> RunInfo {
    let stream = |index: usize, group: &str, series: Vec<SeriesInfo>| StreamInfo {
        index,
        target: 0,
        device: "dev".into(),
        group: group.into(),
        layout: "l".into(),
        series,
        read_path: ReadPath::Mapped,
    };
    RunInfo {
        run: 1,
        config: RunConfig::single(
            DevicePath { driver: 0, device: 0, sub_device: None },
            vec!["A".into(), "S".into()],
            std::time::Duration::from_millis(1),
        ),
        devices: vec!["dev".into()],
        simulated: true,
        streams: vec![
            stream(
                0,
                "A",
                vec![
                    series("x", "W", Kind::Gauge, None),
                    series("c", "B", Kind::Cumulative, Some(1000.0)),
                    series("b", "ns", Kind::Busy, None),
                ],
            ),
            stream(1, "S", vec![series("y", "%", Kind::Gauge, None)]),
        ],
        imports: 2,
        notices: Vec::new(),
    }
}

/// The deriver of `defs` bound to [`info`], and the run as passed on.
fn bound(defs: &[&str]) -> (Deriver, RunInfo) {
    let defs = defs.iter().map(|d| Derivation::parse(d).unwrap_or_else(|e| panic!("{d}: {e}"))).collect();
    let mut d = Deriver::new(defs);
    let mut run = info();
    d.run_started(&mut run).unwrap();
    (d, run)
}

/// Rows of stream A at `t` (ms) with x, c, b; the derived values, one row per sample.
fn feed_a(d: &mut Deriver, rows: &[(i64, [f64; 3])], gap_before: bool) -> Vec<Vec<f64>> {
    let b = SampleBatch {
        run: 1,
        stream: 0,
        timestamps: rows.iter().map(|r| r.0 * MS).collect(),
        values: rows.iter().flat_map(|r| r.1).collect(),
        gap_before,
    };
    let mut outs = d.samples(&b);
    assert_eq!(outs.len(), 1, "stream A drives one derived stream");
    let out = outs.remove(0);
    assert_eq!(out.timestamps, b.timestamps);
    let w = out.values.len() / rows.len();
    out.values.chunks(w).map(<[f64]>::to_vec).collect()
}

/// The derived values of a single derivation over x = `xs` (1 ms apart, from 1 ms).
fn over_x(def: &str, xs: &[f64]) -> Vec<f64> {
    let (mut d, _) = bound(&[def]);
    let rows: Vec<(i64, [f64; 3])> = xs.iter().enumerate().map(|(i, &x)| (i as i64 + 1, [x, 0.0, 0.0])).collect();
    feed_a(&mut d, &rows, false).into_iter().map(|r| r[0]).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * (1.0 + b.abs())
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(close(*g, *w), "{what}: at {i} got {g}, want {w}\n got {got:?}\nwant {want:?}");
    }
}

#[test]
fn the_run_gains_a_derived_stream_with_units_and_definitions() {
    let (_, run) =
        bound(&["bytes_per_s=rate(A/c)", "energy=integral(A/x)", "share[ratio]=S/y / A/x", "ratio=S/y / 100"]);
    assert_eq!(run.streams.len(), 4, "one derived stream per driving stream");
    let a = &run.streams[2];
    assert_eq!((a.index, a.group.as_str(), a.device.as_str()), (2, GROUP, "dev"));
    let units: Vec<(&str, &str)> = a.series.iter().map(|s| (s.name.as_str(), s.unit.as_str())).collect();
    assert_eq!(units, [("bytes_per_s", "B/s"), ("energy", "J")]);
    let s = &run.streams[3];
    assert_eq!(s.series[0].unit, "ratio", "named by the user");
    assert_eq!(s.series[1].unit, "%", "% / number");
    assert_eq!(s.series[0].description, "derived: share[ratio]=S/y / A/x");
    assert_eq!(Derivation::from_description(&s.series[0].description).unwrap().name, "share");
}

#[test]
fn rate_and_delta_of_a_running_total_wrap() {
    // c grows 37 B per ms and wraps at 1000: 950, 987, 24 (= 1024 - 1000), 61, …
    let (mut d, _) = bound(&["r=rate(A/c)", "d=delta(A/c)", "plotted=A/c"]);
    let rows: Vec<(i64, [f64; 3])> = (0..60).map(|i| (i + 1, [0.0, (950.0 + 37.0 * i as f64) % 1000.0, 0.0])).collect();
    let out = feed_a(&mut d, &rows, false);
    assert!(out[0].iter().all(|v| v.is_nan()), "the first sample has nothing to move from: {:?}", out[0]);
    for row in &out[1..] {
        assert_close(row, &[37_000.0, 37.0, 37_000.0], "37 B per ms, across every wrap");
    }
    // Without a modulus, a total that goes down was reset: a gap, not a negative rate.
    let (mut d, _) = bound(&["r=rate(A/b)"]);
    let out = feed_a(&mut d, &[(1, [0.0, 0.0, 5e5]), (2, [0.0, 0.0, 1e6]), (3, [0.0, 0.0, 1e5])], false);
    assert_close(&out.concat(), &[f64::NAN, 5e8, f64::NAN], "ns busy per s; a reset is a gap");
}

#[test]
fn integral_and_cumsum_match_their_closed_forms() {
    // x = 2 + 3 t (t in s): the integral from the first sample is 2 t + 1.5 t² (trapezoids are
    // exact on a line); cumsum of 1..n is n (n + 1) / 2.
    let xs: Vec<f64> = (1..=2000).map(|i| 2.0 + 3.0 * (i as f64 * 1e-3)).collect();
    let got = over_x("e=integral(A/x)", &xs);
    let want: Vec<f64> = (1..=2000)
        .map(|i| {
            let (t, t0) = (i as f64 * 1e-3, 1e-3);
            (2.0 * t + 1.5 * t * t) - (2.0 * t0 + 1.5 * t0 * t0)
        })
        .collect();
    assert_close(&got, &want, "integral of a line");
    let ones: Vec<f64> = (1..=100).map(f64::from).collect();
    let want: Vec<f64> = (1..=100).map(|n| f64::from(n * (n + 1) / 2)).collect();
    assert_close(&over_x("s=cumsum(A/x)", &ones), &want, "cumsum");
}

#[test]
fn the_integral_of_a_running_total_is_its_increase() {
    // c grows by 37 + i mod 5 bytes at ticks 1 to 3 ms apart, wrapping at 1000. Read as its rate
    // (B/s), each value is the mean since the tick before: its integral is the bytes added since
    // the first sample, exactly, as is the integral of `rate`; trapezoids put half of each
    // change in rate into the next interval (and drop the first), a few bytes off.
    let (mut d, _) = bound(&["i=integral(A/c)", "r=integral(rate(A/c))", "g=integral(A/x)"]);
    let (mut t, mut c, mut added) = (1i64, 950.0f64, 0.0);
    let (mut rows, mut want) = (Vec::new(), Vec::new());
    for i in 0..500i64 {
        if i > 0 {
            let inc = (37 + i % 5) as f64;
            t += 1 + i % 3;
            c = (c + inc) % 1000.0;
            added += inc;
        }
        rows.push((t, [1.0, c, 0.0]));
        want.push(if i == 0 { [f64::NAN, f64::NAN] } else { [added, added] });
    }
    let out = feed_a(&mut d, &rows, false);
    let got: Vec<f64> = out.iter().flat_map(|r| [r[0], r[1]]).collect();
    assert_close(&got, &want.concat(), "the bytes added, across the wraps");
    // A gauge of 1 over the same irregular ticks: trapezoids, its seconds.
    let secs: Vec<f64> = rows.iter().map(|r| (r.0 - 1) as f64 * 1e-3).collect();
    assert_close(&out.iter().map(|r| r[2]).collect::<Vec<_>>(), &secs, "a gauge by trapezoids");
}

/// The brute-force window over `xs` (1 ms apart): the values of the last `ms` ms at each tick.
fn brute(xs: &[f64], ms: usize, f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    (0..xs.len()).map(|i| f(&xs[(i + 1).saturating_sub(ms)..=i])).collect()
}

#[test]
fn windows_match_a_recomputation_over_the_window() {
    // A deterministic, lumpy signal around a large offset (the variance keeps its digits).
    let xs: Vec<f64> = (0..3000u64).map(|i| 1.5e6 + ((i * 7919) % 101) as f64 * 0.25 - (i % 7) as f64).collect();
    let mean = |w: &[f64]| w.iter().sum::<f64>() / w.len() as f64;
    let var = |w: &[f64]| {
        let m = mean(w);
        w.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / w.len() as f64
    };
    let tol = |got: &[f64], want: &[f64], what: &str| {
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!((g - w).abs() <= 1e-6 * (1.0 + w.abs()), "{what} at {i}: {g} vs {w}");
        }
    };
    tol(&over_x("m=avg(A/x, 250ms)", &xs), &brute(&xs, 250, mean), "avg");
    tol(&over_x("m=stddev(A/x, 250ms)", &xs), &brute(&xs, 250, |w| var(w).sqrt()), "stddev");
    tol(
        &over_x("m=rms(A/x, 1s)", &xs),
        &brute(&xs, 1000, |w| mean(&w.iter().map(|v| v * v).collect::<Vec<_>>()).sqrt()),
        "rms",
    );
    let mx = |w: &[f64]| w.iter().copied().fold(f64::MIN, f64::max);
    let mn = |w: &[f64]| w.iter().copied().fold(f64::MAX, f64::min);
    assert_close(&over_x("m=max(A/x, 100ms)", &xs), &brute(&xs, 100, mx), "max");
    assert_close(&over_x("m=min(A/x, 3ms)", &xs), &brute(&xs, 3, mn), "min");
    // ±a alternating: RMS and standard deviation are a, the mean 0 over an even count.
    let alt: Vec<f64> = (0..100).map(|i| if i % 2 == 0 { 3.0 } else { -3.0 }).collect();
    assert_close(&over_x("m=rms(A/x, 10ms)", &alt)[20..], &[3.0; 80], "rms of ±3");
    let sd = over_x("m=stddev(A/x, 10ms)", &alt);
    assert_close(&sd[21..22], &[3.0], "stddev of ±3");
}

#[test]
fn arithmetic_functions_and_comparisons() {
    let xs = [-2.0, 0.0, 3.0, 7.0];
    assert_close(&over_x("v=abs(A/x) * 2 - 1", &xs), &[3.0, -1.0, 5.0, 13.0], "abs, *, -");
    assert_close(&over_x("v=clamp(A/x, 0, 5)", &xs), &[0.0, 0.0, 3.0, 5.0], "clamp");
    assert_close(&over_x("v=max(A/x, 1)", &xs), &[1.0, 1.0, 3.0, 7.0], "max of two");
    assert_close(&over_x("v=min(A/x, - 1)", &xs), &[-2.0, -1.0, -1.0, -1.0], "min of two");
    assert_close(&over_x("v=A/x >= 3", &xs), &[0.0, 0.0, 1.0, 1.0], "comparison");
    assert_close(&over_x("v=(A/x + 2) / 2", &xs), &[0.0, 1.0, 2.5, 4.5], "parentheses");
    assert_close(&over_x("v=delta(A/x)", &xs), &[f64::NAN, 2.0, 3.0, 4.0], "delta of a gauge");
    assert_close(&over_x("v=rate(A/x)", &xs), &[f64::NAN, 2000.0, 3000.0, 4000.0], "per second");
}

#[test]
fn gaps_are_gaps() {
    // Division by zero, an unreadable sample: a gap there and only there.
    assert_close(&over_x("v=10 / A/x", &[5.0, 0.0, 2.0]), &[2.0, f64::NAN, 5.0], "÷0");
    assert_close(&over_x("v=A/x * 2", &[1.0, f64::NAN, 2.0]), &[2.0, f64::NAN, 4.0], "NaN in");
    // rate across an unreadable sample: nothing to move from.
    assert_close(&over_x("v=rate(A/x)", &[1.0, f64::NAN, 2.0, 3.0]), &[f64::NAN, f64::NAN, f64::NAN, 1000.0], "rate");
    // A gap in the driving stream restarts rate and integral; cumsum goes on.
    let (mut d, _) = bound(&["r=rate(A/x)", "i=integral(A/x)", "s=cumsum(A/x)"]);
    feed_a(&mut d, &[(1, [1.0, 0.0, 0.0]), (2, [1.0, 0.0, 0.0])], false);
    let out = feed_a(&mut d, &[(10, [5.0, 0.0, 0.0]), (11, [5.0, 0.0, 0.0])], true);
    assert_close(&out[0], &[f64::NAN, 0.001, 7.0], "after the gap");
    assert_close(&out[1], &[0.0, 0.006, 12.0], "then on");
}

#[test]
fn series_on_another_clock_count_with_their_latest_sample() {
    // y (stream S) every 10 ms; the derived series ticks with A/x (every ms).
    let (mut d, run) = bound(&["v=A/x + S/y"]);
    assert_eq!(run.streams[2].layout, "derived from A");
    let s = |t: i64, y: f64| SampleBatch {
        run: 1,
        stream: 1,
        timestamps: vec![t * MS],
        values: vec![y],
        gap_before: false,
    };
    let rows = |from: i64| -> Vec<(i64, [f64; 3])> { (from..from + 5).map(|t| (t, [1.0, 0.0, 0.0])).collect() };
    assert_close(&feed_a(&mut d, &rows(1), false).concat(), &[f64::NAN; 5], "no y yet: a gap");
    assert!(d.samples(&s(3, 10.0)).is_empty(), "S drives nothing");
    assert!(d.samples(&s(8, 20.0)).is_empty());
    assert_close(
        &feed_a(&mut d, &rows(6), false).concat(),
        &[11.0, 11.0, 21.0, 21.0, 21.0],
        "the latest at or before each tick",
    );
    // Held at most HOLD_NS: a second later without y, a gap.
    let late: Vec<(i64, [f64; 3])> = vec![(1008, [1.0, 0.0, 0.0]), (1009, [1.0, 0.0, 0.0])];
    assert_close(&feed_a(&mut d, &late, false).concat(), &[21.0, f64::NAN], "held 1 s at most");
}

#[test]
fn names_that_do_not_exist_are_refused_with_what_they_could_mean() {
    let mut d = Deriver::new(vec![Derivation::parse("v=rate(A/cc) + S/yy").unwrap()]);
    let mut run = info();
    let e = d.run_started(&mut run).unwrap_err();
    assert!(e.contains("derived series 'v' names 'A/cc', no series of this run; it could mean A/c"), "{e}");
    assert!(e.contains("names 'S/yy'"), "{e}");
    assert_eq!(run.streams.len(), 2, "nothing added");
    let mut d = Deriver::new(vec![Derivation::parse("v=*/* * 2").unwrap()]);
    let e = d.run_started(&mut info()).unwrap_err();
    assert!(e.contains("which is 4 series (dev/A/x, dev/A/c, dev/A/b, dev/S/y); name one"), "{e}");
    let mut d = Deriver::new(vec![Derivation::parse("v=1").unwrap(), Derivation::parse("v=A/x").unwrap()]);
    let e = d.run_started(&mut info()).unwrap_err();
    assert!(e.contains("no samples to tick with") && e.contains("defined twice"), "{e}");
}

#[test]
fn definitions_parse_and_name_the_column() {
    let d = Derivation::parse(" bw [GB/s] = rate(A/c) / 1e9 ").unwrap();
    assert_eq!((d.name.as_str(), d.unit.as_deref(), d.text.as_str()), ("bw", Some("GB/s"), "rate(A/c) / 1e9"));
    assert_eq!(d.definition(), "bw[GB/s]=rate(A/c) / 1e9");
    assert_eq!(Derivation::parse(&d.definition()).unwrap().definition(), d.definition());
    assert_eq!(Derivation::parse("v=rate(A/c").unwrap_err().column, 11);
    assert_eq!(Derivation::parse("A/x * 2").unwrap_err().column, 1);
    assert!(Derivation::parse("a/b=1").unwrap_err().message.contains("no name for a series"));
    assert_eq!(Derivation::parse("v[W=A/x").unwrap_err().column, 4);
}

#[test]
fn a_derivation_added_mid_run_gets_a_stream_of_its_own() {
    let (mut d, mut run) = bound(&["a=A/x * 2"]);
    let s = d.add(Derivation::parse("b=A/x + 1").unwrap(), &mut run).unwrap();
    assert_eq!((s.index, run.streams.len()), (3, 4));
    assert!(d.add(Derivation::parse("b=A/x").unwrap(), &mut run).unwrap_err().contains("defined already"));
    let e = d.add(Derivation::parse("c=A/xx").unwrap(), &mut run).unwrap_err();
    assert!(e.contains("could mean A/x"), "{e}");
    let e = d.add(Derivation::parse("c=Derived/a * 2").unwrap(), &mut run).unwrap_err();
    assert!(
        e.contains("names 'Derived/a', itself a derived series: a derivation names sampled series only, so write its expression out instead (a = A/x * 2)"),
        "derived series are not fed back, and the refusal says why and what to write: {e}"
    );
    let b = SampleBatch { run: 1, stream: 0, timestamps: vec![MS], values: vec![3.0, 0.0, 0.0], gap_before: false };
    let out = d.samples(&b);
    let got: Vec<(usize, Vec<f64>)> = out.into_iter().map(|b| (b.stream, b.values)).collect();
    assert_eq!(got, [(2, vec![6.0]), (3, vec![4.0])]);
    assert_eq!(d.derivations().len(), 2, "the refused ones are not kept");
    // Defined together, before any is bound: the same reason.
    let mut d = Deriver::new(vec![Derivation::parse("a=A/x").unwrap(), Derivation::parse("b=Derived/a + 1").unwrap()]);
    let e = d.run_started(&mut info()).unwrap_err();
    assert!(e.contains("'Derived/a', itself a derived series") && e.contains("(a = A/x)"), "{e}");
}
