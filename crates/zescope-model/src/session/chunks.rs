//! A session file's raw chunks as the reader finds them: in memory (version 1's text inline in
//! the RON, or the bytes of a data section read whole), or left in the file where a reader
//! that must not hold the file (the progressive open, `load_job.rs`) reads them one at a time.
//!
//! In the file, the data section is scanned once when the file is checked, without holding it
//! (a buffered read that skips each chunk's bytes): per stream, where its chunks start, the
//! bytes they take and its first and last chunk. The reader then reads a stream's chunks in
//! order from there ([`ChunkCursor`]), each into memory of its own size, and checks its
//! checksum before anything of it is used. What a reader holds for the data section is thus
//! one scan buffer and the chunks it is decoding, whatever the file's size.

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::os::unix::fs::FileExt;

use super::codec;
use super::convert::chunk_sizes;
use super::error::SessionError;
use super::format::RawFile;
use super::{crc, packed};

/// One raw chunk as the file holds it.
#[derive(Clone, Copy)]
pub(super) enum Chunk<'a> {
    /// Version 1: base64 text of the XOR encoding (`codec.rs`), inline in the RON.
    Text(&'a str),
    /// Versions 2 and 3: bytes of the data section (`packed.rs`).
    Packed(&'a [u8]),
    /// Version 4: bytes of the data section followed by their CRC-32C (`crc.rs`).
    Sealed(&'a [u8]),
}

/// The first version whose data chunks carry checksums.
pub(super) const SEALED_VERSION: u32 = 4;

/// Where one chunk is in the file: its bytes (after its length) and how many.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Extent {
    /// Offset of its first byte in the file.
    pub offset: u64,
    /// Its length in bytes (with its checksum in version 4).
    pub len: u64,
}

/// One stream's chunks left in the file (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(super) struct InFile {
    /// Where its first chunk's length is.
    pub start: u64,
    /// Its chunks.
    pub count: usize,
    /// Bytes its chunks take, with their checksums (not their lengths).
    pub bytes: u64,
    /// Bytes of encoded samples: `bytes` less the checksums.
    pub data_bytes: u64,
    /// Its first and last chunk.
    pub first: Option<Extent>,
    /// See `first`.
    pub last: Option<Extent>,
}

/// One stream's raw chunks.
pub(super) enum StreamChunks<'a> {
    /// In memory.
    Listed(Vec<Chunk<'a>>),
    /// In the file.
    InFile(InFile),
}

impl StreamChunks<'_> {
    /// Bytes of the file the stream's chunks take (their base64 text in version 1).
    pub(super) fn bytes(&self) -> u64 {
        match self {
            StreamChunks::Listed(c) => c.iter().map(|c| c.len() as u64).sum(),
            StreamChunks::InFile(f) => f.bytes,
        }
    }

    /// Bytes of encoded samples (without checksums).
    pub(super) fn data_bytes(&self) -> u64 {
        match self {
            StreamChunks::Listed(c) => c.iter().map(|c| c.data_len() as u64).sum(),
            StreamChunks::InFile(f) => f.data_bytes,
        }
    }
}

/// The data section a file's chunks are taken from, front first.
pub(super) enum DataSection<'a> {
    /// Its bytes, in memory.
    Bytes(&'a [u8]),
    /// Left in the file, scanned.
    File(FileScan),
}

impl DataSection<'_> {
    /// Bytes not yet taken.
    pub(super) fn remaining(&self) -> u64 {
        match self {
            DataSection::Bytes(b) => b.len() as u64,
            DataSection::File(f) => f.end - f.pos,
        }
    }
}

/// A buffered scan of a file's data section (see the module docs).
pub(super) struct FileScan {
    reader: BufReader<File>,
    pos: u64,
    end: u64,
}

impl FileScan {
    /// The data section of `file` from byte `start` to `end` (the file's length).
    pub(super) fn new(file: File, start: u64, end: u64) -> std::io::Result<FileScan> {
        let mut reader = BufReader::with_capacity(64 << 10, file);
        reader.seek(std::io::SeekFrom::Start(start))?;
        Ok(FileScan { reader, pos: start, end })
    }

