//! Binding the markers socket: its folder created private (0700), a stale socket replaced only
//! when nobody listens behind it, anything else at the path left alone.

use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt as _, FileTypeExt as _, MetadataExt as _};
use std::os::unix::net::UnixDatagram;
use std::path::Path;

/// Binds a datagram socket at `path`; the error says what is in the way and what to do.
pub fn bind(path: &Path) -> Result<UnixDatagram, String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create the markers folder {}: {e}", dir.display()))?;
        let meta = std::fs::metadata(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let me = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(meta.uid());
        if meta.uid() != me {
            return Err(format!(
                "the markers folder {} belongs to another user; set {} to a socket path of your own",
                dir.display(),
                super::ENV
            ));
        }
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_socket() => {
            return Err(format!("{} exists and is not a socket; remove it or set {}", path.display(), super::ENV));
        }
        Ok(_) => {
            let probe = UnixDatagram::unbound().map_err(|e| format!("cannot open a socket: {e}"))?;
            match probe.connect(path) {
                Ok(()) => {
                    return Err(format!(
                        "another zescope listens for markers at {}; set {} to use another socket",
                        path.display(),
                        super::ENV
                    ));
                }
                // Nobody behind it: a socket left by a zescope that did not exit cleanly.
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
    UnixDatagram::bind(path).map_err(|e| format!("cannot listen for markers at {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_folder_is_made_and_a_stale_socket_replaced_but_a_live_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("zescope").join("markers.sock");
        let first = bind(&path).unwrap();
        let mode = std::fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let e = bind(&path).unwrap_err();
        assert!(e.contains("another zescope listens") && e.contains("ZESCOPE_MARKERS"), "{e}");
        drop(first); // leaves the socket file behind, as a crash would
        assert!(path.exists());
        let _second = bind(&path).unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let e = bind(&file).unwrap_err();
        assert!(e.contains("is not a socket"), "{e}");
        assert!(file.exists());
    }
}
