//! File descriptors the sampler deals with: identity, size, and its own dups.

use std::io;

/// The file behind an fd: device and inode. Two fds name one buffer iff their ids are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
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
pub fn file_id(fd: i32) -> io::Result<FileId> {
    stat(fd).map(|st| FileId { dev: st.st_dev, ino: st.st_ino })
}

/// The size `fstat` reports for `fd` (0 when the file type has none).
pub fn file_size(fd: i32) -> io::Result<u64> {
    stat(fd).map(|st| st.st_size.max(0) as u64)
}

/// zescope's own duplicate of an implementation fd.
pub struct Dup {
    pub fd: i32,
    pub id: FileId,
}

impl Dup {
    /// Duplicates `fd` (F_DUPFD_CLOEXEC). The original is untouched.
    pub fn of(fd: i32) -> io::Result<Dup> {
        let id = file_id(fd)?;
        // SAFETY: F_DUPFD_CLOEXEC creates a new fd; the original is only read.
        let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if d < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Dup { fd: d, id })
    }

    /// Closes the dup if it is still open and still names the same file: a driver whose import
    /// closes the fd it is given may have closed it, and the number may since name another file.
    pub fn close_if_same(self) {
        if file_id(self.fd).is_ok_and(|id| id == self.id) {
            // SAFETY: the fd is our dup and still refers to the buffer we duplicated.
            unsafe { libc::close(self.fd) };
        }
    }
}
