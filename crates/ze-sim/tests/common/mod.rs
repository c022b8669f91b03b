//! Thin raw helpers over an `Api` for the driver's tests: each wraps one call, keeps the unsafe
//! in one place, and returns the `ze_result_t` on failure.
#![allow(dead_code, non_snake_case)]

use std::ffi::{CStr, c_void};

use level_zero_sys::*;

pub mod fixture;
pub mod stream;
pub mod tracer;

pub type R<T> = Result<T, ze_result_t>;

pub fn ok(r: ze_result_t) -> R<()> {
    if r == ZE_RESULT_SUCCESS { Ok(()) } else { Err(r) }
}

/// A struct the driver has never heard of, placed in pNext chains to check it is skipped.
#[repr(C)]
pub struct Unknown {
    pub stype: u32,
    pub pNext: *mut c_void,
    pub payload: [u64; 4],
}
pub const UNKNOWN_STYPE: u32 = 0x7123_4567;

pub struct Export {
    pub fd: i32,
    pub size: usize,
}

pub struct GroupInfo {
    pub name: String,
    pub domain: u32,
    pub type_flags: u32,
    pub sampling: u32,
    pub export: Export,
}

pub struct Raw {
    pub api: Api,
}

pub fn cstr(b: &[core::ffi::c_char]) -> String {
    // SAFETY: the driver NUL-terminates every fixed string field (the arrays are zeroed first).
    unsafe { CStr::from_ptr(b.as_ptr()) }.to_string_lossy().into_owned()
}

impl Raw {
    pub fn drivers(&self) -> R<Vec<ze_driver_handle_t>> {
        let mut n = 0;
        // SAFETY: count query with a valid out-pointer.
        ok(unsafe { (self.api.zeDriverGet)(&mut n, std::ptr::null_mut()) })?;
        let mut v = vec![std::ptr::null_mut(); n as usize];
        // SAFETY: v holds n handles.
        ok(unsafe { (self.api.zeDriverGet)(&mut n, v.as_mut_ptr()) })?;
        Ok(v)
    }

    pub fn devices(&self, drv: ze_driver_handle_t) -> R<Vec<ze_device_handle_t>> {
        let mut n = 0;
        // SAFETY: as above.
        ok(unsafe { (self.api.zeDeviceGet)(drv, &mut n, std::ptr::null_mut()) })?;
        let mut v = vec![std::ptr::null_mut(); n as usize];
        // SAFETY: as above.
        ok(unsafe { (self.api.zeDeviceGet)(drv, &mut n, v.as_mut_ptr()) })?;
        Ok(v)
    }

    pub fn sub_devices(&self, d: ze_device_handle_t) -> R<Vec<ze_device_handle_t>> {
        let mut n = 0;
        // SAFETY: as above.
        ok(unsafe { (self.api.zeDeviceGetSubDevices)(d, &mut n, std::ptr::null_mut()) })?;
        let mut v = vec![std::ptr::null_mut(); n as usize];
        // SAFETY: as above.
        ok(unsafe { (self.api.zeDeviceGetSubDevices)(d, &mut n, v.as_mut_ptr()) })?;
        Ok(v)
    }

