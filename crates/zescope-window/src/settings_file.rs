//! The file the window's settings are remembered in (eframe's `app.ron` in
//! `eframe::storage_dir("zescope")`), checked before eframe reads it.
//!
//! eframe reads that file whole at start, with no limit and whatever it is: a huge file would be
//! held in memory, a FIFO would block the start for ever. So before the window opens,
//! [`check`] looks at it without opening it: a file that is not a regular one (a FIFO, a device,
//! a directory, a socket, a link that does not resolve to a file) or is larger than
//! [`MAX_SETTINGS_BYTES`] is moved aside (renamed to `app.ron.refused-<seconds>`, never
//! deleted), the log says which file, why and the limit, and the window starts with default
//! settings, which it then saves to a fresh `app.ron`.
//!
//! Memory bound: a file that passes holds at most 1 MiB; eframe reads it into one buffer (at most
//! 2× its size while the buffer grows), parses it into key/value strings (at most its size
//! again) and zescope parses its one value into [`super::settings::Settings`] (at most its size
//! once more): at most about 4 MiB plus a constant. A file eframe cannot parse gives default
//! settings (eframe logs the RON error).

use std::fs::FileType;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Largest settings file read (a real one is a few KiB: theme, window, selection, panes,
/// recent files and egui's window state).
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// The settings file of the window `app_id` (`app.ron` in eframe's storage directory), if the
/// platform has such a directory.
pub fn path(app_id: &str) -> Option<PathBuf> {
    eframe::storage_dir(app_id).map(|d| d.join("app.ron"))
}

/// What [`check`] did with a settings file.
#[derive(Debug, PartialEq, Eq)]
pub enum Checked {
    /// Absent, or a regular file within the limit: eframe may read it.
    Usable,
    /// Refused (the reason) and renamed to the path given; the window starts with defaults.
    MovedAside {
        /// Why it was refused ("is N bytes, more than …", "is a FIFO", …).
        reason: String,
        /// Where it was renamed to.
        to: PathBuf,
    },
}

/// Why a settings file could not be made safe to start with: it was refused but could not be
/// moved aside. eframe must not read it.
#[derive(Debug, PartialEq, Eq)]
pub struct Unusable {
    /// The settings file.
    pub file: PathBuf,
    /// Why it was refused.
    pub reason: String,
    /// Why renaming it failed (the operating system's error).
    pub rename_error: String,
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "settings file {} {}, and it cannot be moved aside ({}); settings are neither read nor kept this time",
            self.file.display(),
            self.reason,
            self.rename_error
        )
    }
}

