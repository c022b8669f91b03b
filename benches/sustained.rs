//! A sustained run: the sampler thread at 10 kHz over a 256-counter buffer of the simulated
//! driver for 10 s (ZESCOPE_SUSTAINED_SECS overrides), with a consumer draining events. Prints
//! achieved rate, missed deadlines, drops and the sampler thread's CPU share (from
//! /proc/thread-self/stat), next to the same figures for the machine's floor: a bare thread
//! sleeping to the same 100 µs deadlines. Goals: ≥ 99.9% of deadlines met, 0 drops, ≤ 5% of
//! one core.
//!
//! Misses are counted the same way for both: a deadline is missed when nothing ran within one
//! interval after it. A late sampler tick (more than an interval after its deadline) reads once
//! and moves on to the next deadline to come: the read serves the last deadline passed (less
//! than an interval before it), and its own deadline and those between are missed
//! (`Health::skipped_ticks` counts exactly those). So its misses are the skipped deadlines, out
//! of ticks plus skipped deadlines. The floor loop never skips: it catches up tick by tick, and
//! each catch-up later than an interval is a miss, out of every deadline: for the same stall
//! both count the same deadlines. (Until 2026-12-01 the late ticks were added to the skipped
//! ones, counting each late tick's own deadline twice.) The ratios
//! sampler/floor for CPU and for misses say what the sampler adds over the machine's floor.
//!
//!     cargo bench --bench sustained

mod common;

use std::time::{Duration, Instant};

use common::synthetic_sim;
use zescope_sampler::{self as sampler, Command, DevicePath, Event, Health, Options, RunConfig};
use zescope_ze::Loader;

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The floor on this machine: a bare thread sleeping to absolute 100 µs deadlines (what any
/// 10 kHz sampler must do), for `secs`. Returns (CPU % of one core, % of deadlines missed:
/// served later than one interval, catch-ups included).
fn baseline(secs: u64) -> (f64, f64) {
    std::thread::spawn(move || {
        let start = std::time::Instant::now();
        let cpu0 = cpu_time();
        let period = Duration::from_micros(100);
        let (mut k, mut late) = (0u64, 0u64);
        while start.elapsed() < Duration::from_secs(secs) {
            k += 1;
            let due = start + period * k as u32;
            let now = std::time::Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if std::time::Instant::now().saturating_duration_since(due) > period {
                late += 1;
            }
        }
        ((cpu_time() - cpu0) / start.elapsed().as_secs_f64() * 100.0, late as f64 * 100.0 / k as f64)
    })
    .join()
    .unwrap()
}

/// CPU seconds of the calling thread (from /proc: no unsafe in benches).
fn cpu_time() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = after.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    // fields 14 and 15 (utime, stime) are at positions 11 and 12 after the comm field
    (f.get(10).unwrap_or(&0.0) + f.get(11).unwrap_or(&0.0)) / 100.0
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let secs: u64 = std::env::var("ZESCOPE_SUSTAINED_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let (floor_cpu, floor_late) = baseline(secs.min(5));
    let sim = synthetic_sim(256, 100);
    let s = sim.clone();
    let mut h = sampler::spawn(
        Box::new(move || Loader::in_process(s.in_process())),
        Options { health_period: Duration::from_secs(1), ..Default::default() },
    );
    h.send(Command::Start(RunConfig::single(
        DevicePath::default(),
        vec!["Synthetic".into()],
        Duration::from_micros(100),
    )));
    let start = Instant::now();
    let mut samples = 0u64;
    let mut per_second: Vec<Health> = Vec::new();
    while start.elapsed() < Duration::from_secs(secs) + Duration::from_millis(200) {
        match h.events.recv_timeout(Duration::from_millis(100)) {
            Ok(Event::Samples(b)) => samples += b.timestamps.len() as u64,
            Ok(Event::Health(s)) => per_second.push(s),
            Ok(Event::Error(e)) => panic!("sampler error: {e}"),
            _ => {}
        }
    }
    h.send(Command::Stop);
    let last = per_second.last().cloned().unwrap_or_default();
    // The first window includes setup; report the steady state.
    let steady: Vec<&Health> = per_second.iter().skip(1).collect();
    let cpu = steady.iter().map(|s| s.cpu_percent).sum::<f64>() / steady.len().max(1) as f64;
    let rate = steady.iter().map(|s| s.achieved_hz).sum::<f64>() / steady.len().max(1) as f64;
    let deadlines = last.ticks + last.skipped_ticks;
    // Each late tick's own deadline is among the skipped ones (see the file's docs).
    let missed = last.skipped_ticks;
    let missed_pct = missed as f64 * 100.0 / deadlines.max(1) as f64;
    println!("sustained run: {secs} s at 10 kHz x 256 counters (simulated device)");
    println!("  ticks               {}", last.ticks);
    println!("  achieved rate       {rate:.1} Hz of {:.1} Hz requested", last.requested_hz);
    println!(
        "  missed deadlines    {missed} of {deadlines} ({missed_pct:.3}%: skipped by {} late ticks; {:.3}% met)",
        last.late_ticks,
        100.0 - missed_pct
    );
    println!("  torn reads          {}", last.torn_reads);
    println!("  dropped samples     {} (batches {})", last.dropped_samples, last.dropped_batches);
    println!("  samples delivered   {samples}");
    println!("  sampler thread CPU  {cpu:.2}% of one core");
    println!(
        "  machine floor       {floor_cpu:.2}% of one core, {floor_late:.3}% deadlines missed (bare 10 kHz sleep loop)"
    );
    let ratio =
        |a: f64, b: f64| if b > 0.0 { format!("{:.2}", a / b) } else { format!("n/a (floor 0, sampler {a:.3})") };
    println!("  ratio sampler/floor CPU {}, misses {}", ratio(cpu, floor_cpu), ratio(missed_pct, floor_late));
    let _ = h.shutdown(Duration::from_secs(3));
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
