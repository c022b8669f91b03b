//! Contexts and what lives in them: metric group activation, imports of exported memory, host
//! allocations, and the immediate command list used to copy from an import.
//!
//! Creating and destroying, in the right order, is the sampler's job (its one teardown function),
//! not Drop's. What gets destroyed is neither `Clone` nor handed out raw, and destroying consumes
//! it: a context or command list cannot be used after its destroy, nor destroyed twice.

use core::ffi::c_void;

use level_zero_sys::*;

use super::device::{Device, Driver};
use super::error::{ZeError, check};
use super::loader::Ze;
use super::metric::MetricGroup;

/// A Level Zero context. Destroyed (consumed) by [`Context::destroy`]; never cloned.
pub struct Context {
    ze: Ze,
    pub(super) handle: ze_context_handle_t,
}

impl Context {
    /// Creates a context on `driver`; the caller destroys it (consuming) after everything in it.
    pub fn create(driver: &Driver) -> Result<Context, ZeError> {
        let ze = &driver.ze;
        let desc = ze_context_desc_t { stype: ZE_STRUCTURE_TYPE_CONTEXT_DESC, ..Default::default() };
        let mut h = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer.
        check("zeContextCreate", unsafe { (ze.api.zeContextCreate)(driver.handle, &desc, &mut h) })?;
        Ok(Context { ze: ze.clone(), handle: h })
    }

    /// `zeContextDestroy`, after every allocation and command list of it was released. Consumes
    /// the context whether or not the driver succeeded: its handle is not used again.
    pub fn destroy(self) -> Result<(), ZeError> {
        // SAFETY: our context's handle, destroyed once (self is consumed).
        check("zeContextDestroy", unsafe { (self.ze.api.zeContextDestroy)(self.handle) })
    }

    /// Makes `groups` the set activated on `device` (empty: deactivate all).
    pub fn activate(&self, device: &Device, groups: &[&MetricGroup]) -> Result<(), ZeError> {
        let mut v: Vec<zet_metric_group_handle_t> = groups.iter().map(|g| g.handle).collect();
        let ptr = if v.is_empty() { std::ptr::null_mut() } else { v.as_mut_ptr() };
        // SAFETY: `ptr` holds `v.len()` handles (or is null for zero).
        check("zetContextActivateMetricGroups", unsafe {
            (self.ze.api.zetContextActivateMetricGroups)(self.handle, device.handle, v.len() as u32, ptr)
        })
    }

    /// Imports `size` bytes of the DMA-BUF behind `fd` as device memory (`zeMemAllocDevice` with
    /// an import-fd descriptor). Pass a dup, never the implementation's own fd: some drivers
    /// close the fd they import.
    pub fn import_dma_buf(&self, device: &Device, fd: i32, size: usize) -> Result<*mut c_void, ZeError> {
        let import = ze_external_memory_import_fd_t {
            stype: ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD,
            flags: ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF,
            fd,
            ..Default::default()
        };
        let desc = ze_device_mem_alloc_desc_t {
            stype: ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
            pNext: (&import as *const ze_external_memory_import_fd_t).cast(),
            ..Default::default()
        };
        let mut p = std::ptr::null_mut();
        // SAFETY: both descriptors live until the call returns; `p` is a valid out-pointer.
        check("zeMemAllocDevice", unsafe {
            (self.ze.api.zeMemAllocDevice)(self.handle, &desc, size, 4096, device.handle, &mut p)
        })?;
        Ok(p)
    }

    /// Allocates `size` bytes of host memory (64-byte aligned) in this context; freed with this
    /// context's `free`, before the context is destroyed.
    pub fn alloc_host(&self, size: usize) -> Result<*mut c_void, ZeError> {
        let desc = ze_host_mem_alloc_desc_t { stype: ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, ..Default::default() };
        let mut p = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer.
        check("zeMemAllocHost", unsafe { (self.ze.api.zeMemAllocHost)(self.handle, &desc, size, 64, &mut p) })?;
        Ok(p)
    }

    /// Frees an allocation of this context.
    ///
    /// # Safety
    /// `ptr` came from this context's `import_dma_buf` or `alloc_host`, is freed once, and nothing
    /// reads through it afterwards.
    pub unsafe fn free(&self, ptr: *mut c_void) -> Result<(), ZeError> {
        // SAFETY: see the function's contract.
        check("zeMemFree", unsafe { (self.ze.api.zeMemFree)(self.handle, ptr) })
    }

    /// An immediate, synchronous command list on `device`.
    pub fn immediate_list(&self, device: &Device) -> Result<CommandList, ZeError> {
        let desc = ze_command_queue_desc_t {
            stype: ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
            mode: ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
            priority: ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
            ..Default::default()
        };
        let mut h = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer.
        check("zeCommandListCreateImmediate", unsafe {
            (self.ze.api.zeCommandListCreateImmediate)(self.handle, device.handle, &desc, &mut h)
        })?;
        Ok(CommandList { ze: self.ze.clone(), handle: h })
    }
}

/// An immediate command list. Destroyed (consumed) by [`CommandList::destroy`]; never cloned.
pub struct CommandList {
    ze: Ze,
    handle: ze_command_list_handle_t,
}

impl CommandList {
    /// Copies `len` bytes; returns when the copy is done (the list is synchronous).
    ///
    /// # Safety
    /// `src` and `dst` are allocations of this list's context with at least `len` bytes each.
    pub unsafe fn copy(&self, dst: *mut c_void, src: *const c_void, len: usize) -> Result<(), ZeError> {
        // SAFETY: see the function's contract; no events.
        check("zeCommandListAppendMemoryCopy", unsafe {
            (self.ze.api.zeCommandListAppendMemoryCopy)(
                self.handle,
                dst,
                src,
                len,
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
            )
        })
    }

    /// `zeCommandListDestroy`; consumes the list.
    pub fn destroy(self) -> Result<(), ZeError> {
        // SAFETY: our list's handle, destroyed once (self is consumed).
        check("zeCommandListDestroy", unsafe { (self.ze.api.zeCommandListDestroy)(self.handle) })
    }
}

// Raw driver handles: these stay on the thread that made them (the sampler).
static_assertions::assert_not_impl_any!(Context: Send, Sync, Clone);
static_assertions::assert_not_impl_any!(CommandList: Send, Sync, Clone);
