//! `zescope record` as a user runs it: through the built-in simulated device and through the
//! REAL Level Zero loader with `libze_sim.so`, for a fixed duration and interrupted by SIGINT or
//! SIGTERM. Each time the CSV holds counters that move and the driver's report is clean.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ze_sim::testing;

struct RecordDir {
    dir: tempfile::TempDir,
}

impl RecordDir {
    fn new() -> RecordDir {
        RecordDir { dir: tempfile::tempdir().unwrap() }
    }
    fn csv(&self) -> PathBuf {
        self.dir.path().join("run.csv")
    }
    fn report(&self) -> PathBuf {
        self.dir.path().join("report.ron")
    }
    fn command(&self, args: &[&str], alt_driver: Option<&Path>) -> Command {
        let mut c = crate::support::zescope();
        c.arg("record").args(args).arg("--out").arg(self.csv());
        c.env("ZE_SIM_REPORT", self.report()).env_remove("ZE_SIM_CONFIG").env_remove("ZE_ENABLE_ALT_DRIVERS");
        if let Some(so) = alt_driver {
            c.env("ZE_ENABLE_ALT_DRIVERS", so);
        }
        c
    }

    /// Rows of the CSV: header and values of the first counter column.
    fn first_counter(&self) -> (Vec<String>, Vec<f64>) {
        let text = std::fs::read_to_string(self.csv()).unwrap_or_default();
        let mut lines = text.lines();
        let header: Vec<String> = lines.next().unwrap_or("").split(',').map(str::to_owned).collect();
        let values = lines.filter_map(|l| l.split(',').nth(1)?.parse().ok()).collect();
        (header, values)
    }

    fn assert_clean_report(&self) {
        let text = std::fs::read_to_string(self.report()).expect("the driver wrote ZE_SIM_REPORT at exit");
        let r: ze_sim::Report = ron::from_str(&text).unwrap();
        assert!(r.is_clean(), "{text}");
    }

    fn assert_counters_move(&self) {
        let (header, gpu_time) = self.first_counter();
        assert_eq!(header[0], "time_s");
        assert_eq!(header[1], "ComputeBasic/GpuTime [ns]", "units in the header: {header:?}");
        assert!(gpu_time.len() > ROWS, "{} rows", gpu_time.len());
        assert!(gpu_time.last() > gpu_time.first(), "GpuTime advances");
    }
}

fn loader_so() -> Option<PathBuf> {
    if let Err(why) = testing::loader_available() {
        testing::skip("record through the real loader", &why);
        return None;
    }
    match testing::cdylib() {
        Ok(so) => Some(so),
        Err(why) => {
            testing::skip("record through the real loader", &why);
            None
        }
    }
}

/// Rows a recording must hold: more than this.
const ROWS: usize = 100;

fn interrupt(mut child: Child, signal: &str, rec: &RecordDir) -> std::process::Output {
    // Signal once the file holds the rows a recording must keep (what was written before the
    // signal stays): how many ticks a loaded machine fits into a fixed wait is not the question.
    let deadline = Instant::now() + Duration::from_secs(20);
    while rec.first_counter().1.len() <= ROWS && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap();
    assert!(status.success());
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(10), "zescope did not end after SIG{signal}");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn records_the_simulated_device_for_a_duration() {
    let rec = RecordDir::new();
    let out = rec.command(&["--source", "sim", "--duration", "1s", "--interval", "1ms"], None).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Hz achieved of 1000.0 Hz requested") && stdout.contains("dropped samples"), "{stdout}");
    // A whole-run rate: never over what was asked (how close to it a loaded machine gets is
    // the sampler benchmark's to measure, not a test's).
    let achieved = achieved_hz(&stdout);
    assert!(achieved > 0.0 && achieved <= 1050.0, "a whole-run rate: {stdout}");
    rec.assert_counters_move();
    rec.assert_clean_report();
}

