//! The fleet files `dist/` ships (and the .deb installs under `/usr/share/zescope/`): the Grafana
//! dashboard `zescope-dashboard.json` and the Prometheus alert rules `zescope-rules.yml`, checked
//! against what `zescope serve` really exposes.
//!
//! - The dashboard is importable as Grafana expects it: a `datasource` variable every panel and
//!   query uses, `job`/`instance`/`device` query variables, one row repeated per device, and the
//!   panels a GPU engineer looks for (busy, frequency, throttling, power, energy, temperature,
//!   memory, the sampler's health).
//! - `promtool check rules` accepts the rule file, and every expression of the dashboard wrapped
//!   as a recording rule.
//! - A real Prometheus (Debian's `prometheus`) scraping `zescope serve --processes` on the
//!   simulated GPU and NPU, with the rule file loaded: every dashboard expression (Grafana's variables substituted
//!   as Grafana would, `$device` once per device), every query variable's `label_values`, and
//!   every alert's expression returns at least one series through the HTTP API
//!   (`/api/v1/query`). An alert's condition is a threshold that should not hold on a healthy
//!   device, so it is evaluated with `bool` on its comparisons (`x > bool 95`): one 0/1 series per
//!   series its selectors match, so a misspelt metric or label still returns nothing. Every rule
//!   Prometheus evaluates reports health `ok` (`/api/v1/rules`).
//!
//! Without promtool/prometheus those parts skip loudly (a failure with `ZESCOPE_STRICT_TESTS=1`).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::prometheus::Prometheus;
use crate::support::serve::{Serve, request, tool};

fn dist(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("dist").join(name)
}

fn dashboard() -> Value {
    let text = std::fs::read_to_string(dist("zescope-dashboard.json")).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("dist/zescope-dashboard.json is not JSON: {e}"))
}

/// Every panel, rows' nested (collapsed) panels included.
fn panels(d: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for p in d["panels"].as_array().expect("panels") {
        out.push(p);
        out.extend(p["panels"].as_array().into_iter().flatten());
    }
    out
}

/// (panel title, PromQL) of every query of every panel.
fn dashboard_exprs(d: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in panels(d) {
        for t in p["targets"].as_array().into_iter().flatten() {
            let expr = t["expr"].as_str().unwrap_or_else(|| panic!("a query of {} has no expr", p["title"]));
            out.push((p["title"].as_str().unwrap_or("").to_owned(), expr.to_owned()));
        }
    }
    out
}

/// The dashboard's query variables: (name, query).
fn variables(d: &Value) -> Vec<(String, String)> {
    d["templating"]["list"]
        .as_array()
        .expect("templating.list")
        .iter()
        .filter(|v| v["type"] == "query")
        .map(|v| (v["name"].as_str().unwrap().to_owned(), v["query"]["query"].as_str().unwrap().to_owned()))
        .collect()
}

/// An expression as Grafana sends it for `device`: every dashboard variable and Grafana's own
/// interval variables replaced (the rate interval and range long enough for a few seconds of 1 s
/// scrapes, as Grafana's are for its own scrape interval).
fn substituted(expr: &str, device: &str) -> String {
    let out = expr
        .replace("$__rate_interval", "1m")
        .replace("$__interval", "5s")
        .replace("$__range", "5m")
        .replace("$job", "zescope")
        .replace("$instance", ".*")
        .replace("$device", device);
    assert!(!out.contains('$'), "a variable the check does not substitute: {expr}");
    out
}

/// `label_values(SELECTOR, LABEL)` as the PromQL Prometheus answers it with: `count by (LABEL)
/// (SELECTOR)`.
fn label_values_query(q: &str) -> String {
    let inner = q.strip_prefix("label_values(").and_then(|r| r.strip_suffix(')')).unwrap_or_else(|| panic!("{q}"));
    let (selector, label) = inner.rsplit_once(',').unwrap_or_else(|| panic!("{q}"));
    format!("count by ({}) ({})", label.trim(), selector.trim())
}

