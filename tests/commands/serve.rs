//! `zescope serve` as Prometheus users run it, on the simulated device and loopback only:
//! `promtool check metrics` passes a scrape with no lint findings (one without `Accept`, as
//! `curl … | promtool check metrics` makes, gets Prometheus text 0.0.4); bad requests, idle and
//! disappearing clients leave it answering; a real Prometheus (Debian's `prometheus`) scraping it
//! (two devices) every second sees `up == 1`, a `_total` counter that grows and each device's
//! info and telemetry; `promtool tsdb
//! create-blocks-from openmetrics` accepts an exported session; SIGTERM ends serve through the
//! teardown with a clean driver report. Without promtool/prometheus these skip loudly (a failure
//! with `ZESCOPE_STRICT_TESTS=1`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::prometheus::Prometheus;
use crate::support::serve::{OPENMETRICS, Serve, check_metrics, get, request, textfile_with, tool};

#[test]
fn a_scrape_passes_promtool_check_metrics_in_both_formats() {
    let Some(promtool) = tool("promtool") else { return };
    let s = Serve::start(&[]);
    // What `curl …/metrics | promtool check metrics` gets: no Accept, so Prometheus text 0.0.4.
    let (status, head, text) = get(s.addr, "/metrics", None);
    assert_eq!(status, 200);
    assert!(head.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), "{head}");
    assert!(!text.contains("# EOF") && !text.contains("# UNIT"), "{text}");
    assert!(text.contains("# TYPE zescope_gpu_time_seconds_total counter\n"), "{text}");
    let said = check_metrics(&promtool, &text);
    assert!(said.is_empty(), "promtool check metrics: {said}\non\n{text}");
    let (status, head, text) = get(s.addr, "/metrics", Some("text/plain;version=0.0.4"));
    assert_eq!(status, 200);
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    let said = check_metrics(&promtool, &text);
    assert!(said.is_empty(), "promtool check metrics: {said}\non\n{text}");
    // What Prometheus asks for: OpenMetrics.
    let (status, head, om) = get(s.addr, "/metrics", Some(OPENMETRICS));
    assert_eq!(status, 200);
    assert!(head.contains("application/openmetrics-text; version=1.0.0"), "{head}");
    assert!(om.ends_with("# EOF\n"), "{om}");
    for want in [
        "# TYPE zescope_gpu_time_seconds counter",
        "# UNIT zescope_gpu_time_seconds seconds",
        "zescope_gpu_utilization_ratio{",
        "zescope_device_info{device=\"ze-sim GPU\"",
        "zescope_build_info{version=",
        "zescope_sampler_achieved_rate_hertz ",
        "simulated=\"true\"",
        "source=\"export\"",
    ] {
        assert!(om.contains(want), "{want} missing from\n{om}");
    }
    s.stop();
}

