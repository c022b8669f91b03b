//! Binding the markers socket, one listener per path, decided atomically.
//!
//! - The folder must be private ([`super::folder`]).
//! - Beside the socket `NAME`, the lock file `NAME.lock` (a regular file of the user's, mode 0600,
//!   opened without following links) is locked (`flock`, exclusive, not waiting) for as long as
//!   the listener lives. Whoever holds the lock owns the path: a second zescope fails to take it
//!   and is told another zescope listens. The holder removes the lock file before it lets go, and
//!   a taker checks that the file it locked is still the one at the path (else it tries again),
//!   so two zescopes never both hold a lock for the same path.
//! - Holding the lock, a socket found at the path is a dead listener's and is replaced (unless
//!   something still answers on it: a zescope from before the lock file); anything else there is
//!   left alone and refused.
//! - The socket is made with `SO_PASSCRED` on before it is bound (so every datagram it ever
//!   receives carries its sender's credentials, [`super::sender`]) and set to mode 0600 right
//!   after `bind`, whatever the umask (the private folder keeps others out meanwhile).

use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};

use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType, sockopt};

/// The words that say the path is taken (`Listener::start_default` then listens elsewhere).
pub(super) const TAKEN: &str = "another zescope listens";

/// Held for a listener's life: the path's lock. Dropping it removes the lock file, then unlocks.
#[derive(Debug)]
pub struct PathLock {
    path: PathBuf,
    file: File,
}

impl Drop for PathLock {
    fn drop(&mut self) {
        // Still locked while removed: a zescope that opened it meanwhile finds it gone and retries.
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| same_file(&m, &self.file)) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn same_file(m: &std::fs::Metadata, f: &File) -> bool {
    f.metadata().is_ok_and(|o| (o.dev(), o.ino()) == (m.dev(), m.ino()))
}

/// Where the lock of the socket at `path` is: `NAME.lock` beside it.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    path.with_file_name(name)
}

/// Takes the lock of the socket at `path` (module docs); the error says who holds it or why not.
pub(super) fn lock(path: &Path) -> Result<PathLock, String> {
    let lock = lock_path(path);
    let me = super::folder::my_uid();
    for _ in 0..16 {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&lock)
            .map_err(|e| format!("cannot open the lock file {}: {e}", lock.display()))?;
        let m = file.metadata().map_err(|e| format!("cannot read {}: {e}", lock.display()))?;
        if !m.is_file() || m.uid() != me {
            return Err(format!(
                "the lock file {} (owner uid {}, mode {:04o}) is not a file of yours; remove it or set {}",
                lock.display(),
                m.uid(),
                m.mode() & 0o7777,
                super::ENV
            ));
        }
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(format!(
                    "{TAKEN} for markers at {}; set {} to use another socket",
                    path.display(),
                    super::ENV
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(format!("cannot lock {}: {e}", lock.display())),
        }
        // The holder before us removed it before unlocking: lock the one at the path now.
        if std::fs::symlink_metadata(&lock).is_ok_and(|m| same_file(&m, &file)) {
            return Ok(PathLock { path: lock, file });
        }
    }
    Err(format!("cannot take the lock {}: it keeps being replaced", lock.display()))
}

/// Binds a datagram socket at `path` under its lock (module docs); the error says what is in the
/// way and what to do.
pub fn bind(path: &Path) -> Result<(UnixDatagram, PathLock), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        super::folder::private_folder(dir)?;
    }
    let held = lock(path)?;
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_socket() => {
            return Err(format!("{} exists and is not a socket; remove it or set {}", path.display(), super::ENV));
        }
        Ok(_) => {
            // No zescope holds the lock, so the socket is a dead one's; unless a zescope from
            // before the lock file still answers on it.
            let probe = UnixDatagram::unbound().map_err(|e| format!("cannot open a socket: {e}"))?;
            match probe.connect(path) {
                Ok(()) => {
                    return Err(format!(
                        "{TAKEN} for markers at {}; set {} to use another socket",
                        path.display(),
                        super::ENV
                    ));
                }
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                    std::fs::remove_file(path)
                        .map_err(|e| format!("cannot remove the stale socket {}: {e}", path.display()))?;
                }
                Err(e) => return Err(format!("cannot check the socket {}: {e}", path.display())),
            }
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    }
    let listen = |e: std::io::Error| format!("cannot listen for markers at {}: {e}", path.display());
    let fd = rustix::net::socket_with(AddressFamily::UNIX, SocketType::DGRAM, SocketFlags::CLOEXEC, None)
        .map_err(|e| listen(e.into()))?;
    sockopt::set_socket_passcred(&fd, true).map_err(|e| listen(e.into()))?;
    let addr = SocketAddrUnix::new(path).map_err(|e| listen(e.into()))?;
    rustix::net::bind(&fd, &addr).map_err(|e| listen(e.into()))?;
    let sock = UnixDatagram::from(fd);
    if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
        let _ = std::fs::remove_file(path);
        return Err(format!("cannot make the markers socket {} private: {e}", path.display()));
    }
    Ok((sock, held))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary folder the markers socket may live in (tempfile's are 0755 here).
    fn private_tempdir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        dir
    }

    #[test]
    fn a_private_folder_is_made_and_a_stale_socket_replaced_but_a_live_one_kept() {
        let dir = private_tempdir();
        let path = dir.path().join("zescope").join("markers.sock");
        let first = bind(&path).unwrap();
        let mode = std::fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let e = bind(&path).unwrap_err();
        assert!(e.contains(TAKEN) && e.contains("ZESCOPE_MARKERS"), "{e}");
        drop(first); // leaves the socket file behind, as a crash would
        assert!(path.exists());
        assert!(!lock_path(&path).exists(), "the lock file goes with its holder");
        let _second = bind(&path).unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let e = bind(&file).unwrap_err();
        assert!(e.contains("is not a socket"), "{e}");
        assert!(file.exists());
    }

    #[test]
    fn a_lock_file_that_is_a_link_is_refused() {
        let dir = private_tempdir();
        let path = dir.path().join("m.sock");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "").unwrap();
        std::os::unix::fs::symlink(&elsewhere, lock_path(&path)).unwrap();
        let e = bind(&path).unwrap_err();
        assert!(e.contains("cannot open the lock file") && e.contains("m.sock.lock"), "{e}");
        assert!(!path.exists());
    }

    #[test]
    fn the_socket_is_0600_and_passes_credentials() {
        let dir = private_tempdir();
        let path = dir.path().join("m.sock");
        let (sock, _lock) = bind(&path).unwrap();
        assert_eq!(std::fs::symlink_metadata(&path).unwrap().mode() & 0o7777, 0o600);
        assert!(sockopt::socket_passcred(&sock).unwrap());
    }
}
