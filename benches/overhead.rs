//! `overhead`: what zescope costs the workload it watches. A CPU-bound workload that keeps every
//! core busy does a fixed amount of work (a mixing loop over a private 1 MiB buffer per thread:
//! arithmetic and L2-resident loads, no I/O) and its wall time is measured, alone and beside a
//! zescope process, alternating (alone, beside) in pairs so the machine's drift falls on both
//! alike. Printed per setting: the median ratio of the workload's time beside zescope to its time
//! alone, the spread of the ratios (min … max), and zescope's own CPU over the runs beside it
//! (its threads' time on a CPU, from `/proc/PID/task/TID/schedstat` in ns, over the workload's
//! wall time, in cores).
//!
//! Settings (the simulated device, `zescope` as built for the bench, i.e. release):
//! - `record` at 1 kHz and 10 kHz, the exported-memory path (`--group ComputeBasic --via export`)
//!   with telemetry on, and the streamer path alone (`--group RenderBasic --via streamer
//!   --no-telemetry`: 1 kHz asks 100 µs reports, which the simulated device rounds to 160 µs,
//!   6.25k reports/s; 10 kHz asks and gets 10 µs, 100k reports/s), writing a session; and the
//!   streamer at 10 kHz with telemetry, as `record` runs unless told otherwise (telemetry is read
//!   every 100 ms; the run stays read in batches);
//! - `serve` at 1 kHz with telemetry, scraped every second over HTTP;
//! - the window, live, at 1600x1000 with four panes of the simulated GPU at 100 Hz, under Xvfb
//!   (skipped, with a line saying why, without Xvfb);
//! - the floor: a process that does nothing but wake at 1 kHz (10 kHz) and sleep again, which is
//!   the least any sampler polling at that rate can cost here (a context switch each way);
//! - the floor beside the simulated device: the same process, and a zescope that samples every
//!   10 s (`record --interval 10s --group ComputeBasic --via export --no-telemetry`), so the
//!   simulated device's writer writes its exported memory every millisecond as it does under any
//!   `record` of it, while zescope itself all but sleeps: what the exported-memory rows cost
//!   before zescope's own sampling on this device (on a GPU the hardware writes, and the floor
//!   alone is the floor). Its CPU is both processes'; its wakeups the bare process's.
//! - the floor beside the simulated streamer: a process of this bench that holds the simulated
//!   device in itself, opens `RenderBasic`'s streamer at 10 µs (100k reports/s) and every 100 ms
//!   reads what it made, in parts as zescope does (`Streamer::read_at_most`), then drops it: no
//!   Calculate, no samples, no store. On this device a streamer's reports are made when they are
//!   read, on the reading thread, so this is what the 100k-reports row costs before zescope's own
//!   work (on a GPU the hardware makes them, and Calculate, which stays in the row, is the
//!   driver's). Its wakeups are its threads' (the reading one, and the device's writer).
//!
//! The median's interval: the order statistics that hold the true median with at least 95 %
//! confidence whatever the ratios' distribution (the k-th smallest and k-th largest of n pairs,
//! k the largest with P(Binomial(n, ½) < k) ≤ 2.5 %; with its coverage, which is below 95 % for
//! fewer than 6 pairs, where it is the whole spread): this machine's noise is several points a
//! pair, and a goal of 1 % needs the interval, not the median alone (24 pairs give the 7th and
//! 18th ratios).
//!
//! Where zescope's threads run: `ZESCOPE_OVERHEAD_PLACE=same` pins every thread of the zescope
//! beside the workload to the first CPU, `split` its sampler to the first and the others to the
//! second (with `taskset`, once it runs; unset: the scheduler's choice). The workload waits for
//! its slowest thread, and a thread's time grows by what runs on its core, so whether zescope's
//! two busy threads share a core could matter; this shows whether it does (`docs/benchmarks.md`).
//!
//! Wakeups a second: the sampler thread's context switches (voluntary and not, from
//! `/proc/PID/task/TID/status`) over the workload's wall time; for the floor, its one thread's.
//!
//! zescope's CPU is split by thread: the sampler's, and the simulated device's writer
//! (`ze-sim-writer`, which writes the counters the way a GPU does in hardware: it exists only on
//! the simulated device, yet its wakeups slow the workload as the sampler's do).
//!
//! zescope starts a second before the workload (its start-up is not the workload's cost) and is
//! stopped after it. Caches: the workload's buffers are warm after the calibration run; zescope
//! is started afresh for each pair. Pairs: `ZESCOPE_OVERHEAD_PAIRS` (default 5); the workload's
//! size is calibrated to about `ZESCOPE_OVERHEAD_SECONDS` (default 3) alone.
//! `ZESCOPE_OVERHEAD_ONLY=TEXT|TEXT` runs the settings whose name holds one of the TEXTs.
//!
//! On a machine with a Level Zero GPU, `ZESCOPE_OVERHEAD_SOURCE=level-zero` runs `record` and
//! `serve` on it instead of the simulated device (the groups named above must exist there: on a
//! real GPU set `ZESCOPE_OVERHEAD_EXPORT_GROUP` and `ZESCOPE_OVERHEAD_STREAM_GROUP` to groups of
//! its catalogue, `zescope list`); the simulated device's writer column then reads 0.
//!
//!     cargo bench --bench overhead

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_zescope");

