//! The packed batch frame of the live feed's protocol 2 (`docs/live-protocol.md`, "Batches,
//! packed"): a batch's columns in the session format's block encoding
//! (`zescope_store::pack`, ~3 bytes per value on counters instead of 8), behind a header of
//! LEB128 numbers instead of fixed-width fields.
//!
//! Layout: the magic `ZSL2`, then `seq`, stream, ordinal of the first row, rows `R`, series `K`
//! (each LEB128), one flags byte (bit 0: the first row does not connect to the stream's
//! previous one), then per block of up to [`BLOCK`] rows (`ceil(R / 256)` blocks) the
//! timestamps column and the `K` value columns, each as its byte length (LEB128) and its bytes.
//! Every column is checked ([`zescope_store::pack::check`]) before it is decoded: a malformed
//! frame is an error naming what is wrong, never a panic or a read past its end.

use zescope_sampler::SampleBatch;
use zescope_store::bits::put_varint;
use zescope_store::pack;

use super::wire::{Batch, GAP_BEFORE};

/// The first bytes of a packed batch frame.
pub const MAGIC: [u8; 4] = *b"ZSL2";
/// Rows per block of columns (the store's and the session file's block).
pub const BLOCK: usize = 256;

/// The packed frame of batch `seq`: `b`'s rows, the first being ordinal `first` of its stream.
pub fn batch(seq: u64, first: u64, b: &SampleBatch) -> Vec<u8> {
    let rows = b.timestamps.len();
    let k = b.values.len().checked_div(rows).unwrap_or(0);
    let mut out = Vec::with_capacity(24 + rows * (k + 1) * 3);
    out.extend_from_slice(&MAGIC);
    for n in [seq, b.stream as u64, first, rows as u64, k as u64] {
        put_varint(&mut out, n);
    }
    out.push(if b.gap_before { GAP_BEFORE } else { 0 });
    let mut column = Vec::with_capacity(BLOCK * 8 + 32);
    let mut values = Vec::with_capacity(BLOCK);
    for start in (0..rows).step_by(BLOCK) {
        let end = (start + BLOCK).min(rows);
        column.clear();
        pack::encode_i64(&b.timestamps[start..end], &mut column);
        put_varint(&mut out, column.len() as u64);
        out.extend_from_slice(&column);
        for c in 0..k {
            values.clear();
            values.extend(b.values[start * k..end * k].iter().skip(c).step_by(k));
            column.clear();
            // Version 2 predates the scaled form: its readers do not know it.
            pack::encode_f64_unscaled(&values, &mut column);
            put_varint(&mut out, column.len() as u64);
            out.extend_from_slice(&column);
        }
    }
    out
}

/// A LEB128 number at `*pos`; `what` names it in the error.
fn varint(bytes: &[u8], pos: &mut usize, what: &str) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*pos).ok_or_else(|| format!("a packed batch cut short in its {what}"))?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(format!("a packed batch's {what} is longer than 64 bits"))
}

/// The next column of `n` words: its bytes, checked.
fn column<'b>(bytes: &'b [u8], pos: &mut usize, n: usize, what: &str) -> Result<&'b [u8], String> {
    let len = usize::try_from(varint(bytes, pos, what)?).unwrap_or(usize::MAX);
    let end = pos.checked_add(len).filter(|&e| e <= bytes.len());
    let end = end.ok_or_else(|| format!("{what}: {len} bytes claimed, {} left in the frame", bytes.len() - *pos))?;
    let b = &bytes[*pos..end];
    *pos = end;
    pack::check(b, n).map_err(|e| format!("{what}: {e}"))?;
    Ok(b)
}

