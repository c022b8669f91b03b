//! `plot_frame/full_ui/4x4x1M`: one headless frame of the whole zescope UI (menu, source panel,
//! toolbar, status bar, 4 panes × 4 series of 1M samples each with legends and statistics),
//! `Context::run_ui` + `tessellate`, no GPU. Live mode: one new sample per frame, so the window
//! slides and every frame queries the store. Goal: ≤ 4 ms of CPU per frame.
//!
//! The live minute (~60,000 samples per series) is at raw detail, so each plot keeps its columns
//! from frame to frame on a fixed time grid (`crates/zescope-window/src/envelope_plot/grid.rs`), as it does in the
//! app: a frame computes only the columns of the newest block (at most 256 samples, still
//! changing) and the column the view enters from, and reuses the rest, which are what a fresh
//! query of the same grid gives. The first two frames (and the two after any change of the
//! stored history) compute the whole minute: the store's cache of decoded blocks (`crates/zescope-store/src/decoded.rs`)
//! serves those blocks (the bench prints its hits). The envelope cache keyed by range and the
//! column-plan cache miss: the range moves every frame.
//!
//!     cargo bench --bench ui_frame

use std::time::Duration;

mod headless;

use criterion::{Criterion, criterion_group, criterion_main};
use egui::Context;
use zescope_model::view::series::{SeriesEntry, SeriesKey};
use zescope_sampler::SeriesInfo;
use zescope_sampler::layout::Kind;
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};
use zescope_window::ZescopeApp;

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const PANES: usize = 4;
const PER_PANE: usize = 4;
const SAMPLES: usize = 1_000_000;
const PERIOD_NS: i64 = 1_000_000;

fn value(i: usize, s: usize) -> f64 {
    (i as f64 * 1e-4 + s as f64).sin() * 10.0 + s as f64 * 3.0 + if i % 9973 == s { 40.0 } else { 0.0 }
}

fn app() -> ZescopeApp {
    let n = PANES * PER_PANE;
    let mut store = Store::new(usize::MAX);
    let id = store.begin_stream(StreamDesc {
        name: "bench".into(),
        series: (0..n)
            .map(|s| SeriesDesc { name: format!("m{s}"), unit: "W".into(), kind: SeriesKind::Gauge })
            .collect(),
    });
    let mut ts = Vec::new();
    let mut vals = Vec::new();
    for start in (0..SAMPLES).step_by(4096) {
        ts.clear();
        vals.clear();
        for i in start..(start + 4096).min(SAMPLES) {
            ts.push(i as i64 * PERIOD_NS);
            vals.extend((0..n).map(|s| value(i, s)));
        }
        store.append(id, &ts, &vals).unwrap();
    }
    let mut app = headless::app(store);
    let mut keys = Vec::new();
    for s in 0..n {
        let key = SeriesKey { device: "bench".into(), group: "G".into(), metric: format!("m{s}") };
        let info = SeriesInfo {
            name: format!("m{s}"),
            description: String::new(),
            unit: "W".into(),
            kind: Kind::Gauge,
            wrap: None,
        };
        let sid = app.store.series_id(id, s).unwrap();
        app.state.ingest.series.insert(key.clone(), SeriesEntry { info, ids: vec![sid] });
        keys.push(key);
    }
    for p in 0..PANES {
        let pane = app.panes.add_pane();
        for k in &keys[p * PER_PANE..(p + 1) * PER_PANE] {
            app.panes.assign(k, Some(pane));
        }
    }
    app
}

fn full_ui(c: &mut Criterion) {
    let mut app = app();
    let ctx = Context::default();
    let id = app.store.streams().next().unwrap().id;
    let mut i = SAMPLES;
    let row: Vec<f64> = (0..PANES * PER_PANE).map(|s| value(0, s)).collect();
    let mut g = c.benchmark_group("plot_frame");
    g.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    g.bench_function("full_ui/4x4x1M", |b| {
        b.iter(|| {
            // Live data: one more sample, so the window slides and the store is queried.
            app.store.append(id, &[i as i64 * PERIOD_NS], &row).unwrap();
            i += 1;
            headless::frame(&ctx, &mut app)
        })
    });
    g.finish();
    println!("full_ui: {} block lookups answered by the cache of decoded blocks", app.store.decoded_cache_hits());
}

criterion_group!(benches, full_ui);
criterion_main!(benches);
