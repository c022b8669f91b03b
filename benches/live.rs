//! `zescope serve`'s live feed (`/live`): what watching costs the server, what a value costs on
//! the wire, how late a sample reaches a viewer, and how fast a late joiner gets the history.
//!
//! Runs the built `zescope serve --source sim --interval 1ms` (1 kHz, the simulated GPU's group
//! and its telemetry) for ZESCOPE_LIVE_BENCH_SECS seconds (default 10) three times: with no
//! viewer, with 1 and with 4 viewers over loopback (tungstenite clients decoding every frame with
//! `zescope::live::wire`). Per phase: serve's CPU time (utime + stime of /proc/PID/stat, in 10 ms
//! ticks; fresh servers differ by more than viewers do, so the ratios to publish are the rounds'
//! below) over the phase's wall time, the sampler's achieved rate from serve's health metrics, and for the viewers
//! the bytes received per sample value and, per stream, the latency from each batch's newest
//! sample (CLOCK_MONOTONIC, the samples' clock) to its decoding in the viewer (p50, p99, max),
//! counted once the viewer has caught up with the history it joined with: the sample-to-viewer
//! part of sample-to-screen; the window's frame (at most 16 ms at 60 Hz) comes on top. A device
//! stream's timestamps are the device's clock mapped onto CLOCK_MONOTONIC, which may lead it by a
//! few ms (negative latencies); the telemetry's are read on the host. At the end of the 1-viewer phase a late joiner asks for everything from event 0 and the
//! time until it holds all that existed when it connected is reported, with the seconds of
//! history that was, and the 10-minute figure it extrapolates to. A 10-minute late joiner is then
//! measured in this process (`late_joiner`): serve's own feed and viewer thread, their history
//! the 1-viewer phase's batches (as the server sent them) repeated to span 10 minutes, a viewer
//! decoding all of it over loopback and filing each batch into a store as the window does
//! (`zescope_model::view::ingest::Ingest`, the default memory cap): what the window holds once
//! the last batch is in, before its next frame draws it.
//! Then the CPU rounds (`cpu_rounds`): one server, ZESCOPE_LIVE_BENCH_ROUNDS rounds (default 4)
//! of no viewer, 1, none, 4, each window 5 s (at most ZESCOPE_LIVE_BENCH_SECS), every thread's
//! CPU from /proc/PID/task/*/schedstat (ns): per round the ratio to the windows without viewers
//! around it, and the median. Nothing is cached between phases (a fresh server each); each frame
//! is encoded once by the server, whatever the viewers.
//!
//!     cargo bench --bench live

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use zescope::commands::serve::live::{Feed, access::Access, viewer};
use zescope::live::wire;
use zescope_model::view::ingest::Ingest;
use zescope_sampler::monotonic_ns;
use zescope_sampler::{RunInfo, SampleBatch};
use zescope_store::Store;

#[path = "support/served.rs"]
mod served;
use served::{scrape, start, value};

/// The app's allocator (`src/main.rs`), so allocations cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn ticks(addr: SocketAddr) -> f64 {
    value(&scrape(addr).expect("scrape"), "zescope_sampler_ticks_total")
}

/// CPU time of process `pid` so far (utime + stime, in clock ticks of 10 ms).
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<u64> = after.split(' ').filter_map(|x| x.parse().ok()).collect();
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the state letter.
    Duration::from_millis((f[10] + f[11]) * 10)
}

#[derive(Default)]
struct Seen {
    bytes: u64,
    values: u64,
    /// Per stream: each batch's newest sample's age when decoded, µs.
    latencies_us: std::collections::BTreeMap<usize, Vec<i64>>,
    /// The next `seq` after the last event received.
    next: u64,
    /// The run, from the hello.
    run: Option<RunInfo>,
    /// Every batch, as sent (when kept).
    batches: Vec<SampleBatch>,
}

/// Reads the feed from event `from` until `stop`, or until it holds events up to `until`.
fn watch(addr: SocketAddr, from: u64, until: Option<u64>, stop: &AtomicBool, progress: &AtomicU64, keep: bool) -> Seen {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_millis(100))).expect("timeout");
    let url = format!("ws://{addr}/live?protocol={}&from={from}", wire::PROTOCOL);
    let (mut ws, _) = tungstenite::client(url, stream).expect("handshake");
    let mut seen = Seen { next: from, ..Seen::default() };
    // Latencies count once the viewer has caught up (a read found nothing waiting, or a batch
    // came less than 100 ms after its newest sample): the history it joined with is old by design.
    let mut caught_up = false;
    while !stop.load(Ordering::Relaxed) && until.is_none_or(|u| seen.next < u) {
        match ws.read() {
            Ok(tungstenite::Message::Binary(b)) => {
                seen.bytes += b.len() as u64;
                let batch = wire::decode_batch(&b).expect("a batch");
                seen.values += batch.samples.values.len() as u64;
                seen.next = batch.seq + 1;
                progress.store(seen.next, Ordering::Relaxed);
                // Caught up: a batch whose newest sample is less than 100 ms old.
                let newest = batch.samples.timestamps.last().copied();
                caught_up |= newest.is_some_and(|t| monotonic_ns() - t < 100_000_000);
                if let Some(t) = newest.filter(|_| caught_up) {
                    seen.latencies_us.entry(batch.samples.stream).or_default().push((monotonic_ns() - t) / 1000);
                }
                if keep {
                    seen.batches.push(batch.samples);
                }
            }
            Ok(tungstenite::Message::Text(t)) => {
                seen.bytes += t.len() as u64;
                match wire::decode_text(t.as_str()) {
                    Ok(wire::Text::Event(seq, _)) => seen.next = seq + 1,
                    Ok(wire::Text::Hello(h)) => seen.run = Some(h.info),
                    _ => {}
                }
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
            {
                caught_up = true;
            }
            Err(e) => panic!("the feed failed: {e}"),
        }
    }
    seen
}

