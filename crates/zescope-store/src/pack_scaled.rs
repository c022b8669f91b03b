//! The scaled column form ([`super`]'s docs): a column of integers over a power of ten, or of
//! multiples of a common factor, packed as those integers. What tells a column that may take it
//! from one that may not, the integers and their factor, and how a quotient reads back.

use super::{
    BLOCK, Found, INT, MAX_DECIMALS, MAX_INT, POW10, ROUND, ROUND_LIMIT, Ranges, SCALED, int_ranges, plan, word_ranges,
    write,
};
use crate::bits::{checked_varint, put_varint, varint_len};

/// The header of a scaled column `b` (its mode byte first): the decimal exponent, the factor
/// and where its inner column starts; `None` when `b` is not a well-formed scaled column with an
/// integer column inside (never a scaled one: one level only).
pub(super) fn scaled_header(b: &[u8]) -> Option<(usize, i64, usize)> {
    let e = *b.get(1)? as usize;
    let mut pos = 2;
    let factor = checked_varint(b, &mut pos)?;
    let inner = *b.get(pos)?;
    let ok = e <= MAX_DECIMALS as usize
        && (1..=MAX_INT as u64).contains(&factor)
        && inner & INT != 0
        && inner & !INT != SCALED;
    ok.then_some((e, factor as i64, pos))
}

/// The value a scaled column's quotient `q` stands for: `q × factor` over `10^e`. The encoder
/// keeps a scaled column only where this gives every value back to the bit.
#[inline(always)]
pub(super) fn scaled_value(q: u64, factor: i64, e: usize) -> f64 {
    (q as i64).wrapping_mul(factor) as f64 / POW10[e]
}

/// Writes `vals` (at most [`BLOCK`], not all integers: those take [`write_quotients`]) in the
/// scaled form, as decimals, when that is smaller than `plain` bytes; whether it did. What most
/// columns are not (noise) is told from their first value, before any pass over the column.
pub(super) fn write_scaled(vals: &[f64], plain: usize, out: &mut Vec<u8>) -> bool {
    let n = vals.len();
    let Some(&first) = vals.first() else { return false };
    // A column at a bit a value or less (a constant, a frequency in a few runs) has nothing to
    // save that would pay for the scaled header.
    if plain <= n / 8 + 4 {
        return false;
    }
    let Some(start) = (1..=MAX_DECIMALS as usize).find(|&e| decimal(first, e).is_some()) else { return false };
    // The integers (the values times 10^e) the scaled form packs, and their words.
    let (mut ints, mut q) = ([0.0f64; BLOCK], [0u64; BLOCK]);
    let Some(e) = (start..=MAX_DECIMALS as usize).find(|&e| decimals(vals, e, &mut ints[..n], &mut q[..n])) else {
        return false;
    };
    let factor = common_factor(&mut ints[..n], &mut q[..n]);
    let q = &q[..n];
    let q_ranges = int_ranges(&ints[..n]).unwrap_or_else(|| word_ranges(q, 1 << 63));
    write_if_smaller(q, e, factor, q_ranges, plain, out)
}

/// Writes a column of integers that are all multiples of `factor` (at least 2; their quotients'
/// integer words `q`, the integers' `ranges`) in the scaled form when that is smaller than `plain`
/// bytes; whether it did. The bytes [`write_scaled`] gives the same integers.
pub(super) fn write_quotients(q: &[u64], factor: i64, ranges: Ranges, plain: usize, out: &mut Vec<u8>) -> bool {
    if plain <= q.len() / 8 + 4 {
        return false;
    }
    write_if_smaller(q, 0, factor, divided(ranges, factor), plain, out)
}

/// Writes the scaled column of quotients `q` (with `q_ranges`), exponent `e` and `factor`, when
/// it is smaller than `plain` bytes; whether it did.
fn write_if_smaller(q: &[u64], e: usize, factor: i64, q_ranges: Ranges, plain: usize, out: &mut Vec<u8>) -> bool {
    let (q_form, q_len) = plan(q, true, q_ranges, Found::default());
    if 2 + varint_len(factor as u64) + q_len >= plain {
        return false;
    }
    out.push(SCALED);
    out.push(e as u8);
    put_varint(out, factor as u64);
    write(q, true, q_ranges, q_form, out);
    true
}

