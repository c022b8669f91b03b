//! XOR encoding of a run of `f64` bits, shared by the session file's data
//! chunks and the store's sealed blocks.
//!
//! Each value's bits XOR the previous value's bits (the first against 0),
//! written as one control byte (high nibble: zero bytes at the top, low
//! nibble: zero bytes at the bottom) and the bytes in between; `0x80` stands
//! for a repeated value. A repeated value costs 1 byte, a counter moving in its
//! low bits 2–4, an integer-valued reading 3–5, a full-precision noisy float up
//! to 9.

/// Control byte of a value equal to the previous one.
const SAME: u8 = 0x80;

/// Appends the encoding of `bits` to `out`.
pub fn encode(bits: impl Iterator<Item = u64>, out: &mut Vec<u8>) {
    let mut prev = 0u64;
    for v in bits {
        let x = v ^ prev;
        prev = v;
        if x == 0 {
            out.push(SAME);
            continue;
        }
        let lead = x.leading_zeros() / 8;
        let trail = x.trailing_zeros() / 8;
        out.push((lead << 4 | trail) as u8);
        let body = (x >> (trail * 8)).to_le_bytes();
        out.extend_from_slice(&body[..(8 - lead - trail) as usize]);
    }
}

/// Bytes [`encode`] writes for `bits`.
pub(crate) fn encoded_len(bits: impl Iterator<Item = u64>) -> usize {
    let mut prev = 0u64;
    let mut len = 0;
    for v in bits {
        len += value_len(v ^ prev);
        prev = v;
    }
    len
}

/// Bytes [`encode`] writes for a value whose bits XOR the previous value's to `x`.
#[inline(always)]
pub(crate) fn value_len(x: u64) -> usize {
    if x == 0 { 1 } else { 9 - (x.leading_zeros() / 8 + x.trailing_zeros() / 8) as usize }
}

/// What is wrong with an encoded run.
#[derive(Debug, PartialEq, Eq)]
pub enum XorError {
    /// The bytes end inside value `index`.
    Short {
        /// The value the bytes end in.
        index: usize,
    },
    /// Value `index` has an impossible control byte.
    Control {
        /// The value with the bad control byte.
        index: usize,
        /// The byte found.
        byte: u8,
    },
}

/// Decodes `n` values from the start of `b`, handing each one's bits to
/// `f(index, bits)`. Returns the bytes read.
pub fn decode(b: &[u8], n: usize, mut f: impl FnMut(usize, u64)) -> Result<usize, XorError> {
    let (mut pos, mut prev) = (0usize, 0u64);
    for index in 0..n {
        let c = *b.get(pos).ok_or(XorError::Short { index })?;
        pos += 1;
        if c != SAME {
            let (lead, trail) = ((c >> 4) as usize, (c & 15) as usize);
            if lead + trail >= 8 {
                return Err(XorError::Control { index, byte: c });
            }
            let len = 8 - lead - trail;
            let body = b.get(pos..pos + len).ok_or(XorError::Short { index })?;
            pos += len;
            let mut a = [0u8; 8];
            a[..len].copy_from_slice(body);
            prev ^= u64::from_le_bytes(a) << (trail * 8);
        }
        f(index, prev);
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_measures_its_length() {
        let vals = [0.0f64, 0.0, -0.0, 1.5, f64::NAN, 1e300, 1e300, -7.25, f64::INFINITY];
        let mut out = Vec::new();
        encode(vals.iter().map(|v| v.to_bits()), &mut out);
        assert_eq!(out.len(), encoded_len(vals.iter().map(|v| v.to_bits())));
        let mut got = vec![0u64; vals.len()];
        assert_eq!(decode(&out, vals.len(), |i, b| got[i] = b), Ok(out.len()));
        assert_eq!(got, vals.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        assert_eq!(decode(&out[..out.len() - 1], vals.len(), |_, _| {}), Err(XorError::Short { index: 8 }));
        assert_eq!(decode(&[0x44], 1, |_, _| {}), Err(XorError::Control { index: 0, byte: 0x44 }));
    }
}
