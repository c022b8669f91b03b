//! `zescope record --out run.ron` at 1 kHz for an hour: its memory and what its checkpoints cost.
//!
//! The hour is simulated by ingest speed: the samples of an hour (3.6 M samples of one stream of
//! 25 counter-shaped series, `shapes/mod.rs`, ~26 values a sample with the timestamp, as `record`
//! at 1 kHz with telemetry writes) go through `session::Recorder` — the recorder `record` uses:
//! the view's ingest, the store, the journal — in batches of 16 samples (the sampler's batches at
//! 1 kHz) as fast as the CPU takes them, and a checkpoint is forced after every 30 s of samples (the
//! checkpoint period), once the one before is over (in real time it has 30 s). A file is written
//! as `record` writes it (journal appends, synced; the last one through `Recorder::finish`).
//!
//! `record_hour/hour/cap=…` (printed, not timed by criterion): each in a child process of its
//! own (this binary, `ZESCOPE_BENCH_HOUR=CAP`), so its peak resident memory (`VmHWM`) is its
//! own: the peak over the hour and the end, the checkpoints' wall time and CPU (the process's
//! CPU between a checkpoint's start and its end, while the ingest waits: `/proc/self/stat`, 10 ms
//! ticks), the store and the file. Run with the default memory cap (a quarter of RAM, ≤ 1 GiB: an
//! hour at 1 kHz fits under it on this machine) and with 64 MiB, which the hour outgrows so that
//! the store coarsens its oldest history and stays at its cap: there the goal is peak RSS ≤ the
//! cap + 64 MB. With `ZESCOPE_BENCH_BEFORE=1` the same hour is also run with checkpoints as they
//! were before the journal (the whole session captured from the store and saved: decoded, 8 bytes
//! a value, and rewritten), for a before/after in one sitting. `way=ingest` is the same hour with no
//! checkpoint at all (and one whole save at the end): what the ingest and the store hold alone.
//!
//! The allocator (mimalloc 3, as in `src/main.rs`) returns freed memory to the system a while
//! after it is freed: its purge delay, 1000 ms by default. The simulated hour runs ~700-900 times
//! faster than the real one, so within that second it frees what 10-15 minutes of a real
//! recording free, and the peak counts it as held. Each child therefore runs with
//! `MIMALLOC_PURGE_DELAY=1` (ms): the same share of the simulated hour as 1 s of the real one.
//! The journal runs once more with the default delay: the compressed worst case.
//!
//! `record_hour/checkpoint_30s_at_1h` (criterion): one checkpoint of 30 s of new samples on top of
//! an hour (wall time, start to synced, the ingest waiting); its share of a core is that time over
//! 30 s. Caches: the page cache holds the journal (the writes land there, then the sync); the
//! store's blocks of the last 30 s are in CPU caches after their ingest, as in `record`.
//!
//! Run: `cargo bench --bench record_hour` (`-- --warm-up-time 1 --measurement-time 5` for a short
//! criterion sample). Results: docs/benchmarks.md.

use std::time::{Duration, Instant};

mod shapes;

use criterion::Criterion;
use zescope_model::session::{self, Recorder};
use zescope_sampler::layout::Kind;
use zescope_sampler::{Inventory, RunConfig, RunInfo, SampleBatch, SeriesInfo, StreamInfo};
use zescope_store::Store;

/// The app's allocator (`src/main.rs`), so memory is what it is there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SERIES: usize = 25;
const HOUR: usize = 3_600_000;
const PERIOD: usize = 30_000;
const BATCH: usize = 16;

fn run_info() -> RunInfo {
    // The series `shapes` generates, as the sampler describes them.
    let series = shapes::desc(SERIES)
        .series
        .into_iter()
        .map(|s| {
            let (kind, wrap) = match s.kind {
                zescope_store::SeriesKind::Cumulative { wrap } => (Kind::Cumulative, wrap),
                _ => (Kind::Gauge, None),
            };
            SeriesInfo { name: s.name, description: String::new(), unit: s.unit, kind, wrap }
        })
        .collect();
    RunInfo {
        run: 1,
        config: RunConfig {
            targets: Vec::new(),
            interval: Duration::from_millis(1),
            via: Default::default(),
            telemetry: true,
        },
        devices: vec!["Card".into()],
        simulated: true,
        streams: vec![StreamInfo {
            index: 0,
            target: 0,
            device: "Card".into(),
            group: "ComputeBasic".into(),
            layout: "bench".into(),
            series,
            read_path: zescope_sampler::ReadPath::Mapped,
        }],
        imports: 1,
        notices: Vec::new(),
    }
}

fn recorder(path: std::path::PathBuf, cap: usize) -> Recorder {
    let mut rec = Recorder::with_store(path, Inventory { source: None, devices: Vec::new() }, Store::new(cap));
    rec.started(&run_info());
    rec
}

/// This process's CPU time (user + system, all threads, 10 ms ticks).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// `VmHWM` (peak resident) or `VmRSS` of this process, in MB.
fn status_mb(key: &str) -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with(key)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap() / 1e3
}

