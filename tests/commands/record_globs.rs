//! `zescope record` with glob `--group` and `--metric` on a realistic catalogue (ze-sim's
//! `catalog: Realistic`): a pattern records what it matches, and one that matches nothing — or
//! several groups of one domain — is refused with an error naming it, before anything runs.

use std::path::PathBuf;
use std::process::Output;

use ze_sim::catalog::realistic_groups;

struct Run {
    dir: tempfile::TempDir,
}

impl Run {
    fn new() -> Run {
        Run { dir: tempfile::tempdir().unwrap() }
    }
    fn csv(&self) -> PathBuf {
        self.dir.path().join("run.csv")
    }
    fn record(&self, args: &[&str]) -> Output {
        let config = crate::support::realistic_catalog(self.dir.path());
        let report = self.dir.path().join("report.ron");
        crate::support::zescope()
            .args(["record", "--source", "sim", "--no-telemetry", "--duration", "1s"])
            .args(args)
            .arg("--out")
            .arg(self.csv())
            .env("ZE_SIM_CONFIG", config)
            .env("ZE_SIM_REPORT", report)
            .output()
            .unwrap()
    }
    /// The CSV's header (without `time_s`) and its value columns.
    fn columns(&self) -> (Vec<String>, Vec<Vec<f64>>) {
        let text = std::fs::read_to_string(self.csv()).unwrap();
        let mut lines = text.lines();
        let header: Vec<String> = lines.next().unwrap().split(',').skip(1).map(str::to_owned).collect();
        let mut cols = vec![Vec::new(); header.len()];
        for l in lines {
            for (c, v) in cols.iter_mut().zip(l.split(',').skip(1)) {
                if let Ok(x) = v.parse() {
                    c.push(x);
                }
            }
        }
        (header, cols)
    }
    fn assert_clean_report(&self) {
        let text = std::fs::read_to_string(self.dir.path().join("report.ron")).unwrap();
        let r: ze_sim::Report = ron::from_str(&text).unwrap();
        assert!(r.is_clean(), "{text}");
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_group_and_a_metric_pattern_record_what_they_match() {
    let run = Run::new();
    let o = run.record(&["--group", "ComputeB*", "--metric", "Gpu*"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (header, cols) = run.columns();
    let compute = realistic_groups().into_iter().find(|g| g.name == "ComputeBasic").unwrap();
    let wanted: Vec<String> =
        compute.metrics.iter().filter(|m| m.name.starts_with("Gpu")).map(|m| m.name.clone()).collect();
    let got: Vec<String> = header.iter().map(|h| h.split(" [").next().unwrap().to_owned()).collect();
    let expected: Vec<String> = wanted.iter().map(|m| format!("ComputeBasic/{m}")).collect();
    assert_eq!(got, expected, "exactly the matching metrics of the matching group");
    let busy = &cols[got.iter().position(|h| h == "ComputeBasic/GpuBusy").unwrap()];
    assert!(busy.len() >= 5 && busy.iter().all(|v| (0.0..=100.0).contains(v)), "GpuBusy is a percentage");
    run.assert_clean_report();
}

#[test]
fn an_exported_groups_metrics_decode_in_their_result_types() {
    let run = Run::new();
    let o = run.record(&["--group", "Engine*", "--via", "export"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (header, cols) = run.columns();
    let col =
        |name: &str| &cols[header.iter().position(|h| h.starts_with(&format!("EngineActivity/{name} "))).unwrap()];
    assert!(col("EngineUtilization").iter().all(|v| (0.0..=100.0).contains(v)), "an f32 slot read as f32");
    assert!(col("EngineContextId").iter().all(|v| *v == 32.0), "a u32 slot read as u32");
    let busy = col("EngineBusyTime");
    assert!(busy.iter().skip(1).all(|v| (0.0..=1.01e9).contains(v)), "a running total in ns, plotted as ns/s");
    run.assert_clean_report();
}

#[test]
fn a_pattern_that_matches_nothing_or_one_domain_twice_is_refused_by_name() {
    let run = Run::new();
    let o = run.record(&["--group", "Nope*"]);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(err.contains("--group Nope*: matches no metric group of ze-sim GPU; its groups: ComputeBasic, "), "{err}");
    let o = run.record(&["--group", "ComputeBasic", "--metric", "Gpu*", "--metric", "Nope*"]);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(err.contains("--metric Nope*: matches no metric of the groups to record (ComputeBasic)"), "{err}");
    let o = run.record(&["--group", "Compute*"]);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(
        err.contains(
            "--group Compute*: matches ComputeBasic, ComputeExtended, ComputeL3Cache of ze-sim GPU, all in domain 0"
        ),
        "{err}"
    );
    assert!(!run.csv().exists(), "nothing ran");
}
