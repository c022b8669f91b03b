//! Sysman (`zes_api.h`): the device telemetry types zescope reads — device properties, frequency
//! domains, power domains, temperature sensors, engine groups, memory modules and the processes
//! using the device — as in the 1.4 headers (Debian's loader 1.8.12), compared with them by
//! `tests/layout/`.
//!
//! Two ways lead to these calls: `zesInit` + `zesDriverGet` + `zesDeviceGet` (loaders 1.5 and
//! newer export them; the device handles are Sysman's own), or `ZES_ENABLE_SYSMAN=1` in the
//! environment before `zeInit` and the core device handles passed as `zes_device_handle_t`.

use crate::types::*;

handles! {
    zes_driver_handle_t => _zes_driver_handle_t,
    zes_device_handle_t => _zes_device_handle_t,
    zes_freq_handle_t => _zes_freq_handle_t,
    zes_pwr_handle_t => _zes_pwr_handle_t,
    zes_temp_handle_t => _zes_temp_handle_t,
    zes_engine_handle_t => _zes_engine_handle_t,
    zes_mem_handle_t => _zes_mem_handle_t,
}

/// `zes_structure_type_t`: the `stype` of a Sysman struct.
pub type zes_structure_type_t = u32;
/// `ZES_STRUCTURE_TYPE_DEVICE_PROPERTIES`.
pub const ZES_STRUCTURE_TYPE_DEVICE_PROPERTIES: zes_structure_type_t = 0x1;
/// `ZES_STRUCTURE_TYPE_ENGINE_PROPERTIES`.
pub const ZES_STRUCTURE_TYPE_ENGINE_PROPERTIES: zes_structure_type_t = 0x5;
/// `ZES_STRUCTURE_TYPE_FREQ_PROPERTIES`.
pub const ZES_STRUCTURE_TYPE_FREQ_PROPERTIES: zes_structure_type_t = 0x9;
/// `ZES_STRUCTURE_TYPE_MEM_PROPERTIES`.
pub const ZES_STRUCTURE_TYPE_MEM_PROPERTIES: zes_structure_type_t = 0xb;
/// `ZES_STRUCTURE_TYPE_POWER_PROPERTIES`.
pub const ZES_STRUCTURE_TYPE_POWER_PROPERTIES: zes_structure_type_t = 0xd;
/// `ZES_STRUCTURE_TYPE_TEMP_PROPERTIES`.
pub const ZES_STRUCTURE_TYPE_TEMP_PROPERTIES: zes_structure_type_t = 0x14;
/// `ZES_STRUCTURE_TYPE_FREQ_STATE`.
pub const ZES_STRUCTURE_TYPE_FREQ_STATE: zes_structure_type_t = 0x1b;
/// `ZES_STRUCTURE_TYPE_MEM_STATE`.
pub const ZES_STRUCTURE_TYPE_MEM_STATE: zes_structure_type_t = 0x1e;
/// `ZES_STRUCTURE_TYPE_PROCESS_STATE`.
pub const ZES_STRUCTURE_TYPE_PROCESS_STATE: zes_structure_type_t = 0x16;

/// `ZES_STRING_PROPERTY_SIZE`: length of the string properties.
pub const ZES_STRING_PROPERTY_SIZE: usize = 64;

/// `zes_freq_domain_t`.
pub type zes_freq_domain_t = u32;
/// `ZES_FREQ_DOMAIN_GPU`: the GPU core clock.
pub const ZES_FREQ_DOMAIN_GPU: zes_freq_domain_t = 0;
/// `ZES_FREQ_DOMAIN_MEMORY`: the local memory clock.
pub const ZES_FREQ_DOMAIN_MEMORY: zes_freq_domain_t = 1;

/// `zes_freq_throttle_reason_flags_t`: why the clock is below the request.
pub type zes_freq_throttle_reason_flags_t = u32;
/// Average power excursion (PL1).
pub const ZES_FREQ_THROTTLE_REASON_FLAG_AVE_PWR_CAP: u32 = 1 << 0;
/// Burst power excursion (PL2).
pub const ZES_FREQ_THROTTLE_REASON_FLAG_BURST_PWR_CAP: u32 = 1 << 1;
/// Current excursion (PL4).
pub const ZES_FREQ_THROTTLE_REASON_FLAG_CURRENT_LIMIT: u32 = 1 << 2;
/// Thermal excursion (T > TjMax).
pub const ZES_FREQ_THROTTLE_REASON_FLAG_THERMAL_LIMIT: u32 = 1 << 3;
/// Power supply assertion.
pub const ZES_FREQ_THROTTLE_REASON_FLAG_PSU_ALERT: u32 = 1 << 4;
/// Software supplied frequency range.
pub const ZES_FREQ_THROTTLE_REASON_FLAG_SW_RANGE: u32 = 1 << 5;
/// A sub block with a lower frequency.
pub const ZES_FREQ_THROTTLE_REASON_FLAG_HW_RANGE: u32 = 1 << 6;

