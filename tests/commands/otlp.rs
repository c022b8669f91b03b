//! `serve --otlp`: the run pushed over OTLP/HTTP to a receiver built on the OpenTelemetry
//! project's own protobuf definitions (`otlp_receiver.py`, PyPI `opentelemetry-proto`).
//!
//! - Value for value: every data point exported during a run of both simulated devices is the
//!   value the session the same run saved (`--save`) holds for that series at that time, to the
//!   bit: the session read back through `export --openmetrics` (every sample, timestamped), the
//!   `zescope.*` metrics by their Prometheus translation, xpumd's `hw.*` ones through the
//!   mapping of docs/otel.md, the point's time (the time its value was read) put on the
//!   session's timeline through the clocks the session recorded. Every series of the session is
//!   exported; nothing is dropped. Counters are monotonic cumulative sums, levels gauges, units
//!   UCUM; each device is a resource of its own with the host's and its own attributes; the
//!   exporter's variables are honoured (`OTEL_EXPORTER_OTLP_ENDPOINT` for a bare `--otlp`,
//!   `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_RESOURCE_ATTRIBUTES`).
//! - A streamer's count (`RenderBasic`'s `L3BytesRead`): a monotonic sum in bytes whose every
//!   point is, to the bit, the sum of the saved session's reports up to the point's time, as
//!   `export --openmetrics` sums them.
//! - The collector killed mid-run: the run goes on (samples keep coming, `/metrics` answers),
//!   `zescope_otlp_dropped_total` and `zescope_otlp_failed_exports_total` count what it missed,
//!   and exports resume once a collector listens on the port again.
//!
//! Without `opentelemetry-proto` the tests skip loudly (a failure with `ZESCOPE_STRICT_TESTS=1`).

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::openmetrics_same_series::labels;
use crate::support::serve::{get, served_at};

mod names;
use names::series_of;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/commands/otlp_receiver.py")
}

/// The receiver's Python has `opentelemetry-proto`; a loud skip otherwise.
fn have_proto() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        ze_sim::testing::skip(
            "the OTLP tests need python3 with opentelemetry-proto",
            "pip install opentelemetry-proto",
        );
    }
    ok
}

/// A running `otlp_receiver.py`, writing what it decodes to `out`.
struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
}

impl Receiver {
    fn start(out: &Path, port: u16) -> Receiver {
        let mut child = Command::new("python3")
            .arg(script())
            .arg(out)
            .arg(port.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().strip_prefix("listening ").and_then(|p| p.parse().ok()).unwrap_or_else(|| {
            panic!("the receiver's first line names its port: {line:?}");
        });
        Receiver { child, port, out: out.to_owned() }
    }

    /// What it decoded so far: (export headers, points); a request it could not decode fails.
    fn read(&self) -> (Vec<Value>, Vec<Value>) {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        // Whole lines only: the receiver may be writing the last one (read again at the next poll).
        let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
        let (mut exports, mut points) = (Vec::new(), Vec::new());
        for line in whole.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            assert!(v.get("error").is_none(), "the receiver could not decode an export: {v}");
            match v.get("export") {
                Some(e) => exports.push(e.clone()),
                None => points.push(v),
            }
        }
        (exports, points)
    }

