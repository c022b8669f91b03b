//! The compact encoding of the data columns inside a session file.
//!
//! Plain RON numbers cost about 20 bytes per `f64` and parse slowly, so the
//! recorded samples are stored as text chunks: a small binary encoding, then
//! base64 (RON strings stay printable ASCII, one chunk per line). The binary
//! encoding of one raw chunk (at most [`CHUNK`] samples of one stream):
//!
//! - `n`, the sample count (LEB128);
//! - timestamps: the first as a zigzag LEB128 `i64`, then the second
//!   difference of each next one (zigzag LEB128): a steady sampling rate costs
//!   one byte per sample, jitter a few;
//! - per series, `n` values: each value's bits XOR the previous value's bits
//!   (the first against 0), written as one control byte (high nibble: zero
//!   bytes at the top, low nibble: zero bytes at the bottom) and the bytes in
//!   between (`zescope_store::xor`, which the store's sealed blocks share). A
//!   repeated value costs 1 byte, a counter moving in its low bits 2–4, an
//!   integer-valued reading 3–5, a full-precision noisy float up to 9.
//!
//! Coarse buckets (history the store's memory cap has summarised) are few
//! (one per 256 samples or more) and are written plainly: varints for the
//! positions and counts, little-endian `f64` bits for min/max/sum/last.
//!
//! Every reader here is bounds-checked: a short, long or corrupt chunk gives a
//! [`CodecError`], never a panic, and nothing is allocated beyond what the
//! input's length can hold.

use zescope_store::bits::{put_varint, unzigzag, zigzag};
use zescope_store::xor::{self, XorError};
use zescope_store::{BucketStats, CoarseBucket};

/// Samples per raw chunk. Chunks are aligned to multiples of `CHUNK` in a
/// stream's sample ordinals, so a full chunk's text never changes once written
/// (autosave reuses it).
pub const CHUNK: u64 = 4096;
/// Coarse buckets per coarse chunk.
pub const COARSE_CHUNK: usize = 1024;

/// What is wrong with a chunk.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CodecError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, CodecError> {
    Err(CodecError(msg.into()))
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64_encode(bytes: &[u8], out: &mut String) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    let mut buf = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let v = (c[0] as u32) << 16 | (c[1] as u32) << 8 | c[2] as u32;
        buf.extend_from_slice(&[
            B64[(v >> 18) as usize & 63],
            B64[(v >> 12) as usize & 63],
            B64[(v >> 6) as usize & 63],
            B64[v as usize & 63],
        ]);
    }
    match *chunks.remainder() {
        [a] => buf.extend_from_slice(&[B64[(a >> 2) as usize], B64[((a & 3) << 4) as usize], b'=', b'=']),
        [a, b] => {
            let v = (a as u32) << 8 | b as u32;
            buf.extend_from_slice(&[
                B64[(v >> 10) as usize],
                B64[(v >> 4) as usize & 63],
                B64[((v & 15) << 2) as usize],
                b'=',
            ]);
        }
        _ => {}
    }
    // Every byte pushed is from the ASCII alphabet.
    out.push_str(std::str::from_utf8(&buf).unwrap_or_default());
}

const fn decode_table() -> [u8; 256] {
    let mut t = [255u8; 256];
    let mut i = 0;
    while i < 64 {
        t[B64[i] as usize] = i as u8;
        i += 1;
    }
    t
}
const UNB64: [u8; 256] = decode_table();

/// Decode standard padded base64.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, CodecError> {
    let s = text.as_bytes();
    if !s.len().is_multiple_of(4) {
        return err(format!("base64 text of {} characters is not a multiple of 4", s.len()));
    }
    let pad = s.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return err("base64 text has more than 2 padding characters");
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for (k, q) in s.chunks_exact(4).enumerate() {
        let last = (k + 1) * 4 == s.len();
        let mut v = 0u32;
        for (j, &c) in q.iter().enumerate() {
            let d = match UNB64[c as usize] {
                255 if c == b'=' && last && j >= 4 - pad => 0,
                255 => return err(format!("base64: invalid character {:?} at {}", c as char, k * 4 + j)),
                d => d,
            };
            v = v << 6 | d as u32;
        }
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(&bytes[..if last { 3 - pad } else { 3 }]);
    }
    Ok(out)
}

