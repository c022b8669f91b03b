//! The PCI properties extension (`ZE_extension_pci_properties`, `zeDevicePciGetPropertiesExt`):
//! where a device sits on the PCI bus (domain, bus, device, function) and its fastest link.
//! Declared in the 1.4 headers already; compared with the 1.32 headers by `tests/layout/`.
//!
//! A driver may leave the entry point empty (an NPU driver, a driver older than the extension):
//! the `Api` field is then `None`, or the call answers ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.

use core::ffi::c_void;

use crate::types::ze_structure_type_t;

/// `ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES` (0x10008): the `stype` of a [`ze_pci_ext_properties_t`].
pub const ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES: ze_structure_type_t = 0x0001_0008;

/// `ze_pci_address_ext_t`: the device's PCI address (what `lspci` prints as `DDDD:BB:DD.F`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ze_pci_address_ext_t {
    /// PCI domain (segment) number.
    pub domain: u32,
    /// Bus number.
    pub bus: u32,
    /// Device number.
    pub device: u32,
    /// Function number.
    pub function: u32,
}

/// `ze_pci_speed_ext_t`: a link configuration; -1 in a field means unknown.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ze_pci_speed_ext_t {
    /// PCIe generation.
    pub genVersion: i32,
    /// Lanes.
    pub width: i32,
    /// Theoretical maximum bandwidth, bytes per second (sum of all lanes).
    pub maxBandwidth: i64,
}

/// `ze_pci_ext_properties_t`, out of `zeDevicePciGetPropertiesExt`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_pci_ext_properties_t {
    /// Must be [`ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES`] (what `Default` sets).
    pub stype: ze_structure_type_t,
    /// The next struct of the chain, or null.
    pub pNext: *mut c_void,
    /// The BDF address.
    pub address: ze_pci_address_ext_t,
    /// The fastest link configuration the device supports.
    pub maxSpeed: ze_pci_speed_ext_t,
}

impl Default for ze_pci_ext_properties_t {
    fn default() -> Self {
        ze_pci_ext_properties_t {
            stype: ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES,
            pNext: core::ptr::null_mut(),
            address: ze_pci_address_ext_t::default(),
            maxSpeed: ze_pci_speed_ext_t::default(),
        }
    }
}
