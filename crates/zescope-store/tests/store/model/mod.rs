//! A brute-force model of a stream: every sample kept, every answer computed
//! by scanning. The store must agree with it.
#![allow(dead_code, reason = "shared by several test binaries, each using a part")]

pub mod checks;

use zescope_store::{SeriesDesc, SeriesId, SeriesKind, Store, StreamDesc, StreamId};

/// The rate the store must plot between two raw totals `dt_ns` apart, written out here (not the
/// store's own function, so a fault in that function shows): the increase (plus `wrap` across a
/// wrap; `None` for a reset, NaN for a non-finite total) per second; busy time as its share of
/// the elapsed time in %, clamped to 0–100.
pub fn rate(prev: f64, cur: f64, dt_ns: i64, wrap: Option<f64>, kind: SeriesKind) -> Option<f64> {
    if !(prev.is_finite() && cur.is_finite()) {
        return Some(f64::NAN);
    }
    let mut delta = cur - prev;
    if delta < 0.0 {
        match wrap.filter(|m| m.is_finite() && *m > 0.0) {
            Some(m) if delta + m >= 0.0 => delta += m,
            _ => return None,
        }
    }
    let per_s = delta / (dt_ns as f64 * 1e-9);
    Some(match kind {
        SeriesKind::BusyTime { unit_s, .. } if unit_s.is_finite() && unit_s > 0.0 => {
            (per_s * (unit_s * 100.0)).clamp(0.0, 100.0)
        }
        _ => per_s,
    })
}

/// Small deterministic PRNG (xorshift64*), so test data needs no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub fn desc(kinds: &[SeriesKind]) -> StreamDesc {
    StreamDesc {
        name: "test".into(),
        series: kinds
            .iter()
            .enumerate()
            .map(|(i, &kind)| SeriesDesc { name: format!("s{i}"), unit: "u".into(), kind })
            .collect(),
    }
}

/// One millisecond in ns.
pub const MS: i64 = 1_000_000;

/// `n` samples of `series` gauges at 1 kHz starting at `t0`, values from `f(i, s)`.
pub fn fill(store: &mut Store, id: StreamId, t0: i64, n: usize, series: usize, f: impl Fn(usize, usize) -> f64) {
    for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
        let ts: Vec<i64> = chunk.iter().map(|&i| t0 + i as i64 * MS).collect();
        let vals: Vec<f64> =
            chunk.iter().flat_map(|&i| (0..series).map(move |s| (i, s))).map(|(i, s)| f(i, s)).collect();
        store.append(id, &ts, &vals).unwrap();
    }
}

pub fn sid(store: &Store, id: StreamId, k: usize) -> SeriesId {
    store.series_id(id, k).unwrap()
}

pub struct Model {
    pub kinds: Vec<SeriesKind>,
    pub ts: Vec<i64>,
    /// Row per sample.
    pub raw: Vec<Vec<f64>>,
    /// A gap precedes sample i.
    pub gap: Vec<bool>,
    gap_pending: bool,
}

/// Brute-force summary of a run of samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub min: f64,
    pub max: f64,
    pub sum: f64,
    pub count: u64,
    pub non_finite: u64,
    pub samples: u64,
    pub last: Option<f64>,
    /// Of a counter's rates: Σ rate × interval (s), and Σ interval.
    pub area: f64,
    pub dur: f64,
}

impl Summary {
    /// The mean the store must give: of a counter's rates, time-weighted; else of the values.
    pub fn mean(&self) -> f64 {
        if self.dur > 0.0 { self.area / self.dur } else { self.sum / self.count as f64 }
    }
}

impl Model {
    pub fn new(kinds: &[SeriesKind]) -> Model {
        Model { kinds: kinds.to_vec(), ts: Vec::new(), raw: Vec::new(), gap: Vec::new(), gap_pending: false }
    }

    pub fn push(&mut self, t: i64, row: &[f64]) {
        self.gap.push(self.gap_pending && !self.ts.is_empty());
        self.gap_pending = false;
        self.ts.push(t);
        self.raw.push(row.to_vec());
    }

    pub fn mark_gap(&mut self) {
        self.gap_pending = true;
    }

    /// What the store should report for sample i of series s.
    pub fn value(&self, i: usize, s: usize) -> Option<f64> {
        let kind = self.kinds[s];
        match kind.rate_wrap() {
            None => Some(self.raw[i][s]),
            Some(_) if i == 0 || self.gap[i] => None,
            Some(wrap) => rate(self.raw[i - 1][s], self.raw[i][s], self.ts[i] - self.ts[i - 1], wrap, kind),
        }
    }

    /// Index range of samples with `t0 <= t <= t1`.
    pub fn range(&self, t0: i64, t1: i64) -> std::ops::Range<usize> {
        self.ts.partition_point(|&t| t < t0)..self.ts.partition_point(|&t| t <= t1)
    }

    pub fn summary(&self, s: usize, idx: std::ops::Range<usize>) -> Summary {
        let mut out = Summary {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sum: 0.0,
            count: 0,
            non_finite: 0,
            samples: 0,
            last: None,
            area: 0.0,
            dur: 0.0,
        };
        let rate = self.kinds[s].rate_wrap().is_some();
        for i in idx {
            let v = self.value(i, s);
            out.samples += 1;
            out.last = v;
            match v {
                Some(x) if x.is_finite() => {
                    out.min = out.min.min(x);
                    out.max = out.max.max(x);
                    out.sum += x;
                    out.count += 1;
                    if rate {
                        let dt = (self.ts[i] - self.ts[i - 1]) as f64 * 1e-9;
                        out.area += x * dt;
                        out.dur += dt;
                    }
                }
                Some(_) => out.non_finite += 1,
                None => {}
            }
        }
        out
    }
}

/// Means are sums in a different order: compare with a relative tolerance.
pub fn close(a: f64, b: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}