/// Waits until `rec`'s checkpoint is over (its error, if any, shows at the next).
fn settle(rec: &mut Recorder) {
    while rec.checkpointing() {
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Feeds `samples` samples, the first at `from` ms, forcing a checkpoint after each 30 s of them.
fn feed(rec: &mut Recorder, from: usize, samples: usize, mut at_checkpoint: impl FnMut(&mut Recorder)) {
    let mut done = from;
    let shift = from as i64 * 1_000_000;
    shapes::generate(SERIES, samples, BATCH, false, |ts, values| {
        done += ts.len();
        let timestamps = ts.iter().map(|t| t + shift).collect();
        let b = SampleBatch { run: 1, stream: 0, timestamps, values: values.to_vec(), gap_before: false };
        rec.samples(&b).unwrap();
        if done.is_multiple_of(PERIOD) {
            at_checkpoint(rec);
        }
    });
}

/// The simulated hour in this process (`ZESCOPE_BENCH_HOUR=CAP`, `ZESCOPE_BENCH_WAY`): prints
/// one line of figures.
fn hour_child(cap: usize, way: &str) {
    let (before, none) = (way == "before", way == "ingest");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.ron");
    let mut rec = recorder(path.clone(), cap);
    let at_rest = status_mb("VmRSS");
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    let start = Instant::now();
    feed(&mut rec, 0, HOUR, |rec| {
        let (t, c) = (Instant::now(), cpu());
        if none {
            return;
        }
        if before {
            session::save(&path, &rec.session()).unwrap();
        } else {
            rec.checkpoint_if(true).unwrap();
            settle(rec);
        }
        walls.push(t.elapsed());
        cpus.push(cpu().saturating_sub(c));
    });
    let peak_run = status_mb("VmHWM");
    let t = Instant::now();
    if none || before {
        session::save(&path, &rec.session()).unwrap();
    } else {
        rec.checkpoint_if(false).unwrap();
        rec.finish().unwrap();
    }
    let finish = t.elapsed();
    let total: Duration = walls.iter().sum();
    let total_cpu: Duration = cpus.iter().sum();
    let file = std::fs::metadata(&path).unwrap().len() as f64 / 1e6;
    println!(
        "cap={} MiB way={}: {} checkpoints; RSS at rest {:.0} MB, peak {:.0} MB during the hour, {:.0} MB with the final save \
         ({:.0} MB at the end); checkpoints: {:.2} s wall in all (last {:.0} ms, largest {:.0} ms), \
         {:.2} s CPU in all = {:.3} % of a core over the hour; final save {:.0} ms; store {:.0} MB; file {:.0} MB; \
         simulated in {:.1} s",
        cap >> 20,
        way,
        walls.len(),
        at_rest,
        peak_run,
        status_mb("VmHWM"),
        status_mb("VmRSS"),
        total.as_secs_f64(),
        walls.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        walls.iter().max().copied().unwrap_or_default().as_secs_f64() * 1e3,
        total_cpu.as_secs_f64(),
        total_cpu.as_secs_f64() / 3600.0 * 100.0,
        finish.as_secs_f64() * 1e3,
        rec.store().memory_used() as f64 / 1e6,
        file,
        start.elapsed().as_secs_f64()
    );
}

/// The allocator's purge delay for the children, scaled to the simulated hour (module docs).
const PURGE_DELAY_MS: &str = "1";

/// Runs the hour in a child process per setting and prints its line: each way with the
/// allocator's purge delay scaled to the simulation, and the journal also with its default.
fn hours() {
    let exe = std::env::current_exe().unwrap();
    let before = std::env::var_os("ZESCOPE_BENCH_BEFORE").is_some();
    for cap in [zescope_store::default_cap(), 64 << 20] {
        let ways = if before { &["ingest", "journal", "before"][..] } else { &["ingest", "journal"][..] };
        let runs = ways.iter().map(|w| (*w, Some(PURGE_DELAY_MS))).chain([("journal", None)]);
        for (way, delay) in runs {
            let mut child = std::process::Command::new(&exe);
            child.env("ZESCOPE_BENCH_HOUR", cap.to_string()).env("ZESCOPE_BENCH_WAY", way);
            match delay {
                Some(ms) => child.env("MIMALLOC_PURGE_DELAY", ms),
                None => child.env_remove("MIMALLOC_PURGE_DELAY"),
            };
            let out = child.output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let delay = delay.map_or("default (1000 ms)".to_owned(), |ms| format!("{ms} ms"));
            print!("record_hour/hour/purge delay {delay}/{}", String::from_utf8_lossy(&out.stdout));
        }
    }
}

fn checkpoint_at_an_hour(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = recorder(dir.path().join("run.ron"), zescope_store::default_cap());
    feed(&mut rec, 0, HOUR, |rec| {
        rec.checkpoint_if(true).unwrap();
        settle(rec);
    });
    let mut at = HOUR;
    let mut g = c.benchmark_group("record_hour");
    g.sampling_mode(criterion::SamplingMode::Flat);
    g.bench_function("checkpoint_30s_at_1h", |b| {
        b.iter_custom(|iters| {
            let mut took = Duration::ZERO;
            for _ in 0..iters {
                // 30 s more (the last sample ends the period and checkpoints: timed).
                feed(&mut rec, at, PERIOD, |rec| {
                    let t = Instant::now();
                    rec.checkpoint_if(true).unwrap();
                    settle(rec);
                    took += t.elapsed();
                });
                at += PERIOD;
            }
            took
        })
    });
    g.finish();
}

fn main() {
    if let Ok(cap) = std::env::var("ZESCOPE_BENCH_HOUR") {
        hour_child(cap.parse().unwrap(), &std::env::var("ZESCOPE_BENCH_WAY").unwrap_or_default());
        return;
    }
    hours();
    let mut c = Criterion::default().sample_size(10).configure_from_args();
    checkpoint_at_an_hour(&mut c);
    c.final_summary();
}
