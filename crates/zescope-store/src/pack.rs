//! The encoding of one column of a sealed block: at most `BLOCK` values of
//! one series (or the block's shared timestamps), in the smallest of four
//! forms, chosen per column and block at ingest from the exact byte counts:
//!
//! - **frame of reference**: every word minus the column's minimum, bit-packed
//!   at the width of `max - min` (a constant column takes 0 bits; integer
//!   readings spread over 50 000 take 16; noisy floats within one binade 52);
//! - **delta**: the first word, then each difference to the previous word minus
//!   the smallest difference, bit-packed at the width of the differences' range
//!   (cumulative totals take the bits of their largest step, steady timestamps
//!   the bits of their jitter, a perfectly steady clock 0);
//! - **XOR** of consecutive `f64` bits with zero-byte elision, the session file's
//!   encoding ([`super::xor`]): best for floats that change in few bytes;
//! - **runs**: the number of runs of equal words, then per run its length and
//!   its word's difference to the previous run's: a frequency that steps once
//!   in a block takes a few bytes instead of a packed column;
//! - **line** (timestamps only): each word minus the line through the first and
//!   last words, bit-packed like frame of reference: a clock with jitter takes
//!   the bits of the jitter, one bit fewer than its steps' range in delta form;
//! - **scaled**: values that are integers over a power of ten (a busy share of
//!   3.98 %, 398 / 10^2) or multiples of a common factor (a streamer's rate, its
//!   count times 100 000 reports a second), as those integers divided by the
//!   factor, in one of the forms above: the bits of the integers, not of the
//!   floats (ALP's idea, decimal exponent and factor per column and block).
//!
//! The words: a column whose values are all integers below 2^53 in magnitude
//! (no `-0.0`) is packed as `i64`s, so a counter's step costs the bits of the
//! step, not of its float representation; any other column as its `f64` bits.
//! Timestamps are `i64`s. Every form round-trips bit-exactly. A scaled column is
//! chosen only where it is smaller than the plain one (both are written, the
//! larger dropped) and only where every value comes back to the bit:
//! `(q × factor) as f64 / 10^e` is the value for each packed integer `q`.
//!
//! Layout: one mode byte (form, and whether the words are integers), then
//! for frame of reference the width and the minimum (zigzag LEB128), for
//! delta the width, the first word and the smallest difference, then the
//! packed bits (LSB first); for runs the run count, then per run the length
//! minus one and the zigzagged difference (LEB128); for a line the width, the
//! first word, the slope and the smallest residual, then the packed residuals;
//! for scaled the mode byte, the decimal exponent `e` (0 ..= [`MAX_DECIMALS`])
//! as one byte and the factor (LEB128, at least 1), then a whole integer column
//! of the quotients in one of the other forms. Runs and lines are newer than the
//! other three forms, scaled newer than them: columns written before never use them. A frame-of-reference or line column reads any value
//! directly; the others decode from the start of the column.
//!
//! The store writes and reads these bytes itself; a mode it did not write
//! decodes as "missing" values (never a panic).

use super::agg::missing;
use super::bits::{pack, put_varint, sum_packed, unpack, unpack_one, unzigzag, varint, varint_len, width_of, zigzag};
use super::column::BLOCK;
use super::xor;

#[path = "pack_check.rs"]
mod check;
#[path = "pack_scaled.rs"]
mod scaled;
#[path = "pack_words.rs"]
mod words;
pub use check::check;
#[cfg(test)]
use scaled::{common_factor, divided, gcd};
use scaled::{scaled_header, scaled_value, write_quotients, write_scaled};
#[cfg(test)]
use words::line_fit;
use words::{
    ROUND, ROUND_LIMIT, Ranges, as_integer, float_ranges, int_ranges, integer_and_quotient_words, integer_words,
    time_ranges, word_ranges,
};

const FOR: u8 = 0;
const DELTA: u8 = 1;
const XOR: u8 = 2;
const RUNS: u8 = 3;
const LINE: u8 = 8;
/// A scaled column: exponent, factor, then an integer column of another form.
const SCALED: u8 = 16;
/// Most decimal places a scaled column is tried with (10^4: a share to 0.0001 %).
pub const MAX_DECIMALS: u8 = 4;
/// Powers of ten a scaled column divides by (every one exact in `f64`).
const POW10: [f64; MAX_DECIMALS as usize + 1] = [1.0, 10.0, 100.0, 1_000.0, 10_000.0];
/// Mode flag: the words are `i64`s of integer values.
const INT: u8 = 4;