/// The alert rules of the rule file: (name, expr). Each rule's `expr` is one line (the test
/// checks that, so a multi-line expression cannot slip past it).
fn alerts(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("- alert: ") {
            out.push((name.to_owned(), String::new()));
        } else if let Some(expr) = line.strip_prefix("expr: ") {
            let last = out.last_mut().expect("an expr before any alert");
            assert!(last.1.is_empty(), "{} has two exprs", last.0);
            assert!(!matches!(expr, "|" | ">" | "|-" | ">-"), "{}: write its expr on one line", last.0);
            last.1 = expr.to_owned();
        }
    }
    assert!(out.iter().all(|(n, e)| !e.is_empty() && !n.is_empty()), "{out:?}");
    out
}

/// `expr` with `bool` after each comparison operator outside label matchers and strings: the
/// comparison then yields 0 or 1 for every series instead of filtering.
pub(crate) fn with_bool(expr: &str) -> String {
    let b = expr.as_bytes();
    let mut out = String::new();
    let (mut braces, mut quote) = (0usize, None::<u8>);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == b'\\' {
                out.push_str(&expr[i..i + 2]);
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
        } else if c == b'"' || c == b'\'' {
            quote = Some(c);
        } else if c == b'{' {
            braces += 1;
        } else if c == b'}' {
            braces -= 1;
        } else if braces == 0 {
            let two = &expr[i..(i + 2).min(b.len())];
            let op = if [">=", "<=", "==", "!="].contains(&two) {
                Some(two)
            } else if c == b'>' || c == b'<' {
                Some(&expr[i..i + 1])
            } else {
                None
            };
            if let Some(op) = op {
                out.push_str(op);
                i += op.len();
                if !expr[i..].trim_start().starts_with("bool") {
                    out.push_str(" bool");
                }
                continue;
            }
        }
        out.push(c as char);
        i += 1;
    }
    out
}

