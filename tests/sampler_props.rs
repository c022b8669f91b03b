//! Property test: random sequences of start / stop / switch group / switch device / pause /
//! resume / interval change / refresh / injected faults and quirks / shutdown — with groups
//! read from exported memory and with the time-based streamer (`via` auto, export or streamer),
//! and the streamer's faults (open refused or denied, reads failing, device lost mid-stream) — against the
//! in-process simulated driver — a quarter of them on a driver that leaves every optional entry
//! point empty — leave zero violations and zero leaks in its report.
//!
//! 10,000 sequences by default (`ZESCOPE_PROP_CASES` overrides). A failing case is shrunk and its
//! seed saved by proptest in `tests/sampler_props.proptest-regressions`, which is replayed first
//! on every later run.

mod support;

use std::time::Duration;

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use support::*;
use ze_sim::config::{FreeFault, ImportFd, SimConfig};
use zescope::sampler::{Command, DevicePath, Event, RunConfig, Target, Via};

#[derive(Debug, Clone, Copy)]
enum Fault {
    FdMinusOne,
    SizeZero,
    Oversized,
    ImportFails,
    PropertiesFail,
    DeviceLost,
    DisableRefused,
    OverwritePnext,
    InvalidArgument,
    ImportClosedByImport,
    ImportClosedAtFree,
    Unmappable,
    FreeFailsOnce,
    FreeFailsAlways,
    ExportOnlyWhileActive,
    NarrowClock,
    ClockReset,
    SizesDiffer,
    ShrinkingExport,
    StreamerBusy,
    StreamerDenied,
    StreamerReadFails,
    StreamerDeviceLost,
}

#[derive(Debug, Clone)]
enum Op {
    Start { device: usize, groups: u8, metrics: u8, custom: bool, via: Via },
    Stop,
    Pause,
    Resume,
    Interval(u64),
    Refresh,
    Wait(u64),
    Fault(Fault),
    ClearFaults,
    Shutdown,
}

/// (path, groups) of the default simulated devices.
fn device(i: usize) -> (DevicePath, &'static [&'static str]) {
    match i {
        0 => (
            DevicePath { driver: 0, device: 0, sub_device: None },
            &["ComputeBasic", "MemoryTraffic", "EuStallSampling", "RenderBasic"],
        ),
        1 => (DevicePath { driver: 0, device: 0, sub_device: Some(0) }, &["ComputeBasic"]),
        _ => (DevicePath { driver: 0, device: 1, sub_device: None }, &["NpuActivity", "NocTraffic"]),
    }
}

const METRICS: [&str; 10] = [
    "GpuTime",
    "GpuPower",
    "GpuFrequency",
    "BytesRead",
    "MemoryTemperature",
    "Inferences",
    "NpuPower",
    "RenderUtilization",
    "NocBytesRead",
    "Bogus",
];

fn op() -> impl Strategy<Value = Op> {
    let fault = prop_oneof![
        Just(Fault::FdMinusOne),
        Just(Fault::SizeZero),
        Just(Fault::Oversized),
        Just(Fault::ImportFails),
        Just(Fault::PropertiesFail),
        Just(Fault::DeviceLost),
        Just(Fault::DisableRefused),
        Just(Fault::OverwritePnext),
        Just(Fault::InvalidArgument),
        Just(Fault::ImportClosedByImport),
        Just(Fault::ImportClosedAtFree),
        Just(Fault::Unmappable),
        Just(Fault::FreeFailsOnce),
        Just(Fault::FreeFailsAlways),
        Just(Fault::ExportOnlyWhileActive),
        Just(Fault::NarrowClock),
        Just(Fault::ClockReset),
        Just(Fault::SizesDiffer),
        Just(Fault::ShrinkingExport),
        Just(Fault::StreamerBusy),
        Just(Fault::StreamerDenied),
        Just(Fault::StreamerReadFails),
        Just(Fault::StreamerDeviceLost),
    ];
    let via = prop_oneof![2 => Just(Via::Auto), 1 => Just(Via::Export), 1 => Just(Via::Streamer)];
    prop_oneof![
        6 => (0..3usize, 1..16u8, prop_oneof![3 => Just(0u8), 1 => 1..4u8], prop::bool::weighted(0.25), via)
            .prop_map(|(device, groups, metrics, custom, via)| Op::Start { device, groups, metrics, custom, via }),
        3 => Just(Op::Stop),
        1 => Just(Op::Pause),
        1 => Just(Op::Resume),
        1 => (100..20_000u64).prop_map(Op::Interval),
        1 => Just(Op::Refresh),
        2 => (0..12u64).prop_map(Op::Wait),
        3 => fault.prop_map(Op::Fault),
        1 => Just(Op::ClearFaults),
        1 => Just(Op::Shutdown),
    ]
}

