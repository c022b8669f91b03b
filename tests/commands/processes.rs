//! The processes using each device, as the commands give them, on the simulated driver with a
//! short schedule (its media process exits at 1.2 s and its pid is given to a new process at
//! 2.8 s, more than a snapshot period later): `record --out run.csv` writes `run.processes.csv` beside the samples (the reused pid
//! as two processes, `zescope` itself by its command, the others "not on this host"); `record
//! --out run.ron` keeps them in the session; `--no-telemetry` reads none; `serve --processes`
//! serves at most `--top-processes` per device, by memory, and plain `serve` none.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::support::serve::{OPENMETRICS, Serve, get};
use crate::support::text;

/// A schedule short enough for a few seconds of recording.
const SCHEDULE: &str = "(sysman: (processes: (exit_at_ms: 1200, reuse_at_ms: 2800, job_period_ms: 0)))";

fn record(dir: &std::path::Path, out: &str, extra: &[&str]) -> std::process::Output {
    let config = dir.join("sim.ron");
    std::fs::write(&config, SCHEDULE).unwrap();
    crate::support::zescope()
        .args(["--source", "sim", "record", "--interval", "20ms", "--duration", "4500ms", "--out"])
        .arg(dir.join(out))
        .args(extra)
        .env("ZE_SIM_CONFIG", &config)
        .output()
        .unwrap()
}

#[test]
fn record_to_csv_writes_the_processes_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = record(dir.path(), "run.csv", &[]);
    assert!(out.status.success(), "{}", text(&out));
    let path = dir.path().join("run.processes.csv");
    let mut r = csv::Reader::from_path(&path).unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), text(&out)));
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(header, ["time_s", "device", "pid", "started_s", "command", "memory_bytes", "shared_bytes", "engines"]);
    let rows: Vec<csv::StringRecord> = r.records().collect::<Result<_, _>>().unwrap();
    // Each process: (pid, started_s) → its rows' commands and engines.
    let mut processes: BTreeMap<(u32, String), Vec<(String, String)>> = BTreeMap::new();
    for row in &rows {
        assert_eq!(&row[1], "ze-sim GPU");
        let t: f64 = row[0].parse().unwrap();
        assert!((-1.0..10.0).contains(&t), "time_s on the samples' axis: {t}");
        processes
            .entry((row[2].parse().unwrap(), row[3].to_owned()))
            .or_default()
            .push((row[4].to_owned(), row[7].to_owned()));
    }
    let me = processes.iter().find(|(_, r)| r[0].0 == "zescope").expect("zescope itself, by its command");
    assert!(me.1.len() >= 3, "{processes:?}");
    let by_pid = |pid: u32| processes.keys().filter(|(p, _)| *p == pid).count();
    let reused: BTreeSet<u32> = processes.keys().map(|(p, _)| *p).filter(|&p| by_pid(p) == 2).collect();
    let reused: Vec<u32> = reused.into_iter().collect();
    assert_eq!(reused.len(), 1, "one pid, two processes: {processes:?}");
    let twice: Vec<&Vec<(String, String)>> =
        processes.iter().filter(|((p, _), _)| *p == reused[0]).map(|(_, rows)| rows).collect();
    assert_eq!(twice[0][0], ("(not on this host)".to_owned(), "media+copy".to_owned()));
    assert_eq!(twice[1][0], ("(not on this host)".to_owned(), "render".to_owned()));
    // The samples' CSV itself is unchanged in shape.
    let samples = std::fs::read_to_string(dir.path().join("run.csv")).unwrap();
    assert!(samples.starts_with("time_s,"), "{}", &samples[..100]);

    let out = record(dir.path(), "none.csv", &["--no-telemetry"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!dir.path().join("none.processes.csv").exists(), "no telemetry, no process list");
}

