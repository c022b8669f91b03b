//! A column's words and what picks its form, each found in as few passes as it can: the integer
//! words of a column of integers (and, for one with a common factor, their quotients), the
//! [`Ranges`] of any words, and what else a form needs found in the same pass (the line through
//! a block's timestamps, the XOR form's length of a column of floats).

use super::{MAX_INT, xor};
use crate::bits::width_of;

/// What picks a column's form, from one pass over its words (see [`word_ranges`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Ranges {
    /// Smallest and largest word, sign bit flipped for integer words.
    pub(super) lo: u64,
    pub(super) hi: u64,
    /// Smallest and largest difference between consecutive words (`i64::MAX`, `i64::MIN` for one word).
    pub(super) dlo: i64,
    pub(super) dhi: i64,
    /// Consecutive words that differ.
    pub(super) changes: usize,
}

/// The [`Ranges`] of `words` (at least one); `flip` is the sign bit for integer words, 0 otherwise.
/// Integer words are ordered as signed: flipping the sign bit makes that the unsigned order, and
/// differences of flipped words equal differences of the words (mod 2^64).
pub(super) fn word_ranges(words: &[u64], flip: u64) -> Ranges {
    ranges_and(words, flip, |_, _| {})
}

/// [`word_ranges`], calling `also(previous word, word)` for every word after the first in the
/// same pass: what else a column's form needs found without a pass of its own.
#[inline(always)]
fn ranges_and(words: &[u64], flip: u64, mut also: impl FnMut(u64, u64)) -> Ranges {
    let first = words.first().copied().unwrap_or(0);
    let (mut lo, mut hi) = (first ^ flip, first ^ flip);
    let (mut dlo, mut dhi) = (i64::MAX, i64::MIN);
    let mut prev = first;
    let mut changes = 0usize;
    for &w in words.iter().skip(1) {
        let d = w.wrapping_sub(prev) as i64;
        dlo = dlo.min(d);
        dhi = dhi.max(d);
        lo = lo.min(w ^ flip);
        hi = hi.max(w ^ flip);
        changes += usize::from(d != 0);
        also(prev, w);
        prev = w;
    }
    Ranges { lo, hi, dlo, dhi, changes }
}

/// [`word_ranges`] of integer words (at least 3) and, in the same pass, the [`line_fit`] around
/// the line through the first and last: a block's timestamps.
pub(super) fn time_ranges(words: &[u64]) -> (Ranges, (i64, i64, u32)) {
    let first = words[0];
    let slope = (words[words.len() - 1].wrapping_sub(first) as i64) / (words.len() as i64 - 1);
    // The first word lies on the line: residual 0.
    let (mut rlo, mut rhi, mut base) = (0i64, 0i64, first);
    let ranges = ranges_and(words, 1 << 63, |_, w| {
        base = base.wrapping_add(slope as u64);
        let r = w.wrapping_sub(base) as i64;
        rlo = rlo.min(r);
        rhi = rhi.max(r);
    });
    (ranges, (slope, rlo, width_of(rhi.wrapping_sub(rlo) as u64)))
}

/// [`word_ranges`] of `f64` bits and, in the same pass, the bytes of their XOR form (mode byte
/// included): for a column of floats both are needed.
pub(super) fn float_ranges(words: &[u64]) -> (Ranges, usize) {
    let first = words.first().copied().unwrap_or(0);
    let mut len = 1 + xor::value_len(first);
    let ranges = ranges_and(words, 0, |prev, w| len += xor::value_len(w ^ prev));
    (ranges, len)
}

