//! Derived series (`docs/derived-series.md`): what they cost live, and over a recording.
//!
//! - `derive/over_recording/*` (criterion): one derived series computed over a recording of 10M
//!   samples (`derive::Backfill::start` and `run_to_end`: the recording's rows read from the store
//!   a piece at a time, evaluated, the values stored), as the window does over an opened session.
//!   The recording is one stream of the simulated GPU's shape (a power in W that steps and jitters,
//!   a running total of bytes), 1 kHz, restored into a fresh store before each iteration (not
//!   timed), so every iteration starts from what opening the session gives. Caches: the
//!   recording's blocks are decoded once each, in order; nothing of the previous iteration is
//!   kept. Goal: at most 1 s. Printed after: three runs each with the wall time beside the
//!   thread's CPU time (on a shared machine the wall time holds other processes' turns).
//! - `live` (printed after): the simulated GPU (ComputeBasic, MemoryTraffic) and NPU
//!   (NpuActivity) sampled at 1 kHz by the sampler on its thread, each batch stored as the window
//!   and `record` do (`view::Ingest`), for `ZESCOPE_DERIVE_SECS` (5) seconds without derived
//!   series, then as long with 50 (`LIVE`: rates, ratios, windows from 10 ms to 1 s, integrals,
//!   across both devices and three streams), their batches stored too. Printed per phase: the
//!   sampler's achieved rate (its `Health`, the first second left out) and this consumer
//!   thread's CPU (`/proc/thread-self/stat`, 10 ms ticks); then the extra CPU of the 50, as a
//!   share of one core, two ways: the consumer's CPU with less without, and the time spent in
//!   `Deriver::samples` and storing its batches, measured around those calls. Goal: the
//!   sampler's rate unchanged, the extra at most 5 % of a core. Caches: each batch is derived
//!   right after it arrived, as in the window.
//!
//! Run: `cargo bench -p zescope-model --bench derive`. Results: docs/benchmarks.md.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use zescope_model::derive::{Backfill, Derivation, Deriver};
use zescope_model::session::RunHistory;
use zescope_model::view::Ingest;
use zescope_sampler::layout::Kind;
use zescope_sampler::{
    Command, DevicePath, Event, ReadPath, RunConfig, RunInfo, SampleBatch, SeriesInfo, StreamInfo, Target, Via,
};
use zescope_store::{Store, StreamData};

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Samples in the recording.
const RECORDED: usize = 10_000_000;

/// The recorded run: one stream, a power (W) and a running total of bytes.
fn recorded_run() -> RunInfo {
    let series = |name: &str, unit: &str, kind: Kind| SeriesInfo {
        name: name.into(),
        description: String::new(),
        unit: unit.into(),
        kind,
        wrap: None,
    };
    RunInfo {
        run: 1,
        config: RunConfig::single(DevicePath::default(), vec!["ComputeBasic".into()], Duration::from_millis(1)),
        devices: vec!["ze-sim GPU".into()],
        simulated: true,
        streams: vec![StreamInfo {
            index: 0,
            target: 0,
            device: "ze-sim GPU".into(),
            group: "ComputeBasic".into(),
            layout: "ze-sim ComputeBasic".into(),
            series: vec![series("GpuPower", "W", Kind::Gauge), series("BytesRead", "B", Kind::Cumulative)],
            read_path: ReadPath::Mapped,
        }],
        imports: 1,
        notices: Vec::new(),
    }
}

