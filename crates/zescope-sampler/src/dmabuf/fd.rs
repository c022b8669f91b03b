//! File descriptors the sampler deals with: identity, size, seals, and its own dups.

use std::io;

/// The file behind an fd: device and inode. Two fds name one buffer iff their ids are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FileId {
    pub dev: u64,
    pub ino: u64,
}

fn stat(fd: i32) -> io::Result<libc::stat> {
    // SAFETY: fstat writes into a zeroed struct we own; a bad fd only makes it fail (EBADF).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `fstat` identity of `fd` (which is only inspected, never closed).
pub(crate) fn file_id(fd: i32) -> io::Result<FileId> {
    stat(fd).map(|st| FileId { dev: st.st_dev, ino: st.st_ino })
}

/// The size `fstat` reports for `fd` (0 when the file type has none).
pub(crate) fn file_size(fd: i32) -> io::Result<u64> {
    stat(fd).map(|st| st.st_size.max(0) as u64)
}

/// How a mapping of the file behind an fd could end: whether it is safe to `mmap` `size` bytes
/// of it without risking SIGBUS when someone shrinks the file later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shrinkable {
    /// Not a regular file (a real DMA-BUF): its size is fixed for its life.
    No,
    /// A memfd sealed against shrinking, at least `size` long.
    Sealed,
    /// A regular file or unsealed memfd: anyone holding it may truncate it under a mapping.
    Yes,
    /// A regular file shorter than `size` right now.
    TooShort(u64),
}

/// Whether mapping `size` bytes of `fd` could ever fault (see [`Shrinkable`]).
pub(super) fn shrinkable(fd: i32, size: usize) -> io::Result<Shrinkable> {
    let st = stat(fd)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Ok(Shrinkable::No);
    }
    let len = st.st_size.max(0) as u64;
    if len < size as u64 {
        return Ok(Shrinkable::TooShort(len));
    }
    // SAFETY: F_GET_SEALS takes no argument; on a file without seal support it fails (EINVAL).
    let seals = unsafe { libc::fcntl(fd, libc::F_GET_SEALS) };
    Ok(if seals >= 0 && seals & libc::F_SEAL_SHRINK != 0 { Shrinkable::Sealed } else { Shrinkable::Yes })
}

/// zescope's own duplicate of an implementation fd. Dropping it closes it — unless a driver was
/// seen closing it. A dup handed to an import may be closed by the driver (some close the fd
/// they import, at the import or at `zeMemFree`); its number is then free, and may later name
/// another descriptor of the same buffer (the driver's own dup of it, say) that zescope must not
/// close. So the owner of an imported dup calls [`Dup::check_closed_by_driver`] right after each
/// call that may close it, and a dup once seen closed is never closed by zescope, whatever its
/// number names later. The check compares the file (dev+ino) and our close-on-exec flag.
pub(super) struct Dup {
    pub fd: i32,
    pub id: FileId,
    /// Seen closed (or replaced) after a driver call: the number is no longer ours.
    lost: bool,
}

impl Dup {
    /// Duplicates `fd` (F_DUPFD_CLOEXEC). The original is untouched.
    pub(super) fn of(fd: i32) -> io::Result<Dup> {
        let id = file_id(fd)?;
        // SAFETY: F_DUPFD_CLOEXEC creates a new fd; the original is only read.
        let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if d < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Dup { fd: d, id, lost: false })
    }

    /// Whether the number still looks like the dup we made: open, the same file, close-on-exec.
    fn looks_ours(&self) -> bool {
        // SAFETY: F_GETFD only reads the descriptor's flags; a closed number fails with EBADF.
        let flags = unsafe { libc::fcntl(self.fd, libc::F_GETFD) };
        flags >= 0 && flags & libc::FD_CLOEXEC != 0 && file_id(self.fd).is_ok_and(|id| id == self.id)
    }

    /// Called right after a driver call that may have closed this dup (an import of it, the
    /// free of that import): if the number no longer looks like ours, it is given up for good.
    pub(super) fn check_closed_by_driver(&mut self) {
        if !self.lost && !self.looks_ours() {
            self.lost = true;
        }
    }

    /// Whether a driver was seen closing this dup.
    #[cfg(test)]
    pub(super) fn lost(&self) -> bool {
        self.lost
    }
}

impl Drop for Dup {
    fn drop(&mut self) {
        if !self.lost && self.looks_ours() {
            // SAFETY: the fd is our dup, never seen closed by a driver, and still refers to the
            // buffer we duplicated.
            unsafe { libc::close(self.fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memfd() -> i32 {
        // SAFETY: creates a new anonymous file; the name is a NUL-terminated literal.
        let fd = unsafe { libc::memfd_create(c"zescope-dup-test".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0);
        fd
    }

    fn is_open(fd: i32) -> bool {
        // SAFETY: F_GETFD only reads flags.
        unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
    }

    fn close(fd: i32) {
        // SAFETY: closes a descriptor this test owns.
        unsafe { libc::close(fd) };
    }

    /// The scenario needs the number freed by the "driver" to be the one its dup takes next; the
    /// test's other threads open files too and may take it first (a `dup3` onto the number would
    /// then close their file, or fail with EBUSY: CI saw -1), so the driver's dup takes the lowest
    /// free number at or above it (F_DUPFD, which closes nothing) and the scenario is tried again
    /// when that is another.
    #[test]
    fn a_dup_closed_by_a_driver_never_closes_the_descriptor_that_reuses_its_number() {
        for _ in 0..100 {
            let original = memfd();
            let mut d = Dup::of(original).unwrap();
            let number = d.fd;
            // The "driver" closes the dup it imported, then makes its own dup of the same buffer,
            // which gets the freed number (the lowest free one at or above it).
            close(number);
            d.check_closed_by_driver();
            assert!(d.lost());
            // SAFETY: F_DUPFD_CLOEXEC creates a new descriptor of the same buffer, closing none.
            let drivers = unsafe { libc::fcntl(original, libc::F_DUPFD_CLOEXEC, number) };
            assert!(drivers >= number, "{}", std::io::Error::last_os_error());
            // Dropped either way: a dup seen closed never closes its number (another thread's
            // file, when the driver's dup went elsewhere).
            drop(d);
            assert!(is_open(drivers), "zescope closed a descriptor it does not own");
            close(drivers);
            close(original);
            if drivers == number {
                return;
            }
        }
        panic!("the freed number was taken by another thread of the test each of 100 times");
    }

    #[test]
    fn a_dup_still_ours_is_closed_on_drop_and_the_original_never() {
        let original = memfd();
        let mut d = Dup::of(original).unwrap();
        let number = d.fd;
        d.check_closed_by_driver();
        assert!(!d.lost());
        let id = file_id(original).unwrap();
        drop(d);
        // Closed: the number no longer names the buffer (another thread may have reused it).
        assert!(file_id(number).map_or(true, |other| other != id), "the dup was not closed");
        assert!(is_open(original));
        close(original);
    }
}
