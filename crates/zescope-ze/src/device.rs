//! Drivers and devices: enumeration and properties, and the drivers' extension functions.

use level_zero_sys::*;

use super::error::{ZeError, check};
use super::loader::Ze;
use super::metric::MetricGroup;
use super::{c_string, query_array};

/// The first bytes of ze-sim's driver UUID: how a simulated driver behind the real loader is
/// recognised and marked as simulated.
const SIM_UUID_PREFIX: [u8; 8] = 0x7a65_2d73_696d_0001u64.to_le_bytes();

/// What a driver says about itself.
#[derive(Clone, Debug)]
pub struct DriverInfo {
    /// Driver UUID (its first bytes identify the simulated driver).
    pub uuid: [u8; 16],
    /// The driver's version number.
    pub version: u32,
    /// Level Zero API version (major, minor) the driver implements.
    pub api_version: (u32, u32),
    /// Extensions the driver offers: name and version.
    pub extensions: Vec<(String, u32)>,
    /// True for the simulated driver (built in or ze-sim behind the loader).
    pub simulated: bool,
}

/// A driver of an opened source. Not destroyed by zescope (the loader owns it).
#[derive(Clone)]
pub struct Driver {
    /// The entry points it is reached through.
    pub ze: Ze,
    /// The loader's handle for the driver (what loader exports take).
    pub handle: ze_driver_handle_t,
    /// What the driver reported when opened.
    pub info: DriverInfo,
}

/// Which source answered a call through an [`Entry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalledThrough {
    /// The loader's own export (or the in-process driver's `Api`), with the application's handle.
    Loader,
    /// The driver's function from `zeDriverGetExtensionFunctionAddress`, with the driver's handle.
    Driver,
}

/// One entry point that may exist twice: as the loader's export (newer loaders export the
/// experimental metric functions) and as the driver's extension function.
///
/// THE HANDLE RULE, kept here and nowhere else: the loader's export takes the application's
/// (loader) handle; the driver's function takes the driver's own handle (`zelLoaderTranslateHandle`).
/// The loader's export is tried first; when it is absent or answers "not supported here"
/// (ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, or ZE_RESULT_ERROR_UNINITIALIZED while the loader wraps
/// handles: its answer for an empty slot in the driver's tables), the driver's function is
/// called instead. Passing a driver handle to a loader export crashes loaders that wrap handles.
#[derive(Clone, Copy)]
pub struct Entry<F> {
    /// The loader's export, if the loader has it.
    pub loader: Option<F>,
    /// The driver's extension function, if the driver offers it.
    pub driver: Option<F>,
}

impl<F> Default for Entry<F> {
    fn default() -> Self {
        Entry { loader: None, driver: None }
    }
}

impl<F: Copy> Entry<F> {
    /// Does either source offer it?
    pub fn is_some(&self) -> bool {
        self.loader.is_some() || self.driver.is_some()
    }

    /// Calls the entry point by the handle rule. `app` is the application's handle; `driver` the
    /// driver's handle for it, or `None` when the driver's function may not be used (a handle the
    /// loader cannot translate, or a result the loader could not take back). `wrapped`: does the
    /// loader wrap handles? `None` when no source could take the call; otherwise the source that
    /// answered, or the last error.
    pub fn call<H: Copy>(
        &self,
        name: &'static str,
        app: H,
        driver: Option<H>,
        wrapped: bool,
        f: impl Fn(F, H) -> ze_result_t,
    ) -> Option<Result<CalledThrough, ZeError>> {
        let mut last = None;
        if let Some(export) = self.loader {
            let r = f(export, app);
            let not_here = r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE || (wrapped && r == ZE_RESULT_ERROR_UNINITIALIZED);
            if !not_here {
                return Some(check(name, r).map(|()| CalledThrough::Loader));
            }
            last = Some(Err(ZeError { call: name, code: r }));
        }
        match (self.driver, driver) {
            (Some(own), Some(h)) => Some(check(name, f(own, h)).map(|()| CalledThrough::Driver)),
            _ => last,
        }
    }
}

