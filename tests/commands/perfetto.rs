//! Perfetto traces, read back with Perfetto's own Python protos (`perfetto_check.py`, PyPI
//! `perfetto`): `export --perfetto` of a session recorded on the simulated device (telemetry
//! included, throttled for a while, markers added) holds every series as a counter track `device/group/metric` under its
//! device and group with the session's sample count, first and last values and timestamps, its
//! throttle bands and markers as slices, its metadata and a clock snapshot; `record --perfetto`
//! beside `--out run.ron` writes the same samples as the session of the same run, with the
//! workload's markers, and alone writes a trace by itself. Without python3 or the package the
//! checks skip, loudly.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use zescope_model::session::{Marker, Session, SpanRecord};
use zescope_store::Store;

use crate::support::{run as zescope, text};

/// What `perfetto_check.py` read from `trace`; `None` (after a loud skip) without python3 or the
/// `perfetto` package.
fn read_trace(trace: &Path) -> Option<Value> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/commands/perfetto_check.py");
    let out = match std::process::Command::new("python3").arg(script).arg(trace).output() {
        Ok(o) => o,
        Err(e) => {
            ze_sim::testing::skip("the Perfetto trace checks", &format!("python3 cannot run: {e}"));
            return None;
        }
    };
    if out.status.code() == Some(3) {
        let why = String::from_utf8_lossy(&out.stderr);
        ze_sim::testing::skip("the Perfetto trace checks", &format!("{why} (python3 -m pip install perfetto)"));
        return None;
    }
    assert!(out.status.success(), "perfetto_check.py failed: {}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("perfetto_check.py prints JSON");
    assert_eq!(v["problems"], Value::Array(vec![]), "what trace_processor would reject");
    Some(v)
}

/// Per series of the session (`device/group/metric`): (unit, count, first (t, v), last (t, v)) of
/// its values (NaN left out).
type Expected = BTreeMap<String, (String, u64, (i64, f64), (i64, f64))>;

fn expected(s: &Session) -> Expected {
    let mut store = Store::new(usize::MAX);
    let restored = s.restore_into(&mut store).unwrap();
    let mut out = Expected::new();
    for (stream, &id) in s.streams.iter().zip(&restored.streams) {
        let m = &stream.meta;
        for (k, x) in m.series.iter().enumerate() {
            let (mut n, mut first, mut last) = (0u64, None, (0, 0.0));
            // A NaN (no value at that time: a rate before its second read) is no point.
            store.for_each_raw_row(id, |t, row| {
                if row[k].is_nan() {
                    return;
                }
                n += 1;
                first.get_or_insert((t, row[k]));
                last = (t, row[k]);
            });
            let name = format!("{}/{}/{}", m.device, m.group, x.metric);
            out.insert(name, (x.unit.clone(), n, first.expect("samples"), last));
        }
    }
    out
}

/// Every series of `want` is a counter track of `got` with the same unit, parents, count, first
/// and last timestamps and values (exactly: doubles go through the file bit for bit).
fn same_series(got: &Value, want: &Expected) {
    let counters = got["counters"].as_object().unwrap();
    assert_eq!(counters.len(), want.len(), "one counter track per series: {:?}", counters.keys().collect::<Vec<_>>());
    for (name, (unit, n, (t0, v0), (t1, v1))) in want {
        let c = &counters.get(name).unwrap_or_else(|| panic!("no counter track {name}"));
        let mut parts = name.splitn(3, '/');
        let (device, group) = (parts.next().unwrap(), parts.next().unwrap());
        assert_eq!(c["parents"], serde_json::json!([device, group]), "{name} under its device and group");
        assert_eq!(c["unit"], unit.as_str(), "{name}'s unit");
        assert_eq!(c["count"], *n, "{name}'s sample count");
        assert_eq!(c["first_ts"].as_i64(), Some(*t0), "{name}'s first timestamp");
        assert_eq!(c["last_ts"].as_i64(), Some(*t1), "{name}'s last timestamp");
        assert_eq!(
            c["first_bits"].as_u64(),
            Some(v0.to_bits()),
            "{name}'s first value: {} in the trace, {v0}",
            c["first"]
        );
        assert_eq!(
            c["last_bits"].as_u64(),
            Some(v1.to_bits()),
            "{name}'s last value: {} in the trace, {v1}",
            c["last"]
        );
    }
}

