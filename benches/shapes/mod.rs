//! Counter-shaped data, shared by the store and session benchmarks: per sample of 16 series,
//! 8 cumulative u32 totals (bytes, cycles) moving by varying amounts, 2 frequencies that step
//! now and then, 3 integer-valued readings (power in mW, temperature in m°C, busy cycles) and
//! 3 full-precision noisy floats (utilisation %), sampled at 1 kHz with timestamp jitter. The
//! worst case: every series a full-precision noisy float.
//!
//! The data is random where a counter is: the totals' steps, the readings and the floats carry
//! about 2.6 bytes of entropy per value on average, so no lossless encoding stores it below that.

use zescope_store::{SeriesDesc, SeriesKind, StreamDesc};

/// Series in a stream of counter-shaped data (more series repeat the pattern).
pub const SERIES: usize = 16;

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

/// Kind of series `s`: the first 8 of every 16 are cumulative u32 totals.
pub fn kind(s: usize) -> SeriesKind {
    if s % SERIES < 8 { SeriesKind::Cumulative { wrap: Some(4_294_967_296.0) } } else { SeriesKind::Gauge }
}

/// A stream description of `n` counter-shaped series.
pub fn desc(n: usize) -> StreamDesc {
    StreamDesc {
        name: "bench".into(),
        series: (0..n).map(|s| SeriesDesc { name: format!("c{s}"), unit: "u".into(), kind: kind(s) }).collect(),
    }
}

/// Generates `samples` samples of `n` series, handing them to `f(timestamps, row-major values)`
/// in batches of `batch` samples.
pub fn generate(n: usize, samples: usize, batch: usize, worst_case: bool, mut f: impl FnMut(&[i64], &[f64])) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut totals = vec![0.0f64; n];
    let mut freq = vec![1200.0; n];
    let (mut ts, mut vals) = (Vec::with_capacity(batch), Vec::with_capacity(batch * n));
    for i in 0..samples {
        ts.push(i as i64 * 1_000_000 + (rng.next() % 20_000) as i64);
        for s in 0..n {
            let v = match s % SERIES {
                _ if worst_case => 50.0 + 40.0 * rng.unit(),
                k @ 0..8 => {
                    totals[s] = (totals[s] + (rng.next() % (1 << (12 + k))) as f64) % 4_294_967_296.0;
                    totals[s]
                }
                8 | 9 => {
                    if rng.next().is_multiple_of(2000) {
                        freq[s] = 300.0 + (rng.next() % 20) as f64 * 100.0;
                    }
                    freq[s]
                }
                10..13 => (20_000 + rng.next() % 50_000) as f64,
                _ => 50.0 + 40.0 * rng.unit(),
            };
            vals.push(v);
        }
        if ts.len() == batch {
            f(&ts, &vals);
            ts.clear();
            vals.clear();
        }
    }
    if !ts.is_empty() {
        f(&ts, &vals);
    }
}
