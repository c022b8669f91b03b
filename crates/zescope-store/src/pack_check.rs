//! Checking a column read from outside (a session file, the live feed) before it is decoded.

use super::{DELTA, FOR, INT, LINE, MAX_DECIMALS, RUNS, SCALED, XOR, scaled_header, xor};
use crate::bits::checked_varint;

/// Checks that `b` is exactly one encoded column of `n` words (as read from outside, e.g. a
/// session file): a known mode, a width of at most 64 bits, complete headers, and exactly the
/// bytes the words need. A column that passes decodes without reading past its end.
pub fn check(b: &[u8], n: usize) -> Result<(), String> {
    if b.first().is_some_and(|&m| m == SCALED) {
        let (_, _, inner) = scaled_header(b).ok_or_else(|| {
            format!(
                "scaled column: a bad header (decimals above {MAX_DECIMALS}, a factor of 0 or beyond 2^53, or no \
                 integer column inside)"
            )
        })?;
        return check(&b[inner..], n).map_err(|e| format!("scaled column: {e}"));
    }
    let Some(&mode) = b.first() else { return Err("empty column".into()) };
    if !matches!(mode & !INT, FOR | DELTA | XOR | RUNS | LINE) {
        return Err(format!("unknown column mode {mode:#04x}"));
    }
    let mut pos = 1;
    let (width, words) = match mode & !INT {
        XOR => {
            return match xor::decode(&b[1..], n, |_, _| {}) {
                Ok(read) if read + 1 == b.len() => Ok(()),
                Ok(read) => Err(format!("{} bytes left over after {n} values", b.len() - 1 - read)),
                Err(xor::XorError::Short { index }) => Err(format!("column ends inside value {index}")),
                Err(xor::XorError::Control { index, byte }) => {
                    Err(format!("value {index}: bad control byte {byte:#04x}"))
                }
            };
        }
        RUNS => {
            let runs = checked_varint(b, &mut pos).ok_or("column ends in its run count, or it overflows")?;
            if runs > n as u64 || (runs == 0) != (n == 0) {
                return Err(format!("{runs} runs for {n} values"));
            }
            let mut covered = 0u64;
            for r in 0..runs {
                let len = checked_varint(b, &mut pos).ok_or_else(|| format!("column ends inside run {r}"))?;
                checked_varint(b, &mut pos).ok_or_else(|| format!("column ends inside run {r}"))?;
                covered = covered.saturating_add(len).saturating_add(1);
                if covered > n as u64 {
                    return Err(format!("run {r} reaches past the {n} values"));
                }
            }
            if covered != n as u64 {
                return Err(format!("runs cover {covered} of {n} values"));
            }
            return match b.len() - pos {
                0 => Ok(()),
                left => Err(format!("{left} bytes left over after {n} values")),
            };
        }
        form => {
            let width = *b.get(pos).ok_or("column ends in its header")?;
            pos += 1;
            let heads = match form {
                DELTA => 2,
                LINE => 3,
                _ => 1,
            };
            for _ in 0..heads {
                checked_varint(b, &mut pos).ok_or("column ends in its header, or a number overflows")?;
            }
            (width as usize, if form == DELTA { n.saturating_sub(1) } else { n })
        }
    };
    if width > 64 {
        return Err(format!("width of {width} bits"));
    }
    let want = (words * width).div_ceil(8);
    if b.len() - pos != want {
        return Err(format!("{} bytes of packed words where {want} are needed", b.len() - pos));
    }
    Ok(())
}
