//! Perfetto trace export benchmarks: `perfetto/export_10M` and `perfetto/export_100M` write a
//! session of 10M and 100M values (one stream of 16 counters x 625 000 / 6.25M samples at 1 kHz,
//! shaped like GPU counters: `shapes/mod.rs`) to a `.pftrace` file as `zescope export
//! --perfetto` does (`write::perfetto_of`: the store's raw rows read block by block, encoded
//! packet by packet through a 1 MiB buffer, written to a temporary file, fsync'd and renamed);
//! `perfetto/encode_10M` does the same into `io::sink()`, the encoding alone.
//!
//! Caches: the store is built once and stays in memory (its decoded blocks are not cached by the
//! export: each iteration decodes every block again); the written file lands in the page cache,
//! and the fsync of each iteration writes it to the disk, so `export_*` includes the disk's
//! write speed. Before the benchmarks it prints the trace's size in bytes per value.
//!
//! Run: `cargo bench --bench perfetto`. Results: docs/benchmarks.md.

use std::hint::black_box;
use std::time::Duration;

mod shapes;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use shapes::SERIES;
use zescope_model::session::{KindRecord, SeriesMeta, StreamMeta};
use zescope_model::write::{PerfettoTrace, TraceHead, perfetto_of};
use zescope_store::{Store, StreamId};

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SAMPLES: usize = 625_000;

fn store(samples: usize) -> (Store, StreamId, StreamMeta) {
    let mut store = Store::new(usize::MAX);
    let desc = shapes::desc(SERIES);
    let meta = StreamMeta {
        name: "bench".into(),
        run: 1,
        device: "GPU".into(),
        group: "Bench".into(),
        layout: "bench".into(),
        series: desc
            .series
            .iter()
            .map(|s| SeriesMeta {
                metric: s.name.clone(),
                unit: s.unit.clone(),
                // The trace writes stored values whatever the kind.
                kind: KindRecord::Gauge,
                description: String::new(),
            })
            .collect(),
        read_path: None,
    };
    let id = store.begin_stream(desc);
    // Times on CLOCK_MONOTONIC start past zero, as a machine's uptime does.
    shapes::generate(SERIES, samples, 4096, false, |ts, vals| {
        let ts: Vec<i64> = ts.iter().map(|t| t + 3_600_000_000_000).collect();
        store.append(id, &ts, vals).unwrap()
    });
    (store, id, meta)
}

fn head(store: &Store) -> TraceHead {
    TraceHead { at_ns: store.total_time_range().unwrap().0, ..TraceHead::default() }
}

/// The encoding alone: every row into a sink.
fn encode(store: &Store, id: StreamId, meta: &StreamMeta) -> u64 {
    let mut t = PerfettoTrace::new(std::io::sink(), head(store)).unwrap();
    let k = t.stream(&meta.device, &meta.group, &meta.series).unwrap();
    store.for_each_raw_row(id, |time, row| t.row(k, time, row).unwrap());
    let n = t.bytes_written();
    t.finish().unwrap();
    n
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.pftrace");
    let mut group = c.benchmark_group("perfetto");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(15));
    let (s, id, meta) = store(SAMPLES);
    let values = (SAMPLES * SERIES) as u64;
    let w = perfetto_of(head(&s), &[(id, &meta)], &[], &s, &path).unwrap();
    assert_eq!(w.values, values);
    eprintln!(
        "perfetto: {:.2} bytes per value ({} bytes for {values} values)",
        w.bytes as f64 / values as f64,
        w.bytes
    );
    group.bench_function("encode_10M", |b| b.iter(|| black_box(encode(&s, id, &meta))));
    group.bench_function("export_10M", |b| {
        b.iter(|| black_box(perfetto_of(head(&s), &[(id, &meta)], &[], &s, &path).unwrap()))
    });
    drop(s);
    if std::env::var_os("ZESCOPE_BENCH_SKIP_100M").is_none() {
        let (s, id, meta) = store(SAMPLES * 10);
        // One export of 100M values takes seconds: ten of them, one at a time.
        group.sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(10));
        group.bench_function("export_100M", |b| {
            b.iter(|| black_box(perfetto_of(head(&s), &[(id, &meta)], &[], &s, &path).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(perfetto_benches, benches);
criterion_main!(perfetto_benches);
