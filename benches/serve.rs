//! `zescope serve` under scraping: does serving Prometheus slow the sampler?
//!
//! Runs the built `zescope serve --source sim --interval 1ms` (1 kHz) twice for
//! ZESCOPE_SERVE_BENCH_SECS seconds each (default 10): once left alone, once scraped 50 times a
//! second by each of 4 concurrent clients (200 scrapes/s over fresh loopback connections, as
//! Prometheus scrapes). Sampler timeliness comes from serve's own health metrics, read by one
//! scrape before and one after each phase: achieved tick rate, late ticks, dropped samples.
//! Prints both phases, the ratio scraped/alone of the achieved rate and of late ticks, and the
//! scrape latency (median, 99th percentile, worst) seen by the clients. Each scrape encodes the
//! newest snapshot afresh (no response cache exists to hit); the page is a few kB and stays in
//! the CPU caches, as it would on a node scraped by one Prometheus.
//!
//!     cargo bench --bench serve

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/served.rs"]
mod served;
use served::{scrape, start, value};

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CLIENTS: usize = 4;
const PER_CLIENT_HZ: u32 = 50;

struct Health {
    at: Instant,
    ticks: f64,
    late: f64,
    dropped: f64,
}

fn health(addr: SocketAddr) -> Health {
    let page = scrape(addr).expect("scrape");
    Health {
        at: Instant::now(),
        ticks: value(&page, "zescope_sampler_ticks_total"),
        late: value(&page, "zescope_sampler_late_ticks_total"),
        dropped: value(&page, "zescope_sampler_dropped_samples_total"),
    }
}

struct Phase {
    rate: f64,
    late: f64,
    dropped: f64,
    latencies: Vec<Duration>,
    failed: usize,
}

fn phase(secs: u64, scraped: bool) -> Phase {
    let (mut child, addr) = start();
    let h0 = health(addr);
    let mut latencies = Vec::new();
    let mut failed = 0;
    if scraped {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                std::thread::spawn(move || {
                    let period = Duration::from_secs(1) / PER_CLIENT_HZ;
                    let t0 = Instant::now();
                    let (mut lat, mut failed) = (Vec::new(), 0usize);
                    let mut k = 0u32;
                    while t0.elapsed() < Duration::from_secs(secs) {
                        let s = Instant::now();
                        match scrape(addr) {
                            Ok(p) if p.starts_with("HTTP/1.1 200") => lat.push(s.elapsed()),
                            _ => failed += 1,
                        }
                        k += 1;
                        let due = t0 + period * k;
                        if let Some(wait) = due.checked_duration_since(Instant::now()) {
                            std::thread::sleep(wait);
                        }
                    }
                    (lat, failed)
                })
            })
            .collect();
        for c in clients {
            let (l, f) = c.join().expect("client");
            latencies.extend(l);
            failed += f;
        }
    } else {
        std::thread::sleep(Duration::from_secs(secs));
    }
    // Health reports are sent every 500 ms: wait for a fresh report before the last reading.
    std::thread::sleep(Duration::from_millis(600));
    let h1 = health(addr);
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let _ = child.wait();
    let secs = h1.at.duration_since(h0.at).as_secs_f64();
    Phase {
        rate: (h1.ticks - h0.ticks) / secs,
        late: h1.late - h0.late,
        dropped: h1.dropped - h0.dropped,
        latencies,
        failed,
    }
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` runs it with no flags: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let secs = std::env::var("ZESCOPE_SERVE_BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let alone = phase(secs, false);
    let scraped = phase(secs, true);
    for (name, p) in [("alone", &alone), ("scraped", &scraped)] {
        println!(
            "serve/{name}: {:.1} ticks/s of 1000 requested, {} late ticks, {} dropped samples",
            p.rate, p.late, p.dropped
        );
    }
    let mut l = scraped.latencies.clone();
    l.sort();
    let pct = |q: f64| l.get(((l.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or_default();
    println!(
        "serve/scrape latency over {} scrapes by {CLIENTS} clients at {PER_CLIENT_HZ}/s each: median {:?}, p99 {:?}, \
         max {:?}, {} failed",
        l.len(),
        pct(0.5),
        pct(0.99),
        l.last().copied().unwrap_or_default(),
        scraped.failed
    );
    println!(
        "serve/ratio scraped/alone: achieved rate {:.4}, late ticks {} vs {}",
        scraped.rate / alone.rate,
        scraped.late,
        alone.late
    );
}
