//! A panic inside the sampler thread, in the middle of a run that holds imports and mappings,
//! ends the run through the one teardown: the simulated driver sees no rule broken and nothing
//! left behind, the user gets an error, and the sampler keeps serving (a new run starts and the
//! final shutdown is clean). The panic comes from the test-only hook `Options::panic_after_reads`.

use std::time::Duration;

use zescope_sampler::testing::*;
use zescope_sampler::{Command, ErrorKind, Event, Options, StopReason};

#[test]
fn a_panic_mid_run_goes_through_the_teardown() {
    let sim = sim(|_| {});
    let h = sampler_with(&sim, Options { panic_after_reads: Some(50), ..Options::default() });
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    wait_for(&h, T, |e| matches!(e, Event::RunStarted(_)).then_some(()));
    let mut samples = 0;
    let mut error = None;
    let reason = wait_for(&h, T, |e| match e {
        Event::Samples(b) => {
            samples += b.timestamps.len();
            None
        }
        Event::Error(err) => {
            error = Some(err.clone());
            None
        }
        Event::RunStopped { reason, .. } => Some(reason.clone()),
        _ => None,
    });
    assert_eq!(reason, StopReason::Error);
    assert!(samples > 0, "the run read before the panic");
    // The error follows the stop.
    let err =
        error.unwrap_or_else(|| wait_for(&h, T, |e| if let Event::Error(err) = e { Some(err.clone()) } else { None }));
    assert_eq!(err.kind, ErrorKind::Internal, "{err:?}");
    assert!(err.message.contains("internal error"), "{err:?}");
    let r = sim.report();
    assert!(r.is_clean(), "after the panic's teardown:\n{}", r.to_ron());

    // The sampler still works: a new run starts, delivers and ends cleanly.
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    collect_samples(&h, 20);
    shut_down(&h);
    // The teardown is done before ShutDown is sent; the thread's last drops follow it.
    let deadline = std::time::Instant::now() + T;
    while !sim.report().is_clean() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let r = sim.report();
    assert!(r.is_clean(), "after shutdown:\n{}", r.to_ron());
}

/// A panic part way through freeing a run's imports (after the first, before the second) leaves
/// the import not yet freed tracked: nothing is deactivated, disabled or destroyed under it, and
/// the next start frees it and tears the rest down in order.
#[test]
fn a_panic_part_way_through_the_frees_keeps_the_rest_until_a_retry() {
    let sim = sim(|_| {});
    let h = sampler_with(&sim, Options { panic_before_free: Some(1), ..Options::default() });
    h.send(Command::Start(run_config(&["ComputeBasic", "MemoryTraffic"])));
    let info = wait_for(&h, T, |e| if let Event::RunStarted(i) = e { Some(i.clone()) } else { None });
    assert_eq!(info.streams.len(), 2);
    assert_eq!(sim.live_imports(), 2, "two buffers, two imports");
    collect_samples(&h, 10);
    h.send(Command::Stop);
    let events = sync(&h, 1);
    let messages: Vec<&str> =
        events.iter().filter_map(|e| if let Event::Error(e) = e { Some(e.message.as_str()) } else { None }).collect();
    assert!(messages.iter().any(|m| m.contains("interrupted freeing")), "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("stay active")), "{messages:?}");
    assert_eq!(sim.live_imports(), 1, "the import not yet freed when the panic hit is still there");
    let r = sim.report();
    assert!(r.violations.is_empty(), "nothing torn down under it: {}", r.to_ron());
    // The next start retries: the import is freed, the groups deactivated, and the run starts.
    h.send(Command::Start(run_config(&["ComputeBasic"])));
    started_and_sampled(&h);
    shut_down(&h);
    let r = sim.report();
    assert!(r.is_clean(), "{}", r.to_ron());
}

fn started_and_sampled(h: &zescope_sampler::SamplerHandle) {
    wait_for(h, T, |e| matches!(e, Event::RunStarted(_)).then_some(()));
    collect_samples(h, 10);
}
