//! The simulated workload: a deterministic cycle of phases (idle, compute-bound,
//! memory-bound) that drives every counter, with seeded noise. Same seed and same time give
//! the same values, so tests can predict what a buffer holds.

use crate::config::{DeviceKind, Signal};

/// One phase of the cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// 0 ..= 2 s of each cycle: low utilisation, low clock and power.
    Idle,
    /// 2 ..= 5 s: the engine busy at full clock, highest power.
    Compute,
    /// 5 ..= 8 s: busy waiting on memory, highest bandwidth.
    MemoryBound,
}

/// Length of one idle → compute → memory-bound cycle, and of each phase within it.
const CYCLE_S: f64 = 8.0;

/// The phase at `t` seconds since the driver started.
pub(crate) fn phase_at(t: f64) -> Phase {
    phase_in_cycle(in_cycle(t))
}

/// Seconds into the cycle at `t` seconds since the driver started.
fn in_cycle(t: f64) -> f64 {
    // Whole cycles by truncation where `t` allows it: exact (t / 8 is, and so is t − 8k), and
    // a streamer asks this for every report, where `rem_euclid`'s `fmod` was a tenth of the
    // simulated device's cost.
    if (0.0..1e15).contains(&t) { t - ((t / CYCLE_S) as u64) as f64 * CYCLE_S } else { t.rem_euclid(CYCLE_S) }
}

/// The phase `p` seconds into a cycle.
fn phase_in_cycle(p: f64) -> Phase {
    if p < 2.0 {
        Phase::Idle
    } else if p < 5.0 {
        Phase::Compute
    } else {
        Phase::MemoryBound
    }
}

/// When in its cycle the compute phase's power reaches the limit and the clock is held down
/// (to [`HELD_CLOCK`] of the top clock, throttle reason: average power cap), until the phase ends.
const HELD_FROM_S: f64 = 3.5;

/// The share of the top clock the power limit holds the clock to.
pub(crate) const HELD_CLOCK: f64 = 0.85;

/// Deterministic noise in [-1, 1] for (seed, stream, step).
pub(crate) fn noise(seed: u64, stream: u64, step: u64) -> f64 {
    // splitmix64 over the three inputs
    let mut z = seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ step.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    // Through i64: the same double for a value below 2^53, one instruction where u64's
    // conversion is several on the baseline x86-64 (a streamer asks this per value).
    ((z >> 11) as i64) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A time (seconds since the driver started), the phase it falls in and whether the power limit
/// holds the clock down then, worked out once for all the values made at that time (a report's,
/// a snapshot's, a Sysman read's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Moment {
    /// Seconds since the driver started.
    pub(crate) t: f64,
    /// The workload's phase then.
    pub(crate) phase: Phase,
    /// The power limit holds the clock at [`HELD_CLOCK`] (late in the compute phase).
    pub(crate) held: bool,
}

impl Moment {
    /// The moment `t` seconds after the driver started.
    pub(crate) fn at(t: f64) -> Moment {
        let p = in_cycle(t);
        let phase = phase_in_cycle(p);
        Moment { t, phase, held: phase == Phase::Compute && p >= HELD_FROM_S }
    }

    /// The moment `ns` nanoseconds after the driver started: [`Moment::at`] of the same time in
    /// seconds (the same `t`, phase and hold), worked out in integers where a streamer asks it
    /// for every report (a division by a constant is a multiplication; converting a u64 to a
    /// double is several instructions on the baseline x86-64, an i64 one).
    pub(crate) fn at_ns(ns: u64) -> Moment {
        let Ok(signed) = i64::try_from(ns) else { return Moment::at(ns as f64 / 1e9) };
        let p = ns % CYCLE_NS;
        let phase = if p < 2 * S_NS {
            Phase::Idle
        } else if p < 5 * S_NS {
            Phase::Compute
        } else {
            Phase::MemoryBound
        };
        Moment { t: signed as f64 / 1e9, phase, held: phase == Phase::Compute && p >= HELD_FROM_NS }
    }
}

/// A second, a cycle and the hold's start in nanoseconds ([`Moment::at_ns`]).
const S_NS: u64 = 1_000_000_000;
const CYCLE_NS: u64 = 8 * S_NS;
const HELD_FROM_NS: u64 = 3_500_000_000;

/// The clock (MHz) the GPU runs at at moment `at`, its top clock `top_mhz`, with noise `n`: in
/// whole MHz, as drivers report a clock, and never above what was requested (300 MHz idle, the
/// top clock computing, 80 % of it memory-bound), held to [`HELD_CLOCK`] late in the compute phase.
/// One definition for the metrics' frequency and Sysman's actual clock, so both say the same.
pub(crate) fn clock(at: Moment, top_mhz: f64, n: f64) -> f64 {
    let mhz = match at.phase {
        Phase::Idle => 300.0 + 5.0 * n.abs(),
        Phase::Compute if at.held => HELD_CLOCK * top_mhz - 10.0 * n.abs(),
        Phase::Compute => top_mhz - 15.0 * n.abs(),
        Phase::MemoryBound => 0.8 * top_mhz - 10.0 * n.abs(),
    };
    // To the nearest whole MHz (ties to even) by adding and taking away 1.5 × 2^52, exact for
    // these magnitudes: `f64::round` is a libm call per report on the baseline x86-64.
    const ROUND: f64 = 6_755_399_441_055_744.0;
    (mhz + ROUND) - ROUND
}

