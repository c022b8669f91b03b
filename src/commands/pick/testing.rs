//! A small inventory for the tests of the pick modules: a GPU (device 0) with groups `Compute`
//! (Busy, Power) and `Odd:Name` (Busy), an NPU (device 1) with group `Npu` (Inferences, Power);
//! every group in domain 0, read by exported memory.

use zescope_sampler::{DeviceEntry, DevicePath, GroupEntry, GroupExportKind, Inventory, MetricEntry};
use zescope_ze::DeviceKind;

/// Device `index` of driver 0, named `name`, with `groups` (name, metric names).
pub(super) fn device(index: usize, name: &str, groups: &[(&str, &[&str])]) -> DeviceEntry {
    let group = |(g, metrics): &(&str, &[&str])| GroupEntry {
        name: g.to_string(),
        description: String::new(),
        domain: 0,
        exports: GroupExportKind::Group,
        streamable: false,
        tracer: false,
        metrics: metrics
            .iter()
            .map(|m| MetricEntry { name: m.to_string(), description: String::new(), unit: String::new() })
            .collect(),
        unavailable: None,
        export_unavailable: None,
        ways: vec![zescope_sampler::Via::Export],
    };
    DeviceEntry {
        path: DevicePath { driver: 0, device: index, sub_device: None },
        name: name.into(),
        kind: DeviceKind::Gpu,
        uuid: String::new(),
        vendor_id: 0x8086,
        device_id: 0,
        pci_bdf: None,
        driver_version: 0,
        simulated: true,
        groups: groups.iter().map(group).collect(),
        error: None,
    }
}

/// The inventory in the module docs.
pub(super) fn inventory() -> Inventory {
    let gpu = device(0, "GPU", &[("Compute", &["Busy", "Power"]), ("Odd:Name", &["Busy"])]);
    let npu = device(1, "NPU", &[("Npu", &["Inferences", "Power"])]);
    Inventory { source: None, devices: vec![gpu, npu] }
}