    /// Waits until it has taken `n` exports with points.
    fn wait_exports(&self, n: usize, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (exports, _) = self.read();
            if exports.iter().filter(|e| e["points"].as_u64() > Some(0)).count() >= n {
                return;
            }
            assert!(Instant::now() < deadline, "{what}: {} exports after 60 s", exports.len());
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `zescope --source sim serve` on both simulated devices with `args`, `env` set; its address.
fn serve(args: &[&str], env: &[(&str, String)]) -> (Child, std::net::SocketAddr) {
    let mut c = crate::support::zescope();
    c.args(["--source", "sim", "serve", "--listen", "127.0.0.1:0", "--interval", "10ms", "--device", "0,1"])
        .args(args)
        .stdout(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let addr = served_at(&mut child);
    (child, addr)
}

/// SIGTERM, and serve's exit status is success.
fn stop(mut child: Child) {
    assert!(Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap().success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "serve did not end within 20 s of SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "serve ended with {status}");
}

/// The saved session at `session` through `export --openmetrics` (the text), and its timeline.
/// (device, group, millisecond) where the session holds more than one sample of the group's
/// stream within one backfill millisecond (a late tick, then one on time): the backfill keeps the
/// last of them, and an export may have taken an earlier one.
fn crowded(session: &Path, timeline: &Timeline) -> std::collections::HashSet<(String, String, i64)> {
    let mut store = zescope_store::Store::new(1 << 30);
    let restored = zescope_model::session::load(session).unwrap().restore_into(&mut store).unwrap();
    let (mut out, mut seen) = (std::collections::HashSet::new(), std::collections::HashSet::new());
    for (key, entry) in &restored.series {
        for stream in entry.ids.iter().map(|id| id.stream()).filter(|&s| seen.insert(s)) {
            let mut last = None;
            store.for_each_raw_row(stream, |t, _| {
                let ms = timeline.ms_of(t);
                if last == Some(ms) {
                    out.insert((key.device.clone(), key.group.clone(), ms));
                }
                last = Some(ms);
            });
        }
    }
    out
}

fn exported(session: &Path) -> (String, Timeline) {
    let om = session.with_extension("om");
    let exp = crate::support::zescope().arg("export").arg(session).arg("--openmetrics").arg(&om).output().unwrap();
    assert!(exp.status.success(), "export: {}", String::from_utf8_lossy(&exp.stderr));
    (std::fs::read_to_string(&om).unwrap(), Timeline::of(&std::fs::read(session).unwrap()))
}

/// `serve --otlp … --save SESSION` (with `args` before `--save`) exporting every 300 ms to a
/// receiver started in `dir` (`env` besides): the receiver, the session's path, the server and
/// its address.
fn serve_saving(dir: &Path, args: &[&str], env: &[(&str, String)]) -> (Receiver, PathBuf, Child, std::net::SocketAddr) {
    let rx = Receiver::start(&dir.join("got.jsonl"), 0);
    let session = dir.join("run.ron");
    let mut all = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{}", rx.port)),
        ("OTEL_METRIC_EXPORT_INTERVAL", "300".to_owned()),
    ];
    all.extend(env.iter().cloned());
    let (child, addr) = serve(&[args, &["--otlp", "--save", session.to_str().unwrap()]].concat(), &all);
    (rx, session, child, addr)
}

/// One counter of serve's page (Prometheus text), 0 when absent.
fn counter(addr: std::net::SocketAddr, name: &str) -> f64 {
    let (_, _, page) = get(addr, "/metrics", None);
    page.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok()).unwrap_or(0.0)
}

/// A series' samples in a backfill: (ms since the epoch, value), in time order.
type Samples = Vec<(i64, f64)>;

/// A series: its name and labels.
type Key = (String, BTreeMap<String, String>);

/// Every sample of each series of a backfill.
type Backfill = HashMap<Key, Samples>;

fn backfill(text: &str) -> Backfill {
    let mut out: Backfill = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (series, rest) = match line.rfind('}') {
            Some(i) => line.split_at(i + 1),
            None => line.split_at(line.find(' ').unwrap()),
        };
        let (name, labelled) = match series.split_once('{') {
            Some((n, l)) => (n, labels(l.trim_end_matches('}'))),
            None => (series, BTreeMap::new()),
        };
        let mut fields = rest.split_whitespace();
        let value: f64 = fields.next().unwrap().parse().unwrap();
        // Seconds with three decimals: the milliseconds exactly.
        let ms: i64 = fields.next().unwrap().replace('.', "").parse().unwrap();
        out.entry((name.to_owned(), labelled)).or_default().push((ms, value));
    }
    out
}

/// How a saved session's sample times become the backfill's and the wall clock's: the store's
/// origin (monotonic ns), the wall-clock ms the backfill puts there, and the clocks read together
/// when the run started (wall clock − monotonic).
struct Timeline {
    origin_ns: i64,
    start_ms: i64,
    wall_minus_monotonic: i64,
}

impl Timeline {
    /// From the session file's RON text.
    fn of(session: &[u8]) -> Timeline {
        let text = String::from_utf8_lossy(session);
        let number = |key: &str| -> i64 {
            let at = text.find(key).unwrap_or_else(|| panic!("{key} in the session"));
            let digits: String = text[at + key.len()..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse().unwrap_or_else(|_| panic!("{key} is a number in the session"))
        };
        Timeline {
            origin_ns: number("origin_ns: Some("),
            start_ms: number("started_unix_ms: "),
            wall_minus_monotonic: number("realtime_ns: ") - number("monotonic_ns: "),
        }
    }

    /// The backfill's millisecond of a sample the session holds at `monotonic_ns`.
    fn ms_of(&self, monotonic_ns: i64) -> i64 {
        self.start_ms + (monotonic_ns - self.origin_ns).div_euclid(1_000_000)
    }

    /// The backfill's milliseconds of a sample read at `unix_ns` (an exported point's time): its
    /// own, and those within [`CLOCKS_APART`] of it (the exporter and the session each read the
    /// clock pair once; those readings differ by microseconds).
    fn backfill_ms(&self, unix_ns: i64) -> (i64, std::ops::RangeInclusive<i64>) {
        let since_origin = unix_ns - self.wall_minus_monotonic - self.origin_ns;
        let ms = |ns: i64| self.start_ms + ns.div_euclid(1_000_000);
        (ms(since_origin), ms(since_origin - CLOCKS_APART)..=ms(since_origin + CLOCKS_APART))
    }
}

/// How far apart two readings of wall clock − monotonic clock in one process may be (ns).
const CLOCKS_APART: i64 = 200_000;

/// The exported point's value as the receiver wrote it: Python's `repr`, which parses back to
/// the same `f64` (serde_json's own float parsing is not exact to the last bit, which is what
/// once made matching values look missing).
fn value(p: &Value) -> f64 {
    p["value"].as_str().unwrap_or_else(|| panic!("a value as text: {p}")).parse().unwrap()
}

/// The series `(name, labels ⊇ want)` of a backfill: exactly one must match.
fn series_in<'a>(
    b: &'a Backfill,
    name: &str,
    want: &BTreeMap<String, String>,
) -> Result<(&'a Key, &'a Samples), String> {
    let found: Vec<_> =
        b.iter().filter(|((n, l), _)| n == name && want.iter().all(|(k, v)| l.get(k) == Some(v))).collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!("no series {name}{want:?} in the session")),
        more => Err(format!("{} series {name}{want:?}", more.len())),
    }
}

