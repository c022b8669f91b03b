//! Aggregates: the one merge rule shared by the pyramid, envelopes and stats.
//!
//! An [`Agg`] summarises a run of consecutive samples of one series: min, max
//! and sum over the *finite* values, how many values were finite (`n`) and how
//! many were NaN/±inf (`nf`), and the last value. Non-finite values are counted,
//! never folded into min/max/sum, so one `inf` cannot hide a whole bucket and a
//! NaN cannot silently vanish: every envelope column and every stats result
//! reports its non-finite count.
//!
//! A third kind of sample has no value at all: the rate of a cumulative counter
//! at the first sample of a stream, after a gap, or after a counter reset. It is
//! stored as a NaN with a private payload ([`MISSING_BITS`]) and counted in
//! neither `n` nor `nf` (the sample still counts in the stream's sample count).
//! Incoming NaNs are canonicalised at ingest ([`canon`]) so data can never
//! collide with that payload.
//!
//! A rate (of a cumulative counter) is the mean over the interval since the sample before, so
//! the mean of rates over a span is their time-weighted mean, Σ rate·interval / Σ interval (the
//! counter's increase over the time it took), not the mean of the values: a read that came late
//! covers more time than one on time. An [`Agg`] of rates keeps both sums ([`Agg::area`],
//! [`Agg::dur`], from [`Agg::push_rate`]); of other values they stay 0, and the mean is the
//! mean of the values ([`Agg::mean`]).
//!
//! 56 bytes per node per series: min, max, sum, last, area, dur (f64) and two u32 counts.
//! u32 is enough because the coarsest pyramid node spans 2^28 samples.

/// Bit pattern of the "no value" marker (a quiet NaN with a payload).
pub(crate) const MISSING_BITS: u64 = 0x7ff8_0000_0000_6d73;

/// The "no value" marker.
#[inline]
pub(crate) fn missing() -> f64 {
    f64::from_bits(MISSING_BITS)
}

/// Is `v` the "no value" marker (not just any NaN)?
#[inline]
pub(crate) fn is_missing(v: f64) -> bool {
    v.to_bits() == MISSING_BITS
}

/// Canonical NaN for every incoming NaN, so data never looks like [`missing`].
#[inline]
pub(crate) fn canon(v: f64) -> f64 {
    if v.is_nan() { f64::NAN } else { v }
}

/// `None` for the "no value" marker, the value otherwise (NaN/inf included).
#[inline]
pub(crate) fn to_option(v: f64) -> Option<f64> {
    if is_missing(v) { None } else { Some(v) }
}

/// Summary of a run of samples of one series (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Agg {
    pub min: f64,
    pub max: f64,
    pub sum: f64,
    /// Value of the last sample (may be NaN, inf or [`missing`]).
    pub last: f64,
    /// Finite values.
    pub n: u32,
    /// Non-finite values (NaN, ±inf), excluding [`missing`].
    pub nf: u32,
    /// Of rates: Σ value × interval (s) over the finite values with an interval; 0 otherwise.
    pub area: f64,
    /// Of rates: Σ interval (s) over the same values; 0 otherwise.
    pub dur: f64,
}

impl Default for Agg {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Agg {
    /// Summary of no samples; merging it changes nothing but `last`.
    pub(crate) const EMPTY: Agg = Agg {
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        sum: 0.0,
        last: f64::from_bits(MISSING_BITS),
        n: 0,
        nf: 0,
        area: 0.0,
        dur: 0.0,
    };

    /// Summary of one sample.
    #[inline]
    pub(crate) fn of(v: f64) -> Agg {
        let mut a = Agg::EMPTY;
        a.push(v);
        a
    }

    /// Add one sample after the ones already summarised.
    #[inline]
    pub(crate) fn push(&mut self, v: f64) {
        if v.is_finite() {
            if v < self.min {
                self.min = v;
            }
            if v > self.max {
                self.max = v;
            }
            self.sum += v;
            self.n += 1;
        } else if !is_missing(v) {
            self.nf += 1;
        }
        self.last = v;
    }

    /// Add one rate, the mean over the `secs` seconds since the sample before (0 or less: not
    /// known, as for an imported first rate; the value then counts in the mean of values
    /// only).
    #[inline]
    pub(crate) fn push_rate(&mut self, v: f64, secs: f64) {
        self.push(v);
        if v.is_finite() && secs > 0.0 {
            self.area += v * secs;
            self.dur += secs;
        }
    }

    /// [`Self::push_rate`] each of `vs` with its interval of `secs`, in order.
    #[inline]
    pub(crate) fn push_rates(&mut self, vs: &[f64], secs: &[f64]) {
        self.push_all(vs);
        let (mut area, mut dur) = (self.area, self.dur);
        for (&v, &dt) in vs.iter().zip(secs) {
            if v.is_finite() && dt > 0.0 {
                area += v * dt;
                dur += dt;
            }
        }
        (self.area, self.dur) = (area, dur);
    }

    /// The mean: of rates with intervals, time-weighted (`area / dur`); else of the finite
    /// values; NaN for none.
    #[inline]
    pub(crate) fn mean(&self) -> f64 {
        if self.dur > 0.0 {
            self.area / self.dur
        } else if self.n > 0 {
            self.sum / self.n as f64
        } else {
            f64::NAN
        }
    }

    /// What [`Self::mean`] averages over, to merge two means: seconds of intervals, or the
    /// count of values.
    #[inline]
    pub(crate) fn weight(&self) -> f64 {
        if self.dur > 0.0 { self.dur } else { self.n as f64 }
    }