/// One workload thread: `rounds` passes of a mixing loop over its own 1 MiB buffer.
fn work(rounds: u64) -> u64 {
    let mut buf = vec![0u64; 1 << 17];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for r in 0..rounds {
        for (i, v) in buf.iter_mut().enumerate() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *v = v.wrapping_add(x ^ (i as u64).wrapping_mul(r | 1));
        }
    }
    buf.iter().fold(0, |a, v| a ^ v)
}

/// The workload on every core at once: its wall time.
fn workload(rounds: u64) -> Duration {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let t = Instant::now();
    let sum: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cores).map(|_| s.spawn(move || work(rounds))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).fold(0, |a, b| a ^ b)
    });
    std::hint::black_box(sum);
    t.elapsed()
}

/// A thread's CPU time so far: its time on a CPU in ns from `schedstat` (exact), or where the
/// kernel lacks it its user + system time from `stat` (10 ms ticks, which over a 3 s run are
/// steps of 0.003 cores and charge a short wakeup a whole tick or nothing).
fn task_time(dir: &std::path::Path) -> Option<Duration> {
    if let Some(ns) = std::fs::read_to_string(dir.join("schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()))
    {
        return Some(Duration::from_nanos(ns));
    }
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    let f: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_secs_f64(ticks as f64 / 100.0))
}

/// A process's CPU time so far: the sum of its threads' ([`task_time`]). A thread that ended
/// between two readings is not counted; zescope's threads live for the whole run.
fn cpu_time(pid: u32) -> Duration {
    thread_times(pid).iter().map(|(_, d)| *d).sum()
}

/// Per thread of `pid`: its name and CPU time so far ([`task_time`]).
fn thread_times(pid: u32) -> Vec<(String, Duration)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .flatten()
        .filter_map(|t| {
            let dir = t.path();
            let comm = std::fs::read_to_string(dir.join("comm")).ok()?;
            Some((comm.trim().to_owned(), task_time(&dir)?))
        })
        .collect()
}

/// CPU of the threads of `pid` named `name`, between two [`thread_times`].
fn named(before: &[(String, Duration)], after: &[(String, Duration)], name: &str) -> f64 {
    let sum = |v: &[(String, Duration)]| v.iter().filter(|(n, _)| n == name).map(|(_, d)| d.as_secs_f64()).sum::<f64>();
    sum(after) - sum(before)
}

/// Context switches (voluntary + involuntary) so far of the threads of `pid` named `name` (any
/// thread when `name` is empty): each is a wakeup of a thread that slept or was preempted.
fn switches(pid: u32, name: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks
        .flatten()
        .filter_map(|t| {
            let dir = t.path();
            let comm = std::fs::read_to_string(dir.join("comm")).ok()?;
            if !name.is_empty() && comm.trim() != name {
                return None;
            }
            let status = std::fs::read_to_string(dir.join("status")).ok()?;
            let n: u64 = status
                .lines()
                .filter(|l| l.starts_with("voluntary_ctxt_switches") || l.starts_with("nonvoluntary_ctxt_switches"))
                .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
                .sum();
            Some(n)
        })
        .sum()
}

