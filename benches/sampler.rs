//! `sampler/read_decode_256*`: one seqlocked snapshot + decode of a 256-counter exported buffer
//! of the simulated driver, through the sampler's own read path. Goal: ≤ 2 µs.
//!
//! What the simulated device does and does not exercise:
//! - Its buffer is a memfd, not a dma-buf: the first `DMA_BUF_IOCTL_SYNC` answers ENOTTY and
//!   the read path skips the sync ioctls from then on, so neither variant pays the two
//!   syscalls a real dma-buf costs per read.
//! - `read_decode_256`: the device writes a snapshot every 1 ms while the loop reads every
//!   ~µs, so almost every read finds the same device timestamp as the one before (an
//!   "unchanged" read: the snapshot is copied and decoded, then dropped instead of appended,
//!   and the copied bytes are the same as last time, warm in cache). This is the path a
//!   sampler polling faster than the device updates takes.
//! - `read_decode_256_changing`: the device writes every 10 µs (its fastest) and each timed
//!   read starts after a new snapshot has been published, so every read copies and decodes
//!   fresh data (it may also meet the writer mid-update and retry). The untimed wait for the
//!   next snapshot is excluded (`iter_custom`). The share of reads that still found unchanged
//!   data is printed.
//!
//! `sampler/streamer_decode`: the time-based streamer of the simulated driver at 10 µs reports
//! (100k reports/s offered) on a 16-metric group: each iteration waits 1 ms (not measured) for
//! about 100 reports, then measures `zetMetricStreamerReadData` (size query and data) +
//! Calculate + turning reports into samples + `view::Ingest` into a store, as the sampler thread
//! does at a 100 µs... 1 ms tick. Criterion's throughput is reports/s of that work; the line
//! printed after it gives the ratio to the offered 100k reports/s (goal ≥ 3×) and the reads the
//! driver answered with DROPPED_DATA (goal 0). Caches: the reports are fresh each iteration (the
//! driver makes them as time passes); the Calculate output and read buffers are reused, as in a
//! run.
//!
//!     cargo bench --bench sampler

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use common::{streamed_sim, synthetic_sim};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zescope_model::view::Ingest;
use zescope_sampler::layout::LayoutSet;
use zescope_sampler::{DevicePath, DirectRun, RunConfig, Via};
use zescope_store::Store;
use zescope_ze::Loader;

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn start(update_period_us: u64) -> (std::sync::Arc<ze_sim::Sim>, DirectRun) {
    let sim = synthetic_sim(256, update_period_us);
    let loader = Loader::in_process(sim.in_process()).unwrap();
    let cfg = RunConfig::single(DevicePath::default(), vec!["Synthetic".into()], Duration::from_millis(1));
    let run = DirectRun::start(&loader, &LayoutSet::built_in(), &cfg).unwrap();
    assert_eq!(run.info().streams[0].series.len(), 256);
    (sim, run)
}

fn read_decode(c: &mut Criterion) {
    let (sim, mut run) = start(1000);
    let mut g = c.benchmark_group("sampler");
    g.bench_function("read_decode_256", |b| {
        b.iter(|| {
            let r = run.read().expect("the simulated buffer stays readable");
            // Keep the batch from growing without bound across iterations.
            if r.samples > 0 {
                drop(run.take_batches());
            }
            r
        })
    });
    assert!(run.stop().is_empty());
    assert!(sim.report().is_clean(), "{:?}", sim.report());

    let (sim, mut run) = start(10);
    let (mut reads, mut fresh) = (0u64, 0u64);
    g.bench_function("read_decode_256_changing", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let seen = sim.snapshots_written();
                while sim.snapshots_written() == seen {
                    std::hint::spin_loop();
                }
                let t = Instant::now();
                let r = run.read().expect("the simulated buffer stays readable");
                total += t.elapsed();
                reads += 1;
                if r.samples > 0 {
                    fresh += 1;
                    drop(run.take_batches());
                }
                black_box(r);
            }
            total
        })
    });
    g.finish();
    eprintln!("sampler/read_decode_256_changing: {fresh} of {reads} reads found a new snapshot");
    assert!(run.stop().is_empty());
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

fn streamer_decode(c: &mut Criterion) {
    let sim = streamed_sim();
    let loader = Loader::in_process(sim.in_process()).unwrap();
    let cfg = RunConfig {
        via: Via::Streamer,
        ..RunConfig::single(DevicePath::default(), vec!["Stream16".into()], Duration::from_micros(100))
    };
    let mut run = DirectRun::start(&loader, &LayoutSet::built_in(), &cfg).unwrap();
    let info = run.info().clone();
    // The 10 µs period; the notification comes once per batch interval (its report count is
    // the sampler's to choose), and each read below takes what is there.
    assert!(info.streams[0].layout.starts_with("streamer (10 µs, "), "{}", info.streams[0].layout);
    assert_eq!(info.streams[0].series.len(), 15, "16 metrics: the timestamp and 15 series");
    let mut store = Store::new(256 << 20);
    let mut ingest = Ingest::default();
    ingest.run_started(&mut store, info);
    let (mut reports, mut busy, mut dropped) = (0u64, Duration::ZERO, 0u64);
    let mut g = c.benchmark_group("sampler");
    g.throughput(Throughput::Elements(100)).sample_size(10).measurement_time(Duration::from_secs(2));
    g.bench_function("streamer_decode", |b| {
        b.iter_custom(|iters| {
            let mut measured = Duration::ZERO;
            for _ in 0..iters {
                std::thread::sleep(Duration::from_millis(1));
                let t = std::time::Instant::now();
                let r = run.read().expect("the simulated streamer stays readable");
                for batch in run.take_batches() {
                    ingest.samples(&mut store, &batch).expect("ingest");
                }
                let dt = t.elapsed();
                measured += dt;
                busy += dt;
                reports += r.samples;
                dropped += r.dropped_reports;
            }
            measured
        })
    });
    g.finish();
    let rate = reports as f64 / busy.as_secs_f64();
    println!(
        "sampler/streamer_decode: {reports} reports in {:.3} s of reading = {rate:.0} reports/s, {:.1}x the offered \
         100000 reports/s; reads with DROPPED_DATA: {dropped}",
        busy.as_secs_f64(),
        rate / 100_000.0
    );
    assert!(run.stop().is_empty());
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

criterion_group!(benches, read_decode, streamer_decode);
criterion_main!(benches);
