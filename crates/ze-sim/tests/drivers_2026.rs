//! What drivers do in 2026 that the simulated driver models (issue 41), in-process through the
//! raw API: one open streamer per domain of a device by default and per device on the NPU
//! driver; size queries of reads refused (the spec deprecated them in 1.16); a counter-based
//! notification event refused by the streamer (1.21); group types as combined bits
//! (compute-runtime); the export extension working but not listed by name; a Sysman piece
//! refused to a user without root; a global timestamp in host ns on a synchronized device.

mod common;

use common::fixture::{Fixture, fixture};
use common::ok;
use level_zero_sys::*;
use ze_sim::config::{Profile, SysmanPiece};

/// The GPU's `ComputeBasic` (domain 0) made streamable beside `RenderBasic` (domain 3), both
/// activated: (context, device, ComputeBasic, RenderBasic).
fn two_streamable(
    f: &Fixture,
) -> (ze_context_handle_t, ze_device_handle_t, zet_metric_group_handle_t, zet_metric_group_handle_t) {
    let d = f.gpu();
    let (a, b) = (f.raw.group_by_name(d, "ComputeBasic").unwrap(), f.raw.group_by_name(d, "RenderBasic").unwrap());
    let c = f.raw.context(f.drv).unwrap();
    f.raw.activate(c, d, &[a, b]).unwrap();
    (c, d, a, b)
}

fn streamable_compute(c: &mut ze_sim::config::SimConfig) {
    c.devices[0].groups.iter_mut().find(|g| g.name == "ComputeBasic").unwrap().stream = true;
}

#[test]
fn two_domains_stream_at_once_unless_the_driver_allows_one_streamer_per_device() {
    let f = fixture(streamable_compute);
    let (c, d, a, b) = two_streamable(&f);
    let null = std::ptr::null_mut();
    let first = f.raw.open(c, d, a, 1_000_000, 1, null).unwrap();
    let second = f.raw.open(c, d, b, 1_000_000, 1, null).unwrap();
    assert_eq!(
        f.raw.open(c, d, b, 1_000_000, 1, null).err(),
        Some(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
        "same domain"
    );
    f.raw.close_streamer(second.streamer).unwrap();
    f.raw.close_streamer(first.streamer).unwrap();
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());

    let f = fixture(|c| {
        streamable_compute(c);
        c.quirks.one_streamer_per_device = true;
    });
    let (c, d, a, b) = two_streamable(&f);
    let first = f.raw.open(c, d, a, 1_000_000, 1, null).unwrap();
    assert_eq!(f.raw.open(c, d, b, 1_000_000, 1, null).err(), Some(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE));
    f.raw.close_streamer(first.streamer).unwrap();
    let again = f.raw.open(c, d, b, 1_000_000, 1, null).unwrap();
    f.raw.close_streamer(again.streamer).unwrap();
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
    assert!(Profile::NpuDriverLike.config().resolved().quirks.one_streamer_per_device);
}

/// A host-visible pool of one event, counter-based when `counter_based`.
fn pool(f: &Fixture, c: ze_context_handle_t, counter_based: bool) -> ze_event_pool_handle_t {
    let cb = ze_event_pool_counter_based_exp_desc_t {
        stype: ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC,
        pNext: std::ptr::null(),
        flags: ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_IMMEDIATE,
    };
    let next =
        if counter_based { (&cb as *const ze_event_pool_counter_based_exp_desc_t).cast() } else { std::ptr::null() };
    let desc =
        ze_event_pool_desc_t { flags: ZE_EVENT_POOL_FLAG_HOST_VISIBLE, count: 1, pNext: next, ..Default::default() };
    let mut p = std::ptr::null_mut();
    // SAFETY: a valid descriptor whose chain lives for the call; no device list.
    ok(unsafe { f.raw.api.zeEventPoolCreate.unwrap()(c, &desc, 0, std::ptr::null_mut(), &mut p) }).unwrap();
    p
}

#[test]
fn the_newer_spec_refuses_size_queries_and_counter_based_notification_events() {
    let f = fixture(|c| c.profile = Some(Profile::Spec2026));
    let (c, d, g, _) = f.running_group("RenderBasic");
    let (plain, counted) = (pool(&f, c, false), pool(&f, c, true));
    let (e, ce) = (f.raw.event(plain).unwrap(), f.raw.event(counted).unwrap());
    assert_eq!(f.raw.open(c, d, g, 100_000, 1, ce).err(), Some(ZE_RESULT_ERROR_INVALID_ARGUMENT), "counter-based");
    let o = f.raw.open(c, d, g, 100_000, 1, e).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let read = f.raw.api.zetMetricStreamerReadData.unwrap();
    let mut size = 0usize;
    // SAFETY: a size query (no buffer).
    let r = unsafe { read(o.streamer, u32::MAX, &mut size, std::ptr::null_mut()) };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT, "size queries are refused");
    assert_eq!(f.sim.report().size_queries, 1, "and counted");
    let mut buf = vec![0u8; 1 << 16];
    size = buf.len();
    // SAFETY: `buf` holds `size` bytes.
    assert_eq!(unsafe { read(o.streamer, u32::MAX, &mut size, buf.as_mut_ptr()) }, ZE_RESULT_SUCCESS);
    assert!(size > 0 && size < buf.len(), "a fixed buffer gets the reports: {size} bytes");
    f.raw.close_streamer(o.streamer).unwrap();
    for ev in [e, ce] {
        f.raw.destroy_event(ev).unwrap();
    }
    for p in [plain, counted] {
        f.raw.destroy_pool(p).unwrap();
    }
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
    // A driver before 1.21 takes the counter-based event.
    let f = fixture(|_| {});
    let (c, d, g, _) = f.running_group("RenderBasic");
    let counted = pool(&f, c, true);
    let ce = f.raw.event(counted).unwrap();
    let o = f.raw.open(c, d, g, 100_000, 1, ce).unwrap();
    f.raw.close_streamer(o.streamer).unwrap();
    f.raw.destroy_event(ce).unwrap();
    f.raw.destroy_pool(counted).unwrap();
    f.clean_teardown(c, d);
}

