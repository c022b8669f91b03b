//! One imported exported buffer and the three ways it is read: a read-only mapping, `pread` of
//! the file (when a mapping could fault because the file may shrink), or a device copy of the
//! import (when the buffer cannot be mapped).

use core::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering, fence};

use super::fd::{Dup, FileId};
use zescope_ze::CommandList;

use crate::ReadPath;

/// `DMA_BUF_IOCTL_SYNC` = `_IOW('b', 0, struct dma_buf_sync)`, and its flags.
const DMA_BUF_IOCTL_SYNC: libc::c_ulong = 0x4008_6200;
const DMA_BUF_SYNC_READ: u64 = 1;
const DMA_BUF_SYNC_START: u64 = 0;
const DMA_BUF_SYNC_END: u64 = 4;

/// Attempts at a torn-free snapshot before giving up on this tick: first spinning, then
/// yielding, for at most `SNAPSHOT_BUDGET`.
const SNAPSHOT_TRIES: usize = 4096;
const SNAPSHOT_SPINS: usize = 16;
const SNAPSHOT_BUDGET: std::time::Duration = std::time::Duration::from_micros(250);

/// Paces retries: spin a few times, then yield, until the budget is spent.
struct Backoff {
    tries: usize,
    start: Option<std::time::Instant>,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff { tries: 0, start: None }
    }

    /// False when it is time to give up.
    fn wait(&mut self) -> bool {
        self.tries += 1;
        if self.tries < SNAPSHOT_SPINS {
            std::hint::spin_loop();
            return true;
        }
        let start = *self.start.get_or_insert_with(std::time::Instant::now);
        std::thread::yield_now();
        self.tries < SNAPSHOT_TRIES && start.elapsed() < SNAPSHOT_BUDGET
    }
}

/// Why a snapshot was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// The producer kept writing: no consistent snapshot this time (try again next tick).
    Torn,
    /// The buffer cannot be read any more (it shrank, a copy failed): the run must end.
    Failed(String),
}

/// A read-only mapping of an exported buffer. [`Mapping::unmap`] releases it and says whether
/// that worked; a mapping dropped without it (an error path during setup) is unmapped by `Drop`.
pub(super) struct Mapping {
    /// Null once unmapped.
    pub ptr: *const u8,
    pub len: usize,
    /// Our dup, for the sync ioctl.
    pub dup: Dup,
    /// False once the fd answered ENOTTY: not a dma-buf (e.g. a memfd), nothing to synchronise.
    pub sync: bool,
}

impl Mapping {
    /// Unmaps, once; on failure the mapping stays (and stays valid).
    pub(super) fn unmap(&mut self) -> std::io::Result<()> {
        if self.ptr.is_null() {
            return Ok(());
        }
        if super::buffers::test_hook::munmap_fails() {
            return Err(std::io::Error::other("test hook: munmap_fails"));
        }
        // SAFETY: our mapping of `len` bytes, unmapped once (ptr is nulled below); nothing reads
        // it afterwards (the access holding it is dropped next).
        if unsafe { libc::munmap(self.ptr as *mut c_void, self.len) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        self.ptr = std::ptr::null();
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if let Err(e) = self.unmap() {
            log::error!("munmap of an exported buffer failed: {e}");
        }
    }
}

pub(super) struct Staging {
    pub host: *mut c_void,
    pub list: CommandList,
}

/// How this buffer's bytes reach the host: what each of exported memory's read paths
/// (`ReadPath::Mapped`, `FileRead`, `DeviceCopy`) holds.
pub(super) enum HostAccess {
    Mapped(Mapping),
    File(Dup),
    Copy(Staging),
}

/// An import and how it is read. Dropped while still imported (`import` not null: a teardown
/// cut short by a panic, or a free the driver refused for good), it leaves its dup open and its
/// mapping in place: an import is never left without the fd it was made from, and nothing is
/// closed under it.
pub(crate) struct ImportedBuffer {
    pub id: FileId,
    pub size: usize,
    /// Null once freed.
    pub(super) import: *mut c_void,
    /// The dup handed to the import, kept open until after `zeMemFree` (a driver may close it
    /// at the import or at the free; `Dup`'s drop closes it only if it is still ours).
    pub(super) import_dup: Option<Dup>,
    pub(super) access: Option<HostAccess>,
}

impl Drop for ImportedBuffer {
    fn drop(&mut self) {
        if !self.import.is_null() {
            std::mem::forget(self.import_dup.take());
            std::mem::forget(self.access.take());
        }
    }
}

impl ImportedBuffer {
    pub(crate) fn read_path(&self) -> ReadPath {
        match self.access {
            Some(HostAccess::Mapped(_)) | None => ReadPath::Mapped,
            Some(HostAccess::File(_)) => ReadPath::FileRead,
            Some(HostAccess::Copy(_)) => ReadPath::DeviceCopy,
        }
    }

    fn sync(m: &mut Mapping, flags: u64) {
        if !m.sync {
            return;
        }
        let arg = flags;
        // SAFETY: DMA_BUF_IOCTL_SYNC reads one u64 from `arg`; the fd is our open dup.
        let r = unsafe { libc::ioctl(m.dup.fd, DMA_BUF_IOCTL_SYNC, &arg as *const u64) };
        if r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOTTY) {
            m.sync = false;
        }
    }