/// Bytes a column of `BLOCK` values can take at most (delta at 64 bits with its header).
pub const WORST_COLUMN: usize = 1 + 1 + 10 + 10 + BLOCK * 8;

/// Largest magnitude packed as an integer (every integer up to it is exact in `f64`).
const MAX_INT: f64 = 9_007_199_254_740_992.0;

/// Calls `f(length, difference to the previous run's word)` for each run of equal words (the
/// first run's difference is to 0).
fn for_runs(words: &[u64], mut f: impl FnMut(usize, i64)) {
    let (mut prev, mut start) = (0u64, 0usize);
    for i in 1..=words.len() {
        if i == words.len() || words[i] != words[start] {
            f(i - start, words[start].wrapping_sub(prev) as i64);
            prev = words[start];
            start = i;
        }
    }
}

/// Bytes of the runs form of `words` (mode byte included).
fn runs_encoded_len(words: &[u64]) -> usize {
    let (mut len, mut runs) = (1usize, 0u64);
    for_runs(words, |n, d| {
        len += varint_len(n as u64 - 1) + varint_len(zigzag(d));
        runs += 1;
    });
    len + varint_len(runs)
}

/// Appends the encoding of `words` (integer words when `int`), in its smallest form; `line`
/// also tries the line form (for timestamps, which follow one).
#[cfg(test)]
fn encode_words(words: &[u64], int: bool, line: bool, out: &mut Vec<u8>) {
    let flip = if int { 1u64 << 63 } else { 0 };
    let ranges = word_ranges(words, flip);
    let found = Found { line: (line && words.len() > 2).then(|| line_fit(words)), xor_len: None };
    let (form, _) = plan(words, int, ranges, found);
    write(words, int, ranges, form, out);
}

/// What [`plan`] is given, found in the pass that found the words' [`Ranges`], instead of a pass
/// of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Found {
    /// The line form's fit ([`line_fit`]); `None`: the line form is not tried.
    line: Option<(i64, i64, u32)>,
    /// Bytes of the XOR form, mode byte included; `None`: counted when it may win.
    xor_len: Option<usize>,
}

/// The form a column is written in, with what it needs beyond the words and their [`Ranges`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// An empty column.
    Empty,
    /// Frame of reference.
    For,
    /// Delta.
    Delta,
    /// Runs of equal words.
    Runs,
    /// XOR of consecutive words.
    Xor,
    /// The line through the first and last words: its slope, smallest residual and width.
    Line(i64, i64, u32),
}

/// The smallest form for `words` (integer words when `int`; the line form tried when `found` has
/// its fit) and its exact size in bytes, mode byte included. Ties go to frame of reference (it
/// reads one value without decoding the others).
fn plan(words: &[u64], int: bool, ranges: Ranges, found: Found) -> (Form, usize) {
    let Some(&first) = words.first() else { return (Form::Empty, 3) };
    let flip = if int { 1u64 << 63 } else { 0 };
    let Ranges { lo, hi, dlo, dhi, changes } = ranges;
    let range = hi - lo;
    let lo = lo ^ flip;
    let n = words.len();
    let for_width = width_of(range);
    let for_len = 2 + varint_len(zigzag(lo as i64)) + (n * for_width as usize).div_ceil(8);
    let delta_width = if n > 1 { width_of(dhi.wrapping_sub(dlo) as u64) } else { 0 };
    let dlo = if n > 1 { dlo } else { 0 };
    let delta_len =
        2 + varint_len(zigzag(first as i64)) + varint_len(zigzag(dlo)) + ((n - 1) * delta_width as usize).div_ceil(8);
    let line_form = found.line.filter(|_| n > 2);
    let line_len = line_form.map_or(usize::MAX, |(slope, rlo, width)| {
        2 + varint_len(zigzag(first as i64))
            + varint_len(zigzag(slope))
            + varint_len(zigzag(rlo))
            + (n * width as usize).div_ceil(8)
    });
    if let Some((slope, rlo, width)) = line_form.filter(|_| line_len < for_len.min(delta_len)) {
        return (Form::Line(slope, rlo, width), line_len);
    }
    let packed = for_len.min(delta_len);
    // Runs are for columns that rarely change (a run costs at least 2 bytes): only count their
    // bytes exactly when there are few and they may win.
    let runs_len = if changes < n / 8 && 2 * (changes + 1) + 2 < packed { runs_encoded_len(words) } else { usize::MAX };
    let xor_len = if int || packed.min(runs_len) < n {
        usize::MAX
    } else {
        found.xor_len.unwrap_or_else(|| 1 + xor::encoded_len(words.iter().copied()))
    };
    if runs_len < packed && runs_len <= xor_len {
        (Form::Runs, runs_len)
    } else if xor_len < packed {
        (Form::Xor, xor_len)
    } else if delta_len < for_len {
        (Form::Delta, delta_len)
    } else {
        (Form::For, for_len)
    }
}