#[test]
fn record_to_a_session_keeps_the_processes() {
    let dir = tempfile::tempdir().unwrap();
    let out = record(dir.path(), "run.ron", &[]);
    assert!(out.status.success(), "{}", text(&out));
    let s = zescope_model::session::load(&dir.path().join("run.ron")).expect("a loadable session");
    assert!(s.processes.iter().all(|p| p.device == "ze-sim GPU" && p.run == s.runs[0].run));
    let mut pids: BTreeMap<u32, usize> = BTreeMap::new();
    for p in &s.processes {
        *pids.entry(p.pid).or_default() += 1;
        assert!(p.samples.windows(2).all(|w| w[0].0 < w[1].0));
    }
    assert_eq!(pids.values().filter(|&&n| n == 2).count(), 1, "the reused pid: two records: {pids:?}");
    let me = s.processes.iter().find(|p| p.command.as_deref() == Some("zescope")).expect("zescope itself");
    assert!(me.samples.iter().all(|x| x.2 > 0), "its shared memory: the imported exported memory");
    let others: BTreeSet<Option<&str>> =
        s.processes.iter().filter(|p| p.pid != me.pid).map(|p| p.command.as_deref()).collect();
    assert_eq!(others, [None].into(), "simulated processes are not on this host");
    // On the recording's clock: within the streams' span.
    let first = s.streams.iter().filter_map(|x| x.data.raw.timestamps.first()).min().unwrap();
    let last = s.streams.iter().filter_map(|x| x.data.raw.timestamps.last()).max().unwrap();
    let times: Vec<i64> = s.processes.iter().flat_map(|p| p.samples.iter().map(|x| x.0)).collect();
    assert!(times.iter().all(|t| *first - 1_000_000_000 < *t && *t <= *last + 1_000_000_000), "{times:?}");
}

/// The process series of a scrape: (device, pid) per sample of `family`.
fn process_samples(page: &str, family: &str) -> Vec<(String, String)> {
    let label = |line: &str, k: &str| {
        let from = line.find(&format!("{k}=\"")).map(|i| i + k.len() + 2)?;
        Some(line[from..from + line[from..].find('"')?].to_owned())
    };
    page.lines()
        .filter(|l| l.starts_with(&format!("{family}{{")))
        .map(|l| (label(l, "device").unwrap(), label(l, "pid").unwrap()))
        .collect()
}

#[test]
fn serve_serves_the_top_processes_of_each_device_only_when_asked() {
    // Short jobs every 400 ms: up to four processes at once on the GPU, and new pids all along.
    let jobs = "(sysman: (processes: (job_period_ms: 400)))";
    let s = Serve::start_with(&["--device", "0,1", "--processes", "--top-processes", "2"], Some(jobs));
    // Scraped until the NPU's process and two of the GPU's were seen (60 s at most), each scrape
    // checked on the way.
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    let enough = |seen: &BTreeSet<(String, String)>| {
        seen.iter().any(|(d, _)| d == "ze-sim NPU") && seen.iter().filter(|(d, _)| d == "ze-sim GPU").count() >= 2
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !enough(&seen) {
        assert!(Instant::now() < deadline, "within 60 s, only {seen:?}");
        let (status, _, page) = get(s.addr, "/metrics", Some(OPENMETRICS));
        assert_eq!(status, 200);
        let memory = process_samples(&page, "zescope_process_memory_bytes");
        let shared = process_samples(&page, "zescope_process_shared_memory_bytes");
        assert_eq!(memory, shared, "both families for the same processes");
        for device in ["ze-sim GPU", "ze-sim NPU"] {
            assert!(memory.iter().filter(|(d, _)| d == device).count() <= 2, "at most 2 for {device}:\n{page}");
        }
        seen.extend(memory);
        std::thread::sleep(Duration::from_millis(100));
    }
    s.stop();

    // Without --processes: the sampler reads the processes on a run's first tick and sends them
    // with its first samples; once a later publication counts more samples than the first, that
    // snapshot has been taken in, and the page must not show it.
    let plain = Serve::start(&[]);
    let count = |page: &str| -> f64 {
        page.lines().find_map(|l| l.strip_prefix("zescope_sampler_samples_total ")).map_or(0.0, |v| v.parse().unwrap())
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut first = 0.0;
    let page = loop {
        let (_, _, page) = get(plain.addr, "/metrics", Some(OPENMETRICS));
        let n = count(&page);
        if first > 0.0 && n > first {
            break page;
        }
        if first == 0.0 {
            first = n;
        }
        assert!(Instant::now() < deadline, "no two publications with samples within 60 s:\n{page}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!page.contains("zescope_process_"), "off by default:\n{page}");
    plain.stop();

    let refused = crate::support::run(&["--source", "sim", "serve", "--processes", "--top-processes", "0"]);
    assert!(!refused.status.success());
    assert!(text(&refused).contains("--top-processes"), "{}", text(&refused));
}
