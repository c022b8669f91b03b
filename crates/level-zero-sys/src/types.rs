//! Core and tools types from the Level Zero headers (API 1.4, loader 1.8.12): handles,
//! result codes, structure types and the descriptor/property structs zescope uses.
//!
//! Every item mirrors the C declaration of the same name one to one: `ze_*` from `ze_api.h`
//! (core), `zet_*` from `zet_api.h` (tools), `zel_*` from `loader/ze_loader.h` — same names,
//! same field order, same integer widths, `#[repr(C)]`. Sizes and offsets are checked against
//! the C headers by `tests/layout/`. Only the subset zescope and ze-sim use is declared.
//!
//! Each struct, handle, type and group of constants says what it is for; the individual struct
//! fields and enumeration values are not documented again: their names are the headers' and
//! their meaning is the specification's, so a line per C field would only restate it (hence
//! `allow(missing_docs)` on this module). `Default` for the structs is all zeros (null
//! pointers, 0); set `stype` before passing one to the driver.
#![allow(missing_docs)]

use core::ffi::{c_char, c_void};

macro_rules! handles {
    ($($handle:ident => $opaque:ident),* $(,)?) => {$(
        #[repr(C)]
        #[doc = concat!("Opaque object behind a `", stringify!($handle), "`.")]
        pub struct $opaque {
            _private: [u8; 0],
        }
        #[doc = concat!(
            "`", stringify!($handle), "`: an opaque pointer the driver (or the loader, which may ",
            "translate it) hands out; valid until its object is destroyed or closed, never ",
            "dereferenced here."
        )]
        pub type $handle = *mut $opaque;
    )*};
}
pub(crate) use handles;

handles! {
    ze_driver_handle_t => _ze_driver_handle_t,
    ze_device_handle_t => _ze_device_handle_t,
    ze_context_handle_t => _ze_context_handle_t,
    ze_command_list_handle_t => _ze_command_list_handle_t,
    ze_event_handle_t => _ze_event_handle_t,
    zet_metric_group_handle_t => _zet_metric_group_handle_t,
    zet_metric_handle_t => _zet_metric_handle_t,
}

/// The tools API's name for a device handle (the same object as [`ze_device_handle_t`]).
pub type zet_device_handle_t = ze_device_handle_t;
/// The tools API's name for a context handle (the same object as [`ze_context_handle_t`]).
pub type zet_context_handle_t = ze_context_handle_t;

/// What every entry point returns: [`ZE_RESULT_SUCCESS`] or one of the `ZE_RESULT_*` codes
/// below (warnings and errors). C enums are 32-bit here, so every enum and flags type is a
/// `u32` alias whose values are the constants of the same prefix.
pub type ze_result_t = u32;
pub type ze_bool_t = u8;
pub type ze_api_version_t = u32;
pub type ze_structure_type_t = u32;
pub type zet_structure_type_t = u32;
pub type ze_init_flags_t = u32;
pub type ze_device_type_t = u32;
pub type ze_device_property_flags_t = u32;
pub type ze_context_flags_t = u32;
pub type ze_device_mem_alloc_flags_t = u32;
pub type ze_host_mem_alloc_flags_t = u32;
pub type ze_external_memory_type_flags_t = u32;
pub type ze_command_queue_flags_t = u32;
pub type ze_command_queue_mode_t = u32;
pub type ze_command_queue_priority_t = u32;
pub type zet_metric_group_sampling_type_flags_t = u32;
pub type zet_metric_type_t = u32;
pub type zet_value_type_t = u32;

/// `ZE_MAKE_VERSION`: an API version, major in the high 16 bits, minor in the low 16.
pub const fn ze_make_version(major: u32, minor: u32) -> ze_api_version_t {
    (major << 16) | (minor & 0xffff)
}
/// `ZE_MAJOR_VERSION`: the major part of an API version (versions of different majors are
/// incompatible).
pub const fn ze_major_version(v: ze_api_version_t) -> u32 {
    v >> 16
}
/// `ZE_MINOR_VERSION`: the minor part of an API version.
pub const fn ze_minor_version(v: ze_api_version_t) -> u32 {
    v & 0xffff
}
/// API version 1.0, the oldest a driver may report.
pub const ZE_API_VERSION_1_0: ze_api_version_t = ze_make_version(1, 0);
/// The newest API version of the headers this crate mirrors.
pub const ZE_API_VERSION_CURRENT: ze_api_version_t = ze_make_version(1, 4);