/// `zes_temp_sensors_t`.
pub type zes_temp_sensors_t = u32;
/// Maximum over all sensors of the device.
pub const ZES_TEMP_SENSORS_GLOBAL: zes_temp_sensors_t = 0;
/// Maximum over the GPU's sensors.
pub const ZES_TEMP_SENSORS_GPU: zes_temp_sensors_t = 1;
/// Maximum over the local memory's sensors.
pub const ZES_TEMP_SENSORS_MEMORY: zes_temp_sensors_t = 2;
/// Minimum over all sensors of the device.
pub const ZES_TEMP_SENSORS_GLOBAL_MIN: zes_temp_sensors_t = 3;
/// Minimum over the GPU's sensors.
pub const ZES_TEMP_SENSORS_GPU_MIN: zes_temp_sensors_t = 4;
/// Minimum over the local memory's sensors.
pub const ZES_TEMP_SENSORS_MEMORY_MIN: zes_temp_sensors_t = 5;

/// `zes_engine_group_t`.
pub type zes_engine_group_t = u32;
/// All engines combined.
pub const ZES_ENGINE_GROUP_ALL: zes_engine_group_t = 0;
/// All compute engines combined.
pub const ZES_ENGINE_GROUP_COMPUTE_ALL: zes_engine_group_t = 1;
/// All media engines combined.
pub const ZES_ENGINE_GROUP_MEDIA_ALL: zes_engine_group_t = 2;
/// All copy engines combined.
pub const ZES_ENGINE_GROUP_COPY_ALL: zes_engine_group_t = 3;
/// One compute engine.
pub const ZES_ENGINE_GROUP_COMPUTE_SINGLE: zes_engine_group_t = 4;
/// One render engine.
pub const ZES_ENGINE_GROUP_RENDER_SINGLE: zes_engine_group_t = 5;
/// One media decode engine.
pub const ZES_ENGINE_GROUP_MEDIA_DECODE_SINGLE: zes_engine_group_t = 6;
/// One media encode engine.
pub const ZES_ENGINE_GROUP_MEDIA_ENCODE_SINGLE: zes_engine_group_t = 7;
/// One copy engine.
pub const ZES_ENGINE_GROUP_COPY_SINGLE: zes_engine_group_t = 8;
/// One media enhancement engine.
pub const ZES_ENGINE_GROUP_MEDIA_ENHANCEMENT_SINGLE: zes_engine_group_t = 9;
/// One 3D engine.
pub const ZES_ENGINE_GROUP_3D_SINGLE: zes_engine_group_t = 10;
/// All 3D, render and compute engines combined.
pub const ZES_ENGINE_GROUP_3D_RENDER_COMPUTE_ALL: zes_engine_group_t = 11;
/// All render engines combined.
pub const ZES_ENGINE_GROUP_RENDER_ALL: zes_engine_group_t = 12;
/// All 3D engines combined.
pub const ZES_ENGINE_GROUP_3D_ALL: zes_engine_group_t = 13;

/// `zes_mem_type_t` (HBM, DDR, ... ; the value is shown, not interpreted).
pub type zes_mem_type_t = u32;
/// `zes_mem_loc_t`.
pub type zes_mem_loc_t = u32;
/// System memory.
pub const ZES_MEM_LOC_SYSTEM: zes_mem_loc_t = 0;
/// On-board local memory.
pub const ZES_MEM_LOC_DEVICE: zes_mem_loc_t = 1;
/// `zes_mem_health_t`.
pub type zes_mem_health_t = u32;

/// `zes_device_properties_t`: the core properties (with the UUID that matches a Sysman device
/// to a core device) and board strings.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zes_device_properties_t {
    /// [`ZES_STRUCTURE_TYPE_DEVICE_PROPERTIES`].
    pub stype: zes_structure_type_t,
    /// Extension chain.
    pub pNext: *mut core::ffi::c_void,
    /// The core device properties.
    pub core: ze_device_properties_t,
    /// Number of sub-devices.
    pub numSubdevices: u32,
    /// Serial number.
    pub serialNumber: [core::ffi::c_char; ZES_STRING_PROPERTY_SIZE],
    /// Board number.
    pub boardNumber: [core::ffi::c_char; ZES_STRING_PROPERTY_SIZE],
    /// Brand name.
    pub brandName: [core::ffi::c_char; ZES_STRING_PROPERTY_SIZE],
    /// Model name.
    pub modelName: [core::ffi::c_char; ZES_STRING_PROPERTY_SIZE],
    /// Vendor name.
    pub vendorName: [core::ffi::c_char; ZES_STRING_PROPERTY_SIZE],
    /// Driver version.
    pub driverVersion: [core::ffi::c_char; ZES_STRING_PROPERTY_SIZE],
}