/// Decodes a packed batch frame; the error names what is wrong with it.
pub fn decode(bytes: &[u8]) -> Result<Batch, String> {
    if bytes.len() < 4 || bytes[..4] != MAGIC {
        return Err(format!("a binary frame of {} bytes is not a packed batch (no ZSL2)", bytes.len()));
    }
    let mut pos = 4;
    let seq = varint(bytes, &mut pos, "seq")?;
    let stream = usize::try_from(varint(bytes, &mut pos, "stream")?).unwrap_or(usize::MAX);
    let first = varint(bytes, &mut pos, "first ordinal")?;
    let rows = varint(bytes, &mut pos, "row count")?;
    let k = varint(bytes, &mut pos, "series count")?;
    let flags = *bytes.get(pos).ok_or("a packed batch cut short before its flags")?;
    pos += 1;
    // Each column takes at least two bytes (its length and its mode), whatever it holds (a
    // constant column packs at 0 bits): counts the frame cannot hold are refused before
    // anything is allocated for them.
    let columns = rows.div_ceil(BLOCK as u64).checked_mul(k.saturating_add(1)).and_then(|c| c.checked_mul(2));
    if columns.is_none_or(|c| c > (bytes.len() - pos) as u64) {
        return Err(format!("batch {seq}: {rows} rows of {k} series are more than its {} bytes hold", bytes.len()));
    }
    let (rows, k) = (rows as usize, k as usize);
    let mut timestamps = vec![0i64; rows];
    let mut values = vec![0.0f64; rows * k];
    let mut col = vec![0.0f64; BLOCK];
    for start in (0..rows).step_by(BLOCK) {
        let n = (rows - start).min(BLOCK);
        let b = column(bytes, &mut pos, n, &format!("batch {seq}: the timestamps of rows {start}.."))?;
        pack::decode_i64(b, &mut timestamps[start..start + n]);
        for c in 0..k {
            let b = column(bytes, &mut pos, n, &format!("batch {seq}: series {c} of rows {start}.."))?;
            pack::decode_f64(b, &mut col[..n]);
            for (r, v) in col[..n].iter().enumerate() {
                values[(start + r) * k + c] = *v;
            }
        }
    }
    if pos != bytes.len() {
        return Err(format!("batch {seq}: {} bytes after its last column", bytes.len() - pos));
    }
    let samples = SampleBatch { run: 0, stream, timestamps, values, gap_before: flags & GAP_BEFORE != 0 };
    Ok(Batch { seq, first, samples })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(rows: usize, k: usize) -> SampleBatch {
        let timestamps: Vec<i64> = (0..rows as i64).map(|i| 5_000_000 + i * 1_000_000 + (i * 7919) % 13).collect();
        let mut values = Vec::new();
        for r in 0..rows {
            for c in 0..k {
                values.push(match c % 4 {
                    0 => (r * 1000 + r * r) as f64,
                    1 => 1.5e9 + (r as f64).sin(),
                    2 => f64::NAN,
                    _ => -0.0,
                });
            }
        }
        SampleBatch { run: 0, stream: 3, timestamps, values, gap_before: true }
    }

    #[test]
    fn a_packed_batch_reads_back_bit_for_bit_across_blocks() {
        for (rows, k) in [(0, 4), (1, 1), (5, 6), (256, 3), (700, 5)] {
            let b = sample(rows, k);
            let bytes = batch(12, 345, &b);
            let got = decode(&bytes).unwrap();
            assert_eq!((got.seq, got.first, got.samples.stream, got.samples.gap_before), (12, 345, 3, true));
            assert_eq!(got.samples.timestamps, b.timestamps, "{rows} rows");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got.samples.values), bits(&b.values), "{rows} rows of {k}");
        }
    }

    #[test]
    fn counters_take_far_less_than_eight_bytes_a_value() {
        let b = sample(256, 8);
        let per_value = batch(1, 0, &b).len() as f64 / (256.0 * 8.0);
        assert!(per_value < 4.0, "{per_value} bytes a value");
    }

    #[test]
    fn malformed_packed_batches_are_named_not_panicked_on() {
        assert!(decode(b"ZSL2").unwrap_err().contains("cut short"));
        assert!(decode(b"ZSL1....").unwrap_err().contains("not a packed batch"));
        let bytes = batch(7, 0, &sample(10, 2));
        for cut in 5..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).unwrap_err().contains("after its last column"));
        // A huge row count is refused before anything is allocated for it.
        let mut huge = b"ZSL2".to_vec();
        for n in [1u64, 0, 0, u64::MAX >> 1, 1000] {
            put_varint(&mut huge, n);
        }
        huge.push(0);
        assert!(decode(&huge).unwrap_err().contains("are more than its"));
        // A column whose mode is unknown.
        let mut bad = bytes;
        // The header (magic, five one-byte numbers, flags), the first column's length, its mode.
        bad[4 + 5 + 1 + 1] = 0x7f;
        assert!(decode(&bad).unwrap_err().contains("the timestamps of rows 0.."));
    }
}