/// A bounds-checked reader over a decoded chunk.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn varint(&mut self) -> Result<u64, CodecError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.b.get(self.pos) else { return err("chunk ends inside a number") };
            self.pos += 1;
            v |= ((byte & 0x7f) as u64) << shift;
            if byte & 0x80 == 0 {
                if shift == 63 && byte > 1 {
                    break;
                }
                return Ok(v);
            }
        }
        err("number too large for 64 bits")
    }

    fn u8(&mut self) -> Result<u8, CodecError> {
        let v = *self.b.get(self.pos).ok_or(CodecError("chunk ends early".into()))?;
        self.pos += 1;
        Ok(v)
    }

    fn f64(&mut self) -> Result<f64, CodecError> {
        let bytes = self.b.get(self.pos..self.pos + 8).ok_or(CodecError("chunk ends inside a value".into()))?;
        self.pos += 8;
        let mut a = [0u8; 8];
        a.copy_from_slice(bytes);
        Ok(f64::from_le_bytes(a))
    }

    fn remaining(&self) -> usize {
        self.b.len() - self.pos
    }

    fn finish(&self) -> Result<(), CodecError> {
        if self.pos == self.b.len() { Ok(()) } else { err(format!("{} bytes left over", self.remaining())) }
    }
}

/// Encode samples `ts` (one chunk) with row-major `values` (`ts.len() * n`)
/// as base64 text.
pub fn encode_raw(ts: &[i64], values: &[f64], n: usize) -> String {
    let mut b = Vec::with_capacity(ts.len() * (2 + 4 * n));
    put_varint(&mut b, ts.len() as u64);
    let (mut prev, mut prev_d) = (0i64, 0i64);
    for (i, &t) in ts.iter().enumerate() {
        match i {
            0 => put_varint(&mut b, zigzag(t)),
            _ => {
                let d = t.wrapping_sub(prev);
                put_varint(&mut b, zigzag(d.wrapping_sub(prev_d)));
                prev_d = d;
            }
        }
        prev = t;
    }
    for s in 0..n {
        xor::encode(values.iter().skip(s).step_by(n.max(1)).map(|v| v.to_bits()), &mut b);
    }
    let mut out = String::new();
    base64_encode(&b, &mut out);
    out
}

/// Decode a raw chunk of `expected` samples of `n` series into `ts` and (row-major) `values`.
pub fn decode_raw(text: &str, expected: usize, n: usize, ts: &mut [i64], values: &mut [f64]) -> Result<(), CodecError> {
    if ts.len() != expected {
        return err("internal: output sized wrongly");
    }
    decode_raw_rows(text, expected, n, 0, ts, values)
}

/// Decode samples `from..from + ts.len()` of a raw chunk of `expected` samples of `n` series
/// into `ts` and (row-major) `values`: a piece of a chunk, so that a wide chunk is never decoded
/// whole at once. Each series' values follow one another in the chunk, so every piece reads
/// the chunk through (the samples outside the piece are checked and dropped).
pub fn decode_raw_rows(
    text: &str,
    expected: usize,
    n: usize,
    from: usize,
    ts: &mut [i64],
    values: &mut [f64],
) -> Result<(), CodecError> {
    let bytes = base64_decode(text)?;
    let mut r = Reader { b: &bytes, pos: 0 };
    let count = r.varint()?;
    if count != expected as u64 {
        return err(format!("holds {count} samples where {expected} are expected"));
    }
    let rows = from..from.saturating_add(ts.len());
    if rows.end > expected || values.len() != ts.len() * n {
        return err("internal: output sized wrongly");
    }
    let (mut prev, mut prev_d) = (0i64, 0i64);
    for i in 0..expected {
        let v = unzigzag(r.varint()?);
        let t = match i {
            0 => v,
            _ => {
                prev_d = prev_d.wrapping_add(v);
                prev.wrapping_add(prev_d)
            }
        };
        if i > 0 && t <= prev {
            return err(format!("timestamp {i} ({t} ns) does not increase (previous {prev} ns)"));
        }
        if rows.contains(&i) {
            ts[i - from] = t;
        }
        prev = t;
    }
    for s in 0..n {
        let keep = |i: usize, bits: u64| {
            if rows.contains(&i) {
                values[(i - from) * n + s] = f64::from_bits(bits);
            }
        };
        let read = xor::decode(&r.b[r.pos..], expected, keep).map_err(|e| match e {
            XorError::Short { .. } => CodecError("chunk ends inside a value".into()),
            XorError::Control { index, byte } => {
                CodecError(format!("series {s}, value {index}: bad control byte {byte:#04x}"))
            }
        })?;
        r.pos += read;
    }
    r.finish()
}

