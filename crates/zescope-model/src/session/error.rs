//! Why a session could not be saved, loaded or restored. Every variant names
//! the file, the field or the position, so the message is something a user
//! can act on.

use std::path::PathBuf;

/// A session error.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Reading or writing the file failed.
    #[error("{path}: {what}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done ("cannot open", "cannot write", ...).
        what: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },

    /// The file is larger than zescope accepts for what it is (`file` names it).
    #[error("{file}: {size} bytes is more than such a file may have ({max} bytes)")]
    TooLarge {
        /// The file (or the part of a checkpoint) that was too large.
        file: String,
        /// Its size in bytes.
        size: u64,
        /// The most such a file may have, in bytes.
        max: u64,
    },

    /// Not a session file at all (or not one of zescope's).
    #[error("not a zescope session file: {0}")]
    NotASession(String),

    /// Written by a newer zescope.
    #[error(
        "session format version {found} is newer than this zescope reads (up to {supported}); \
         open it with a newer zescope"
    )]
    TooNew {
        /// The file's format version.
        found: u32,
        /// The newest version this zescope reads.
        supported: u32,
    },

    /// A version that never existed.
    #[error("session format version {0} is not a known version")]
    UnknownVersion(u32),

    /// RON could not parse the file (bad syntax, wrong type, missing field).
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// Line of the error, from 1.
        line: usize,
        /// Column of the error, from 1.
        column: usize,
        /// RON's description of the problem.
        message: String,
    },

    /// A one-shot load's samples would decode past its memory cap (`load_with_cap` then opens
    /// the file coarsened instead; a checkpoint or a caller that asked for the strict check
    /// sees this).
    #[error("{field}: {message}")]
    OverCap {
        /// The stream that takes the load past the cap, e.g. `streams[3]`.
        field: String,
        /// How much it decodes to and the cap.
        message: String,
    },

    /// The file parses but a field holds something impossible.
    #[error("{field}: {message}")]
    Invalid {
        /// Path of the field in the file, e.g. `streams[0].raw.chunks`.
        field: String,
        /// What is wrong with its value.
        message: String,
    },

    /// The session was saved but serialising it failed (a bug).
    #[error("could not write the session: {0}")]
    Encode(String),

    /// The save was cancelled.
    #[error("saving was cancelled")]
    Cancelled,
}

impl SessionError {
    /// A value that breaks the format: `field` names where, `message` what is wrong.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> SessionError {
        SessionError::Invalid { field: field.into(), message: message.into() }
    }

    /// An I/O failure on `path` while doing `what`.
    pub fn io(path: impl Into<PathBuf>, what: &'static str, source: std::io::Error) -> SessionError {
        SessionError::Io { path: path.into(), what, source }
    }

    /// The message about the file at `path`: `path: ` and the error, unless the error names that
    /// file itself (an I/O error on it), so the path is said once.
    pub fn of_file(&self, path: &std::path::Path) -> String {
        match self {
            SessionError::Io { path: p, .. } if p == path => self.to_string(),
            e => format!("{}: {e}", path.display()),
        }
    }

    /// From RON's error, with the position it gives.
    pub(crate) fn from_ron(e: ron::error::SpannedError) -> SessionError {
        SessionError::Syntax { line: e.span.start.line, column: e.span.start.col, message: e.code.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_about_a_file_names_it_once() {
        let path = std::path::Path::new("/tmp/run.ron");
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = SessionError::io(path, "cannot open", missing);
        assert_eq!(e.of_file(path).matches("/tmp/run.ron").count(), 1, "{}", e.of_file(path));
        let other = SessionError::io("/tmp/run.ron.part", "cannot read", std::io::Error::other("x"));
        assert_eq!(other.of_file(path), "/tmp/run.ron: /tmp/run.ron.part: cannot read: x");
        let syntax = SessionError::Syntax { line: 1, column: 1, message: "Expected struct".into() };
        assert_eq!(syntax.of_file(path), "/tmp/run.ron: line 1, column 1: Expected struct");
    }
}