/// Experimental entry points of a driver, each from both sources (see [`Entry`] for which handle
/// each takes).
#[derive(Clone, Copy, Default)]
pub struct Extensions {
    /// `zetDeviceEnableMetricsExp`.
    pub enable_metrics: Entry<pfn::zetDeviceEnableMetricsExp>,
    /// `zetDeviceDisableMetricsExp`.
    pub disable_metrics: Entry<pfn::zetDeviceDisableMetricsExp>,
    /// `zetMetricGroupCreateExp`.
    pub create_group: Entry<pfn::zetMetricGroupCreateExp>,
    /// `zetMetricGroupAddMetricExp`.
    pub add_metric: Entry<pfn::zetMetricGroupAddMetricExp>,
    /// `zetMetricGroupCloseExp`.
    pub close_group: Entry<pfn::zetMetricGroupCloseExp>,
    /// `zetMetricGroupDestroyExp`.
    pub destroy_group: Entry<pfn::zetMetricGroupDestroyExp>,
}

impl Extensions {
    /// Resolves the driver's experimental entry points from both sources: the loader's (or the
    /// in-process driver's) exports, and `zeDriverGetExtensionFunctionAddress`.
    pub fn resolve(ze: &Ze, driver: ze_driver_handle_t) -> Extensions {
        fn ext<F: Copy>(ze: &Ze, driver: ze_driver_handle_t, name: &core::ffi::CStr) -> Option<F> {
            let mut f = std::ptr::null_mut();
            // SAFETY: a driver handle from enumeration, a NUL-terminated name, a valid out-pointer.
            let r = unsafe { (ze.api.zeDriverGetExtensionFunctionAddress)(driver, name.as_ptr(), &mut f) };
            if r != ZE_RESULT_SUCCESS || f.is_null() {
                return None;
            }
            assert_eq!(size_of::<F>(), size_of::<*mut core::ffi::c_void>());
            // SAFETY: the driver returned its implementation of `name`, whose C signature is the
            // one `F` (the pfn:: type named after it) declares; the sizes match (asserted).
            Some(unsafe { std::mem::transmute_copy::<*mut core::ffi::c_void, F>(&f) })
        }
        let a = &ze.api;
        Extensions {
            enable_metrics: Entry {
                loader: a.zetDeviceEnableMetricsExp,
                driver: ext(ze, driver, zetDeviceEnableMetricsExp_NAME),
            },
            disable_metrics: Entry {
                loader: a.zetDeviceDisableMetricsExp,
                driver: ext(ze, driver, zetDeviceDisableMetricsExp_NAME),
            },
            create_group: Entry {
                loader: a.zetMetricGroupCreateExp,
                driver: ext(ze, driver, zetMetricGroupCreateExp_NAME),
            },
            add_metric: Entry {
                loader: a.zetMetricGroupAddMetricExp,
                driver: ext(ze, driver, zetMetricGroupAddMetricExp_NAME),
            },
            close_group: Entry {
                loader: a.zetMetricGroupCloseExp,
                driver: ext(ze, driver, zetMetricGroupCloseExp_NAME),
            },
            destroy_group: Entry {
                loader: a.zetMetricGroupDestroyExp,
                driver: ext(ze, driver, zetMetricGroupDestroyExp_NAME),
            },
        }
    }
}

