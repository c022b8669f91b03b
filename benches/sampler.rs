//! `sampler/read_decode_256`: one seqlocked snapshot + decode of a 256-counter exported buffer
//! of the simulated driver, through the sampler's own read path. Goal: ≤ 2 µs.
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

use std::time::Duration;

use common::{streamed_sim, synthetic_sim};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zescope::layout::LayoutSet;
use zescope::sampler::{DevicePath, DirectRun, RunConfig, Via};
use zescope::store::Store;
use zescope::view::Ingest;
use zescope::ze::Loader;

fn read_decode(c: &mut Criterion) {
    let sim = synthetic_sim(256, 1000);
    let loader = Loader::from_sim(sim.clone()).unwrap();
    let cfg = RunConfig {
        device: DevicePath::default(),
        groups: vec!["Synthetic".into()],
        metrics: Vec::new(),
        custom_group: false,
        interval: Duration::from_millis(1),
        via: Default::default(),
    };
    let mut run = DirectRun::start(&loader, &LayoutSet::built_in(), &cfg).unwrap();
    assert_eq!(run.info().streams[0].series.len(), 256);
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
    g.finish();
    assert!(run.stop().is_empty());
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

fn streamer_decode(c: &mut Criterion) {
    let sim = streamed_sim();
    let loader = Loader::from_sim(sim.clone()).unwrap();
    let cfg = RunConfig {
        device: DevicePath::default(),
        groups: vec!["Stream16".into()],
        metrics: Vec::new(),
        custom_group: false,
        interval: Duration::from_micros(100),
        via: Via::Streamer,
    };
    let mut run = DirectRun::start(&loader, &LayoutSet::built_in(), &cfg).unwrap();
    let info = run.info().clone();
    assert_eq!(info.streams[0].layout, "streamer (10 µs, 10 reports per notification)");
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
