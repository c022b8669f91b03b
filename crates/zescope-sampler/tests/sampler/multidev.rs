//! Several devices in one run through the in-process simulated driver: the GPU and the NPU set
//! up together on the one sampler thread, read at each tick onto one host clock, torn down
//! together (every import of every device freed before any group is deactivated), and a setup
//! failure on one device failing the whole run with that device named.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ze_sim::config::FreeFault;
use zescope_sampler::testing::*;
use zescope_sampler::{Command, DevicePath, ErrorKind, Event, RunConfig, StopReason, Target, monotonic_ns};

const GPU: DevicePath = DevicePath { driver: 0, device: 0, sub_device: None };
const NPU: DevicePath = DevicePath { driver: 0, device: 1, sub_device: None };

fn gpu_and_npu(npu_groups: &[&str]) -> RunConfig {
    RunConfig {
        targets: vec![
            Target::new(GPU, vec!["ComputeBasic".into()]),
            Target::new(NPU, npu_groups.iter().map(|g| g.to_string()).collect()),
        ],
        interval: Duration::from_millis(1),
        via: Default::default(),
        telemetry: false,
    }
}

#[test]
fn gpu_and_npu_are_sampled_in_one_run_on_one_clock_and_torn_down_together() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    let before = monotonic_ns();
    h.send(Command::Start(gpu_and_npu(&["NpuActivity", "NocTraffic"])));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    assert_eq!(info.devices, ["ze-sim GPU", "ze-sim NPU"]);
    let streams: Vec<(usize, &str, &str, &str)> =
        info.streams.iter().map(|s| (s.target, s.device.as_str(), s.group.as_str(), s.read_path.name())).collect();
    assert_eq!(
        streams,
        [
            (0, "ze-sim GPU", "ComputeBasic", "mmap"),
            (1, "ze-sim NPU", "NpuActivity", "mmap"),
            (1, "ze-sim NPU", "NocTraffic", "streamer"),
        ]
    );
    assert!(info.streams.iter().enumerate().all(|(i, s)| s.index == i));
    assert_eq!((info.imports, sim.live_imports()), (2, 2), "one import per device's exported buffer");

    // About a second of samples: every stream of both devices delivers, all on the host clock.
    let mut per_stream: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
    let until = Instant::now() + Duration::from_secs(1);
    wait_for(&h, T, |e| {
        if let Event::Samples(b) = e {
            per_stream.entry(b.stream).or_default().extend(&b.timestamps);
        }
        (Instant::now() >= until).then_some(())
    });
    let after = monotonic_ns();
    assert_eq!(per_stream.keys().copied().collect::<Vec<_>>(), [0, 1, 2], "samples from every stream");
    for (s, ts) in &per_stream {
        assert!(ts.len() >= 20, "stream {s}: only {} samples in a second", ts.len());
        assert!(ts.windows(2).all(|w| w[0] < w[1]), "stream {s}: timestamps increase");
        // Device times are mapped onto the host clock by an anchor: within a few ms of when
        // they were read.
        let (first, last) = (ts[0], ts[ts.len() - 1]);
        let slack = 50_000_000;
        assert!(
            first > before - slack && last <= after + slack,
            "stream {s}: {first}..{last} not in {before}..{after}"
        );
    }
    // One time axis: the devices' samples interleave rather than sit in separate eras.
    let (gpu, npu) = (&per_stream[&0], &per_stream[&1]);
    assert!(gpu[0] < *npu.last().unwrap() && npu[0] < *gpu.last().unwrap(), "the devices' samples overlap in time");

    h.send(Command::Stop);
    let reason =
        wait_for(&h, T, |e| if let Event::RunStopped { reason, .. } = e { Some(reason.clone()) } else { None });
    assert_eq!(reason, StopReason::Requested);
    assert_eq!(sim.live_imports(), 0, "every import of both devices is freed");
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");
    shut_down(&h);
}

