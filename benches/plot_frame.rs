//! `plot_frame`: one headless egui frame (`Context::run_ui` + `tessellate`, no
//! GPU) drawing 16 series in one egui_plot plot 1600 x 900 points wide.
//! A frame prepares each envelope plot before `Plot::show` (`EnvelopePlot::prepare`: the
//! series' envelopes queried and meshed for the range the frame shows), as the window does,
//! then shows it.
//!
//! - `plot_frame/decimated/1M`, `plot_frame/decimated/10M`: 16 series of 1M /
//!   10M samples each through the store's envelope path (`EnvelopePlot`),
//!   viewing the whole history. The view moves 1 ms further every frame and
//!   never returns to a range it showed (as in live follow mode), so every
//!   frame misses both caches keyed by the range: the widget's envelopes
//!   (`EnvelopePlot`, keyed by range, width and store version) and the store's
//!   column-plan cache (`Store::envelopes`, keyed by stream, range, width and
//!   version). Its end moves 2 ms, so the zoom changes every frame too: the
//!   columns a plot keeps on a fixed time grid while its zoom holds
//!   (`crates/zescope-window/src/envelope_plot/grid.rs`, which serves views at raw or level-1
//!   detail such as `decimated/1M`'s) are computed afresh every frame. What a frame may reuse: the store's min/max pyramid (the data
//!   structure itself, built at ingest, with its drawing bands: `crates/zescope-store/src/band.rs`),
//!   egui's font atlas and allocations kept across frames.
//! - `plot_frame/zoomed/10M`: the same 16 x 10M series, zoomed in to 2,000
//!   samples (2 s) per series, a different stretch of the history every frame:
//!   every frame decodes the sealed (compressed) blocks it shows. The store's
//!   cache of decoded blocks (`crates/zescope-store/src/decoded.rs`) does not serve it: a
//!   frame's blocks are 31 blocks past the previous frame's, a block comes
//!   back only once the stride wraps around the history (after ~1,260 frames),
//!   and by then the cache has replaced it (64 MiB hold ~200 frames' blocks);
//!   the bench prints the cache's hits to show it. What a
//!   frame may reuse is what the decimated frames may (egui's font atlas,
//!   allocations kept across frames); the envelope and column-plan caches always
//!   miss. It does pay for filling the cache.
//! - `plot_frame/window/64x10M`: the scale a long recording reaches: one
//!   stream of 64 counter-shaped series (`shapes/mod.rs`) x 10M samples
//!   (640M values) in a store capped at 2 GiB, which holds them at full
//!   resolution (checked); one frame draws 4 plots of 16 series each, over the
//!   whole history, moving 1 ms every frame. The 4 plots show one stream over
//!   one range at one width, so within a frame they share the column plan
//!   the first one works out (that is what the plan cache is for); across
//!   frames nothing is reused (it reads the drawing bands, which kept columns
//!   never serve, and its zoom changes every frame as `decimated`'s does).
//! - `plot_frame/window/64x10M_last100s`: the same window zoomed in to the last 100 s
//!   (100,000 samples per series, ~63 per pixel column), moving 1 ms and widening 1 ms every
//!   frame (back every 1,000 frames), so that kept columns never serve it. Columns that
//!   narrow are finer than a pyramid node, so every frame reads raw samples: 6.4M values,
//!   decoded once into the store's cache of decoded blocks (`crates/zescope-store/src/decoded.rs`), which
//!   serves the frames after (the bench prints its hits); the envelope and column-plan caches miss.
//! - `plot_frame/naive/100k`, `plot_frame/naive/1M`: the same 16 series handed
//!   to egui_plot as raw points (`Line` over borrowed `PlotPoint`s).
//!
//! Run: `cargo bench --bench plot_frame`. Results: docs/benchmarks.md. Set
//! `ZESCOPE_BENCH_ONLY=zoomed,window` (parts of benchmark names) to build only the data those
//! benchmarks need; criterion's own filter still picks what is measured.

mod shapes;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Color32, Context, RawInput, Rect, pos2, vec2};
use egui_plot::{Line, Plot, PlotPoint, PlotPoints};
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};
use zescope_window::envelope_plot::{EnvelopePlot, PlotFrame, PlotSeries};

/// The app's allocator (`src/main.rs`), so a frame's allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SERIES: usize = 16;
const PERIOD_NS: i64 = 1_000_000; // 1 kHz

/// Sample `i` of series `s`: a slow wave, noise, and rare spikes.
fn value(i: usize, s: usize, noise: &mut u64) -> f64 {
    *noise ^= *noise << 13;
    *noise ^= *noise >> 7;
    *noise ^= *noise << 17;
    let n = (*noise >> 40) as f64 / (1u64 << 24) as f64;
    let spike = if (*noise & 0xffff) == 7 { 50.0 } else { 0.0 };
    (i as f64 * 1e-4 + s as f64).sin() * 10.0 + s as f64 * 20.0 + n + spike
}