/// The floor's child: wakes every `us` microseconds on a deadline grid, does nothing, forever.
/// The floor beside the simulated streamer (the module's docs): reads `RenderBasic`'s 100k
/// reports a second every 100 ms in parts of 1,365 reports (zescope's for this group), until
/// killed.
fn streamer_floor() -> ! {
    use ze_sim::config::{MetricsEnable, SimConfig};
    let sim = std::sync::Arc::new(ze_sim::Sim::new(SimConfig { metrics: MetricsEnable::Always, ..Default::default() }));
    let l = zescope_ze::Loader::in_process(sim.in_process()).expect("the simulated driver opens");
    let dev = l.drivers[0].devices().expect("devices").remove(0);
    let g =
        dev.metric_groups().expect("groups").into_iter().find(|g| g.info.name == "RenderBasic").expect("RenderBasic");
    let ctx = zescope_ze::Context::create(&l.drivers[0]).expect("a context");
    ctx.activate(&dev, &[&g]).expect("activated");
    let s = zescope_ze::streamer::Streamer::open(&ctx, &dev, &g, 10_000, 8_000, None).expect("a streamer");
    let mut buf = Vec::new();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        while s.read_at_most(&mut buf, 1_365).expect("a read").bytes > 0 {}
    }
}

fn sleeper(us: u64) -> ! {
    let period = Duration::from_micros(us);
    let mut next = Instant::now();
    loop {
        next += period;
        if let Some(d) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
    }
}

/// What runs beside the workload.
#[derive(Clone, Copy)]
enum Beside {
    Record { interval: &'static str, group: &'static str, via: &'static str, telemetry: bool },
    Serve,
    Window,
    Floor { us: u64 },
    FloorBesideDevice { us: u64 },
    FloorBesideStreamer,
}

impl Beside {
    fn name(self) -> String {
        match self {
            Beside::Record { interval, via, telemetry, .. } => {
                let hz = if interval == "1ms" { "1 kHz" } else { "10 kHz" };
                let reports = if interval == "1ms" { "6.25k" } else { "100k" };
                match (via, telemetry) {
                    ("streamer", false) => format!("record {hz}, streamer alone ({reports} reports/s)"),
                    ("streamer", true) => format!("record {hz}, streamer and telemetry ({reports} reports/s)"),
                    (_, true) => format!("record {hz}, {via}, telemetry"),
                    _ => format!("record {hz}, {via}"),
                }
            }
            Beside::Serve => "serve 1 kHz, telemetry, scraped every 1 s".into(),
            Beside::Window => "window, live, 1600x1000, 4 panes, 100 Hz".into(),
            Beside::Floor { us } => format!("floor: a process waking at {} kHz, doing nothing", 1000 / us),
            Beside::FloorBesideDevice { us } => {
                format!("floor beside the simulated device: waking at {} kHz, the device writing", 1000 / us)
            }
            Beside::FloorBesideStreamer => {
                "floor beside the simulated streamer: 100k reports/s made and read, nothing after".into()
            }
        }
    }
}

/// A zescope running beside the workload, and what to stop with it.
struct Running {
    child: Child,
    _dir: tempfile::TempDir,
    _xvfb: Option<Child>,
    scrape: Option<(std::sync::Arc<std::sync::atomic::AtomicBool>, std::thread::JoinHandle<()>)>,
    /// The zescope that keeps the simulated device writing beside a floor (its CPU counts).
    device: Option<Child>,
}

impl Running {
    fn stop(mut self) {
        if let Some((stop, t)) = self.scrape.take() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = t.join();
        }
        terminate(&mut self.child);
        if let Some(mut d) = self.device.take() {
            terminate(&mut d);
        }
        if let Some(mut x) = self._xvfb.take() {
            let _ = x.kill();
            let _ = x.wait();
        }
    }
}

/// Stops `child` with SIGTERM (zescope ends its run and writes its session), SIGKILL after 10 s.
fn terminate(child: &mut Child) {
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn zescope(dir: &std::path::Path) -> Command {
    let mut c = Command::new(BIN);
    for (k, v) in [
        ("XDG_RUNTIME_DIR", "run"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
    ] {
        let p = dir.join(v);
        std::fs::create_dir_all(&p).unwrap();
        let _ = std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o700));
        c.env(k, p);
    }
    c.env_remove("ZE_SIM_CONFIG").env_remove("ZE_ENABLE_ALT_DRIVERS").env_remove("RUST_LOG");
    c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    c
}