    /// The next chunk's extent, its bytes skipped; `None` where the section ends inside its
    /// length or its bytes (or cannot be read).
    fn next_extent(&mut self) -> Option<Extent> {
        let mut len = 0u64;
        for shift in (0..64).step_by(7) {
            if self.pos >= self.end {
                return None;
            }
            let mut b = [0u8];
            self.reader.read_exact(&mut b).ok()?;
            self.pos += 1;
            if shift == 63 && b[0] > 1 {
                return None;
            }
            len |= u64::from(b[0] & 0x7f) << shift;
            if b[0] & 0x80 == 0 {
                let offset = self.pos;
                let end = offset.checked_add(len).filter(|&e| e <= self.end)?;
                self.reader.seek_relative(i64::try_from(len).ok()?).ok()?;
                self.pos = end;
                return Some(Extent { offset, len });
            }
        }
        None
    }
}

/// Splits stream `field`'s chunks off the front of the data section `data` (`sealed`: version
/// 4's, each with its checksum).
pub(super) fn packed_chunks<'a>(
    field: &str,
    raw: &RawFile,
    data: &mut DataSection<'a>,
    sealed: bool,
) -> Result<StreamChunks<'a>, SessionError> {
    if !raw.chunks.is_empty() {
        let msg = "a file with a data section keeps its chunks there; this list must be empty";
        return Err(SessionError::invalid(format!("{field}.raw.chunks"), msg));
    }
    let ends = |c: usize| {
        SessionError::invalid(format!("{field}.raw.chunks[{c}]"), "the data section ends inside or before it")
    };
    // Each chunk takes at least one byte, so this stops within the data section's length.
    match data {
        DataSection::Bytes(bytes) => {
            let mut out = Vec::new();
            let mut pos = 0;
            for (c, _) in chunk_sizes(raw.first_ordinal, raw.samples).enumerate() {
                let b = packed::piece(bytes, &mut pos).ok_or_else(|| ends(c))?;
                out.push(if sealed { Chunk::Sealed(b) } else { Chunk::Packed(b) });
            }
            *bytes = &bytes[pos..];
            Ok(StreamChunks::Listed(out))
        }
        DataSection::File(scan) => {
            let mut s = InFile { start: scan.pos, count: 0, bytes: 0, data_bytes: 0, first: None, last: None };
            for (c, _) in chunk_sizes(raw.first_ordinal, raw.samples).enumerate() {
                let e = scan.next_extent().ok_or_else(|| ends(c))?;
                s.first.get_or_insert(e);
                s.last = Some(e);
                s.count += 1;
                s.bytes += e.len;
                s.data_bytes += if sealed { e.len.saturating_sub(crc::CRC_BYTES as u64) } else { e.len };
            }
            Ok(StreamChunks::InFile(s))
        }
    }
}

/// Reads one stream's chunks from the file in order, from [`InFile::start`].
pub(super) struct ChunkCursor {
    next: u64,
}

impl ChunkCursor {
    /// At the stream's first chunk.
    pub(super) fn new(s: &InFile) -> ChunkCursor {
        ChunkCursor { next: s.start }
    }

    /// The next chunk's extent (its length read from the file); the cursor moves past it.
    pub(super) fn next_extent(&mut self, file: &File) -> std::io::Result<Extent> {
        let mut head = [0u8; 10];
        let got = read_some_at(file, &mut head, self.next)?;
        let mut pos = 0;
        let len = zescope_store::bits::checked_varint(&head[..got], &mut pos)
            .ok_or_else(|| std::io::Error::other("the chunk's length is unreadable (the file changed?)"))?;
        let e = Extent { offset: self.next + pos as u64, len };
        self.next = e.offset.saturating_add(len);
        Ok(e)
    }
}

