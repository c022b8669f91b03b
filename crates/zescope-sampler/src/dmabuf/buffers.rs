//! All imported buffers of a run, one per distinct exported file: import, and release.
//!
//! How a buffer is read is decided at import, so that nothing can fault later:
//! - `mmap` only when the file cannot shrink under the mapping: a real DMA-BUF, or a memfd
//!   sealed against shrinking (`F_SEAL_SHRINK`) that holds at least `size` bytes;
//! - `pread` of our dup for any other regular file (an unsealed memfd, a file on disk): a read
//!   past a shrunk end is a short read and a clear error, never SIGBUS;
//! - a device copy of the import when the buffer cannot be mapped or read by the CPU at all
//!   (needs the optional command-list and host-allocation calls).

use core::ffi::c_void;

use super::buffer::{HostAccess, ImportedBuffer, Mapping, Staging};
use super::fd::{Dup, FileId, Shrinkable, file_id, shrinkable};
use zescope_ze::{Context, Device, ZeError};

/// The imports of one context (the run's), which is passed to every call that allocates or
/// frees.
pub(crate) struct Buffers {
    list: Vec<ImportedBuffer>,
    /// Host memory of the device-copy path whose free failed: freed again at every release, and
    /// while any is left there is no [`BuffersReleased`] proof.
    stranded: Vec<*mut c_void>,
    /// Mappings of a buffer whose import failed, whose munmap failed: unmapped again at every
    /// release, and while any is left there is no [`BuffersReleased`] proof (the exporter must
    /// not be torn down under a mapping of its memory).
    stranded_maps: Vec<Mapping>,
}

/// Proof that a run's buffers are unmapped and freed: what deactivation requires. Only
/// [`Buffers::release`] makes one, and only when every import was freed.
pub(crate) struct BuffersReleased(());

#[derive(Debug, thiserror::Error)]
pub(crate) enum ImportError {
    #[error("{0}")]
    Fd(String),
    #[error("{0}")]
    Ze(ZeError),
}

impl Buffers {
    pub(crate) fn new() -> Buffers {
        Buffers { list: Vec::new(), stranded: Vec::new(), stranded_maps: Vec::new() }
    }

    pub(crate) fn find(&self, id: FileId) -> Option<usize> {
        self.list.iter().position(|b| b.id == id)
    }

