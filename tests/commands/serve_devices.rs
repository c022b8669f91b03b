//! `zescope serve` over several devices with their telemetry, on the simulated GPU and NPU:
//! every series carries its own device's labels, one `zescope_device_info` per device, the
//! sampler's health once per run; the telemetry families (clocks, throttle reasons, power,
//! energy, temperature, engines, memory) in base units with values a device can have; a Sysman
//! piece the driver lacks is absent and nothing else; `--no-telemetry`, record's device and group
//! errors, the textfile and `export --openmetrics` of a two-device session with telemetry.
//! promtool-backed checks skip loudly without it (a failure with `ZESCOPE_STRICT_TESTS=1`).

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::serve::{OPENMETRICS, Serve, check_metrics, get, textfile_with, tool};

/// One sample line: name, labels, value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The sample lines of a text page (either format; label values with escapes).
fn samples(page: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in page.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (name, rest) = match line.find('{') {
            Some(i) => (&line[..i], &line[i + 1..]),
            None => {
                let (n, v) = line.split_once(' ').unwrap();
                out.push(Sample { name: n.into(), labels: BTreeMap::new(), value: v.parse().unwrap() });
                continue;
            }
        };
        let mut labels = BTreeMap::new();
        let mut chars = rest.chars();
        loop {
            let key: String = chars.by_ref().take_while(|&c| c != '=').collect();
            assert_eq!(chars.next(), Some('"'), "{line}");
            let mut value = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.push(chars.next().unwrap()),
                    '"' => break,
                    c => value.push(c),
                }
            }
            labels.insert(key.trim_start_matches(',').to_owned(), value);
            let rest = chars.as_str();
            if let Some(r) = rest.strip_prefix('}') {
                let value = r.trim().split(' ').next().unwrap().parse().unwrap();
                out.push(Sample { name: name.into(), labels, value });
                break;
            }
        }
    }
    out
}

fn label<'a>(s: &'a Sample, k: &str) -> &'a str {
    s.labels.get(k).map_or("", String::as_str)
}

