//! `sampler_cost`: the sampler thread's CPU per sample, and the allocations per tick, at the
//! rates it is asked for: exported memory read on every tick at 1 kHz and 10 kHz (16 counters;
//! 10 kHz is the fastest tick, `MIN_INTERVAL` = 100 µs: a faster rate of ticks is not offered),
//! and the time-based streamer at 10k and 100k reports a second (16 metrics; its reports come
//! from the driver's buffer, several per tick, which is how rates past 10 kHz are read). Each
//! runs 3 s (`ZESCOPE_SAMPLER_COST_SECS`) on the in-process simulated device; the first second
//! is set-up and left out.
//!
//! - CPU ns per sample: the sampler thread's own CPU (its `Health::cpu_percent`, from
//!   `/proc/thread-self/stat`) over the samples it delivered.
//! - Allocations per tick: every allocation of the process (a counting wrapper around the app's
//!   allocator) over the steady seconds, divided by the sampler's ticks. The process holds the
//!   sampler, the simulated device's writer thread and this consumer of its events: a batch
//!   sent every flush (50 ms) is an allocation, so the figure is not zero, but it must not grow
//!   with the rate (the read path allocates nothing per tick).
//!
//! - Wakeups a second: the sampler thread's own count (`Health::wakeups`) over the steady
//!   seconds. A run of the streamer alone wakes on its notification event or every batch
//!   interval (20 ms), however many reports a second it reads.
//!
//! `ZESCOPE_SAMPLER_COST_ONLY=TEXT` runs the settings whose name holds TEXT.
//!
//! Caches: the device's buffer is re-read each tick (memory written by the simulated device's
//! thread 1 ms, or 100 µs, before); nothing is warmed beyond the first second.
//!
//!     cargo bench --bench sampler_cost

mod common;

use std::time::{Duration, Instant};

use zescope_sampler::{self as sampler, Command, DevicePath, Event, Options, RunConfig, Via};
use zescope_ze::Loader;

/// The app's allocator (`src/main.rs`), counting (`stats_alloc`: no unsafe here).
#[global_allocator]
static ALLOCATOR: stats_alloc::StatsAlloc<mimalloc::MiMalloc> = stats_alloc::StatsAlloc::new(mimalloc::MiMalloc);

/// Allocations (and reallocations) so far, in the whole process.
fn allocations() -> u64 {
    let s = ALLOCATOR.stats();
    (s.allocations + s.reallocations) as u64
}

/// CPU seconds of the calling thread (`/proc/thread-self/stat`, 10 ms ticks).
fn thread_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let f: Vec<f64> =
        stat.rsplit_once(')').map_or("", |(_, r)| r).split_whitespace().filter_map(|x| x.parse().ok()).collect();
    (f.get(10).unwrap_or(&0.0) + f.get(11).unwrap_or(&0.0)) / 100.0
}

/// One setting: its name, the group, how it is read, the interval and the device's update period.
struct Setting {
    name: &'static str,
    group: &'static str,
    via: Via,
    interval: Duration,
    update_us: u64,
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let secs: u64 = std::env::var("ZESCOPE_SAMPLER_COST_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let settings = [
        Setting {
            name: "exported memory, 1 kHz",
            group: "Synthetic",
            via: Via::Export,
            interval: Duration::from_millis(1),
            update_us: 1000,
        },
        Setting {
            name: "exported memory, 10 kHz",
            group: "Synthetic",
            via: Via::Export,
            interval: Duration::from_micros(100),
            update_us: 100,
        },
        Setting {
            name: "streamer, 10k reports/s",
            group: "Stream16",
            via: Via::Streamer,
            interval: Duration::from_millis(1),
            update_us: 1000,
        },
        Setting {
            name: "streamer, 100k reports/s",
            group: "Stream16",
            via: Via::Streamer,
            interval: Duration::from_micros(100),
            update_us: 1000,
        },
    ];
    println!("sampler_cost: {secs} s each on the simulated device (the first second left out)");
    // The machine's floor: a bare thread sleeping to the same deadlines, its CPU per wakeup
    // (what any sampler at that rate pays, mostly the kernel's switches in and out).
    for us in [1000u64, 100] {
        let ns = std::thread::spawn(move || {
            let (t0, c0) = (Instant::now(), thread_cpu());
            let period = Duration::from_micros(us);
            let mut k = 0u32;
            while t0.elapsed() < Duration::from_secs(2) {
                k += 1;
                if let Some(d) = (t0 + period * k).checked_duration_since(Instant::now()) {
                    std::thread::sleep(d);
                }
            }
            (thread_cpu() - c0) * 1e9 / f64::from(k)
        })
        .join()
        .unwrap();
        println!("floor: a bare thread waking every {us} µs costs {ns:.0} CPU ns a wakeup");
    }
    println!(
        "| setting | samples/s | sampler CPU ns per sample | sampler CPU (% of a core) | allocations per tick | wakeups/s |"
    );
    println!("|---|---|---|---|---|---|");
    let only = std::env::var("ZESCOPE_SAMPLER_COST_ONLY").unwrap_or_default();
    for s in settings.into_iter().filter(|s| s.name.contains(only.as_str())) {
        let sim = common::counters_sim(16, s.update_us);
        let sim2 = sim.clone();
        let mut h = sampler::spawn(
            Box::new(move || Loader::in_process(sim2.in_process())),
            Options { health_period: Duration::from_secs(1), ..Default::default() },
        );
        let mut cfg = RunConfig::single(DevicePath::default(), vec![s.group.into()], s.interval);
        cfg.via = s.via;
        h.send(Command::Start(cfg));
        let start = Instant::now();
        let mut steady: Option<(Instant, u64, u64, u64, u64)> = None; // since, samples, ticks, allocations, wakeups
        let (mut samples, mut last) = (0u64, None);
        let mut cpu = Vec::new();
        let mut first_for = Duration::ZERO;
        while start.elapsed() < Duration::from_secs(secs) {
            match h.events.recv_timeout(Duration::from_millis(100)) {
                Ok(Event::Samples(b)) => samples += b.timestamps.len() as u64,
                Ok(Event::Health(x)) => {
                    if steady.is_none() {
                        steady = Some((Instant::now(), samples, x.ticks, allocations(), x.wakeups));
                        first_for = x.ticked_for;
                    } else {
                        cpu.push(x.cpu_percent);
                    }
                    last = Some(x);
                }
                Ok(Event::Error(e)) => panic!("{}: sampler error: {e}", s.name),
                _ => {}
            }
        }
        let allocations = allocations();
        h.send(Command::Stop);
        let _ = h.shutdown(Duration::from_secs(3));
        let (Some((t0, s0, k0, a0, w0)), Some(x)) = (steady, last) else {
            println!("| {} | no steady state | | | | |", s.name);
            continue;
        };
        let rate = (samples - s0) as f64 / t0.elapsed().as_secs_f64();
        // Wakeups between the first and the last health report (the last one's count).
        let wakeups = (x.wakeups - w0) as f64 / (x.ticked_for.saturating_sub(first_for)).as_secs_f64().max(1e-3);
        let cpu_pct = cpu.iter().sum::<f64>() / cpu.len().max(1) as f64;
        let ns = cpu_pct / 100.0 * 1e9 / rate.max(1.0);
        let per_tick = (allocations - a0) as f64 / (x.ticks - k0).max(1) as f64;
        println!("| {} | {rate:.0} | {ns:.0} | {cpu_pct:.2} | {per_tick:.3} | {wakeups:.0} |", s.name);
        assert!(sim.report().is_clean(), "{:?}", sim.report());
    }
}
