//! Every read path in one run: a group read by the streamer, one by the metric tracer, one
//! through its exported memory, and the device's telemetry, on one device. The streams come in
//! the target's order with the telemetry last, each read by its own path; every stream gives
//! samples; the one teardown releases every path's objects before the imports and the imports
//! before the groups, which the simulated driver checks (any other order is a violation).

use std::collections::BTreeSet;
use std::time::Duration;

use zescope_sampler::testing::*;
use zescope_sampler::{Command, DevicePath, Event, ReadPath, RunConfig, Target, Via};

#[test]
fn every_path_reads_its_streams_in_one_run_and_the_teardown_releases_them_in_order() {
    let sim = sim(|_| {});
    let h = sampler_on(&sim);
    let groups = ["RenderBasic", "KernelTrace", "ComputeBasic"].map(String::from).to_vec();
    let cfg = RunConfig {
        targets: vec![Target::new(DevicePath::default(), groups)],
        interval: Duration::from_millis(5),
        via: Via::Auto,
        telemetry: true,
    };
    h.send(Command::Start(cfg));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    let read: Vec<(&str, ReadPath)> = info.streams.iter().map(|s| (s.group.as_str(), s.read_path)).collect();
    assert_eq!(
        read,
        [
            ("RenderBasic", ReadPath::Streamer),
            ("KernelTrace", ReadPath::Tracer),
            ("ComputeBasic", ReadPath::Mapped),
            ("Telemetry", ReadPath::Sysman),
        ],
        "the target's order, the device's own stream last"
    );
    assert!(info.streams.iter().enumerate().all(|(i, s)| s.index == i));
    assert_eq!(info.imports, 2, "the traced group's memory and the exported group's");
    let mut seen = BTreeSet::new();
    wait_for(&h, Duration::from_secs(20), |e| {
        if let Event::Samples(b) = e
            && !b.timestamps.is_empty()
        {
            seen.insert(b.stream);
        }
        (seen.len() == info.streams.len()).then_some(())
    });
    h.send(Command::Stop);
    wait_for(&h, T, |e| matches!(e, Event::RunStopped { .. }).then_some(()));
    assert_eq!(sim.live_imports(), 0);
    let r = sim.report();
    assert!(r.is_clean(), "every path released in the documented order: {r:?}");
    shut_down(&h);
}