// ze_result_t: 0 is success, 1 and 0x7..._.... with a WARNING name are non-fatal, the rest errors.
pub const ZE_RESULT_SUCCESS: ze_result_t = 0;
pub const ZE_RESULT_NOT_READY: ze_result_t = 1;
pub const ZE_RESULT_ERROR_DEVICE_LOST: ze_result_t = 0x7000_0001;
pub const ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: ze_result_t = 0x7000_0002;
pub const ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: ze_result_t = 0x7000_0003;
pub const ZE_RESULT_ERROR_MODULE_BUILD_FAILURE: ze_result_t = 0x7000_0004;
pub const ZE_RESULT_ERROR_MODULE_LINK_FAILURE: ze_result_t = 0x7000_0005;
pub const ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET: ze_result_t = 0x7000_0006;
pub const ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE: ze_result_t = 0x7000_0007;
pub const ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS: ze_result_t = 0x7001_0000;
pub const ZE_RESULT_ERROR_NOT_AVAILABLE: ze_result_t = 0x7001_0001;
pub const ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE: ze_result_t = 0x7002_0000;
pub const ZE_RESULT_WARNING_DROPPED_DATA: ze_result_t = 0x7002_0001;
pub const ZE_RESULT_ERROR_UNINITIALIZED: ze_result_t = 0x7800_0001;
pub const ZE_RESULT_ERROR_UNSUPPORTED_VERSION: ze_result_t = 0x7800_0002;
pub const ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: ze_result_t = 0x7800_0003;
pub const ZE_RESULT_ERROR_INVALID_ARGUMENT: ze_result_t = 0x7800_0004;
pub const ZE_RESULT_ERROR_INVALID_NULL_HANDLE: ze_result_t = 0x7800_0005;
pub const ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE: ze_result_t = 0x7800_0006;
pub const ZE_RESULT_ERROR_INVALID_NULL_POINTER: ze_result_t = 0x7800_0007;
pub const ZE_RESULT_ERROR_INVALID_SIZE: ze_result_t = 0x7800_0008;
pub const ZE_RESULT_ERROR_UNSUPPORTED_SIZE: ze_result_t = 0x7800_0009;
pub const ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT: ze_result_t = 0x7800_000a;
pub const ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT: ze_result_t = 0x7800_000b;
pub const ZE_RESULT_ERROR_INVALID_ENUMERATION: ze_result_t = 0x7800_000c;
pub const ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION: ze_result_t = 0x7800_000d;
pub const ZE_RESULT_ERROR_INVALID_FUNCTION_NAME: ze_result_t = 0x7800_0012;
pub const ZE_RESULT_ERROR_OVERLAPPING_REGIONS: ze_result_t = 0x7800_001a;
pub const ZE_RESULT_WARNING_ACTION_REQUIRED: ze_result_t = 0x7800_001b;
pub const ZE_RESULT_ERROR_UNKNOWN: ze_result_t = 0x7fff_fffe;

// ze_structure_type_t
pub const ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES: ze_structure_type_t = 0x1;
pub const ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES: ze_structure_type_t = 0x3;
pub const ZE_STRUCTURE_TYPE_CONTEXT_DESC: ze_structure_type_t = 0xd;
pub const ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC: ze_structure_type_t = 0xe;
pub const ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC: ze_structure_type_t = 0x15;
pub const ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC: ze_structure_type_t = 0x16;
pub const ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD: ze_structure_type_t = 0x19;
pub const ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2: ze_structure_type_t = 0x0002_0006;

// zet_structure_type_t
pub const ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES: zet_structure_type_t = 0x1;
pub const ZET_STRUCTURE_TYPE_METRIC_PROPERTIES: zet_structure_type_t = 0x2;