/// `--duration` of a run read in batches: the run stops at its next read, up to a batch interval
/// after the end, and that read drains the driver; what was made after the end is not recorded
/// (a 1 s run recorded 1.10 s and said "6860 samples a second" of a device making 6250).
#[test]
fn a_streamed_record_holds_its_duration_and_no_more() {
    for duration in ["1s", "1050ms"] {
        let rec = RecordDir::new();
        let args = ["--source", "sim", "--device", "NPU", "--group", "NocTraffic", "--via", "streamer"];
        let out = rec.command(&args, None).args(["--no-telemetry", "--duration", duration]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        let csv = std::fs::read_to_string(rec.csv()).unwrap();
        let times: Vec<f64> = csv.lines().skip(1).filter_map(|l| l.split(',').next()?.parse().ok()).collect();
        let span = times.last().copied().unwrap_or(0.0);
        let want = zescope_model::view::text::parse_duration(duration).unwrap().as_secs_f64();
        // The first report may be stamped a little before the run's start (its streamer opened
        // at set-up), never more than a few ms.
        assert!(span > want - 0.2 && span <= want + 0.01, "{duration}: samples over {span} s\n{stdout}");
        // NocTraffic reports every 160 µs: 6250 a second, and the summary says no more.
        let rate: f64 = stdout
            .split(" samples a second")
            .next()
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("no rate in {stdout}"));
        assert!(rate <= 6250.0 * 1.02, "{duration}: {stdout}");
    }
}

/// The "N Hz achieved" figure of a summary line.
fn achieved_hz(summary: &str) -> f64 {
    let before = summary.split(" Hz achieved").next().unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap_or_else(|_| panic!("no rate in {summary}"))
}

#[test]
fn a_short_record_reports_its_whole_run_rate() {
    let rec = RecordDir::new();
    let out = rec.command(&["--source", "sim", "--duration", "700ms", "--interval", "1ms"], None).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    // The last health window alone can be a few ticks over microseconds; the summary is not,
    // and the deadlines served of those passed are never more than asked (ticks over the time
    // were one tick high: "1000.2 Hz achieved of 1000.0 Hz requested").
    let hz = achieved_hz(&stdout);
    assert!(hz <= 1000.0 && hz > 500.0, "{stdout}");
    rec.assert_clean_report();
}

#[test]
fn a_device_with_nothing_to_sample_says_why_for_each_group() {
    let rec = RecordDir::new();
    let config = rec.dir.path().join("sim.ron");
    std::fs::write(
        &config,
        r#"(devices: [(name: "Quiet GPU", groups: [
            (name: "NoExport", export: None, metrics: [(name: "Busy", signal: GpuTime)]),
            (name: "AlsoNoExport", domain: 1, export: None, metrics: [(name: "Busy", signal: GpuTime)]),
        ])])"#,
    )
    .unwrap();
    let out =
        rec.command(&["--source", "sim", "--duration", "1s"], None).env("ZE_SIM_CONFIG", &config).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("NoExport: this group exports no memory"), "{err}");
    assert!(err.contains("AlsoNoExport: this group exports no memory"), "{err}");
    assert!(err.contains("zescope doctor"), "{err}");
}

#[test]
fn sigterm_ends_record_through_the_teardown_and_keeps_the_data() {
    let rec = RecordDir::new();
    let child = rec
        .command(&["--source", "sim", "--duration", "60s"], None)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = interrupt(child, "TERM", &rec);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("(interrupted)"));
    rec.assert_counters_move();
    rec.assert_clean_report();
}

#[test]
fn records_through_the_real_loader_for_two_seconds() {
    let Some(so) = loader_so() else { return };
    let rec = RecordDir::new();
    let out = rec.command(&["--source", "level-zero", "--duration", "2s"], Some(&so)).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    rec.assert_counters_move();
    rec.assert_clean_report();
}

#[test]
fn sigint_mid_run_through_the_real_loader_leaves_a_clean_report() {
    let Some(so) = loader_so() else { return };
    let rec = RecordDir::new();
    let child = rec
        .command(&["--source", "level-zero", "--duration", "60s", "--group", "MemoryTraffic"], Some(&so))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = interrupt(child, "INT", &rec);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (header, bytes_read) = rec.first_counter();
    assert_eq!(header[1], "MemoryTraffic/BytesRead [B]");
    assert!(bytes_read.last() > bytes_read.first());
    rec.assert_clean_report();
}

#[test]
fn a_missing_group_is_a_clear_error() {
    let rec = RecordDir::new();
    let out = rec.command(&["--source", "sim", "--group", "NoSuchGroup", "--duration", "1s"], None).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has no metric group \"NoSuchGroup\"; its groups: ComputeBasic, MemoryTraffic,"), "{err}");
    rec.assert_clean_report();
    // A name in another case is named back as the device spells it.
    let out = rec.command(&["--source", "sim", "--group", "renderbasic", "--duration", "1s"], None).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has no metric group \"renderbasic\"; did you mean \"RenderBasic\"?"), "{err}");
    rec.assert_clean_report();
}

