//! Version 2's data section: the raw chunks as binary bytes after the RON text, each column
//! in the store's sealed-block encoding (`zescope_store::pack`: frame of reference, delta or
//! XOR, whichever is smallest, integer-valued columns packed as integers).
//!
//! One chunk (the samples of one multiple of [`CHUNK`](super::codec::CHUNK) ordinals):
//!
//! - `n`, the sample count (LEB128);
//! - per block of up to 256 samples (the store's block size), the timestamps column, then
//!   one column per series; each column is its byte length (LEB128) and its bytes.
//!
//! The data section is the chunks of every stream in stream order, each one its byte length
//! (LEB128) and its bytes. Every reader here is bounds-checked: a short, long or corrupt chunk
//! gives a [`CodecError`], never a panic.

use zescope_store::bits::{checked_varint, put_varint};
use zescope_store::pack;

use super::codec::CodecError;

/// Samples per column: the store's block size.
pub(super) const BLOCK: usize = 256;
/// Fewest bytes one column takes in a file (its length byte, mode, width and a one-byte number).
pub(super) const MIN_COLUMN_BYTES: u64 = 4;

fn put_column(out: &mut Vec<u8>, col: &[u8]) {
    put_varint(out, col.len() as u64);
    out.extend_from_slice(col);
}

/// Appends the encoding of one chunk: `ts` with row-major `values` (`ts.len() * n`).
pub(super) fn encode_chunk(ts: &[i64], values: &[f64], n: usize, out: &mut Vec<u8>) {
    put_varint(out, ts.len() as u64);
    let mut col = Vec::with_capacity(pack::WORST_COLUMN);
    let mut tmp = [0.0f64; BLOCK];
    for (k, t) in ts.chunks(BLOCK).enumerate() {
        col.clear();
        pack::encode_i64(t, &mut col);
        put_column(out, &col);
        let rows = &values[k * BLOCK * n..(k * BLOCK + t.len()) * n];
        for s in 0..n {
            for (slot, row) in tmp.iter_mut().zip(rows.chunks_exact(n)) {
                *slot = row[s];
            }
            col.clear();
            pack::encode_f64(&tmp[..t.len()], &mut col);
            put_column(out, &col);
        }
    }
}

/// Reads one length-prefixed piece at `*pos` of `b`.
pub(super) fn piece<'a>(b: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = checked_varint(b, pos)?;
    let end = pos.checked_add(usize::try_from(len).ok()?).filter(|&e| e <= b.len())?;
    let out = &b[*pos..end];
    *pos = end;
    Some(out)
}

/// Decodes one chunk of `expected` samples of `n` series into `ts` and (row-major) `values`.
pub(super) fn decode_chunk(
    b: &[u8],
    expected: usize,
    n: usize,
    ts: &mut [i64],
    values: &mut [f64],
) -> Result<(), CodecError> {
    if ts.len() != expected {
        return Err(CodecError("internal: output sized wrongly".into()));
    }
    decode_rows(b, expected, n, 0, ts, values)
}

