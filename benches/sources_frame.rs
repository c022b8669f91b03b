//! `sources_frame`: one headless frame of the whole zescope window (`Context::run_ui` +
//! `tessellate`, no GPU, 1600 x 1000 points) whose source panel shows a realistic catalogue
//! with everything expanded: ze-sim's `catalog: Realistic` (34 groups, about 1,300 metrics per
//! GPU) on the root GPU, its tile and the NPU, every device picked, every group open — about
//! 2,700 rows. No run, no panes. Goal: ≤ 2 ms of CPU per frame.
//!
//! - `expanded_catalogue`: the tree at rest. Per frame the panel fingerprints the inventory
//!   (one hash over its groups) and finds the search index current, rebuilds the row list
//!   (every row, a few words each) and lays out only the rows in view. egui's text layout cache
//!   serves the visible rows' labels from the second frame on.
//! - `expanded_catalogue_scrolling`: the same with a wheel event over the panel every frame
//!   (down for 300 frames, then up), so new rows come into view and their labels miss egui's
//!   text cache as a user scrolling would.
//!
//! The inventory comes from a real sampler thread on an in-process ze-sim (stopped before
//! measuring): what the window gets from a driver with that catalogue.
//!
//!     cargo bench --bench sources_frame

use std::hint::black_box;
use std::time::Duration;

mod headless;

use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Context, Event, MouseWheelUnit, RawInput, Rect, pos2, vec2};
use ze_sim::catalog::Catalog;
use zescope_sampler::Event as SamplerEvent;
use zescope_sampler::testing::{sampler_on, sim, wait_for};
use zescope_store::Store;
use zescope_window::ZescopeApp;

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The window with the realistic catalogue's inventory, every device picked, every group open.
fn app() -> ZescopeApp {
    let sim = sim(|c| c.catalog = Catalog::Realistic);
    let mut sampler = sampler_on(&sim);
    let inv = wait_for(&sampler, Duration::from_secs(30), |e| match e {
        SamplerEvent::Inventory(inv) => Some(inv.clone()),
        _ => None,
    });
    let _ = sampler.shutdown(Duration::from_secs(3));
    let mut app = headless::app(Store::new(64 << 20));
    for d in &inv.devices {
        let first = d.groups.iter().find(|g| g.unavailable.is_none()).map(|g| g.name.clone());
        app.state.selection.pick(d.path, first.into_iter().collect());
    }
    app.state.inventory = Some(inv);
    app.open_all_groups(true);
    app
}

/// One frame with `events` (the pointer over the source panel).
fn frame(ctx: &Context, app: &mut ZescopeApp, events: Vec<Event>) -> usize {
    let input = RawInput {
        screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(1600.0, 1000.0))),
        events,
        ..Default::default()
    };
    let mut out = ctx.run_ui(input, |ui| app.ui(ui));
    out.textures_delta.clear();
    black_box(ctx.tessellate(out.shapes, out.pixels_per_point).len())
}

fn sources(c: &mut Criterion) {
    let mut app = app();
    let ctx = Context::default();
    for _ in 0..3 {
        headless::frame(&ctx, &mut app);
    }
    let rows = app.source_rows();
    assert!(rows > 2000, "the whole catalogue is open: {rows} rows");
    let mut g = c.benchmark_group("sources_frame");
    g.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    g.bench_function("expanded_catalogue", |b| b.iter(|| headless::frame(&ctx, &mut app)));
    let mut n = 0u64;
    g.bench_function("expanded_catalogue_scrolling", |b| {
        b.iter(|| {
            n += 1;
            let down = (n / 300).is_multiple_of(2);
            let events = vec![
                Event::PointerMoved(pos2(120.0, 400.0)),
                Event::MouseWheel {
                    unit: MouseWheelUnit::Point,
                    delta: vec2(0.0, if down { -60.0 } else { 60.0 }),
                    phase: egui::TouchPhase::Move,
                    source: egui::MouseWheelSource::Unknown,
                    modifiers: egui::Modifiers::NONE,
                },
            ];
            frame(&ctx, &mut app, events)
        })
    });
    g.finish();
    println!("sources_frame: {rows} rows in the tree");
}

criterion_group!(benches, sources);
criterion_main!(benches);
