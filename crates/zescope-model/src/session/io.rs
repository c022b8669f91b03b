//! Reading and writing session files: atomic replacement on save, caps and
//! format/version dispatch on load.
//!
//! Saving writes a temporary file next to the target (same directory, so the
//! rename cannot cross file systems), flushes and fsyncs it, renames it over
//! the target and fsyncs the directory. Until the rename the old file is
//! untouched; after it the new one is complete and durable. A crash or kill at
//! any point leaves one or the other, plus at worst a stray `.*.tmp-*` file.
//!
//! Symbolic links are followed on purpose: saving to a link replaces the file it points at
//! (the link stays), and the new file takes the old one's mode and owner; a save that could not
//! keep the owner is refused with a message, as is a chain of links that does not end (a loop).
//! A hard-linked file is replaced by a new one (its other names keep the old contents), as
//! every atomic save does.
//!
//! Loading bounds what a file can make zescope allocate: the size is checked before anything is
//! read (only regular files are read), the file is at most [`MAX_FILE_BYTES`] and, for a
//! one-shot load, at most the memory cap (`super::load_with_cap`). RON parsing holds the text
//! plus the parsed strings (at most the text again); decoded samples take at most 8 bytes per
//! base64-decoded byte in version 1 (each sample needs at least one byte per value and per
//! timestamp) and 512 bytes per byte of the data section in versions 2 to 4 (a 256-sample column
//! takes at least 4 bytes). On top of that, a one-shot load refuses, before allocating them,
//! decoded samples and coarse history that would take the file, its parsed text and them past
//! the memory cap (`convert::Budget`): peak memory ≤ 2 × file + decoded ≤ about the cap
//! (`docs/untrusted-input.md`, measured by `tests/commands/hostile_bounds.rs`). Errors name the file
//! (`TooLarge`, `Io`), or the field and the line/column (the caller adds the file name).

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::SessionError;
use super::format::{CURRENT_VERSION, FORMAT_NAME, Header, SessionFile};

/// Largest session file zescope opens.
pub const MAX_FILE_BYTES: u64 = 16 << 30;
/// First line of every session file.
pub(super) const FILE_COMMENT: &str = "// zescope session file; format: docs/session-format.md\n";

fn ron_options() -> ron::Options {
    // The default recursion limit (128) stops deeply nested junk early.
    ron::Options::default()
}

fn pretty() -> ron::ser::PrettyConfig {
    // Strings are written unescaped (raw `r#"..."#` when they hold quotes or
    // backslashes): escaping goes char by char and the data chunks are long.
    ron::ser::PrettyConfig::new().indentor("    ").struct_names(false).escape_strings(false)
}

/// Serialise a file to `w` (the comment line, then pretty RON).
pub(super) fn write_ron(file: &SessionFile, w: impl Write) -> Result<(), SessionError> {
    let mut w = BufWriter::with_capacity(1 << 20, w);
    w.write_all(FILE_COMMENT.as_bytes()).map_err(|e| SessionError::Encode(e.to_string()))?;
    ron_options().to_io_writer_pretty(&mut w, file, pretty()).map_err(|e| SessionError::Encode(e.to_string()))?;
    w.write_all(b"\n").and_then(|_| w.flush()).map_err(|e| SessionError::Encode(e.to_string()))
}

/// Second line of a file with a data section (version 2 and later): the RON text's length in bytes follows, then a newline; the
/// binary data section starts right after that many bytes of RON.
pub(super) const DATA_LINE: &str = "// binary data after the RON text of this many bytes: ";

/// Writes the text part of a file with a data section (version 2 and later; zescope writes the
/// current version): the comment lines, then the RON of `file` (whose raw chunks are empty: the
/// data section follows, written by the caller).
pub(super) fn write_text_head(file: &SessionFile, w: &mut impl Write) -> Result<(), SessionError> {
    let mut ron = ron_options().to_string_pretty(file, pretty()).map_err(|e| SessionError::Encode(e.to_string()))?;
    ron.push('\n');
    let head = format!("{FILE_COMMENT}{DATA_LINE}{}\n", ron.len());
    w.write_all(head.as_bytes())
        .and_then(|_| w.write_all(ron.as_bytes()))
        .map_err(|e| SessionError::Encode(e.to_string()))
}

