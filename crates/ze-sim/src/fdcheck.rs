//! What the driver can see of the application's handling of exported fds and memory.
//!
//! - **Open file descriptions.** An exported fd "still being ours" means: the number still refers
//!   to the same open file description as a private dup the driver keeps, compared with
//!   `kcmp(pid, pid, KCMP_FILE, fd, private)`, AND still has FD_CLOEXEC, which the driver set and
//!   `dup2` clears. So closing the exported fd and `dup2`-ing any fd (even one of the same file or
//!   the same description) onto its number is seen. Where `kcmp` is not permitted (seccomp,
//!   kernels without CONFIG_KCMP) the check falls back to `fstat` identity (dev, inode) plus the
//!   FD_CLOEXEC flag: then a different open file description of the same file, put on the number
//!   with `dup3(.., O_CLOEXEC)`, goes unseen. Neither check can see a `dup3(.., O_CLOEXEC)` of a
//!   dup of the very same description: nothing about such an fd differs from the original.
//! - **Mappings.** `/proc/self/maps` lists every mapping of a file by device and inode; the
//!   driver finds the application's mappings of an exported buffer there (its own writer mapping
//!   and import mappings are excluded by address).

use std::os::fd::RawFd;

use crate::export::{FileId, file_id};

/// `kcmp(KCMP_FILE)` of two fds of this process: `Some(true)` if they share an open file
/// description, `Some(false)` if not (or one is closed), `None` if kcmp is unavailable.
pub(crate) fn kcmp_same_file(a: RawFd, b: RawFd) -> Option<bool> {
    const KCMP_FILE: libc::c_long = 0;
    // SAFETY: getpid has no preconditions; kcmp only compares kernel objects of our own process.
    let r = unsafe {
        let pid = libc::getpid() as libc::c_long;
        libc::syscall(libc::SYS_kcmp, pid, pid, KCMP_FILE, a as libc::c_long, b as libc::c_long)
    };
    if r == 0 {
        return Some(true);
    }
    if r > 0 {
        return Some(false);
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EBADF) => Some(false),
        _ => None,
    }
}

/// Is kcmp usable in this process (else the weaker fallback is in force)?
pub fn kcmp_available() -> bool {
    // Comparing fd 0 with itself: EBADF (if closed) still proves the syscall is allowed.
    kcmp_same_file(0, 0).is_some()
}

/// Does `fd` still refer to the open file description of `private` (a dup the driver took of
/// the original), or failing kcmp, to file `id`?
pub(crate) fn same_description(fd: RawFd, private: RawFd, id: FileId) -> bool {
    if private < 0 {
        return file_id(fd) == Some(id); // no private dup could be taken: the weaker check
    }
    match kcmp_same_file(fd, private) {
        Some(same) => same,
        None => file_id(fd) == Some(id),
    }
}

/// Does `fd` still have FD_CLOEXEC?
pub(crate) fn has_cloexec(fd: RawFd) -> bool {
    // SAFETY: F_GETFD on any number is harmless.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    flags >= 0 && flags & libc::FD_CLOEXEC != 0
}

/// A private `F_DUPFD_CLOEXEC` of `fd` (numbered from 100, away from the application's low
/// numbers), or -1.
pub(crate) fn private_dup(fd: RawFd) -> RawFd {
    // SAFETY: duplicating an fd; failure is returned as -1.
    unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 100) }
}

/// Start addresses of the mappings of file `id` in `/proc/self/maps`.
pub(crate) fn mappings_of(id: FileId) -> Vec<usize> {
    let Ok(text) = std::fs::read_to_string("/proc/self/maps") else {
        return Vec::new();
    };
    let (major, minor) = (libc::major(id.dev) as u64, libc::minor(id.dev) as u64);
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let range = f.next()?;
            let _perms = f.next()?;
            let _offset = f.next()?;
            let dev = f.next()?;
            let inode: u64 = f.next()?.parse().ok()?;
            let (ma, mi) = dev.split_once(':')?;
            let same = inode == id.ino
                && u64::from_str_radix(ma, 16).ok()? == major
                && u64::from_str_radix(mi, 16).ok()? == minor;
            let start = usize::from_str_radix(range.split('-').next()?, 16).ok()?;
            same.then_some(start)
        })
        .collect()
}