/// The recording as opening a session restores it: its stream's data and the run's history.
fn recording() -> (StreamData, RunInfo) {
    let info = recorded_run();
    let mut store = Store::new(usize::MAX);
    let mut ingest = Ingest::default();
    ingest.run_started(&mut store, info.clone());
    let (mut bytes, mut state) = (0.0f64, 0x9e37_79b9_7f4a_7c15u64);
    for start in (0..RECORDED).step_by(8192) {
        let n = (RECORDED - start).min(8192);
        let mut timestamps = Vec::with_capacity(n);
        let mut values = Vec::with_capacity(2 * n);
        for i in start..start + n {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let jitter = (state >> 40) as f64 / (1u64 << 24) as f64 - 0.5;
            let watts = if (i / 3000) % 3 == 0 { 12.0 } else { 95.0 } + jitter;
            bytes += 4e6 + 1e5 * jitter;
            timestamps.push((i as i64 + 1) * 1_000_000 + (state % 20_000) as i64);
            values.extend([watts, bytes.floor()]);
        }
        let b = SampleBatch { run: 1, stream: 0, timestamps, values, gap_before: false };
        ingest.samples(&mut store, &b).unwrap();
    }
    ingest.run_stopped(&mut store, 1);
    let id = store.streams().next().unwrap().id;
    (store.stream_data(id).unwrap(), info)
}

/// The recording, made once.
fn the_recording() -> &'static (StreamData, RunInfo) {
    static R: std::sync::OnceLock<(StreamData, RunInfo)> = std::sync::OnceLock::new();
    R.get_or_init(recording)
}

/// One derivation of `def` over the recording: (wall, this thread's CPU) in seconds.
fn derive_once(def: &Derivation) -> (f64, f64) {
    let (data, info) = the_recording();
    // What opening the session gives (not timed).
    let mut store = Store::new(4 << 30);
    let id = store.restore_stream(data).unwrap();
    let mut history = RunHistory::default();
    history.run_started(info, None, &[id]);
    let mut ingest = Ingest::default();
    let (t, c) = (Instant::now(), thread_cpu());
    let (mut fill, _) = Backfill::start(def, &mut history, &mut store, &mut ingest).unwrap();
    fill.run_to_end(&mut store).unwrap();
    let out = (t.elapsed().as_secs_f64(), thread_cpu() - c);
    black_box(&store);
    out
}

fn over_recording(c: &mut Criterion) {
    let mut g = c.benchmark_group("derive/over_recording");
    g.sample_size(10);
    for (name, def) in
        [("avg_1s", "x=avg(ComputeBasic/GpuPower, 1s)"), ("rate", "x=rate(ComputeBasic/BytesRead) / 1e9")]
    {
        let def = Derivation::parse(def).unwrap();
        g.bench_function(name, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| Duration::from_secs_f64(derive_once(&def).0)).sum())
        });
    }
    g.finish();
}

/// The 50 derived series of the live phase.
fn live_defs() -> Vec<Derivation> {
    let windows = ["10ms", "100ms", "250ms", "1s", "50ms"];
    let templates = [
        "rate(MemoryTraffic/BytesRead) / 1e9",
        "avg(ComputeBasic/GpuPower, {w})",
        "stddev(ComputeBasic/GpuPower, {w})",
        "max(ComputeBasic/GpuUtilization, {w})",
        "integral(ComputeBasic/GpuPower)",
        "MemoryTraffic/BytesRead / MemoryTraffic/BytesWritten",
        "100 - ComputeBasic/GpuTime",
        "rms(NpuActivity/NpuPower, {w})",
        "NpuActivity/NpuPower / NpuActivity/Inferences",
        "clamp(ComputeBasic/GpuFrequency, 500, 1500) + min(ComputeBasic/GpuUtilization, {w}) * MemoryTraffic/MemoryTemperature",
    ];
    (0..50)
        .map(|i| {
            let text = templates[i % templates.len()].replace("{w}", windows[i / templates.len()]);
            Derivation::parse(&format!("d{i}={text}")).unwrap()
        })
        .collect()
}

/// CPU seconds of the calling thread (`/proc/thread-self/stat`, 10 ms ticks).
fn thread_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let f: Vec<f64> =
        stat.rsplit_once(')').map_or("", |(_, r)| r).split_whitespace().filter_map(|x| x.parse().ok()).collect();
    (f.get(10).unwrap_or(&0.0) + f.get(11).unwrap_or(&0.0)) / 100.0
}