/// A temperature sensor of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sensor {
    /// The GPU's.
    Gpu,
    /// The device memory's.
    Memory,
}

/// What `sensor` reads (°C) while the device draws `power` W, with noise `n`: one definition for
/// the metrics and Sysman's sensors, so both say the same.
pub(crate) fn temperature(sensor: Sensor, power: f64, n: f64) -> f64 {
    match sensor {
        Sensor::Gpu => 40.0 + 0.2 * power + 0.5 * n,
        Sensor::Memory => 35.0 + 0.1 * power + 0.3 * n,
    }
}

/// The instantaneous level of a signal at moment `at`: a gauge's value, or a cumulative counter's
/// rate per second. Each quantity is worked out only for the signals that read it (a streamer asks
/// this for every metric of every report).
#[inline]
pub(crate) fn level(signal: Signal, kind: DeviceKind, clock_mhz: f64, at: Moment, n: f64, index: usize) -> f64 {
    let (t, phase) = (at.t, at.phase);
    let util = || {
        match phase {
            Phase::Idle => 3.0 + 2.0 * n,
            Phase::Compute => 95.0 + 3.0 * n,
            Phase::MemoryBound => 70.0 + 5.0 * n,
        }
        .clamp(0.0, 100.0)
    };
    let freq = || clock(at, clock_mhz, n);
    let power = || {
        let watts = match phase {
            Phase::Idle => 8.0 + n,
            Phase::Compute => 180.0 + 6.0 * n,
            Phase::MemoryBound => 120.0 + 5.0 * n,
        };
        watts * if kind == DeviceKind::Npu { 0.06 } else { 1.0 }
    };
    let read_bw = || {
        let bytes = match phase {
            Phase::Idle => 1.0e8,
            Phase::Compute => 5.0e9,
            Phase::MemoryBound => 4.0e10,
        };
        bytes * (1.0 + 0.05 * n)
    };
    match signal {
        Signal::UtilizationPercent => util(),
        Signal::FrequencyMhz => freq(),
        Signal::PowerWatts => power(),
        Signal::TemperatureC => temperature(Sensor::Gpu, power(), n),
        Signal::MemoryTemperatureC => temperature(Sensor::Memory, power(), n),
        // Multiplied, not divided by 100 (a streamer makes these for every report; a division
        // is several times a multiplication's latency): within an ulp of the quotient.
        Signal::GpuTime => util() * 1e7,
        Signal::BusyCycles => util() * freq() * 1e4,
        Signal::BytesRead => read_bw(),
        Signal::BytesWritten => 0.4 * read_bw(),
        Signal::Inferences => match phase {
            Phase::Idle => 0.0,
            Phase::Compute => 2000.0 * (1.0 + 0.05 * n),
            Phase::MemoryBound => 800.0 * (1.0 + 0.05 * n),
        },
        // Streamer reports carry the device clock itself; an exported buffer gets the driver's
        // time in ns (a gauge that only grows).
        Signal::Timestamp => t * 1e9,
        // Kernel events go into a tracer group's ring (`crate::ring`), never into counters.
        Signal::KernelStart | Signal::KernelEnd | Signal::KernelBytes | Signal::KernelMarker => 0.0,
        Signal::ContextId => match phase {
            Phase::Idle => 0.0,
            Phase::Compute => 0x21 as f64,
            Phase::MemoryBound => 0x22 as f64,
        },
        Signal::Throttled => f64::from(u8::from(at.held)),
        Signal::Synthetic => {
            let period = 1.0 + (index % 17) as f64 * 0.37;
            50.0 + 40.0 * (std::f64::consts::TAU * t / period).sin() + 2.0 * n
        }
        Signal::Modelled(m) => m.level(kind, clock_mhz, at, n, index),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_cycle_through_idle_compute_memory() {
        assert_eq!(phase_at(0.5), Phase::Idle);
        assert_eq!(phase_at(3.0), Phase::Compute);
        assert_eq!(phase_at(6.0), Phase::MemoryBound);
        assert_eq!(phase_at(8.5), Phase::Idle);
    }

    #[test]
    fn the_clock_is_within_the_devices_range_and_as_sysman_gives_it() {
        // zesFrequencyGetProperties says 300 MHz ..= the core clock; Sysman's actual clock idles
        // at 300 + 5 |n| MHz.
        for k in 0..1600 {
            let t = k as f64 * 0.01;
            for n in [-1.0, -0.4, 0.0, 0.7, 1.0] {
                let f = level(Signal::FrequencyMhz, DeviceKind::Gpu, 2000.0, Moment::at(t), n, 0);
                assert!((300.0..=2000.0).contains(&f), "{f} MHz at {t} s");
                assert_eq!(f, f.round(), "whole MHz at {t} s");
                if phase_at(t) == Phase::Idle {
                    assert_eq!(f, (300.0 + 5.0 * f64::abs(n)).round(), "at {t} s");
                }
            }
        }
    }

    #[test]
    fn the_clock_is_held_late_in_the_compute_phase_and_only_then() {
        let clock = |t: f64| level(Signal::FrequencyMhz, DeviceKind::Gpu, 2000.0, Moment::at(t), 1.0, 0);
        for t in [2.0, 3.0, 3.49, 10.0, 11.49] {
            assert!(!Moment::at(t).held && clock(t) >= 1985.0, "free at {t} s: {}", clock(t));
        }
        for t in [3.5, 4.0, 4.99, 11.5, 12.99] {
            assert!(
                Moment::at(t).held && clock(t) == (HELD_CLOCK * 2000.0 - 10.0).round(),
                "held at {t} s: {}",
                clock(t)
            );
        }
        for t in [0.5, 5.0, 7.9] {
            assert!(!Moment::at(t).held, "{t} s is not in the compute phase");
        }
    }

    #[test]
    fn phases_by_truncation_agree_with_the_euclidean_remainder() {
        let by_remainder = |t: f64| phase_in_cycle(t.rem_euclid(CYCLE_S));
        // Edges of every phase over many cycles, a report period apart, and far-off times.
        for k in 0..20_000u64 {
            for edge in [0.0, 2.0, 5.0] {
                for d in [-1e-5, -1e-9, 0.0, 1e-9, 1e-5] {
                    let t = k as f64 * CYCLE_S + edge + d;
                    assert_eq!(phase_at(t), by_remainder(t), "t = {t}");
                }
            }
        }
        for t in [-3.0, -0.01, 1e15, 3e17, f64::INFINITY] {
            assert_eq!(phase_at(t), by_remainder(t), "t = {t}");
        }
    }

    #[test]
    fn moments_in_nanoseconds_agree_with_moments_in_seconds() {
        let same = |ns: u64| {
            let (a, b) = (Moment::at_ns(ns), Moment::at(ns as f64 / 1e9));
            assert_eq!((a.t.to_bits(), a.phase, a.held), (b.t.to_bits(), b.phase, b.held), "ns = {ns}");
        };
        // Each edge (phase changes, the hold) over many cycles, and a pseudo-random spread.
        for k in 0..5_000u64 {
            for edge in [0, 2 * S_NS, HELD_FROM_NS, 5 * S_NS] {
                for d in [-1_000i64, -1, 0, 1, 1_000] {
                    if let Some(ns) = (k * CYCLE_NS + edge).checked_add_signed(d) {
                        same(ns);
                    }
                }
            }
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            same(x % (1 << 50));
        }
        same(u64::MAX);
        assert_eq!(Moment::at_ns(u64::MAX).t, u64::MAX as f64 / 1e9, "past i64: the seconds' path");
    }

    #[test]
    fn noise_is_deterministic_bounded_and_seed_dependent() {
        let a: Vec<f64> = (0..1000).map(|i| noise(7, 3, i)).collect();
        let b: Vec<f64> = (0..1000).map(|i| noise(7, 3, i)).collect();
        let c: Vec<f64> = (0..1000).map(|i| noise(8, 3, i)).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|x| (-1.0..=1.0).contains(x)));
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        assert!(mean.abs() < 0.1, "noise should be centred, mean {mean}");
    }

    #[test]
    fn compute_phase_is_busier_and_hotter_than_idle() {
        let idle = level(Signal::UtilizationPercent, DeviceKind::Gpu, 2000.0, Moment::at(1.0), 0.0, 0);
        let busy = level(Signal::UtilizationPercent, DeviceKind::Gpu, 2000.0, Moment::at(3.0), 0.0, 0);
        assert!(busy > 10.0 * idle);
        let p_idle = level(Signal::PowerWatts, DeviceKind::Gpu, 2000.0, Moment::at(1.0), 0.0, 0);
        let p_busy = level(Signal::PowerWatts, DeviceKind::Gpu, 2000.0, Moment::at(3.0), 0.0, 0);
        assert!(p_busy > p_idle);
        let bw_mem = level(Signal::BytesRead, DeviceKind::Gpu, 2000.0, Moment::at(6.0), 0.0, 0);
        let bw_cmp = level(Signal::BytesRead, DeviceKind::Gpu, 2000.0, Moment::at(3.0), 0.0, 0);
        assert!(bw_mem > bw_cmp);
    }
}
