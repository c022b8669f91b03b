//! The metric tracer and decoder of the simulated driver (`ZET_experimental_metric_tracer`) on
//! its tracer-based group `KernelTrace`, whose exported memory the workload writes kernel events
//! into.
//!
//! In-process: the whole order (export queried before activation, import, activate, tracer
//! create and enable, notification, read, decoder, decodable metrics, decode, disable, drain,
//! destroy decoder, destroy tracer, free, deactivate, disable metrics) with every entry checked
//! against the ring the workload wrote and the seed's events; subsets of metrics, short buffers,
//! sets per sub-device, asynchronous enable/disable (counted in the driver's ticks, not slept
//! for), dropped events, determinism, a decoder outliving its tracer. The errors a driver gives,
//! the teardown rules and leaks, the size query, empty entry points and the knobs' checks are in
//! `tracer/rules.rs`.
//!
//! Through the real loaders (`tracer/loaders.rs`): the upstream loader v1.32 in direct mode and
//! in intercept mode with the validation layer, and Debian's 1.8.12, which lacks the entry
//! points. A C client through the upstream loader (`tracer/c_client.rs`, `c/tracer_client.c`).

#[path = "tracer/c_client.rs"]
mod c_client;
mod common;
#[path = "tracer/loaders.rs"]
mod loaders;
#[path = "tracer/rules.rs"]
mod rules;

use std::time::Duration;

use common::fixture::{Fixture, fixture};
use common::tracer::check_entries;
use level_zero_sys::*;
use ze_sim::config::{DeviceConfig, Signal, SimConfig};
use ze_sim::ring;

/// The signals of the built-in `KernelTrace`, in metric order.
fn kernel_trace_signals() -> Vec<Signal> {
    let cfg = SimConfig::default();
    let g = cfg.devices[0].groups.iter().find(|g| g.name == "KernelTrace").expect("the built-in tracer group");
    g.metrics.iter().map(|m| m.signal).collect()
}

/// Context, the tracer group imported (from a dup of its fd, queried before activation) and
/// activated on the GPU: (context, device, group, dup fd, import, size).
fn imported(
    f: &Fixture,
) -> (ze_context_handle_t, ze_device_handle_t, zet_metric_group_handle_t, i32, *mut core::ffi::c_void, usize) {
    let d = f.gpu();
    let g = f.raw.tracer_group(d).unwrap();
    let e = f.raw.group(g).unwrap().export;
    assert!(e.fd >= 0 && e.size > 0, "export before activation: fd {} size {}", e.fd, e.size);
    let c = f.raw.context(f.drv).unwrap();
    let dup = common::dup(e.fd);
    let p = f.raw.import(c, d, dup, e.size).unwrap();
    f.raw.activate(c, d, &[g]).unwrap();
    (c, d, g, dup, p, e.size)
}

