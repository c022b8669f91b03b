//! How many markers a workload may send: a sustained rate with a burst (a token bucket in the
//! listener: `burst` markers at once, refilled at `per_second`), and a count per session (kept
//! by the session's marker list, `view::Markers`). What goes past either is dropped and counted
//! (the listener's [`super::Counts::over_rate`], the list's `refused`), and shown in the status
//! bar and `record`'s summary. So whatever scales with markers (the session, an SVG with its
//! markers drawn, `export --phases`) stays bounded too.
//!
//! Defaults: 1000 a second sustained, bursts of 5000, 100 000 per session (about 10 MB of SVG
//! marks). `zescope record` takes `--marker-rate`, `--marker-burst`, `--max-markers`; the window
//! keeps them in its settings (`markers` in `app.ron`); `serve` keeps no markers and uses the
//! default rate.

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// The bounds on a workload's markers (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Markers accepted per second, sustained.
    pub per_second: u32,
    /// Markers accepted at once after a quiet spell.
    pub burst: u32,
    /// Markers kept per session (the window's live data, one `record`).
    #[serde(rename = "per_recording")]
    pub per_session: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { per_second: 1000, burst: 5000, per_session: crate::view::markers::DEFAULT_MAX_MARKS }
    }
}

/// The rate part of [`Limits`]: a token bucket.
#[derive(Clone, Debug)]
pub(super) struct Bucket {
    per_second: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// Full: a burst may come at once.
    pub(super) fn new(limits: &Limits, now: Instant) -> Bucket {
        let burst = f64::from(limits.burst.max(1));
        Bucket { per_second: f64::from(limits.per_second), burst, tokens: burst, at: now }
    }

    /// Takes one marker at `now`: `false` when it goes past the rate.
    pub(super) fn take(&mut self, now: Instant) -> bool {
        let dt = now.saturating_duration_since(self.at).as_secs_f64();
        self.at = self.at.max(now);
        self.tokens = (self.tokens + dt * self.per_second).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_passes_then_the_sustained_rate() {
        let l = Limits { per_second: 1000, burst: 5000, per_session: 10 };
        let t0 = Instant::now();
        let mut b = Bucket::new(&l, t0);
        assert_eq!((0..6000).filter(|_| b.take(t0)).count(), 5000, "the burst, no more");
        // 10 s of 10 000 a second: 1000 a second get through.
        let mut passed = 0;
        for k in 1..=100_000u64 {
            passed += u64::from(b.take(t0 + Duration::from_micros(100 * k)));
        }
        assert!((9_990..=10_000).contains(&passed), "{passed}");
        // A quiet spell refills the burst, not more.
        let later = t0 + Duration::from_secs(3600);
        assert_eq!((0..6000).filter(|_| b.take(later)).count(), 5000);
    }

    #[test]
    fn a_rate_of_zero_takes_only_the_burst() {
        let l = Limits { per_second: 0, burst: 3, per_session: 10 };
        let t0 = Instant::now();
        let mut b = Bucket::new(&l, t0);
        assert_eq!((0..10).filter(|k| b.take(t0 + Duration::from_secs(*k))).count(), 3);
    }
}