/// A private X server: its process and display, or why not.
fn xvfb(w: u32, h: u32) -> Result<(Child, String), String> {
    let mut child = Command::new("Xvfb")
        .args(["-displayfd", "1", "-nolisten", "tcp", "-noreset", "-screen", "0"])
        .arg(format!("{w}x{h}x24"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("Xvfb: {e}"))?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).map_err(|e| e.to_string())?;
    let n: u32 = line.trim().parse().map_err(|_| format!("Xvfb said {line:?}"))?;
    Ok((child, format!(":{n}")))
}

/// The source `record` and `serve` read (`ZESCOPE_OVERHEAD_SOURCE`, default `sim`).
fn source() -> String {
    std::env::var("ZESCOPE_OVERHEAD_SOURCE").unwrap_or_else(|_| "sim".into())
}

/// The group to read in place of the simulated device's `group` (on a real GPU, from the
/// environment: see the module docs).
fn group_of(group: &str) -> String {
    let var = if group == "ComputeBasic" { "ZESCOPE_OVERHEAD_EXPORT_GROUP" } else { "ZESCOPE_OVERHEAD_STREAM_GROUP" };
    std::env::var(var).unwrap_or_else(|_| group.to_owned())
}

fn start(beside: Beside) -> Result<Running, String> {
    let dir = tempfile::tempdir().unwrap();
    let mut xvfb_child = None;
    let mut scrape = None;
    let mut device = None;
    let sleeper = |us: u64| {
        Command::new(std::env::current_exe().unwrap())
            .env("ZESCOPE_OVERHEAD_SLEEPER", us.to_string())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())
    };
    let child = match beside {
        Beside::Floor { us } => sleeper(us)?,
        Beside::FloorBesideStreamer => Command::new(std::env::current_exe().unwrap())
            .env("ZESCOPE_OVERHEAD_STREAMER_FLOOR", "1")
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?,
        Beside::FloorBesideDevice { us } => {
            let d = zescope(dir.path())
                .args(["--source", "sim", "record", "--interval", "10s", "--group", "ComputeBasic"])
                .args(["--via", "export", "--no-telemetry", "--duration", "1h", "--out"])
                .arg(dir.path().join("run.ron"))
                .spawn()
                .map_err(|e| e.to_string())?;
            device = Some(d);
            sleeper(us)?
        }
        Beside::Record { interval, group, via, telemetry } => zescope(dir.path())
            .args([
                "--source",
                &source(),
                "record",
                "--interval",
                interval,
                "--group",
                &group_of(group),
                "--via",
                via,
                if telemetry { "--telemetry" } else { "--no-telemetry" },
            ])
            .args(["--duration", "1h", "--out"])
            .arg(dir.path().join("run.ron"))
            .spawn()
            .map_err(|e| e.to_string())?,
        Beside::Serve => {
            let mut c = zescope(dir.path())
                .args(["--source", &source(), "serve", "--interval", "1ms", "--telemetry", "--listen", "127.0.0.1:0"])
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| e.to_string())?;
            let mut line = String::new();
            BufReader::new(c.stdout.take().unwrap()).read_line(&mut line).map_err(|e| e.to_string())?;
            let addr: SocketAddr = line
                .trim()
                .strip_prefix("zescope: serving http://")
                .and_then(|a| a.strip_suffix("/metrics"))
                .and_then(|a| a.parse().ok())
                .ok_or_else(|| format!("serve said {line:?}"))?;
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let s = stop.clone();
            let t = std::thread::spawn(move || {
                while !s.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(mut c) = TcpStream::connect(addr) {
                        let _ = c.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n");
                        let _ = c.read_to_end(&mut Vec::new());
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
            });
            scrape = Some((stop, t));
            c
        }
        Beside::Window => {
            let (x, display) = xvfb(1600, 1000)?;
            xvfb_child = Some(x);
            // Four panes of the simulated GPU's ComputeBasic (%, cycles/s, MHz, W).
            let view = dir.path().join("four.ron");
            let pane = |metrics: &[&str]| {
                let series: Vec<String> =
                    metrics.iter().map(|m| format!("(group: \"ComputeBasic\", metric: \"{m}\")")).collect();
                format!("(series: [{}])", series.join(", "))
            };
            let panes = [
                pane(&["GpuTime", "GpuUtilization"]),
                pane(&["GpuBusyCycles"]),
                pane(&["GpuFrequency"]),
                pane(&["GpuPower"]),
            ];
            std::fs::write(
                &view,
                format!(
                    "(version: 1, name: \"four\", window: Some(\"1min\"), panes: [{}], triggers: [])",
                    panes.join(", ")
                ),
            )
            .unwrap();
            let c = zescope(dir.path())
                .args(["--source", "sim", "--view"])
                .arg(&view)
                .env("DISPLAY", &display)
                .env_remove("WAYLAND_DISPLAY")
                .spawn()
                .map_err(|e| e.to_string())?;
            // The window at the screen's size (xdotool; the window opens at its default size).
            std::thread::sleep(Duration::from_secs(3));
            let id = Command::new("xdotool")
                .args(["search", "--sync", "--name", "^zescope"])
                .env("DISPLAY", &display)
                .output();
            let id = id.map_err(|e| format!("xdotool: {e}"))?;
            let id = String::from_utf8_lossy(&id.stdout).lines().last().unwrap_or_default().to_owned();
            let _ = Command::new("xdotool").args(["windowsize", &id, "1600", "1000"]).env("DISPLAY", &display).status();
            c
        }
    };
    // Past its start-up: sampling (and drawing) steadily.
    std::thread::sleep(Duration::from_secs(if matches!(beside, Beside::Window) { 6 } else { 2 }));
    Ok(Running { child, _dir: dir, _xvfb: xvfb_child, scrape, device })
}

