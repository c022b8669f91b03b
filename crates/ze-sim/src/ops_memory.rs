//! Memory: imports of exported fds, host allocations, frees, and the immediate command list
//! copy that readers use when exported memory cannot be mapped.

use std::os::fd::RawFd;
use std::sync::Arc;

use level_zero_sys::*;

use crate::config::{FreeFault, ImportFd};
use crate::export::{file_id, unmap_import};
use crate::instance::{Alloc, AllocKind, CmdList, Instance};
use crate::ops_driver::R;
use crate::registry::{HandleChanges, Obj, new_handle};

/// Finds an import-fd descriptor in a `pNext` chain (at most 16 nodes). SAFETY (for callers):
/// every node is a valid descriptor starting with `stype`/`pNext`.
unsafe fn find_import(mut p: *const core::ffi::c_void) -> Option<ze_external_memory_import_fd_t> {
    for _ in 0..16 {
        if p.is_null() {
            return None;
        }
        let node = p.cast::<ze_base_desc_t>();
        // SAFETY: see the function's contract.
        let stype = unsafe { (*node).stype };
        if stype == ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD {
            // SAFETY: the stype identifies the struct.
            return Some(unsafe { *p.cast::<ze_external_memory_import_fd_t>() });
        }
        // SAFETY: as above.
        p = unsafe { (*node).pNext };
    }
    None
}

