//! Reading a recording's journal (version 5, `journal.rs`): its last whole checkpoint, as the
//! bytes of the version 7 file it stands for, which then goes through every check of a session
//! file.
//!
//! The frames are walked from the first: each one's kind, length and checksum are checked, its
//! payload read in pieces of [`PIECE`] (never held whole but for a head's); the walk stops at the
//! first frame that is cut short, of an unknown kind or does not check — where a recording was
//! killed, or the file damaged. The last head before that point is the session; it must name
//! only chunk frames that come before it. Memory: one piece, the head's text and what parsing it
//! makes, and the version 7 file made of it (its head and the named chunks' bytes: at most the
//! journal's size), allocated fallibly after its size is checked against `max`.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;

use super::io;
use super::journal::{CHUNK_FRAME, FRAME_EXTRA, FRAME_HEAD, HEAD_FRAME, JournalHead};
use super::{SessionError, crc};

/// Bytes of a payload read at a time while its checksum is checked.
const PIECE: usize = 1 << 20;

/// Where a journal's bytes are read from: the file, or its bytes in memory.
pub(super) trait Source {
    /// Fills `buf` from byte `at`.
    fn read_at(&self, at: u64, buf: &mut [u8]) -> std::io::Result<()>;
}

impl Source for std::fs::File {
    fn read_at(&self, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.read_exact_at(buf, at)
    }
}

impl Source for [u8] {
    fn read_at(&self, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let from = usize::try_from(at).ok().filter(|&f| f <= self.len());
        match from.and_then(|f| self.get(f..f + buf.len())) {
            Some(b) => {
                buf.copy_from_slice(b);
                Ok(())
            }
            None => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    }
}

fn invalid(message: impl Into<String>) -> SessionError {
    SessionError::invalid("journal", message)
}

/// `len` bytes, allocated fallibly.
fn buffer(len: u64, what: &str) -> Result<Vec<u8>, SessionError> {
    let mut v = Vec::new();
    let n = usize::try_from(len).map_err(|_| invalid(format!("{what} is too large")))?;
    if v.try_reserve_exact(n).is_err() {
        return Err(invalid(format!("cannot allocate the {n} bytes of {what}: out of memory")));
    }
    v.resize(n, 0);
    Ok(v)
}

/// The frame at `at` when it is whole and checks: its kind and payload length.
fn frame(src: &(impl Source + ?Sized), at: u64, end: u64, piece: &mut Vec<u8>) -> Option<(u8, u64)> {
    let mut head = [0u8; FRAME_HEAD];
    if end.checked_sub(at)? < FRAME_EXTRA {
        return None;
    }
    src.read_at(at, &mut head).ok()?;
    let kind = head[0];
    let len = u64::from_le_bytes(head[1..].try_into().ok()?);
    if kind != CHUNK_FRAME && kind != HEAD_FRAME {
        return None;
    }
    let stop = at.checked_add(FRAME_EXTRA)?.checked_add(len).filter(|&e| e <= end)?;
    let mut sum = crc::update(!0, &head);
    let mut pos = at + FRAME_HEAD as u64;
    let body_end = stop - crc::CRC_BYTES as u64;
    while pos < body_end {
        let n = (body_end - pos).min(PIECE as u64) as usize;
        piece.resize(n, 0);
        src.read_at(pos, piece).ok()?;
        sum = crc::update(sum, piece);
        pos += n as u64;
    }
    let mut stored = [0u8; crc::CRC_BYTES];
    src.read_at(body_end, &mut stored).ok()?;
    (u32::from_le_bytes(stored) == !sum).then_some((kind, len))
}

/// The version 7 file that the journal in `src` stands for: its frames run from byte `start`
/// to `end`; the result may take at most `max` bytes (module docs).
pub(super) fn image(src: &(impl Source + ?Sized), start: u64, end: u64, max: u64) -> Result<Vec<u8>, SessionError> {
    // Chunk frames by offset (their payload's length), and the last head.
    let mut chunks: HashMap<u64, u64> = HashMap::new();
    let mut head: Option<(u64, u64)> = None;
    let mut heads = 0u64;
    let mut piece = Vec::new();
    let mut at = start;
    while let Some((kind, len)) = frame(src, at, end, &mut piece) {
        if kind == CHUNK_FRAME {
            chunks.insert(at, len);
        } else {
            head = Some((at, len));
            heads += 1;
        }
        at += len + FRAME_EXTRA;
    }
    drop(piece);
    let Some((head_at, head_len)) = head else {
        return Err(invalid(
            "a recording that was stopped before its first checkpoint was whole: there are no samples in it to recover",
        ));
    };
    if head_len > max {
        return Err(SessionError::TooLarge { file: format!("journal: checkpoint {heads}"), size: head_len, max });
    }
    let mut text = buffer(head_len, "the last checkpoint's head")?;
    src.read_at(head_at + FRAME_HEAD as u64, &mut text)
        .map_err(|e| invalid(format!("cannot read the last checkpoint's head: {e}")))?;
    let text = String::from_utf8(text).map_err(|e| invalid(format!("checkpoint {heads}: not text: {e}")))?;
    let head: JournalHead = ron::Options::default().from_str(&text).map_err(|e| {
        let e = SessionError::from_ron(e);
        invalid(format!("checkpoint {heads}: {e}"))
    })?;
    drop(text);
    if head.chunks.len() != head.session.streams.len() {
        let msg = format!(
            "checkpoint {heads}: chunk lists for {} of {} streams",
            head.chunks.len(),
            head.session.streams.len()
        );
        return Err(invalid(msg));
    }
    let mut data_len = 0u64;
    for (i, list) in head.chunks.iter().enumerate() {
        for (c, off) in list.iter().enumerate() {
            let len = chunks.get(off).filter(|_| *off < head_at).ok_or_else(|| {
                invalid(format!(
                    "checkpoint {heads}: streams[{i}].raw.chunks[{c}] names byte {off}, where no chunk of it is"
                ))
            })?;
            data_len = data_len.saturating_add(len + 10);
        }
    }
    let mut out = Vec::new();
    io::write_text_head(&head.session, &mut out)?;
    let total = data_len.saturating_add(out.len() as u64);
    if total > max {
        return Err(SessionError::TooLarge { file: format!("journal: checkpoint {heads}"), size: total, max });
    }
    if out.try_reserve_exact(data_len as usize).is_err() {
        return Err(invalid(format!("cannot allocate the {data_len} bytes of its samples: out of memory")));
    }
    for off in head.chunks.iter().flatten() {
        let len = chunks[off];
        zescope_store::bits::put_varint(&mut out, len);
        let from = out.len();
        out.resize(from + len as usize, 0);
        src.read_at(off + FRAME_HEAD as u64, &mut out[from..])
            .map_err(|e| invalid(format!("cannot read the chunk at byte {off}: {e}")))?;
    }
    Ok(out)
}