#[test]
fn the_whole_order_gives_the_entries_the_workload_wrote_and_a_clean_report() {
    let f = fixture(|_| {});
    let (c, d, g, dup, p, size) = imported(&f);
    let pool = f.raw.event_pool(c, ZE_EVENT_POOL_FLAG_HOST_VISIBLE).unwrap();
    let ev = f.raw.event(pool).unwrap();
    let (t, notify) = f.raw.tracer_create(c, d, &[g], 4000, ev).unwrap();
    assert_eq!(notify, 4000usize.div_ceil(32) as u32 * 32, "rounded up to whole records");
    assert_eq!(f.raw.tracer_read_into(t, 1024), (ZE_RESULT_NOT_READY, Vec::new()), "created disabled");
    f.raw.tracer_enable(t, true).unwrap();
    assert_eq!(f.raw.wait(ev, 2_000_000_000), ZE_RESULT_SUCCESS, "notified once {notify} bytes wait");
    let (r, raw) = f.raw.tracer_read(t).unwrap();
    assert_eq!(r, ZE_RESULT_SUCCESS);
    assert!(raw.len() >= notify as usize, "{} bytes after the notification", raw.len());
    let dec = f.raw.decoder_create(t).unwrap();
    let decodable = f.raw.decodable(dec).unwrap();
    assert_eq!(decodable.len(), 4);
    let own = f.raw.metrics(g).unwrap();
    assert!(decodable.iter().all(|m| !own.contains(m)), "decodable handles are distinct from the group's");
    let types: Vec<(String, u32)> =
        decodable.iter().map(|&m| f.raw.metric(m).map(|(n, ty, _)| (n, ty)).unwrap()).collect();
    assert_eq!(
        types,
        [
            ("KernelStart".into(), ZET_METRIC_TYPE_EVENT_EXP_START),
            ("KernelBytes".into(), ZET_METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE),
            ("KernelMarker".into(), ZET_METRIC_TYPE_EVENT_EXP_TIMESTAMP),
            ("KernelEnd".into(), ZET_METRIC_TYPE_EVENT_EXP_END),
        ]
    );
    let got = f.raw.decode(dec, &raw, &decodable).unwrap();
    assert_eq!((got.sets, got.per_set.clone()), (1, vec![got.entries.len() as u32]));
    let (seed, signals) = (1, kernel_trace_signals());
    let mut checked = check_entries(&raw, &got.entries, &f.sim.trace_events("KernelTrace"), seed, &signals);
    // An application reading the exported memory finds the same events (the ring's documented bytes).
    let mapped = common::tracer::events_in_mapping(dup, size);
    assert!(ring::parse(&raw).unwrap().iter().all(|r| mapped.contains(r)), "the records are in the exported ring");
    f.raw.tracer_disable(t, true).unwrap();
    // Disabled: what was collected drains, then NOT_READY with size 0.
    drain(&f, t, 1 << 20, |raw| {
        assert!(!raw.is_empty(), "a successful read of a disabled tracer has data");
        let got = f.raw.decode(dec, raw, &decodable).unwrap();
        checked += check_entries(raw, &got.entries, &f.sim.trace_events("KernelTrace"), seed, &signals);
    });
    assert!(checked > notify as usize / 32, "{checked} entries checked");
    f.raw.decoder_destroy(dec).unwrap();
    f.raw.tracer_destroy(t).unwrap();
    f.raw.destroy_event(ev).unwrap();
    f.raw.destroy_pool(pool).unwrap();
    f.raw.free(c, p).unwrap();
    common::close(dup);
    f.raw.activate(c, d, &[]).unwrap();
    f.raw.device_exp(f.drv, zetDeviceDisableMetricsExp_NAME, d).unwrap();
    f.raw.destroy_context(c).unwrap();
    let r = f.sim.report();
    assert!(r.is_clean(), "{r:?}");
}

/// How long a test waits for the driver's workload, which a loaded machine may starve.
const DEADLINE: Duration = Duration::from_secs(20);

