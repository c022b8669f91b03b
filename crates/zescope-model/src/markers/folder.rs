//! The markers socket's folder: a real directory (never a symbolic link, which is not followed),
//! owned by the user zescope runs as, with no access for group or others (mode 0700). A folder
//! that does not exist is created so (its missing parents too, with the umask's modes) and set to
//! 0700 whatever the umask; an existing folder is never changed, only accepted or refused with an
//! error naming its path, owner and mode. Under the `/tmp` fallback another user can create
//! `/tmp/zescope-<uid>` first: that folder is refused, never used.

use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::Path;

/// The user id zescope runs as (the owner of what it creates).
pub(super) fn my_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Makes sure `dir` is a private folder of the user's (module docs), creating it if missing.
pub(super) fn private_folder(dir: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(dir) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot create the folder {}: {e}", parent.display()))?;
            }
            match std::fs::DirBuilder::new().mode(0o700).create(dir) {
                // Ours: 0700 whatever the umask took away (a folder without its owner's bits
                // could not take the socket). Another user cannot have swapped it: its parent is
                // ours, or sticky like /tmp.
                Ok(()) => {
                    let m = std::fs::symlink_metadata(dir).map_err(|e| cannot_read(dir, &e))?;
                    if m.is_dir() && m.uid() == my_uid() {
                        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                            .map_err(|e| format!("cannot make the markers folder {} private: {e}", dir.display()))?;
                    }
                }
                // Made meanwhile by someone else: checked like any folder found.
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("cannot create the markers folder {}: {e}", dir.display())),
            }
        }
        Err(e) => return Err(cannot_read(dir, &e)),
    }
    check(dir, &std::fs::symlink_metadata(dir).map_err(|e| cannot_read(dir, &e))?, my_uid())
}

fn cannot_read(dir: &Path, e: &std::io::Error) -> String {
    format!("cannot read the markers folder {}: {e}", dir.display())
}

/// Accepts `dir` as found (`m`, not following links) for the user `me`, or says why not.
pub(super) fn check(dir: &Path, m: &std::fs::Metadata, me: u32) -> Result<(), String> {
    let what = |problem: &str| {
        format!(
            "the markers folder {} (owner uid {}, mode {:04o}) {problem}; zescope listens only in a folder of yours \
             that only you can use (mode 0700): fix or remove it, or set {} to a socket path in such a folder",
            dir.display(),
            m.uid(),
            m.mode() & 0o7777,
            super::ENV
        )
    };
    if m.file_type().is_symlink() {
        let to = std::fs::read_link(dir).map(|t| t.display().to_string()).unwrap_or_else(|e| e.to_string());
        return Err(what(&format!("is a symbolic link (to {to}), which zescope does not follow")));
    }
    if !m.is_dir() {
        return Err(what("is not a directory"));
    }
    if m.uid() != me {
        return Err(what(&format!("belongs to another user (you are uid {me})")));
    }
    if m.mode() & 0o077 != 0 {
        return Err(what("is open to group or others"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_missing_folder_is_made_0700_and_a_private_one_accepted() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a").join("zescope");
        private_folder(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o7777, 0o700);
        private_folder(&dir).unwrap();
    }

    #[test]
    fn a_symlink_to_an_open_folder_is_refused_and_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        chmod(&open, 0o777);
        let link = tmp.path().join("zescope");
        std::os::unix::fs::symlink(&open, &link).unwrap();
        let e = private_folder(&link).unwrap_err();
        assert!(e.contains("is a symbolic link") && e.contains(&link.display().to_string()), "{e}");
        assert!(e.contains("owner uid") && e.contains("mode "), "{e}");
        // Even a link to a private folder of ours: the link itself could be anyone's doing.
        chmod(&open, 0o700);
        assert!(private_folder(&link).unwrap_err().contains("symbolic link"));
        assert_eq!(std::fs::metadata(&open).unwrap().mode() & 0o777, 0o700, "the target is left alone");
    }

    #[test]
    fn a_folder_open_to_others_is_refused_with_its_path_owner_and_mode_and_left_as_it_is() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("zescope");
        std::fs::create_dir(&dir).unwrap();
        for mode in [0o755, 0o1777, 0o770, 0o701] {
            chmod(&dir, mode);
            let e = private_folder(&dir).unwrap_err();
            let expect =
                format!("{} (owner uid {}, mode {mode:04o}) is open to group or others", dir.display(), my_uid());
            assert!(e.contains(&expect), "{e}");
            assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o7777, mode, "an existing folder is not changed");
        }
    }

    #[test]
    fn a_folder_of_another_user_or_a_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(private_folder(&file).unwrap_err().contains("is not a directory"));
        let dir = tmp.path().join("theirs");
        std::fs::create_dir(&dir).unwrap();
        chmod(&dir, 0o700);
        let m = std::fs::symlink_metadata(&dir).unwrap();
        // As another user would find it: the check compares the owner with the user it is given.
        let e = check(&dir, &m, m.uid() + 1).unwrap_err();
        assert!(e.contains(&format!("(owner uid {}, mode 0700) belongs to another user", m.uid())), "{e}");
        // As root, a real foreign folder too (as another user could plant under /tmp).
        if my_uid() == 0 {
            std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
            let e = private_folder(&dir).unwrap_err();
            assert!(e.contains("(owner uid 65534, mode 0700) belongs to another user (you are uid 0)"), "{e}");
        }
    }
}