#[test]
fn a_streamed_group_is_served_with_source_streamer() {
    let Some(promtool) = tool("promtool") else { return };
    let began = Instant::now();
    let s = Serve::start(&["--group", "RenderBasic", "--via", "streamer"]);
    // /healthz says ok at the first sample of any stream (the telemetry's may come first): the
    // streamer's first reports follow within its period, later on a loaded machine.
    let deadline = Instant::now() + Duration::from_secs(10);
    let om = loop {
        let (status, _, om) = get(s.addr, "/metrics", None);
        assert_eq!(status, 200);
        if om.contains("group=\"RenderBasic\"") || Instant::now() > deadline {
            break om;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(om.contains("group=\"RenderBasic\""), "no RenderBasic series in\n{om}");
    assert!(om.contains("source=\"streamer\""), "streamed series not labelled source=\"streamer\" in\n{om}");
    assert!(!om.contains("source=\"export\""), "nothing here is read from exported memory:\n{om}");
    // The streamer's counts are counters of their reports' sum, so rate() over a scrape interval
    // is the bytes read in it, not the last report's rate: it grows between two scrapes at a rate
    // within what the simulated device reads (1e8 bytes/s idle to 4e10 memory-bound, ±5 %).
    let (_, _, om) = get(s.addr, "/metrics", Some(OPENMETRICS));
    assert!(om.contains("# TYPE zescope_l3_bytes_read_bytes counter\n"), "{om}");
    let per_report = om.lines().find(|l| l.contains("group=\"RenderBasic\"") && l.contains("_per_second"));
    assert_eq!(per_report, None, "no gauge of one report's rate");
    let bytes_read = |om: &str| -> f64 {
        let line = om.lines().find(|l| l.starts_with("zescope_l3_bytes_read_bytes_total{")).expect("the counter");
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let (first, at) = (bytes_read(&om), Instant::now());
    std::thread::sleep(Duration::from_millis(1500));
    let (_, _, later) = get(s.addr, "/metrics", Some(OPENMETRICS));
    let per_s = (bytes_read(&later) - first) / at.elapsed().as_secs_f64();
    assert!((0.5e8..6e10).contains(&per_s), "the counter grew {per_s} bytes a second");
    let (_, _, text) = get(s.addr, "/metrics", Some("text/plain;version=0.0.4"));
    let mut check = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    check.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = check.wait_with_output().unwrap();
    assert!(out.status.success(), "promtool check metrics: {}", String::from_utf8_lossy(&out.stdout));
    // The page at / says the streamer's samples and the telemetry's reads apart, as the summary.
    let (status, _, page) = get(s.addr, "/", None);
    assert_eq!(status, 200);
    let said = page.split("sampling, ").nth(1).unwrap_or_else(|| panic!("no counts on the page: {page}"));
    assert!(said.contains(" samples and ") && said.contains(" telemetry reads so far"), "{page}");
    // It names the live feed, which a browser is told is a WebSocket (the status line said
    // "426 Error", and the page did not name /live).
    assert!(page.contains("/live: the live feed (a WebSocket"), "{page}");
    let (status, head, body) = get(s.addr, "/live", None);
    assert_eq!(status, 426);
    assert!(head.starts_with("HTTP/1.1 426 Upgrade Required\r\n"), "{head}");
    assert!(body.contains("the live feed is a WebSocket"), "{body}");
    // Its summary counts the streamer's samples apart from the telemetry's reads (at most ten a
    // second), as record's does.
    let said = s.stop();
    let counts: Vec<u64> = said
        .lines()
        .find_map(|l| l.strip_prefix("zescope: served "))
        .unwrap_or_else(|| panic!("no summary in {said:?}"))
        .split(' ')
        .filter_map(|w| w.trim_end_matches(',').parse().ok())
        .collect();
    assert!(said.contains(" samples and ") && said.contains(" telemetry reads, 0 markers"), "{said}");
    let [samples, telemetry, 0] = counts[..] else { panic!("{said}") };
    let took = began.elapsed().as_secs_f64();
    assert!(telemetry > 0 && telemetry as f64 <= 10.0 * took + 1.0, "ten telemetry reads a second at most: {said}");
    assert!(samples > 20 * telemetry, "the streamer's reports outnumber the telemetry's reads: {said}");
}

#[test]
fn bad_requests_and_bad_clients_leave_it_answering() {
    let s = Serve::start(&[]);
    assert_eq!(get(s.addr, "/nowhere", None).0, 404);
    let (status, head, _) =
        request(s.addr, "POST /metrics HTTP/1.1\r\nHost: z\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 405);
    assert!(head.contains("Allow: GET, HEAD"), "{head}");
    let (status, _, body) = request(s.addr, "HEAD /metrics HTTP/1.1\r\nHost: z\r\nConnection: close\r\n\r\n");
    assert_eq!((status, body.as_str()), (200, ""));
    let (status, _, _) = request(s.addr, "\x00\x01garbage that is no request\r\n\r\n");
    assert_eq!(status, 400, "garbage");
    // Clients that connect and say nothing, and clients that leave mid-response, many at once.
    let idle: Vec<TcpStream> = (0..16).map(|_| TcpStream::connect(s.addr).unwrap()).collect();
    for _ in 0..16 {
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: z\r\n\r\n").unwrap();
        let mut first = [0u8; 16];
        let _ = c.read(&mut first);
        drop(c);
    }
    let started = Instant::now();
    let (status, _, body) = get(s.addr, "/metrics", None);
    assert_eq!(status, 200);
    assert!(body.contains("zescope_gpu_time_seconds_total"), "{body}");
    // Not after the idle clients: a server that took its clients one at a time would answer only
    // once their 2 s head deadlines had run out, 32 s for the 16 (a generous bound, not a speed).
    assert!(started.elapsed() < Duration::from_secs(20), "answered beside the idle clients: {:?}", started.elapsed());
    // The sampler went on: the sample count grows while the idle clients hang on.
    let count = |b: &str| -> f64 {
        b.lines().find_map(|l| l.strip_prefix("zescope_sampler_samples_total ")).unwrap().parse().unwrap()
    };
    let before = count(&body);
    let deadline = Instant::now() + Duration::from_secs(20);
    while count(&get(s.addr, "/metrics", None).2) <= before {
        assert!(Instant::now() < deadline, "no sample counted in 20 s while idle clients hang on");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A client that says nothing is dropped by the server (its head deadline is 2 s; the read
    // waits 30 s, then fails with a timeout rather than the end of the stream), and the server
    // goes on accepting after that.
    let mut silent = idle.into_iter().next().unwrap();
    silent.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut buf = [0u8; 64];
    let read = silent.read(&mut buf);
    assert!(matches!(read, Ok(0)), "closed without an answer, not {read:?}");
    assert_eq!(get(s.addr, "/metrics", None).0, 200);
    s.stop();
}

#[test]
fn the_textfile_is_written_for_node_exporter() {
    let dir = tempfile::tempdir().unwrap();
    let s = Serve::start(&["--textfile", dir.path().to_str().unwrap()]);
    let file = dir.path().join("zescope.prom");
    // Rewritten every second: soon with the counters' values.
    let text = textfile_with(&file, "# TYPE zescope_gpu_time_seconds_total counter");
    assert!(!text.contains("# EOF"), "{text}");
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(names.iter().all(|n| n == "zescope.prom" || !n.ends_with(".prom")), "{names:?}");
    s.stop();
}

/// `promtool query instant`'s value for `query`, if it returned one.
fn query(promtool: &Path, server: &str, q: &str) -> Option<f64> {
    let out = Command::new(promtool).args(["query", "instant", server, q]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().find_map(|l| l.split_once("=> ")?.1.split(' ').next()?.parse().ok())
}

#[test]
fn a_real_prometheus_scrapes_it() {
    let (Some(promtool), Some(prometheus)) = (tool("promtool"), tool("prometheus")) else { return };
    let s = Serve::start(&["--device", "0,1"]);
    let prom = Prometheus::start(
        &prometheus,
        &format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: zescope\n    \
             static_configs:\n      - targets: ['{}']\n",
            s.addr
        ),
    );
    let server = prom.url();
    let deadline = Instant::now() + Duration::from_secs(60);
    let counter = "zescope_gpu_time_seconds_total{job=\"zescope\",group=\"ComputeBasic\"}";
    let first = loop {
        if query(&promtool, &server, "up{job=\"zescope\"}") == Some(1.0)
            && let Some(v) = query(&promtool, &server, counter)
        {
            break v;
        }
        assert!(Instant::now() < deadline, "Prometheus never saw up == 1 and {counter}; its log:\n{}", prom.log());
        std::thread::sleep(Duration::from_millis(250));
    };
    // A later scrape counts more (waited for: Prometheus scrapes on its own schedule).
    let mut second = None;
    while !second.is_some_and(|v| v > first) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
        second = query(&promtool, &server, counter);
    }
    // Both devices, with their telemetry, as series of their own.
    let devices = query(&promtool, &server, "count(zescope_device_info{job=\"zescope\"})");
    let npu_busy =
        query(&promtool, &server, "max(zescope_engine_busy_ratio{device=\"ze-sim NPU\",engine=\"compute\"})");
    let throttled = query(&promtool, &server, "count(zescope_gpu_throttle_reason{device=\"ze-sim GPU\"})");
    let exited = prom.stop();
    assert!(second.is_some_and(|v| v > first), "{counter}: {first} then {second:?}");
    assert_eq!(devices, Some(2.0), "zescope_device_info per device");
    assert!(npu_busy.is_some_and(|b| (0.0..=1.0).contains(&b)), "the NPU's compute engines: {npu_busy:?}");
    assert_eq!(throttled, Some(7.0), "one throttle gauge per reason");
    assert!(exited.success(), "prometheus ended with {exited}");
    s.stop();
}

#[test]
fn promtool_backfills_an_exported_session() {
    let Some(promtool) = tool("promtool") else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.ron");
    let rec = crate::support::zescope()
        .args(["--source", "sim", "record", "--interval", "1ms", "--duration", "1s", "--out"])
        .arg(&run)
        .env("ZE_SIM_REPORT", dir.path().join("report.ron"))
        .env_remove("ZE_SIM_CONFIG")
        .env_remove("ZE_ENABLE_ALT_DRIVERS")
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", String::from_utf8_lossy(&rec.stderr));
    let om = dir.path().join("run.om");
    let exp = crate::support::zescope().arg("export").arg(&run).arg("--openmetrics").arg(&om).output().unwrap();
    assert!(exp.status.success(), "{}", String::from_utf8_lossy(&exp.stderr));
    let text = std::fs::read_to_string(&om).unwrap();
    assert!(text.ends_with("# EOF\n"));
    let samples: Vec<&str> = text.lines().filter(|l| l.starts_with("zescope_gpu_time_seconds_total{")).collect();
    let stamp = |l: &str| -> f64 { l.rsplit(' ').next().unwrap().parse().unwrap() };
    let stamps: Vec<f64> = samples.iter().map(|l| stamp(l)).collect();
    crate::support::kept_sampling(&stamps, std::time::Duration::from_secs(1)).expect("samples of GpuTime");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    assert!((now - stamp(samples[0])).abs() < 60.0, "wall-clock timestamps: {}", samples[0]);
    assert!(samples.windows(2).all(|w| stamp(w[0]) < stamp(w[1])), "in time order");
    let out = Command::new(promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&om)
        .arg(dir.path().join("blocks"))
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "promtool: {said}");
    let blocks = std::fs::read_dir(dir.path().join("blocks")).unwrap().count();
    assert!(blocks >= 1, "promtool wrote no block: {said}");
}

/// The manual's YAML block that starts with `first_line`.
fn manual_block(first_line: &str) -> String {
    let manual = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/manual.md")).unwrap();
    let start = manual
        .find(&format!("```yaml\n{first_line}\n"))
        .unwrap_or_else(|| panic!("docs/manual.md has no {first_line}"));
    let body = &manual[start + "```yaml\n".len()..];
    body[..body.find("```").unwrap()].to_owned()
}

#[test]
fn the_manuals_scrape_config_is_valid() {
    let Some(promtool) = tool("promtool") else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(&config, manual_block("# prometheus.yml")).unwrap();
    let out = Command::new(&promtool).args(["check", "config", "--syntax-only"]).arg(&config).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "promtool check config: {said}");
    assert!(manual_block("# prometheus.yml").contains("/usr/share/zescope/zescope-rules.yml"), "names the rules");
}