/// Appends `words` in `form` (from [`plan`] of the same words and ranges).
fn write(words: &[u64], int: bool, ranges: Ranges, form: Form, out: &mut Vec<u8>) {
    let flag = if int { INT } else { 0 };
    let first = words.first().copied().unwrap_or(0);
    match form {
        Form::Empty => {
            out.push(FOR | flag);
            out.push(0);
            put_varint(out, 0);
        }
        Form::Line(slope, rlo, width) => {
            out.push(LINE | flag);
            out.push(width as u8);
            put_varint(out, zigzag(first as i64));
            put_varint(out, zigzag(slope));
            put_varint(out, zigzag(rlo));
            let mut base = first.wrapping_add(rlo as u64);
            pack(
                words.iter().map(|&w| {
                    let r = w.wrapping_sub(base);
                    base = base.wrapping_add(slope as u64);
                    r
                }),
                width,
                out,
            );
        }
        Form::Runs => {
            out.push(RUNS | flag);
            put_varint(out, ranges.changes as u64 + 1);
            for_runs(words, |len, d| {
                put_varint(out, len as u64 - 1);
                put_varint(out, zigzag(d));
            });
        }
        Form::Xor => {
            out.push(XOR | flag);
            xor::encode(words.iter().copied(), out);
        }
        Form::Delta => {
            let (dlo, dhi) = if words.len() > 1 { (ranges.dlo, ranges.dhi) } else { (0, 0) };
            let width = if words.len() > 1 { width_of(dhi.wrapping_sub(dlo) as u64) } else { 0 };
            out.push(DELTA | flag);
            out.push(width as u8);
            put_varint(out, zigzag(first as i64));
            put_varint(out, zigzag(dlo));
            pack(words.windows(2).map(|p| (p[1].wrapping_sub(p[0]) as i64).wrapping_sub(dlo) as u64), width, out);
        }
        Form::For => {
            let flip = if int { 1u64 << 63 } else { 0 };
            let lo = ranges.lo ^ flip;
            let width = width_of(ranges.hi - ranges.lo);
            out.push(FOR | flag);
            out.push(width as u8);
            put_varint(out, zigzag(lo as i64));
            pack(words.iter().map(|&w| w.wrapping_sub(lo)), width, out);
        }
    }
}

/// Calls `f(i, word)` for the `n` words of an encoded column; returns whether they are integer
/// words (a scaled column's are its values' `f64` bits).
#[inline]
fn decode_words(b: &[u8], n: usize, mut f: impl FnMut(usize, u64)) -> bool {
    if b.first().is_some_and(|&m| m & !INT == SCALED) {
        match scaled_header(b) {
            Some((e, factor, inner)) => {
                decode_plain(&b[inner..], n, |i, q| f(i, scaled_value(q, factor, e).to_bits()));
            }
            None => (0..n).for_each(|i| f(i, missing().to_bits())),
        }
        return false;
    }
    decode_plain(b, n, f)
}