impl Instance {
    /// `zeMemAllocDevice`: an import when the chain holds an import-fd descriptor.
    pub(crate) fn alloc_device(
        &mut self,
        ctx: usize,
        desc: &ze_device_mem_alloc_desc_t,
        size: usize,
        align: usize,
    ) -> R<usize> {
        if desc.stype != ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC {
            self.violation("wrong_stype", ctx, format!("zeMemAllocDevice given stype {:#x}", desc.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        if self.shared.is_lost() {
            return Err(ZE_RESULT_ERROR_DEVICE_LOST);
        }
        // SAFETY: the application passes a valid chain (API contract).
        match unsafe { find_import(desc.pNext) } {
            Some(import) => self.import(ctx, import, size),
            None => self.alloc_plain(ctx, size, align),
        }
    }

    fn import(&mut self, ctx: usize, import: ze_external_memory_import_fd_t, size: usize) -> R<usize> {
        if import.flags & ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF == 0 {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
        }
        let fd: RawFd = import.fd;
        if fd < 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let id = file_id(fd);
        if fd == self.decoy_fd || (id.is_some() && id == file_id(self.decoy_fd)) {
            self.violation(
                "followed_clobbered_pnext",
                ctx,
                format!("import of fd {fd}, which the driver only wrote into a clobbered pNext chain: it is no exported buffer"),
            );
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let Some(g) = id.and_then(|id| {
            (0..self.groups.len()).find(|&g| self.groups[g].buffer.as_ref().is_some_and(|b| b.id == id))
        }) else {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        };
        self.touch_exporter(g, "import");
        self.check_fds(g, "at import");
        let buf = self.groups[g].buffer.clone().expect("found by its buffer");
        let owned_fd = buf.is_reported_fd(fd);
        let quirk = self.config.quirks.import_fd;
        if quirk != ImportFd::Kept && owned_fd {
            let when = if quirk == ImportFd::ClosedByImport { "the import" } else { "its zeMemFree" };
            self.violation(
                "implementation_fd_closed_by_import",
                ctx,
                format!(
                    "zeMemAllocDevice was given the implementation's own fd {fd}, and this driver closes the fd it imports at {when}: import from a dup"
                ),
            );
        }
        if quirk == ImportFd::ClosedByImport {
            // SAFETY: this driver's documented quirk: it takes ownership of the imported fd.
            unsafe { libc::close(fd) };
        }
        if self.config.faults.import_fails {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        if size == 0 || size > buf.size {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        let ptr = buf.map_for_import().map_err(|_| ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)? as usize;
        let taken_fd = (quirk == ImportFd::ClosedAtFree).then(|| (fd, crate::fdcheck::private_dup(fd)));
        self.allocs.insert(ptr, Alloc { ctx, size: buf.size, kind: AllocKind::Import { group: g, buf, taken_fd } });
        Ok(ptr)
    }

    fn alloc_plain(&mut self, ctx: usize, size: usize, align: usize) -> R<usize> {
        if size == 0 || size > 1 << 30 {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
        }
        let align = align.max(64);
        let layout =
            std::alloc::Layout::from_size_align(size, align).map_err(|_| ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)?;
        // SAFETY: layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        if p.is_null() {
            return Err(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
        }
        self.allocs.insert(p as usize, Alloc { ctx, size, kind: AllocKind::Host { layout } });
        Ok(p as usize)
    }

    pub(crate) fn alloc_host(
        &mut self,
        ctx: usize,
        desc: &ze_host_mem_alloc_desc_t,
        size: usize,
        align: usize,
    ) -> R<usize> {
        if desc.stype != ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC {
            self.violation("wrong_stype", ctx, format!("zeMemAllocHost given stype {:#x}", desc.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        self.alloc_plain(ctx, size, align)
    }

    pub(crate) fn free(&mut self, ctx: usize, ptr: usize) -> R<()> {
        match self.allocs.get(&ptr) {
            Some(a) if a.ctx == ctx => {}
            _ => return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
        }
        let import = match self.allocs.get(&ptr) {
            Some(Alloc { kind: AllocKind::Import { group, .. }, .. }) => Some(*group),
            _ => None,
        };
        // Freeing an import is allowed whatever the tracer of its group does: the extension asks
        // for the free BEFORE its exporter is torn down (destroyed, deactivated, metrics
        // disabled), nothing more. Intel's conformance suite frees first, then destroys the
        // decoder and the tracer, then deactivates.
        if let Some(g) = import {
            self.touch_exporter(g, "free of an import");
        }
        let (fault, fired, what) = match import {
            Some(_) => (
                self.config.faults.mem_free_fails,
                &mut self.free_fault_fired,
                "an import fails; the import stays alive",
            ),
            None => (
                self.config.faults.host_free_fails,
                &mut self.host_free_fault_fired,
                "host memory fails; the allocation stays",
            ),
        };
        let fail = match fault {
            Some(FreeFault::Always) => true,
            Some(FreeFault::Once) => !std::mem::replace(fired, true),
            None => false,
        };
        if fail {
            eprintln!("ze-sim: injected fault: zeMemFree of {what}");
            self.teardown_step();
            return Err(ZE_RESULT_ERROR_UNKNOWN);
        }
        let a = self.allocs.remove(&ptr).expect("checked above");
        match a.kind {
            AllocKind::Import { group, taken_fd, .. } => {
                unmap_import(ptr as *mut u8, a.size);
                if let Some((fd, private)) = taken_fd {
                    self.close_taken_fd(ctx, fd, private);
                }
                // Unmap before free: once the last import of the memory is gone, the
                // application maps none of it.
                if self.live_imports_of(group) == 0 {
                    self.check_mappings(group, "zeMemFree of the last import");
                }
                if self.groups[group].active_in.is_none() && self.live_imports_of(group) == 0 {
                    self.groups[group].owner = None;
                }
            }
            // SAFETY: allocated by alloc_plain with this layout; removed from the table, so freed once.
            AllocKind::Host { layout } => unsafe { std::alloc::dealloc(ptr as *mut u8, layout) },
        }
        self.teardown_step();
        Ok(())
    }

    /// Quirk `import_fd: ClosedAtFree`: closes the fd an import was given, if it is still the
    /// same open file description (else the application closed or replaced it before the free,
    /// which this driver records instead of closing whatever the number names now).
    fn close_taken_fd(&mut self, ctx: usize, fd: RawFd, private: RawFd) {
        if private >= 0
            && crate::fdcheck::kcmp_same_file(fd, private).unwrap_or_else(|| file_id(fd) == file_id(private))
        {
            // SAFETY: this driver's documented quirk: it owns the imported fd until the free.
            unsafe { libc::close(fd) };
        } else {
            self.violation(
                "import_fd_closed_before_free",
                ctx,
                format!(
                    "the fd {fd} given to an import was closed or replaced before zeMemFree, and this driver closes it at the free"
                ),
            );
        }
        if private >= 0 {
            // SAFETY: the private dup is ours.
            unsafe { libc::close(private) };
        }
    }

    pub(crate) fn cmdlist_create(
        &mut self,
        ctx: usize,
        desc: &ze_command_queue_desc_t,
        ch: &mut HandleChanges,
    ) -> R<usize> {
        if desc.stype != ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC {
            self.violation("wrong_stype", ctx, format!("zeCommandListCreateImmediate given stype {:#x}", desc.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        if self.shared.is_lost() {
            return Err(ZE_RESULT_ERROR_DEVICE_LOST);
        }
        let h = new_handle();
        self.cmdlists.insert(h, CmdList { ctx });
        ch.added.push((h, Obj::CommandList));
        Ok(h)
    }

    pub(crate) fn cmdlist_destroy(&mut self, cl: usize, ch: &mut HandleChanges) -> R<()> {
        self.cmdlists.remove(&cl).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        ch.removed.push(cl);
        self.teardown_step();
        Ok(())
    }

    /// The allocation holding `[p, p + len)`, if any.
    fn containing(&self, p: usize, len: usize) -> Option<(usize, &Alloc)> {
        let (&start, a) = self.allocs.range(..=p).next_back()?;
        (p.checked_add(len)? <= start + a.size).then_some((start, a))
    }

    /// An immediate, synchronous copy. Both ranges must lie inside allocations of this driver.
    pub(crate) fn copy(&mut self, cl: usize, dst: usize, src: usize, len: usize) -> R<()> {
        let ctx = self.cmdlists.get(&cl).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?.ctx;
        if self.shared.is_lost() {
            return Err(ZE_RESULT_ERROR_DEVICE_LOST);
        }
        let src_import = match self.containing(src, len) {
            Some((start, a)) if a.ctx == ctx => match &a.kind {
                AllocKind::Import { group, buf, .. } => Some((*group, Arc::clone(buf), src - start)),
                AllocKind::Host { .. } => None,
            },
            _ => return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
        };
        match self.containing(dst, len) {
            Some((_, a)) if a.ctx == ctx && matches!(a.kind, AllocKind::Host { .. }) => {}
            _ => return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
        }
        match src_import {
            Some((g, buf, offset)) => {
                self.touch_exporter(g, "copy from an import");
                // SAFETY: the destination range was just checked to lie inside a live host
                // allocation of this driver.
                if !unsafe { buf.copy_out(offset, dst as *mut u8, len) } {
                    eprintln!("ze-sim: copy from an import past the end of its (shrunk) exported file refused");
                    return Err(ZE_RESULT_ERROR_UNKNOWN);
                }
            }
            // SAFETY: both ranges were just checked to lie inside live host allocations of this
            // driver; `copy` handles overlap within one allocation.
            None => unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) },
        }
        Ok(())
    }
}
