//! Derived series from the command line (`docs/derived-series.md`): `record --derive` records
//! them into a session whose every export carries them, with values checked against references
//! computed here from the same file's sampled columns; `serve --derive` serves them with a
//! `derived` label; a derivation naming nothing is refused with what it could mean.

use std::time::{Duration, Instant};

use crate::support::serve::{Serve, get};

/// Three derivations with independent references: twice a level, a running total's rate from
/// its raw column, and the package power integrated against the simulated energy counter.
const DERIVE: [&str; 3] = [
    "twice=ComputeBasic/GpuUtilization * 2",
    "busy[%]=rate(ComputeBasic/GpuTime) / 1e7",
    r#"energy=integral("Telemetry/Package power")"#,
];

/// The CSV's columns by header prefix: (time_s, value) for every row where it has one.
fn column(csv: &str, prefix: &str) -> Vec<(f64, f64)> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| h.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix} in {header:?}"));
    lines
        .filter_map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            Some((c[0].parse().ok()?, c.get(col)?.parse::<f64>().ok().filter(|v| v.is_finite())?))
        })
        .collect()
}

/// The value of `col` at time `t` (s), if it has one there.
fn at(col: &[(f64, f64)], t: f64) -> Option<f64> {
    col.iter().find(|r| (r.0 - t).abs() < 1e-9).map(|r| r.1)
}

