//! One imported exported buffer and how it is read; all of a run's buffers and their release.

use core::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering, fence};

use super::fd::{Dup, FileId};
use crate::ze::{CommandList, Context, Device, ZeError};

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadPath {
    /// `mmap(PROT_READ, MAP_SHARED)` of the DMA-BUF, reads bracketed by DMA_BUF_IOCTL_SYNC.
    Mapped,
    /// The buffer cannot be mapped: each read copies the import into host memory on the device.
    DeviceCopy,
}

impl ReadPath {
    pub fn name(self) -> &'static str {
        match self {
            ReadPath::Mapped => "mmap",
            ReadPath::DeviceCopy => "device copy",
        }
    }
}

/// The producer kept writing: no consistent snapshot this time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Torn;

struct Mapping {
    ptr: *const u8,
    len: usize,
    /// Our dup, for the sync ioctl.
    dup: Dup,
    /// False once the fd answered ENOTTY: not a dma-buf (e.g. a memfd), nothing to synchronise.
    sync: bool,
}

struct Staging {
    host: *mut c_void,
    list: CommandList,
}

pub struct ImportedBuffer {
    pub id: FileId,
    pub size: usize,
    import: *mut c_void,
    mapping: Option<Mapping>,
    staging: Option<Staging>,
}