struct Phase {
    cpu_share: f64,
    rate: f64,
    seen: Vec<Seen>,
    late: Option<(Duration, f64)>,
}

fn phase(secs: u64, viewers: usize) -> Phase {
    let (mut child, addr) = start();
    let stop = Arc::new(AtomicBool::new(false));
    let head = Arc::new(AtomicU64::new(0));
    let (t0, c0, k0) = (Instant::now(), cpu(child.id()), ticks(addr));
    let threads: Vec<_> = (0..viewers)
        .map(|_| {
            let (stop, head) = (Arc::clone(&stop), Arc::clone(&head));
            std::thread::spawn(move || watch(addr, 0, None, &stop, &head, viewers == 1))
        })
        .collect();
    std::thread::sleep(Duration::from_secs(secs));
    // A late joiner (beside the one live viewer): everything from event 0 up to the live head.
    let late = (viewers == 1).then(|| {
        let upto = head.load(Ordering::Relaxed);
        let t = Instant::now();
        let s = watch(addr, 0, Some(upto), &AtomicBool::new(false), &AtomicU64::new(0), false);
        (t.elapsed(), s.values as f64)
    });
    let wall = t0.elapsed();
    let (c1, k1) = (cpu(child.id()), ticks(addr));
    stop.store(true, Ordering::Relaxed);
    let seen: Vec<Seen> = threads.into_iter().map(|t| t.join().expect("viewer")).collect();
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let _ = child.wait();
    Phase { cpu_share: (c1 - c0).as_secs_f64() / wall.as_secs_f64(), rate: (k1 - k0) / wall.as_secs_f64(), seen, late }
}

/// CPU time (ns on a CPU) of every thread of process `pid` alive now (`/proc/PID/task/*/schedstat`).
fn threads_cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// serve's CPU with viewers against without, in one server: `rounds` rounds of none, 1, none, 4
/// viewers, `secs` seconds each (after a second for the viewers to take the history in), each
/// window's CPU from every thread's schedstat (ns), taken while its viewers still watch. Returns
/// per round the ratios 1 viewer / none and 4 viewers / none (each against the mean of the two
/// windows without viewers around it).
fn cpu_rounds(secs: u64, rounds: usize) -> Vec<(f64, f64)> {
    let (mut child, addr) = start();
    let pid = child.id();
    let window = |viewers: usize| {
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..viewers)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || watch(addr, 0, None, &stop, &AtomicU64::new(0), false))
            })
            .collect();
        std::thread::sleep(Duration::from_secs(1));
        let (t0, c0) = (Instant::now(), threads_cpu_ns(pid));
        std::thread::sleep(Duration::from_secs(secs));
        let share = (threads_cpu_ns(pid) - c0) as f64 / t0.elapsed().as_nanos() as f64;
        stop.store(true, Ordering::Relaxed);
        threads.into_iter().for_each(|t| drop(t.join()));
        share
    };
    let mut ratios = Vec::new();
    let mut none = window(0);
    for _ in 0..rounds {
        let one = window(1);
        let none_1 = window(0);
        let four = window(4);
        let none_2 = window(0);
        ratios.push((one / ((none + none_1) / 2.0), four / ((none_1 + none_2) / 2.0)));
        none = none_2;
    }
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let _ = child.wait();
    ratios
}