fn apply(sim: &ze_sim::Sim, f: Fault) {
    sim.configure(|x, q| match f {
        Fault::FdMinusOne => x.export_fd_minus_one = true,
        Fault::SizeZero => x.export_size_zero = true,
        Fault::Oversized => x.export_size_oversized = true,
        Fault::ImportFails => x.import_fails = true,
        Fault::PropertiesFail => x.group_properties_fail = true,
        Fault::DeviceLost => x.device_lost_after_samples = Some(3),
        Fault::DisableRefused => x.disable_refused = true,
        Fault::OverwritePnext => q.overwrite_pnext = true,
        Fault::InvalidArgument => q.invalid_argument_on_unknown_chain = true,
        Fault::ImportClosedByImport => q.import_fd = ImportFd::ClosedByImport,
        Fault::ImportClosedAtFree => q.import_fd = ImportFd::ClosedAtFree,
        Fault::Unmappable => q.unmappable_export = true,
        Fault::FreeFailsOnce => x.mem_free_fails = Some(FreeFault::Once),
        Fault::FreeFailsAlways => x.mem_free_fails = Some(FreeFault::Always),
        Fault::ExportOnlyWhileActive => q.export_only_while_active = true,
        Fault::NarrowClock => q.timestamp_valid_bits = Some(24),
        Fault::ClockReset => x.timestamp_reset_after_samples = Some(5),
        Fault::SizesDiffer => q.per_metric_sizes_differ = true,
        Fault::ShrinkingExport => {
            q.unsealed_export = true;
            x.shrink_export_after_samples = Some(20);
        }
        Fault::StreamerBusy => x.streamer_open_busy = true,
        Fault::StreamerDenied => x.streamer_open_denied = true,
        Fault::StreamerReadFails => x.streamer_read_fails_after = Some(2),
        Fault::StreamerDeviceLost => x.device_lost_after_reports = Some(30),
    });
}

fn clear(sim: &ze_sim::Sim) {
    sim.configure(|f, q| {
        *f = Default::default();
        *q = Default::default();
    });
    sim.recover_device();
}

/// Runs started and samples received over the sequences of one runner (coverage check): each
/// runner counts its own, so tests running side by side cannot lend each other runs.
#[derive(Default)]
struct Counts {
    started: AtomicU64,
    /// Runs that read at least one group with the time-based streamer.
    streamed: AtomicU64,
    samples: AtomicU64,
}