/// A recording on a simulated device whose teardown hangs for `ms` in its last step.
fn slow_teardown(rec: &RecordDir, ms: u64) -> Child {
    let config = rec.dir.path().join("slow.ron");
    std::fs::write(&config, format!("(faults: (context_destroy_delay_ms: {ms}))")).unwrap();
    rec.command(&["--source", "sim", "--duration", "60s"], None)
        .env("ZE_SIM_CONFIG", &config)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (at most 30 s) until the recording holds `n` rows of its first counter.
fn wait_for_rows(rec: &RecordDir, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while rec.first_counter().1.len() < n {
        assert!(Instant::now() < deadline, "no {n} rows recorded within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(child: &Child, signal: &str) {
    assert!(Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap().success());
}

fn wait_at_most(child: &mut Child, limit: Duration) -> Duration {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < limit, "zescope did not end within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    start.elapsed()
}

#[test]
fn a_hung_teardown_ends_record_at_its_deadline_with_the_data_kept() {
    let rec = RecordDir::new();
    let mut child = slow_teardown(&rec, 20_000);
    wait_for_rows(&rec, 50);
    signal(&child, "INT");
    let took = wait_at_most(&mut child, Duration::from_secs(8));
    assert!(took >= Duration::from_millis(2500), "it waited for the teardown's deadline: {took:?}");
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("teardown did not finish within 3s"), "{err}");
    rec.assert_counters_move();
}

#[test]
fn a_second_ctrl_c_exits_at_once() {
    let rec = RecordDir::new();
    let mut child = slow_teardown(&rec, 20_000);
    wait_for_rows(&rec, 50);
    signal(&child, "INT");
    // Still tearing down after the first (its teardown takes 20 s): the child says so on
    // stderr, which is only read at the end, so give the signal time to land.
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "still tearing down after the first");
    signal(&child, "INT");
    // At once: the second Ctrl+C's own exit (130, "interrupted again"), not the teardown
    // deadline's the first one waits for (how soon is no test's to time on a loaded machine).
    wait_at_most(&mut child, Duration::from_secs(8));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interrupted again") && !err.contains("teardown did not finish"), "{err}");
    let (_, gpu_time) = rec.first_counter();
    assert!(gpu_time.len() >= 50 && gpu_time.last() > gpu_time.first(), "rows flushed before the exit are kept");
}

/// A driver that leaves `zeDeviceGetStatus` empty: the run goes on, and the feature turned off is
/// said exactly once on stderr, whether the log shows it (default) or is off (`RUST_LOG=off`).
#[test]
fn a_feature_turned_off_is_said_once_whatever_the_log_level() {
    for rust_log in [None, Some("off")] {
        let rec = RecordDir::new();
        let config = rec.dir.path().join("empty.ron");
        std::fs::write(&config, r#"(empty_entry_points: ["zeDeviceGetStatus"])"#).unwrap();
        let mut c = rec.command(&["--source", "sim", "--duration", "1s"], None);
        c.env("ZE_SIM_CONFIG", &config);
        match rust_log {
            Some(v) => c.env("RUST_LOG", v),
            None => c.env_remove("RUST_LOG"),
        };
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "RUST_LOG={rust_log:?}: {stderr}");
        rec.assert_counters_move();
        let said = stderr.matches("lost-device detection is off for this run").count();
        assert_eq!(said, 1, "RUST_LOG={rust_log:?}: said once: {stderr}");
        rec.assert_clean_report();
    }
}

/// Cells of the CSV column whose header starts with `prefix` that hold a number.
fn column_values(csv: &str, prefix: &str) -> Vec<f64> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let i = header.iter().position(|h| h.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix}: {header:?}"));
    lines.filter_map(|l| l.split(',').nth(i)?.parse().ok()).collect()
}

