//! Bit-level primitives of the store's column encodings (`pack.rs`) and the session files
//! that reuse them: zigzag signed integers, LEB128 varints, and words bit-packed LSB first at a
//! fixed width.

/// Maps a signed integer to an unsigned one so small magnitudes stay small (0, -1, 1, -2 → 0, 1, 2, 3).
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// Appends `v` as LEB128.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos` (a truncated one reads as what it has).
pub(crate) fn varint(b: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = b.get(*pos) else { break };
        *pos += 1;
        v |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            break;
        }
    }
    v
}

pub(crate) fn width_of(range: u64) -> u32 {
    64 - range.leading_zeros()
}

/// Appends `words` bit-packed at `width` bits each (every word below `2^width`).
pub(crate) fn pack(words: impl Iterator<Item = u64>, width: u32, out: &mut Vec<u8>) {
    if width == 0 {
        return;
    }
    out.reserve((words.size_hint().0 * width as usize).div_ceil(8) + 8);
    let (mut acc, mut bits) = (0u64, 0u32);
    for w in words {
        acc |= w << bits;
        bits += width;
        if bits >= 64 {
            out.extend_from_slice(&acc.to_le_bytes());
            bits -= 64;
            // The top `bits` bits of `w` did not fit.
            acc = if bits == 0 { 0 } else { w >> (width - bits) };
        }
    }
    out.extend_from_slice(&acc.to_le_bytes()[..bits.div_ceil(8) as usize]);
}

/// Calls `f(i, word)` for the `n` words packed at `width` bits in `b`.
#[inline]
pub(crate) fn unpack(b: &[u8], width: u32, n: usize, mut f: impl FnMut(usize, u64)) {
    if width == 0 {
        (0..n).for_each(|i| f(i, 0));
        return;
    }
    let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
    let (mut acc, mut bits, mut pos) = (0u128, 0u32, 0usize);
    for i in 0..n {
        while bits < width {
            if let Some(w) = b.get(pos..pos + 8) {
                let mut a = [0u8; 8];
                a.copy_from_slice(w);
                acc |= (u64::from_le_bytes(a) as u128) << bits;
                pos += 8;
                bits += 64;
            } else {
                acc |= (b.get(pos).copied().unwrap_or(0) as u128) << bits;
                pos += 1;
                bits += 8;
            }
        }
        f(i, acc as u64 & mask);
        acc >>= width;
        bits -= width;
    }
}

/// Word `i` of those packed at `width` bits in `b`.
pub(crate) fn unpack_one(b: &[u8], width: u32, i: usize) -> u64 {
    if width == 0 {
        return 0;
    }
    let bit = i * width as usize;
    let mut a = [0u8; 16];
    for (k, slot) in a.iter_mut().enumerate().take(9) {
        *slot = b.get(bit / 8 + k).copied().unwrap_or(0);
    }
    let v = (u128::from_le_bytes(a) >> (bit % 8)) as u64;
    if width == 64 { v } else { v & ((1u64 << width) - 1) }
}

/// The sum (mod 2^64) of the first `n` words packed at `width` bits in `b`, as [`unpack`] reads
/// them (bytes past the end read as 0). Up to 56 bits a word lies within 8 bytes from the byte
/// it starts in, so each is one load and a shift, independent of the others.
pub(crate) fn sum_packed(b: &[u8], width: u32, n: usize) -> u64 {
    if width == 0 || width > 56 {
        let mut sum = 0u64;
        unpack(b, width, n, |_, w| sum = sum.wrapping_add(w));
        return sum;
    }
    let w = width as usize;
    let mask = (1u64 << width) - 1;
    // Words whose 8 bytes are all inside `b`.
    let whole = if b.len() >= 8 { ((b.len() - 8) * 8 / w + 1).min(n) } else { 0 };
    let mut sum = 0u64;
    for i in 0..whole {
        let bit = i * w;
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[bit / 8..bit / 8 + 8]);
        sum = sum.wrapping_add((u64::from_le_bytes(a) >> (bit % 8)) & mask);
    }
    (whole..n).fold(sum, |sum, i| sum.wrapping_add(unpack_one(b, width, i)))
}

/// Bytes of a LEB128 varint of `v`.
pub(crate) fn varint_len(v: u64) -> usize {
    (64 - v.leading_zeros()).max(1).div_ceil(7) as usize
}

/// A varint at `*pos`, or `None` when the bytes end inside it or it overflows 64 bits.
pub fn checked_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos)?;
        *pos += 1;
        if shift == 63 && byte > 1 {
            return None;
        }
        v |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}
