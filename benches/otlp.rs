//! `zescope serve --otlp`: what pushing every series over OTLP costs the serving process.
//!
//! Runs the built `zescope serve --source sim --device 0,1 --interval 1ms` (1 kHz, both simulated
//! devices, telemetry on) for ZESCOPE_OTLP_BENCH_SECS seconds a phase (default 10), alternately
//! alone and with `--otlp` to a receiver in this process (a loopback listener that reads each
//! POST and answers 200; an export a second, `OTEL_METRIC_EXPORT_INTERVAL=1000`), in
//! ZESCOPE_OTLP_BENCH_ROUNDS rounds (default 4) of one phase each, a fresh serve per phase. The
//! cost is the serving process's CPU time (utime + stime of /proc/PID/stat) over the phase's
//! wall-clock time, as a share of one core: `--otlp` minus alone, per round and the mean of the
//! rounds. Also the sampler's achieved rate (serve's health) and what the receiver took. Nothing is cached between phases but the binary in the page cache; the
//! export's encoding runs once a second on data that stays in the CPU caches.
//!
//!     cargo bench --bench otlp

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/served.rs"]
mod served;
use served::{start_with, value, value_if};

/// One scrape of serve's page.
fn get(addr: SocketAddr) -> String {
    served::scrape(addr).expect("scrape")
}

/// CPU seconds the process used so far (utime + stime).
fn cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    // Fields 14 and 15 of the whole line: utime, stime (clock ticks); `rest` starts at field 3.
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// A receiver that takes every POST and answers 200; counts the bytes it got.
fn receiver() -> (SocketAddr, Arc<AtomicU64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let got = Arc::new(AtomicU64::new(0));
    let g = Arc::clone(&got);
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 65536];
            while let Ok(n) = s.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
                if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                    let len: usize =
                        head.lines().find_map(|l| l.strip_prefix("content-length:")?.trim().parse().ok()).unwrap_or(0);
                    if buf.len() >= end + 4 + len {
                        g.fetch_add(len as u64, Ordering::Relaxed);
                        break;
                    }
                }
            }
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n");
        }
    });
    (addr, got)
}

/// serve on both simulated devices at 1 kHz, an export a second, with `--otlp` to `otlp` if given.
fn start(otlp: Option<SocketAddr>) -> (Child, SocketAddr) {
    let url = otlp.map(|a| format!("http://{a}"));
    let mut args = vec!["--device", "0,1"];
    args.extend(url.as_deref().map(|u| ["--otlp", u]).into_iter().flatten());
    start_with(&args, &[("OTEL_METRIC_EXPORT_INTERVAL", "1000")], Duration::from_secs(2))
}

struct Phase {
    share: f64,
    rate: f64,
    dropped: f64,
}

fn phase(secs: u64, otlp: Option<SocketAddr>) -> Phase {
    let (mut child, addr) = start(otlp);
    let (c0, t0, p0) = (cpu(child.id()), Instant::now(), get(addr));
    std::thread::sleep(Duration::from_secs(secs));
    let (c1, t1) = (cpu(child.id()), Instant::now());
    std::thread::sleep(Duration::from_millis(600));
    let p1 = get(addr);
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let _ = child.wait();
    let wall = t1.duration_since(t0).as_secs_f64();
    let ticks = value(&p1, "zescope_sampler_ticks_total") - value(&p0, "zescope_sampler_ticks_total");
    Phase {
        share: (c1 - c0) / wall,
        rate: ticks / (wall + 0.6),
        dropped: value_if(&p1, "zescope_otlp_dropped_total").unwrap_or(0.0),
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("otlp: benchmark");
        return;
    }
    let secs: u64 = std::env::var("ZESCOPE_OTLP_BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let rounds: usize = std::env::var("ZESCOPE_OTLP_BENCH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
    let (rx, got) = receiver();
    let mut extra = Vec::new();
    for round in 0..rounds.max(1) {
        let alone = phase(secs, None);
        let before = got.load(Ordering::Relaxed);
        let pushed = phase(secs, Some(rx));
        let bytes = got.load(Ordering::Relaxed) - before;
        println!(
            "round {round}: alone {:.2} % of a core at {:.0} Hz; --otlp {:.2} % at {:.0} Hz, {} bytes exported, {} points dropped",
            alone.share * 100.0,
            alone.rate,
            pushed.share * 100.0,
            pushed.rate,
            bytes,
            pushed.dropped
        );
        extra.push(pushed.share - alone.share);
    }
    let mean = extra.iter().sum::<f64>() / extra.len() as f64;
    println!("otlp: --otlp costs {:+.2} % of a core over serve alone (rounds: {:?})", mean * 100.0, extra);
}