// flags and enumerations
pub const ZE_INIT_FLAG_GPU_ONLY: ze_init_flags_t = 1 << 0;
pub const ZE_INIT_FLAG_VPU_ONLY: ze_init_flags_t = 1 << 1;
pub const ZE_DEVICE_TYPE_GPU: ze_device_type_t = 1;
pub const ZE_DEVICE_TYPE_CPU: ze_device_type_t = 2;
pub const ZE_DEVICE_TYPE_FPGA: ze_device_type_t = 3;
pub const ZE_DEVICE_TYPE_MCA: ze_device_type_t = 4;
pub const ZE_DEVICE_TYPE_VPU: ze_device_type_t = 5;
pub const ZE_DEVICE_PROPERTY_FLAG_INTEGRATED: ze_device_property_flags_t = 1 << 0;
pub const ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE: ze_device_property_flags_t = 1 << 1;
pub const ZE_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD: ze_external_memory_type_flags_t = 1 << 0;
pub const ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF: ze_external_memory_type_flags_t = 1 << 1;
pub const ZE_COMMAND_QUEUE_MODE_DEFAULT: ze_command_queue_mode_t = 0;
pub const ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS: ze_command_queue_mode_t = 1;
pub const ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS: ze_command_queue_mode_t = 2;
pub const ZE_COMMAND_QUEUE_PRIORITY_NORMAL: ze_command_queue_priority_t = 0;
pub const ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED: zet_metric_group_sampling_type_flags_t = 1 << 0;
pub const ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED: zet_metric_group_sampling_type_flags_t = 1 << 1;
pub const ZET_METRIC_TYPE_DURATION: zet_metric_type_t = 0;
pub const ZET_METRIC_TYPE_EVENT: zet_metric_type_t = 1;
pub const ZET_METRIC_TYPE_EVENT_WITH_RANGE: zet_metric_type_t = 2;
pub const ZET_METRIC_TYPE_THROUGHPUT: zet_metric_type_t = 3;
pub const ZET_METRIC_TYPE_TIMESTAMP: zet_metric_type_t = 4;
pub const ZET_METRIC_TYPE_FLAG: zet_metric_type_t = 5;
pub const ZET_METRIC_TYPE_RATIO: zet_metric_type_t = 6;
pub const ZET_METRIC_TYPE_RAW: zet_metric_type_t = 7;
pub const ZET_METRIC_TYPE_IP_EXP: zet_metric_type_t = 0x7fff_fffe;
pub const ZET_VALUE_TYPE_UINT32: zet_value_type_t = 0;
pub const ZET_VALUE_TYPE_UINT64: zet_value_type_t = 1;
pub const ZET_VALUE_TYPE_FLOAT32: zet_value_type_t = 2;
pub const ZET_VALUE_TYPE_FLOAT64: zet_value_type_t = 3;
pub const ZET_VALUE_TYPE_BOOL8: zet_value_type_t = 4;

// string and array sizes
pub const ZE_MAX_DRIVER_UUID_SIZE: usize = 16;
pub const ZE_MAX_DEVICE_UUID_SIZE: usize = 16;
pub const ZE_MAX_DEVICE_NAME: usize = 256;
pub const ZE_MAX_EXTENSION_NAME: usize = 256;
pub const ZET_MAX_METRIC_GROUP_NAME: usize = 256;
pub const ZET_MAX_METRIC_GROUP_DESCRIPTION: usize = 256;
pub const ZET_MAX_METRIC_NAME: usize = 256;
pub const ZET_MAX_METRIC_DESCRIPTION: usize = 256;
pub const ZET_MAX_METRIC_COMPONENT: usize = 256;
pub const ZET_MAX_METRIC_RESULT_UNITS: usize = 256;

/// Header shared by every extensible output struct: how `pNext` chains are walked (read
/// `stype`, then follow `pNext`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_base_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
}

/// Header shared by every extensible input (descriptor) struct; `pNext` is const.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_base_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
}

/// A driver's universal unique id (in [`ze_driver_properties_t`]); stable across processes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ze_driver_uuid_t {
    pub id: [u8; ZE_MAX_DRIVER_UUID_SIZE],
}

/// Out of `zeDriverGetProperties` (`stype` = `ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES`): the
/// driver's UUID and its vendor-defined version.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_driver_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
    pub uuid: ze_driver_uuid_t,
    pub driverVersion: u32,
}

/// One element of `zeDriverGetExtensionProperties`: an extension's NUL-terminated name and
/// its version. No `stype`: it is not extensible.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_driver_extension_properties_t {
    pub name: [c_char; ZE_MAX_EXTENSION_NAME],
    pub version: u32,
}

/// A device's universal unique id (in [`ze_device_properties_t`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ze_device_uuid_t {
    pub id: [u8; ZE_MAX_DEVICE_UUID_SIZE],
}

/// Out of `zeDeviceGetProperties` (`stype` = `ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES`, or
/// `..._1_2` for the 1.2 semantics of `timerResolution`, cycles per second): type, ids, clocks,
/// timestamp width, UUID and NUL-terminated name of a device or sub-device.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_device_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
    pub r#type: ze_device_type_t,
    pub vendorId: u32,
    pub deviceId: u32,
    pub flags: ze_device_property_flags_t,
    pub subdeviceId: u32,
    pub coreClockRate: u32,
    pub maxMemAllocSize: u64,
    pub maxHardwareContexts: u32,
    pub maxCommandQueuePriority: u32,
    pub numThreadsPerEU: u32,
    pub physicalEUSimdWidth: u32,
    pub numEUsPerSubslice: u32,
    pub numSubslicesPerSlice: u32,
    pub numSlices: u32,
    pub timerResolution: u64,
    pub timestampValidBits: u32,
    pub kernelTimestampValidBits: u32,
    pub uuid: ze_device_uuid_t,
    pub name: [c_char; ZE_MAX_DEVICE_NAME],
}

/// In to `zeContextCreate` (`stype` = `ZE_STRUCTURE_TYPE_CONTEXT_DESC`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_context_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_context_flags_t,
}

