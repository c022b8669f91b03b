//! `serve --names`: the telemetry under xpumd's `hw_*` names (docs/otel.md), as xpumd's Grafana
//! dashboard and its documented alert rules read them.
//!
//! - The page under `--names xpumd` has the `hw_*` families with xpumd's labels, no longer the
//!   `zescope_*` telemetry families they replace, still the metric groups' `zescope_*` families;
//!   `--names zescope,xpumd` has both; promtool accepts both pages.
//! - A real Prometheus scraping `serve --names xpumd` on the simulated GPU and NPU (with the
//!   `node` label xpumd's ServiceMonitor adds) evaluates the expressions of xpumd's alert rules
//!   whose inputs zescope gives (`GpuPowerUsageHigh` with the `package` sensor location, as the
//!   rules' own note invites; `GpuTemperatureHigh`; `GpuMemoryUsageHigh`), with `bool` on their
//!   comparisons so each returns a series per device, and the queries of xpumd's dashboard
//!   panels that zescope can answer. The two rules on `hw_status`/`hw_errors_total` are listed
//!   in docs/otel.md as not given.
//!
//! Without promtool/prometheus those parts skip loudly (a failure with `ZESCOPE_STRICT_TESTS=1`).

use std::time::{Duration, Instant};

use crate::dashboard::{get, query, with_bool};
use crate::support::prometheus::Prometheus;
use crate::support::serve::{Serve, check_metrics, tool};

/// Family names (`# TYPE` lines) of a Prometheus text page.
fn families(page: &str) -> Vec<String> {
    page.lines().filter_map(|l| l.strip_prefix("# TYPE ")).map(|l| l.split(' ').next().unwrap().to_owned()).collect()
}