#[test]
fn record_derives_into_a_session_that_every_export_carries() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let mut cmd = crate::support::zescope();
    cmd.args(["--source", "sim", "record", "--interval", "5ms", "--duration", "3s", "--out"]).arg(p("run.ron"));
    DERIVE.iter().for_each(|d| {
        cmd.args(["--derive", d]);
    });
    let o = cmd.env_remove("ZE_SIM_CONFIG").output().unwrap();
    assert!(o.status.success(), "{}", crate::support::text(&o));
    // The summary counts the derived samples apart: two series driven by ComputeBasic, one by the
    // telemetry, a derived sample for each sample of the stream that drives it (counted as samples,
    // they doubled the groups' samples a second).
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    let number = |what: &str| -> u64 {
        let end = said.find(what).unwrap_or_else(|| panic!("no {what:?} in {said}"));
        said[..end].rsplit([' ', ',']).next().unwrap().parse().unwrap()
    };
    let (samples, reads, derived) = (number(" samples,"), number(" telemetry reads and"), number(" derived samples"));
    assert_eq!(derived, samples + reads, "{said}");

    // The session keeps the definitions (its runs' `derived`) and the values (a Derived stream).
    let head = String::from_utf8_lossy(&std::fs::read(p("run.ron")).unwrap()).into_owned();
    assert!(head.contains("derived: [") && head.contains("twice=ComputeBasic/GpuUtilization * 2"), "{head:.3000}");

    let o = crate::support::zescope()
        .arg("export")
        .arg(p("run.ron"))
        .args(["--csv"])
        .arg(p("raw.csv"))
        .args(["--svg"])
        .arg(p("a.svg"))
        .args(["--png"])
        .arg(p("a.png"))
        .args(["--openmetrics"])
        .arg(p("a.om"))
        .args(["--perfetto"])
        .arg(p("a.pftrace"))
        .args(["--phases"])
        .arg(p("phases.csv"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", crate::support::text(&o));
    let csv = std::fs::read_to_string(p("raw.csv")).unwrap();

    // twice: at every tick of ComputeBasic, twice its utilisation (as read: a gauge).
    let util = column(&csv, "ComputeBasic/GpuUtilization");
    let twice = column(&csv, "Derived/twice [%]");
    assert!(twice.len() > 50 && twice.len() >= util.len() - 1, "{} of {} ticks", twice.len(), util.len());
    for &(t, v) in &twice {
        let u = at(&util, t).unwrap_or_else(|| panic!("no utilisation at {t}"));
        assert!((v - 2.0 * u).abs() <= 1e-9 * v.abs().max(1.0), "at {t}: {v} vs 2 × {u}");
    }
    // busy: the raw GpuTime column's increase per second between consecutive rows, / 1e7 (ns/s → %).
    let gpu_time = column(&csv, "ComputeBasic/GpuTime");
    let busy = column(&csv, "Derived/busy [%]");
    let mut checked = 0;
    for w in gpu_time.windows(2) {
        let ((t0, v0), (t1, v1)) = (w[0], w[1]);
        let Some(b) = at(&busy, t1) else { continue };
        let want = (v1 - v0) / (t1 - t0) / 1e7;
        assert!((b - want).abs() <= 1e-6 * want.abs().max(1.0), "at {t1}: {b} vs {want}");
        checked += 1;
    }
    assert!(checked > 50, "{checked} rates checked");
    // energy: the trapezoids of the power column, summed here; and against the simulated energy
    // counter (whose increase the telemetry's power is, over each interval: a trapezoid sum
    // differs from it by half the change of power over an interval at the ends, a few %).
    let power = column(&csv, "Telemetry/Package power");
    let energy = column(&csv, "Derived/energy [J]");
    let trapezoids: f64 = power.windows(2).map(|w| (w[0].1 + w[1].1) / 2.0 * (w[1].0 - w[0].0)).sum();
    let e = energy.last().unwrap().1 - energy[0].1;
    assert!(power.len() > 5 && (e - trapezoids).abs() <= 1e-6 * trapezoids, "{e} J vs {trapezoids} J");
    let counter = column(&csv, "Telemetry/Package energy");
    let c = counter.last().unwrap().1 - counter[0].1;
    assert!(c > 1.0 && (e - c).abs() <= 0.1 * c, "integral of the power {e} J, energy counter {c} J");

    // Every other export carries them.
    let svg = std::fs::read_to_string(p("a.svg")).unwrap();
    assert!(svg.contains("Derived/twice") && svg.contains("Derived/energy"), "the SVG's legends name them");
    assert!(std::fs::metadata(p("a.png")).unwrap().len() > 1000);
    let om = std::fs::read_to_string(p("a.om")).unwrap();
    assert!(om.contains("source=\"derived\",derived=\"twice=ComputeBasic/GpuUtilization * 2\"}"), "{om:.2000}");
    assert!(om.contains("# UNIT zescope_derived_energy_joules joules"), "the computed unit J is the family's");
    let trace = std::fs::read(p("a.pftrace")).unwrap();
    let holds = |needle: &str| trace.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(holds("twice") && holds("energy") && holds("Derived"), "the trace has their counter tracks");
    let phases = std::fs::read_to_string(p("phases.csv")).unwrap();
    let row = phases.lines().find(|l| l.contains(",Derived/energy,")).expect("a phase row for energy");
    assert!(row.contains(",J,"), "{row}");
}

#[test]
fn a_derivation_naming_nothing_is_refused_with_what_it_could_mean() {
    let dir = tempfile::tempdir().unwrap();
    let o = crate::support::zescope()
        .args(["--source", "sim", "record", "--no-telemetry", "--duration", "1s", "--out"])
        .arg(dir.path().join("run.csv"))
        .args(["--derive", "x=rate(ComputeBasic/GpuTim)"])
        .env_remove("ZE_SIM_CONFIG")
        .output()
        .unwrap();
    let said = crate::support::text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(
        said.contains(
            "derived series 'x' names 'ComputeBasic/GpuTim', no series of this run; it could mean ComputeBasic/GpuTime"
        ),
        "{said}"
    );
    // A definition that does not parse is refused before anything runs, naming the column.
    let o = crate::support::run(&["--source", "sim", "record", "--out", "x.csv", "--derive", "x=avg(A/b)"]);
    assert!(
        crate::support::text(&o).contains("column 3: avg takes an operand and a window"),
        "{}",
        crate::support::text(&o)
    );
}

/// A name of a group or device the run does not record is refused before anything is written,
/// saying what to add; the command line it offers then records.
#[test]
fn a_derivation_naming_a_group_left_out_says_what_to_add() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.ron");
    let record = |extra: &[&str]| {
        crate::support::zescope()
            .args(["--source", "sim", "record", "--no-telemetry", "--duration", "300ms", "--out"])
            .arg(&out)
            .args(["--derive", "x=NpuActivity/Inferences * 2"])
            .args(extra)
            .env_remove("ZE_SIM_CONFIG")
            .output()
            .unwrap()
    };
    let o = record(&[]);
    let said = crate::support::text(&o);
    assert!(!o.status.success(), "{said}");
    let want = "derived series 'x' names 'NpuActivity/Inferences', a metric of ze-sim NPU (device 1), which this \
                run does not record: add --device 0,1 --group 1:NpuActivity";
    assert!(said.contains(want), "{said}");
    assert!(!out.exists(), "nothing was written");
    // With --view the view file picks the groups (--group is refused beside it): not that advice.
    let view = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/views/compute-occupancy.ron");
    let said = crate::support::text(&record(&["--view", view]));
    assert!(said.contains("names 'NpuActivity/Inferences', no series of this run"), "{said}");
    let o = record(&["--device", "0,1", "--group", "1:NpuActivity"]);
    assert!(o.status.success(), "{}", crate::support::text(&o));
    let s = zescope_model::session::load(&out).expect("the session loads");
    let derived = s.streams.iter().find(|st| st.meta.group == "Derived").expect("the derived series was recorded");
    assert!(!derived.data.raw.timestamps.is_empty(), "with samples");
}

