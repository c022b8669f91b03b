//! `zescope record --out run.ron` then `zescope export` as a user runs them, headless; and the
//! export command's refusals.

use crate::support::{run as zescope, text};

#[test]
fn record_a_session_then_export_images_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let out = zescope(&["--source", "sim", "record", "--duration", "1s", "--interval", "2ms", "--out", &p("run.ron")]);
    assert!(out.status.success(), "{}", text(&out));
    let s = zescope_model::session::load(&dir.path().join("run.ron")).expect("record wrote a session");
    let stamps: Vec<f64> = s.streams[0].data.raw.timestamps.iter().map(|&t| t as f64 * 1e-9).collect();
    crate::support::kept_sampling(&stamps, std::time::Duration::from_secs(1)).unwrap();
    assert!(!s.view.panes.is_empty(), "with the default layout");

    let out = zescope(&[
        "export",
        &p("run.ron"),
        "--pane",
        "1",
        "--range",
        "0.1..0.6",
        "--size",
        "800x300",
        "--png",
        &p("p.png"),
        "--svg",
        &p("p.svg"),
        "--csv",
        &p("d.csv"),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("p.png (800x300)"), "{}", text(&out));
    let img = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(dir.path().join("p.png")).unwrap()));
    let info = img.read_info().unwrap();
    assert_eq!((info.info().width, info.info().height), (800, 300));
    roxmltree::Document::parse(&std::fs::read_to_string(dir.path().join("p.svg")).unwrap()).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("d.csv")).unwrap();
    let times: Vec<f64> = csv.lines().skip(1).map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
    assert!(times.iter().all(|t| (0.1..=0.6).contains(t)), "only the range");
    crate::support::kept_sampling(&times, std::time::Duration::from_millis(500)).expect("the whole range");
    // The recording's time 0: its first sample of any stream.
    let origin = s.streams.iter().filter_map(|st| st.data.raw.timestamps.first()).min().unwrap();
    let origin = *origin as f64 * 1e-9;
    let in_range = stamps.iter().filter(|&&t| (0.1..=0.6).contains(&(t - origin))).count();
    assert!(times.len() >= in_range, "each sample of the range: {} rows, {in_range} samples", times.len());
}