impl Driver {
    /// # Safety
    /// `handle` came from `zeDriverGet` of the loader behind `ze`.
    pub(crate) unsafe fn new(ze: Ze, handle: ze_driver_handle_t) -> Result<Driver, ZeError> {
        let mut p = ze_driver_properties_t { stype: ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, ..Default::default() };
        // SAFETY: valid properties struct with a null chain.
        check("zeDriverGetProperties", unsafe { (ze.api.zeDriverGetProperties)(handle, &mut p) })?;
        // Optional: the version is shown, never relied on; a driver without it reports 0.0.
        let mut v = 0;
        // SAFETY: valid out-pointer.
        if let Err(e) = check("zeDriverGetApiVersion", unsafe { (ze.api.zeDriverGetApiVersion)(handle, &mut v) }) {
            log::info!("{e}: the driver's API version is shown as 0.0");
            v = 0;
        }
        let extensions =
            query_array("zeDriverGetExtensionProperties", ze_driver_extension_properties_t::default(), |n, out| {
                // SAFETY: `out` is null or holds `*n` elements (query_array's contract).
                unsafe { (ze.api.zeDriverGetExtensionProperties)(handle, n, out) }
            })
            .unwrap_or_default()
            .iter()
            .map(|e: &ze_driver_extension_properties_t| (c_string(&e.name), e.version))
            .collect();
        let info = DriverInfo {
            uuid: p.uuid.id,
            version: p.driverVersion,
            api_version: (ze_major_version(v), ze_minor_version(v)),
            extensions,
            simulated: p.uuid.id[..8] == SIM_UUID_PREFIX,
        };
        Ok(Driver { ze, handle, info })
    }

    /// The driver's root devices, in the driver's order.
    pub fn devices(&self) -> Result<Vec<Device>, ZeError> {
        let handles = query_array("zeDeviceGet", std::ptr::null_mut(), |n, out| {
            // SAFETY: see query_array.
            unsafe { (self.ze.api.zeDeviceGet)(self.handle, n, out) }
        })?;
        // SAFETY: handles just returned by zeDeviceGet for this driver.
        handles.into_iter().map(|h| unsafe { Device::new(self.ze.clone(), self.handle, h) }).collect()
    }

    /// The experimental metric entry points this driver offers.
    pub fn extensions(&self) -> Extensions {
        Extensions::resolve(&self.ze, self.handle)
    }
}

/// What kind of processor a device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DeviceKind {
    /// A graphics processor.
    Gpu,
    /// A neural processing unit (Level Zero's VPU type).
    Npu,
    /// A CPU exposed as a device.
    Cpu,
    /// An FPGA.
    Fpga,
    /// Any other type (MCA and types newer than zescope).
    Other,
}

/// What a device says about itself.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Name the driver reports.
    pub name: String,
    /// Processor kind.
    pub kind: DeviceKind,
    /// PCI vendor id.
    pub vendor_id: u32,
    /// PCI device id.
    pub device_id: u32,
    /// Device UUID.
    pub uuid: [u8; 16],
    /// Sub-device id, for a sub-device; `None` for a root device.
    pub sub_device: Option<u32>,
    /// Core clock rate in MHz, as the driver reports it.
    pub core_clock_mhz: u32,
    /// PCI address `DDDD:BB:DD.F` (as `lspci -D` and xpumanager print it) from
    /// `zeDevicePciGetPropertiesExt`; `None` where the driver does not offer it. A sub-device
    /// has its root device's.
    pub pci_bdf: Option<String>,
}

impl DeviceInfo {
    /// The UUID as 32 lowercase hex digits.
    pub fn uuid_string(&self) -> String {
        super::uuid_string(&self.uuid)
    }
}

/// A device (root or sub-device) of a driver. Not destroyed by zescope.
#[derive(Clone)]
pub struct Device {
    /// The entry points it is reached through.
    pub ze: Ze,
    /// The loader's handle of the device's driver.
    pub driver: ze_driver_handle_t,
    /// The device's handle.
    pub handle: ze_device_handle_t,
    /// What the device reported when listed.
    pub info: DeviceInfo,
}

/// The device's PCI address, or `None` when the loader or driver lacks
/// `zeDevicePciGetPropertiesExt` or it fails (an optional call: never an error).
fn pci_bdf(ze: &Ze, handle: ze_device_handle_t) -> Option<String> {
    let f = ze.api.zeDevicePciGetPropertiesExt?;
    let mut p = ze_pci_ext_properties_t::default();
    // SAFETY: a device handle from enumeration and a valid properties struct with a null chain.
    match check("zeDevicePciGetPropertiesExt", unsafe { f(handle, &mut p) }) {
        Ok(()) => Some(super::pci_bdf_string(&p.address)),
        Err(e) => {
            log::debug!("{e}: the device's PCI address is not known");
            None
        }
    }
}