    pub fn device_name(&self, d: ze_device_handle_t) -> R<(String, u32)> {
        let mut p = ze_device_properties_t { stype: ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, ..Default::default() };
        // SAFETY: valid properties struct.
        ok(unsafe { (self.api.zeDeviceGetProperties)(d, &mut p) })?;
        Ok((cstr(&p.name), p.r#type))
    }

    pub fn groups(&self, d: ze_device_handle_t) -> R<Vec<zet_metric_group_handle_t>> {
        let mut n = 0;
        // SAFETY: as above.
        ok(unsafe { (self.api.zetMetricGroupGet)(d, &mut n, std::ptr::null_mut()) })?;
        let mut v = vec![std::ptr::null_mut(); n as usize];
        // SAFETY: as above.
        ok(unsafe { (self.api.zetMetricGroupGet)(d, &mut n, v.as_mut_ptr()) })?;
        Ok(v)
    }

    /// Group properties with the chain unknown → type → export (the unknown struct first, so a
    /// driver must walk past it).
    pub fn group(&self, g: zet_metric_group_handle_t) -> R<GroupInfo> {
        let mut export = zet_export_dma_buf_exp_properties_t::default();
        let mut ty = zet_metric_group_type_exp_t {
            pNext: (&mut export as *mut zet_export_dma_buf_exp_properties_t).cast(),
            ..Default::default()
        };
        let mut unknown = Unknown {
            stype: UNKNOWN_STYPE,
            pNext: (&mut ty as *mut zet_metric_group_type_exp_t).cast(),
            payload: [7; 4],
        };
        let mut p = zet_metric_group_properties_t {
            stype: ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES,
            pNext: (&mut unknown as *mut Unknown).cast(),
            ..Default::default()
        };
        // SAFETY: every struct of the chain lives until the call returns.
        ok(unsafe { (self.api.zetMetricGroupGetProperties)(g, &mut p) })?;
        assert_eq!(unknown.payload, [7; 4], "the driver wrote into a struct it does not know");
        Ok(GroupInfo {
            name: cstr(&p.name),
            domain: p.domain,
            type_flags: ty.r#type,
            sampling: p.samplingType,
            export: Export { fd: export.fd, size: export.size },
        })
    }

    pub fn group_by_name(&self, d: ze_device_handle_t, name: &str) -> R<zet_metric_group_handle_t> {
        for g in self.groups(d)? {
            if self.group(g)?.name == name {
                return Ok(g);
            }
        }
        Err(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    }

    pub fn metrics(&self, g: zet_metric_group_handle_t) -> R<Vec<zet_metric_handle_t>> {
        let mut n = 0;
        // SAFETY: as above.
        ok(unsafe { (self.api.zetMetricGet)(g, &mut n, std::ptr::null_mut()) })?;
        let mut v = vec![std::ptr::null_mut(); n as usize];
        // SAFETY: as above.
        ok(unsafe { (self.api.zetMetricGet)(g, &mut n, v.as_mut_ptr()) })?;
        Ok(v)
    }

    /// (name, metric type, export) of a metric.
    pub fn metric(&self, m: zet_metric_handle_t) -> R<(String, u32, Export)> {
        let mut export = zet_export_dma_buf_exp_properties_t::default();
        let mut p = zet_metric_properties_t {
            stype: ZET_STRUCTURE_TYPE_METRIC_PROPERTIES,
            pNext: (&mut export as *mut zet_export_dma_buf_exp_properties_t).cast(),
            ..Default::default()
        };
        // SAFETY: the chain lives until the call returns.
        ok(unsafe { (self.api.zetMetricGetProperties)(m, &mut p) })?;
        Ok((cstr(&p.name), p.metricType, Export { fd: export.fd, size: export.size }))
    }

    pub fn context(&self, drv: ze_driver_handle_t) -> R<ze_context_handle_t> {
        let desc = ze_context_desc_t { stype: ZE_STRUCTURE_TYPE_CONTEXT_DESC, ..Default::default() };
        let mut c = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer.
        ok(unsafe { (self.api.zeContextCreate)(drv, &desc, &mut c) })?;
        Ok(c)
    }

    pub fn destroy_context(&self, c: ze_context_handle_t) -> R<()> {
        // SAFETY: plain handle call.
        ok(unsafe { (self.api.zeContextDestroy)(c) })
    }

    pub fn activate(
        &self,
        c: ze_context_handle_t,
        d: ze_device_handle_t,
        groups: &[zet_metric_group_handle_t],
    ) -> R<()> {
        let mut v = groups.to_vec();
        // SAFETY: v holds groups.len() handles.
        ok(unsafe { (self.api.zetContextActivateMetricGroups)(c, d, v.len() as u32, v.as_mut_ptr()) })
    }

    pub fn import(&self, c: ze_context_handle_t, d: ze_device_handle_t, fd: i32, size: usize) -> R<*mut c_void> {
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
        // SAFETY: descriptors live until the call returns.
        ok(unsafe { (self.api.zeMemAllocDevice)(c, &desc, size, 4096, d, &mut p) })?;
        Ok(p)
    }

    pub fn free(&self, c: ze_context_handle_t, p: *mut c_void) -> R<()> {
        // SAFETY: p was returned by this driver for this context.
        ok(unsafe { (self.api.zeMemFree)(c, p) })
    }

    /// Resolves an extension function through `zeDriverGetExtensionFunctionAddress`.
    pub fn extension(&self, drv: ze_driver_handle_t, name: &CStr) -> R<*mut c_void> {
        let mut f = std::ptr::null_mut();
        // SAFETY: NUL-terminated name, valid out-pointer.
        ok(unsafe { (self.api.zeDriverGetExtensionFunctionAddress)(drv, name.as_ptr(), &mut f) })?;
        Ok(f)
    }

    /// A loader handle translated to the driver's (identity without a loader).
    pub fn translate(&self, kind: zel_handle_type_t, h: *mut c_void) -> R<*mut c_void> {
        match self.api.zelLoaderTranslateHandle {
            None => Ok(h),
            Some(t) => {
                let mut out = std::ptr::null_mut();
                // SAFETY: valid out-pointer.
                ok(unsafe { t(kind, h, &mut out) })?;
                Ok(out)
            }
        }
    }

    /// Calls `zetDevice{Enable,Disable}MetricsExp` resolved through the driver, on the
    /// translated device handle.
    pub fn device_exp(&self, drv: ze_driver_handle_t, name: &CStr, d: ze_device_handle_t) -> R<()> {
        let f = self.extension(drv, name)?;
        // SAFETY: the driver returned its implementation of this entry point, whose signature is
        // `ze_result_t (zet_device_handle_t)`.
        let f: pfn::zetDeviceDisableMetricsExp = unsafe { std::mem::transmute(f) };
        let dev = self.translate(ZEL_HANDLE_DEVICE, d.cast())?;
        // SAFETY: a driver device handle.
        ok(unsafe { f(dev.cast()) })
    }
}

/// Reads the u64 at `offset` of a read-only mapping of `fd` (`size` bytes).
/// Waits for `done` within 30 s (the workload's ticks come late on a loaded machine); fails
/// naming `what` after that.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what}: not within 30 s");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

pub fn read_mapped_u64(fd: i32, size: usize, offset: usize) -> u64 {
    assert!(offset + 8 <= size);
    // SAFETY: a fresh read-only shared mapping of the exported fd, unmapped below.
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ, libc::MAP_SHARED, fd, 0);
        assert_ne!(p, libc::MAP_FAILED, "mmap of the exported fd failed");
        let v = std::ptr::read_volatile(p.cast::<u8>().add(offset).cast::<u64>());
        libc::munmap(p, size);
        v
    }
}

/// A dup of `fd` (F_DUPFD_CLOEXEC): what an application imports instead of the driver's own fd.
pub fn dup(fd: i32) -> i32 {
    // SAFETY: duplicating an open fd.
    let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    assert!(d >= 0, "dup failed");
    d
}

pub fn close(fd: i32) {
    // SAFETY: closing an fd the test owns (or, in violation tests, deliberately one it does not).
    unsafe { libc::close(fd) };
}

pub fn fd_is_open(fd: i32) -> bool {
    // SAFETY: F_GETFD on any number is harmless.
    unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
}

/// The file `fd` refers to (device, inode), if it is open.
pub fn file_of(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: fstat on any number is harmless; `st` is written only on success.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut st) == 0).then_some((st.st_dev, st.st_ino))
    }
}
