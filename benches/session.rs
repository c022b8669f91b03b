//! Session file benchmarks: `session/save_10M`, `session/load_10M`, and the
//! same at 100M values (`session/save_100M`, `session/load_100M`: 16 counters
//! x 6.25M samples), and `session/first_100M`: how long opening the 100M-value
//! file progressively (`LoadJob`) takes to hand over what the window's first
//! frame needs, the head and the first decoded chunk; `session/open_100M_window`: opening
//! the same file in the window, headless frames (`headless/mod.rs`) one after another until
//! every value is in the store (it prints how many frames that took: on screen each frame
//! waits for the display as well).
//!
//! A session of 10M values: one stream of 16 counters x 625 000 samples at
//! 1 kHz with timestamp jitter, shaped like GPU counters (`shapes/mod.rs`:
//! cumulative totals, stepping frequencies, integer readings, noisy floats). `save`
//! includes capturing nothing (the session is built once), encoding, writing
//! and fsync; `load` reads, parses, checks and decodes.
//!
//! Before the benchmarks it prints the file size in bytes per value, for this
//! data and for a worst case of 16 full-precision noisy floats. Files are written as `save`
//! writes them (format version 2: RON text, then the binary data section).
//!
//! Run: `cargo bench --bench session`. Results: docs/benchmarks.md.

use std::hint::black_box;
use std::time::{Duration, Instant};

mod headless;
mod shapes;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use shapes::SERIES;
use zescope_model::session::{self, Capture, LoadEvent, LoadJob, RunHistory, Session};
use zescope_model::view::panes::Arrangement;
use zescope_model::view::timeview::TimeView;
use zescope_store::Store;
use zescope_window::files::FileAction;

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SAMPLES: usize = 625_000;

fn session(worst_case: bool, samples: usize) -> Session {
    let mut store = Store::new(usize::MAX);
    let id = store.begin_stream(shapes::desc(SERIES));
    shapes::generate(SERIES, samples, 4096, worst_case, |ts, vals| store.append(id, ts, vals).unwrap());
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    Session::capture(&store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] })
}

/// Starts opening `path` progressively and waits for the head and the first piece: the time
/// that takes. Then stops the job, untimed, so the next iteration starts with the cores free.
fn first_piece(path: &std::path::Path) -> Duration {
    let start = Instant::now();
    let mut job = LoadJob::spawn(path.to_path_buf());
    let mut head = false;
    let samples = loop {
        match job.next(Duration::from_secs(60)) {
            Some(LoadEvent::Head(h)) => head = black_box(h).samples.len() == 1,
            Some(LoadEvent::Piece(p)) if head => break p.raw.timestamps.len(),
            other => panic!("expected the head, then a piece: {other:?}"),
        }
    };
    let took = start.elapsed();
    assert!(samples > 0);
    job.stop();
    took
}

/// Opens `path` in a fresh window and draws frames until all of it is in: the time that takes
/// and the number of frames.
fn open_in_window(path: &std::path::Path) -> (Duration, usize) {
    let mut app = headless::app(Store::new(4 << 30));
    let ctx = egui::Context::default();
    headless::frame(&ctx, &mut app);
    let start = Instant::now();
    app.perform(Some(FileAction::Open(path.to_path_buf())));
    let mut frames = 0;
    while app.opening() {
        headless::frame(&ctx, &mut app);
        frames += 1;
    }
    let took = start.elapsed();
    assert_eq!(app.store.streams().map(|s| s.appended).sum::<u64>(), (SAMPLES * 10) as u64, "all of it is in");
    (took, frames)
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.ron");
    for (label, worst) in [("counter-shaped data", false), ("worst case (noisy floats)", true)] {
        let s = session(worst, SAMPLES);
        session::save(&path, &s).unwrap();
        let bytes = std::fs::metadata(&path).unwrap().len();
        eprintln!("session: {label}: {:.2} bytes per value ({bytes} bytes)", bytes as f64 / s.raw_values() as f64);
    }
    let s = session(false, SAMPLES);
    assert_eq!(s.raw_values(), (SAMPLES * SERIES) as u64);
    let mut group = c.benchmark_group("session");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(15));
    group.bench_function("save_10M", |b| b.iter(|| session::save(&path, &s).unwrap()));
    session::save(&path, &s).unwrap();
    group.bench_function("load_10M", |b| b.iter(|| black_box(session::load(&path).unwrap().raw_values())));
    drop(s);
    let s = session(false, SAMPLES * 10);
    assert_eq!(s.raw_values(), (SAMPLES * 10 * SERIES) as u64);
    // One save or load of 100M values takes seconds: ten of them, one at a time.
    group.sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(10));
    group.bench_function("save_100M", |b| b.iter(|| session::save(&path, &s).unwrap()));
    session::save(&path, &s).unwrap();
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!(
        "session: 100M counter-shaped values: {:.2} bytes per value ({bytes} bytes)",
        bytes as f64 / s.raw_values() as f64
    );
    drop(s);
    group.bench_function("load_100M", |b| b.iter(|| black_box(session::load(&path).unwrap().raw_values())));
    group.bench_function("first_100M", |b| b.iter_custom(|n| (0..n).map(|_| first_piece(&path)).sum()));
    let mut frames = Vec::new();
    group.bench_function("open_100M_window", |b| {
        b.iter_custom(|n| {
            (0..n)
                .map(|_| {
                    let (took, f) = open_in_window(&path);
                    frames.push(f);
                    took
                })
                .sum()
        })
    });
    frames.sort_unstable();
    if let Some(median) = frames.get(frames.len() / 2) {
        eprintln!("session: opening 100M values in the window: {median} frames (median of {})", frames.len());
    }
    group.finish();
}

criterion_group!(session_benches, benches);
criterion_main!(session_benches);
