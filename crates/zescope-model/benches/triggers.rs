//! Trigger evaluation against ingest, per sample, in one run (in the model crate, beside the
//! evaluator, so it builds without the window's dependencies).
//!
//! A run of 10 streams × 100 series (1 000 series: gauges, and every fourth a running total that
//! is tested as its rate), batches of 64 samples per stream with noisy, moving values. 100
//! triggers, each on its own series, mixed as a user writes them: `>`, `<`, `cross`, and
//! `rise … in 100ms` (a monotonic deque).
//!
//! - `triggers/ingest`: `view::Ingest::samples` of one batch of every stream into a store (256 MiB
//!   cap, so sealing and coarsening are in it), what the window and `record` do with every batch;
//! - `triggers/evaluate`: `triggers::Evaluator::samples` of the same batches (the firings' vector
//!   reused, as the callers do).
//!
//! Both move the batches' timestamps forward first (the same work in each). Caches: the batches
//! (640 KiB of values) and the evaluator's state stay in the CPU's caches between iterations, as
//! they do when a batch is evaluated right after it arrived; the store writes into memory that
//! grows. After the two it prints the evaluation's cost as a share of ingest's (the goal: at
//! most 5 %), measured over the same batches in one loop.
//!
//! Run: `cargo bench -p zescope-model --bench triggers`. Results: docs/benchmarks.md.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zescope_model::triggers::{Evaluator, Firing, Trigger};
use zescope_model::view::Ingest;
use zescope_sampler::layout::Kind;
use zescope_sampler::{DevicePath, ReadPath, RunConfig, RunInfo, SampleBatch, SeriesInfo, StreamInfo};
use zescope_store::Store;

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const STREAMS: usize = 10;
const PER_STREAM: usize = 100;
const TRIGGERS: usize = 100;
const ROWS: usize = 64;
const PERIOD_NS: i64 = 1_000_000;

fn run() -> RunInfo {
    let series = |s: usize| {
        (0..PER_STREAM)
            .map(|k| SeriesInfo {
                name: format!("m{k}"),
                description: String::new(),
                unit: "x".into(),
                kind: if (s + k).is_multiple_of(4) { Kind::Cumulative } else { Kind::Gauge },
                wrap: None,
            })
            .collect()
    };
    RunInfo {
        run: 1,
        config: RunConfig::single(DevicePath::default(), vec![], Duration::from_millis(1)),
        devices: vec!["dev".into()],
        simulated: true,
        streams: (0..STREAMS)
            .map(|s| StreamInfo {
                index: s,
                target: 0,
                device: "dev".into(),
                group: format!("G{s}"),
                layout: "l".into(),
                series: series(s),
                read_path: ReadPath::Mapped,
            })
            .collect(),
        imports: STREAMS,
        notices: Vec::new(),
    }
}

fn triggers() -> Vec<Trigger> {
    (0..TRIGGERS)
        .map(|i| {
            let series = format!("G{}/m{}", i % STREAMS, (i * 37) % PER_STREAM);
            let test = match i % 4 {
                0 => "> 50",
                1 => "< 20",
                2 => "cross 40",
                _ => "rise 30 in 100ms",
            };
            Trigger::parse(&format!("{series} {test}")).unwrap()
        })
        .collect()
}

/// One batch per stream, values moving between 0 and 100 (totals rising by that much).
fn batches() -> Vec<SampleBatch> {
    (0..STREAMS)
        .map(|s| {
            let mut values = Vec::with_capacity(ROWS * PER_STREAM);
            for r in 0..ROWS {
                for k in 0..PER_STREAM {
                    let level = 50.0 + 45.0 * ((r as f64 * 0.21 + k as f64).sin());
                    let cumulative = (s + k).is_multiple_of(4);
                    values.push(if cumulative { (r as f64) * 1000.0 + level } else { level });
                }
            }
            SampleBatch {
                run: 1,
                stream: s,
                timestamps: (0..ROWS as i64).map(|r| r * PERIOD_NS).collect(),
                values,
                gap_before: false,
            }
        })
        .collect()
}

/// Moves every batch one batch length on (timestamps stay increasing per stream). Running totals
/// restart from their first value: the store counts that as a reset (no rate), the evaluator too.
fn advance(batches: &mut [SampleBatch]) {
    for b in batches {
        b.timestamps.iter_mut().for_each(|t| *t += ROWS as i64 * PERIOD_NS);
    }
}

fn bench(c: &mut Criterion) {
    let info = run();
    let samples = (STREAMS * ROWS) as u64;
    let mut g = c.benchmark_group("triggers");
    g.throughput(Throughput::Elements(samples));

    let mut store = Store::new(256 << 20);
    let mut ingest = Ingest::default();
    ingest.run_started(&mut store, info.clone());
    let mut bs = batches();
    g.bench_function("ingest", |b| {
        b.iter(|| {
            advance(&mut bs);
            for x in &bs {
                black_box(ingest.samples(&mut store, x).unwrap());
            }
        })
    });

    let mut ev = Evaluator::new(triggers());
    let bound: usize = ev.run_started(&info).iter().sum();
    assert_eq!(bound, TRIGGERS, "each trigger watches one series");
    let mut out: Vec<Firing> = Vec::with_capacity(1024);
    let mut bs = batches();
    g.bench_function("evaluate", |b| {
        b.iter(|| {
            advance(&mut bs);
            out.clear();
            for x in &bs {
                ev.samples(x, &mut out);
            }
            black_box(out.len());
        })
    });
    g.finish();

    // The share, measured over the same batches in one loop (alternating, so both see the same
    // machine state).
    let mut store = Store::new(256 << 20);
    let mut ingest = Ingest::default();
    ingest.run_started(&mut store, info.clone());
    let mut ev = Evaluator::new(triggers());
    ev.run_started(&info);
    let mut bs = batches();
    let (mut t_ingest, mut t_eval, mut fired) = (Duration::ZERO, Duration::ZERO, 0usize);
    for _ in 0..2000 {
        advance(&mut bs);
        let t0 = Instant::now();
        for x in &bs {
            black_box(ingest.samples(&mut store, x).unwrap());
        }
        let t1 = Instant::now();
        out.clear();
        for x in &bs {
            ev.samples(x, &mut out);
        }
        fired += black_box(out.len());
        let t2 = Instant::now();
        t_ingest += t1 - t0;
        t_eval += t2 - t1;
    }
    let per = |d: Duration| d.as_nanos() as f64 / (2000.0 * samples as f64);
    println!(
        "triggers: {TRIGGERS} triggers on {} series: evaluation {:.1} ns per sample row, ingest {:.1} ns: \
         evaluation is {:.2} % of ingest ({fired} firings)",
        STREAMS * PER_STREAM,
        per(t_eval),
        per(t_ingest),
        100.0 * t_eval.as_secs_f64() / t_ingest.as_secs_f64()
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