/// The throttle bands the session's throttle series call for, by the path of their slice track
/// (`device/group/device/group/metric (reasons)`): (start, end) of each run of one non-zero mask,
/// ending at the sample that changed it (1 ns before, when another band starts there) or at the
/// last sample.
fn throttle_runs(s: &Session) -> BTreeMap<String, Vec<(i64, i64)>> {
    let mut store = Store::new(usize::MAX);
    let restored = s.restore_into(&mut store).unwrap();
    let mut out = BTreeMap::new();
    for (stream, &id) in s.streams.iter().zip(&restored.streams) {
        let m = &stream.meta;
        for (k, x) in m.series.iter().enumerate() {
            if zescope_sampler::telemetry::throttle_names(&x.description).is_empty() {
                continue;
            }
            let (mut bands, mut open, mut last) = (Vec::new(), None::<(u32, i64)>, 0);
            store.for_each_raw_row(id, |t, row| {
                let mask = if row[k] > 0.0 { row[k] as u32 } else { 0 };
                last = t;
                if open.map_or(0, |o| o.0) == mask {
                    return;
                }
                if let Some((_, start)) = open.take() {
                    bands.push((start, if mask != 0 { t - 1 } else { t }));
                }
                if mask != 0 {
                    open = Some((mask, t));
                }
            });
            if let Some((_, start)) = open {
                bands.push((start, last));
            }
            let (d, g) = (&m.device, &m.group);
            out.insert(format!("{d}/{g}/{d}/{g}/{} (reasons)", x.metric), bands);
        }
    }
    out
}

#[test]
fn an_exported_session_reads_back_with_perfettos_protos() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    // 5.5 s: the simulated clock is held down by the power limit from 3.5 s to 5 s.
    let out =
        zescope(&["--source", "sim", "record", "--duration", "5500ms", "--interval", "10ms", "--out", &p("run.ron")]);
    assert!(out.status.success(), "{}", text(&out));
    // Markers: an instant, two overlapping ranges (two range tracks) and one left open.
    let mut s = zescope_model::session::load(&dir.path().join("run.ron")).unwrap();
    let t0 = s.origin_ns.unwrap();
    let ms = |m: i64| t0 + m * 1_000_000;
    s.markers = vec![
        Marker { t_ns: ms(100), label: "warm-up".into(), span: SpanRecord::Range { end_ns: ms(600) } },
        Marker { t_ns: ms(300), label: "solve".into(), span: SpanRecord::Range { end_ns: ms(900) } },
        Marker { t_ns: ms(400), label: "checkpoint".into(), span: SpanRecord::Instant },
        Marker { t_ns: ms(1000), label: "tail".into(), span: SpanRecord::Open },
    ];
    zescope_model::session::save(&dir.path().join("marked.ron"), &s).unwrap();
    let out = zescope(&["export", &p("marked.ron"), "--perfetto", &p("run.pftrace")]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("run.pftrace ("), "{}", text(&out));
    let Some(got) = read_trace(&dir.path().join("run.pftrace")) else { return };

    let want = expected(&s);
    assert!(want.keys().any(|k| k.contains("/Telemetry/")), "telemetry recorded: {:?}", want.keys());
    same_series(&got, &want);

    // Markers: ranges on two tracks (they overlap), the open one begun and not ended.
    let slices = got["slices"].as_object().unwrap();
    // Per track of a path, its events.
    let ev = |track: &str| -> Vec<Vec<(String, i64, String)>> {
        let tracks = slices.get(track).unwrap_or_else(|| panic!("no track {track}: {:?}", slices.keys()));
        tracks
            .as_array()
            .unwrap()
            .iter()
            .map(|events| {
                let e = events.as_array().unwrap();
                e.iter()
                    .map(|e| {
                        (e[0].as_str().unwrap().to_owned(), e[1].as_i64().unwrap(), e[2].as_str().unwrap().to_owned())
                    })
                    .collect()
            })
            .collect()
    };
    let s3 = |k: &str, t: i64, n: &str| (k.to_owned(), t, n.to_owned());
    assert_eq!(ev("markers/instants"), [vec![s3("instant", ms(400), "checkpoint")]]);
    // Two range tracks: "solve" overlaps "warm-up"; "tail" begins after "warm-up" ended.
    assert_eq!(
        ev("markers/ranges"),
        [
            vec![s3("begin", ms(100), "warm-up"), s3("end", ms(600), ""), s3("begin", ms(1000), "tail")],
            vec![s3("begin", ms(300), "solve"), s3("end", ms(900), "")],
        ]
    );

    // Throttle bands: one slice per run of one non-zero mask, beside the group's counters.
    let throttles = throttle_runs(&s);
    assert!(!throttles.is_empty(), "the telemetry has a throttle reasons series");
    let mut bands = 0;
    for (track, want) in &throttles {
        let events: Vec<Value> = match slices.get(track) {
            Some(tracks) => tracks.as_array().unwrap().iter().flat_map(|t| t.as_array().unwrap().clone()).collect(),
            None => Vec::new(),
        };
        let got: Vec<(i64, i64)> = events
            .chunks(2)
            .map(|pair| {
                assert_eq!(
                    (&pair[0][0], &pair[1][0]),
                    (&Value::from("begin"), &Value::from("end")),
                    "{track}: {events:?}"
                );
                (pair[0][1].as_i64().unwrap(), pair[1][1].as_i64().unwrap())
            })
            .collect();
        assert!(
            events.iter().filter(|e| e[0] == "begin").all(|e| e[2] == "average power cap (PL1)"),
            "{track}: bands named by their reasons: {events:?}"
        );
        bands += got.len();
        assert_eq!(&got, want, "{track}");
    }
    assert!(bands > 0, "the recording was throttled from 3.5 s: {throttles:?}");

    // Metadata and clocks.
    let meta = &got["metadata"];
    assert_eq!(meta["zescope_version"], s.recorded.zescope_version.as_str());
    assert_eq!(meta["host"], s.recorded.host.as_str());
    let d = &s.devices[0];
    assert_eq!(meta["device0.name"], d.name.as_str());
    assert_eq!(meta["device0.uuid"], d.uuid.as_str());
    assert_eq!(meta["device0.simulated"], true);
    assert!(d.pci_bdf.is_some(), "the simulated device reports a PCI address");
    assert_eq!(meta["device0.pci_bdf"], d.pci_bdf.as_deref().unwrap());
    let clocks = s.recorded.clocks.expect("record keeps the clocks");
    let snap: BTreeMap<i64, i64> =
        got["clocks"].as_array().unwrap().iter().map(|c| (c[0].as_i64().unwrap(), c[1].as_i64().unwrap())).collect();
    assert_eq!(snap, BTreeMap::from([(1, clocks.realtime_ns), (3, clocks.monotonic_ns), (6, clocks.boottime_ns)]));
    assert_eq!(got["primary"], Value::Null, "Perfetto's default timeline, boot time");
    assert!((t0 - clocks.monotonic_ns).abs() < 10_000_000_000, "read as the run started");
}

