//! The simulated driver's Sysman, in-process through the raw API on a private instance (its core
//! device handles take Sysman calls): the domains it offers, watts from the energy counter equal
//! to the simulated power, a counter that wraps, a failing piece, an empty entry point and a
//! driver without Sysman.

mod common;

use std::time::Duration;

use common::fixture::fixture;
use common::ok;
use level_zero_sys::*;
use ze_sim::config::{SysmanConfig, SysmanPiece};

/// The GPU as a Sysman device handle.
fn gpu(f: &common::fixture::Fixture) -> zes_device_handle_t {
    f.gpu().cast()
}

fn power_domain(f: &common::fixture::Fixture) -> Result<zes_pwr_handle_t, ze_result_t> {
    let enumerate = f.raw.api.zesDeviceEnumPowerDomains.expect("the entry point");
    let (mut n, mut h) = (1u32, std::ptr::null_mut());
    // SAFETY: a core device handle of this instance, room for one handle.
    ok(unsafe { enumerate(gpu(f), &mut n, &mut h) })?;
    assert_eq!(n, 1);
    Ok(h)
}

fn energy(f: &common::fixture::Fixture, h: zes_pwr_handle_t) -> Result<zes_power_energy_counter_t, ze_result_t> {
    let mut e = zes_power_energy_counter_t::default();
    // SAFETY: an enumerated handle and a valid out-struct.
    ok(unsafe { (f.raw.api.zesPowerGetEnergyCounter.unwrap())(h, &mut e) })?;
    Ok(e)
}

#[test]
fn offers_every_piece_and_watts_from_energy_are_the_simulated_power() {
    let f = fixture(|c| c.sysman = SysmanConfig { fixed_power_w: Some(42.0), ..Default::default() });
    let a = &f.raw.api;
    let mut p = zes_device_properties_t::default();
    p.core.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    // SAFETY: a core device handle and a valid properties struct.
    ok(unsafe { (a.zesDeviceGetProperties.unwrap())(gpu(&f), &mut p) }).unwrap();
    let mut core = ze_device_properties_t { stype: ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, ..Default::default() };
    // SAFETY: as above.
    ok(unsafe { (a.zeDeviceGetProperties)(f.gpu(), &mut core) }).unwrap();
    assert_eq!(p.core.uuid.id, core.uuid.id, "Sysman properties carry the core UUID");
    let counts = [
        a.zesDeviceEnumFrequencyDomains.map(|e| count(gpu(&f), e)),
        a.zesDeviceEnumTemperatureSensors.map(|e| count(gpu(&f), e)),
        a.zesDeviceEnumEngineGroups.map(|e| count(gpu(&f), e)),
        a.zesDeviceEnumMemoryModules.map(|e| count(gpu(&f), e)),
    ];
    assert_eq!(counts, [Some(1), Some(2), Some(2), Some(1)]);
    assert!(a.zesInit.is_none() && a.zesDeviceGet.is_none(), "a private instance has no handle-less entry points");

    let h = power_domain(&f).unwrap();
    let e0 = energy(&f, h).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let e1 = energy(&f, h).unwrap();
    let watts = (e1.energy - e0.energy) as f64 / (e1.timestamp - e0.timestamp) as f64;
    assert!((watts - 42.0).abs() < 0.42, "{watts} W from the energy counter");
}

/// The count a `zesDeviceEnum*` call reports.
fn count<H>(
    d: zes_device_handle_t,
    e: unsafe extern "C" fn(zes_device_handle_t, *mut u32, *mut H) -> ze_result_t,
) -> u32 {
    let mut n = 0;
    // SAFETY: a count query.
    ok(unsafe { e(d, &mut n, std::ptr::null_mut()) }).unwrap();
    n
}

#[test]
fn the_energy_counter_wraps_at_its_modulus() {
    let wrap = 10_000_000; // 10 J: at 100 W a wrap every 100 ms
    let f = fixture(|c| {
        c.sysman = SysmanConfig { fixed_power_w: Some(100.0), counter_wrap: Some(wrap), ..Default::default() }
    });
    let h = power_domain(&f).unwrap();
    let mut went_back = false;
    let mut last = energy(&f, h).unwrap().energy;
    for _ in 0..30 {
        std::thread::sleep(Duration::from_millis(10));
        let e = energy(&f, h).unwrap().energy;
        assert!(e < wrap);
        went_back |= e < last;
        last = e;
    }
    assert!(went_back, "the counter wrapped within 300 ms");
}

#[test]
fn state_queries_on_a_lost_device_answer_device_lost() {
    let f = fixture(|c| c.faults.device_lost_after_samples = Some(5));
    let h = power_domain(&f).unwrap();
    assert!(energy(&f, h).is_ok());
    let (c, d, _, _) = f.running();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !f.sim.is_device_lost() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(energy(&f, h).unwrap_err(), ZE_RESULT_ERROR_DEVICE_LOST);
    f.clean_teardown(c, d);
}

#[test]
fn failing_pieces_empty_entry_points_and_a_driver_without_sysman() {
    let f = fixture(|c| c.sysman.failing = vec![SysmanPiece::Power]);
    let h = power_domain(&f).unwrap();
    assert_eq!(energy(&f, h).unwrap_err(), ZE_RESULT_ERROR_NOT_AVAILABLE);

    let f = fixture(|c| c.empty_entry_points = vec!["zesDeviceEnumPowerDomains".into()]);
    assert!(f.raw.api.zesDeviceEnumPowerDomains.is_none(), "an empty entry point is None in the Api");

    let f = fixture(|c| c.sysman.available = false);
    assert_eq!(power_domain(&f).unwrap_err(), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    assert!(f.sim.report().is_clean());
}