/// [`decode_words`] of a column of any form but scaled.
#[inline]
fn decode_plain(b: &[u8], n: usize, mut f: impl FnMut(usize, u64)) -> bool {
    let Some(&mode) = b.first() else {
        (0..n).for_each(|i| f(i, missing().to_bits()));
        return false;
    };
    let int = mode & INT != 0;
    let mut pos = 1;
    match mode & !INT {
        FOR => {
            let width = b.get(pos).copied().unwrap_or(0).min(64) as u32;
            pos += 1;
            let lo = unzigzag(varint(b, &mut pos)) as u64;
            unpack(&b[pos.min(b.len())..], width, n, |i, w| f(i, w.wrapping_add(lo)));
        }
        DELTA => {
            let width = b.get(pos).copied().unwrap_or(0).min(64) as u32;
            pos += 1;
            let mut w = unzigzag(varint(b, &mut pos)) as u64;
            let dlo = unzigzag(varint(b, &mut pos));
            if n > 0 {
                f(0, w);
            }
            unpack(&b[pos.min(b.len())..], width, n.saturating_sub(1), |i, d| {
                w = w.wrapping_add((d as i64).wrapping_add(dlo) as u64);
                f(i + 1, w);
            });
        }
        XOR => {
            let mut got = 0;
            let _ = xor::decode(&b[pos..], n, |i, w| {
                f(i, w);
                got = i + 1;
            });
            (got..n).for_each(|i| f(i, missing().to_bits()));
        }
        LINE => {
            let width = b.get(pos).copied().unwrap_or(0).min(64) as u32;
            pos += 1;
            let first = unzigzag(varint(b, &mut pos)) as u64;
            let slope = unzigzag(varint(b, &mut pos)) as u64;
            let mut base = first.wrapping_add(unzigzag(varint(b, &mut pos)) as u64);
            unpack(&b[pos.min(b.len())..], width, n, |i, r| {
                f(i, base.wrapping_add(r));
                base = base.wrapping_add(slope);
            });
        }
        RUNS => {
            let runs = varint(b, &mut pos);
            let (mut i, mut w) = (0usize, 0u64);
            for _ in 0..runs {
                if i >= n || pos >= b.len() {
                    break;
                }
                let len = usize::try_from(varint(b, &mut pos)).unwrap_or(usize::MAX).saturating_add(1);
                w = w.wrapping_add(unzigzag(varint(b, &mut pos)) as u64);
                let end = i.saturating_add(len).min(n);
                (i..end).for_each(|k| f(k, w));
                i = end;
            }
            (i..n).for_each(|k| f(k, missing().to_bits()));
        }
        _ => (0..n).for_each(|i| f(i, missing().to_bits())),
    }
    int
}

/// Appends the encoding of a column of values: the smaller of its plain form and, where its
/// values allow one, its scaled form (only the one written).
pub fn encode_f64(vals: &[f64], out: &mut Vec<u8>) {
    encode_f64_in(vals, true, out);
}

/// Appends the encoding of a column of values in every form but scaled: for readers that predate
/// it (the live feed's version 2, `docs/live-protocol.md`).
pub fn encode_f64_unscaled(vals: &[f64], out: &mut Vec<u8>) {
    encode_f64_in(vals, false, out);
}

/// [`encode_f64`], the scaled form tried only when `scaled`.
fn encode_f64_in(vals: &[f64], scaled: bool, out: &mut Vec<u8>) {
    let mut words = [0u64; BLOCK];
    let n = vals.len().min(BLOCK);
    let vals = &vals[..n];
    // A column of integers with a common factor (a streamer's rate) takes its quotients in the
    // pass that finds its integer words: three passes (words, ranges, the packing) instead of six.
    let factor = match vals.first() {
        Some(&v) if scaled && as_integer(v).0 => scaled::factor_hint(vals),
        _ => 1,
    };
    let int = if factor >= 2 {
        let mut q = [0u64; BLOCK];
        let (int, multiples) = integer_and_quotient_words(vals, &mut words[..n], factor, &mut q[..n]);
        if int {
            let ranges = int_ranges(vals).unwrap_or_else(|| word_ranges(&words[..n], 1 << 63));
            let (form, len) = plan(&words[..n], true, ranges, Found::default());
            if multiples && write_quotients(&q[..n], factor as i64, ranges, len, out) {
                return;
            }
            return write(&words[..n], true, ranges, form, out);
        }
        false
    } else {
        integer_words(vals, &mut words[..n])
    };
    let (ranges, found) = if int {
        (int_ranges(vals).unwrap_or_else(|| word_ranges(&words[..n], 1 << 63)), Found::default())
    } else {
        for (w, &v) in words.iter_mut().zip(vals) {
            *w = v.to_bits();
        }
        let (ranges, xor_len) = float_ranges(&words[..n]);
        (ranges, Found { line: None, xor_len: Some(xor_len) })
    };
    let (form, len) = plan(&words[..n], int, ranges, found);
    // Integers took the scaled form above if any could (a common factor); floats may be decimals.
    if scaled && !int && write_scaled(vals, len, out) {
        return;
    }
    write(&words[..n], int, ranges, form, out);
}