#[test]
fn export_refuses_bad_requests_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/example-session.ron");
    let png = dir.path().join("x.png").to_string_lossy().into_owned();
    for (args, want) in [
        (vec!["export", example], "nothing to write"),
        (vec!["export", example, "--pane", "9", "--png", &png], "there is no pane 9"),
        (vec!["export", example, "--range", "5..2", "--png", &png], "is empty"),
        (
            vec!["export", example, "--range", "100000..", "--png", &png],
            "no samples there; the session's samples run from 0.000 s to",
        ),
        (vec!["export", example, "--range", "..-5", "--png", &png], "no samples there"),
        (vec!["export", example, "--size", "10x10", "--png", &png], "each side of an image is 64 to 16384 pixels"),
        (vec!["export", example, "--size", "900x140", "--png", &png], "fewer than the 150 a pane needs"),
        (vec!["export", example, "--memory-cap", "1K", "--png", &png], "at least 16M"),
        (vec!["export", "/no/such/session.ron", "--png", &png], "cannot open"),
        (vec!["export", concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"), "--png", &png], "line 1"),
    ] {
        let out = zescope(&args);
        assert!(!out.status.success(), "{args:?}");
        assert!(text(&out).contains(want), "{args:?}: expected {want:?} in {}", text(&out));
        assert!(!std::path::Path::new(&png).exists(), "{args:?} wrote an image");
    }
}

/// `record --out x.csv` and `export --csv` write one format: the same columns for the same
/// counters (naming the device when there are several) and `time_s` from the recording's first
/// sample.
#[test]
fn recorded_and_exported_csv_share_columns_and_time_origin() {
    for devices in [&[][..], &["--device", "0,1"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
        let rec = |out: &str| {
            let mut args = vec!["--source", "sim", "record", "--duration", "500ms", "--interval", "5ms", "--out", out];
            args.extend(devices);
            zescope(&args)
        };
        for out in [p("run.ron"), p("run.csv")] {
            let o = rec(&out);
            assert!(o.status.success(), "{}", text(&o));
        }
        let o = zescope(&["export", &p("run.ron"), "--csv", &p("exported.csv")]);
        assert!(o.status.success(), "{}", text(&o));
        let read = |name: &str| {
            let mut r = csv::Reader::from_path(dir.path().join(name)).unwrap();
            let header: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
            let times: Vec<f64> = r.records().map(|x| x.unwrap()[0].parse().unwrap()).collect();
            (header, times)
        };
        let (mut recorded, rec_times) = read("run.csv");
        let (mut exported, exp_times) = read("exported.csv");
        assert_eq!(recorded.remove(0), "time_s");
        assert_eq!(exported.remove(0), "time_s");
        recorded.sort();
        exported.sort();
        assert_eq!(recorded, exported, "the same counters, headed alike");
        let named = recorded.iter().filter(|c| c.starts_with("ze-sim NPU/NpuActivity/")).count();
        assert_eq!(named > 0, !devices.is_empty(), "the device is named with several: {recorded:?}");
        for times in [&rec_times, &exp_times] {
            assert_eq!(times[0], 0.0, "time 0 is the first sample");
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "in time order");
            crate::support::kept_sampling(times, std::time::Duration::from_millis(500)).unwrap();
        }
    }
}

/// `export --phases`: the phase table of the whole session (or `--range`) as CSV, its numbers
/// those of the session's samples.
#[test]
fn export_phases_writes_the_phase_table() {
    let dir = tempfile::tempdir().unwrap();
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/example-session.ron");
    let out_csv = dir.path().join("phases.csv");
    let out = zescope(&["export", example, "--phases", &out_csv.to_string_lossy()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("phases.csv (1 phase, 5 rows)"), "{}", text(&out));
    let csv = std::fs::read_to_string(&out_csv).unwrap();
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| lines[0].iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"));
    assert_eq!(lines.len(), 6, "a header and one row per series");

    let s = zescope_model::session::load(std::path::Path::new(example)).unwrap();
    let st = &s.streams[0];
    let n = st.meta.series.len();
    let values = |metric: &str| -> Vec<f64> {
        let k = st.meta.series.iter().position(|m| m.metric == metric).unwrap();
        (0..st.data.raw.timestamps.len()).map(|i| st.data.raw.values[i * n + k]).collect()
    };
    let find = |metric: &str| lines.iter().find(|l| l[col("series")].ends_with(metric)).unwrap();
    let f = values("GpuFrequency");
    let row = find("/GpuFrequency");
    assert_eq!(row[col("phase")], "session");
    let mean: f64 = row[col("mean")].parse().unwrap();
    assert!((mean - f.iter().sum::<f64>() / f.len() as f64).abs() < 1e-9 * mean);
    assert_eq!(row[col("max")].parse::<f64>().unwrap(), f.iter().copied().fold(f64::MIN, f64::max));
    let busy = values("GpuBusyCycles");
    let row = find("/GpuBusyCycles");
    assert_eq!(row[col("total")].parse::<f64>().unwrap(), busy.last().unwrap() - busy[0]);
    assert_eq!(row[col("total_unit")], "cycles");
    assert!(!find("/GpuPower")[col("energy_J")].is_empty(), "a W gauge has an energy");

    // --range: one phase over that range only, shorter than the session.
    let out = zescope(&["export", example, "--range", "0.5..1.5", "--phases", &out_csv.to_string_lossy()]);
    assert!(out.status.success(), "{}", text(&out));
    let csv = std::fs::read_to_string(&out_csv).unwrap();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[col("phase")], "range");
    assert!((row[col("duration_s")].parse::<f64>().unwrap() - 1.0).abs() < 1e-9);
}

/// `export --phases` of a session with more marked ranges than a table may hold: the table stops
/// at its bound of rows and says how many ranges it left out; a range named like a formula is
/// neutralised.
#[test]
fn export_phases_stays_within_its_bound_of_rows() {
    use zescope_model::session::{Marker, SpanRecord};
    let dir = tempfile::tempdir().unwrap();
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/example-session.ron");
    let mut s = zescope_model::session::load(std::path::Path::new(example)).unwrap();
    let t0 = s.streams[0].data.raw.timestamps[0];
    s.markers = (0..60_000i64)
        .map(|k| Marker {
            t_ns: t0 + k,
            label: if k == 0 { "=1+1".into() } else { format!("r{k}") },
            span: SpanRecord::Range { end_ns: t0 + k + 1_000_000 },
        })
        .collect();
    let session = dir.path().join("many.ron");
    zescope_model::session::save(&session, &s).unwrap();
    let out_csv = dir.path().join("phases.csv");
    let out = zescope(&["export", &session.to_string_lossy(), "--phases", &out_csv.to_string_lossy()]);
    assert!(out.status.success(), "{}", text(&out));
    // 5 series: 50 000 phases (the session and 49 999 ranges) fill 250 000 rows.
    let said = text(&out);
    assert!(said.contains("(50000 phases, 250000 rows; 10001 later marked ranges left out"), "{said}");
    let csv = std::fs::read_to_string(&out_csv).unwrap();
    assert_eq!(csv.lines().count(), 250_001);
    assert!(csv.lines().nth(6).unwrap().starts_with("'=1+1,"), "{}", csv.lines().nth(6).unwrap());
    // What the note advises: a --range holds the marked ranges within it, the part within it. All
    // 60 000 end by 1.06 ms after the first sample: none from 2 ms, every one cut at 0.5 ms.
    let out =
        zescope(&["export", &session.to_string_lossy(), "--range", "0.002..", "--phases", &out_csv.to_string_lossy()]);
    assert!(text(&out).contains("(1 phase, 5 rows)"), "{}", text(&out));
    let out =
        zescope(&["export", &session.to_string_lossy(), "--range", "..0.0005", "--phases", &out_csv.to_string_lossy()]);
    assert!(text(&out).contains("(50000 phases, 250000 rows; 10001 later"), "{}", text(&out));
    let csv = std::fs::read_to_string(&out_csv).unwrap();
    let cut = csv.lines().find(|l| l.starts_with("r1,")).expect("the range r1");
    let duration: f64 = cut.split(',').nth(2).unwrap().parse().unwrap();
    assert!((duration - (0.0005 - 1e-9)).abs() < 1e-9, "r1 from 1 ns to its cut at 0.5 ms: {cut}");
}

/// A session larger than the memory cap is exported, not refused: its older history comes in
/// summarised (a note on stderr says from when), the images cover the whole session.
#[test]
fn a_session_past_the_memory_cap_is_exported_with_a_note() {
    use zescope_model::session::{Capture, RunHistory, Session};
    use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};
    let dir = tempfile::tempdir().unwrap();
    // 8 noisy gauges x 600 000 samples at 1 kHz: ~40 MiB decoded, about as much packed.
    let (n, samples) = (8usize, 600_000usize);
    let mut store = Store::new(1 << 30);
    let series = (0..n).map(|k| SeriesDesc { name: format!("c{k}"), unit: "W".into(), kind: SeriesKind::Gauge });
    let id = store.begin_stream(StreamDesc { name: "g".into(), series: series.collect() });
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for block in 0..samples / 10_000 {
        let ts: Vec<i64> = (0..10_000).map(|i| ((block * 10_000 + i) as i64 + 1) * 1_000_000).collect();
        let vals: Vec<f64> = (0..10_000 * n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 11) as f64
            })
            .collect();
        store.append(id, &ts, &vals).unwrap();
    }
    store.end_stream(id);
    let (history, layout, view) = (RunHistory::default(), Default::default(), Default::default());
    let s = Session::capture(&store, Capture { history: &history, arrangement: &layout, view: &view, markers: &[] });
    let path = dir.path().join("big.ron");
    zescope_model::session::save(&path, &s).unwrap();
    let p = |f: &str| dir.path().join(f).to_string_lossy().into_owned();
    let out =
        zescope(&["export", &p("big.ron"), "--memory-cap", "16M", "--png", &p("big.png"), "--csv", &p("big.csv")]);
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("big.ron: ") && stderr.contains("memory cap of 16 MiB") && stderr.contains("history before"),
        "{stderr}"
    );
    assert!(dir.path().join("big.png").metadata().unwrap().len() > 10_000);
    let rows = std::fs::read_to_string(dir.path().join("big.csv")).unwrap().lines().count() - 1;
    assert!(rows > 10_000 && rows < samples, "the newest samples at full resolution: {rows} rows");
    // With room, every sample.
    let out = zescope(&["export", &p("big.ron"), "--memory-cap", "1G", "--csv", &p("all.csv")]);
    assert!(out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("history before"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(dir.path().join("all.csv")).unwrap().lines().count() - 1, samples);
}
