//! Session file benchmarks: `session/save_10M` and `session/load_10M`.
//!
//! A session of 10M values: one stream of 16 counters x 625 000 samples at
//! 1 kHz with timestamp jitter, shaped like GPU counters: 8 cumulative u32
//! totals (bytes, cycles) moving by varying amounts, 2 frequencies that step
//! now and then, 3 integer-valued readings (power in mW, temperature in m°C,
//! busy cycles) and 3 full-precision noisy floats (utilisation %). `save`
//! includes capturing nothing (the session is built once), encoding, writing
//! and fsync; `load` reads, parses, checks and decodes.
//!
//! Before the benchmarks it prints the file size in bytes per value, for this
//! data and for a worst case of 16 full-precision noisy floats.
//!
//! Run: `cargo bench --bench session`. Results: docs/benchmarks.md.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use zescope::session::{self, Capture, RunHistory, Session};
use zescope::store::{SeriesDesc, SeriesKind, Store, StreamDesc};
use zescope::view::panes::PaneLayout;
use zescope::view::timeview::TimeView;

const SERIES: usize = 16;
const SAMPLES: usize = 625_000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn kind(s: usize) -> SeriesKind {
    if s < 8 { SeriesKind::Cumulative { wrap: Some(4_294_967_296.0) } } else { SeriesKind::Gauge }
}

fn session(worst_case: bool) -> Session {
    let mut store = Store::new(usize::MAX);
    let desc = StreamDesc {
        name: "bench".into(),
        series: (0..SERIES).map(|s| SeriesDesc { name: format!("c{s}"), unit: "u".into(), kind: kind(s) }).collect(),
    };
    let id = store.begin_stream(desc);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut totals = [0.0f64; SERIES];
    let mut freq = [1200.0, 800.0];
    let (mut ts, mut vals) = (Vec::new(), Vec::new());
    for i in 0..SAMPLES {
        ts.push(i as i64 * 1_000_000 + (rng.next() % 20_000) as i64);
        for s in 0..SERIES {
            let v = match s {
                _ if worst_case => 50.0 + 40.0 * rng.unit(),
                0..8 => {
                    totals[s] = (totals[s] + (rng.next() % (1 << (12 + s))) as f64) % 4_294_967_296.0;
                    totals[s]
                }
                8 | 9 => {
                    if rng.next().is_multiple_of(2000) {
                        freq[s - 8] = 300.0 + (rng.next() % 20) as f64 * 100.0;
                    }
                    freq[s - 8]
                }
                10..13 => (20_000 + rng.next() % 50_000) as f64,
                _ => 50.0 + 40.0 * rng.unit(),
            };
            vals.push(v);
        }
        if ts.len() == 4096 {
            store.append(id, &ts, &vals).unwrap();
            ts.clear();
            vals.clear();
        }
    }
    store.append(id, &ts, &vals).unwrap();
    let (history, layout, view) = (RunHistory::default(), PaneLayout::default(), TimeView::default());
    Session::capture(&store, Capture { history: &history, layout: &layout, view: &view, markers: &[] })
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.ron");
    for (label, worst) in [("counter-shaped data", false), ("worst case (noisy floats)", true)] {
        let s = session(worst);
        session::save(&path, &s).unwrap();
        let bytes = std::fs::metadata(&path).unwrap().len();
        eprintln!("session: {label}: {:.2} bytes per value ({bytes} bytes)", bytes as f64 / s.raw_values() as f64);
    }
    let s = session(false);
    assert_eq!(s.raw_values(), (SAMPLES * SERIES) as u64);
    let mut group = c.benchmark_group("session");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(15));
    group.bench_function("save_10M", |b| b.iter(|| session::save(&path, &s).unwrap()));
    session::save(&path, &s).unwrap();
    group.bench_function("load_10M", |b| b.iter(|| black_box(session::load(&path).unwrap().raw_values())));
    group.finish();
}

criterion_group!(session_benches, benches);
criterion_main!(session_benches);
