//! The tracer's rules: the errors a driver gives, the teardown order and leaks, the size query
//! (refused by default, answered under a quirk), a tracer group's metrics kept out of created
//! groups, empty entry points and the checks of the tracer's knobs.

use level_zero_sys::*;
use ze_sim::Sim;
use ze_sim::config::{DeviceConfig, GroupConfig, MetricConfig, Signal, SimConfig};

use super::common::fixture::fixture;
use super::{collecting, finish, imported};

#[test]
fn errors_are_the_ones_a_driver_gives() {
    let f = fixture(|_| {});
    let d = f.gpu();
    let g = f.raw.tracer_group(d).unwrap();
    let compute = f.raw.group_by_name(d, "ComputeBasic").unwrap();
    let c = f.raw.context(f.drv).unwrap();
    fn null<T>() -> *mut T {
        std::ptr::null_mut()
    }
    assert_eq!(
        f.raw.tracer_create(c, d, &[g], 0, null()).err(),
        Some(ZE_RESULT_ERROR_INVALID_ARGUMENT),
        "not activated"
    );
    f.raw.activate(c, d, &[compute, g]).unwrap();
    assert_eq!(
        f.raw.tracer_create(c, d, &[compute], 0, null()).err(),
        Some(ZE_RESULT_ERROR_INVALID_ARGUMENT),
        "not tracer-based"
    );
    assert_eq!(f.raw.tracer_create(null(), d, &[g], 0, null()).err(), Some(ZE_RESULT_ERROR_INVALID_NULL_HANDLE));
    let create = f.raw.api.zetMetricTracerCreateExp.unwrap();
    let (mut gs, mut out) = ([g], null());
    let mut desc = zet_metric_tracer_exp_desc_t::default();
    // SAFETY: the pointers are valid or deliberately null().
    unsafe {
        assert_eq!(
            create(c, d, 1, gs.as_mut_ptr(), std::ptr::null_mut(), null(), &mut out),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER
        );
        assert_eq!(
            create(c, d, 1, std::ptr::null_mut(), &mut desc, null(), &mut out),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER
        );
        assert_eq!(
            create(c, d, 1, gs.as_mut_ptr(), &mut desc, null(), std::ptr::null_mut()),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER
        );
        desc.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP;
        assert_eq!(create(c, d, 1, gs.as_mut_ptr(), &mut desc, null(), &mut out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    let plain = f.raw.event_pool(c, 0).unwrap();
    let not_host = f.raw.event(plain).unwrap();
    assert_eq!(
        f.raw.tracer_create(c, d, &[g], 0, not_host).err(),
        Some(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT)
    );
    let (t, smallest) = f.raw.tracer_create(c, d, &[g], 0, null()).unwrap();
    assert_eq!(smallest, 32, "0 bytes becomes one record");
    assert_eq!(
        f.raw.tracer_create(c, d, &[g], 0, null()).err(),
        Some(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
        "one per device"
    );
    f.raw.tracer_destroy(t).unwrap();
    let (t, largest) = f.raw.tracer_create(c, d, &[g], u32::MAX, null()).unwrap();
    assert_eq!(largest, 16384 * 32 / 2, "at most half the ring");
    assert_eq!(f.raw.tracer_read_into(t, 4096), (ZE_RESULT_NOT_READY, Vec::new()), "never enabled");
    let read = f.raw.api.zetMetricTracerReadDataExp.unwrap();
    // SAFETY: deliberately null() pointers and handles.
    unsafe {
        assert_eq!(read(t, std::ptr::null_mut(), std::ptr::null_mut()), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        let mut size = 0;
        assert_eq!(read(null(), &mut size, std::ptr::null_mut()), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        assert_eq!(f.raw.api.zetMetricTracerEnableExp.unwrap()(null(), 1), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        assert_eq!(f.raw.api.zetMetricDecoderDestroyExp.unwrap()(null()), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        let mut dec = null();
        assert_eq!(
            f.raw.api.zetMetricDecoderCreateExp.unwrap()(t, std::ptr::null_mut()),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER
        );
        assert_eq!(f.raw.api.zetMetricDecoderCreateExp.unwrap()(t, &mut dec), ZE_RESULT_SUCCESS);
        assert_eq!(
            f.raw.api.zetMetricDecoderGetDecodableMetricsExp.unwrap()(dec, std::ptr::null_mut(), null()),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER
        );
        f.raw.decoder_destroy(dec).unwrap();
    }
    f.raw.tracer_destroy(t).unwrap();
    f.raw.destroy_event(not_host).unwrap();
    f.raw.destroy_pool(plain).unwrap();
    f.clean_teardown(c, d);
    assert_eq!(f.sim.report().violation_kinds(), ["wrong_stype"]);
    assert!(f.sim.report().leaks.is_empty());
}

#[test]
fn the_teardown_order_is_enforced_counted_and_what_is_left_leaks() {
    let f = fixture(|_| {});
    let (c, d, g, dup, p, _) = imported(&f);
    let pool = f.raw.event_pool(c, ZE_EVENT_POOL_FLAG_HOST_VISIBLE).unwrap();
    let ev = f.raw.event(pool).unwrap();
    let (t, _) = f.raw.tracer_create(c, d, &[g], 64, ev).unwrap();
    f.raw.tracer_enable(t, true).unwrap();
    let dec = f.raw.decoder_create(t).unwrap();
    let in_use = Some(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    assert_eq!(f.raw.tracer_destroy(t).err(), in_use, "still enabled");
    assert_eq!(f.raw.activate(c, d, &[]).err(), in_use, "a tracer lives on the group");
    assert_eq!(f.raw.destroy_event(ev).err(), in_use, "the tracer's notification event");
    assert_eq!(f.raw.device_exp(f.drv, zetDeviceDisableMetricsExp_NAME, d).err(), in_use);
    assert_eq!(f.raw.destroy_context(c).err(), in_use);
    f.raw.tracer_disable(t, true).unwrap();
    let r = f.sim.report();
    assert_eq!(
        r.violation_kinds(),
        [
            "tracer_destroyed_while_enabled",
            "teardown_with_live_tracer",
            "teardown_with_live_tracer",
            "teardown_with_live_tracer",
            "teardown_with_live_tracer",
        ]
    );
    let mut leaks: Vec<&str> = r.leaks.iter().map(|l| l.kind.as_str()).collect();
    leaks.sort();
    assert_eq!(
        leaks,
        [
            "context_not_destroyed",
            "decoder_not_destroyed",
            "event_not_destroyed",
            "event_pool_not_destroyed",
            "group_left_activated",
            "import_not_freed",
            "tracer_not_destroyed"
        ]
    );
    f.raw.decoder_destroy(dec).unwrap();
    f.raw.tracer_destroy(t).unwrap();
    f.raw.destroy_event(ev).unwrap();
    f.raw.destroy_pool(pool).unwrap();
    f.raw.free(c, p).unwrap();
    super::common::close(dup);
    f.clean_teardown(c, d);
    assert!(f.sim.report().leaks.is_empty());
}

#[test]
fn the_size_query_is_refused_as_the_specification_and_compute_runtime_do() {
    // Intel's conformance suite reads with size 0 and no buffer and expects INVALID_ARGUMENT.
    let f = fixture(|_| {});
    let (c, t, dec, _) = collecting(&f, 8);
    assert_eq!(f.raw.tracer_available(t), (ZE_RESULT_ERROR_INVALID_ARGUMENT, 0));
    let mut size = 64;
    // SAFETY: a valid size, no buffer.
    let r = unsafe { (f.raw.api.zetMetricTracerReadDataExp.unwrap())(t, &mut size, std::ptr::null_mut()) };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT, "a size without a buffer is the same query");
    let (r, raw) = f.raw.tracer_read_into(t, 1 << 20);
    assert!(r == ZE_RESULT_SUCCESS && raw.len() >= 8 * 32, "a read into a buffer still works");
    finish(&f, c, t, dec);
    assert!(f.sim.report().is_clean());
}

#[test]
fn the_quirk_answers_the_size_query_with_the_bytes_waiting_as_older_drivers_did() {
    let f = fixture(|c| c.quirks.tracer_size_query = true);
    let (c, t, dec, _) = collecting(&f, 8);
    let (r, bytes) = f.raw.tracer_available(t);
    assert!(r == ZE_RESULT_SUCCESS && bytes >= 8 * 32 && bytes % 32 == 0, "{r:#x}: {bytes} bytes");
    let (r, raw) = f.raw.tracer_read_into(t, bytes);
    assert_eq!((r, raw.len()), (ZE_RESULT_SUCCESS, bytes), "a read of the size answered gets that much");
    finish(&f, c, t, dec);
    assert!(f.sim.report().is_clean());
}

#[test]
fn a_metric_of_the_tracer_group_cannot_join_a_created_group() {
    let f = fixture(|_| {});
    let d = f.gpu();
    let a = &f.raw.api;
    let (create, add, destroy) = (
        a.zetMetricGroupCreateExp.unwrap(),
        a.zetMetricGroupAddMetricExp.unwrap(),
        a.zetMetricGroupDestroyExp.unwrap(),
    );
    let kernel_start = f.raw.metrics(f.raw.tracer_group(d).unwrap()).unwrap()[0];
    let mut g = std::ptr::null_mut();
    let mut why = [0 as core::ffi::c_char; 128];
    let mut len = why.len();
    // SAFETY: NUL-terminated strings, valid out-pointers and error buffer of `len` bytes.
    unsafe {
        assert_eq!(create(d, c"Mine".as_ptr(), c"".as_ptr(), 1, &mut g), ZE_RESULT_SUCCESS);
        assert_eq!(add(g, kernel_start, &mut len, why.as_mut_ptr()), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        let why = std::ffi::CStr::from_ptr(why.as_ptr()).to_string_lossy();
        assert!(why.contains("tracer-based group"), "{why}");
        assert_eq!(destroy(g), ZE_RESULT_SUCCESS);
    }
    assert!(f.sim.report().is_clean());
}

#[test]
fn the_tracer_entry_points_can_be_left_empty() {
    let names = [
        "zetMetricTracerCreateExp",
        "zetMetricTracerDestroyExp",
        "zetMetricTracerEnableExp",
        "zetMetricTracerDisableExp",
        "zetMetricTracerReadDataExp",
        "zetMetricDecoderCreateExp",
        "zetMetricDecoderDestroyExp",
        "zetMetricDecoderGetDecodableMetricsExp",
        "zetMetricTracerDecodeExp",
    ];
    assert!(names.iter().all(|n| SimConfig::optional_entry_points().contains(n)));
    let sim =
        Sim::new(SimConfig { empty_entry_points: names.iter().map(|n| n.to_string()).collect(), ..Default::default() });
    let a = sim.api();
    assert!(a.zetMetricTracerCreateExp.is_none() && a.zetMetricTracerDecodeExp.is_none());
    assert!(a.zetMetricDecoderGetDecodableMetricsExp.is_none() && a.zetMetricTracerReadDataExp.is_none());
    assert!(Sim::new(SimConfig::default()).api().zetMetricTracerCreateExp.is_some());
}

#[test]
fn the_tracer_knobs_and_groups_are_checked_with_the_field_named() {
    let err = |text: &str| SimConfig::from_ron(text, "cfg").unwrap_err().0;
    assert!(
        err("(update_period_us: 1000000, tracer_events_per_tick: 70000, tracer_ring_events: 100000)")
            .contains("tracer_events_per_tick = 70000")
    );
    assert!(err("(tracer_events_per_tick: 65, tracer_ring_events: 64)").contains("above tracer_ring_events"));
    assert!(err("(tracer_ring_events: 10)").contains("tracer_ring_events = 10"));
    let group = |tracer: bool, signal: Signal| {
        let g = GroupConfig {
            name: "G".into(),
            tracer,
            metrics: vec![MetricConfig { name: "M".into(), signal, ..Default::default() }],
            ..Default::default()
        };
        SimConfig { devices: vec![DeviceConfig { groups: vec![g], ..Default::default() }], ..Default::default() }
            .validate()
    };
    assert!(group(true, Signal::GpuTime).unwrap_err().contains("devices[0].groups[0].metrics[0]"));
    assert!(group(false, Signal::KernelStart).unwrap_err().contains("outside a tracer group"));
    assert!(group(true, Signal::KernelMarker).is_ok());
    let ok = SimConfig::from_ron("(update_period_us: 1000, tracer_events_per_tick: 4000)", "cfg");
    assert!(ok.is_ok(), "the fastest setting is accepted: {ok:?}");
    assert!(SimConfig::from_ron("(update_period_us: 10, tracer_events_per_tick: 40)", "cfg").is_ok());
    let fast = err("(update_period_us: 10, tracer_events_per_tick: 41, tracer_ring_events: 65536)");
    assert!(fast.contains("asks for 4100000 events/s") && fast.contains("at most 4000000"), "{fast}");
}