    /// Copies the first `dst.len()` bytes consistently: with a seqlock at `seqlock`, retried
    /// until the sequence is even and unchanged across the copy.
    pub(crate) fn snapshot(&mut self, seqlock: Option<usize>, dst: &mut [u8]) -> Result<(), ReadError> {
        if dst.len() > self.size {
            return Err(ReadError::Failed(format!(
                "a snapshot of {} bytes does not fit the exported buffer of {} bytes",
                dst.len(),
                self.size
            )));
        }
        if let Some(s) = seqlock
            && (s % 8 != 0 || s + 8 > dst.len())
        {
            return Err(ReadError::Failed(format!("the seqlock word at offset {s} lies outside the snapshot")));
        }
        let import = self.import;
        match self.access.as_mut() {
            Some(HostAccess::Mapped(m)) => {
                Self::sync(m, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
                let r = mapped_snapshot(m, seqlock, dst);
                Self::sync(m, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
                r
            }
            Some(HostAccess::File(dup)) => {
                copied_snapshot(seqlock, dst, |offset, out| pread_exact(dup.fd, offset, out))
            }
            Some(HostAccess::Copy(st)) => copied_snapshot(seqlock, dst, |offset, out| {
                // SAFETY: `host` and the import are allocations of the run's context with `size`
                // bytes; offset + out.len() ≤ dst.len() ≤ size (checked above).
                unsafe { st.list.copy(st.host, import.cast::<u8>().add(offset).cast(), out.len()) }.map_err(|e| {
                    ReadError::Failed(format!("copying exported memory through the device failed: {e}"))
                })?;
                // SAFETY: the synchronous copy has completed: nothing writes the host memory now.
                out.copy_from_slice(unsafe { std::slice::from_raw_parts(st.host.cast::<u8>(), out.len()) });
                Ok(())
            }),
            None => Err(ReadError::Failed("the buffer was released".into())),
        }
    }
}

/// `pread` of exactly `out.len()` bytes at `offset`; a short read means the file shrank.
fn pread_exact(fd: i32, offset: usize, out: &mut [u8]) -> Result<(), ReadError> {
    let mut done = 0;
    while done < out.len() {
        // SAFETY: reading into the unfilled tail of `out`, which we own; fd is our open dup.
        let n = unsafe {
            libc::pread(fd, out[done..].as_mut_ptr().cast(), out.len() - done, (offset + done) as libc::off_t)
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(ReadError::Failed(format!("reading the exported buffer failed: {e}")));
        }
        if n == 0 {
            let now = super::fd::file_size(fd).unwrap_or(0);
            return Err(ReadError::Failed(format!(
                "the exported buffer shrank to {now} bytes while zescope reads {} bytes of it",
                offset + out.len()
            )));
        }
        done += n as usize;
    }
    Ok(())
}

/// A seqlocked snapshot through a copy function (`copy(offset, out)` fills `out` from the
/// buffer at `offset`).
fn copied_snapshot(
    seqlock: Option<usize>,
    dst: &mut [u8],
    mut copy: impl FnMut(usize, &mut [u8]) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    let mut backoff = Backoff::new();
    let mut seq = [0u8; 8];
    loop {
        let s1 = match seqlock {
            Some(s) => {
                copy(s, &mut seq)?;
                Some(u64::from_ne_bytes(seq))
            }
            None => None,
        };
        if s1.is_some_and(|s| s % 2 == 1) {
            if backoff.wait() {
                continue;
            }
            return Err(ReadError::Torn);
        }
        copy(0, dst)?;
        let s2 = match seqlock {
            Some(s) => {
                copy(s, &mut seq)?;
                Some(u64::from_ne_bytes(seq))
            }
            None => None,
        };
        if s1 == s2 {
            return Ok(());
        }
        if !backoff.wait() {
            return Err(ReadError::Torn);
        }
    }
}

fn mapped_snapshot(m: &Mapping, seqlock: Option<usize>, dst: &mut [u8]) -> Result<(), ReadError> {
    debug_assert!(dst.len() <= m.len);
    // SAFETY (whole function): `ptr` is a live read-only mapping of `len` ≥ dst.len() bytes of a
    // file that cannot shrink (a DMA-BUF, or a memfd sealed against shrinking: see `Buffers`);
    // the producer writes it concurrently, so it is only read with volatile/atomic loads.
    let seq = seqlock.map(|s| unsafe { &*m.ptr.add(s).cast::<AtomicU64>() });
    let mut backoff = Backoff::new();
    loop {
        let s1 = seq.map(|a| a.load(Ordering::Acquire));
        if s1.is_some_and(|s| s % 2 == 1) {
            if backoff.wait() {
                continue;
            }
            return Err(ReadError::Torn);
        }
        let words = dst.len() / 8;
        for i in 0..words {
            // SAFETY: see above; 8-aligned (page-aligned mapping, i * 8).
            let w = unsafe { std::ptr::read_volatile(m.ptr.add(i * 8).cast::<u64>()) };
            dst[i * 8..i * 8 + 8].copy_from_slice(&w.to_ne_bytes());
        }
        for (i, b) in dst.iter_mut().enumerate().skip(words * 8) {
            // SAFETY: see above.
            *b = unsafe { std::ptr::read_volatile(m.ptr.add(i)) };
        }
        fence(Ordering::Acquire);
        if seq.map(|a| a.load(Ordering::Relaxed)) == s1 {
            return Ok(());
        }
        if !backoff.wait() {
            return Err(ReadError::Torn);
        }
    }
}