/// The samples a point read at backfill time `(ms, near)` may be: the one of its own millisecond
/// first, then the others within [`CLOCKS_APART`]. A series is read every 10 ms, but a read the
/// sampler makes late may be followed by the next within a millisecond, and a point read near a
/// millisecond's edge may then be the sample the backfill put in the neighbouring one (of
/// samples within one millisecond the backfill keeps the last, as the exporter does).
fn samples_at(samples: &Samples, (ms, near): &(i64, std::ops::RangeInclusive<i64>)) -> Result<Samples, String> {
    let mut found: Samples = samples.iter().filter(|(t, _)| near.contains(t)).copied().collect();
    found.sort_by_key(|(t, _)| (t != ms, (t - ms).abs()));
    if found.is_empty() {
        return Err(format!("no sample at {ms} ms (samples from {:?} to {:?})", samples.first(), samples.last()));
    }
    Ok(found)
}

/// `f` over the samples of two series read at the same millisecond, for each such millisecond
/// near the point.
fn pair_at(
    a: Result<Samples, String>,
    b: Result<Samples, String>,
    f: impl Fn(f64, f64) -> f64,
) -> Result<Samples, String> {
    let (a, b) = (a?, b?);
    let pairs: Samples =
        a.iter().filter_map(|(t, x)| b.iter().find(|(u, _)| u == t).map(|(_, y)| (*t, f(*x, *y)))).collect();
    if pairs.is_empty() {
        return Err(format!("no millisecond where both series have a sample ({a:?} and {b:?})"));
    }
    Ok(pairs)
}

