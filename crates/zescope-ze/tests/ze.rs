//! The safe Level Zero layer against private simulated-driver instances: enumeration, and how it
//! copes with drivers that mishandle `pNext` chains.

use std::sync::Arc;

use ze_sim::Sim;
use ze_sim::config::{MetricsEnable, SimConfig};
use zescope_ze::{ExportQueryError, GroupExport, Loader, Origin};

fn loader(tweak: impl FnOnce(&mut SimConfig)) -> (Arc<Sim>, Loader) {
    let mut cfg = SimConfig { metrics: MetricsEnable::Always, ..Default::default() };
    tweak(&mut cfg);
    let sim = Arc::new(Sim::new(cfg));
    let l = Loader::from_sim(sim.clone()).expect("open the simulated driver");
    (sim, l)
}

#[test]
fn enumerates_devices_sub_devices_groups_and_metrics() {
    let (sim, l) = loader(|_| {});
    assert_eq!(l.origin, Origin::BuiltInSim);
    assert!(l.drivers[0].info.simulated, "ze-sim is recognised by its driver UUID");
    let devs = l.drivers[0].devices().unwrap();
    assert_eq!(devs.len(), 2);
    assert_eq!(devs[0].sub_devices().unwrap()[0].info.sub_device, Some(0));
    let groups = devs[0].metric_groups().unwrap();
    assert_eq!(groups[0].info.export, GroupExport::DmaBuf);
    assert_eq!(groups[1].info.export, GroupExport::No);
    assert!(groups[1].metrics().unwrap().iter().all(|m| m.info.exports_dma_buf()));
    assert_eq!(groups[0].metrics().unwrap()[0].info.units, "ns");
    assert!(l.has_metrics());
    assert!(sim.report().is_clean());
}

#[test]
fn a_driver_that_overwrites_pnext_is_detected_and_not_followed() {
    let (sim, l) = loader(|c| c.quirks.overwrite_pnext = true);
    let dev = &l.drivers[0].devices().unwrap()[0];
    let g = &dev.metric_groups().unwrap()[0];
    assert!(matches!(g.info.export, GroupExport::Unknown(_)), "{:?}", g.info.export);
    assert_eq!(g.query_export(), Err(ExportQueryError::ChainClobbered));
    assert!(sim.report().violations.is_empty());
}

#[test]
fn a_driver_rejecting_unknown_chains_is_retried_without_the_chain() {
    // An older driver that knows no export struct and rejects chains of unknown structs.
    let (sim, l) = loader(|c| {
        c.quirks.invalid_argument_on_unknown_chain = true;
        c.quirks.no_export_extension = true;
    });
    let dev = &l.drivers[0].devices().unwrap()[0];
    let groups = dev.metric_groups().unwrap();
    assert_eq!(groups[0].info.name, "ComputeBasic", "properties still read, without the chain");
    assert_eq!(groups[0].info.export, GroupExport::No, "marked as not exporting");
    assert_eq!(groups[0].query_export(), Err(ExportQueryError::Unsupported));
    assert!(sim.report().violations.is_empty());
    // The same driver without the quirk answers the chain.
    let (_sim, l) = loader(|c| c.quirks.invalid_argument_on_unknown_chain = true);
    let g = &l.drivers[0].devices().unwrap()[0].metric_groups().unwrap()[0];
    assert_eq!(g.info.export, GroupExport::DmaBuf);
}

#[test]
fn errors_name_the_call_the_result_and_what_to_do() {
    let (_sim, l) = loader(|c| c.faults.group_properties_fail = true);
    let dev = &l.drivers[0].devices().unwrap()[0];
    let msg = dev.metric_groups().err().expect("fault injected").to_string();
    assert!(msg.starts_with("zetMetricGroupGetProperties failed with ZE_RESULT_ERROR_UNKNOWN"), "{msg}");
    let e = zescope_ze::ZeError { call: "zeInit", code: level_zero_sys::ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS };
    let msg = e.to_string();
    assert!(msg.contains("ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS") && msg.contains("render"), "{msg}");
}

#[test]
fn a_driver_without_devices_or_init_fails_clearly() {
    let (_sim, l) = loader(|c| c.faults.no_devices = true);
    assert!(l.drivers[0].devices().unwrap().is_empty());
    assert!(!l.has_metrics());
    let sim = Arc::new(Sim::new(SimConfig {
        faults: ze_sim::config::Faults { init_fails: true, ..Default::default() },
        ..Default::default()
    }));
    let msg = Loader::from_sim(sim).err().expect("init fails").to_string();
    assert!(
        msg.contains("no Level Zero driver was found") && msg.contains("ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE"),
        "{msg}"
    );
}
