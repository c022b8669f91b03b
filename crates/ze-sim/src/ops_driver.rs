//! Driver, device and context operations.

use std::ffi::CStr;

use level_zero_sys::*;

use crate::config::DeviceKind;
use crate::instance::{AllocKind, Instance};
use crate::registry::{HandleChanges, Obj, new_handle};

pub(crate) type R<T> = Result<T, ze_result_t>;

/// Copies `s` into a fixed C string field, truncated to leave room for the NUL.
pub(crate) fn put_str(dst: &mut [core::ffi::c_char], s: &str) {
    let n = s.len().min(dst.len() - 1);
    for (d, b) in dst.iter_mut().zip(s.as_bytes()[..n].iter()) {
        *d = *b as core::ffi::c_char;
    }
    dst[n] = 0;
}

/// Fills a count/array query: `*count == 0` asks for the count; otherwise up to `*count` items
/// are written and `*count` becomes the number written.
pub(crate) fn fill_array<T: Copy>(items: &[T], count: &mut u32, out: Option<&mut [T]>) {
    match out {
        Some(out) if *count > 0 => {
            let n = items.len().min(out.len());
            out[..n].copy_from_slice(&items[..n]);
            *count = n as u32;
        }
        _ => *count = items.len() as u32,
    }
}

impl Instance {
    pub(crate) fn init(&mut self) -> R<()> {
        if self.config.faults.init_fails {
            return Err(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
        }
        if !self.initialized {
            self.resolve_metrics_from_env();
            self.resolve_sysman_from_env();
            self.initialized = true;
        }
        Ok(())
    }

    /// Does a `zeInitDrivers` with these type flags ask for a device this driver has?
    pub(crate) fn serves(&self, flags: ze_init_driver_type_flags_t) -> bool {
        self.devices.iter().any(|d| match d.cfg.kind {
            DeviceKind::Gpu => flags & ZE_INIT_DRIVER_TYPE_FLAG_GPU != 0,
            DeviceKind::Npu => flags & ZE_INIT_DRIVER_TYPE_FLAG_NPU != 0,
        })
    }

    /// `driver_uuid_tag`, or the copy's default when it is 0.
    fn uuid_tag(&self) -> u32 {
        if self.config.driver_uuid_tag != 0 { self.config.driver_uuid_tag } else { crate::copy_env::default_uuid_tag() }
    }

    pub(crate) fn ready(&self) -> R<()> {
        if self.initialized { Ok(()) } else { Err(ZE_RESULT_ERROR_UNINITIALIZED) }
    }

    pub(crate) fn driver_properties(&self, p: &mut ze_driver_properties_t) -> R<()> {
        self.ready()?;
        if p.stype != ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&0x7a65_2d73_696d_0001u64.to_le_bytes());
        id[8..].copy_from_slice(&(self.config.seed ^ ((self.uuid_tag() as u64) << 32)).to_le_bytes());
        p.uuid = ze_driver_uuid_t { id };
        p.driverVersion = self.config.driver_version;
        Ok(())
    }

    pub(crate) fn root_devices(&self) -> Vec<ze_device_handle_t> {
        if self.config.faults.no_devices {
            return Vec::new();
        }
        self.devices.iter().filter(|d| d.parent.is_none()).map(|d| d.handle as ze_device_handle_t).collect()
    }

    pub(crate) fn sub_devices(&self, d: usize) -> Vec<ze_device_handle_t> {
        self.devices[d].subs.iter().map(|&s| self.devices[s].handle as ze_device_handle_t).collect()
    }

    pub(crate) fn device_properties(&mut self, d: usize, p: &mut ze_device_properties_t) -> R<()> {
        self.ready()?;
        if p.stype != ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES && p.stype != ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 {
            let h = self.devices[d].handle;
            self.violation("wrong_stype", h, format!("zeDeviceGetProperties given stype {:#x}", p.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let dev = &self.devices[d];
        p.r#type = match dev.cfg.kind {
            DeviceKind::Gpu => ZE_DEVICE_TYPE_GPU,
            DeviceKind::Npu => ZE_DEVICE_TYPE_VPU,
        };
        p.vendorId = dev.cfg.vendor_id;
        p.deviceId = dev.cfg.device_id;
        p.flags = if dev.parent.is_some() { ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE } else { 0 };
        p.subdeviceId =
            dev.parent.map_or(0, |parent| self.devices[parent].subs.iter().position(|&s| s == d).unwrap_or(0) as u32);
        p.coreClockRate = dev.cfg.core_clock_mhz;
        p.maxMemAllocSize = 1 << 32;
        p.maxHardwareContexts = 64;
        p.numThreadsPerEU = 8;
        p.physicalEUSimdWidth = 8;
        p.numEUsPerSubslice = 16;
        p.numSubslicesPerSlice = 4;
        p.numSlices = 1;
        // ns per tick for the 1.0 query (rounded, as an integer field must be); ticks per
        // second for the 1.2 one.
        let hz = self.shared.timer_hz();
        p.timerResolution = if p.stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 {
            hz
        } else {
            ((1_000_000_000 + hz / 2) / hz).max(1)
        };
        p.timestampValidBits = self.shared.timestamp_bits();
        p.kernelTimestampValidBits = 64;
        let mut uuid = [0u8; 16];
        uuid[..8].copy_from_slice(&(self.config.seed ^ ((self.uuid_tag() as u64) << 32)).to_le_bytes());
        uuid[8..12].copy_from_slice(&dev.cfg.device_id.to_le_bytes());
        uuid[12..].copy_from_slice(&(d as u32).to_le_bytes());
        p.uuid = ze_device_uuid_t { id: uuid };
        put_str(&mut p.name, &dev.cfg.name);
        Ok(())
    }

    pub(crate) fn device_status(&self) -> R<()> {
        if self.shared.is_lost() { Err(ZE_RESULT_ERROR_DEVICE_LOST) } else { Ok(()) }
    }

    pub(crate) fn extension_names() -> &'static [(&'static str, u32)] {
        const V1_0: u32 = ze_make_version(1, 0);
        &[
            ("ZET_experimental_metric_export_memory", V1_0),
            ("ZET_experimental_metrics_runtime_enable_disable", V1_0),
            ("ZET_experimental_metric_tracer", V1_0),
            ("ZET_experimental_concurrent_metric_groups", V1_0),
            ("ZET_experimental_global_metric_timestamps", V1_0),
            ("ZE_extension_pci_properties", V1_0),
        ]
    }