/// One live phase: (achieved Hz, consumer CPU % of a core, deriving % of a core, samples stored).
fn live_phase(defs: Vec<Derivation>, secs: u64) -> (f64, f64, f64, u64) {
    let sim = zescope_sampler::testing::sim(|c| c.metrics = ze_sim::config::MetricsEnable::Always);
    let mut h = zescope_sampler::testing::sampler_on(&sim);
    let gpu = DevicePath { driver: 0, device: 0, sub_device: None };
    let npu = DevicePath { driver: 0, device: 1, sub_device: None };
    let cfg = RunConfig {
        targets: vec![
            Target::new(gpu, vec!["ComputeBasic".into(), "MemoryTraffic".into()]),
            Target::new(npu, vec!["NpuActivity".into()]),
        ],
        interval: Duration::from_millis(1),
        via: Via::default(),
        telemetry: false,
    };
    h.send(Command::Start(cfg));
    let mut deriver = Deriver::new(defs);
    let mut store = Store::new(1 << 30);
    let mut ingest = Ingest::default();
    let start = Instant::now();
    let (mut steady, mut hz, mut stored) = (None::<(Instant, f64)>, Vec::new(), 0u64);
    let mut deriving = Duration::ZERO;
    while start.elapsed() < Duration::from_secs(secs) {
        match h.events.recv_timeout(Duration::from_millis(100)) {
            Ok(Event::RunStarted(mut info)) => {
                deriver.run_started(&mut info).unwrap_or_else(|e| panic!("{e}"));
                ingest.run_started(&mut store, info);
            }
            Ok(Event::Samples(b)) => {
                stored += ingest.samples(&mut store, &b).unwrap();
                let t = Instant::now();
                for d in deriver.samples(&b) {
                    ingest.samples(&mut store, &d).unwrap();
                }
                if steady.is_some() {
                    deriving += t.elapsed();
                }
            }
            Ok(Event::Health(x)) => match steady {
                None => steady = Some((Instant::now(), thread_cpu())),
                Some(_) => hz.push(x.achieved_hz),
            },
            Ok(Event::Error(e)) => panic!("sampler error: {e}"),
            _ => {}
        }
    }
    let (t0, c0) = steady.expect("a steady state");
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), thread_cpu() - c0);
    h.send(Command::Stop);
    let _ = h.shutdown(Duration::from_secs(3));
    let achieved = hz.iter().sum::<f64>() / hz.len().max(1) as f64;
    (achieved, 100.0 * cpu / wall, 100.0 * deriving.as_secs_f64() / wall, stored)
}

/// The derivation over the recording again, wall time beside the thread's CPU time (on a
/// shared machine the wall time holds the time other processes had the core).
fn over_recording_cpu() {
    println!("| derive/over_recording (10M samples) | wall s | thread CPU s |");
    println!("|---|---|---|");
    for (name, def) in
        [("avg_1s", "x=avg(ComputeBasic/GpuPower, 1s)"), ("rate", "x=rate(ComputeBasic/BytesRead) / 1e9")]
    {
        for _ in 0..3 {
            let (wall, cpu) = derive_once(&Derivation::parse(def).unwrap());
            println!("| {name} | {wall:.3} | {cpu:.2} |");
        }
    }
}

fn live() {
    let secs: u64 = std::env::var("ZESCOPE_DERIVE_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    println!("derive/live: the simulated GPU + NPU at 1 kHz, {secs} s per phase (the first second left out)");
    println!(
        "| derived series | sampler achieved Hz | consumer CPU (% of a core) | in Deriver::samples + storing (% of a core) |"
    );
    println!("|---|---|---|---|");
    let (hz0, cpu0, _, _) = live_phase(Vec::new(), secs);
    println!("| 0 | {hz0:.1} | {cpu0:.2} | 0 |");
    let (hz1, cpu1, d1, _) = live_phase(live_defs(), secs);
    println!("| 50 | {hz1:.1} | {cpu1:.2} | {d1:.2} |");
    println!(
        "derive/live: rate {:.1} % of without; extra CPU {:.2} % of a core (consumer's CPU), {d1:.2} % (timed calls)",
        100.0 * hz1 / hz0.max(1e-9),
        cpu1 - cpu0
    );
}

criterion_group!(benches, over_recording);

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    over_recording_cpu();
    live();
}