/// A file's bytes split into its RON text and, for version 2, its binary data section.
pub(super) fn split(bytes: &[u8]) -> Result<(&str, Option<&[u8]>), SessionError> {
    let not_text = |at: usize| SessionError::NotASession(format!("not text (invalid UTF-8 at byte {at})"));
    let head = FILE_COMMENT.len() + DATA_LINE.len();
    if bytes.starts_with(FILE_COMMENT.as_bytes()) && bytes[FILE_COMMENT.len()..].starts_with(DATA_LINE.as_bytes()) {
        let digits = bytes[head..].iter().take_while(|c| c.is_ascii_digit()).count();
        let len = std::str::from_utf8(&bytes[head..head + digits]).ok().and_then(|d| d.parse::<usize>().ok());
        let start = head + digits + 1;
        let end = len.and_then(|l| start.checked_add(l));
        let (Some(end), Some(b'\n')) = (end, bytes.get(head + digits)) else {
            return Err(SessionError::invalid("line 2", "the length of the RON text is not a number on its own line"));
        };
        if end > bytes.len() {
            let msg = format!("the RON text is said to take {} bytes, more than the file holds", end - start);
            return Err(SessionError::invalid("line 2", msg));
        }
        let text = std::str::from_utf8(&bytes[..end]).map_err(|e| not_text(e.valid_up_to()))?;
        return Ok((text, Some(&bytes[end..])));
    }
    std::str::from_utf8(bytes).map(|t| (t, None)).map_err(|e| not_text(e.valid_up_to()))
}

/// The head of the file `f` of `size` bytes, read without its data section: the two comment
/// lines and the RON text of a file with a data section (whose data starts where the head
/// ends), or all of a version 1 file (all text). Allocated fallibly, for its size.
pub(super) fn read_head(f: &File, size: u64, path: &Path) -> Result<Vec<u8>, SessionError> {
    use std::os::unix::fs::FileExt;
    let read = |len: u64| -> Result<Vec<u8>, SessionError> {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let mut bytes = Vec::new();
        if bytes.try_reserve_exact(len).is_err() {
            let msg = format!("cannot allocate the {len} bytes of its text to read it: out of memory");
            return Err(SessionError::invalid(path.display().to_string(), msg));
        }
        bytes.resize(len, 0);
        f.read_exact_at(&mut bytes, 0).map_err(|e| SessionError::io(path, "cannot read", e))?;
        Ok(bytes)
    };
    let lines = (FILE_COMMENT.len() + DATA_LINE.len() + 21) as u64;
    let first = read(size.min(lines))?;
    let head = FILE_COMMENT.len() + DATA_LINE.len();
    if !(first.starts_with(FILE_COMMENT.as_bytes()) && first[FILE_COMMENT.len()..].starts_with(DATA_LINE.as_bytes())) {
        return read(size);
    }
    let digits = first[head..].iter().take_while(|c| c.is_ascii_digit()).count();
    let len = std::str::from_utf8(&first[head..head + digits]).ok().and_then(|d| d.parse::<u64>().ok());
    match (len.and_then(|l| l.checked_add((head + digits + 1) as u64)), first.get(head + digits)) {
        // `split` says what is wrong with either.
        (Some(end), Some(b'\n')) if end <= size => read(end),
        _ => Ok(first),
    }
}

/// Serialise a file to a string (tests, the example).
pub(super) fn to_ron_string(file: &SessionFile) -> Result<String, SessionError> {
    let mut out = Vec::new();
    write_ron(file, &mut out)?;
    String::from_utf8(out).map_err(|e| SessionError::Encode(e.to_string()))
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The temporary file a save of `path` writes first.
fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map_or_else(|| "session".into(), |n| n.to_string_lossy().into_owned());
    let k = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.tmp-{}-{k}", std::process::id()))
}

/// How many symbolic links a save follows before it gives up (a loop, or a chain nobody meant).
const MAX_LINK_HOPS: usize = 40;