fn page(s: &Serve) -> String {
    // Until telemetry arrived, its rates too: power and the engines' busy shares come from the
    // second read on, and each read of a counter waits for a span a rate can be believed over
    // (so on a loaded machine one may come a read after the other).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, _, body) = crate::support::serve::get(s.addr, "/metrics", None);
        if body.contains("temperature")
            && body.contains("hw_power_watts{")
            && body.contains("hw_gpu_utilization_ratio{")
            && !body.contains("zescope_sampler_samples_total 0")
        {
            return body;
        }
        assert!(Instant::now() < deadline, "no telemetry on the page:\n{body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn names_xpumd_serves_the_telemetry_under_xpumds_names_and_the_rest_under_zescopes() {
    let s = Serve::start(&["--device", "0,1", "--names", "xpumd"]);
    let text = page(&s);
    let f = families(&text);
    for want in [
        "hw_gpu_info",
        "hw_power_watts",
        "hw_energy_joules_total",
        "hw_temperature_celsius",
        "hw_frequency_hertz",
        "hw_frequency_throttle_status",
        "hw_gpu_utilization_ratio",
        "hw_memory_usage_bytes",
        "hw_memory_size_bytes",
        "hw_memory_utilization_ratio",
    ] {
        assert!(f.iter().any(|x| x == want), "{want} missing: {f:?}");
    }
    for gone in ["zescope_power_watts", "zescope_temperature_celsius", "zescope_engine_busy_ratio"] {
        assert!(!f.iter().any(|x| x == gone), "{gone} is served under xpumd's name only: {f:?}");
    }
    assert!(f.iter().any(|x| x == "zescope_gpu_busy_cycles_total"), "OA counters keep zescope's names: {f:?}");
    let power = text.lines().find(|l| l.starts_with("hw_power_watts{") && l.contains("ze-sim GPU")).unwrap();
    for label in ["hw_id=\"", "pci_bdf=\"0000:", "hw_sensor_location=\"package\""] {
        assert!(power.contains(label), "{label} in {power}");
    }
    if let Some(promtool) = tool("promtool") {
        check_metrics(&promtool, &text);
    }
    s.stop();

    let s = Serve::start(&["--names", "zescope,xpumd"]);
    let text = page(&s);
    let f = families(&text);
    assert!(f.iter().any(|x| x == "hw_power_watts") && f.iter().any(|x| x == "zescope_power_watts"), "{f:?}");
    if let Some(promtool) = tool("promtool") {
        check_metrics(&promtool, &text);
    }
    s.stop();
}

/// The expressions of xpumd's documented alert rules whose inputs zescope gives.
const ALERTS: [(&str, &str); 3] = [
    ("GpuPowerUsageHigh", r#"hw_power_watts{pci_bdf!="",hw_sensor_location="package"} > 99"#),
    ("GpuTemperatureHigh", r#"hw_temperature_celsius{pci_bdf!="",hw_sensor_location="gpu",statistic="max"} > 85"#),
    ("GpuMemoryUsageHigh", r#"hw_memory_utilization_ratio{pci_bdf!="",hw_memory_location="device"} > 0.95"#),
];

/// Queries of xpumd's dashboard panels that zescope answers (`$Node` = the scrape's `node`).
const PANELS: [&str; 10] = [
    r#"avg by (pci_bdf) (hw_gpu_utilization_ratio{node="n1"})"#,
    r#"avg by (pci_bdf,hw_gpu_task) (hw_gpu_utilization_ratio{node="n1"})"#,
    r#"hw_frequency_hertz{aggregation="avg", node="n1"}"#,
    r#"hw_temperature_celsius{statistic="max",node="n1", hw_sensor_location="gpu"}"#,
    r#"hw_temperature_celsius{statistic="max",node="n1", hw_sensor_location="memory"}"#,
    r#"hw_power_watts{node="n1"}"#,
    r#"hw_energy_joules_total{node="n1"}"#,
    r#"hw_memory_usage_bytes{node="n1"}"#,
    r#"hw_memory_usage_bytes{node="n1"}/hw_memory_size_bytes{node="n1"}"#,
    r#"count(hw_gpu_info{node="n1"}) by (node)"#,
];

#[test]
fn xpumds_alert_rules_and_dashboard_queries_return_data_from_a_real_prometheus() {
    let Some(prometheus) = tool("prometheus") else { return };
    let s = Serve::start(&["--device", "0,1", "--names", "xpumd"]);
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("xpumd-rules.yml");
    let mut text = String::from("groups:\n  - name: xpum-alerts\n    rules:\n");
    for (name, expr) in ALERTS {
        text += &format!("      - alert: {name}\n        expr: {expr:?}\n        for: 20s\n");
    }
    std::fs::write(&rules, text).unwrap();
    let prom = Prometheus::start(
        &prometheus,
        &format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {}\n\
             scrape_configs:\n  - job_name: xpumd\n    static_configs:\n      - targets: ['{}']\n        labels:\n          \
             node: n1\n",
            rules.display(),
            s.addr
        ),
    );
    // Each alert's condition with `bool`: one 0/1 series per device it selects (the GPU: the
    // NPU's driver gives no power, temperature or memory, only engines); each panel's query at
    // least one series.
    let mut checks: Vec<(String, String, usize)> =
        ALERTS.iter().map(|(n, e)| (format!("alert {n}"), with_bool(e), 1)).collect();
    checks.extend(PANELS.iter().map(|q| (format!("panel {q}"), (*q).to_owned(), 1)));
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut failing = checks.clone();
    while !failing.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
        failing.retain(|(_, q, n)| !query(prom.addr, q).is_ok_and(|r| r.len() >= *n));
    }
    let said: Vec<String> = failing
        .iter()
        .map(|(what, q, n)| format!("{what} (≥ {n} series): {q}\n  -> {:?}", query(prom.addr, q)))
        .collect();
    assert!(said.is_empty(), "no series for:\n{}\nPrometheus' log:\n{}", said.join("\n"), prom.log());
    for (name, expr) in ALERTS {
        let devices: Vec<serde_json::Value> =
            query(prom.addr, &with_bool(expr)).unwrap().iter().map(|r| r["metric"]["hw_name"].clone()).collect();
        assert_eq!(devices, ["ze-sim GPU"], "{name}");
    }
    // The simulated GPU draws 180 W: the power alert's condition holds there and is pending.
    let on = query(prom.addr, ALERTS[0].1).unwrap();
    assert!(on.iter().any(|r| r["metric"]["hw_name"] == "ze-sim GPU"), "{on:?}");
    let (_, body) = get(prom.addr, "/api/v1/rules");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let loaded: Vec<&serde_json::Value> =
        v["data"]["groups"].as_array().into_iter().flatten().flat_map(|g| g["rules"].as_array().unwrap()).collect();
    assert_eq!(loaded.len(), ALERTS.len(), "{body}");
    for r in loaded {
        assert_eq!(r["health"], "ok", "{}: {}", r["name"], r["lastError"]);
    }
    drop(prom);
    s.stop();
}
