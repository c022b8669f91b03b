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
//!     cargo bench --bench sampler

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use common::synthetic_sim;
use criterion::{Criterion, criterion_group, criterion_main};
use zescope::layout::LayoutSet;
use zescope::sampler::{DevicePath, DirectRun, RunConfig};
use zescope::ze::Loader;

fn start(update_period_us: u64) -> (std::sync::Arc<ze_sim::Sim>, DirectRun) {
    let sim = synthetic_sim(256, update_period_us);
    let loader = Loader::from_sim(sim.clone()).unwrap();
    let cfg = RunConfig {
        device: DevicePath::default(),
        groups: vec!["Synthetic".into()],
        metrics: Vec::new(),
        custom_group: false,
        interval: Duration::from_millis(1),
    };
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

criterion_group!(benches, read_decode);
criterion_main!(benches);
