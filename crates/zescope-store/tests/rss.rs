//! The memory cap holds in real memory, not only in the store's accounting:
//! a long ingest (several times the cap) grows the process's resident set by
//! at most the cap plus a small constant, while a live view of the last minute
//! queries it as the window does (filling the cache of decoded blocks, which
//! counts against the cap).
//!
//! This file is its own test binary, hence its own process, so tests running
//! in parallel threads elsewhere do not disturb the measurement. It holds a
//! single test for the same reason.

#[path = "store/model/mod.rs"]
mod model;

use model::{Rng, desc};
use zescope_store::{Envelope, SeriesKind, Store};

fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * page_size()
}

/// The kernel's page size, from /proc (sysconf would need `unsafe`).
fn page_size() -> usize {
    std::fs::read_to_string("/proc/self/smaps")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("KernelPageSize:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        })
        .map_or(4096, |kib| kib * 1024)
}

#[test]
fn resident_memory_stays_within_the_cap_during_a_long_ingest() {
    const CAP: usize = 48 << 20;
    const SLACK: usize = 16 << 20;
    const SERIES: usize = 16;
    const BATCH: usize = 1000;
    // Kinds as a real metric group mixes them.
    let kinds: Vec<SeriesKind> = (0..SERIES)
        .map(|s| if s % 2 == 0 { SeriesKind::Gauge } else { SeriesKind::Cumulative { wrap: Some(4_294_967_296.0) } })
        .collect();
    let mut rng = Rng(42);
    let mut ts = vec![0i64; BATCH];
    let mut vals = vec![0.0f64; BATCH * SERIES];
    let mut totals = [0.0f64; SERIES];
    let mut store = Store::new(CAP);
    let baseline = rss_bytes();
    let mut t = 0i64;
    let mut streams = 0;
    let mut envs: Vec<Envelope> = (0..SERIES).map(|_| Envelope::new()).collect();
    // 4x the cap's worth of values, across a few sampler runs.
    let target_values = 4 * CAP / 8;
    let mut appended = 0;
    while appended < target_values {
        let id = store.begin_stream(desc(&kinds));
        let series: Vec<_> = (0..SERIES).map(|k| store.series_id(id, k).unwrap()).collect();
        streams += 1;
        for batch in 0..200 {
            for (k, slot) in ts.iter_mut().enumerate() {
                *slot = t + k as i64 * 1_000_000;
            }
            t += BATCH as i64 * 1_000_000;
            for row in vals.chunks_mut(SERIES) {
                for (s, v) in row.iter_mut().enumerate() {
                    *v = if s % 2 == 0 {
                        rng.unit() * 100.0
                    } else {
                        totals[s] = (totals[s] + (rng.below(1 << 20)) as f64) % 4_294_967_296.0;
                        totals[s]
                    };
                }
            }
            store.append(id, &ts, &vals).unwrap();
            appended += vals.len();
            assert!(store.memory_used() <= CAP, "accounted {} > cap {CAP}", store.memory_used());
            if batch % 16 == 15 {
                // A live view of the last minute, 1,500 px wide: raw samples, through the cache.
                store.draw_envelopes(&series, t - 60_000_000_000, t, 1_500, &mut envs);
                assert!(envs.iter().all(|e| e.columns().iter().any(|c| c.count > 0)));
                assert!(store.memory_used() <= CAP, "accounted {} > cap {CAP} after a query", store.memory_used());
            }
        }
        store.end_stream(id);
        t += 5_000_000_000;
    }
    let grown = rss_bytes().saturating_sub(baseline);
    eprintln!(
        "{streams} streams, {appended} values ({} MiB raw), accounted {:.1} MiB, RSS grew {:.1} MiB",
        (appended * 8) >> 20,
        store.memory_used() as f64 / (1 << 20) as f64,
        grown as f64 / (1 << 20) as f64
    );
    assert!(store.coarsening().iter().any(|(_, r)| r.coarsened_before().is_some() || r.evicted_samples > 0));
    assert!(store.decoded_cache_hits() > 0, "the live view's queries never used the cache of decoded blocks");
    assert!(grown <= CAP + SLACK, "RSS grew {grown} bytes, cap {CAP} + slack {SLACK}");
}