#[test]
fn every_exported_point_is_the_saved_sessions_value_at_its_time() {
    if !have_proto() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-site-token=t0k3n".to_owned()),
        ("OTEL_RESOURCE_ATTRIBUTES", "site=lab1,deployment.environment=test".to_owned()),
    ];
    let (rx, session, child, addr) = serve_saving(dir.path(), &[], &env);
    // Exports from both devices, a few times each.
    rx.wait_exports(6, "exports while serving");
    // The collector took every export: nothing dropped (the last export, at the end, is checked
    // by its points below).
    assert_eq!(counter(addr, "zescope_otlp_dropped_total"), 0.0);
    assert_eq!(counter(addr, "zescope_otlp_failed_exports_total"), 0.0);
    stop(child);
    let (text, timeline) = exported(&session);
    let saved = backfill(&text);
    let crowded = crowded(&session, &timeline);

    let (exports, points) = rx.read();
    for e in &exports {
        assert_eq!(e["headers"]["x-site-token"], "t0k3n", "OTEL_EXPORTER_OTLP_HEADERS: {e}");
    }
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    let mut covered = std::collections::HashSet::new();
    let mut wrong = Vec::new();
    // Of one series' samples within one millisecond the backfill keeps the last (Prometheus holds
    // one sample a millisecond), so a point followed by a later point of its series in the same
    // millisecond (two exports apart: an interval's, then the run's last one after the final
    // read) is not in it; the later point is checked. Nor is a point taken from a millisecond in
    // which the session holds two samples of its group (a late tick, then one on time) and the
    // export took the earlier: unless it is the backfill's, it is counted as superseded too.
    let series_ms = |p: &Value| {
        (p["name"].to_string(), p["attributes"].to_string(), timeline.backfill_ms(p["time"].as_i64().unwrap()).0)
    };
    let mut last_in_ms: HashMap<(String, String, i64), i64> = HashMap::new();
    for p in &points {
        let t = p["time"].as_i64().unwrap();
        last_in_ms.entry(series_ms(p)).and_modify(|l| *l = (*l).max(t)).or_insert(t);
    }
    let mut superseded = 0;
    for p in &points {
        if p["name"] != "hw.gpu.info" && last_in_ms[&series_ms(p)] > p["time"].as_i64().unwrap() {
            superseded += 1;
            continue;
        }
        // The resource: the host, the device, then OTEL_RESOURCE_ATTRIBUTES.
        let r = &p["resource"];
        assert_eq!(r["service.name"], "zescope", "{r}");
        assert_eq!(r["site"], "lab1", "{r}");
        assert!(r["host.name"].as_str().is_some_and(|h| !h.is_empty()), "{r}");
        assert_eq!(r["hw.name"], p["attributes"]["hw.name"], "each device its own resource: {p}");
        assert_eq!(r["hw.vendor"], "Intel", "{r}");
        assert!(r["pci.bdf"].as_str().is_some_and(|b| b.starts_with("0000:")) && r["hw.id"].is_string(), "{r}");
        assert_eq!(r["hw.driver_version"], "0x10000", "{r}");
        if p["kind"] == "sum" {
            assert_eq!(p["temporality"], 2, "cumulative: {p}");
        }
        let name = p["name"].as_str().unwrap();
        if name == "hw.gpu.info" {
            assert_eq!(value(p), 1.0, "{p}");
            continue;
        }
        let ms = timeline.backfill_ms(p["time"].as_i64().unwrap());
        let device = p["attributes"]["hw.name"].as_str().unwrap().to_owned();
        let at = |family: &str, labels: &[(&str, &str)]| -> Result<Samples, String> {
            let mut want: BTreeMap<String, String> = labels.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
            want.insert("device".into(), device.clone());
            series_in(&saved, family, &want).and_then(|(_, s)| samples_at(s, &ms))
        };
        // Values computed from two series: the same computation over the session's two values.
        let want = match name {
            "hw.memory.utilization" => {
                pair_at(at("zescope_memory_used_bytes", &[]), at("zescope_memory_size_bytes", &[]), |u, s| u / s)
            }
            "hw.memory.io.rate" => pair_at(
                at("zescope_memory_read_bytes_per_second", &[]),
                at("zescope_memory_write_bytes_per_second", &[]),
                |r, w| r + w,
            ),
            _ => {
                let (family, labels) = series_of(p).unwrap_or_else(|| panic!("a series for {p}"));
                series_in(&saved, &family, &labels).and_then(|(key, s)| {
                    covered.insert(key.clone());
                    samples_at(s, &ms)
                })
            }
        };
        // The point is one of the samples its time may name, to the bit.
        match want {
            Ok(w) if w.iter().any(|(_, w)| w.to_bits() == value(p).to_bits()) => {
                *checked.entry(name.to_owned()).or_default() += 1
            }
            Ok(_)
                if p["attributes"]["zescope.group"]
                    .as_str()
                    .is_some_and(|g| crowded.contains(&(device.clone(), g.to_owned(), ms.0))) =>
            {
                superseded += 1
            }
            Ok(w) => {
                wrong.push(format!("{name} {}: {} where the session has {w:?} at {ms:?} ms", p["attributes"], value(p)))
            }
            Err(e) => wrong.push(format!("{name} {}: {e}", p["attributes"])),
        }
    }
    // Every point is the session's value of its series at its time, to the bit.
    assert!(wrong.is_empty(), "{} of {} points are not the session's:\n{wrong:#?}", wrong.len(), points.len());
    assert!(
        superseded * 10 <= points.len(),
        "{superseded} of {} points had a later one in their millisecond",
        points.len()
    );
    // Every series of the run was exported.
    let mut missing: Vec<_> = saved.keys().filter(|k| !covered.contains(*k)).collect();
    missing.sort();
    assert!(missing.is_empty(), "series of the session never exported: {missing:#?}");
    for m in
        ["zescope.gpu_time", "zescope.gpu_busy_cycles", "hw.power", "hw.energy", "hw.temperature", "hw.gpu.utilization"]
    {
        assert!(checked.get(m).is_some_and(|n| *n >= 2), "{m} checked: {checked:?}");
    }
    // Kinds and units as OTel wants them.
    let kind = |name: &str| {
        let p = points.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{name} exported"));
        (p["kind"].as_str().unwrap().to_owned(), p["monotonic"].clone(), p["unit"].as_str().unwrap().to_owned())
    };
    assert_eq!(kind("hw.energy"), ("sum".into(), Value::Bool(true), "J".into()));
    assert_eq!(kind("zescope.gpu_time"), ("sum".into(), Value::Bool(true), "s".into()));
    assert_eq!(kind("hw.power"), ("gauge".into(), Value::Null, "W".into()));
    assert_eq!(kind("hw.temperature"), ("gauge".into(), Value::Null, "Cel".into()));
    assert_eq!(kind("hw.memory.usage"), ("sum".into(), Value::Bool(false), "By".into()));
    assert_eq!(kind("hw.gpu.utilization"), ("gauge".into(), Value::Null, "1".into()));
}