/// Reads as much of `buf` as the file holds at `at`.
fn read_some_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// `len` zeroed values, or an error naming what they were for when memory for them cannot be
/// had (the allocation is tried first, never aborted on).
pub(super) fn zeroed<T: Clone + Default>(len: usize, what: impl FnOnce() -> String) -> Result<Vec<T>, SessionError> {
    let mut v = Vec::new();
    if v.try_reserve_exact(len).is_err() {
        let bytes = crate::view::text::bytes(len.saturating_mul(std::mem::size_of::<T>()));
        return Err(SessionError::invalid(what(), format!("cannot allocate {bytes} for its samples: out of memory")));
    }
    v.resize(len, T::default());
    Ok(v)
}

/// Reads the chunk at `e` (named `field` in errors) into memory of its size, allocated
/// fallibly, and checks its checksum (`sealed`) before returning its encoded bytes.
pub(super) fn read_chunk(file: &File, e: Extent, sealed: bool, field: &str) -> Result<Vec<u8>, SessionError> {
    let len = usize::try_from(e.len).map_err(|_| SessionError::invalid(field, "too long to read"))?;
    let mut bytes = zeroed::<u8>(len, || field.to_owned())?;
    file.read_exact_at(&mut bytes, e.offset)
        .map_err(|err| SessionError::invalid(field, format!("cannot read its bytes: {err}")))?;
    if sealed {
        crc::open(&bytes).map_err(|m| SessionError::invalid(field, m))?;
        bytes.truncate(len - crc::CRC_BYTES);
    }
    Ok(bytes)
}

impl Chunk<'_> {
    /// Bytes of the file the chunk takes (its base64 text in version 1).
    pub(super) fn len(&self) -> usize {
        match self {
            Chunk::Text(t) => t.len(),
            Chunk::Packed(b) | Chunk::Sealed(b) => b.len(),
        }
    }

    /// Bytes of encoded samples: [`len`](Self::len) without the checksum.
    fn data_len(&self) -> usize {
        match self {
            Chunk::Sealed(b) => b.len().saturating_sub(crc::CRC_BYTES),
            c => c.len(),
        }
    }

    /// Decodes the chunk's `ts.len()` samples of `values.len() / ts.len()` series.
    pub(super) fn decode(&self, ts: &mut [i64], values: &mut [f64]) -> Result<(), codec::CodecError> {
        let n = if ts.is_empty() { 0 } else { values.len() / ts.len() };
        match *self {
            Chunk::Text(text) => codec::decode_raw(text, ts.len(), n, ts, values),
            Chunk::Packed(bytes) => packed::decode_chunk(bytes, ts.len(), n, ts, values),
            Chunk::Sealed(sealed) => {
                let bytes = crc::open(sealed).map_err(codec::CodecError)?;
                packed::decode_chunk(bytes, ts.len(), n, ts, values)
            }
        }
    }

    /// Decodes samples `from..from + ts.len()` of the chunk's `expected` samples of `n` series
    /// (a piece of it: `from` a multiple of the block size, the piece whole blocks unless it
    /// ends the chunk). The checksum of a sealed chunk is checked with its first piece (`from`
    /// 0): a reader hands the pieces of a chunk over in order, so a damaged chunk is refused
    /// before any of it is used.
    pub(super) fn decode_rows(
        &self,
        expected: usize,
        n: usize,
        from: usize,
        ts: &mut [i64],
        values: &mut [f64],
    ) -> Result<(), codec::CodecError> {
        match *self {
            Chunk::Text(text) => codec::decode_raw_rows(text, expected, n, from, ts, values),
            Chunk::Packed(bytes) => packed::decode_rows(bytes, expected, n, from, ts, values),
            Chunk::Sealed(sealed) => {
                let bytes = if from == 0 {
                    crc::open(sealed).map_err(codec::CodecError)?
                } else {
                    &sealed[..sealed.len().saturating_sub(crc::CRC_BYTES)]
                };
                packed::decode_rows(bytes, expected, n, from, ts, values)
            }
        }
    }
}