/// The first version whose coarse buckets carry a counter's intervals (`area`, `dur`).
pub const INTERVALS_VERSION: u32 = 7;

/// Encode coarse buckets of a stream of `n` series as base64 text, as the session format's
/// `version` has them: from version 4 the CRC-32C of the bytes
/// before they are base64-encoded follows them (`crc.rs`); from version 7
/// ([`INTERVALS_VERSION`]) each series' `area` and `dur` follow its `sum`.
pub fn encode_coarse(buckets: &[CoarseBucket], version: u32) -> String {
    let mut b = Vec::new();
    put_varint(&mut b, buckets.len() as u64);
    for k in buckets {
        b.push(k.level);
        put_varint(&mut b, k.index);
        put_varint(&mut b, zigzag(k.t_first));
        put_varint(&mut b, k.t_last.wrapping_sub(k.t_first) as u64);
        put_varint(&mut b, k.first_ordinal);
        put_varint(&mut b, k.samples);
        put_varint(&mut b, k.gap_before as u64);
        put_varint(&mut b, k.max_gap as u64);
        for s in &k.series {
            for v in [s.min, s.max, s.sum] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            if version >= INTERVALS_VERSION {
                for v in [s.area, s.dur] {
                    b.extend_from_slice(&v.to_le_bytes());
                }
            }
            match s.last {
                Some(v) => {
                    b.push(1);
                    b.extend_from_slice(&v.to_le_bytes());
                }
                None => b.push(0),
            }
            put_varint(&mut b, s.count as u64);
            put_varint(&mut b, s.non_finite as u64);
        }
    }
    if version >= super::chunks::SEALED_VERSION {
        super::crc::seal(&mut b, 0);
    }
    let mut out = String::new();
    base64_encode(&b, &mut out);
    out
}

/// Smallest encoding of one bucket of `n` series, to bound what a chunk may claim.
fn min_bucket_bytes(n: usize) -> usize {
    8 + n * 27
}