#[test]
fn serve_serves_them_with_a_derived_label() {
    let s = Serve::start(&["--derive", "twice=ComputeBasic/GpuUtilization * 2"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let want = "derived=\"twice=ComputeBasic/GpuUtilization * 2\"";
    let om = loop {
        let (status, _, om) = get(s.addr, "/metrics", None);
        assert_eq!(status, 200);
        if om.lines().any(|l| l.contains(want) && !l.ends_with("NaN")) || Instant::now() > deadline {
            break om;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let line = om.lines().find(|l| l.contains(want)).unwrap_or_else(|| panic!("no derived series in\n{om}"));
    // Named as any series in % is: a ratio, in its base unit.
    assert!(line.starts_with("zescope_twice_ratio{") && line.contains("group=\"Derived\""), "{line}");
    s.stop();
}

/// The CSV's column by header prefix: (time in ns, value) for every row where it has a finite one.
fn column_ns(csv: &str, prefix: &str) -> Vec<(i64, f64)> {
    let ns = |s: &str| -> Option<i64> {
        let (a, b) = s.split_once('.')?;
        Some(a.parse::<i64>().ok()? * 1_000_000_000 + format!("{b:0<9}")[..9].parse::<i64>().ok()?)
    };
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| h.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix} in {header:?}"));
    lines
        .filter_map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            Some((ns(c[0])?, c.get(col)?.parse::<f64>().ok().filter(|v| v.is_finite())?))
        })
        .collect()
}

/// A reference value at row `i` of a series' (time ns, value) rows; `None`: a gap.
type Reference<'a> = dyn Fn(usize, &[(i64, f64)]) -> Option<f64> + 'a;

#[test]
fn every_function_matches_a_reference_computed_from_the_csv() {
    const U: &str = "ComputeBasic/GpuUtilization";
    const P: &str = "ComputeBasic/GpuPower";
    const B: &str = "MemoryTraffic/BytesRead";
    let defs = [
        format!("avg=avg({U}, 100ms)"),
        format!("max=max({U}, 100ms)"),
        format!("min=min({U}, 30ms)"),
        format!("rms=rms({U}, 100ms)"),
        format!("sd=stddev({U}, 100ms)"),
        format!("cumsum=cumsum({U})"),
        format!("abs=abs({U} - 5)"),
        format!("clamp=clamp({U}, 2, 4)"),
        format!("hi=max({U}, {P})"),
        format!("lo=min({U}, {P})"),
        format!("gt={U} > 3"),
        format!("delta=delta({B})"),
        format!("rate=rate({B})"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f.csv");
    let mut cmd = crate::support::zescope();
    cmd.args(["--source", "sim", "record", "--no-telemetry", "--group", "ComputeBasic", "--group", "MemoryTraffic"]);
    cmd.args(["--interval", "5ms", "--duration", "2s", "--out"]).arg(&out);
    defs.iter().for_each(|d| {
        cmd.args(["--derive", d]);
    });
    let o = cmd.env_remove("ZE_SIM_CONFIG").output().unwrap();
    assert!(o.status.success(), "{}", crate::support::text(&o));
    let csv = std::fs::read_to_string(&out).unwrap();
    let (u, p, b) = (column_ns(&csv, U), column_ns(&csv, P), column_ns(&csv, B));
    assert!(u.len() > 100 && b.len() > 100, "{} and {} samples", u.len(), b.len());
    let p_at: std::collections::HashMap<i64, f64> = p.iter().copied().collect();

    // Each derived value against `want` at its time; how many were checked.
    let check = |name: &str, want: &Reference<'_>, input: &[(i64, f64)], tol: f64| {
        let got = column_ns(&csv, &format!("Derived/{name} "));
        let at: std::collections::HashMap<i64, f64> = got.iter().copied().collect();
        let mut n = 0;
        for i in 0..input.len() {
            let (t, w) = (input[i].0, want(i, input));
            match (at.get(&t), w) {
                (Some(g), Some(w)) => {
                    assert!((g - w).abs() <= tol * w.abs().max(1.0), "{name} at {t} ns: {g}, want {w}");
                    n += 1;
                }
                (None, None) => {}
                (g, w) => panic!("{name} at {t} ns: {g:?}, want {w:?}"),
            }
        }
        assert!(n > 100, "{name}: {n} values checked");
    };
    // The window (t − T, t] over the utilisation's own samples, recomputed in full at each tick.
    let window = |ms: i64, f: fn(&[f64]) -> f64| {
        move |i: usize, s: &[(i64, f64)]| -> Option<f64> {
            let t = s[i].0;
            let w: Vec<f64> = s[..=i].iter().filter(|x| x.0 > t - ms * 1_000_000).map(|x| x.1).collect();
            Some(f(&w))
        }
    };
    check("avg", &window(100, |w| w.iter().sum::<f64>() / w.len() as f64), &u, 1e-9);
    check("max", &window(100, |w| w.iter().copied().fold(f64::MIN, f64::max)), &u, 0.0);
    check("min", &window(30, |w| w.iter().copied().fold(f64::MAX, f64::min)), &u, 0.0);
    check("rms", &window(100, |w| (w.iter().map(|v| v * v).sum::<f64>() / w.len() as f64).sqrt()), &u, 1e-9);
    check(
        "sd",
        &window(100, |w| {
            let m = w.iter().sum::<f64>() / w.len() as f64;
            (w.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / w.len() as f64).sqrt()
        }),
        &u,
        1e-6,
    );
    check("cumsum", &|i, s| Some(s[..=i].iter().map(|x| x.1).sum()), &u, 1e-9);
    check("abs", &|i, s| Some((s[i].1 - 5.0).abs()), &u, 1e-12);
    check("clamp", &|i, s| Some(s[i].1.clamp(2.0, 4.0)), &u, 0.0);
    check("hi", &|i, s| Some(s[i].1.max(p_at[&s[i].0])), &u, 0.0);
    check("lo", &|i, s| Some(s[i].1.min(p_at[&s[i].0])), &u, 0.0);
    check("gt", &|i, s| Some(if s[i].1 > 3.0 { 1.0 } else { 0.0 }), &u, 0.0);
    // The raw running total's increase since the row before (a u64 counter: no wrap in a run;
    // the wrap is checked where a counter wraps, `derive` and `backfill` unit tests).
    let d = |i: usize, s: &[(i64, f64)]| (i > 0).then(|| s[i].1 - s[i - 1].1);
    check("delta", &d, &b, 1e-12);
    check("rate", &|i, s| d(i, s).map(|d| d / ((s[i].0 - s[i - 1].0) as f64 * 1e-9)), &b, 1e-9);
}