    pub(crate) fn get_mut(&mut self, i: usize) -> &mut ImportedBuffer {
        &mut self.list[i]
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Imports the buffer behind the implementation's `fd` (`size` bytes) once, sets up how it
    /// is read, and returns its index. `fd` itself is never closed: imports and mappings use
    /// dups of it. Everything that can fail is done before the import, which is the last step:
    /// no error path has an import to free.
    pub(crate) fn import(
        &mut self,
        ctx: &Context,
        device: &Device,
        fd: i32,
        size: usize,
    ) -> Result<usize, ImportError> {
        let id = file_id(fd).map_err(|e| ImportError::Fd(format!("fd {fd}: {e}")))?;
        if let Some(i) = self.find(id) {
            return Ok(i);
        }
        let dup = |what: &str| Dup::of(fd).map_err(|e| ImportError::Fd(format!("dup of fd {fd} ({what}): {e}")));
        let access = match shrinkable(fd, size).map_err(|e| ImportError::Fd(format!("fd {fd}: {e}")))? {
            Shrinkable::TooShort(len) => {
                return Err(ImportError::Fd(format!(
                    "fd {fd} holds {len} bytes, less than the {size} bytes the driver reports"
                )));
            }
            Shrinkable::No | Shrinkable::Sealed => map(dup("mapping")?, size).map(HostAccess::Mapped),
            Shrinkable::Yes => readable(dup("reading")?).map(HostAccess::File),
        };
        let access = match access {
            Some(r) => r,
            None => {
                log::info!("fd {fd} can be neither mapped nor read by the CPU; reading it by device copy");
                match self.staging(ctx, device, size) {
                    Ok(s) => HostAccess::Copy(s),
                    Err(e) => {
                        return Err(ImportError::Fd(format!(
                            "the buffer cannot be mapped or read by the CPU, and copying it through the device is \
                             not available: {e}"
                        )));
                    }
                }
            }
        };
        // Import from a dup of our own, kept until after the free: a driver that closes what it
        // imports closes only that.
        let mut import_dup = match dup("import") {
            Ok(d) => d,
            Err(e) => {
                self.release_access(ctx, access, &mut Vec::new());
                return Err(e);
            }
        };
        let import = match ctx.import_dma_buf(device, import_dup.fd, size) {
            Ok(import) => import,
            Err(e) => {
                import_dup.check_closed_by_driver();
                self.release_access(ctx, access, &mut Vec::new());
                return Err(ImportError::Ze(e));
            }
        };
        // A driver that closes the fd it imports did so by now: from here on the number is not
        // ours, whatever it names later.
        import_dup.check_closed_by_driver();
        self.list.push(ImportedBuffer { id, size, import, import_dup: Some(import_dup), access: Some(access) });
        Ok(self.list.len() - 1)
    }

    /// Unmaps every mapping, then frees every staging allocation and import; our dups close
    /// after that. Every buffer is attempted even if an earlier one failed; failures are
    /// appended to `errors`. A buffer whose unmap or import free failed stays here, as does any
    /// host allocation whose free failed, and then there is no proof: what comes after
    /// (deactivation, disable, the context's destruction) must wait for a retry. The work is
    /// done in place, so a panic part way leaves every buffer not yet freed listed here.
    /// Freeing needs the [`WaysReleased`](crate::read::WaysReleased) proof: no tracer or other
    /// way uses an exported buffer any more.
    pub(crate) fn release(
        &mut self,
        _: &crate::read::WaysReleased,
        ctx: &Context,
        errors: &mut Vec<String>,
    ) -> Option<BuffersReleased> {
        self.stranded_maps.retain_mut(|m| match m.unmap() {
            Ok(()) => false,
            Err(e) => {
                errors.push(format!("munmap of an exported buffer failed: {e}"));
                true
            }
        });
        let mut i = 0;
        while i < self.stranded.len() {
            // SAFETY: host memory of this context whose earlier free failed; nothing uses it.
            match unsafe { ctx.free(self.stranded[i]) } {
                Ok(()) => drop(self.stranded.swap_remove(i)),
                Err(e) => {
                    errors.push(format!("freeing host memory of the device-copy path: {e}"));
                    i += 1;
                }
            }
        }
        for i in 0..self.list.len() {
            let b = &mut self.list[i];
            if let Some(HostAccess::Mapped(m)) = &mut b.access
                && let Err(e) = m.unmap()
            {
                errors.push(format!("munmap of an exported buffer failed: {e}"));
                continue;
            }
            // Mapping (already unmapped) and file read: their dups close here.
            if let Some(r) = b.access.take() {
                self.release_access(ctx, r, errors);
            }
            test_hook::before_free();
            let b = &mut self.list[i];
            // SAFETY: the import of this context, freed once (nulled below), after its mapping
            // was unmapped.
            match unsafe { ctx.free(b.import) } {
                Ok(()) => {
                    b.import = std::ptr::null_mut();
                    if let Some(mut d) = b.import_dup.take() {
                        // A driver that closes the fd at the free did so by now.
                        d.check_closed_by_driver();
                    }
                }
                Err(e) => errors.push(format!("freeing an imported exported buffer: {e}")),
            }
        }
        self.list.retain(|b| !b.import.is_null());
        (self.list.is_empty() && self.stranded.is_empty() && self.stranded_maps.is_empty())
            .then_some(BuffersReleased(()))
    }

    /// Host memory and an immediate command list for the device-copy path.
    fn staging(&mut self, ctx: &Context, device: &Device, size: usize) -> Result<Staging, ZeError> {
        let host = ctx.alloc_host(size)?;
        match ctx.immediate_list(device) {
            Ok(list) => Ok(Staging { host, list }),
            Err(e) => {
                self.free_host(ctx, host, &mut Vec::new());
                Err(e)
            }
        }
    }

    /// Ends a host access: a mapping is unmapped by its drop (only on error paths: `release`
    /// unmaps first), a staging list destroyed and its host memory freed (kept for a retry if
    /// that fails).
    fn release_access(&mut self, ctx: &Context, access: HostAccess, errors: &mut Vec<String>) {
        match access {
            HostAccess::Copy(s) => {
                if let Err(e) = s.list.destroy() {
                    errors.push(e.to_string());
                }
                self.free_host(ctx, s.host, errors);
            }
            // A mapping not unmapped yet (an import that failed): one whose munmap fails is
            // kept, to be unmapped again at the next release (and until then there is no proof).
            HostAccess::Mapped(mut m) => {
                if let Err(e) = m.unmap() {
                    errors.push(format!("munmap of an exported buffer failed: {e}"));
                    self.stranded_maps.push(m);
                }
            }
            HostAccess::File(_) => {}
        }
    }

    /// Frees a host allocation of this context; one whose free fails is kept, to be freed again
    /// at the next release (and until then there is no proof).
    fn free_host(&mut self, ctx: &Context, host: *mut c_void, errors: &mut Vec<String>) {
        // SAFETY: a host allocation of this context that nothing uses any more (its command list
        // is destroyed), freed once: on failure it is kept and only freed again by a retry.
        if let Err(e) = unsafe { ctx.free(host) } {
            errors.push(format!("freeing host memory of the device-copy path: {e}"));
            self.stranded.push(host);
        }
    }
}

impl Drop for Buffers {
    /// Reached with buffers left only when a teardown was cut short (a panic unwinding through
    /// it) or after a release that failed for good: each [`ImportedBuffer`] still imported
    /// keeps its dup and mapping (see its `Drop`), and host memory is left allocated — the
    /// driver's own cleanup at exit takes them.
    fn drop(&mut self) {
        if !self.list.is_empty() || !self.stranded.is_empty() || !self.stranded_maps.is_empty() {
            log::error!(
                "{} exported buffer(s) and {} host allocation(s) could not be freed; they are left to the driver",
                self.list.len(),
                self.stranded.len()
            );
        }
    }
}

/// Test hook (`crates/zescope-sampler/tests/sampler/panic.rs`, through `sampler::Options::panic_before_free`): a panic
/// on the sampler thread right before the n-th free of an import, to prove that a panic part
/// way through a release leaves every import not yet freed tracked; and a failed munmap
/// (`sampler::Options::fail_munmap`), to prove its import is not freed under the mapping and the
/// rest of the teardown waits. Off unless set.
pub(crate) mod test_hook {
    use std::cell::Cell;