/// The interval of sorted `v` that holds its distribution's median with at least 95 %
/// confidence (order statistics; the module's docs), and that confidence.
fn median_interval(v: &[f64]) -> (f64, f64, f64) {
    let n = v.len();
    // P(Binomial(n, 1/2) <= j) for j = 0, 1, ...: the tail below the k-th order statistic.
    let mut tail = Vec::with_capacity(n + 1);
    let (mut c, mut sum) = (1.0f64, 0.0f64);
    for j in 0..=n {
        sum += c * 0.5f64.powi(n as i32);
        tail.push(sum);
        c = c * (n - j) as f64 / (j + 1) as f64;
    }
    let k = (1..=n / 2).rev().find(|&k| tail[k - 1] <= 0.025).unwrap_or(1);
    let coverage = 1.0 - 2.0 * tail[k - 1];
    (v[k - 1], v[n - k], coverage)
}

/// Pins the threads of `pid` as `ZESCOPE_OVERHEAD_PLACE` says (the module's docs): `same`, every
/// thread to CPU 0; `split`, the sampler to CPU 0 and the others to CPU 1.
fn place(pid: u32, how: &str) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return };
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        let cpu = if how == "split" && comm.trim() != "zescope-sampler" { "1" } else { "0" };
        let tid = t.file_name().to_string_lossy().into_owned();
        let ok = Command::new("taskset").args(["-p", "-c", cpu, &tid]).stdout(Stdio::null()).status();
        assert!(ok.is_ok_and(|s| s.success()), "taskset -p -c {cpu} {tid} failed");
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if std::env::var_os("ZESCOPE_OVERHEAD_STREAMER_FLOOR").is_some() {
        streamer_floor();
    }
    if let Some(us) = std::env::var("ZESCOPE_OVERHEAD_SLEEPER").ok().and_then(|v| v.parse().ok()) {
        sleeper(us);
    }
    let pairs: usize = std::env::var("ZESCOPE_OVERHEAD_PAIRS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let target: f64 = std::env::var("ZESCOPE_OVERHEAD_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3.0);
    // Calibrate: rounds for about `target` seconds alone.
    let probe = workload(20).as_secs_f64();
    let rounds = ((target / probe) * 20.0).max(20.0) as u64;
    workload(rounds);
    let placed = std::env::var("ZESCOPE_OVERHEAD_PLACE").ok().filter(|p| !p.is_empty());
    if let Some(p) = placed.as_deref() {
        assert!(matches!(p, "same" | "split"), "ZESCOPE_OVERHEAD_PLACE is same or split, not {p:?}");
    }
    let place_text = placed.as_deref().map_or(String::new(), |p| format!("; zescope's threads placed: {p}"));
    println!(
        "overhead: workload of {rounds} rounds on every core; {pairs} pairs (alone, beside) per setting{place_text}"
    );
    println!(
        "| beside the workload | slowdown (median of {pairs}) | the median's interval | spread | its CPU (cores) | \
         sampler | simulated device | sampler wakeups/s |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let settings = [
        Beside::Floor { us: 1000 },
        Beside::Floor { us: 100 },
        Beside::FloorBesideDevice { us: 1000 },
        Beside::FloorBesideDevice { us: 100 },
        Beside::FloorBesideStreamer,
        Beside::Record { interval: "1ms", group: "ComputeBasic", via: "export", telemetry: true },
        Beside::Record { interval: "100us", group: "ComputeBasic", via: "export", telemetry: true },
        Beside::Record { interval: "1ms", group: "RenderBasic", via: "streamer", telemetry: false },
        Beside::Record { interval: "100us", group: "RenderBasic", via: "streamer", telemetry: false },
        Beside::Record { interval: "100us", group: "RenderBasic", via: "streamer", telemetry: true },
        Beside::Serve,
        Beside::Window,
    ];
    let only = std::env::var("ZESCOPE_OVERHEAD_ONLY").unwrap_or_default();
    for beside in settings.into_iter().filter(|b| only.split('|').any(|o| b.name().contains(o))) {
        let (mut ratios, mut cores, mut sampler, mut device) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut wakeups = Vec::new();
        let thread = if matches!(
            beside,
            Beside::Floor { .. } | Beside::FloorBesideDevice { .. } | Beside::FloorBesideStreamer
        ) {
            ""
        } else {
            "zescope-sampler"
        };
        let mut skipped = None;
        for _ in 0..pairs {
            let alone = workload(rounds).as_secs_f64();
            let z = match start(beside) {
                Ok(z) => z,
                Err(e) => {
                    skipped = Some(e);
                    break;
                }
            };
            if let Some(how) = placed.as_deref() {
                place(z.child.id(), how);
            }
            let pids: Vec<u32> = std::iter::once(z.child.id()).chain(z.device.as_ref().map(Child::id)).collect();
            let cpu = || pids.iter().map(|&p| cpu_time(p)).sum::<Duration>();
            let threads = || pids.iter().flat_map(|&p| thread_times(p)).collect::<Vec<_>>();
            let (c0, t0, w0) = (cpu(), threads(), switches(z.child.id(), thread));
            let with = workload(rounds).as_secs_f64();
            let (c1, t1, w1) = (cpu(), threads(), switches(z.child.id(), thread));
            wakeups.push(w1.saturating_sub(w0) as f64 / with);
            z.stop();
            ratios.push(with / alone);
            cores.push(c1.saturating_sub(c0).as_secs_f64() / with);
            sampler.push(named(&t0, &t1, "zescope-sampler") / with);
            device.push(named(&t0, &t1, "ze-sim-writer") / with);
        }
        if let Some(why) = skipped {
            println!("| {} | skipped: {why} | | | | | | |", beside.name());
            continue;
        }
        let (lo, hi) =
            (ratios.iter().copied().fold(f64::INFINITY, f64::min), ratios.iter().copied().fold(0.0, f64::max));
        let m = median(&mut ratios);
        let (ilo, ihi, coverage) = median_interval(&ratios);
        let c = median(&mut cores);
        let (s, d, w) = (median(&mut sampler), median(&mut device), median(&mut wakeups));
        let pct = |r: f64| (r - 1.0) * 100.0;
        println!(
            "| {} | {:+.1} % | {:+.1} … {:+.1} % ({:.1} %) | {:+.1} … {:+.1} % | {c:.3} | {s:.3} | {d:.3} | {w:.0} |",
            beside.name(),
            pct(m),
            pct(ilo),
            pct(ihi),
            coverage * 100.0,
            pct(lo),
            pct(hi)
        );
    }
}