#[test]
fn a_collector_down_mid_run_costs_only_its_exports_and_they_resume() {
    if !have_proto() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(&dir.path().join("first.jsonl"), 0);
    let port = rx.port;
    let env = [("OTEL_METRIC_EXPORT_INTERVAL", "200".to_owned())];
    let (child, addr) = serve(&["--otlp", &format!("http://127.0.0.1:{port}")], &env);
    rx.wait_exports(2, "exports before the collector goes");
    assert_eq!(counter(addr, "zescope_otlp_dropped_total"), 0.0);
    assert!(counter(addr, "zescope_otlp_exported_total") > 0.0);
    drop(rx);

    // Down: the run goes on and the page answers; what the exports missed is counted.
    let samples = counter(addr, "zescope_sampler_samples_total");
    let deadline = Instant::now() + Duration::from_secs(30);
    while counter(addr, "zescope_otlp_failed_exports_total") < 3.0 {
        assert!(Instant::now() < deadline, "no failed export counted while the collector is down");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(counter(addr, "zescope_otlp_dropped_total") > 0.0);
    assert!(counter(addr, "zescope_sampler_samples_total") > samples, "sampling went on");
    assert_eq!(counter(addr, "zescope_sampler_running"), 1.0);

    // Back on the same port: exports resume.
    let exported = counter(addr, "zescope_otlp_exported_total");
    let rx = Receiver::start(&dir.path().join("second.jsonl"), port);
    rx.wait_exports(2, "exports after the collector came back");
    assert!(counter(addr, "zescope_otlp_exported_total") > exported);
    // Drops were the collector's absence only: with it back, two more exports drop nothing.
    let (dropped, failed) =
        (counter(addr, "zescope_otlp_dropped_total"), counter(addr, "zescope_otlp_failed_exports_total"));
    rx.wait_exports(4, "more exports after the collector came back");
    assert_eq!(counter(addr, "zescope_otlp_dropped_total"), dropped);
    assert_eq!(counter(addr, "zescope_otlp_failed_exports_total"), failed);
    stop(child);
}

#[test]
fn record_pushes_the_run_too_and_says_what_the_collector_took() {
    if !have_proto() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(&dir.path().join("got.jsonl"), 0);
    let out = crate::support::zescope()
        .args(["--source", "sim", "record", "--device", "0,1", "--interval", "10ms", "--duration", "1500ms"])
        .arg("--otlp")
        .arg(format!("http://127.0.0.1:{}", rx.port))
        .arg("--out")
        .arg(dir.path().join("run.ron"))
        .env("OTEL_METRIC_EXPORT_INTERVAL", "200")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}\n{}", String::from_utf8_lossy(&out.stderr));
    let (exports, points) = rx.read();
    assert!(exports.len() >= 2, "{exports:?}");
    for name in ["hw.power", "hw.energy", "zescope.gpu_time", "zescope.npu_busy_time"] {
        assert!(points.iter().any(|p| p["name"] == name), "{name} exported by record");
    }
    let line = said.lines().find(|l| l.starts_with("OTLP: ")).unwrap_or_else(|| panic!("no OTLP line: {said}"));
    let exported: usize = line["OTLP: ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert_eq!(exported, points.len(), "{line}: the receiver decoded {} points", points.len());
    assert!(line.contains(", 0 dropped"), "{line}");
}

#[test]
fn a_streamers_counts_and_busy_time_are_exported_as_the_saved_sessions_running_totals() {
    if !have_proto() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let args = ["--group", "RenderBasic", "--via", "streamer", "--no-telemetry"];
    let (rx, session, child, _) = serve_saving(dir.path(), &args, &[]);
    rx.wait_exports(4, "exports while serving");
    stop(child);
    let (text, timeline) = exported(&session);
    assert!(text.contains("# TYPE zescope_l3_bytes_read_bytes counter\n"), "the backfill sums it too");
    assert!(text.contains("# TYPE zescope_render_busy_time_seconds counter\n"), "busy time is busy seconds");
    let saved = backfill(&text);
    let (_, points) = rx.read();
    // A count the streamer gives per report, summed; busy time, kept as its running total.
    for (name, unit, family_name) in [
        ("zescope.l3_bytes_read", "By", "zescope_l3_bytes_read_bytes_total"),
        ("zescope.render_busy_time", "s", "zescope_render_busy_time_seconds_total"),
    ] {
        let totals: Vec<&Value> = points.iter().filter(|p| p["name"] == name).collect();
        assert!(totals.len() >= 3, "{} points of {name}", totals.len());
        let mut last = 0.0;
        for p in &totals {
            assert_eq!(
                (p["kind"].as_str(), p["monotonic"].as_bool(), p["unit"].as_str()),
                (Some("sum"), Some(true), Some(unit))
            );
            // The total up to the report the point was read at, as the backfill of the session's
            // reports has it, to the bit.
            let (family, labels) = series_of(p).unwrap();
            assert_eq!(family, family_name);
            let ms = timeline.backfill_ms(p["time"].as_i64().unwrap());
            let want = series_in(&saved, &family, &labels).and_then(|(_, s)| samples_at(s, &ms)).unwrap();
            assert!(
                want.iter().any(|(_, w)| w.to_bits() == value(p).to_bits()),
                "{name}: {} where the session has {want:?}",
                value(p)
            );
            assert!(value(p) >= last, "{name}: a total never falls: {} after {last}", value(p));
            last = value(p);
        }
        assert!(last > 0.0, "{name} grew");
    }
}
