//! The time-based metric streamer of the simulated driver, in-process: the tour (period and
//! report count written back, notification, reports decoded by both Calculate functions, one
//! streamer per device), the bounded buffer, the rules it enforces and the faults it injects.

mod common;

use common::fixture::fixture;
use common::stream::stream_tour;
use common::wait_until;
use level_zero_sys::*;

#[test]
fn streams_reports_that_calculate_decodes_and_records_the_one_refusal() {
    let f = fixture(|_| {});
    stream_tour(&f.raw, f.drv, f.gpu(), "RenderBasic", "in-process");
    let r = f.sim.report();
    assert_eq!(r.violation_kinds(), ["teardown_with_open_streamer"], "{r:?}");
    assert!(r.leaks.is_empty(), "{r:?}");
}

#[test]
fn groups_without_time_based_sampling_refuse_a_streamer() {
    let f = fixture(|c| c.unreadable_group = true);
    let (c, d, g, _) = f.running_group(ze_sim::catalog::UNREADABLE_GROUP);
    assert_eq!(f.raw.group(g).unwrap().sampling, ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED);
    assert_eq!(f.raw.open(c, d, g, 100_000, 1, std::ptr::null_mut()).err(), Some(ZE_RESULT_ERROR_INVALID_ARGUMENT));
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

#[test]
fn a_full_buffer_drops_the_oldest_and_the_next_read_says_so() {
    let f = fixture(|c| c.streamer_buffer_reports = 16);
    let (c, d, g, _) = f.running_group("RenderBasic");
    // Periods of 5 ms: 60 of them overflow the 16-report buffer, and the second read below comes
    // well within the 80 ms the buffer then takes to overflow again, even on a loaded machine.
    let o = f.raw.open(c, d, g, 5_000_000, 1, std::ptr::null_mut()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (r, bytes) = f.raw.read(o.streamer).unwrap();
    assert_eq!(r, ZE_RESULT_WARNING_DROPPED_DATA);
    let n = f.raw.metrics(g).unwrap().len();
    let values = f.raw.calculate(g, &bytes).unwrap();
    assert_eq!(values.len(), 16 * n, "the buffer holds 16 reports");
    let (r, _) = f.raw.read(o.streamer).unwrap();
    assert_eq!(r, ZE_RESULT_SUCCESS, "the warning is given once");
    f.raw.close_streamer(o.streamer).unwrap();
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

#[test]
fn teardown_while_open_is_refused_and_recorded_and_unclosed_objects_leak() {
    let f = fixture(|_| {});
    let (c, d, g, _) = f.running_group("RenderBasic");
    let pool = f.raw.event_pool(c, ZE_EVENT_POOL_FLAG_HOST_VISIBLE).unwrap();
    let e = f.raw.event(pool).unwrap();
    let o = f.raw.open(c, d, g, 100_000, 1, e).unwrap();
    assert_eq!(f.raw.destroy_event(e).err(), Some(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE));
    assert_eq!(f.raw.destroy_pool(pool).err(), Some(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE));
    assert_eq!(f.raw.destroy_context(c).err(), Some(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE));
    let r = f.sim.report();
    assert_eq!(r.violation_kinds(), ["teardown_with_open_streamer", "teardown_order", "teardown_with_open_streamer"]);
    let mut leaks: Vec<&str> = r.leaks.iter().map(|l| l.kind.as_str()).collect();
    leaks.sort();
    assert_eq!(
        leaks,
        [
            "context_not_destroyed",
            "event_not_destroyed",
            "event_pool_not_destroyed",
            "group_left_activated",
            "streamer_not_closed"
        ]
    );
    f.raw.close_streamer(o.streamer).unwrap();
    f.raw.destroy_event(e).unwrap();
    f.raw.destroy_pool(pool).unwrap();
    f.clean_teardown(c, d);
    assert!(f.sim.report().leaks.is_empty());
}

#[test]
fn event_waits_time_out_and_a_non_host_visible_pool_is_refused() {
    let f = fixture(|_| {});
    let (c, d, g, _) = f.running_group("RenderBasic");
    let dev_pool = f.raw.event_pool(c, 0).unwrap();
    let dev_event = f.raw.event(dev_pool).unwrap();
    assert_eq!(f.raw.open(c, d, g, 100_000, 1, dev_event).err(), Some(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT));
    let pool = f.raw.event_pool(c, ZE_EVENT_POOL_FLAG_HOST_VISIBLE).unwrap();
    let e = f.raw.event(pool).unwrap();
    // 1000 reports of ≥ 655 ms each will not be there in 10 ms.
    let o = f.raw.open(c, d, g, u32::MAX, 1000, e).unwrap();
    assert_eq!((o.period_ns, o.notify_every), (655_360_000, 1000));
    let t = std::time::Instant::now();
    assert_eq!(f.raw.wait(e, 10_000_000), ZE_RESULT_NOT_READY);
    assert!(t.elapsed() >= std::time::Duration::from_millis(10));
    assert_eq!(f.raw.wait(e, 0), ZE_RESULT_NOT_READY);
    f.raw.close_streamer(o.streamer).unwrap();
    for ev in [e, dev_event] {
        f.raw.destroy_event(ev).unwrap();
    }
    f.raw.destroy_pool(pool).unwrap();
    f.raw.destroy_pool(dev_pool).unwrap();
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

#[test]
fn faults_refuse_the_open_fail_reads_and_lose_the_device() {
    for (busy, denied, expect) in
        [(true, false, ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE), (false, true, ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS)]
    {
        let f = fixture(|c| {
            c.faults.streamer_open_busy = busy;
            c.faults.streamer_open_denied = denied;
        });
        let (c, d, g, _) = f.running_group("RenderBasic");
        assert_eq!(f.raw.open(c, d, g, 100_000, 1, std::ptr::null_mut()).err(), Some(expect));
        f.clean_teardown(c, d);
    }
    let f = fixture(|c| c.faults.streamer_read_fails_after = Some(1));
    let (c, d, g, _) = f.running_group("RenderBasic");
    let o = f.raw.open(c, d, g, 10_000, 1, std::ptr::null_mut()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1));
    f.raw.read(o.streamer).unwrap();
    assert_eq!(f.raw.read(o.streamer).err(), Some(ZE_RESULT_ERROR_UNKNOWN));
    f.raw.close_streamer(o.streamer).unwrap();
    f.clean_teardown(c, d);

    let f = fixture(|c| c.faults.device_lost_after_reports = Some(50));
    let (c, d, g, _) = f.running_group("RenderBasic");
    let o = f.raw.open(c, d, g, 10_000, 1, std::ptr::null_mut()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3));
    assert_eq!(f.raw.read(o.streamer).err(), Some(ZE_RESULT_ERROR_DEVICE_LOST));
    assert!(f.sim.is_device_lost());
    f.raw.close_streamer(o.streamer).unwrap();
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

/// As Intel's conformance suite assumes of a device (root and tile): the first group of every
/// domain opens a streamer once activated (the built-in model had exported-only groups first).
#[test]
fn every_domains_first_group_opens_a_streamer_on_root_and_tile() {
    let f = fixture(|_| {});
    let root = f.gpu();
    let tile = f.raw.sub_devices(root).unwrap()[0];
    let c = f.raw.context(f.drv).unwrap();
    for d in [root, tile] {
        let mut seen = std::collections::HashSet::new();
        let firsts: Vec<_> =
            f.raw.groups(d).unwrap().into_iter().filter(|&g| seen.insert(f.raw.group(g).unwrap().domain)).collect();
        assert!(firsts.len() >= 3, "{} domains", firsts.len());
        f.raw.activate(c, d, &firsts).unwrap();
        for &g in &firsts {
            let info = f.raw.group(g).unwrap();
            assert_ne!(info.sampling & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED, 0, "{}", info.name);
            let o = f.raw.open(c, d, g, 100_000, 1, std::ptr::null_mut()).unwrap();
            f.raw.close_streamer(o.streamer).unwrap();
        }
        f.raw.activate(c, d, &[]).unwrap();
    }
    f.raw.destroy_context(c).unwrap();
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}

/// `EuStallSampling` is an IP-sampling group as compute-runtime publishes it: time-based only,
/// no timestamp metric, `IP` (type IP) then nine EVENT counts; each report one sample.
#[test]
fn the_ip_sampling_group_streams_instruction_pointers_and_their_stall_counts() {
    let f = fixture(|_| {});
    let (c, d, g, e) = f.running_group("EuStallSampling");
    assert_eq!((e.fd, e.size), (-1, 0), "it exports nothing");
    let info = f.raw.group(g).unwrap();
    assert_eq!((info.sampling, info.domain), (ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED, 100));
    let metrics: Vec<_> = f.raw.metrics(g).unwrap().into_iter().map(|m| f.raw.metric(m).unwrap()).collect();
    assert_eq!(metrics.len(), 10);
    assert_eq!((metrics[0].0.as_str(), metrics[0].1), ("IP", ZET_METRIC_TYPE_IP_EXP));
    assert!(metrics[1..].iter().all(|m| m.1 == ZET_METRIC_TYPE_EVENT), "the counts are EVENTs");
    assert!(metrics.iter().all(|m| m.1 != ZET_METRIC_TYPE_TIMESTAMP), "no timestamp metric");
    let o = f.raw.open(c, d, g, 1_000_000, 1, std::ptr::null_mut()).unwrap();
    wait_until("a few samples", || {
        let (_, bytes) = f.raw.read(o.streamer).unwrap();
        let values = f.raw.calculate(g, &bytes).unwrap();
        values.chunks(10).any(|s| {
            let ip = s[0] as u64;
            assert!((0x1000..0x1400).contains(&ip) && ip.is_multiple_of(16), "an instruction of the kernel: {ip:#x}");
            s[1] > 0.0
        })
    });
    f.raw.close_streamer(o.streamer).unwrap();
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}