/// [`word_ranges`] of the integer words of `vals` (values [`integer_words`] accepts), computed on
/// the values themselves: the bounds in one pass and the differences' in another, each over eight
/// lanes of plain `f64` compares (which vectorise where 64-bit integer ones do not; one pass doing
/// both spilled its lanes and took half as long again), and the changes counted as values that
/// differ from the one before. `None` when they span more than 2^53 (a difference might then
/// round).
pub(super) fn int_ranges(vals: &[f64]) -> Option<Ranges> {
    const LANES: usize = 8;
    let &first = vals.first()?;
    let (mut lo, mut hi) = ([first; LANES], [first; LANES]);
    let groups = vals.chunks_exact(LANES);
    let rest = groups.remainder();
    for g in groups {
        for k in 0..LANES {
            lo[k] = if g[k] < lo[k] { g[k] } else { lo[k] };
            hi[k] = if g[k] > hi[k] { g[k] } else { hi[k] };
        }
    }
    for &v in rest {
        lo[0] = if v < lo[0] { v } else { lo[0] };
        hi[0] = if v > hi[0] { v } else { hi[0] };
    }
    let (mut dlo, mut dhi) = ([f64::INFINITY; LANES], [f64::NEG_INFINITY; LANES]);
    let (cur, prev) = (&vals[1..], &vals[..vals.len() - 1]);
    let (cur_groups, prev_groups) = (cur.chunks_exact(LANES), prev.chunks_exact(LANES));
    let (cur_rest, prev_rest) = (cur_groups.remainder(), prev_groups.remainder());
    for (c, p) in cur_groups.zip(prev_groups) {
        for k in 0..LANES {
            let d = c[k] - p[k];
            dlo[k] = if d < dlo[k] { d } else { dlo[k] };
            dhi[k] = if d > dhi[k] { d } else { dhi[k] };
        }
    }
    for (&c, &p) in cur_rest.iter().zip(prev_rest) {
        let d = c - p;
        dlo[0] = if d < dlo[0] { d } else { dlo[0] };
        dhi[0] = if d > dhi[0] { d } else { dhi[0] };
    }
    // Integers below 2^53 differ by at least 1 where they differ: `c != p` is `c - p != 0`.
    let changes = cur.iter().zip(prev).filter(|(c, p)| c != p).count();
    let fold = |a: [f64; LANES], f: fn(f64, f64) -> f64| a.into_iter().reduce(f).unwrap_or(0.0);
    let (lo, hi) = (fold(lo, f64::min) as i64, fold(hi, f64::max) as i64);
    if hi.checked_sub(lo).is_none_or(|r| r > MAX_INT as i64) {
        return None;
    }
    let flip = 1u64 << 63;
    Some(Ranges {
        lo: lo as u64 ^ flip,
        hi: hi as u64 ^ flip,
        // An empty lane's infinities saturate to the one-word sentinels.
        dlo: fold(dlo, f64::min) as i64,
        dhi: fold(dhi, f64::max) as i64,
        changes,
    })
}

/// Whether `v` is an integer packed exactly as an `i64` (|v| <= 2^53, not `-0.0`), and that
/// `i64`. Two conversions instead of `fract` (a libm call per value where SSE4.1 is not assumed).
#[inline(always)]
pub(super) fn as_integer(v: f64) -> (bool, i64) {
    let i = v as i64;
    (i as f64 == v && i.unsigned_abs() <= MAX_INT as u64 && v.to_bits() != (-0.0f64).to_bits(), i)
}

/// `1.5 * 2^52`: for `|v| < 2^51`, `v + ROUND` rounds `v` to an integer held in the low mantissa
/// bits (its bits minus `ROUND`'s are that integer as an `i64`).
pub(super) const ROUND: f64 = 6_755_399_441_055_744.0;
/// Below this magnitude (2^51) [`ROUND`] holds every integer exactly.
pub(super) const ROUND_LIMIT: f64 = 2_251_799_813_685_248.0;

/// Whether `x` is an integer below 2^51 in magnitude, not `-0.0`, and its integer word (its bits
/// above [`ROUND`]'s; garbage when it is not one): one branch-free step of a group of values.
#[inline(always)]
fn rounded(x: f64) -> (bool, u64) {
    let r = x + ROUND;
    let ok = (x.abs() < ROUND_LIMIT) & (r - ROUND == x) & (x.to_bits() != (-0.0f64).to_bits());
    (ok, r.to_bits().wrapping_sub(ROUND.to_bits()))
}