#[test]
fn records_two_devices_together_with_the_device_in_each_header() {
    let rec = RecordDir::new();
    let args =
        ["--source", "sim", "--device", "0,NPU", "--group", "NPU:NpuActivity", "--duration", "1s", "--interval", "1ms"];
    let out = rec.command(&args, None).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(rec.csv()).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(!header.contains(",ComputeBasic/"), "columns name their device: {header}");
    // The GPU takes its default group, the NPU the one named for it.
    let gpu = column_values(&csv, "ze-sim GPU/ComputeBasic/GpuTime [ns]");
    let npu = column_values(&csv, "ze-sim NPU/NpuActivity/NpuBusyTime [ns]");
    // However many ticks the machine gave the sampler (kept_sampling: 16 test threads on 2 cores).
    assert!(gpu.len() >= 5 && npu.len() >= 5, "{} GPU and {} NPU rows", gpu.len(), npu.len());
    assert!(gpu.last() > gpu.first() && npu.last() > npu.first(), "both devices' counters move");
    rec.assert_clean_report();

    // The same with --device repeated and a plain group that only one of the devices has.
    let rec = RecordDir::new();
    let args =
        ["--source", "sim", "--device", "GPU", "--device", "1", "--group", "ComputeBasic", "--duration", "500ms"];
    let out = rec.command(&args, None).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(rec.csv()).unwrap();
    assert!(!column_values(&csv, "ze-sim GPU/ComputeBasic/").is_empty());
    assert!(!column_values(&csv, "ze-sim NPU/NpuActivity/").is_empty(), "the NPU's default group");
    rec.assert_clean_report();
}

#[test]
fn a_group_for_a_device_not_recorded_or_on_no_device_is_refused_by_name() {
    let rec = RecordDir::new();
    let out = rec.command(&["--source", "sim", "--device", "0", "--group", "NPU:NpuActivity"], None).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--group NPU:NpuActivity") && err.contains("not one of the devices"), "{err}");
    let out = rec.command(&["--source", "sim", "--device", "0,1", "--group", "Nothing"], None).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--group Nothing") && err.contains("ze-sim GPU, ze-sim NPU"), "{err}");
}

#[test]
fn a_two_device_session_keeps_a_run_record_per_device() {
    let rec = RecordDir::new();
    let out_ron = rec.dir.path().join("two.ron");
    let out = crate::support::zescope()
        .args(["--source", "sim", "record", "--device", "0,1", "--duration", "500ms", "--out"])
        .arg(&out_ron)
        .env_remove("ZE_SIM_CONFIG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = zescope_model::session::load(&out_ron).unwrap();
    let names: Vec<&str> = s.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["ze-sim GPU", "ze-sim NPU"]);
    let runs: Vec<(u64, u32, Vec<String>)> = s.runs.iter().map(|r| (r.run, r.device, r.groups.clone())).collect();
    assert_eq!(runs, [(1, 0, vec!["ComputeBasic".to_owned()]), (1, 1, vec!["NpuActivity".to_owned()])]);
    let streams: Vec<(&str, &str)> =
        s.streams.iter().map(|x| (x.meta.device.as_str(), x.meta.group.as_str())).collect();
    // Each device's telemetry (on by default) follows its groups.
    assert_eq!(
        streams,
        [
            ("ze-sim GPU", "ComputeBasic"),
            ("ze-sim GPU", "Telemetry"),
            ("ze-sim NPU", "NpuActivity"),
            ("ze-sim NPU", "Telemetry")
        ]
    );
    assert!(s.runs.iter().all(|r| r.telemetry && r.via == "auto"), "{:?}", s.runs);
    let mut store = zescope_store::Store::new(1 << 30);
    s.restore_into(&mut store).unwrap();
}