/// In to `zeMemAllocDevice` (`stype` = `ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC`); chain a
/// [`ze_external_memory_import_fd_t`] to import memory instead of allocating it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_device_mem_alloc_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_device_mem_alloc_flags_t,
    pub ordinal: u32,
}

/// In to `zeMemAllocHost` (`stype` = `ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_host_mem_alloc_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_host_mem_alloc_flags_t,
}

/// Chained to a [`ze_device_mem_alloc_desc_t`] to import memory from a file descriptor
/// (`stype` = `ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD`, `flags` = one
/// `ZE_EXTERNAL_MEMORY_TYPE_FLAG_*`). Who owns `fd` after the import differs between drivers:
/// pass a dup the application keeps until after `zeMemFree`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_external_memory_import_fd_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_external_memory_type_flags_t,
    pub fd: i32,
}

/// In to `zeCommandListCreateImmediate` (`stype` = `ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC`):
/// which engine group and queue, synchronous or not, and priority.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_command_queue_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub ordinal: u32,
    pub index: u32,
    pub flags: ze_command_queue_flags_t,
    pub mode: ze_command_queue_mode_t,
    pub priority: ze_command_queue_priority_t,
}

/// Out of `zetMetricGroupGetProperties` (`stype` = `ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES`):
/// name, description, sampling types, hardware domain and metric count of a group. Chain a
/// [`crate::zet_metric_group_type_exp_t`] to learn whether it exports memory.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zet_metric_group_properties_t {
    pub stype: zet_structure_type_t,
    pub pNext: *mut c_void,
    pub name: [c_char; ZET_MAX_METRIC_GROUP_NAME],
    pub description: [c_char; ZET_MAX_METRIC_GROUP_DESCRIPTION],
    pub samplingType: zet_metric_group_sampling_type_flags_t,
    pub domain: u32,
    pub metricCount: u32,
}

/// Out of `zetMetricGetProperties` (`stype` = `ZET_STRUCTURE_TYPE_METRIC_PROPERTIES`): name,
/// description, component, type, result value type and units of a metric.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zet_metric_properties_t {
    pub stype: zet_structure_type_t,
    pub pNext: *mut c_void,
    pub name: [c_char; ZET_MAX_METRIC_NAME],
    pub description: [c_char; ZET_MAX_METRIC_DESCRIPTION],
    pub component: [c_char; ZET_MAX_METRIC_COMPONENT],
    pub tierNumber: u32,
    pub metricType: zet_metric_type_t,
    pub resultType: zet_value_type_t,
    pub resultUnits: [c_char; ZET_MAX_METRIC_RESULT_UNITS],
}

/// Size of [`zel_component_version_t::component_name`] (`ze_loader.h`).
pub const ZEL_COMPONENT_STRING_SIZE: usize = 64;

/// A loader component's library version (major.minor.patch).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct zel_version_t {
    pub major: i32,
    pub minor: i32,
    pub patch: i32,
}

/// One element of `zelLoaderGetVersions`: a loader component (the loader itself, its validation
/// and tracing layers), the API version it implements and its library version.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zel_component_version_t {
    pub component_name: [c_char; ZEL_COMPONENT_STRING_SIZE],
    pub spec_version: ze_api_version_t,
    pub component_lib_version: zel_version_t,
}

/// `zel_handle_type_t`: which kind of handle `zelLoaderTranslateHandle` is given (the
/// `ZEL_HANDLE_*` values below).
pub type zel_handle_type_t = u32;
pub const ZEL_HANDLE_DRIVER: zel_handle_type_t = 0;
pub const ZEL_HANDLE_DEVICE: zel_handle_type_t = 1;
pub const ZEL_HANDLE_CONTEXT: zel_handle_type_t = 2;
pub const ZEL_HANDLE_COMMAND_QUEUE: zel_handle_type_t = 3;
pub const ZEL_HANDLE_COMMAND_LIST: zel_handle_type_t = 4;

macro_rules! zeroed_default {
    ($($t:ty),*) => {$(
        impl Default for $t {
            fn default() -> Self {
                // SAFETY: every field of this #[repr(C)] struct is an integer, a raw pointer or an
                // array of those, for which all-zero bytes are a valid value (null pointers, 0).
                unsafe { core::mem::zeroed() }
            }
        }
    )*};
}

zeroed_default!(
    ze_driver_properties_t,
    ze_driver_extension_properties_t,
    ze_device_properties_t,
    ze_context_desc_t,
    ze_device_mem_alloc_desc_t,
    ze_host_mem_alloc_desc_t,
    ze_external_memory_import_fd_t,
    ze_command_queue_desc_t,
    zet_metric_group_properties_t,
    zet_metric_properties_t,
    zel_component_version_t
);
