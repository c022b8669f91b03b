//! Sample to screen: how old each sample of a remote run is when the window first draws it.
//!
//! Runs the built `zescope --source sim serve --interval 1ms` (the simulated GPU's group at
//! 1 kHz and its telemetry) and the whole window over it as `zescope --connect` builds it: the
//! remote link (`zescope::live::remote::spawn`, tungstenite over loopback) behind the real app
//! (`ZescopeApp`), 1600 x 1000 points, headless (`Context::run_ui` + `tessellate`, no GPU). Frames
//! are timed as eframe times them: the next one when the frame's own repaint request says
//! (`viewport_output[ROOT].repaint_delay`, the window's `repaint::live_period`), sooner when
//! another thread asks for one (the window's waker, `zescope_window::wake`, as data arrives). Each sample counts once, in the frame that drains it from the
//! link: its latency is the end of that frame's tessellation minus the sample's own time
//! (CLOCK_MONOTONIC, the clock the server stamps samples with; a device stream's timestamps are
//! the device's clock mapped onto it). What a GPU then takes to paint and present the frame comes
//! on top (about a millisecond on a real GPU; ~20 ms under a software GL, `docs/benchmarks.md`).
//!
//! Two views, one server: the last 10 s (the window paints at its frame cap, 30 a second by
//! default) and the last minute (the default view: it paints when its axis moved three pixels).
//! Each runs ZESCOPE_SCREEN_BENCH_SECS seconds (default 10) after two seconds of settling (the
//! history the window joined with is old by design and is not counted). Reports per view and
//! stream p50, p99 and the largest latency, and the frames painted a second. Nothing is cached
//! between the views but the server's run; the store's decoded-block cache serves the plots as in
//! the app.
//!
//!     cargo bench --bench screen

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use egui::{Context, RawInput, Rect, ViewportId, pos2, vec2};
use zescope_model::view::timeview::ViewLength;
use zescope_sampler::monotonic_ns;
use zescope_sampler::{Command, Event, SamplerHandle};
use zescope_store::Store;
use zescope_window::ZescopeApp;
use zescope_window::link::SamplerLink;
use zescope_window::settings::Settings;

#[path = "support/served.rs"]
mod served;

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The remote link, noting the time of every sample the app drains from it.
struct Noted {
    link: SamplerHandle,
    /// (stream, sample time) drained since the last frame ended.
    drained: Arc<Mutex<Vec<(usize, i64, i64)>>>,
}

impl SamplerLink for Noted {
    fn send(&self, c: Command) {
        self.link.send(c);
    }
    fn try_recv(&self) -> Option<Event> {
        let e = self.link.try_recv()?;
        if let Event::Samples(b) = &e {
            let mut d = self.drained.lock().expect("lock");
            let now = monotonic_ns();
            d.extend(b.timestamps.iter().map(|&t| (b.stream, t, now)));
        }
        Some(e)
    }
    fn shutdown(&mut self, timeout: Duration) -> Result<(), Duration> {
        self.link.shutdown(timeout)
    }
}

/// Per stream: each sample's latency to the screen, and to the start of the frame that took it
/// (ns).
type Latencies = std::collections::BTreeMap<usize, (Vec<i64>, Vec<i64>)>;

/// A repaint asked for by another thread (eframe's wake-up): when, at the latest, to paint.
#[derive(Default)]
struct Asked {
    at: Mutex<Option<Instant>>,
    changed: Condvar,
}

fn percentile(sorted: &[i64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64 / 1e6
}

/// Paints frames for `secs` seconds as eframe would; the latencies (ns) of the samples drawn
/// after the first two seconds, per stream, and the frames painted.
fn watch(
    ctx: &Context,
    app: &mut ZescopeApp,
    drained: &Mutex<Vec<(usize, i64, i64)>>,
    asked: &Asked,
    secs: u64,
) -> (Latencies, u64) {
    let settle = Instant::now() + Duration::from_secs(2);
    let end = settle + Duration::from_secs(secs);
    let mut latencies = Latencies::new();
    let mut frames = 0;
    while Instant::now() < end {
        let input = RawInput {
            screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(1600.0, 1000.0))),
            ..Default::default()
        };
        let out = ctx.run_ui(input, |ui| app.ui(ui));
        let delay = out.viewport_output.get(&ViewportId::ROOT).map_or(Duration::from_secs(1), |v| v.repaint_delay);
        std::hint::black_box(ctx.tessellate(out.shapes, out.pixels_per_point).len());
        let shown = monotonic_ns();
        let counted = Instant::now() >= settle;
        frames += u64::from(counted);
        for (stream, t, taken) in drained.lock().expect("lock").drain(..) {
            if counted {
                let l = latencies.entry(stream).or_default();
                l.0.push(shown - t);
                l.1.push(taken - t);
            }
        }
        // Wait as eframe does: until the frame's own repaint delay, or another thread's ask.
        let due = Instant::now() + delay.min(Duration::from_secs(1));
        let mut at = asked.at.lock().expect("lock");
        loop {
            let next = at.map_or(due, |a| a.min(due));
            let now = Instant::now();
            if now >= next {
                break;
            }
            at = asked.changed.wait_timeout(at, next - now).expect("lock").0;
        }
        *at = None;
    }
    (latencies, frames)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("screen: bench");
        return;
    }
    let secs: u64 = std::env::var("ZESCOPE_SCREEN_BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let (mut child, addr) = served::start();
    let ctx = Context::default();
    let asked = Arc::new(Asked::default());
    let ask = Arc::clone(&asked);
    ctx.set_request_repaint_callback(move |info| {
        let mut at = ask.at.lock().expect("lock");
        let when = Instant::now() + info.delay;
        *at = Some(at.map_or(when, |a| a.min(when)));
        ask.changed.notify_all();
    });
    let target = zescope::live::client::Target::new(addr.to_string(), None).expect("target");
    // The window's own waker (`zescope_window::wake`), as `zescope --connect` sets it up.
    let wake = zescope_window::wake::Wake::default();
    let waker = wake.waker(ctx.clone());
    let drained = Arc::new(Mutex::new(Vec::new()));
    let link = Noted { link: zescope::live::remote::spawn(target, Some(waker)), drained: Arc::clone(&drained) };
    let mut app = ZescopeApp::new(Box::new(link), Settings::default(), Store::with_default_cap());
    app.use_wake(wake);
    for view in [ViewLength::Sec10, ViewLength::Min1] {
        app.view.set_window(view);
        let ticks = served::value(&served::scrape(addr).expect("scrape"), "zescope_sampler_ticks_total");
        let (latencies, frames) = watch(&ctx, &mut app, &drained, &asked, secs);
        let ticked = served::value(&served::scrape(addr).expect("scrape"), "zescope_sampler_ticks_total") - ticks;
        assert!(!latencies.is_empty(), "the window drew no sample of the remote run");
        println!(
            "screen/{}: {:.1} frames a second; the server's sampler {:.0} ticks a second",
            view.label(),
            frames as f64 / secs as f64,
            ticked / (secs + 2) as f64
        );
        for (stream, (mut l, mut taken)) in latencies {
            l.sort_unstable();
            taken.sort_unstable();
            println!(
                "screen/{}/stream {stream}: {} samples, sample to screen p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; \
                 to the frame that takes it p50 {:.1} ms, p99 {:.1} ms",
                view.label(),
                l.len(),
                percentile(&l, 0.5),
                percentile(&l, 0.99),
                percentile(&l, 1.0),
                percentile(&taken, 0.5),
                percentile(&taken, 0.99)
            );
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}