#[test]
fn a_device_that_fails_its_setup_fails_the_run_by_name_and_releases_the_others() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    h.send(Command::Start(gpu_and_npu(&["NoSuchGroup"])));
    let events = sync(&h, 1);
    assert!(!events.iter().any(|e| matches!(e, Event::RunStarted(_))), "{events:?}");
    let e = first_error(&events).expect("the failed start is reported");
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.starts_with("ze-sim NPU: ") && e.message.contains("NoSuchGroup"), "{e:?}");
    assert_eq!(sim.live_imports(), 0, "the GPU set up before it is torn down");
    let r = sim.report();
    assert!(r.is_clean(), "{r:?}");

    // The same sampler still starts both once the choice is valid.
    h.send(Command::Start(gpu_and_npu(&["NpuActivity"])));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    assert_eq!(info.streams.len(), 2);
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn a_device_named_twice_or_without_groups_is_refused_before_any_setup() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    let mut twice = gpu_and_npu(&["NpuActivity"]);
    twice.targets[1].device = GPU;
    h.send(Command::Start(twice));
    let e = first_error(&sync(&h, 1)).expect("refused");
    assert!(e.message.contains("named twice"), "{e:?}");
    h.send(Command::Start(gpu_and_npu(&[])));
    let e = first_error(&sync(&h, 2)).expect("refused");
    assert!(e.message.contains("no metric group chosen for device") && e.message.contains("device: 1"), "{e:?}");
    assert_eq!(sim.live_imports(), 0);
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn a_refused_free_on_one_device_keeps_every_device_active_until_the_retry() {
    let sim = sim(|c| c.faults.mem_free_fails = Some(FreeFault::Once));
    let h = sampler_on(&sim);
    h.send(Command::Start(gpu_and_npu(&["NpuActivity"])));
    wait_for(&h, T, |e| matches!(e, Event::RunStarted(_)).then_some(()));
    collect_samples(&h, 20);
    h.send(Command::Stop);
    let e = first_error(&sync(&h, 1)).expect("the refused free is reported");
    assert_eq!(e.kind, ErrorKind::Teardown);
    assert!(e.message.contains("ze-sim GPU: ") && e.message.contains("zeMemFree"), "names the device: {e:?}");
    // The GPU's import stays; the NPU's was freed, but no group of either device is deactivated
    // while any import of the run is alive.
    assert_eq!(sim.live_imports(), 1);
    let r = sim.report();
    assert!(r.violations.is_empty(), "{r:?}");
    let active: Vec<&str> =
        r.leaks.iter().filter(|l| l.kind == "group_left_activated").map(|l| l.message.as_str()).collect();
    assert!(
        active.iter().any(|m| m.contains("ComputeBasic")) && active.iter().any(|m| m.contains("NpuActivity")),
        "{r:?}"
    );
    // The next start frees it first, then releases both devices in order, and runs again.
    h.send(Command::Start(gpu_and_npu(&["NpuActivity"])));
    wait_for(&h, T, |e| matches!(e, Event::RunStarted(_)).then_some(()));
    shut_down(&h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// A device whose driver offers none of several telemetry pieces (the NPU: engines only) gets one
/// notice naming them all, not one warning each.
#[test]
fn the_telemetry_pieces_a_device_lacks_are_said_in_one_notice() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    let mut cfg = gpu_and_npu(&["NpuActivity"]);
    cfg.telemetry = true;
    h.send(Command::Start(cfg));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    let notices = info.notices;
    let absent: Vec<&String> = notices.iter().filter(|n| n.contains("the driver offers no")).collect();
    assert_eq!(
        absent.iter().map(|n| n.as_str()).collect::<Vec<_>>(),
        [
            "ze-sim NPU: telemetry: the driver offers no frequency domains, power domains, temperature sensors or memory modules"
        ],
        "{notices:?}"
    );
    h.send(Command::Stop);
    wait_for(&h, T, |e| matches!(e, Event::RunStopped { .. }).then_some(()));
    shut_down(&h);
}

/// A root device and its sub-device in one run, either order: every device's groups are
/// deactivated before metrics are disabled on any (the root's disable came while the tile's
/// group was still active, which the simulated driver refuses as a teardown-order violation).
#[test]
fn a_device_and_its_tile_are_torn_down_layer_by_layer() {
    const TILE: DevicePath = DevicePath { driver: 0, device: 0, sub_device: Some(0) };
    for order in [[GPU, TILE], [TILE, GPU]] {
        let sim = sim(|_| {});
        let h = sampler_on(&sim);
        let targets = order.iter().map(|&d| Target::new(d, vec!["ComputeBasic".into()])).collect();
        let cfg = RunConfig { targets, interval: Duration::from_millis(2), via: Default::default(), telemetry: false };
        h.send(Command::Start(cfg));
        let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
        assert_eq!(info.streams.len(), 2, "{order:?}");
        collect_samples(&h, 20);
        h.send(Command::Stop);
        let events = sync(&h, 1);
        assert!(events.iter().any(|e| matches!(e, Event::RunStopped { .. })), "{order:?}: {events:?}");
        assert_eq!(first_error(&events), None, "{order:?}: the teardown failed nothing");
        assert_eq!(sim.live_imports(), 0);
        let r = sim.report();
        assert!(r.is_clean(), "{order:?}: {r:?}");
        shut_down(&h);
    }
}