#[test]
fn bool_goes_after_comparisons_only() {
    assert_eq!(with_bool(r#"up{job="z"} == 0"#), r#"up{job="z"} == bool 0"#);
    assert_eq!(with_bool(r#"a{x!="1",y=~"p|q"} > 30 or b <= 2"#), r#"a{x!="1",y=~"p|q"} > bool 30 or b <= bool 2"#);
    assert_eq!(with_bool(r#"x{s="a>b"} != bool 1"#), r#"x{s="a>b"} != bool 1"#);
    assert_eq!(with_bool("rate(a[5m]) < 0.9 * b"), "rate(a[5m]) < bool 0.9 * b");
    assert_eq!(
        label_values_query(r#"label_values(m{job="$job"}, instance)"#),
        r#"count by (instance) (m{job="$job"})"#
    );
    let rules = "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n      - alert: B\n        expr: x > 1\n";
    assert_eq!(alerts(rules), [("A".to_owned(), "up == 0".to_owned()), ("B".to_owned(), "x > 1".to_owned())]);
}

#[test]
fn the_dashboard_is_importable_with_a_row_per_device_and_the_panels_engineers_look_for() {
    let d = dashboard();
    assert!(d["uid"].as_str().is_some_and(|u| !u.is_empty()) && d["title"].is_string());
    let vars = d["templating"]["list"].as_array().unwrap();
    let var = |name: &str| vars.iter().find(|v| v["name"] == name).unwrap_or_else(|| panic!("no ${name} variable"));
    assert_eq!(var("datasource")["type"], "datasource");
    assert_eq!(var("datasource")["query"], "prometheus");
    for name in ["job", "instance", "device"] {
        assert_eq!(var(name)["type"], "query", "${name}");
        assert_eq!(var(name)["datasource"]["uid"], "${datasource}", "${name}");
    }
    assert_eq!(var("device")["multi"], true);
    // Every panel that queries goes through the datasource variable, never a fixed data source.
    let all = panels(&d);
    for p in all.iter().filter(|p| p["type"] != "row") {
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        for t in p["targets"].as_array().into_iter().flatten() {
            assert_eq!(t["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        }
    }
    let ids: BTreeSet<u64> = all.iter().map(|p| p["id"].as_u64().expect("an id")).collect();
    assert_eq!(ids.len(), all.len(), "panel ids are unique");
    assert!(all.iter().all(|p| p["gridPos"]["x"].as_u64().unwrap() + p["gridPos"]["w"].as_u64().unwrap() <= 24));
    // One row per device: the row repeats over $device, and every panel after it asks for that
    // device only.
    let top = d["panels"].as_array().unwrap();
    let row = top.iter().position(|p| p["type"] == "row" && p["repeat"] == "device").expect("a row repeated by device");
    let per_device: Vec<&Value> = top[row + 1..].iter().take_while(|p| p["type"] != "row").collect();
    for p in &per_device {
        for t in p["targets"].as_array().unwrap() {
            assert!(t["expr"].as_str().unwrap().contains(r#"device="$device""#), "{}: {}", p["title"], t["expr"]);
        }
    }
    let titles: Vec<String> = per_device.iter().map(|p| p["title"].as_str().unwrap().to_lowercase()).collect();
    for want in ["busy", "frequency", "throttl", "power", "energy", "temperature", "memory", "processes"] {
        assert!(titles.iter().any(|t| t.contains(want)), "no {want} panel in the device row: {titles:?}");
    }
    let health: Vec<String> = top[..row]
        .iter()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .map(|t| t["expr"].to_string())
        .collect();
    for want in [
        "zescope_sampler_achieved_rate_hertz",
        "zescope_sampler_last_sample_age_seconds",
        "up{",
        "zescope_sampler_dropped_samples_total",
        "zescope_device_info",
    ] {
        assert!(health.iter().any(|e| e.contains(want)), "the sampler's health lacks {want}: {health:?}");
    }
}

/// `promtool check rules` on `path`; its output when it fails.
fn check_rules(promtool: &Path, path: &Path) -> Result<(), String> {
    let out = Command::new(promtool).args(["check", "rules"]).arg(path).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() { Ok(()) } else { Err(said) }
}

#[test]
fn promtool_accepts_the_rules_and_every_dashboard_expression() {
    let Some(promtool) = tool("promtool") else { return };
    check_rules(&promtool, &dist("zescope-rules.yml")).unwrap_or_else(|e| panic!("dist/zescope-rules.yml: {e}"));
    // The dashboard's expressions, Grafana's variables substituted, as recording rules.
    let d = dashboard();
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    let exprs = dashboard_exprs(&d);
    assert!(exprs.len() >= 15, "{exprs:?}");
    for (i, (_, expr)) in exprs.iter().enumerate() {
        rules += &format!("      - record: dashboard:expr_{i}\n        expr: {:?}\n", substituted(expr, "ze-sim GPU"));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dashboard.yml");
    std::fs::write(&file, &rules).unwrap();
    check_rules(&promtool, &file).unwrap_or_else(|e| panic!("{e}\n{rules}"));
}

/// A URL query component: everything but unreserved characters percent-encoded.
fn url_encoded(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A GET as HTTP/1.0, so the answer comes whole rather than chunked: (status, body).
pub(crate) fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let (status, _, body) = request(addr, &format!("GET {path} HTTP/1.0\r\nHost: prometheus\r\n\r\n"));
    (status, body)
}

/// Prometheus' answer to an instant query: the result's series, or what went wrong (also: it
/// does not listen yet).
pub(crate) fn query(prom: SocketAddr, q: &str) -> Result<Vec<Value>, String> {
    std::net::TcpStream::connect(prom).map_err(|e| format!("Prometheus at {prom}: {e}"))?;
    let (status, body) = get(prom, &format!("/api/v1/query?query={}", url_encoded(q)));
    let v: Value = serde_json::from_str(&body).map_err(|e| format!("HTTP {status}, not JSON ({e}): {body}"))?;
    if v["status"] != "success" {
        return Err(format!("{}: {}", v["errorType"], v["error"]));
    }
    Ok(v["data"]["result"].as_array().cloned().unwrap_or_default())
}

/// A Prometheus on loopback scraping `target` every second as job `zescope`, evaluating
/// `rules` every second.
fn start_prometheus(binary: &Path, target: SocketAddr, rules: &Path) -> Prometheus {
    Prometheus::start(
        binary,
        &format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nrule_files:\n  - \
             {}\nscrape_configs:\n  - job_name: zescope\n    static_configs:\n      - targets: ['{target}']\n",
            rules.display()
        ),
    )
}

/// Families only a GPU's Sysman gives (an NPU's driver offers its engine groups alone).
const GPU_ONLY: [&str; 6] = [
    "zescope_gpu_frequency_hertz",
    "zescope_gpu_throttle_reason",
    "zescope_power_watts",
    "zescope_energy_joules_total",
    "zescope_temperature_celsius",
    "zescope_memory_",
];

#[test]
fn every_expression_returns_series_from_a_real_prometheus_scraping_serve() {
    let Some(prometheus) = tool("prometheus") else { return };
    let s = Serve::start(&["--device", "0,1", "--processes"]);
    let prom = start_prometheus(&prometheus, s.addr, &dist("zescope-rules.yml"));

    // What must answer: the dashboard's expressions for each device, its variables' label
    // values, and each alert's condition with `bool` comparisons.
    let d = dashboard();
    let mut checks: Vec<(String, String)> = Vec::new();
    // The NPU's Sysman is its engine groups only (as Intel's NPU driver's): panels over clocks,
    // power, energy, temperature and memory answer nothing for it, and must not.
    let gpu_only = |expr: &str| GPU_ONLY.iter().any(|f| expr.contains(f));
    let mut npu_empty = Vec::new();
    for device in ["ze-sim GPU", "ze-sim NPU"] {
        for (title, expr) in dashboard_exprs(&d) {
            let check = (format!("panel {title:?} for {device}"), substituted(&expr, device));
            if device == "ze-sim NPU" && gpu_only(&expr) { npu_empty.push(check) } else { checks.push(check) }
        }
    }
    assert!(npu_empty.len() >= 5, "{npu_empty:#?}");
    for (name, q) in variables(&d) {
        checks.push((format!("variable ${name}"), substituted(&label_values_query(&q), "ze-sim GPU")));
    }
    let rules = std::fs::read_to_string(dist("zescope-rules.yml")).unwrap();
    let alerts = alerts(&rules);
    assert!(alerts.len() >= 5, "{alerts:?}");
    for (name, expr) in &alerts {
        checks.push((format!("alert {name}"), with_bool(expr)));
    }

    // Until every one answers (rates need two scrapes), or a minute has passed.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut failing = checks.clone();
    while !failing.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
        failing.retain(|(_, q)| !query(prom.addr, q).is_ok_and(|r| !r.is_empty()));
    }
    let said: Vec<String> =
        failing.iter().map(|(what, q)| format!("{what}: {q}\n  -> {:?}", query(prom.addr, q))).collect();
    assert!(said.is_empty(), "no series for:\n{}\nPrometheus' log:\n{}", said.join("\n"), prom.log());
    for (what, q) in &npu_empty {
        assert_eq!(query(prom.addr, q), Ok(vec![]), "{what}: {q}");
    }

    // The alert rules as Prometheus itself evaluates them: loaded, every one healthy.
    let (_, body) = get(prom.addr, "/api/v1/rules");
    let v: Value = serde_json::from_str(&body).unwrap();
    let loaded: Vec<&Value> =
        v["data"]["groups"].as_array().into_iter().flatten().flat_map(|g| g["rules"].as_array().unwrap()).collect();
    assert_eq!(loaded.len(), alerts.len(), "{body}");
    for r in loaded {
        assert_eq!(r["health"], "ok", "{}: {}", r["name"], r["lastError"]);
    }
    drop(prom);
    s.stop();
}
