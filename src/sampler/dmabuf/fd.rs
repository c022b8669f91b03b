//! File descriptors the sampler deals with: identity, size, seals, and its own dups.

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

/// How a mapping of the file behind an fd could end: whether it is safe to `mmap` `size` bytes
/// of it without risking SIGBUS when someone shrinks the file later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shrinkable {
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
pub fn shrinkable(fd: i32, size: usize) -> io::Result<Shrinkable> {
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

/// zescope's own duplicate of an implementation fd. Dropping it closes it — if it is still open
/// and still names the file it was made for (a driver may have closed it: some close the fd
/// they import, at the import or at `zeMemFree`, and the number may since name another file).
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
}

impl Drop for Dup {
    fn drop(&mut self) {
        if file_id(self.fd).is_ok_and(|id| id == self.id) {
            // SAFETY: the fd is our dup and still refers to the buffer we duplicated.
            unsafe { libc::close(self.fd) };
        }
    }
}