/// Decode a coarse chunk of `n` series written as the session format's `version` has them
/// ([`encode_coarse`]): from version 4 it ends with its checksum, which must match; before
/// version 7 a counter's intervals are not known (NaN `area` and `dur`).
pub fn decode_coarse(text: &str, n: usize, version: u32) -> Result<Vec<CoarseBucket>, CodecError> {
    let sealed = version >= super::chunks::SEALED_VERSION;
    let bytes = base64_decode(text)?;
    let bytes = if sealed { super::crc::open(&bytes).map_err(CodecError)? } else { &bytes[..] };
    let mut r = Reader { b: bytes, pos: 0 };
    let count = r.varint()?;
    if count > (r.remaining() / min_bucket_bytes(n)) as u64 {
        return err(format!("claims {count} buckets, more than its {} bytes can hold", bytes.len()));
    }
    let mut out = Vec::with_capacity(count as usize);
    for k in 0..count {
        let level = r.u8()?;
        let index = r.varint()?;
        let t_first = unzigzag(r.varint()?);
        let span = r.varint()?;
        let t_last = i64::try_from(span)
            .ok()
            .and_then(|d| t_first.checked_add(d))
            .ok_or(CodecError(format!("bucket {k}: time span out of range")))?;
        let first_ordinal = r.varint()?;
        let samples = r.varint()?;
        let to_i64 = |v: u64| i64::try_from(v).map_err(|_| CodecError(format!("bucket {k}: gap out of range")));
        let gap_before = to_i64(r.varint()?)?;
        let max_gap = to_i64(r.varint()?)?;
        let mut series = Vec::with_capacity(n);
        for _ in 0..n {
            let (min, max, sum) = (r.f64()?, r.f64()?, r.f64()?);
            let (area, dur) = if version >= INTERVALS_VERSION { (r.f64()?, r.f64()?) } else { (f64::NAN, f64::NAN) };
            let last = match r.u8()? {
                0 => None,
                1 => Some(r.f64()?),
                t => return err(format!("bucket {k}: bad tag {t} for the last value")),
            };
            let to_u32 = |v: u64| u32::try_from(v).map_err(|_| CodecError(format!("bucket {k}: count {v} too large")));
            let count = to_u32(r.varint()?)?;
            let non_finite = to_u32(r.varint()?)?;
            series.push(BucketStats { min, max, sum, last, count, non_finite, area, dur });
        }
        out.push(CoarseBucket { level, index, t_first, t_last, first_ordinal, samples, gap_before, max_gap, series });
    }
    r.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length_and_rejects_junk() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in 0..20 {
            let mut s = String::new();
            base64_encode(&data[..len], &mut s);
            assert_eq!(base64_decode(&s).unwrap(), &data[..len]);
        }
        assert!(base64_decode("abc").is_err());
        assert!(base64_decode("ab!d").is_err());
        assert!(base64_decode("a===").is_err());
        assert!(base64_decode("ab==abcd").is_err(), "padding only at the end");
    }

    #[test]
    fn raw_chunks_round_trip_bit_exactly() {
        let ts: Vec<i64> = (0..500).map(|i| -5_000 + i * 1_000_003 + (i % 7) * 13).collect();
        let n = 3;
        let mut values = Vec::new();
        for i in 0..ts.len() {
            values.push(if i % 50 == 0 { f64::NAN } else { (i as f64).sin() });
            values.push(42.0);
            values.push((i * 1_048_576) as f64 + if i == 9 { f64::INFINITY } else { -0.0 });
        }
        let text = encode_raw(&ts, &values, n);
        let (mut t2, mut v2) = (vec![0; ts.len()], vec![0.0; values.len()]);
        decode_raw(&text, ts.len(), n, &mut t2, &mut v2).unwrap();
        assert_eq!(t2, ts);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&v2), bits(&values));
        assert!(decode_raw(&text, ts.len() + 1, n, &mut vec![0; 501], &mut vec![0.0; 1503]).is_err());
        let cut = &text[..text.len() - 8];
        assert!(decode_raw(cut, ts.len(), n, &mut t2, &mut v2).is_err());
    }

    #[test]
    fn non_increasing_timestamps_are_rejected() {
        let text = encode_raw(&[5, 5], &[1.0, 2.0], 1);
        let e = decode_raw(&text, 2, 1, &mut [0; 2], &mut [0.0; 2]).unwrap_err();
        assert!(e.0.contains("does not increase"), "{e}");
    }

    #[test]
    fn coarse_chunks_round_trip_and_bound_their_claims() {
        let b = CoarseBucket {
            level: 2,
            index: 7,
            t_first: -10,
            t_last: 99,
            first_ordinal: 4096,
            samples: 4096,
            gap_before: 3,
            max_gap: 0,
            series: vec![BucketStats {
                min: 1.0,
                max: 2.0,
                sum: 3.0,
                last: None,
                count: 9,
                non_finite: 1,
                area: 0.25,
                dur: 0.125,
            }],
        };
        // Before version 7 a bucket has no intervals: they read back as not known.
        let unknown = |b: &CoarseBucket| {
            let series = b.series.iter().map(|s| BucketStats { area: f64::NAN, dur: f64::NAN, ..*s }).collect();
            CoarseBucket { series, ..b.clone() }
        };
        let bits = |v: Vec<CoarseBucket>| format!("{v:?}");
        let text = encode_coarse(&[b.clone(), b.clone()], 3);
        assert_eq!(bits(decode_coarse(&text, 1, 3).unwrap()), bits(vec![unknown(&b), unknown(&b)]));
        let sealed = encode_coarse(&[b.clone(), b.clone()], 6);
        assert_eq!(bits(decode_coarse(&sealed, 1, 6).unwrap()), bits(vec![unknown(&b), unknown(&b)]));
        assert!(decode_coarse(&text, 1, 6).unwrap_err().0.contains("checksum"));
        let current = encode_coarse(&[b.clone(), b.clone()], INTERVALS_VERSION);
        assert_eq!(decode_coarse(&current, 1, INTERVALS_VERSION).unwrap(), vec![b.clone(), b.clone()]);
        assert!(decode_coarse(&sealed, 1, INTERVALS_VERSION).is_err(), "a version 6 chunk is short of intervals");
        let mut huge = Vec::new();
        put_varint(&mut huge, u64::MAX / 2);
        let mut s = String::new();
        base64_encode(&huge, &mut s);
        assert!(decode_coarse(&s, 4, 3).unwrap_err().0.contains("more than"));
    }
}
