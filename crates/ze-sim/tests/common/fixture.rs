//! One in-process driver instance with its raw API, and the common "running group" setup.

use level_zero_sys::*;
use ze_sim::Sim;
use ze_sim::config::{MetricsEnable, SimConfig};

use super::{Export, Raw};

pub struct Fixture {
    pub sim: Sim,
    pub raw: Raw,
    pub drv: ze_driver_handle_t,
}

/// A fresh instance (metrics always enabled, a 200 µs tick) after `tweak`.
pub fn fixture(tweak: impl FnOnce(&mut SimConfig)) -> Fixture {
    let mut cfg = SimConfig { metrics: MetricsEnable::Always, update_period_us: 200, ..Default::default() };
    tweak(&mut cfg);
    let sim = Sim::new(cfg);
    assert_eq!(sim.init(), ZE_RESULT_SUCCESS);
    let drv = sim.drivers().unwrap()[0];
    Fixture { raw: Raw { api: sim.api() }, sim, drv }
}

impl Fixture {
    pub fn gpu(&self) -> ze_device_handle_t {
        self.raw.devices(self.drv).unwrap()[0]
    }
    /// Context + activated ComputeBasic on the GPU, and its export.
    pub fn running(&self) -> (ze_context_handle_t, ze_device_handle_t, zet_metric_group_handle_t, Export) {
        self.running_group("ComputeBasic")
    }
    /// Context + the named group activated on the GPU, and its export (group query).
    pub fn running_group(
        &self,
        name: &str,
    ) -> (ze_context_handle_t, ze_device_handle_t, zet_metric_group_handle_t, Export) {
        let d = self.gpu();
        let g = self.raw.group_by_name(d, name).unwrap();
        let c = self.raw.context(self.drv).unwrap();
        self.raw.activate(c, d, &[g]).unwrap();
        let e = self.raw.group(g).unwrap().export;
        (c, d, g, e)
    }
    pub fn clean_teardown(&self, c: ze_context_handle_t, d: ze_device_handle_t) {
        self.raw.activate(c, d, &[]).unwrap();
        self.raw.destroy_context(c).unwrap();
    }
}
