//! Store benchmarks.
//!
//! - `store/ingest`: values appended per second from sampler-shaped batches
//!   (64 samples x 16 counters, half gauges, half cumulative u32 counters) into
//!   a store at its 256 MiB cap, so the measurement includes the steady-state
//!   coarsening of old data that a long recording does.
//! - `store/envelope/1M`, `store/envelope/10M`: one series' envelope at 1600
//!   columns over the whole history (the per-series cost inside a plot frame).
//! - `store/stats/10M`: min/max/mean/last/count over a random 10% of 10M samples.
//!
//! Before the benchmarks it prints the store's own accounting of bytes per
//! stored value at full resolution (16 counters, 1M samples).
//!
//! Run: `cargo bench --bench store`. Results: docs/benchmarks.md.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zescope::store::{Envelope, SeriesDesc, SeriesKind, Store, StreamDesc, StreamId};

const SERIES: usize = 16;
const PERIOD_NS: i64 = 1_000_000;

fn desc() -> StreamDesc {
    StreamDesc {
        name: "bench".into(),
        series: (0..SERIES)
            .map(|s| SeriesDesc {
                name: format!("counter {s}"),
                unit: "u".into(),
                kind: if s % 2 == 0 {
                    SeriesKind::Gauge
                } else {
                    SeriesKind::Cumulative { wrap: Some(4_294_967_296.0) }
                },
            })
            .collect(),
    }
}

/// Generates sampler-shaped batches.
struct Feed {
    t: i64,
    noise: u64,
    totals: [f64; SERIES],
    ts: Vec<i64>,
    vals: Vec<f64>,
}

impl Feed {
    fn new() -> Feed {
        Feed { t: 0, noise: 0x9E37_79B9_7F4A_7C15, totals: [0.0; SERIES], ts: Vec::new(), vals: Vec::new() }
    }

    fn next(&mut self, samples: usize) {
        self.ts.clear();
        self.vals.clear();
        for _ in 0..samples {
            self.t += PERIOD_NS;
            self.ts.push(self.t);
            for s in 0..SERIES {
                self.noise ^= self.noise << 13;
                self.noise ^= self.noise >> 7;
                self.noise ^= self.noise << 17;
                let r = (self.noise >> 44) as f64;
                self.vals.push(if s % 2 == 0 {
                    r
                } else {
                    self.totals[s] = (self.totals[s] + r) % 4_294_967_296.0;
                    self.totals[s]
                });
            }
        }
    }
}

fn filled(samples: usize, cap: usize) -> (Store, StreamId) {
    let mut store = Store::new(cap);
    let id = store.begin_stream(desc());
    let mut feed = Feed::new();
    for _ in 0..samples / 4096 {
        feed.next(4096);
        store.append(id, &feed.ts, &feed.vals).unwrap();
    }
    (store, id)
}

fn report_bytes_per_value() {
    let samples = 1 << 20;
    let (store, _) = filled(samples, usize::MAX);
    let per_value = store.memory_used() as f64 / (samples * SERIES) as f64;
    eprintln!("store: {per_value:.3} bytes per stored value at full resolution ({SERIES} counters, {samples} samples)");
}

fn benches(c: &mut Criterion) {
    report_bytes_per_value();
    let mut group = c.benchmark_group("store");
    group.sample_size(10).warm_up_time(Duration::from_secs(2)).measurement_time(Duration::from_secs(5));

    const BATCH: usize = 64;
    const BATCHES: usize = 64;
    let mut store = Store::new(256 << 20);
    let id = store.begin_stream(desc());
    let mut feed = Feed::new();
    group.throughput(Throughput::Elements((BATCH * BATCHES * SERIES) as u64));
    group.bench_function("ingest", |b| {
        b.iter(|| {
            for _ in 0..BATCHES {
                feed.next(BATCH);
                store.append(id, &feed.ts, &feed.vals).unwrap();
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
                k = (k + 1) % 2;
                store.envelope(s, t0 + k, t1, 1600, &mut env);
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