fn build_store(samples: usize) -> Store {
    let mut store = Store::new(usize::MAX);
    let desc = StreamDesc {
        name: "bench".into(),
        series: (0..SERIES)
            .map(|s| SeriesDesc { name: format!("counter {s}"), unit: "u".into(), kind: SeriesKind::Gauge })
            .collect(),
    };
    let id = store.begin_stream(desc);
    let mut noise = 0x9E37_79B9_7F4A_7C15;
    let batch = 4096;
    let mut ts = Vec::with_capacity(batch);
    let mut vals = Vec::with_capacity(batch * SERIES);
    for start in (0..samples).step_by(batch) {
        ts.clear();
        vals.clear();
        for i in start..(start + batch).min(samples) {
            ts.push(i as i64 * PERIOD_NS);
            for s in 0..SERIES {
                vals.push(value(i, s, &mut noise));
            }
        }
        store.append(id, &ts, &vals).unwrap();
    }
    store
}

fn raw_points(samples: usize) -> Vec<Vec<PlotPoint>> {
    let mut noise = 0x9E37_79B9_7F4A_7C15;
    let mut out: Vec<Vec<PlotPoint>> = (0..SERIES).map(|_| Vec::with_capacity(samples)).collect();
    for i in 0..samples {
        for (s, pts) in out.iter_mut().enumerate() {
            pts.push(PlotPoint::new(i as f64 * PERIOD_NS as f64 * 1e-9, value(i, s, &mut noise)));
        }
    }
    out
}

fn color(s: usize) -> Color32 {
    let h = s as f32 / SERIES as f32;
    egui::ecolor::Hsva::new(h, 0.8, 0.9, 1.0).into()
}

fn input() -> RawInput {
    RawInput { screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(1600.0, 900.0))), ..RawInput::default() }
}

/// One frame: build the UI (`plot` shows one egui_plot plot), then
/// tessellate it. Returns the primitive count.
fn frame(ctx: &Context, mut plot: impl FnMut(&mut egui::Ui)) -> usize {
    let mut out = ctx.run_ui(input(), |ui| {
        egui::CentralPanel::default().show(ui, |ui| plot(ui));
    });
    out.textures_delta.clear();
    ctx.tessellate(out.shapes, out.pixels_per_point).len()
}

/// The value range every plot shows.
const Y: (f64, f64) = (-20.0, 340.0);

fn bounds(pu: &mut egui_plot::PlotUi<'_>, x: (f64, f64)) {
    pu.set_plot_bounds_x(x.0..=x.1);
    pu.set_plot_bounds_y(Y.0..=Y.1);
}

/// What an envelope plot over `x` shows, decided before `Plot::show` as the window decides it.
fn shows(x: (f64, f64)) -> PlotFrame {
    PlotFrame { x: Some(x), y: Some(Y), limit: None }
}

fn plot_series(store: &Store) -> Vec<PlotSeries> {
    store
        .series(store.streams().next().unwrap().id)
        .enumerate()
        .map(|(s, (id, d))| PlotSeries {
            series: id,
            name: d.name.clone(),
            color: color(s % SERIES),
            steps: false,
            identifier: false,
        })
        .collect()
}

fn decimated(c: &mut Criterion, label: &str, store: &Store, samples: usize) {
    let series = plot_series(store);
    let span = (samples - 1) as f64 * PERIOD_NS as f64 * 1e-9;
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let mut k = 0u64;
    let mut group = c.benchmark_group("plot_frame");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function(format!("decimated/{label}"), |b| {
        b.iter(|| {
            k += 1;
            let shift = k as f64 * 1e-3;
            // Widening by 1 ms too: a new zoom, so no columns are kept (see the docs).
            let x = (shift, span + 2.0 * shift);
            black_box(frame(&ctx, |ui| {
                plot.prepare(store, &series, shows(x));
                Plot::new("bench").show(ui, |pu| {
                    bounds(pu, x);
                    plot.add_to(pu, store);
                });
            }))
        })
    });
    group.finish();
}

/// `plot_frame/zoomed/10M`: 2,000 samples per series, somewhere else each frame.
fn zoomed(c: &mut Criterion, store: &Store, samples: usize) {
    let series = plot_series(store);
    let ctx = Context::default();
    let mut plot = EnvelopePlot::new();
    let mut k = 0u64;
    let mut group = c.benchmark_group("plot_frame");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function("zoomed/10M", |b| {
        b.iter(|| {
            k += 1;
            // A prime stride through the history: no stretch is shown twice in any run.
            let first = (k * 7919) % (samples as u64 - 2_000);
            let x0 = (first as f64 * PERIOD_NS as f64 + k as f64) * 1e-9;
            let x = (x0, x0 + 1_999.0 * PERIOD_NS as f64 * 1e-9);
            black_box(frame(&ctx, |ui| {
                plot.prepare(store, &series, shows(x));
                Plot::new("bench").show(ui, |pu| {
                    bounds(pu, x);
                    plot.add_to(pu, store);
                });
            }))
        })
    });
    group.finish();
    println!("zoomed/10M: {} block lookups answered by the cache of decoded blocks", store.decoded_cache_hits());
}