/// Appends the encoding of a column of timestamps.
pub fn encode_i64(vals: &[i64], out: &mut Vec<u8>) {
    let mut words = [0u64; BLOCK];
    let n = vals.len().min(BLOCK);
    for (w, &v) in words.iter_mut().zip(&vals[..n]) {
        *w = v as u64;
    }
    let words = &words[..n];
    let (ranges, found) = if n > 2 {
        let (ranges, fit) = time_ranges(words);
        (ranges, Found { line: Some(fit), xor_len: None })
    } else {
        (word_ranges(words, 1 << 63), Found::default())
    };
    let (form, _) = plan(words, true, ranges, found);
    write(words, true, ranges, form, out);
}

#[inline]
fn to_f64(w: u64, int: bool) -> f64 {
    if int { w as i64 as f64 } else { f64::from_bits(w) }
}

/// Decodes the `out.len()` values of an encoded column.
pub fn decode_f64(b: &[u8], out: &mut [f64]) {
    let int = b.first().is_some_and(|m| m & INT != 0);
    decode_words(b, out.len(), |i, w| out[i] = to_f64(w, int));
}

/// Decodes the `out.len()` timestamps of an encoded column.
pub fn decode_i64(b: &[u8], out: &mut [i64]) {
    decode_words(b, out.len(), |i, w| out[i] = w as i64);
}

/// Word `i` of a column of `n` words (of a scaled column, value `i`'s `f64` bits).
fn word_at(b: &[u8], n: usize, i: usize) -> u64 {
    if b.first().is_some_and(|&m| m & !INT == SCALED) {
        return match scaled_header(b) {
            Some((e, factor, inner)) => scaled_value(plain_word_at(&b[inner..], n, i), factor, e).to_bits(),
            None => missing().to_bits(),
        };
    }
    plain_word_at(b, n, i)
}

/// [`word_at`] of a column of any form but scaled.
fn plain_word_at(b: &[u8], n: usize, i: usize) -> u64 {
    let form = b.first().map(|m| m & !INT);
    if form == Some(FOR) || form == Some(LINE) {
        let width = b.get(1).copied().unwrap_or(0).min(64) as u32;
        let mut pos = 2;
        let mut lo = unzigzag(varint(b, &mut pos)) as u64;
        if form == Some(LINE) {
            let slope = unzigzag(varint(b, &mut pos)) as u64;
            lo = lo.wrapping_add(unzigzag(varint(b, &mut pos)) as u64).wrapping_add(slope.wrapping_mul(i as u64));
        }
        return unpack_one(&b[pos.min(b.len())..], width, i).wrapping_add(lo);
    }
    if form == Some(DELTA) && i < n {
        // The first word plus `i` differences: their sum without decoding the words one by one.
        let width = b.get(1).copied().unwrap_or(0).min(64) as u32;
        let mut pos = 2;
        let first = unzigzag(varint(b, &mut pos)) as u64;
        let dlo = unzigzag(varint(b, &mut pos)) as u64;
        let sum = sum_packed(&b[pos.min(b.len())..], width, i);
        return first.wrapping_add(sum).wrapping_add(dlo.wrapping_mul(i as u64));
    }
    let mut out = missing().to_bits();
    decode_plain(b, n.min(i + 1), |k, w| {
        if k == i {
            out = w;
        }
    });
    out
}

/// Value `i` of an encoded column of `n` values.
pub(crate) fn f64_at(b: &[u8], n: usize, i: usize) -> f64 {
    to_f64(word_at(b, n, i), b.first().is_some_and(|m| m & INT != 0))
}

/// Timestamp `i` of an encoded column of `n` timestamps.
pub(crate) fn i64_at(b: &[u8], n: usize, i: usize) -> i64 {
    word_at(b, n, i) as i64
}

#[cfg(test)]
#[path = "pack_tests.rs"]
mod tests;