    thread_local!(static BEFORE_FREE: Cell<Option<u32>> = const { Cell::new(None) });

    /// Panic right before the `n`-th (from 0) import free on this thread from now on.
    pub(crate) fn panic_before_free(n: Option<u32>) {
        BEFORE_FREE.with(|c| c.set(n));
    }

    thread_local!(static MUNMAP: Cell<Option<u32>> = const { Cell::new(None) });

    /// Fail the `n`-th (from 0) munmap of an exported buffer on this thread from now on (once:
    /// the mapping stays, and a later unmap of it succeeds).
    pub(crate) fn fail_munmap(n: Option<u32>) {
        MUNMAP.with(|c| c.set(n));
    }

    /// Whether this munmap is the one to fail.
    pub(in crate::dmabuf) fn munmap_fails() -> bool {
        MUNMAP.with(|c| match c.get() {
            Some(0) => {
                c.set(None);
                true
            }
            Some(k) => {
                c.set(Some(k - 1));
                false
            }
            None => false,
        })
    }

    pub(super) fn before_free() {
        BEFORE_FREE.with(|c| match c.get() {
            Some(0) => {
                c.set(None);
                panic!("test hook: panic_before_free");
            }
            Some(k) => c.set(Some(k - 1)),
            None => {}
        });
    }
}

/// A read-only shared mapping of `size` bytes of `dup`, or `None` when the fd cannot be mapped.
fn map(dup: Dup, size: usize) -> Option<Mapping> {
    // SAFETY: a fresh read-only shared mapping of `size` bytes of our dup; checked below.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ, libc::MAP_SHARED, dup.fd, 0) };
    if p == libc::MAP_FAILED {
        log::info!("fd {} cannot be mapped ({})", dup.fd, std::io::Error::last_os_error());
        return None;
    }
    Some(Mapping { ptr: p as *const u8, len: size, dup, sync: true })
}

/// `dup` when the CPU can `pread` it (a write-only fd cannot).
fn readable(dup: Dup) -> Option<Dup> {
    let mut probe = [0u8; 1];
    // SAFETY: reads at most one byte into our buffer from our dup.
    let n = unsafe { libc::pread(dup.fd, probe.as_mut_ptr().cast(), 1, 0) };
    (n >= 0).then_some(dup)
}