fn type_name(t: FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Why `file` must not be read, if it must not (`None`: absent or fine). Looks at the file
/// without opening it (opening a FIFO blocks); links are followed, as eframe will.
fn refusal(file: &Path, max: u64) -> Option<String> {
    match std::fs::metadata(file) {
        Ok(m) if m.is_file() && m.len() > max => {
            Some(format!("is {} bytes, more than the limit of {max} bytes", m.len()))
        }
        Ok(m) if m.is_file() => None,
        Ok(m) => Some(format!("is {}, not a regular file", type_name(m.file_type()))),
        // Absent: eframe starts with defaults and creates it. A dangling link is left alone too.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(format!("cannot be examined ({e})")),
    }
}

/// Where a refused `file` is moved: `<name>.refused-<seconds>`, with `-<n>` added when that
/// exists already.
fn aside_path(file: &Path) -> PathBuf {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let name = file.file_name().map_or_else(|| "app.ron".into(), |n| n.to_string_lossy().into_owned());
    let base = format!("{name}.refused-{secs}");
    std::iter::once(base.clone())
        .chain((1..1000).map(|n| format!("{base}-{n}")))
        .map(|n| file.with_file_name(n))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .unwrap_or_else(|| file.with_file_name(base))
}

/// Check the settings file `file` before eframe reads it: refuse an oversized (more than `max`
/// bytes) or non-regular file by renaming it aside (a link is renamed, not its target).
pub fn check(file: &Path, max: u64) -> Result<Checked, Unusable> {
    let Some(reason) = refusal(file, max) else { return Ok(Checked::Usable) };
    let to = aside_path(file);
    match std::fs::rename(file, &to) {
        Ok(()) => Ok(Checked::MovedAside { reason, to }),
        Err(e) => Err(Unusable { file: file.to_path_buf(), reason, rename_error: e.to_string() }),
    }
}

/// [`check`] with [`MAX_SETTINGS_BYTES`], logged; returns the file eframe should keep its
/// settings in: `file` itself, or, when a refused file could not be moved, `/dev/null` (read as
/// empty, so defaults; writes go nowhere).
pub fn checked_for_eframe(file: &Path) -> PathBuf {
    match check(file, MAX_SETTINGS_BYTES) {
        Ok(Checked::Usable) => file.to_path_buf(),
        Ok(Checked::MovedAside { reason, to }) => {
            log::warn!(
                "settings file {} {reason} (limit {MAX_SETTINGS_BYTES} bytes, regular files only); moved aside to {}; \
                 starting with default settings",
                file.display(),
                to.display()
            );
            file.to_path_buf()
        }
        Err(e) => {
            log::error!("{e}");
            PathBuf::from("/dev/null")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(c: Result<Checked, Unusable>) -> (String, PathBuf) {
        match c {
            Ok(Checked::MovedAside { reason, to }) => (reason, to),
            other => panic!("expected the file to be moved aside, got {other:?}"),
        }
    }

    #[test]
    fn a_small_regular_file_or_none_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("app.ron");
        assert_eq!(check(&f, 100), Ok(Checked::Usable));
        std::fs::write(&f, "{}").unwrap();
        assert_eq!(check(&f, 100), Ok(Checked::Usable));
        std::fs::write(&f, vec![b' '; 100]).unwrap();
        assert_eq!(check(&f, 100), Ok(Checked::Usable), "exactly the limit is allowed");
        assert!(f.exists());
        assert_eq!(checked_for_eframe(&f), f);
    }

    #[test]
    fn an_oversized_file_is_renamed_not_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("app.ron");
        std::fs::write(&f, vec![b' '; 101]).unwrap();
        let (reason, to) = moved(check(&f, 100));
        assert_eq!(reason, "is 101 bytes, more than the limit of 100 bytes");
        assert!(!f.exists());
        assert_eq!(std::fs::read(&to).unwrap().len(), 101, "the refused file keeps its contents");
        assert_eq!(to.parent(), Some(dir.path()));
        assert!(to.file_name().unwrap().to_string_lossy().starts_with("app.ron.refused-"));

        // A second refused file does not overwrite the first one moved aside.
        std::fs::write(&f, vec![b'x'; 200]).unwrap();
        let (_, to2) = moved(check(&f, 100));
        assert_ne!(to, to2);
        assert_eq!(std::fs::read(&to).unwrap().len(), 101);
        assert_eq!(std::fs::read(&to2).unwrap().len(), 200);
    }

    #[test]
    fn fifos_and_directories_are_moved_aside_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("app.ron");
        // No writer ever opens this FIFO: opening it for reading would block the test.
        mkfifo(&f);
        let (reason, to) = moved(check(&f, 100));
        assert_eq!(reason, "is a FIFO, not a regular file");
        assert!(std::fs::symlink_metadata(&to).unwrap().file_type().is_fifo());
        assert!(!f.exists());

        std::fs::create_dir(&f).unwrap();
        let (reason, _) = moved(check(&f, 100));
        assert_eq!(reason, "is a directory, not a regular file");
        assert!(!f.exists());
    }

    #[test]
    fn a_link_is_judged_by_its_target_and_the_link_itself_is_moved() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("app.ron");
        let big = dir.path().join("big.ron");
        std::fs::write(&big, vec![b' '; 500]).unwrap();
        std::os::unix::fs::symlink(&big, &f).unwrap();
        let (reason, to) = moved(check(&f, 100));
        assert!(reason.contains("500 bytes"), "{reason}");
        assert!(std::fs::symlink_metadata(&to).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&big).unwrap().len(), 500, "the target is untouched");

        std::os::unix::fs::symlink("/dev/zero", &f).unwrap();
        let (reason, _) = moved(check(&f, 100));
        assert_eq!(reason, "is a device, not a regular file");
    }

    #[test]
    fn a_file_that_cannot_be_moved_is_reported_and_not_handed_to_eframe() {
        // A path under a regular file cannot be examined (ENOTDIR) nor renamed, even by root.
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        let f = plain.join("app.ron");
        let e = check(&f, 100).unwrap_err();
        assert_eq!(e.file, f);
        let text = e.to_string();
        assert!(text.contains("plain/app.ron") && text.contains("cannot be examined"), "{text}");
        assert!(text.contains("cannot be moved aside"), "{text}");
        assert_eq!(checked_for_eframe(&f), Path::new("/dev/null"));
        assert_eq!(std::fs::read(&plain).unwrap(), b"", "nothing was written");
    }

    fn mkfifo(path: &Path) {
        assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
    }
}