/// Decodes samples `from..from + ts.len()` of one chunk of `expected` samples of `n` series into
/// `ts` and (row-major) `values`: a piece of a chunk, so that decoding a wide chunk never needs
/// all of it decoded at once. `from` is a multiple of [`BLOCK`] (a column holds a block); the
/// blocks before it are skipped by their columns' lengths, unread. A piece that ends the chunk
/// also checks that nothing follows its last column.
pub(super) fn decode_rows(
    b: &[u8],
    expected: usize,
    n: usize,
    from: usize,
    ts: &mut [i64],
    values: &mut [f64],
) -> Result<(), CodecError> {
    let mut pos = 0;
    let count = checked_varint(b, &mut pos).ok_or(CodecError("chunk ends inside its sample count".into()))?;
    if count != expected as u64 {
        return Err(CodecError(format!("holds {count} samples where {expected} are expected")));
    }
    let to = from
        .checked_add(ts.len())
        .filter(|&t| t <= expected && from.is_multiple_of(BLOCK) && (t == expected || ts.len().is_multiple_of(BLOCK)));
    if to.is_none() || values.len() != ts.len() * n {
        return Err(CodecError("internal: output sized wrongly".into()));
    }
    for k in 0..from / BLOCK {
        for c in 0..=n {
            piece(b, &mut pos).ok_or_else(|| {
                let first = k * BLOCK;
                let what = match c {
                    0 => format!("the timestamps of samples {first}.."),
                    c => format!("series {}, samples {first}..", c - 1),
                };
                CodecError(format!("chunk ends inside {what}"))
            })?;
        }
    }
    let mut tmp = [0.0f64; BLOCK];
    for (k, t) in ts.chunks_mut(BLOCK).enumerate() {
        let m = t.len();
        let mut column = |what: &dyn Fn() -> String| {
            let col = piece(b, &mut pos).ok_or_else(|| CodecError(format!("chunk ends inside {}", what())))?;
            pack::check(col, m).map_err(|e| CodecError(format!("{}: {e}", what())))?;
            Ok::<_, CodecError>(col)
        };
        let (here, first) = (k * BLOCK, from + k * BLOCK);
        let col = column(&|| format!("the timestamps of samples {first}..{}", first + m))?;
        pack::decode_i64(col, t);
        let rows = &mut values[here * n..(here + m) * n];
        for s in 0..n {
            let col = column(&|| format!("series {s}, samples {first}..{}", first + m))?;
            pack::decode_f64(col, &mut tmp[..m]);
            for (row, &v) in rows.chunks_exact_mut(n).zip(&tmp[..m]) {
                row[s] = v;
            }
        }
    }
    if to == Some(expected) && pos != b.len() {
        return Err(CodecError(format!("{} bytes left over", b.len() - pos)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(len: usize, n: usize) -> (Vec<i64>, Vec<f64>) {
        let ts: Vec<i64> = (0..len as i64).map(|i| -5_000 + i * 1_000_003 + (i % 7) * 13).collect();
        let mut values = Vec::new();
        for i in 0..len {
            for s in 0..n {
                values.push(match s % 4 {
                    0 => (i * 4096 + s) as f64,
                    1 => (i as f64).sin(),
                    2 if i % 50 == 0 => f64::NAN,
                    2 => -0.0,
                    _ => 42.0,
                });
            }
        }
        (ts, values)
    }

    #[test]
    fn chunks_round_trip_bit_exactly_at_every_length() {
        for (len, n) in [(0, 3), (1, 1), (255, 4), (256, 4), (257, 5), (4096, 16)] {
            let (ts, values) = sample(len, n);
            let mut b = Vec::new();
            encode_chunk(&ts, &values, n, &mut b);
            let (mut t2, mut v2) = (vec![0; len], vec![0.0; len * n]);
            decode_chunk(&b, len, n, &mut t2, &mut v2).unwrap();
            assert_eq!(t2, ts);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&v2), bits(&values), "{len} x {n}");
        }
    }

    #[test]
    fn damaged_chunks_are_refused_by_what_is_wrong() {
        let (ts, values) = sample(600, 3);
        let mut b = Vec::new();
        encode_chunk(&ts, &values, 3, &mut b);
        let (mut t2, mut v2) = (vec![0; 600], vec![0.0; 1800]);
        let e = decode_chunk(&b, 601, 3, &mut vec![0; 601], &mut vec![0.0; 1803]).unwrap_err();
        assert!(e.0.contains("601 are expected"), "{e}");
        let e = decode_chunk(&b[..b.len() - 3], 600, 3, &mut t2, &mut v2).unwrap_err();
        assert!(e.0.contains("series 2, samples 512..600"), "{e}");
        let mut long = b.clone();
        long.push(7);
        assert!(decode_chunk(&long, 600, 3, &mut t2, &mut v2).unwrap_err().0.contains("left over"));
        // The first column's mode byte (after the count's two bytes and the length's one or two).
        let mut bad = b.clone();
        let at = if bad[2] & 0x80 != 0 { 4 } else { 3 };
        bad[at] = 0x0b;
        let e = decode_chunk(&bad, 600, 3, &mut t2, &mut v2).unwrap_err();
        assert!(e.0.contains("timestamps of samples 0..256") && e.0.contains("mode"), "{e}");
        for cut in 0..b.len() {
            assert!(decode_chunk(&b[..cut], 600, 3, &mut t2, &mut v2).is_err(), "cut at {cut}");
        }
    }
}