#[test]
fn record_writes_a_trace_with_the_sessions_samples_and_the_workloads_markers() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_zescope");
    let workload = format!(
        "sleep 0.3; {bin} mark --begin solve; sleep 0.2; {bin} mark checkpoint; sleep 0.2; {bin} mark --end solve; sleep 0.3"
    );
    let out = crate::support::zescope()
        .args(["--source", "sim", "record", "--interval", "5ms", "--duration", "10s", "--out"])
        .arg(dir.path().join("run.ron"))
        .arg("--perfetto")
        .arg(dir.path().join("run.pftrace"))
        .args(["--", "sh", "-c", &workload])
        .env("ZESCOPE_MARKERS", dir.path().join("private/markers.sock"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("run.pftrace"), "{}", text(&out));
    let s = zescope_model::session::load(&dir.path().join("run.ron")).unwrap();
    assert_eq!(s.markers.len(), 2, "{:?}", s.markers);
    let Some(got) = read_trace(&dir.path().join("run.pftrace")) else { return };
    same_series(&got, &expected(&s));
    let slices = got["slices"].as_object().unwrap();
    let range = s.markers.iter().find(|m| m.label == "solve").unwrap();
    let SpanRecord::Range { end_ns } = range.span else { panic!("a closed range: {range:?}") };
    assert_eq!(slices["markers/ranges"], serde_json::json!([[["begin", range.t_ns, "solve"], ["end", end_ns, ""]]]));
    let instant = s.markers.iter().find(|m| m.label == "checkpoint").unwrap();
    assert_eq!(slices["markers/instants"], serde_json::json!([[["instant", instant.t_ns, "checkpoint"]]]));
    assert_eq!(got["metadata"]["device0.name"], s.devices[0].name.as_str());

    // Alone, without --out.
    let only = dir.path().join("only.pftrace");
    let out = zescope(&["--source", "sim", "record", "--duration", "500ms", "--perfetto", only.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let got = read_trace(&only).unwrap();
    let counters = got["counters"].as_object().unwrap();
    assert!(counters.len() > 10 && counters.values().all(|c| c["count"].as_u64() > Some(2)), "{counters:?}");
}

#[test]
fn record_needs_an_output_and_export_names_a_bad_trace_path() {
    let out = zescope(&["--source", "sim", "record", "--duration", "100ms"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("--out"), "{}", text(&out));
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/example-session.ron");
    let out = zescope(&["export", example, "--perfetto", "/no/such/dir/x.pftrace"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("/no/such/dir/x.pftrace"), "{}", text(&out));
}