/// The file a save of `path` really replaces: `path` itself, or, when it is a symbolic link, the
/// file the chain of links ends at (which may not exist yet). Saving through a link writes its
/// target, so the link stays a link.
pub(super) fn save_target(path: &Path) -> Result<PathBuf, SessionError> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINK_HOPS {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&at).map_err(|e| SessionError::io(&at, "cannot read the link", e))?;
                at = match at.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(m) if !m.is_file() => {
                return Err(SessionError::invalid(
                    at.display().to_string(),
                    "is not a regular file; choose another name to save to",
                ));
            }
            _ => return Ok(at),
        }
    }
    Err(SessionError::invalid(
        path.display().to_string(),
        format!("more than {MAX_LINK_HOPS} symbolic links in a row (a loop?); not saving through it"),
    ))
}

/// Give the new file `f` the mode and owner of the file it replaces (`old`), so a save never
/// widens or narrows who may read a session. Refuses when the owner cannot be kept (the file
/// belongs to someone else): replacing it would hand it to the current user.
fn keep_mode_and_owner(f: &File, tmp: &Path, old: &std::fs::Metadata, target: &Path) -> Result<(), SessionError> {
    use std::os::unix::fs::MetadataExt;
    let mine = f.metadata().map_err(|e| SessionError::io(tmp, "cannot stat", e))?;
    if (mine.uid(), mine.gid()) != (old.uid(), old.gid()) {
        std::os::unix::fs::fchown(f, Some(old.uid()), Some(old.gid())).map_err(|e| {
            SessionError::invalid(
                target.display().to_string(),
                format!(
                    "belongs to user {} group {}, which a save could not keep ({e}); save under another name",
                    old.uid(),
                    old.gid()
                ),
            )
        })?;
    }
    f.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))
        .map_err(|e| SessionError::io(tmp, "cannot set permissions", e))
}

/// Whether a save of `path` could be written: its target resolved as a save resolves it
/// (`save_target`) and the temporary file a save writes first created and removed again. A
/// recording checks this before it samples, so a mistyped directory is refused at once rather
/// than when the recording is written.
pub fn check_writable(path: &Path) -> Result<(), SessionError> {
    let target = save_target(path)?;
    let tmp = temp_path(&target);
    File::options().write(true).create_new(true).open(&tmp).map_err(|e| {
        let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        SessionError::invalid(target.display().to_string(), format!("cannot be written in {}: {e}", dir.display()))
    })?;
    std::fs::remove_file(&tmp).map_err(|e| SessionError::io(&tmp, "cannot remove", e))
}

/// Replace `path` atomically with what `write` produces (see the module docs). When `path` is a
/// symbolic link, its target is replaced (`save_target`); an existing file keeps its mode
/// and owner.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut File) -> Result<(), SessionError>,
) -> Result<(), SessionError> {
    replace_keeping(path, write).map(drop)
}

/// [`write_atomic`], returning the new file, open for reading and writing (a recording's
/// journal goes on appending to it: `journal.rs`).
pub(super) fn replace_keeping(
    path: &Path,
    write: impl FnOnce(&mut File) -> Result<(), SessionError>,
) -> Result<File, SessionError> {
    let target = save_target(path)?;
    let old = std::fs::metadata(&target).ok();
    let tmp = temp_path(&target);
    let result = (|| {
        let mut f = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| SessionError::io(&tmp, "cannot create", e))?;
        if let Some(old) = &old {
            keep_mode_and_owner(&f, &tmp, old, &target)?;
        }
        write(&mut f)?;
        f.sync_all().map_err(|e| SessionError::io(&tmp, "cannot sync", e))?;
        std::fs::rename(&tmp, &target).map_err(|e| SessionError::io(&target, "cannot replace", e))?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        // Make the rename itself durable.
        File::open(dir).and_then(|d| d.sync_all()).map_err(|e| SessionError::io(dir, "cannot sync directory", e))?;
        Ok(f)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Open `path` for reading outside bytes: a regular file (a FIFO or a device would block or
/// never end) of at most `max` bytes, checked before anything is read. With `follow: false` a
/// symbolic link is refused instead of followed (`O_NOFOLLOW`). Returns the file and its size.
pub(super) fn open_bounded(path: &Path, max: u64, follow: bool) -> Result<(File, u64), SessionError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut opts = File::options();
    opts.read(true).custom_flags(libc::O_NONBLOCK | if follow { 0 } else { libc::O_NOFOLLOW });
    let f = opts.open(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) if !follow => {
            SessionError::invalid(path.display().to_string(), "is a symbolic link, which zescope did not create")
        }
        _ => SessionError::io(path, "cannot open", e),
    })?;
    let meta = f.metadata().map_err(|e| SessionError::io(path, "cannot stat", e))?;
    if !meta.is_file() {
        return Err(SessionError::invalid(path.display().to_string(), "is not a regular file"));
    }
    if meta.len() > max {
        return Err(SessionError::TooLarge { file: path.display().to_string(), size: meta.len(), max });
    }
    Ok((f, meta.len()))
}