/// The integer words of `vals` into `words` when every value is one [`as_integer`] accepts;
/// false otherwise (`words` then holds garbage). Branch-free over groups of 8 values with
/// [`ROUND`] (no conversion per value), falling back to [`as_integer`] for a column it cannot
/// settle (a value at or beyond 2^51 in magnitude, or one that is not an integer).
pub(super) fn integer_words(vals: &[f64], words: &mut [u64]) -> bool {
    const GROUP: usize = 8;
    let mut fast = true;
    let mut w = words.chunks_exact_mut(GROUP);
    let mut v = vals.chunks_exact(GROUP);
    for (w, v) in (&mut w).zip(&mut v) {
        let mut ok = true;
        for (slot, &x) in w.iter_mut().zip(v) {
            let (integer, word) = rounded(x);
            ok &= integer;
            *slot = word;
        }
        if !ok {
            fast = false;
            break;
        }
    }
    if fast {
        for (slot, &x) in w.into_remainder().iter_mut().zip(v.remainder()) {
            let (ok, i) = as_integer(x);
            if !ok {
                return false;
            }
            *slot = i as u64;
        }
        return true;
    }
    for (slot, &x) in words.iter_mut().zip(vals) {
        let (ok, i) = as_integer(x);
        if !ok {
            return false;
        }
        *slot = i as u64;
    }
    true
}

/// [`integer_words`], and for a column of integers that may all be multiples of `factor` (at
/// least 2, from [`scaled::factor_hint`]) their quotients in the same pass: whether the values are
/// integers, and whether they are all multiples of `factor` below 2^51 in magnitude, the
/// quotients' integer words then in `quotients`. The quotient of `v` is `v` times the factor's
/// reciprocal rounded, kept when it multiplies back to `v` (as [`scaled::common_factor`]).
pub(super) fn integer_and_quotient_words(
    vals: &[f64],
    words: &mut [u64],
    factor: u64,
    quotients: &mut [u64],
) -> (bool, bool) {
    const GROUP: usize = 8;
    let (f, inv) = (factor as f64, 1.0 / factor as f64);
    let quotient = |x: f64| {
        let r = x * inv + ROUND;
        ((r - ROUND) * f == x, r.to_bits().wrapping_sub(ROUND.to_bits()))
    };
    let mut multiples = true;
    let mut groups = words.chunks_exact_mut(GROUP).zip(quotients.chunks_exact_mut(GROUP)).zip(vals.chunks_exact(GROUP));
    for ((w, q), v) in &mut groups {
        let mut ok = true;
        for ((slot, q_slot), &x) in w.iter_mut().zip(q.iter_mut()).zip(v) {
            let (integer, word) = rounded(x);
            ok &= integer;
            *slot = word;
            let (m, qw) = quotient(x);
            multiples &= m;
            *q_slot = qw;
        }
        if !ok {
            // A value at or beyond 2^51 (never scaled) or not an integer: the plain path decides.
            return (integer_words(vals, words), false);
        }
    }
    let done = vals.len() / GROUP * GROUP;
    for ((slot, q_slot), &x) in words[done..].iter_mut().zip(&mut quotients[done..]).zip(&vals[done..]) {
        let (ok, i) = as_integer(x);
        if !ok || x.abs() >= ROUND_LIMIT {
            return (integer_words(vals, words), false);
        }
        *slot = i as u64;
        let (m, qw) = quotient(x);
        multiples &= m;
        *q_slot = qw;
    }
    (true, multiples)
}

/// The line through the first and last of `words` (at least 2): its slope, and the smallest
/// residual and the width of the residuals' range around it.
#[cfg(test)]
pub(super) fn line_fit(words: &[u64]) -> (i64, i64, u32) {
    let first = words[0];
    let slope = (words[words.len() - 1].wrapping_sub(first) as i64) / (words.len() as i64 - 1);
    let (mut rlo, mut rhi, mut base) = (i64::MAX, i64::MIN, first);
    for &w in words {
        let r = w.wrapping_sub(base) as i64;
        rlo = rlo.min(r);
        rhi = rhi.max(r);
        base = base.wrapping_add(slope as u64);
    }
    (slope, rlo, width_of(rhi.wrapping_sub(rlo) as u64))
}