/// A late joiner of a 10-minute run: a feed in this process (serve's own `Feed`, `viewer::watch`
/// on a loopback socket) whose history is `batches` — the frames a viewer received from the real
/// server, as it sent them — repeated with their timestamps shifted until they span `secs`
/// seconds; then a viewer asks for everything from event 0, decodes every frame and files its
/// batch into a store through the window's ingest. Returns the time to the first batch, the time
/// until the last is stored, the values and the bytes received.
fn late_joiner(info: &RunInfo, batches: &[SampleBatch], secs: u64) -> (Duration, Duration, u64, u64) {
    let feed = Feed::batching(usize::MAX / 2, Access::loopback_only(), Duration::ZERO);
    feed.started(info, &[]);
    let (t0, t1) =
        batches.iter().flat_map(|b| b.timestamps.iter()).fold((i64::MAX, i64::MIN), |(a, b), &t| (a.min(t), b.max(t)));
    let span = (t1 - t0 + 1_000_000).max(1);
    let copies = (secs as i64 * 1_000_000_000 + span - 1) / span;
    for c in 0..copies {
        for b in batches {
            let mut b = b.clone();
            b.timestamps.iter_mut().for_each(|t| *t += c * span);
            feed.batch(&b);
        }
    }
    feed.end();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let client = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
    let (socket, peer) = listener.accept().expect("accept");
    let server = Arc::clone(&feed);
    let request = viewer::Request { from: 0, feed: None, protocol: wire::PROTOCOL };
    let thread = std::thread::spawn(move || viewer::watch(&server, socket, peer, &request));
    let config = tungstenite::protocol::WebSocketConfig::default().max_message_size(Some(256 << 20));
    let mut ws = tungstenite::WebSocket::from_raw_socket(client, tungstenite::protocol::Role::Client, Some(config));
    let t = Instant::now();
    let (mut first, mut values, mut bytes) = (None, 0u64, 0u64);
    let mut store = Store::with_default_cap();
    let mut ingest = Ingest::default();
    ingest.run_started(&mut store, info.clone());
    loop {
        match ws.read() {
            Ok(tungstenite::Message::Binary(b)) => {
                bytes += b.len() as u64;
                let mut batch = wire::decode_batch(&b).expect("a batch").samples;
                batch.run = info.run;
                values += batch.values.len() as u64;
                let stored = ingest.samples(&mut store, &batch).expect("stored");
                assert_eq!(stored, batch.timestamps.len() as u64, "every row of the history is stored");
                first.get_or_insert_with(|| t.elapsed());
            }
            Ok(m) => bytes += m.len() as u64,
            Err(_) => break,
        }
    }
    let all = t.elapsed();
    let _ = thread.join();
    (first.unwrap_or_default(), all, values, bytes)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let secs = std::env::var("ZESCOPE_LIVE_BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let phases: Vec<(usize, Phase)> = [0, 1, 4].into_iter().map(|v| (v, phase(secs, v))).collect();
    let kept = &phases[1].1.seen[0];
    if let Some(info) = &kept.run {
        let minutes = 10;
        let (first, all, values, bytes) = late_joiner(info, &kept.batches, minutes * 60);
        println!(
            "live/late joiner of {minutes} min (in process, {} s of the run repeated): first batch after {:.1} ms, \
             all {values} values ({:.1} MB, {:.2} bytes/value) decoded and stored in {:.3} s",
            secs,
            first.as_secs_f64() * 1e3,
            bytes as f64 / 1e6,
            bytes as f64 / values.max(1) as f64,
            all.as_secs_f64()
        );
    }
    let rounds = std::env::var("ZESCOPE_LIVE_BENCH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
    let mut ratios = cpu_rounds(secs.min(5), rounds);
    for (i, (one, four)) in ratios.iter().enumerate() {
        println!("live/cpu round {i}: serve CPU with 1 viewer {one:.3}x none, with 4 viewers {four:.3}x none");
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2] + v[(v.len() - 1) / 2]) / 2.0
    };
    let (mut ones, mut fours): (Vec<f64>, Vec<f64>) = ratios.drain(..).unzip();
    println!(
        "live/cpu: serve CPU with 1 viewer median {:.3}x none (range {:.3}-{:.3}), with 4 viewers median {:.3}x \
         (range {:.3}-{:.3}), {rounds} rounds in one server",
        median(&mut ones),
        ones[0],
        ones[ones.len() - 1],
        median(&mut fours),
        fours[0],
        fours[fours.len() - 1]
    );
    let alone = phases[0].1.cpu_share;
    for (v, p) in &phases {
        println!(
            "live/{v} viewers: serve CPU {:.1} % of a core ({:.2}x no viewer), {:.1} ticks/s of 1000",
            p.cpu_share * 100.0,
            p.cpu_share / alone,
            p.rate
        );
        for (i, s) in p.seen.iter().enumerate() {
            println!(
                "live/{v} viewers/viewer {i}: {} values, {:.2} bytes/value",
                s.values,
                s.bytes as f64 / s.values.max(1) as f64
            );
            for (stream, l) in &s.latencies_us {
                let mut l = l.clone();
                l.sort_unstable();
                let pct = |q: f64| l.get(((l.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or_default();
                println!(
                    "live/{v} viewers/viewer {i}/stream {stream}: {} batches, latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                    l.len(),
                    pct(0.5) as f64 / 1000.0,
                    pct(0.99) as f64 / 1000.0,
                    l.last().copied().unwrap_or_default() as f64 / 1000.0
                );
            }
        }
        if let Some((t, values)) = p.late {
            println!(
                "live/late joiner: {values} values ({secs} s of history) in {:?}; 10 min of it: about {:.2} s",
                t,
                t.as_secs_f64() * 600.0 / secs as f64
            );
        }
    }
}
