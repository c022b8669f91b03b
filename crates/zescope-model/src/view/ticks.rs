//! Where an axis puts its labelled ticks: round steps (1, 2, 2.5, 5 × 10ⁿ) no closer together
//! than a label needs, so an axis of ordinary height shows at least three labels instead of the
//! one or two that powers of ten alone leave.

/// The step multipliers within a decade, each at most twice the one before.
const MANTISSAS: [f64; 4] = [1.0, 2.0, 2.5, 5.0];

/// The smallest round step whose ticks are at least `min_px` apart on an axis of
/// `px_per_unit` pixels per unit; `None` for a degenerate scale.
pub fn step(px_per_unit: f64, min_px: f64) -> Option<f64> {
    if !(px_per_unit.is_finite() && px_per_unit > 0.0 && min_px.is_finite() && min_px > 0.0) {
        return None;
    }
    let least = min_px / px_per_unit;
    let decade = 10f64.powf(least.log10().floor());
    MANTISSAS.iter().chain(&[10.0]).map(|m| m * decade).find(|s| *s >= least * (1.0 - 1e-9))
}

/// The multiples of `step` within `lo..=hi`, lowest first (at most 1000 of them).
pub fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && step.is_finite() && step > 0.0 && hi >= lo) {
        return Vec::new();
    }
    let first = (lo / step).ceil();
    let last = (hi / step).floor();
    if last - first > 1000.0 {
        return Vec::new();
    }
    let n = (last - first).max(-1.0) as i64 + 1;
    (0..n).map(|i| (first + i as f64) * step).map(|v| if v == 0.0 { 0.0 } else { v }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round_and_no_closer_than_asked() {
        assert_eq!(step(10.0, 22.0), Some(2.5), "2.2 units → 2.5");
        assert_eq!(step(100.0, 22.0), Some(0.25));
        assert_eq!(step(1.0, 22.0), Some(25.0));
        assert_eq!(step(1.0, 20.0), Some(20.0));
        assert_eq!(step(1.0, 60.0), Some(100.0), "5.0 × 10 is too small, the next decade");
        assert_eq!(step(0.0, 22.0), None);
        assert_eq!(step(f64::NAN, 22.0), None);
    }

    #[test]
    fn an_ordinary_pane_gets_at_least_three_labels() {
        // Any range over a 140 px plot, labels at least 22 px apart.
        for (lo, hi) in [(0.0, 1.0), (300.0, 1600.0), (-0.05, 1.05), (97.3, 98.1), (0.0, 3.3e9), (-30.0, 20.0)] {
            let s = step(140.0 / (hi - lo), 22.0).unwrap();
            let t = ticks(lo, hi, s);
            assert!(t.len() >= 3, "{lo}..{hi}: {t:?} (step {s})");
            assert!(t.windows(2).all(|w| (w[1] - w[0]) * 140.0 / (hi - lo) >= 22.0 - 1e-6));
            assert!(t.iter().all(|v| (lo..=hi).contains(v)));
        }
        assert_eq!(ticks(0.0, 1.0, 0.25), [0.0, 0.25, 0.5, 0.75, 1.0]);
        assert!(ticks(0.0, 1e9, 1e-3).is_empty(), "absurdly many ticks are none");
        assert!(ticks(1.0, 0.0, 0.1).is_empty());
    }
}