/// Every pair of the simulated driver's faults, quirks and empty entry points (and each alone),
/// once, through `zescope record` as a user runs it — a group read from exported memory and one
/// read with the streamer, telemetry on. Each recording ends with a clear outcome (exit 0, or 1
/// with a message; never a panic or a signal), the driver sees no rule broken, and it finds
/// nothing left behind except what a fault that stays on until exit provokes by itself (an import
/// or host memory the driver never frees, metrics it never disables).
#[test]
fn every_pair_of_faults_through_record_breaks_no_rule_and_leaks_only_what_it_provokes() {
    use ze_sim::testing::faults::{self, Fault};
    let all = faults::all();
    let mut sets: Vec<Vec<Fault>> = all.iter().map(|f| vec![*f]).collect();
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            sets.push(vec![*a, *b]);
        }
    }
    // The triples of the hostile review: an unmappable buffer whose device-copy path cannot be
    // set up, and a free that fails.
    for free in [Fault::FreeFailsOnce, Fault::FreeFailsAlways, Fault::HostFreeFailsOnce, Fault::HostFreeFailsAlways] {
        for empty in ["zeMemAllocHost", "zeCommandListCreateImmediate"] {
            sets.push(vec![Fault::Unmappable, Fault::Empty(empty), free]);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let numbered: Vec<(usize, &Vec<Fault>)> = sets.iter().enumerate().collect();
    // Eight at a time: each is a 200 ms recording that mostly waits.
    let ran = crate::support::each_case(&numbered, 8, |&(i, set)| {
        record_with_faults(dir.path(), i, set).map_err(|why| format!("{set:?}: {why}"))
    });
    let failures: Vec<String> = ran.iter().filter_map(|r| r.as_ref().err().cloned()).collect();
    assert!(failures.is_empty(), "{} of {} fault sets failed:\n{}", failures.len(), sets.len(), failures.join("\n"));
    let outcomes: Vec<(Vec<Fault>, Outcome)> =
        sets.iter().cloned().zip(ran.into_iter().map(|r| r.expect("checked above"))).collect();
    let of = |set: &[Fault]| &outcomes.iter().find(|(s, _)| s.as_slice() == set).expect("ran").1;
    // Not vacuous: many sets record (a fault that makes either group unreadable refuses the
    // whole recording, with a message: about three quarters of the pairs hold one), and the
    // faults that must provoke a leak alone do.
    let recorded = outcomes.iter().filter(|(_, o)| o.recorded).count();
    assert!(recorded * 5 > outcomes.len(), "only {recorded} of {} fault sets recorded", outcomes.len());
    assert!(of(&[Fault::FreeFailsAlways]).leaks.contains(&"import_not_freed".to_string()));
    assert!(of(&[Fault::Unmappable, Fault::HostFreeFailsAlways]).leaks.contains(&"host_allocation_not_freed".into()));
    assert!(of(&[Fault::FreeFailsOnce]).leaks.is_empty() && of(&[Fault::FreeFailsOnce]).recorded);
    eprintln!(
        "{} fault sets (every fault alone, every pair of {}, and 8 triples) recorded: {recorded} recorded, {} refused \
         with a message",
        sets.len(),
        all.len(),
        outcomes.len() - recorded
    );
}

/// How one recording under a fault set ended.
struct Outcome {
    /// The recording was written (rows of samples), whatever the exit code says of the teardown.
    recorded: bool,
    /// The kinds of what the driver found left behind.
    leaks: Vec<String>,
}

fn record_with_faults(dir: &Path, i: usize, set: &[ze_sim::testing::faults::Fault]) -> Result<Outcome, String> {
    let mut cfg = ze_sim::config::SimConfig::default();
    for f in set {
        f.apply(&mut cfg);
    }
    let config = dir.join(format!("sim{i}.ron"));
    let report = dir.join(format!("report{i}.ron"));
    let out = dir.join(format!("run{i}.csv"));
    std::fs::write(&config, ron::to_string(&cfg).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let run = crate::support::zescope()
        .args(["record", "--source", "sim", "--group", "ComputeBasic", "--group", "RenderBasic"])
        .args(["--interval", "1ms", "--duration", "200ms", "--out"])
        .arg(&out)
        .env("ZE_SIM_CONFIG", &config)
        .env("ZE_SIM_REPORT", &report)
        .env_remove("ZE_ENABLE_ALT_DRIVERS")
        .env("XDG_RUNTIME_DIR", dir)
        .output()
        .map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&run.stderr);
    match run.status.code() {
        Some(0) => {}
        Some(1) if stderr.contains("zescope: ") || stderr.contains("error") => {}
        other => return Err(format!("exit {other:?}:\n{stderr}")),
    }
    if stderr.contains("panicked") {
        return Err(format!("a panic:\n{stderr}"));
    }
    let text = std::fs::read_to_string(&report).map_err(|e| format!("no report: {e}\n{stderr}"))?;
    let r: ze_sim::Report = ron::from_str(&text).map_err(|e| e.to_string())?;
    if !r.violations.is_empty() {
        return Err(format!("violations:\n{text}\n{stderr}"));
    }
    let allowed: Vec<&str> = set.iter().flat_map(|f| f.may_leave().iter().copied()).collect();
    let unexpected: Vec<&str> = r.leaks.iter().map(|l| l.kind.as_str()).filter(|k| !allowed.contains(k)).collect();
    if !unexpected.is_empty() {
        return Err(format!("leaks {unexpected:?} that no fault of the set provokes:\n{text}\n{stderr}"));
    }
    let rows = std::fs::read_to_string(&out).map(|t| t.lines().count()).unwrap_or(0);
    Ok(Outcome { recorded: rows > 1, leaks: r.leaks.into_iter().map(|l| l.kind).collect() })
}

/// A ticked run stopped for longer than a second (here SIGSTOP; a suspended machine or a starved
/// process alike) lost the snapshots of that time: the session starts a new segment after the
/// hole, so nothing is drawn across it, and the samples either side are all kept.
#[test]
fn a_recording_stopped_for_seconds_keeps_a_hole_not_a_line_across_it() {
    let rec = RecordDir::new();
    let path = rec.dir.path().join("stopped.ron");
    let child = crate::support::zescope()
        .args(["--source", "sim", "record", "--group", "ComputeBasic", "--duration", "5s", "--out"])
        .arg(&path)
        .env_remove("ZE_SIM_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, "STOP");
    std::thread::sleep(Duration::from_millis(1800));
    signal(&child, "CONT");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    // The group's samples the run read, as its summary counts them ("recorded N samples and …").
    let said = String::from_utf8_lossy(&out.stdout);
    let read: usize = said
        .split("recorded ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {said:?}"));
    let session = zescope_model::session::load(&path).unwrap();
    let mut store = zescope_store::Store::new(1 << 30);
    let restored = session.restore_into(&mut store).unwrap();
    // Per stream: the holes (s) and the first two rows after each, and the rows in all.
    let walk = |s: zescope_store::StreamId| {
        let (mut p, mut from, mut holes, mut rows) = (zescope_store::RawPiece::default(), 0, Vec::new(), 0);
        let mut last = None;
        while store.raw_piece(s, from, 4096, &mut p) {
            if let (true, Some(last)) = (p.gap_before, last) {
                let width = p.values.len() / p.timestamps.len();
                let first_rows: Vec<Vec<f64>> = p.values.chunks(width).take(2).map(<[f64]>::to_vec).collect();
                holes.push(((p.timestamps[0] - last) as f64 / 1e9, first_rows));
            }
            rows += p.timestamps.len();
            last = p.timestamps.last().copied();
            from = p.next;
        }
        (holes, rows)
    };
    let (holes, rows) = walk(restored.streams[0]);
    assert_eq!(holes.len(), 1, "one hole: {holes:?}");
    assert!(holes[0].0 > 1.5, "the stop's ~1.8 s: {holes:?}");
    // Every sample read is kept, either side of the hole (how many the ~3.2 s at 1 kHz gave
    // depends on how busy the machine was: 2439 on CI's two busy cores once, against 2500 asked).
    assert_eq!(rows, read, "the samples either side are all kept: {said}");
    assert!(rows > 1000, "samples on both sides of the hole: {rows}");
    // The telemetry has the hole too, and its rates start after it: the first read's power
    // would be the hole's average drawn as the value after it.
    let telemetry = session.streams.iter().position(|s| s.meta.group == "Telemetry").expect("telemetry");
    let power =
        session.streams[telemetry].meta.series.iter().position(|x| x.metric.starts_with("Package power")).unwrap();
    let (holes, _) = walk(restored.streams[telemetry]);
    assert_eq!(holes.len(), 1, "{holes:?}");
    let after = &holes[0].1;
    assert!(after[0][power].is_nan() && (100.0..200.0).contains(&after[1][power]), "power after the hole: {after:?}");
    // So do the engines' busy shares (a missing rate is no share, not a full one).
    let engines: Vec<usize> = session.streams[telemetry]
        .meta
        .series
        .iter()
        .enumerate()
        .filter(|(_, x)| x.metric.contains("engines utilisation"))
        .map(|(i, _)| i)
        .collect();
    assert!(!engines.is_empty(), "the simulated GPU reports its engines");
    let mut first = zescope_store::RawPiece::default();
    assert!(store.raw_piece(restored.streams[telemetry], 0, 2, &mut first));
    let width = first.values.len() / first.timestamps.len();
    for e in engines {
        assert!(after[0][e].is_nan() && (0.0..=100.0).contains(&after[1][e]), "engine share after the hole: {after:?}");
        // The run's first read has nothing to take a rate against either.
        let rows = &first.values[..2 * width];
        assert!(rows[e].is_nan() && (0.0..=100.0).contains(&rows[width + e]), "the first two reads: {rows:?}");
    }
}