/// Waits (within [`DEADLINE`]) until the driver has written `n` more snapshots: ticks that have
/// passed on the driver, not time slept here.
fn wait_ticks(f: &Fixture, n: u64) {
    let start = f.sim.snapshots_written();
    let deadline = std::time::Instant::now() + DEADLINE;
    while f.sim.snapshots_written() < start + n {
        assert!(std::time::Instant::now() < deadline, "{n} ticks did not pass within {DEADLINE:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Reads a disabled tracer until NOT_READY (with size 0), giving each successful read's bytes
/// to `each`; fails if it has not drained within [`DEADLINE`].
fn drain(f: &Fixture, t: zet_metric_tracer_exp_handle_t, size: usize, mut each: impl FnMut(&[u8])) {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let (r, raw) = f.raw.tracer_read_into(t, size);
        if r == ZE_RESULT_NOT_READY {
            assert!(raw.is_empty(), "NOT_READY with {} bytes", raw.len());
            return;
        }
        assert_eq!(r, ZE_RESULT_SUCCESS);
        each(&raw);
        assert!(std::time::Instant::now() < deadline, "a disabled tracer still reads data after {DEADLINE:?}");
    }
}

/// A tracer enabled long enough to have collected `min` events, with its decoder.
fn collecting(
    f: &Fixture,
    min: usize,
) -> (ze_context_handle_t, zet_metric_tracer_exp_handle_t, zet_metric_decoder_exp_handle_t, Vec<zet_metric_handle_t>) {
    let d = f.gpu();
    let g = f.raw.tracer_group(d).unwrap();
    let c = f.raw.context(f.drv).unwrap();
    f.raw.activate(c, d, &[g]).unwrap();
    let (t, _) = f.raw.tracer_create(c, d, &[g], 0, std::ptr::null_mut()).unwrap();
    // Written before the enable: not collected. The enable is synchronous: every event written
    // after it is (the driver refuses the size query, so the ring is watched instead).
    let before = f.sim.trace_events("KernelTrace").last().map(|e| e.seq);
    f.raw.tracer_enable(t, true).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while f.sim.trace_events("KernelTrace").iter().filter(|e| before.is_none_or(|b| e.seq > b)).count() < min {
        assert!(std::time::Instant::now() < deadline, "{min} events were not written within 10 s");
        std::thread::sleep(Duration::from_millis(1));
    }
    let dec = f.raw.decoder_create(t).unwrap();
    let decodable = f.raw.decodable(dec).unwrap();
    (c, t, dec, decodable)
}

fn finish(
    f: &Fixture,
    c: ze_context_handle_t,
    t: zet_metric_tracer_exp_handle_t,
    dec: zet_metric_decoder_exp_handle_t,
) {
    f.raw.tracer_disable(t, true).unwrap();
    f.raw.decoder_destroy(dec).unwrap();
    f.raw.tracer_destroy(t).unwrap();
    f.clean_teardown(c, f.gpu());
}

#[test]
fn a_subset_of_decodable_metrics_decodes_only_those_at_their_indices() {
    let f = fixture(|_| {});
    let (c, t, dec, decodable) = collecting(&f, 40);
    let (_, raw) = f.raw.tracer_read(t).unwrap();
    let records = ring::parse(&raw).unwrap();
    // KernelEnd first, then KernelStart; null handles (as the conformance suite pads) ask for nothing.
    let asked = [decodable[3], decodable[0], std::ptr::null_mut(), std::ptr::null_mut()];
    let got = f.raw.decode(dec, &raw, &asked).unwrap();
    let want: Vec<(u32, u64, u64)> = records
        .iter()
        .filter_map(|r| match r.metric {
            3 => Some((0, r.value, r.timestamp_ns)),
            0 => Some((1, r.value, r.timestamp_ns)),
            _ => None,
        })
        .collect();
    // SAFETY: plain data; ui64 covers the union.
    let seen: Vec<(u32, u64, u64)> =
        got.entries.iter().map(|e| (e.metricIndex, unsafe { e.value.ui64 }, e.timeStamp)).collect();
    assert_eq!(seen, want);
    assert!(seen.iter().any(|s| s.0 == 0) && seen.iter().any(|s| s.0 == 1));
    // A group's own metric handle is not a decodable metric.
    let own = f.raw.metrics(f.raw.tracer_group(f.gpu()).unwrap()).unwrap();
    assert_eq!(f.raw.decode(dec, &raw, &[own[0]]).err(), Some(ZE_RESULT_ERROR_INVALID_ARGUMENT));
    finish(&f, c, t, dec);
    assert!(f.sim.report().is_clean());
}

#[test]
fn short_buffers_partial_decodes_and_foreign_bytes() {
    let f = fixture(|_| {});
    let (c, t, dec, decodable) = collecting(&f, 16);
    assert_eq!(f.raw.tracer_read_into(t, 31).0, ZE_RESULT_ERROR_INVALID_SIZE, "less than one record");
    let (r, raw) = f.raw.tracer_read_into(t, 8 * 32 + 7);
    assert_eq!((r, raw.len()), (ZE_RESULT_SUCCESS, 8 * 32), "whole records only");
    let fill = zet_metric_entry_exp_t { metricIndex: 0xbeef, ..Default::default() };
    let o = f.raw.decode_once(dec, &raw[..], &decodable[..4], 3, 0, fill);
    assert_eq!(
        (o.result, o.count, o.size),
        (ZE_RESULT_SUCCESS, 3, 3 * 32),
        "three entries from the first three records"
    );
    let entries = o.entries;
    assert!(entries[3..].iter().all(|e| e.metricIndex == 0xbeef), "nothing written past the count");
    let mut torn = raw.clone();
    torn.pop();
    assert_eq!(f.raw.decode(dec, &torn, &decodable).err(), Some(ZE_RESULT_ERROR_INVALID_SIZE));
    let mut foreign = raw.clone();
    foreign[28] ^= 0x40; // the first record's tag: another group's data
    assert_eq!(f.raw.decode(dec, &foreign, &decodable).err(), Some(ZE_RESULT_ERROR_INVALID_ARGUMENT));
    finish(&f, c, t, dec);
    assert!(f.sim.report().is_clean());
}

#[test]
fn a_device_with_two_sub_devices_decodes_one_set_per_sub_device() {
    let f = fixture(|cfg| {
        let trace = cfg.devices[0].groups.iter().find(|g| g.tracer).unwrap().clone();
        let tile = |name: &str| DeviceConfig {
            name: name.into(),
            groups: Vec::new(),
            ..cfg.devices[0].sub_devices[0].clone()
        };
        cfg.devices = vec![DeviceConfig {
            groups: vec![trace],
            sub_devices: vec![tile("tile 0"), tile("tile 1")],
            ..cfg.devices[0].clone()
        }];
    });
    let (c, t, dec, decodable) = collecting(&f, 40);
    let (_, raw) = f.raw.tracer_read(t).unwrap();
    let got = f.raw.decode(dec, &raw, &decodable).unwrap();
    assert_eq!(got.sets, 2);
    let (a, b) = got.entries.split_at(got.per_set[0] as usize);
    assert!(!a.is_empty() && !b.is_empty(), "kernels alternate between the tiles: {:?}", got.per_set);
    assert!(a.iter().all(|e| e.onSubdevice == 1 && e.subdeviceId == 0));
    assert!(b.iter().all(|e| e.onSubdevice == 1 && e.subdeviceId == 1));
    assert!(a.windows(2).chain(b.windows(2)).all(|w| w[1].timeStamp >= w[0].timeStamp), "each set in raw order");
    // A short buffer takes the first entries in raw order, still set after set.
    let records: Vec<ring::TraceEvent> =
        raw.chunks_exact(32).map(|c| ring::TraceEvent::from_bytes(c.try_into().unwrap())).collect();
    let take = records.len() / 2 + 1;
    let o = f.raw.decode_once(dec, &raw, &decodable, take, 2, zet_metric_entry_exp_t::default());
    assert_eq!((o.result, o.count, o.size), (ZE_RESULT_SUCCESS, take as u32, take * 32), "the first {take} records");
    let (entries, per_set) = (&o.entries[..take], o.per_set);
    let first = &records[..take];
    let want: Vec<(u32, u64, u64)> = [0u16, 1]
        .iter()
        .flat_map(|&s| first.iter().filter(move |e| e.sub_device == s))
        .map(|e| (u32::from(e.sub_device), e.timestamp_ns, e.value))
        .collect();
    // SAFETY: the values are u64 (every metric of KernelTrace).
    let got: Vec<(u32, u64, u64)> =
        entries.iter().map(|e| (e.subdeviceId, e.timeStamp, unsafe { e.value.ui64 })).collect();
    assert_eq!(got, want, "set 0's share of the first {take} records, then set 1's");
    assert_eq!(per_set.iter().sum::<u32>(), take as u32);
    assert_eq!(per_set[0] as usize, first.iter().filter(|e| e.sub_device == 0).count());
    finish(&f, c, t, dec);
    assert!(f.sim.report().is_clean());
}

#[test]
fn asynchronous_enable_and_disable_take_effect_a_tick_later() {
    let f = fixture(|c| c.update_period_us = 30_000);
    let d = f.gpu();
    let g = f.raw.tracer_group(d).unwrap();
    let c = f.raw.context(f.drv).unwrap();
    f.raw.activate(c, d, &[g]).unwrap();
    let (t, _) = f.raw.tracer_create(c, d, &[g], 0, std::ptr::null_mut()).unwrap();
    f.raw.tracer_enable(t, false).unwrap();
    assert_eq!(f.raw.tracer_read_into(t, 1 << 16).0, ZE_RESULT_NOT_READY, "not enabled yet");
    // Two ticks later (counted on the driver, not slept for): the enable has taken effect.
    wait_ticks(&f, 2);
    let (r, first) = f.raw.tracer_read_into(t, 1 << 16);
    assert_eq!(r, ZE_RESULT_SUCCESS, "enabled a tick later");
    f.raw.tracer_disable(t, false).unwrap();
    let (r, second) = f.raw.tracer_read_into(t, 1 << 16);
    assert_eq!(r, ZE_RESULT_SUCCESS, "still collecting until the tick ends");
    wait_ticks(&f, 2);
    let mut drained = first.len() + second.len();
    drain(&f, t, 1 << 16, |raw| drained += raw.len());
    // Disabled two ticks ago: nothing more is collected.
    wait_ticks(&f, 2);
    assert_eq!(f.raw.tracer_read_into(t, 1 << 16).0, ZE_RESULT_NOT_READY, "disabled: nothing new");
    assert!(drained > 0, "events of the enabled ticks were read");
    f.raw.tracer_destroy(t).unwrap();
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

#[test]
fn a_tracer_that_falls_behind_loses_the_oldest_and_says_so_once() {
    let f = fixture(|c| {
        c.update_period_us = 5000;
        c.tracer_ring_events = 64;
        c.tracer_events_per_tick = 64;
    });
    let d = f.gpu();
    let g = f.raw.tracer_group(d).unwrap();
    let c = f.raw.context(f.drv).unwrap();
    f.raw.activate(c, d, &[g]).unwrap();
    let (t, _) = f.raw.tracer_create(c, d, &[g], 0, std::ptr::null_mut()).unwrap();
    f.raw.tracer_enable(t, true).unwrap();
    wait_ticks(&f, 3); // 3 ticks of 64 events into 64 slots
    let (r, raw) = f.raw.tracer_read_into(t, 1 << 16);
    assert_eq!(r, ZE_RESULT_WARNING_DROPPED_DATA);
    assert!(raw.len() <= 64 * 32 && !raw.is_empty(), "{} bytes", raw.len());
    f.raw.tracer_disable(t, true).unwrap();
    let (r, _) = f.raw.tracer_read_into(t, 1 << 16);
    assert!(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_NOT_READY, "the warning is given once: {r:#x}");
    f.raw.tracer_destroy(t).unwrap();
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean());
}

/// The events the workload writes with `seed`, `per_tick` per tick: the first `n` (after
/// activating the tracer group for long enough).
fn first_events(seed: u64, per_tick: u32, n: usize) -> Vec<ring::TraceEvent> {
    let f = fixture(|c| {
        c.seed = seed;
        c.tracer_events_per_tick = per_tick;
    });
    let d = f.gpu();
    let g = f.raw.tracer_group(d).unwrap();
    let c = f.raw.context(f.drv).unwrap();
    f.raw.activate(c, d, &[g]).unwrap();
    let deadline = std::time::Instant::now() + DEADLINE;
    let mut events = f.sim.trace_events("KernelTrace");
    while events.len() < n && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
        events = f.sim.trace_events("KernelTrace");
    }
    f.clean_teardown(c, d);
    assert!(events.len() >= n && events[0].seq == 0, "{} events", events.len());
    assert_eq!(events.len() % per_tick as usize, 0, "{per_tick} events per tick");
    events.truncate(n);
    events
}

#[test]
fn the_same_seed_writes_the_same_events_at_the_rate_asked() {
    let key = |e: &ring::TraceEvent| (e.seq, e.metric, e.sub_device, e.value);
    let a: Vec<_> = first_events(7, 8, 64).iter().map(key).collect();
    let b: Vec<_> = first_events(7, 5, 64).iter().map(key).collect();
    let other: Vec<_> = first_events(8, 8, 64).iter().map(key).collect();
    assert_eq!(a, b, "the rate changes when events come, not what they are");
    assert_ne!(a, other, "another seed writes other values");
    let signals = kernel_trace_signals();
    assert!(a.iter().all(|&(n, m, s, v)| (m, s, v) == ring::expected(7, 5, &signals, 1, n)), "the documented events");
}

#[test]
fn a_decoder_may_outlive_its_tracer_and_go_while_it_is_enabled() {
    // The header orders nothing between a tracer and its decoders: Intel's conformance suite
    // destroys the tracer first and decodes afterwards; either order is clean.
    let f = fixture(|_| {});
    let (c, t, dec, decodable) = collecting(&f, 8);
    let (_, raw) = f.raw.tracer_read(t).unwrap();
    f.raw.tracer_disable(t, true).unwrap();
    f.raw.tracer_destroy(t).unwrap();
    let got = f.raw.decode(dec, &raw, &decodable).unwrap();
    assert_eq!(got.entries.len(), raw.len() / 32, "the decoder decodes after its tracer is gone");
    assert_eq!(f.raw.decodable(dec).unwrap(), decodable);
    f.raw.decoder_destroy(dec).unwrap();
    // A decoder destroyed while its tracer is enabled.
    let g = f.raw.tracer_group(f.gpu()).unwrap();
    let (t, _) = f.raw.tracer_create(c, f.gpu(), &[g], 0, std::ptr::null_mut()).unwrap();
    f.raw.tracer_enable(t, true).unwrap();
    let dec = f.raw.decoder_create(t).unwrap();
    f.raw.decoder_destroy(dec).unwrap();
    f.raw.tracer_disable(t, true).unwrap();
    f.raw.tracer_destroy(t).unwrap();
    f.clean_teardown(c, f.gpu());
    let r = f.sim.report();
    assert!(r.is_clean(), "{r:?}");
}

#[test]
fn with_no_events_asked_an_enabled_tracer_reads_nothing() {
    let f = fixture(|c| c.tracer_events_per_tick = 0);
    let (c, t, dec, _) = collecting(&f, 0);
    wait_ticks(&f, 3);
    assert_eq!(f.raw.tracer_read_into(t, 4096), (ZE_RESULT_SUCCESS, Vec::new()), "enabled: success, no data");
    finish(&f, c, t, dec);
    assert!(f.sim.report().is_clean());
}
