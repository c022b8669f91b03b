//! Reading and writing session files: atomic replacement on save, caps and
//! format/version dispatch on load.
//!
//! Saving writes a temporary file next to the target (same directory, so the
//! rename cannot cross file systems), flushes and fsyncs it, renames it over
//! the target and fsyncs the directory. Until the rename the old file is
//! untouched; after it the new one is complete and durable. A crash or kill at
//! any point leaves one or the other, plus at worst a stray `.*.tmp-*` file.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::SessionError;
use super::format::{CURRENT_VERSION, FORMAT_NAME, Header, SessionFile};

/// Largest session file zescope opens.
pub const MAX_FILE_BYTES: u64 = 16 << 30;
/// First line of every session file.
pub const FILE_COMMENT: &str = "// zescope session file; format: docs/session-format.md\n";

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
pub fn write_ron(file: &SessionFile, w: impl Write) -> Result<(), SessionError> {
    let mut w = BufWriter::with_capacity(1 << 20, w);
    w.write_all(FILE_COMMENT.as_bytes()).map_err(|e| SessionError::Encode(e.to_string()))?;
    ron_options().to_io_writer_pretty(&mut w, file, pretty()).map_err(|e| SessionError::Encode(e.to_string()))?;
    w.write_all(b"\n").and_then(|_| w.flush()).map_err(|e| SessionError::Encode(e.to_string()))
}

/// Serialise a file to a string (tests, the example).
pub fn to_ron_string(file: &SessionFile) -> Result<String, SessionError> {
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

/// Replace `path` atomically with what `write` produces (see the module docs).
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut File) -> Result<(), SessionError>,
) -> Result<(), SessionError> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = File::create_new(&tmp).map_err(|e| SessionError::io(&tmp, "cannot create", e))?;
        write(&mut f)?;
        f.sync_all().map_err(|e| SessionError::io(&tmp, "cannot sync", e))?;
        drop(f);
        std::fs::rename(&tmp, path).map_err(|e| SessionError::io(path, "cannot replace", e))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        // Make the rename itself durable.
        File::open(dir).and_then(|d| d.sync_all()).map_err(|e| SessionError::io(dir, "cannot sync directory", e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Read a file of at most `max` bytes as text.
pub fn read_text(path: &Path, max: u64) -> Result<String, SessionError> {
    let f = File::open(path).map_err(|e| SessionError::io(path, "cannot open", e))?;
    let size = f.metadata().map_err(|e| SessionError::io(path, "cannot stat", e))?.len();
    if size > max {
        return Err(SessionError::TooLarge { size, max });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    f.take(max + 1).read_to_end(&mut bytes).map_err(|e| SessionError::io(path, "cannot read", e))?;
    if bytes.len() as u64 > max {
        return Err(SessionError::TooLarge { size: bytes.len() as u64, max });
    }
    String::from_utf8(bytes).map_err(|e| {
        SessionError::NotASession(format!("not text (invalid UTF-8 at byte {})", e.utf8_error().valid_up_to()))
    })
}

/// Parse session text of any version this build reads into the current form.
///
/// The common case (the current version) parses once. When that fails, the
/// header alone says why: another format, a newer version (refused with a
/// clear message), or an older one, which is parsed as that version and
/// migrated (`upgrade`).
pub fn parse(text: &str) -> Result<SessionFile, SessionError> {
    let first = ron_options().from_str::<SessionFile>(text);
    let header = match &first {
        Ok(f) => Header { format: f.format.clone(), version: f.version },
        Err(e) => match ron_options().from_str::<Header>(text) {
            Ok(h) => h,
            Err(h) if matches!(&h.code, ron::Error::MissingStructField { field: "format", .. }) => {
                return Err(SessionError::NotASession("it has no `format` field".into()));
            }
            Err(_) => return Err(SessionError::from_ron(e.clone())),
        },
    };
    if header.format != FORMAT_NAME {
        return Err(SessionError::NotASession(format!("format is {:?}, not {FORMAT_NAME:?}", header.format)));
    }
    match header.version {
        CURRENT_VERSION => first.map_err(SessionError::from_ron),
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
        assert!(matches!(e, SessionError::TooNew { found: 9, supported: 1 }), "{e}");
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
}