/// `v` times 10^e when that is an integer below 2^51 in magnitude that [`scaled_value`] over
/// 10^e gives back to the bit (never for NaN, the infinities or `-0.0`).
#[inline(always)]
fn decimal(v: f64, e: usize) -> Option<f64> {
    let p = POW10[e];
    let x = v * p;
    if x.abs().partial_cmp(&ROUND_LIMIT) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    let r = (x + ROUND) - ROUND;
    ((r / p).to_bits() == v.to_bits()).then_some(r)
}

/// Whether every value is an integer over 10^e ([`decimal`]), those integers written to `ints`
/// and their integer words to `words` (stopping at the first that is not). An integer from
/// [`decimal`] is below 2^51 in magnitude and never `-0.0`: its word is its bits above
/// [`ROUND`]'s, as in [`super::integer_words`].
fn decimals(vals: &[f64], e: usize, ints: &mut [f64], words: &mut [u64]) -> bool {
    for ((d, w), &v) in ints.iter_mut().zip(words).zip(vals) {
        match decimal(v, e) {
            Some(r) => {
                *d = r;
                *w = (r + ROUND).to_bits().wrapping_sub(ROUND.to_bits());
            }
            None => return false,
        }
    }
    true
}

/// The greatest common divisor of `a` and `b` (Stein's binary algorithm: shifts and
/// subtractions, no division, a few ns for two random 40-bit numbers where Euclid's takes ~25
/// 64-bit divisions).
pub(super) fn gcd(mut a: u64, mut b: u64) -> u64 {
    if a == 0 || b == 0 {
        return a | b;
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

/// The greatest common divisor of the first few nonzero values of `ints` (integers; 1 when one
/// is not below 2^51 in magnitude, 0 when all are zero): the factor a column may have.
pub(super) fn factor_hint(ints: &[f64]) -> u64 {
    let mut g = 0u64;
    for &v in ints.iter().filter(|v| **v != 0.0).take(8) {
        if v.abs() >= ROUND_LIMIT || v.is_nan() {
            return 1;
        }
        g = gcd(g, v.abs() as u64);
        if g == 1 {
            return 1;
        }
    }
    g
}

/// The [`Ranges`] of integer words divided by `factor`, which divides every one of them (and so
/// their differences): the same order and changes, the bounds divided.
pub(super) fn divided(r: Ranges, factor: i64) -> Ranges {
    let flip = 1u64 << 63;
    let div = |w: u64| (((w ^ flip) as i64) / factor) as u64 ^ flip;
    let diff = |d: i64| if d == i64::MAX || d == i64::MIN { d } else { d / factor };
    Ranges { lo: div(r.lo), hi: div(r.hi), dlo: diff(r.dlo), dhi: diff(r.dhi), changes: r.changes }
}

/// The largest factor common to the integers `ints` (below 2^53 in magnitude) that the first
/// of them suggest: the greatest common divisor of the first few nonzero ones, kept when every
/// value is a multiple of it, and `ints` divided by it then, the quotients' integer words in
/// `words`; 1 otherwise (`ints` and `words` unchanged). A quotient is the value times the
/// factor's reciprocal, rounded, and checked by multiplying back (exact for integers below
/// 2^51; anything larger keeps the factor 1).
pub(super) fn common_factor(ints: &mut [f64], words: &mut [u64]) -> i64 {
    let g = factor_hint(ints);
    if g < 2 {
        return 1;
    }
    let (f, inv) = (g as f64, 1.0 / g as f64);
    let mut multiples = true;
    for &v in ints.iter() {
        let q = (v * inv + ROUND) - ROUND;
        multiples &= (v.abs() < ROUND_LIMIT) & (q * f == v);
    }
    if !multiples {
        return 1;
    }
    for (v, w) in ints.iter_mut().zip(words) {
        *v = (*v * inv + ROUND) - ROUND;
        *w = *v as i64 as u64;
    }
    g as i64
}