/// The names `zeDriverGetExtensionProperties` lists.
fn extensions(f: &Fixture) -> Vec<String> {
    let get = f.raw.api.zeDriverGetExtensionProperties;
    let mut n = 16u32;
    let mut v = vec![ze_driver_extension_properties_t::default(); 16];
    // SAFETY: room for 16.
    ok(unsafe { get(f.drv, &mut n, v.as_mut_ptr()) }).unwrap();
    v.iter().take(n as usize).map(|e| common::cstr(&e.name)).collect()
}

#[test]
fn group_types_are_bit_sets_and_the_extension_may_go_unlisted() {
    const EXPORT: &str = "ZET_experimental_metric_export_memory";
    let f = fixture(|c| c.profile = Some(Profile::ComputeRuntimeLike));
    let d = f.gpu();
    let both = ZET_METRIC_GROUP_TYPE_EXP_FLAG_OTHER
        | ZET_METRIC_GROUP_TYPE_EXP_FLAG_MARKER
        | ZET_METRIC_GROUP_TYPE_EXP_FLAG_USER_CREATED;
    let exported = f.raw.group(f.raw.group_by_name(d, "ComputeBasic").unwrap()).unwrap();
    assert_eq!(exported.type_flags, both | ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF);
    assert!(exported.export.fd >= 0 && exported.export.size > 0);
    let streamed = f.raw.group(f.raw.group_by_name(d, "RenderBasic").unwrap()).unwrap();
    assert_eq!(streamed.type_flags, both);
    assert!(extensions(&f).iter().any(|e| e == EXPORT));

    let f = fixture(|c| c.quirks.export_extension_unlisted = true);
    assert!(!extensions(&f).iter().any(|e| e == EXPORT), "{:?}", extensions(&f));
    let g = f.raw.group(f.raw.group_by_name(f.gpu(), "ComputeBasic").unwrap()).unwrap();
    assert_eq!(g.type_flags, ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF, "the bit is set all the same");
    assert!(g.export.fd >= 0);
}

#[test]
fn a_piece_for_root_only_is_refused_at_its_enumeration() {
    let f = fixture(|c| c.sysman.root_only = vec![SysmanPiece::Engines]);
    let (engines, power) = (f.raw.api.zesDeviceEnumEngineGroups.unwrap(), f.raw.api.zesDeviceEnumPowerDomains.unwrap());
    let mut n = 0u32;
    // SAFETY: a core device handle (Sysman on core handles in a private instance), a count query.
    let r = unsafe { engines(f.gpu().cast(), &mut n, std::ptr::null_mut()) };
    assert_eq!(r, ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS);
    // SAFETY: as above.
    assert_eq!(unsafe { power(f.gpu().cast(), &mut n, std::ptr::null_mut()) }, ZE_RESULT_SUCCESS);
    assert_eq!(n, 1, "the other pieces answer");
}

#[test]
fn a_synchronized_device_answers_its_global_timestamp_in_host_ns() {
    let read = |f: &Fixture| {
        let (mut host, mut dev) = (0u64, 0u64);
        // SAFETY: our device, valid out-pointers.
        ok(unsafe { (f.raw.api.zeDeviceGetGlobalTimestamps)(f.gpu(), &mut host, &mut dev) }).unwrap();
        (host, dev)
    };
    let ticking = fixture(|c| c.quirks.timer_hz = Some(19_200_000));
    let (host, ticks) = read(&ticking);
    assert!(ticks.abs_diff(host) > 1_000_000_000, "ticks of an unsynchronized 19.2 MHz timer: {ticks} at {host}");
    let synced = fixture(|c| c.profile = Some(Profile::Spec2026));
    let (host, dev) = read(&synced);
    assert_eq!(dev, host, "host ns");
    // Metric timestamps stay ticks: a streamer report's timestamp is the timer's ticks in ns,
    // which on a synchronized 19.2 MHz timer is host time rounded to whole ticks.
    let (c, d, g, _) = synced.running_group("RenderBasic");
    let o = synced.raw.open(c, d, g, 100_000, 1, std::ptr::null_mut()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3));
    let mut buf = vec![0u8; 1 << 16];
    let mut size = buf.len();
    // SAFETY: `buf` holds `size` bytes.
    ok(unsafe { synced.raw.api.zetMetricStreamerReadData.unwrap()(o.streamer, u32::MAX, &mut size, buf.as_mut_ptr()) })
        .unwrap();
    let values = synced.raw.calculate(g, &buf[..size]).unwrap();
    let first = values[0] as u64;
    let now = read(&synced).0;
    assert!(now.abs_diff(first) < 1_000_000_000, "report at {first}, host now {now}");
    synced.raw.close_streamer(o.streamer).unwrap();
    synced.clean_teardown(c, d);
}