    /// [`Self::push`] each of `vs` in order, with the running summary kept in registers.
    #[inline]
    pub(crate) fn push_all(&mut self, vs: &[f64]) {
        self.push_each(vs.iter().copied());
    }

    /// Writes [`canon`] of each of `vs` into `out` (as many as both hold) and [`Self::push`]es
    /// it, in one pass (a store's ingest copies and summarises a column at once).
    #[inline]
    pub(crate) fn copy_and_push(&mut self, out: &mut [f64], vs: impl Iterator<Item = f64>) {
        self.push_each(out.iter_mut().zip(vs).map(|(slot, v)| {
            *slot = canon(v);
            *slot
        }));
    }

    /// The loop of [`Self::push_all`] and [`Self::copy_and_push`] (no values: unchanged).
    #[inline(always)]
    fn push_each(&mut self, vs: impl Iterator<Item = f64>) {
        let (mut min, mut max, mut sum, mut n, mut nf, mut last) =
            (self.min, self.max, self.sum, self.n, self.nf, self.last);
        for v in vs {
            if v.is_finite() {
                min = if v < min { v } else { min };
                max = if v > max { v } else { max };
                sum += v;
                n += 1;
            } else {
                nf += u32::from(!is_missing(v));
            }
            last = v;
        }
        *self = Agg { min, max, sum, last, n, nf, ..*self };
    }

    /// Add a run of samples that follows the ones already summarised.
    /// `o` must summarise at least one sample (its `last` becomes ours).
    #[inline]
    pub(crate) fn merge(&mut self, o: &Agg) {
        if o.min < self.min {
            self.min = o.min;
        }
        if o.max > self.max {
            self.max = o.max;
        }
        self.sum += o.sum;
        self.n += o.n;
        self.nf += o.nf;
        self.area += o.area;
        self.dur += o.dur;
        self.last = o.last;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_values_are_counted_not_merged() {
        let mut a = Agg::EMPTY;
        for v in [1.0, f64::NAN, 5.0, f64::INFINITY, -2.0, f64::NEG_INFINITY] {
            a.push(canon(v));
        }
        assert_eq!((a.min, a.max, a.sum, a.n, a.nf), (-2.0, 5.0, 4.0, 3, 3));
        assert_eq!(a.last, f64::NEG_INFINITY);
    }

    #[test]
    fn missing_is_neither_finite_nor_non_finite() {
        let mut a = Agg::of(2.0);
        a.push(missing());
        assert_eq!((a.n, a.nf), (1, 0));
        assert!(is_missing(a.last));
        assert_eq!(to_option(a.last), None);
        // A data NaN is canonicalised and therefore never mistaken for "missing".
        let weird_nan = f64::from_bits(MISSING_BITS);
        assert!(!is_missing(canon(weird_nan)));
    }

    #[test]
    fn push_all_equals_pushing_one_by_one() {
        let xs = [-0.0, 0.0, 3.0, f64::NAN, missing(), f64::INFINITY, -2.5, f64::NEG_INFINITY, 7.0, -0.0];
        for start in 0..xs.len() {
            for end in start..=xs.len() {
                let mut one = Agg::of(1.5);
                xs[start..end].iter().for_each(|&v| one.push(v));
                let mut all = Agg::of(1.5);
                all.push_all(&xs[start..end]);
                let bits = |a: &Agg| (a.min.to_bits(), a.max.to_bits(), a.sum.to_bits(), a.last.to_bits(), a.n, a.nf);
                assert_eq!(bits(&all), bits(&one), "{start}..{end}");
            }
        }
    }

    #[test]
    fn copy_and_push_writes_the_canonical_values_and_sums_them_as_push_all_does() {
        let odd_nan = f64::from_bits(f64::NAN.to_bits() ^ 0x5);
        let xs = [2.0, odd_nan, -0.0, missing(), f64::INFINITY, 7.25, -3.0, f64::NEG_INFINITY, 1e300];
        let bits = |a: &Agg| (a.min.to_bits(), a.max.to_bits(), a.sum.to_bits(), a.last.to_bits(), a.n, a.nf);
        for end in 0..=xs.len() {
            let mut out = [9.0; 12];
            let mut fused = Agg::of(1.5);
            fused.copy_and_push(&mut out[..end], xs.iter().copied());
            let canon: Vec<f64> = xs[..end].iter().map(|&v| canon(v)).collect();
            let mut two = Agg::of(1.5);
            two.push_all(&canon);
            assert_eq!(bits(&fused), bits(&two), "..{end}");
            let written: Vec<u64> = out[..end].iter().map(|v| v.to_bits()).collect();
            assert_eq!(written, canon.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "..{end}");
            assert!(out[end..].iter().all(|&v| v == 9.0), "nothing written past the slots given");
        }
    }

    #[test]
    fn merge_equals_pushing_in_order() {
        let xs = [3.0, -1.0, f64::NAN, 7.5, 0.25];
        let mut whole = Agg::EMPTY;
        xs.iter().for_each(|&v| whole.push(v));
        let mut left = Agg::EMPTY;
        xs[..2].iter().for_each(|&v| left.push(v));
        let mut right = Agg::EMPTY;
        xs[2..].iter().for_each(|&v| right.push(v));
        left.merge(&right);
        assert_eq!((left.min, left.max, left.n, left.nf), (whole.min, whole.max, whole.n, whole.nf));
        assert_eq!(left.last, whole.last);
        assert!((left.sum - whole.sum).abs() < 1e-12);
    }
}
