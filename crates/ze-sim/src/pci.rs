//! PCI addresses (`zeDevicePciGetPropertiesExt`, the `ZE_extension_pci_properties` extension).
//!
//! Every root device has one: `DeviceConfig::pci_bdf` when the configuration gives it
//! (`"DDDD:BB:DD.F"`, as `lspci -D` prints it), else a plausible one by kind and position: the
//! k-th GPU at `0000:(03+k):00.0` (a discrete card behind a root port), the k-th NPU at
//! `0000:00:(0b+k).0` (Intel's NPU is device 0b of the host bridge's bus). Sub-devices (tiles)
//! are functions of their root device and report its address. The maximum link speed is
//! PCIe 4.0 ×16 for a GPU and unknown (-1) for an NPU, which sits on no external link.

use level_zero_sys::*;

use crate::config::{DeviceConfig, DeviceKind};
use crate::instance::Instance;
use crate::ops_driver::R;

/// `"DDDD:BB:DD.F"` (hex; domain ≤ ffff, bus ≤ ff, device ≤ 1f, function ≤ 7) as an address, or
/// why not.
pub(crate) fn parse_bdf(s: &str) -> Result<ze_pci_address_ext_t, String> {
    let bad = || format!("{s:?} is not a PCI address DDDD:BB:DD.F (hex, e.g. \"0000:03:00.0\")");
    let (domain, rest) = s.split_once(':').ok_or_else(bad)?;
    let (bus, rest) = rest.split_once(':').ok_or_else(bad)?;
    let (device, function) = rest.split_once('.').ok_or_else(bad)?;
    let field = |v: &str, digits: usize, max: u32| -> Result<u32, String> {
        if v.len() != digits || !v.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        u32::from_str_radix(v, 16).ok().filter(|&n| n <= max).ok_or_else(bad)
    };
    Ok(ze_pci_address_ext_t {
        domain: field(domain, 4, 0xffff)?,
        bus: field(bus, 2, 0xff)?,
        device: field(device, 2, 0x1f)?,
        function: field(function, 1, 7)?,
    })
}

/// The address of root device `d` among `roots` (the configured root devices, in order).
fn root_address(roots: &[DeviceConfig], d: usize) -> ze_pci_address_ext_t {
    let cfg = &roots[d];
    if let Some(bdf) = &cfg.pci_bdf
        && let Ok(a) = parse_bdf(bdf)
    {
        return a;
    }
    let k = roots[..d].iter().filter(|r| r.kind == cfg.kind).count() as u32;
    match cfg.kind {
        DeviceKind::Gpu => ze_pci_address_ext_t { domain: 0, bus: (3 + k) % 256, device: 0, function: 0 },
        DeviceKind::Npu => ze_pci_address_ext_t { domain: 0, bus: 0, device: (0x0b + k) % 32, function: 0 },
    }
}

impl Instance {
    /// `zeDevicePciGetPropertiesExt` for device `d` (a sub-device answers its root's address).
    pub(crate) fn pci_properties(&mut self, d: usize, p: &mut ze_pci_ext_properties_t) -> R<()> {
        self.ready()?;
        self.device_status()?;
        if p.stype != ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES {
            let h = self.devices[d].handle;
            self.violation("wrong_stype", h, format!("zeDevicePciGetPropertiesExt given stype {:#x}", p.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let root = self.devices[d].parent.unwrap_or(d);
        let index = (0..root).filter(|&i| self.devices[i].parent.is_none()).count();
        p.address = root_address(&self.config.devices, index);
        p.maxSpeed = match self.devices[root].cfg.kind {
            DeviceKind::Gpu => ze_pci_speed_ext_t { genVersion: 4, width: 16, maxBandwidth: 31_504_000_000 },
            DeviceKind::Npu => ze_pci_speed_ext_t { genVersion: -1, width: -1, maxBandwidth: -1 },
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_as_lspci_prints_them_and_nothing_else_does() {
        let a = parse_bdf("0000:03:00.0").unwrap();
        assert_eq!((a.domain, a.bus, a.device, a.function), (0, 3, 0, 0));
        let a = parse_bdf("10de:ff:1f.7").unwrap();
        assert_eq!((a.domain, a.bus, a.device, a.function), (0x10de, 0xff, 0x1f, 7));
        for bad in ["", "03:00.0", "0000:03:00", "0000:03:20.0", "0000:03:00.8", "000g:03:00.0", "0000:3:00.0"] {
            let e = parse_bdf(bad).unwrap_err();
            assert!(e.contains("DDDD:BB:DD.F"), "{bad}: {e}");
        }
    }

    #[test]
    fn unconfigured_devices_get_distinct_addresses_by_kind() {
        let gpu = DeviceConfig { kind: DeviceKind::Gpu, ..DeviceConfig::default() };
        let npu = DeviceConfig { kind: DeviceKind::Npu, ..DeviceConfig::default() };
        let roots = [gpu.clone(), npu.clone(), gpu, npu];
        let at = |d| {
            let a = root_address(&roots, d);
            (a.bus, a.device)
        };
        assert_eq!([at(0), at(1), at(2), at(3)], [(3, 0), (0, 0x0b), (4, 0), (0, 0x0c)]);
        let configured = [DeviceConfig { pci_bdf: Some("0001:81:00.0".into()), ..DeviceConfig::default() }];
        assert_eq!(root_address(&configured, 0).domain, 1);
    }
}
