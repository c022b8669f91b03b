//! `sampler/read_decode_256`: one seqlocked snapshot + decode of a 256-counter exported buffer
//! of the simulated driver, through the sampler's own read path. Goal: ≤ 2 µs.
//!
//!     cargo bench --bench sampler

mod common;

use std::time::Duration;

use common::synthetic_sim;
use criterion::{Criterion, criterion_group, criterion_main};
use zescope::layout::LayoutSet;
use zescope::sampler::{DevicePath, DirectRun, RunConfig};
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

criterion_group!(benches, read_decode);
criterion_main!(benches);