impl ImportedBuffer {
    pub fn read_path(&self) -> ReadPath {
        if self.mapping.is_some() { ReadPath::Mapped } else { ReadPath::DeviceCopy }
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

    /// Copies the first `dst.len()` bytes (≤ size) consistently: with a seqlock at `seqlock`,
    /// retried until the sequence is even and unchanged across the copy.
    pub fn snapshot(&mut self, seqlock: Option<usize>, dst: &mut [u8]) -> Result<(), Torn> {
        assert!(dst.len() <= self.size, "snapshot larger than the buffer");
        if let Some(s) = seqlock {
            assert!(s % 8 == 0 && s + 8 <= dst.len(), "seqlock word outside the snapshot");
        }
        if let Some(m) = &mut self.mapping {
            Self::sync(m, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
            let r = mapped_snapshot(m, seqlock, dst);
            Self::sync(m, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
            return r;
        }
        let st = self.staging.as_ref().expect("a buffer is either mapped or staged");
        let mut backoff = Backoff::new();
        loop {
            let read_seq = |this: &Self| -> Option<u64> {
                let s = seqlock?;
                // SAFETY: both are allocations of the run's context with ≥ s + 8 bytes (asserted
                // above: s + 8 ≤ dst.len() ≤ size, and staging has `size` bytes).
                unsafe { st.list.copy(st.host, this.import.cast::<u8>().add(s).cast(), 8) }.ok()?;
                // SAFETY: the synchronous copy has completed: nothing writes the host memory now.
                Some(unsafe { std::ptr::read(st.host.cast::<u64>()) })
            };
            let s1 = read_seq(self);
            if s1.is_some_and(|s| s % 2 == 1) {
                if backoff.wait() {
                    continue;
                }
                return Err(Torn);
            }
            // SAFETY: as above, `dst.len()` ≤ size bytes in both allocations.
            if unsafe { st.list.copy(st.host, self.import, dst.len()) }.is_err() {
                return Err(Torn);
            }
            // SAFETY: the copy has completed; `dst.len()` bytes of host memory are initialised.
            dst.copy_from_slice(unsafe { std::slice::from_raw_parts(st.host.cast::<u8>(), dst.len()) });
            if s1 == read_seq(self) {
                return Ok(());
            }
            if !backoff.wait() {
                return Err(Torn);
            }
        }
    }
}

fn mapped_snapshot(m: &Mapping, seqlock: Option<usize>, dst: &mut [u8]) -> Result<(), Torn> {
    debug_assert!(dst.len() <= m.len);
    // SAFETY (whole function): `ptr` is a live read-only mapping of `len` ≥ dst.len() bytes; the
    // producer writes it concurrently, so it is only read with volatile/atomic loads.
    let seq = seqlock.map(|s| unsafe { &*m.ptr.add(s).cast::<AtomicU64>() });
    let mut backoff = Backoff::new();
    loop {
        let s1 = seq.map(|a| a.load(Ordering::Acquire));
        if s1.is_some_and(|s| s % 2 == 1) {
            if backoff.wait() {
                continue;
            }
            return Err(Torn);
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
            return Err(Torn);
        }
    }
}

/// All imported buffers of a run, one per distinct exported file.
pub struct Buffers {
    ctx: Context,
    list: Vec<ImportedBuffer>,
}

/// Proof that a run's buffers are unmapped and freed: what deactivation requires.
pub struct BuffersReleased(());

impl Buffers {
    pub fn new(ctx: Context) -> Buffers {
        Buffers { ctx, list: Vec::new() }
    }

    pub fn find(&self, id: FileId) -> Option<usize> {
        self.list.iter().position(|b| b.id == id)
    }

    pub fn get_mut(&mut self, i: usize) -> &mut ImportedBuffer {
        &mut self.list[i]
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Imports the buffer behind the implementation's `fd` (`size` bytes) once, maps it (or sets
    /// up the device-copy path) and returns its index. `fd` itself is never closed.
    pub fn import(&mut self, device: &Device, fd: i32, size: usize) -> Result<usize, ImportError> {
        let id = super::fd::file_id(fd).map_err(|e| ImportError::Fd(format!("fd {fd}: {e}")))?;
        if let Some(i) = self.find(id) {
            return Ok(i);
        }
        // Map through a dup of our own (kept for the sync ioctl while mapped).
        let map_dup = Dup::of(fd).map_err(|e| ImportError::Fd(format!("dup of fd {fd}: {e}")))?;
        // SAFETY: a fresh read-only shared mapping of `size` bytes of our dup; checked below.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ, libc::MAP_SHARED, map_dup.fd, 0) };
        let mapping = if p == libc::MAP_FAILED {
            log::info!("fd {fd} cannot be mapped ({}); reading it by device copy", std::io::Error::last_os_error());
            map_dup.close_if_same();
            None
        } else {
            Some(Mapping { ptr: p as *const u8, len: size, dup: map_dup, sync: true })
        };
        // Import from another dup: a driver that closes what it imports closes only that.
        let unmap = |m: Option<Mapping>| {
            if let Some(m) = m {
                // SAFETY: unmapping the mapping made above, once.
                unsafe { libc::munmap(m.ptr as *mut c_void, m.len) };
                m.dup.close_if_same();
            }
        };
        let import_dup = match Dup::of(fd) {
            Ok(d) => d,
            Err(e) => {
                unmap(mapping);
                return Err(ImportError::Fd(format!("dup of fd {fd}: {e}")));
            }
        };
        let imported = self.ctx.import_dma_buf(device, import_dup.fd, size);
        import_dup.close_if_same();
        let import = match imported {
            Ok(p) => p,
            Err(e) => {
                unmap(mapping);
                return Err(ImportError::Ze(e));
            }
        };
        let mut buf = ImportedBuffer { id, size, import, mapping, staging: None };
        if buf.mapping.is_none() {
            let staged = self.ctx.alloc_host(size).and_then(|host| match self.ctx.immediate_list(device) {
                Ok(list) => Ok(Staging { host, list }),
                Err(e) => {
                    // SAFETY: freeing the host allocation just made, once, before anything used it.
                    let _ = unsafe { self.ctx.free(host) };
                    Err(e)
                }
            });
            match staged {
                Ok(s) => buf.staging = Some(s),
                Err(e) => {
                    // SAFETY: the import was just made and nothing reads through it.
                    let _ = unsafe { self.ctx.free(import) };
                    return Err(ImportError::Ze(e));
                }
            }
        }
        self.list.push(buf);
        Ok(self.list.len() - 1)
    }

    /// Unmaps every mapping, then frees every staging allocation and import, then closes our
    /// dups. Every step runs even if an earlier one failed; failures are appended to `errors`.
    pub fn release(self, errors: &mut Vec<String>) -> BuffersReleased {
        let mut dups = Vec::new();
        let mut list = self.list;
        for b in &mut list {
            if let Some(m) = b.mapping.take() {
                // SAFETY: our mapping, unmapped once; nothing reads it afterwards.
                if unsafe { libc::munmap(m.ptr as *mut c_void, m.len) } != 0 {
                    errors.push(format!("munmap of an exported buffer failed: {}", std::io::Error::last_os_error()));
                }
                dups.push(m.dup);
            }
        }
        for b in list {
            if let Some(s) = b.staging {
                if let Err(e) = s.list.destroy() {
                    errors.push(e.to_string());
                }
                // SAFETY: the staging allocation of this context, freed once; the list is gone.
                if let Err(e) = unsafe { self.ctx.free(s.host) } {
                    errors.push(e.to_string());
                }
            }
            // SAFETY: the import of this context, freed once, after its mapping was unmapped.
            if let Err(e) = unsafe { self.ctx.free(b.import) } {
                errors.push(e.to_string());
            }
        }
        for d in dups {
            d.close_if_same();
        }
        BuffersReleased(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{0}")]
    Fd(String),
    #[error("{0}")]
    Ze(ZeError),
}