/// Scrapes (OpenMetrics) until `want` appears on the page (telemetry is read every 100 ms at the
/// most).
fn scrape_until(s: &Serve, want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (status, _, page) = get(s.addr, "/metrics", Some(OPENMETRICS));
        if status == 200 && page.contains(want) {
            return page;
        }
        assert!(Instant::now() < deadline, "{want} never appeared in\n{page}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn two_devices_are_served_each_with_its_own_labels_and_telemetry() {
    let dir = tempfile::tempdir().unwrap();
    let textfile = dir.path().to_str().unwrap();
    let s = Serve::start(&["--device", "0,NPU", "--group", "NPU:NpuActivity", "--textfile", textfile]);
    scrape_until(&s, "zescope_energy_joules_total{");
    std::thread::sleep(Duration::from_millis(300));
    let page = scrape_until(&s, "zescope_engine_busy_ratio{");
    let all = samples(&page);

    // One info per device, each with its own uuid; every series carries its device's.
    let info: Vec<&Sample> = all.iter().filter(|x| x.name == "zescope_device_info").collect();
    let names: Vec<&str> = info.iter().map(|x| label(x, "device")).collect();
    assert_eq!(names, ["ze-sim GPU", "ze-sim NPU"], "{page}");
    assert_ne!(label(info[0], "uuid"), label(info[1], "uuid"));
    assert!(info.iter().all(|x| label(x, "uuid").len() == 36 && label(x, "simulated") == "true"), "{page}");
    // The PCI address dashboards join on, as lspci prints it.
    let bdfs: Vec<&str> = info.iter().map(|x| label(x, "pci_bdf")).collect();
    assert_eq!(bdfs, ["0000:03:00.0", "0000:00:0b.0"], "{page}");
    for x in all.iter().filter(|x| x.name.starts_with("zescope_") && x.labels.contains_key("group")) {
        let dev = info.iter().find(|i| label(i, "device") == label(x, "device")).unwrap_or_else(|| panic!("{x:?}"));
        for k in ["uuid", "driver", "pci_bdf", "simulated"] {
            assert_eq!(label(x, k), label(dev, k), "{k} of {x:?}");
        }
        let group = label(x, "group");
        let want = match label(x, "device") {
            "ze-sim GPU" => ["ComputeBasic", "Telemetry"],
            _ => ["NpuActivity", "Telemetry"],
        };
        assert!(want.contains(&group), "{x:?}");
        assert_eq!(label(x, "source"), if group == "Telemetry" { "sysman" } else { "export" }, "{x:?}");
    }
    assert!(all.iter().any(|x| x.name == "zescope_gpu_time_seconds_total" && label(x, "device") == "ze-sim GPU"));
    assert!(all.iter().any(|x| label(x, "group") == "NpuActivity"), "the NPU's group is served:\n{page}");
    // The sampler's health is the run's, once.
    let health = all.iter().filter(|x| x.name == "zescope_sampler_samples_total").count();
    assert_eq!(health, 1, "{page}");
    assert!(!page.contains("zescope_sampler_samples_total{"), "{page}");

    // Telemetry of both devices, in base units, with values a device can have.
    let of = |name: &str, dev: &str| -> Vec<&Sample> {
        all.iter().filter(|x| x.name == name && label(x, "device") == dev).collect()
    };
    // The GPU: every piece of its Sysman.
    {
        let dev = "ze-sim GPU";
        let clocks = of("zescope_gpu_frequency_hertz", dev);
        let actual = clocks.iter().find(|x| label(x, "clock") == "actual").unwrap_or_else(|| panic!("{page}"));
        assert!((1e8..1e10).contains(&actual.value), "a clock in Hz: {actual:?}");
        assert!(clocks.iter().any(|x| label(x, "clock") == "tdp"), "{page}");
        let reasons = of("zescope_gpu_throttle_reason", dev);
        assert_eq!(reasons.len(), 7, "one gauge per reason:\n{page}");
        assert!(reasons.iter().all(|x| x.value == 0.0 || x.value == 1.0), "{reasons:?}");
        assert!(reasons.iter().any(|x| label(x, "reason") == "thermal_limit"), "{reasons:?}");
        let power = of("zescope_power_watts", dev);
        assert_eq!(power.len(), 1, "{page}");
        assert_eq!(label(power[0], "domain"), "package");
        assert!(power[0].value > 0.0 && power[0].value < 1000.0, "{:?}", power[0]);
        let energy = of("zescope_energy_joules_total", dev);
        assert!(energy.len() == 1 && energy[0].value > 0.0, "{energy:?}");
        let temps = of("zescope_temperature_celsius", dev);
        let sensors: Vec<&str> = temps.iter().map(|x| label(x, "sensor")).collect();
        assert_eq!(sensors, ["gpu", "memory"], "{page}");
        assert!(temps.iter().all(|x| (0.0..150.0).contains(&x.value)), "{temps:?}");
        let engines = of("zescope_engine_busy_ratio", dev);
        let kinds: Vec<&str> = engines.iter().map(|x| label(x, "engine")).collect();
        assert_eq!(kinds, ["compute", "copy"], "{page}");
        assert!(engines.iter().all(|x| (0.0..=1.0).contains(&x.value)), "{engines:?}");
        let size = of("zescope_memory_size_bytes", dev);
        let used = of("zescope_memory_used_bytes", dev);
        assert_eq!(size.iter().map(|x| x.value).collect::<Vec<_>>(), [(16u64 << 30) as f64], "{page}");
        assert!(used.len() == 1 && used[0].value > 0.0 && used[0].value <= size[0].value, "{used:?}");
        assert!(!of("zescope_memory_read_bytes_per_second", dev).is_empty(), "{page}");
    }
    // The NPU: what Intel's NPU driver's Sysman has, its compute engines' busy share, and none of
    // a GPU's clocks, power, temperatures or memory under its name.
    let engines = of("zescope_engine_busy_ratio", "ze-sim NPU");
    assert_eq!(engines.iter().map(|x| label(x, "engine")).collect::<Vec<_>>(), ["compute"], "{page}");
    assert!(engines.iter().all(|x| (0.0..=1.0).contains(&x.value)), "{engines:?}");
    let npu_telemetry: Vec<&str> = all
        .iter()
        .filter(|x| label(x, "device") == "ze-sim NPU" && label(x, "source") == "sysman")
        .map(|x| x.name.as_str())
        .collect();
    assert!(npu_telemetry.iter().all(|n| *n == "zescope_engine_busy_ratio"), "{npu_telemetry:?}\n{page}");
    for want in [
        "# TYPE zescope_energy_joules counter",
        "# UNIT zescope_energy_joules joules",
        "# UNIT zescope_gpu_frequency_hertz hertz",
        "# UNIT zescope_temperature_celsius celsius",
        "# UNIT zescope_engine_busy_ratio ratio",
        "# TYPE zescope_gpu_throttle_reason gauge",
    ] {
        assert!(page.contains(want), "{want} missing from\n{page}");
    }
    // The energy counter grows.
    let before = of("zescope_energy_joules_total", "ze-sim GPU")[0].value;
    std::thread::sleep(Duration::from_millis(400));
    let later = samples(&get(s.addr, "/metrics", None).2);
    let after = later.iter().find(|x| x.name == "zescope_energy_joules_total" && label(x, "device") == "ze-sim GPU");
    assert!(after.is_some_and(|x| x.value > before), "{before} then {after:?}");

    if let Some(promtool) = tool("promtool") {
        let (_, _, text) = get(s.addr, "/metrics", Some("text/plain;version=0.0.4"));
        assert_eq!(check_metrics(&promtool, &text), "", "on\n{text}");
        // The textfile has both devices and their telemetry too.
        let file = dir.path().join("zescope.prom");
        let text = textfile_with(&file, "zescope_engine_busy_ratio{device=\"ze-sim NPU\"");
        assert_eq!(samples(&text).iter().filter(|x| x.name == "zescope_device_info").count(), 2, "{text}");
        assert_eq!(check_metrics(&promtool, &text), "", "on\n{text}");
    }
    s.stop();
}

#[test]
fn a_sysman_piece_the_driver_lacks_is_absent_and_nothing_else() {
    let s = Serve::start_with(&["--device", "0"], Some("(sysman: (failing: [Power]))"));
    let page = scrape_until(&s, "zescope_temperature_celsius{");
    assert!(!page.contains("zescope_power_watts") && !page.contains("zescope_energy"), "{page}");
    assert!(page.contains("zescope_gpu_frequency_hertz{") && page.contains("zescope_gpu_time_seconds_total{"));
    assert!(page.contains("zescope_sampler_errors_total 0\n"), "a missing piece is no error:\n{page}");
    if let Some(promtool) = tool("promtool") {
        let (_, _, text) = get(s.addr, "/metrics", Some("text/plain;version=0.0.4"));
        assert_eq!(check_metrics(&promtool, &text), "", "on\n{text}");
    }
    s.stop();

    let s = Serve::start_with(&[], Some("(sysman: (available: false))"));
    let page = scrape_until(&s, "zescope_gpu_time_seconds_total{");
    assert!(!page.contains("source=\"sysman\""), "{page}");
    assert!(page.contains("zescope_sampler_errors_total 0\n"), "no Sysman is no error:\n{page}");
    s.stop();
}

#[test]
fn no_telemetry_and_records_device_and_group_errors() {
    let s = Serve::start(&["--no-telemetry", "--device", "0,1"]);
    let page = scrape_until(&s, "group=\"NpuActivity\"");
    assert!(!page.contains("source=\"sysman\"") && !page.contains("zescope_temperature"), "{page}");
    assert_eq!(page.matches("zescope_device_info{").count(), 2, "{page}");
    s.stop();

    let serve = |args: &[&str]| {
        let out = crate::support::zescope()
            .args(["--source", "sim", "serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("ZE_SIM_CONFIG")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} is refused");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = serve(&["--device", "0", "--group", "NPU:NpuActivity"]);
    assert!(err.contains("--group NPU:NpuActivity") && err.contains("not one of the devices"), "{err}");
    let err = serve(&["--device", "0,1", "--group", "Nothing"]);
    assert!(err.contains("--group Nothing") && err.contains("ze-sim GPU, ze-sim NPU"), "{err}");
    let err = serve(&["--device", "7"]);
    assert!(err.contains('7'), "{err}");
}

#[test]
fn an_exported_two_device_session_with_telemetry_backfills() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.ron");
    let rec = crate::support::zescope()
        .args(["--source", "sim", "record", "--device", "0,1", "--interval", "5ms", "--duration", "1s", "--out"])
        .arg(&run)
        .env_remove("ZE_SIM_CONFIG")
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", String::from_utf8_lossy(&rec.stderr));
    let om = dir.path().join("run.om");
    let exp = crate::support::zescope().arg("export").arg(&run).arg("--openmetrics").arg(&om).output().unwrap();
    assert!(exp.status.success(), "{}", String::from_utf8_lossy(&exp.stderr));
    let text = std::fs::read_to_string(&om).unwrap();
    let all = samples(&text);
    // Each device's telemetry as its driver offers it: the GPU's power, temperature and throttle
    // reasons; the NPU's engines only (as Intel's NPU driver).
    for (dev, names) in [
        ("ze-sim GPU", &["zescope_power_watts", "zescope_temperature_celsius", "zescope_gpu_throttle_reason"][..]),
        ("ze-sim NPU", &["zescope_engine_busy_ratio"][..]),
    ] {
        for name in names {
            let mine: Vec<&Sample> = all.iter().filter(|x| x.name == *name && label(x, "device") == dev).collect();
            assert!(!mine.is_empty(), "no {name} of {dev}");
            assert!(mine.iter().all(|x| label(x, "source") == "sysman" && label(x, "group") == "Telemetry"));
        }
    }
    let energy: Vec<f64> = all
        .iter()
        .filter(|x| x.name == "zescope_energy_joules_total" && label(x, "device") == "ze-sim GPU")
        .map(|x| x.value)
        .collect();
    assert!(energy.len() > 3 && energy.windows(2).all(|w| w[0] <= w[1]), "{energy:?}");
    assert!(!all.iter().any(|x| x.name == "zescope_energy_joules_total" && label(x, "device") == "ze-sim NPU"));
    assert!(text.contains("# TYPE zescope_energy_joules counter\n"), "{text}");
    assert!(all.iter().any(|x| x.name == "zescope_gpu_throttle_reason" && label(x, "reason") == "thermal_limit"));
    let Some(promtool) = tool("promtool") else { return };
    let out = Command::new(promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&om)
        .arg(dir.path().join("blocks"))
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "promtool: {said}");
}