/// `zes_freq_properties_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zes_freq_properties_t {
    /// [`ZES_STRUCTURE_TYPE_FREQ_PROPERTIES`].
    pub stype: zes_structure_type_t,
    /// Extension chain.
    pub pNext: *mut core::ffi::c_void,
    /// GPU or memory clock.
    pub r#type: zes_freq_domain_t,
    /// On a sub-device.
    pub onSubdevice: ze_bool_t,
    /// Which sub-device.
    pub subdeviceId: u32,
    /// The frequency can be controlled.
    pub canControl: ze_bool_t,
    /// Throttle events can be signalled.
    pub isThrottleEventSupported: ze_bool_t,
    /// Lowest frequency, MHz.
    pub min: f64,
    /// Highest frequency, MHz.
    pub max: f64,
}

/// `zes_freq_state_t`: a negative value means "unknown".
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zes_freq_state_t {
    /// [`ZES_STRUCTURE_TYPE_FREQ_STATE`].
    pub stype: zes_structure_type_t,
    /// Extension chain.
    pub pNext: *const core::ffi::c_void,
    /// Voltage, V.
    pub currentVoltage: f64,
    /// Requested frequency, MHz.
    pub request: f64,
    /// Highest frequency within the TDP, MHz.
    pub tdp: f64,
    /// Efficient minimum frequency, MHz.
    pub efficient: f64,
    /// Actual frequency, MHz.
    pub actual: f64,
    /// `ZES_FREQ_THROTTLE_REASON_FLAG_*` bits.
    pub throttleReasons: zes_freq_throttle_reason_flags_t,
}

/// `zes_power_properties_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zes_power_properties_t {
    /// [`ZES_STRUCTURE_TYPE_POWER_PROPERTIES`].
    pub stype: zes_structure_type_t,
    /// Extension chain.
    pub pNext: *mut core::ffi::c_void,
    /// On a sub-device.
    pub onSubdevice: ze_bool_t,
    /// Which sub-device.
    pub subdeviceId: u32,
    /// The limits can be changed.
    pub canControl: ze_bool_t,
    /// Energy threshold events are supported.
    pub isEnergyThresholdSupported: ze_bool_t,
    /// Factory default limit, mW.
    pub defaultLimit: i32,
    /// Lowest limit, mW.
    pub minLimit: i32,
    /// Highest limit, mW.
    pub maxLimit: i32,
}

/// `zes_power_energy_counter_t`: a monotonic energy counter (µJ) and its time (µs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct zes_power_energy_counter_t {
    /// Energy since an arbitrary origin, µJ (wraps).
    pub energy: u64,
    /// When it was read, µs.
    pub timestamp: u64,
}

/// `zes_temp_properties_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zes_temp_properties_t {
    /// [`ZES_STRUCTURE_TYPE_TEMP_PROPERTIES`].
    pub stype: zes_structure_type_t,
    /// Extension chain.
    pub pNext: *mut core::ffi::c_void,
    /// Which sensor (`ZES_TEMP_SENSORS_*`).
    pub r#type: zes_temp_sensors_t,
    /// On a sub-device.
    pub onSubdevice: ze_bool_t,
    /// Which sub-device.
    pub subdeviceId: u32,
    /// Highest temperature, °C.
    pub maxTemperature: f64,
    /// Critical temperature events are supported.
    pub isCriticalTempSupported: ze_bool_t,
    /// Threshold 1 events are supported.
    pub isThreshold1Supported: ze_bool_t,
    /// Threshold 2 events are supported.
    pub isThreshold2Supported: ze_bool_t,
}

/// `zes_engine_properties_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zes_engine_properties_t {
    /// [`ZES_STRUCTURE_TYPE_ENGINE_PROPERTIES`].
    pub stype: zes_structure_type_t,
    /// Extension chain.
    pub pNext: *mut core::ffi::c_void,
    /// Which engines (`ZES_ENGINE_GROUP_*`).
    pub r#type: zes_engine_group_t,
    /// On a sub-device.
    pub onSubdevice: ze_bool_t,
    /// Which sub-device.
    pub subdeviceId: u32,
}

/// `zes_engine_stats_t`: busy time and its time, both monotonic µs counters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct zes_engine_stats_t {
    /// Time the engines were busy, µs (wraps).
    pub activeTime: u64,
    /// When it was read, µs.
    pub timestamp: u64,
}