fn run_sequence(empty_optional: bool, ops: &[Op], counts: &Counts) -> Result<(), TestCaseError> {
    let sim = sim(|c| {
        c.update_period_us = 250;
        if empty_optional {
            c.empty_entry_points = SimConfig::optional_entry_points().iter().map(|s| s.to_string()).collect();
        }
    });
    let h = sampler_on(&sim);
    let mut n = 0;
    for op in ops {
        match op {
            Op::Start { device: d, groups, metrics, custom, via } => {
                let (path, names) = device(*d);
                let groups: Vec<String> = names
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| groups & (1 << i) != 0)
                    .map(|(_, g)| g.to_string())
                    .collect();
                let metrics: Vec<String> =
                    (0..*metrics as usize).map(|i| METRICS[(i * 3 + *d) % METRICS.len()].to_string()).collect();
                h.send(Command::Start(RunConfig {
                    targets: vec![Target { device: path, groups, metrics, custom_group: *custom }],
                    interval: Duration::from_micros(200),
                    via: *via,
                    telemetry: false,
                }));
            }
            Op::Stop => h.send(Command::Stop),
            Op::Pause => h.send(Command::Pause),
            Op::Resume => h.send(Command::Resume),
            Op::Interval(us) => h.send(Command::SetInterval(Duration::from_micros(*us))),
            Op::Refresh => h.send(Command::Refresh),
            Op::Wait(ms) => std::thread::sleep(Duration::from_millis(*ms)),
            Op::Fault(f) => apply(&sim, *f),
            Op::ClearFaults => clear(&sim),
            Op::Shutdown => break,
        }
        n += 1;
        let events = sync(&h, n);
        counts.started.fetch_add(events.iter().filter(|e| matches!(e, Event::RunStarted(_))).count() as u64, Relaxed);
        counts.streamed.fetch_add(
            events
                .iter()
                .filter(|e| matches!(e, Event::RunStarted(i) if i.streams.iter().any(|s| s.read_path == "streamer")))
                .count() as u64,
            Relaxed,
        );
        counts.samples.fetch_add(
            events.iter().map(|e| if let Event::Samples(b) = e { b.timestamps.len() as u64 } else { 0 }).sum(),
            Relaxed,
        );
        // Mid-sequence, the driver may refuse things, but nothing zescope does may break a rule.
        let r = sim.report();
        prop_assert!(r.violations.is_empty(), "violations after {op:?}: {:#?}", r.violations);
    }
    // The user fixes whatever was injected, then quits: everything must be released.
    clear(&sim);
    h.send(Command::Shutdown);
    wait_for(&h, Duration::from_secs(10), |e| matches!(e, Event::ShutDown).then_some(()));
    let r = sim.report();
    prop_assert!(r.is_clean(), "after {ops:?}:\n{}", r.to_ron());
    Ok(())
}

fn cases() -> u32 {
    std::env::var("ZESCOPE_PROP_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), max_shrink_iters: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_leave_no_violation_and_no_leak(
        empty_optional in prop::bool::weighted(0.25),
        ops in proptest::collection::vec(op(), 1..10),
    ) {
        run_sequence(empty_optional, &ops, &Counts::default())?;
    }
}

/// Guards the property above against becoming vacuous: with a fixed seed, a good share of the
/// random starts must really run and deliver samples.
#[test]
fn random_sequences_really_start_runs() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 300, ..Config::default() },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let counts = Counts::default();
    let starts = AtomicU64::new(0);
    runner
        .run(&(prop::bool::weighted(0.25), proptest::collection::vec(op(), 1..10)), |(empty, ops)| {
            starts.fetch_add(ops.iter().filter(|o| matches!(o, Op::Start { .. })).count() as u64, Relaxed);
            run_sequence(empty, &ops, &counts)
        })
        .unwrap();
    let starts = starts.load(Relaxed);
    let started = counts.started.load(Relaxed);
    let samples = counts.samples.load(Relaxed);
    // Many random starts fail by design (injected faults, a lost device, a stop or another start
    // right behind them); counted over this runner alone about a fifth of them run (103 of 460
    // when this was written). A vacuous property (no run ever starting) fails by far.
    assert!(started * 8 >= starts, "only {started} of {starts} random starts ran");
    assert!(samples > 150, "only {samples} samples over 300 sequences");
    let streamed = counts.streamed.load(Relaxed);
    assert!(streamed * 5 >= started, "only {streamed} of {started} runs read a group with the streamer");
}
