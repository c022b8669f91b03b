//! Store benchmarks.
//!
//! - `store/ingest`: values appended per second from sampler-shaped batches
//!   (64 samples x 16 counter-shaped series, as `benches/session.rs` uses: see
//!   `shapes/mod.rs`; generated before the measurement) into a store at its
//!   256 MiB cap, so the measurement includes sealing (encoding) every full
//!   block and the steady-state coarsening of old data a long recording does.
//! - `store/envelope/1M`, `store/envelope/10M`: one series' envelope at 1600
//!   columns over the whole history (the per-series cost inside a plot frame).
//! - `store/stats/10M`: min/max/mean/last/count over a random 10% of 10M samples.
//!
//! Before the benchmarks it prints the store's own accounting of bytes per
//! stored value at full resolution (16 series x 1M samples), for the
//! counter-shaped data, and, on a line that says "worst", for 16 noisy
//! full-precision floats. A third line gives the figure for what a device gives:
//! the simulated GPU's `ComputeBasic` and `MemoryTraffic` groups recorded through
//! the sampler's own path (`DirectRun` + `view::Ingest`, as `zescope record
//! --source sim` does) for `DEVICE_SECS` s at 1 ms, the run then stopped (its
//! streams ended, so their last blocks are sealed too).
//!
//! Run: `cargo bench --bench store`. Results: docs/benchmarks.md.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod shapes;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shapes::SERIES;
use ze_sim::Sim;
use ze_sim::config::{MetricsEnable, SimConfig};
use zescope_model::view::Ingest;
use zescope_sampler::layout::LayoutSet;
use zescope_sampler::{DevicePath, DirectRun, RunConfig};
use zescope_store::{Envelope, Store, StreamId};
use zescope_ze::Loader;

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const PERIOD_NS: i64 = 1_000_000;
/// Seconds of the simulated device recorded for the device-shaped figure.
const DEVICE_SECS: u64 = 8;

fn filled(samples: usize, cap: usize) -> (Store, StreamId) {
    let mut store = Store::new(cap);
    let id = store.begin_stream(shapes::desc(SERIES));
    shapes::generate(SERIES, samples, 4096, false, |ts, vals| store.append(id, ts, vals).unwrap());
    (store, id)
}

fn report_bytes_per_value() {
    let samples = 1 << 20;
    for (label, worst) in [("counter-shaped data", false), ("worst case, 16 noisy full-precision floats", true)] {
        let mut store = Store::new(usize::MAX);
        let id = store.begin_stream(shapes::desc(SERIES));
        shapes::generate(SERIES, samples, 4096, worst, |ts, vals| store.append(id, ts, vals).unwrap());
        let per_value = store.memory_used() as f64 / (samples * SERIES) as f64;
        eprintln!(
            "store: {label}: {per_value:.3} bytes per stored value at full resolution ({SERIES} series x {samples} samples)"
        );
    }
}

fn report_device_bytes_per_value() {
    let groups = ["ComputeBasic", "MemoryTraffic"];
    let sim =
        Arc::new(Sim::new(SimConfig { metrics: MetricsEnable::Always, update_period_us: 1000, ..Default::default() }));
    let loader = Loader::in_process(sim.in_process()).expect("the simulated driver loads");
    let cfg = RunConfig::single(
        DevicePath::default(),
        groups.iter().map(|g| g.to_string()).collect(),
        Duration::from_millis(1),
    );
    let mut run = DirectRun::start(&loader, &LayoutSet::built_in(), &cfg).expect("the simulated device samples");
    let mut store = Store::new(usize::MAX);
    let mut ingest = Ingest::default();
    let run_id = ingest.run_started(&mut store, run.info().clone()).info.run;
    let end = Instant::now() + Duration::from_secs(DEVICE_SECS);
    while Instant::now() < end {
        std::thread::sleep(Duration::from_micros(250));
        run.read().expect("the simulated buffer stays readable");
        for batch in run.take_batches() {
            ingest.samples(&mut store, &batch).expect("ingest");
        }
    }
    let notes = run.stop();
    ingest.run_stopped(&mut store, run_id);
    let values: u64 = store.streams().map(|s| s.appended * s.desc.series.len() as u64).sum();
    let samples: u64 = store.streams().map(|s| s.appended).max().unwrap_or(0);
    let per_value = store.memory_used() as f64 / values.max(1) as f64;
    eprintln!(
        "store: simulated device ({}, {samples} samples at 1 ms, {values} values): {per_value:.3} bytes per stored \
         value{}",
        groups.join(" + "),
        if notes.is_empty() { String::new() } else { format!(" ({})", notes.join("; ")) }
    );
}

fn benches(c: &mut Criterion) {
    report_bytes_per_value();
    report_device_bytes_per_value();
    let mut group = c.benchmark_group("store");
    group.sample_size(10).warm_up_time(Duration::from_secs(2)).measurement_time(Duration::from_secs(5));

    const BATCH: usize = 64;
    const BATCHES: usize = 64;
    // One cycle of batches, replayed with later timestamps (the generator is not measured).
    let mut cycle: Vec<(Vec<i64>, Vec<f64>)> = Vec::new();
    shapes::generate(SERIES, BATCH * BATCHES * 16, BATCH, false, |ts, vals| cycle.push((ts.to_vec(), vals.to_vec())));
    let span = (BATCH * BATCHES * 16) as i64 * PERIOD_NS;
    let mut store = Store::new(256 << 20);
    let id = store.begin_stream(shapes::desc(SERIES));
    let (mut next, mut shift) = (0usize, 0i64);
    let mut ts = Vec::with_capacity(BATCH);
    group.throughput(Throughput::Elements((BATCH * BATCHES * SERIES) as u64));
    group.bench_function("ingest", |b| {
        b.iter(|| {
            for _ in 0..BATCHES {
                let (t, v) = &cycle[next];
                ts.clear();
                ts.extend(t.iter().map(|&t| t + shift));
                store.append(id, &ts, v).unwrap();
                next += 1;
                if next == cycle.len() {
                    next = 0;
                    shift += span;
                }
            }
        })
    });
    eprintln!(
        "store: after ingest, {} MiB used of the 256 MiB cap, coarsened before {:?}",
        store.memory_used() >> 20,
        store.retention(id).and_then(|r| r.coarsened_before())
    );

    group.finish();

    // Queries: time per call (no throughput).
    let mut group = c.benchmark_group("store");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for (label, samples) in [("1M", 1_000_000usize), ("10M", 10_000_000)] {
        let (store, id) = filled(samples, usize::MAX);
        let s = store.series_id(id, 0).unwrap();
        let (t0, t1) = store.time_range(id).unwrap();
        let mut env = Envelope::new();
        let mut k = 0;
        group.bench_function(format!("envelope/{label}"), |b| {
            b.iter(|| {
                k += 1;
                store.envelope(s, t0 + k, t1 + k, 1600, &mut env);
                black_box(env.columns().len())
            })
        });
        if samples == 10_000_000 {
            let mut k = 0i64;
            group.bench_function("stats/10M", |b| {
                b.iter(|| {
                    k = (k * 7919 + 13) % 9_000_000;
                    let a = t0 + k * PERIOD_NS;
                    black_box(store.stats(s, a, a + 1_000_000 * PERIOD_NS))
                })
            });
        }
    }
    group.finish();
}

criterion_group!(store_benches, benches);
criterion_main!(store_benches);