/// `zes_mem_properties_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zes_mem_properties_t {
    /// [`ZES_STRUCTURE_TYPE_MEM_PROPERTIES`].
    pub stype: zes_structure_type_t,
    /// Extension chain.
    pub pNext: *mut core::ffi::c_void,
    /// Memory technology (`zes_mem_type_t`).
    pub r#type: zes_mem_type_t,
    /// On a sub-device.
    pub onSubdevice: ze_bool_t,
    /// Which sub-device.
    pub subdeviceId: u32,
    /// System or device memory.
    pub location: zes_mem_loc_t,
    /// Physical size, bytes (0: unknown).
    pub physicalSize: u64,
    /// Bus width (-1: unknown).
    pub busWidth: i32,
    /// Channels (-1: unknown).
    pub numChannels: i32,
}

/// `zes_mem_state_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zes_mem_state_t {
    /// [`ZES_STRUCTURE_TYPE_MEM_STATE`].
    pub stype: zes_structure_type_t,
    /// Extension chain.
    pub pNext: *const core::ffi::c_void,
    /// Health.
    pub health: zes_mem_health_t,
    /// Free bytes.
    pub free: u64,
    /// Allocatable bytes.
    pub size: u64,
}

/// `zes_mem_bandwidth_t`: monotonic byte counters and their time.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct zes_mem_bandwidth_t {
    /// Bytes read, total (wraps).
    pub readCounter: u64,
    /// Bytes written, total (wraps).
    pub writeCounter: u64,
    /// Highest bandwidth, bytes per second.
    pub maxBandwidth: u64,
    /// When it was read, µs.
    pub timestamp: u64,
}

/// `zes_engine_type_flags_t`: the kinds of engine a process uses
/// ([`zes_process_state_t::engines`]).
pub type zes_engine_type_flags_t = u32;
/// Engines of no other kind.
pub const ZES_ENGINE_TYPE_FLAG_OTHER: zes_engine_type_flags_t = 1 << 0;
/// Compute engines (no 3D).
pub const ZES_ENGINE_TYPE_FLAG_COMPUTE: zes_engine_type_flags_t = 1 << 1;
/// 3D engines (no compute).
pub const ZES_ENGINE_TYPE_FLAG_3D: zes_engine_type_flags_t = 1 << 2;
/// Media engines.
pub const ZES_ENGINE_TYPE_FLAG_MEDIA: zes_engine_type_flags_t = 1 << 3;
/// Copy (DMA) engines.
pub const ZES_ENGINE_TYPE_FLAG_DMA: zes_engine_type_flags_t = 1 << 4;
/// Render engines (3D and compute).
pub const ZES_ENGINE_TYPE_FLAG_RENDER: zes_engine_type_flags_t = 1 << 5;

/// `zes_process_state_t`: one process using a device, out of `zesDeviceProcessesGetState`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zes_process_state_t {
    /// [`ZES_STRUCTURE_TYPE_PROCESS_STATE`].
    pub stype: zes_structure_type_t,
    /// Extension chain.
    pub pNext: *const core::ffi::c_void,
    /// The host's process id.
    pub processId: u32,
    /// Device memory the process allocated, bytes (not necessarily resident).
    pub memSize: u64,
    /// Shared device memory mapped into the process, bytes.
    pub sharedSize: u64,
    /// `ZES_ENGINE_TYPE_FLAG_*` bits: the kinds of engine it uses.
    pub engines: zes_engine_type_flags_t,
}

macro_rules! zeroed_with_stype {
    ($($t:ty => $stype:expr),* $(,)?) => {$(
        impl Default for $t {
            fn default() -> Self {
                // SAFETY: every field of this #[repr(C)] struct is an integer, a float, a raw
                // pointer or an array of those, for which all-zero bytes are a valid value.
                let mut v: Self = unsafe { core::mem::zeroed() };
                v.stype = $stype;
                v
            }
        }
    )*};
}

zeroed_with_stype!(
    zes_device_properties_t => ZES_STRUCTURE_TYPE_DEVICE_PROPERTIES,
    zes_freq_properties_t => ZES_STRUCTURE_TYPE_FREQ_PROPERTIES,
    zes_freq_state_t => ZES_STRUCTURE_TYPE_FREQ_STATE,
    zes_power_properties_t => ZES_STRUCTURE_TYPE_POWER_PROPERTIES,
    zes_temp_properties_t => ZES_STRUCTURE_TYPE_TEMP_PROPERTIES,
    zes_engine_properties_t => ZES_STRUCTURE_TYPE_ENGINE_PROPERTIES,
    zes_mem_properties_t => ZES_STRUCTURE_TYPE_MEM_PROPERTIES,
    zes_mem_state_t => ZES_STRUCTURE_TYPE_MEM_STATE,
    zes_process_state_t => ZES_STRUCTURE_TYPE_PROCESS_STATE,
);