    pub(crate) fn context_create(&mut self, desc: &ze_context_desc_t, ch: &mut HandleChanges) -> R<usize> {
        self.ready()?;
        if desc.stype != ZE_STRUCTURE_TYPE_CONTEXT_DESC {
            self.violation("wrong_stype", self.driver, format!("zeContextCreate given stype {:#x}", desc.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let h = new_handle();
        self.contexts.push(h);
        ch.added.push((h, Obj::Context));
        Ok(h)
    }

    pub(crate) fn context_destroy(&mut self, ctx: usize, ch: &mut HandleChanges) -> R<()> {
        self.refuse_with_open_streamer(&[], Some(ctx), "zeContextDestroy", ctx)?;
        self.refuse_with_live_tracer(&[], Some(ctx), "zeContextDestroy", ctx)?;
        let imports: Vec<usize> = self
            .allocs
            .values()
            .filter(|a| a.ctx == ctx)
            .filter_map(|a| match a.kind {
                AllocKind::Import { group, .. } => Some(group),
                AllocKind::Host { .. } => None,
            })
            .collect();
        if let Some(&g) = imports.first() {
            let name = self.groups[g].name.clone();
            self.violation(
                "teardown_with_live_import",
                ctx,
                format!(
                    "zeContextDestroy while {} import(s) of exported memory (metric group {name}) are alive in it",
                    imports.len()
                ),
            );
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        let active: Vec<String> =
            self.groups.iter().filter(|g| g.active_in == Some(ctx)).map(|g| g.name.clone()).collect();
        if !active.is_empty() {
            self.violation(
                "teardown_order",
                ctx,
                format!("zeContextDestroy while metric groups are activated in it: {}", active.join(", ")),
            );
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        let others = self.allocs.values().filter(|a| a.ctx == ctx).count()
            + self.cmdlists.values().filter(|c| c.ctx == ctx).count()
            + self.pools.values().filter(|p| p.ctx == ctx).count();
        if others > 0 {
            self.violation(
                "teardown_order",
                ctx,
                format!(
                    "zeContextDestroy while {others} allocation(s), command list(s) or event pool(s) of it are alive"
                ),
            );
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        self.contexts.retain(|&c| c != ctx);
        ch.removed.push(ctx);
        self.teardown_step();
        Ok(())
    }
}

/// Name of an extension function the driver implements, if `name` is one.
pub(crate) fn extension_function(name: &CStr) -> Option<*mut core::ffi::c_void> {
    use crate::entry::*;
    let f: *mut core::ffi::c_void = match name.to_bytes() {
        b"zetDeviceEnableMetricsExp" => sim_zetDeviceEnableMetricsExp as *mut _,
        b"zetDeviceDisableMetricsExp" => sim_zetDeviceDisableMetricsExp as *mut _,
        b"zetDeviceGetConcurrentMetricGroupsExp" => sim_zetDeviceGetConcurrentMetricGroupsExp as *mut _,
        b"zetMetricGroupGetGlobalTimestampsExp" => sim_zetMetricGroupGetGlobalTimestampsExp as *mut _,
        b"zetMetricGroupGetExportDataExp" => sim_zetMetricGroupGetExportDataExp as *mut _,
        b"zetMetricGroupCreateExp" => sim_zetMetricGroupCreateExp as *mut _,
        b"zetMetricGroupAddMetricExp" => sim_zetMetricGroupAddMetricExp as *mut _,
        b"zetMetricGroupCloseExp" => sim_zetMetricGroupCloseExp as *mut _,
        b"zetMetricGroupDestroyExp" => sim_zetMetricGroupDestroyExp as *mut _,
        _ => return None,
    };
    Some(f)
}