impl Device {
    /// # Safety
    /// `handle` came from zeDeviceGet/zeDeviceGetSubDevices of `driver`.
    unsafe fn new(ze: Ze, driver: ze_driver_handle_t, handle: ze_device_handle_t) -> Result<Device, ZeError> {
        let mut p = ze_device_properties_t { stype: ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, ..Default::default() };
        // SAFETY: valid properties struct with a null chain.
        check("zeDeviceGetProperties", unsafe { (ze.api.zeDeviceGetProperties)(handle, &mut p) })?;
        let kind = match p.r#type {
            ZE_DEVICE_TYPE_GPU => DeviceKind::Gpu,
            ZE_DEVICE_TYPE_VPU => DeviceKind::Npu,
            ZE_DEVICE_TYPE_CPU => DeviceKind::Cpu,
            ZE_DEVICE_TYPE_FPGA => DeviceKind::Fpga,
            _ => DeviceKind::Other,
        };
        let info = DeviceInfo {
            name: c_string(&p.name),
            kind,
            vendor_id: p.vendorId,
            device_id: p.deviceId,
            uuid: p.uuid.id,
            sub_device: (p.flags & ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE != 0).then_some(p.subdeviceId),
            core_clock_mhz: p.coreClockRate,
            pci_bdf: pci_bdf(&ze, handle),
        };
        Ok(Device { ze, driver, handle, info })
    }

    /// The device's sub-devices (empty for a device without any).
    pub fn sub_devices(&self) -> Result<Vec<Device>, ZeError> {
        let handles = query_array("zeDeviceGetSubDevices", std::ptr::null_mut(), |n, out| {
            // SAFETY: see query_array.
            unsafe { (self.ze.api.zeDeviceGetSubDevices)(self.handle, n, out) }
        })?;
        // SAFETY: handles just returned by zeDeviceGetSubDevices.
        handles.into_iter().map(|h| unsafe { Device::new(self.ze.clone(), self.driver, h) }).collect()
    }

    /// The device's metric groups, in the driver's order. None while metrics are disabled: a
    /// driver that hides them answers either no groups or, as compute-runtime does before
    /// metrics were ever enabled (`ZET_ENABLE_METRICS=1` or `zetDeviceEnableMetricsExp`),
    /// ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE to the count query; both are an empty list here,
    /// so callers enable metrics at run time or say how to (`zescope doctor`).
    pub fn metric_groups(&self) -> Result<Vec<MetricGroup>, ZeError> {
        let handles = query_array("zetMetricGroupGet", std::ptr::null_mut(), |n, out| {
            // SAFETY: see query_array.
            unsafe { (self.ze.api.zetMetricGroupGet)(self.handle, n, out) }
        });
        let handles = match handles {
            Err(e) if e.code == ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE => Vec::new(),
            other => other?,
        };
        // SAFETY: handles just returned by zetMetricGroupGet for this device.
        handles.into_iter().map(|h| unsafe { MetricGroup::new(self.ze.clone(), self.driver, self.handle, h) }).collect()
    }

    /// `zeDeviceGetStatus`: Ok while the device works.
    pub fn status(&self) -> Result<(), ZeError> {
        // SAFETY: plain handle call.
        check("zeDeviceGetStatus", unsafe { (self.ze.api.zeDeviceGetStatus)(self.handle) })
    }

    /// The experimental metric entry points of this device's driver.
    pub fn extensions(&self) -> Extensions {
        Extensions::resolve(&self.ze, self.driver)
    }

    /// Does the loader hand out its own wrappers instead of the driver's handles? Then handles
    /// created by extension functions (groups made at run time) cannot go back through it.
    pub fn handles_wrapped(&self) -> bool {
        self.driver_handle() != self.handle
    }

    /// The driver's handle for this device, for extension functions.
    pub fn driver_handle(&self) -> ze_device_handle_t {
        // SAFETY: a device handle obtained from this loader's enumeration.
        unsafe { self.ze.translate(ZEL_HANDLE_DEVICE, self.handle.cast()).cast() }
    }
}
