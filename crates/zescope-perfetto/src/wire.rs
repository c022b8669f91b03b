//! Protobuf wire format, the part a trace writer needs: varints, tags, fixed 64-bit doubles and
//! length-delimited fields, appended to a `Vec<u8>`.

/// Wire type of varint fields (integers, enums, bools).
const VARINT: u32 = 0;
/// Wire type of fixed 64-bit fields (doubles).
const FIXED64: u32 = 1;
/// Wire type of length-delimited fields (strings, bytes, nested messages).
const LEN: u32 = 2;

/// Appends `v` as a base-128 varint.
pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a field's tag (its number and wire type).
fn tag(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, u64::from(field << 3 | wire));
}

/// Appends a varint field (uint64, uint32, int32 ≥ 0, enum, bool).
pub(crate) fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, VARINT);
    varint(out, v);
}

/// Appends an int64 field (a negative value takes ten bytes, as protobuf's int64 does).
pub(crate) fn int(out: &mut Vec<u8>, field: u32, v: i64) {
    uint(out, field, v as u64);
}

/// Appends a double field.
pub(crate) fn double(out: &mut Vec<u8>, field: u32, v: f64) {
    tag(out, field, FIXED64);
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends the tag and length of a length-delimited field whose `len` bytes the caller appends.
pub(crate) fn len_head(out: &mut Vec<u8>, field: u32, len: usize) {
    tag(out, field, LEN);
    varint(out, len as u64);
}

/// Appends a length-delimited field holding `bytes` (a string's UTF-8, or an encoded message).
pub(crate) fn bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    len_head(out, field, bytes.len());
    out.extend_from_slice(bytes);
}

/// Appends a string field.
pub(crate) fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    bytes(out, field, s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_little_endian_groups_of_seven_bits() {
        let enc = |v| {
            let mut out = Vec::new();
            varint(&mut out, v);
            out
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(1), [1]);
        assert_eq!(enc(127), [127]);
        assert_eq!(enc(128), [0x80, 1]);
        assert_eq!(enc(300), [0xac, 0x02]);
        assert_eq!(enc(u64::MAX), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1]);
    }

    #[test]
    fn fields_carry_number_and_wire_type() {
        let mut out = Vec::new();
        uint(&mut out, 1, 150);
        assert_eq!(out, [0x08, 0x96, 0x01]);
        out.clear();
        string(&mut out, 2, "testing");
        assert_eq!(out, [0x12, 7, b't', b'e', b's', b't', b'i', b'n', b'g']);
        out.clear();
        double(&mut out, 44, 1.0);
        assert_eq!(&out[..2], [0xe1, 0x02]);
        assert_eq!(&out[2..], 1.0f64.to_le_bytes());
        out.clear();
        int(&mut out, 4, -1);
        assert_eq!(out.len(), 11);
    }
}