/// Read a file of at most `max` bytes. The size is checked before reading and the read stops
/// at `max + 1` bytes (a file that grows meanwhile is refused), so this allocates at most
/// `max + 1` bytes, and no more than the file holds. With `follow: false` a symbolic link is
/// refused.
pub(super) fn read_bytes(path: &Path, max: u64, follow: bool) -> Result<Vec<u8>, SessionError> {
    let (f, size) = open_bounded(path, max, follow)?;
    let mut bytes = Vec::new();
    if bytes.try_reserve_exact(size as usize).is_err() {
        let msg = format!("cannot allocate the {size} bytes it holds to read it: out of memory");
        return Err(SessionError::invalid(path.display().to_string(), msg));
    }
    f.take(max + 1).read_to_end(&mut bytes).map_err(|e| SessionError::io(path, "cannot read", e))?;
    if bytes.len() as u64 > max {
        return Err(SessionError::TooLarge { file: path.display().to_string(), size: bytes.len() as u64, max });
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text.
pub(super) fn read_text_from(path: &Path, max: u64, follow: bool) -> Result<String, SessionError> {
    let bytes = read_bytes(path, max, follow)?;
    String::from_utf8(bytes).map_err(|e| {
        SessionError::NotASession(format!(
            "{}: not text (invalid UTF-8 at byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Parse session text of any version this build reads into the current form.
///
/// The common case (the current version) parses once. When that fails, the
/// header alone says why: another format, a newer version (refused with a
/// clear message), or an older one, which is parsed as that version and
/// migrated (`upgrade`).
pub(super) fn parse(text: &str) -> Result<SessionFile, SessionError> {
    let first = ron_options().from_str::<SessionFile>(text);
    let header = match &first {
        Ok(f) => Header { format: f.format.clone(), version: f.version },
        Err(e) => match ron_options().from_str::<Header>(text) {
            Ok(h) => h,
            Err(h) if matches!(&h.code, ron::Error::MissingStructField { field: "format", .. }) => {
                return Err(SessionError::NotASession("it has no `format` field".into()));
            }
            // Text that never names the format is some other file, not a damaged session.
            Err(_) if !text.contains(FORMAT_NAME) => {
                return Err(SessionError::NotASession(format!(
                    "it never says `format: \"{FORMAT_NAME}\"` ({})",
                    SessionError::from_ron(e.clone())
                )));
            }
            Err(_) => return Err(SessionError::from_ron(e.clone())),
        },
    };
    if header.format != FORMAT_NAME {
        return Err(SessionError::NotASession(format!("format is {:?}, not {FORMAT_NAME:?}", header.format)));
    }
    match header.version {
        // Version 1 has the same fields; its data chunks are inline (see `convert::decode`).
        // Version 2 is version 3 without the runs and line column forms; version 3 is version 4
        // without the chunks' checksums (`convert::SEALED_VERSION`); version 4 is version 6
        // without the scaled column form; version 6 is version 7 without a counter's intervals
        // in its coarse buckets (`codec::INTERVALS_VERSION`). Version 5 is a recording's journal (`journal.rs`),
        // recognised by its whole first line before this: here it is one whose start is damaged.
        5 => Err(SessionError::invalid(
            "version",
            "5 is a recording's journal, and this one's first line is damaged: its checkpoints cannot be found",
        )),
        1..=CURRENT_VERSION => first.map_err(SessionError::from_ron),
        v if v > CURRENT_VERSION => Err(SessionError::TooNew { found: v, supported: CURRENT_VERSION }),
        v => upgrade(v, text),
    }
}

/// Read an older version and bring it to the current one, one version at a
/// time. Version 1 is the first, so today every older number is unknown; when
/// version 2 comes, version 1's types move to `format_v1.rs` and this becomes
/// `1 => Ok(v1_to_v2(parse_v1(text)?))`.
fn upgrade(version: u32, _text: &str) -> Result<SessionFile, SessionError> {
    Err(SessionError::UnknownVersion(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_explains_what_the_body_could_not() {
        let e = parse("(format: \"zescope-session\", version: 9, anything: [1, 2])").unwrap_err();
        assert!(matches!(e, SessionError::TooNew { found: 9, supported: CURRENT_VERSION }), "{e}");
        let e = parse("(format: \"zescope-session\", version: 5, anything: 1)").unwrap_err();
        assert!(e.to_string().contains("journal"), "{e}");
        let e = parse("(format: \"zescope-session\", version: 0)").unwrap_err();
        assert!(matches!(e, SessionError::UnknownVersion(0)), "{e}");
        let e = parse("(format: \"layout\", version: 1)").unwrap_err();
        assert!(matches!(e, SessionError::NotASession(_)), "{e}");
        let e = parse("(name: \"x\")").unwrap_err();
        assert!(matches!(e, SessionError::NotASession(_)), "{e}");
        let e = parse("(format: \"zescope-session\", version: 1").unwrap_err();
        assert!(matches!(e, SessionError::Syntax { line: 1, .. }), "{e}");
    }

    #[test]
    fn atomic_write_replaces_and_cleans_up_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.ron");
        std::fs::write(&p, "old").unwrap();
        let e = write_atomic(&p, |f| {
            f.write_all(b"half").unwrap();
            Err(SessionError::Cancelled)
        });
        assert!(e.is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temp file left");
        write_atomic(&p, |f| f.write_all(b"new").map_err(|e| SessionError::io("x", "w", e))).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
    }

    fn write_text(path: &Path, text: &str) -> Result<(), SessionError> {
        write_atomic(path, |f| f.write_all(text.as_bytes()).map_err(|e| SessionError::io("x", "w", e)))
    }

    #[test]
    fn saving_through_a_link_writes_its_target_and_keeps_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.ron");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.ron");
        std::os::unix::fs::symlink("real.ron", &link).unwrap();
        write_text(&link, "new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o640);
        // A dangling link: its target is created.
        let dangling = dir.path().join("d.ron");
        std::os::unix::fs::symlink("sub-target.ron", &dangling).unwrap();
        write_text(&dangling, "x").unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("sub-target.ron")).unwrap(), "x");
    }

    #[test]
    fn a_link_loop_or_a_directory_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.ron"), dir.path().join("b.ron"));
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        let e = write_text(&a, "x").unwrap_err().to_string();
        assert!(e.contains("a.ron") && e.contains("loop"), "{e}");
        let e = write_text(dir.path(), "x").unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read_text_from(dir.path(), 100, true).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn reading_checks_the_size_first_and_can_refuse_links() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.ron");
        std::fs::write(&p, vec![b' '; 101]).unwrap();
        let e = read_text_from(&p, 100, true).unwrap_err();
        assert!(matches!(&e, SessionError::TooLarge { size: 101, max: 100, .. }), "{e}");
        assert!(e.to_string().contains("big.ron"), "{e}");
        let l = dir.path().join("l.ron");
        std::os::unix::fs::symlink(&p, &l).unwrap();
        assert!(read_text_from(&l, 200, true).is_ok());
        let e = read_text_from(&l, 200, false).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
    }
}