/// `plot_frame/window/64x10M`: 4 plots x 16 counter-shaped series of 10M samples, 2 GiB cap.
fn window(c: &mut Criterion) {
    const N: usize = 64;
    const SAMPLES: usize = 10_000_000;
    let cap = 2usize << 30;
    let mut store = Store::new(cap);
    let id = store.begin_stream(shapes::desc(N));
    shapes::generate(N, SAMPLES, 4096, false, |ts, vals| store.append(id, ts, vals).unwrap());
    let retention = store.retention(id).unwrap();
    assert!(retention.coarsened_before().is_none(), "64 x 10M must fit the 2 GiB cap at full resolution");
    eprintln!(
        "plot_frame/window: 64 x 10M counter-shaped values at full resolution in {:.1} MiB of the 2048 MiB cap ({:.3} bytes per value)",
        store.memory_used() as f64 / (1 << 20) as f64,
        store.memory_used() as f64 / (N * SAMPLES) as f64
    );
    let all = plot_series(&store);
    let panes: Vec<&[PlotSeries]> = all.chunks(SERIES).collect();
    let mut plots: Vec<EnvelopePlot> = panes.iter().map(|_| EnvelopePlot::new()).collect();
    let (t0, t1) = store.time_range(id).unwrap();
    let span = (t1 - t0) as f64 * 1e-9;
    let ctx = Context::default();
    let mut k = 0u64;
    let mut group = c.benchmark_group("plot_frame");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function("window/64x10M", |b| {
        b.iter(|| {
            k += 1;
            let shift = k as f64 * 1e-3;
            let x = (shift, span + 2.0 * shift);
            black_box(frame(&ctx, |ui| {
                let h = ui.available_height() / 4.0;
                for (p, (series, plot)) in panes.iter().zip(&mut plots).enumerate() {
                    plot.prepare(&store, series, shows(x));
                    Plot::new(("pane", p)).height(h).show(ui, |pu| {
                        bounds(pu, x);
                        plot.add_to(pu, &store);
                    });
                }
            }))
        })
    });
    // The same window zoomed in to its last 100 s (100,000 samples per series, ~63 per pixel
    // column: below a pyramid node, so raw samples are read), moving 1 ms every frame.
    group.bench_function("window/64x10M_last100s", |b| {
        b.iter(|| {
            k += 1;
            let step = (k % 1000) as f64 * 1e-3;
            let x1 = span - 1.0 + step;
            let x = (x1 - 100.0 - step, x1);
            black_box(frame(&ctx, |ui| {
                let h = ui.available_height() / 4.0;
                for (p, (series, plot)) in panes.iter().zip(&mut plots).enumerate() {
                    plot.prepare(&store, series, shows(x));
                    Plot::new(("pane", p)).height(h).show(ui, |pu| {
                        bounds(pu, x);
                        plot.add_to(pu, &store);
                    });
                }
            }))
        })
    });
    group.finish();
    println!(
        "window/64x10M_last100s: {} block lookups answered by the cache of decoded blocks",
        store.decoded_cache_hits()
    );
}

fn naive(c: &mut Criterion, label: &str, samples: usize) {
    let points = raw_points(samples);
    let span = (samples - 1) as f64 * PERIOD_NS as f64 * 1e-9;
    let ctx = Context::default();
    let mut group = c.benchmark_group("plot_frame");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function(format!("naive/{label}"), |b| {
        b.iter(|| {
            black_box(frame(&ctx, |ui| {
                Plot::new("bench").show(ui, |pu| {
                    bounds(pu, (0.0, span));
                    for (s, pts) in points.iter().enumerate() {
                        pu.line(Line::new(format!("counter {s}"), PlotPoints::Borrowed(pts)).color(color(s)));
                    }
                });
            }))
        })
    });
    group.finish();
}

/// Whether benchmark `name` is wanted: `ZESCOPE_BENCH_ONLY` (comma-separated parts of names,
/// e.g. `zoomed,window`) skips building the data of the others; unset, all run.
fn wanted(name: &str) -> bool {
    std::env::var("ZESCOPE_BENCH_ONLY").ok().is_none_or(|only| only.split(',').any(|w| name.contains(w.trim())))
}

fn benches(c: &mut Criterion) {
    if wanted("decimated/1M") {
        decimated(c, "1M", &build_store(1_000_000), 1_000_000);
    }
    if wanted("decimated/10M") || wanted("zoomed/10M") {
        let store = build_store(10_000_000);
        if wanted("decimated/10M") {
            decimated(c, "10M", &store, 10_000_000);
        }
        if wanted("zoomed/10M") {
            zoomed(c, &store, 10_000_000);
        }
    }
    if wanted("window/64x10M") {
        window(c);
    }
    if wanted("naive/100k") {
        naive(c, "100k", 100_000);
    }
    if wanted("naive/1M") {
        naive(c, "1M", 1_000_000);
    }
}

criterion_group!(plot_frame, benches);
criterion_main!(plot_frame);
