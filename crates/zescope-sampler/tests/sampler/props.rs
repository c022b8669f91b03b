//! Property test: random sequences of start (a quarter of them with a second device: the NPU,
//! or a device and its tile) / stop / switch group / switch device / pause /
//! resume / interval change / refresh / injected faults and quirks, alone and in sets of two or
//! three switched on at once (`ze_sim::testing::faults`) / shutdown — with groups
//! read from exported memory, with the time-based streamer and with the metric tracer (`via`
//! auto, export, streamer or tracer), the streamer's faults (open refused or denied, reads
//! failing, device lost mid-stream), the tracer's (create, decoder create, enable, reads
//! failing), a failed group activation or metrics enable, and a munmap that fails once (the
//! sampler's test hook) — against the
//! in-process simulated driver — a quarter of them on a driver that leaves every optional entry
//! point empty, the others on one that leaves none, one or two of those that change zescope's
//! paths empty — leave zero violations and zero leaks in its report.
//!
//! 10,000 sequences by default (`ZESCOPE_PROP_CASES` overrides), in four tests of a quarter
//! each that run side by side. A failing case is shrunk and its seed saved by proptest in
//! `props.proptest-regressions` beside this file, which is replayed first on every later run.

use std::time::Duration;

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use ze_sim::config::SimConfig;
use ze_sim::testing::faults::{self, Fault};
use zescope_sampler::testing::*;
use zescope_sampler::{Command, DevicePath, Event, RunConfig, Target, Via};

#[derive(Debug, Clone)]
enum Op {
    Start {
        device: usize,
        groups: u8,
        metrics: u8,
        custom: bool,
        via: Via,
        /// A second device of the run (its first group), unless it is `device`.
        also: Option<usize>,
    },
    Stop,
    Pause,
    Resume,
    Interval(u64),
    Refresh,
    Wait(u64),
    Fault(Fault),
    /// Two or three faults switched on together.
    Faults(Vec<Fault>),
    ClearFaults,
    Shutdown,
}

/// (path, groups) of the default simulated devices.
fn device(i: usize) -> (DevicePath, &'static [&'static str]) {
    match i {
        0 => (
            DevicePath { driver: 0, device: 0, sub_device: None },
            &["ComputeBasic", "MemoryTraffic", "EuStallSampling", "RenderBasic", "KernelTrace"],
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
    // The setup's and the tracer's faults as often as a sixth of the rest: most of them refuse
    // every start while on, and the property needs runs that start.
    let fault = prop_oneof![
        5 => prop::sample::select(faults::RUNTIME),
        1 => prop::sample::select(faults::SETUP_AND_TRACER),
    ];
    let via =
        prop_oneof![3 => Just(Via::Auto), 1 => Just(Via::Export), 1 => Just(Via::Streamer), 1 => Just(Via::Tracer)];
    prop_oneof![
        6 => (
            0..3usize,
            1..32u8,
            prop_oneof![3 => Just(0u8), 1 => 1..4u8],
            prop::bool::weighted(0.25),
            via,
            prop::option::weighted(0.25, 0..3usize)
        )
            .prop_map(|(device, groups, metrics, custom, via, also)| Op::Start {
                device,
                groups,
                metrics,
                custom,
                via,
                also
            }),
        3 => Just(Op::Stop),
        1 => Just(Op::Pause),
        1 => Just(Op::Resume),
        1 => (100..20_000u64).prop_map(Op::Interval),
        1 => Just(Op::Refresh),
        2 => (0..12u64).prop_map(Op::Wait),
        3 => fault.clone().prop_map(Op::Fault),
        2 => proptest::collection::vec(fault, 2..=3).prop_map(Op::Faults),
        1 => Just(Op::ClearFaults),
        1 => Just(Op::Shutdown),
    ]
}

fn apply(sim: &ze_sim::Sim, f: Fault) {
    sim.configure(|x, q| f.configure(x, q));
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
    /// Runs that read a tracer-based group with the metric tracer.
    traced: AtomicU64,
    /// Runs of two devices.
    several: AtomicU64,
    samples: AtomicU64,
}

/// Which optional entry points the driver leaves empty.
#[derive(Debug, Clone)]
enum Empty {
    /// Every one of them.
    All,
    /// These (none, one or two of `faults::EMPTY`).
    Some(Vec<Fault>),
}

fn empty() -> impl Strategy<Value = Empty> {
    prop_oneof![
        1 => Just(Empty::All),
        3 => prop::sample::subsequence(faults::EMPTY.to_vec(), 0..=2).prop_map(Empty::Some),
    ]
}

/// Which munmap of an exported buffer fails once (the sampler's test hook), if any.
fn munmap() -> impl Strategy<Value = Option<u32>> {
    prop_oneof![3 => Just(None), 1 => (0..3u32).prop_map(Some)]
}

fn run_sequence(empty: &Empty, fail_munmap: Option<u32>, ops: &[Op], counts: &Counts) -> Result<(), TestCaseError> {
    let sim = sim(|c| {
        c.update_period_us = 250;
        match empty {
            Empty::All => {
                c.empty_entry_points = SimConfig::optional_entry_points().iter().map(|s| s.to_string()).collect()
            }
            Empty::Some(set) => set.iter().for_each(|f| f.apply(c)),
        }
    });
    let h = sampler_with(&sim, zescope_sampler::Options { fail_munmap, ..Default::default() });
    let mut n = 0;
    for op in ops {
        match op {
            Op::Start { device: d, groups, metrics, custom, via, also } => {
                let (path, names) = device(*d);
                let groups: Vec<String> = names
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| groups & (1 << i) != 0)
                    .map(|(_, g)| g.to_string())
                    .collect();
                let metrics: Vec<String> =
                    (0..*metrics as usize).map(|i| METRICS[(i * 3 + *d) % METRICS.len()].to_string()).collect();
                let mut targets = vec![Target { device: path, groups, metrics, custom_group: *custom }];
                if let Some(other) = also.filter(|o| o != d) {
                    let (path, names) = device(other);
                    targets.push(Target::new(path, vec![names[0].to_string()]));
                }
                h.send(Command::Start(RunConfig {
                    targets,
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
            Op::Faults(set) => set.iter().for_each(|f| apply(&sim, *f)),
            Op::ClearFaults => clear(&sim),
            Op::Shutdown => break,
        }
        n += 1;
        let events = sync(&h, n);
        counts.started.fetch_add(events.iter().filter(|e| matches!(e, Event::RunStarted(_))).count() as u64, Relaxed);
        counts.streamed.fetch_add(
            events
                .iter()
                .filter(|e| matches!(e, Event::RunStarted(i) if i.streams.iter().any(|s| s.read_path == zescope_sampler::ReadPath::Streamer)))
                .count() as u64,
            Relaxed,
        );
        counts.traced.fetch_add(
            events
                .iter()
                .filter(|e| matches!(e, Event::RunStarted(i) if i.streams.iter().any(|s| s.read_path == zescope_sampler::ReadPath::Tracer)))
                .count() as u64,
            Relaxed,
        );
        counts.several.fetch_add(
            events.iter().filter(|e| matches!(e, Event::RunStarted(i) if i.devices.len() > 1)).count() as u64,
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
    // The user fixes whatever was injected, then quits: everything must be released — except
    // what an entry point the driver lacks for good provokes (metrics it cannot disable).
    clear(&sim);
    h.send(Command::Shutdown);
    wait_for(&h, Duration::from_secs(10), |e| matches!(e, Event::ShutDown).then_some(()));
    let r = sim.report();
    let allowed: Vec<&str> = match empty {
        Empty::All => Vec::new(),
        Empty::Some(set) => set.iter().flat_map(|f| f.may_leave().iter().copied()).collect(),
    };
    prop_assert!(r.violations.is_empty(), "after {ops:?}:\n{}", r.to_ron());
    prop_assert!(r.leaks.iter().all(|l| allowed.contains(&l.kind.as_str())), "after {ops:?}:\n{}", r.to_ron());
    Ok(())
}

/// The property's cases, split over [`QUARTERS`] tests so libtest runs them side by side: a
/// case spends about half its time waiting for the sampler thread and the simulated writer.
const QUARTERS: u32 = 4;

/// Cases of one quarter: `ZESCOPE_PROP_CASES` (all four together; 10,000 by default) over four.
fn cases() -> u32 {
    let total = std::env::var("ZESCOPE_PROP_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000u32);
    total.div_ceil(QUARTERS)
}

/// One quarter of the property, with its own random seed (proptest's default); a failure is
/// shrunk, saved beside this file and panics with the smallest sequence found.
fn a_quarter() {
    let config = Config { cases: cases(), max_shrink_iters: 2000, source_file: Some(file!()), ..Config::default() };
    let mut runner = TestRunner::new(config);
    let sequences = (empty(), munmap(), proptest::collection::vec(op(), 1..10));
    if let Err(e) = runner.run(&sequences, |(empty, m, ops)| run_sequence(&empty, m, &ops, &Counts::default())) {
        panic!("{e}\n{runner}");
    }
}

/// The property, as four tests that run side by side.
mod random_sequences_leave_no_violation_and_no_leak {
    #[test]
    fn quarter_1() {
        super::a_quarter();
    }

    #[test]
    fn quarter_2() {
        super::a_quarter();
    }

    #[test]
    fn quarter_3() {
        super::a_quarter();
    }

    #[test]
    fn quarter_4() {
        super::a_quarter();
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
        .run(&(empty(), munmap(), proptest::collection::vec(op(), 1..10)), |(empty, m, ops)| {
            starts.fetch_add(ops.iter().filter(|o| matches!(o, Op::Start { .. })).count() as u64, Relaxed);
            run_sequence(&empty, m, &ops, &counts)
        })
        .unwrap();
    let starts = starts.load(Relaxed);
    let started = counts.started.load(Relaxed);
    let samples = counts.samples.load(Relaxed);
    // Many random starts fail by design (injected faults, a lost device, a stop or another start
    // right behind them); counted over this runner alone about a fifth of them run (103 of 460
    // when this was written). A vacuous property (no run ever starting) fails by far. The tracer
    // reads one group of one device: 9 of 79 runs before a quarter of the starts took a second
    // device, 6 of 87 after (the same seed, other draws).
    let (streamed, traced) = (counts.streamed.load(Relaxed), counts.traced.load(Relaxed));
    let both = counts.several.load(Relaxed);
    eprintln!(
        "{started} of {starts} random starts ran; {streamed} streamed, {traced} traced, {both} of two devices; {samples} samples"
    );
    assert!(started * 8 >= starts, "only {started} of {starts} random starts ran");
    assert!(samples > 150, "only {samples} samples over 300 sequences");
    assert!(streamed * 5 >= started, "only {streamed} of {started} runs read a group with the streamer");
    assert!(traced * 20 >= started, "only {traced} of {started} runs read a group with the tracer");
    assert!(both * 16 >= started, "only {both} of {started} runs had a second device");
}

/// A sequence the property found (on 9f1c91d, 2026-12-03): metrics left enabled by a refused
/// disable on one device, then a start on the other whose first free fails. Kept as a plain test
/// so it runs first and by name, whatever proptest's saved seeds.
#[test]
fn a_refused_disable_then_a_failed_free_on_the_next_start_break_no_rule() {
    let start = |device, groups| Op::Start { device, groups, metrics: 0, custom: false, via: Via::Auto, also: None };
    let ops =
        [Op::Fault(Fault::DisableRefused), start(1, 7), Op::ClearFaults, Op::Fault(Fault::FreeFailsOnce), start(0, 1)];
    for _ in 0..20 {
        run_sequence(&Empty::Some(Vec::new()), None, &ops, &Counts::default()).unwrap();
    }
}

/// A sequence the property found once the munmap hook joined it: an import that fails after its
/// buffer was mapped, and the munmap of that mapping failing. The mapping was dropped with only
/// a log line and the teardown disabled metrics under it (exported_memory_still_mapped); it is
/// kept now, unmapped again by the teardown before anything is torn down.
#[test]
fn a_failed_munmap_after_a_failed_import_keeps_the_teardown_waiting() {
    let start = Op::Start { device: 0, groups: 24, metrics: 0, custom: false, via: Via::Auto, also: None };
    let ops = [Op::Faults(vec![Fault::ImportFails, Fault::InvalidArgument]), start];
    run_sequence(&Empty::Some(Vec::new()), Some(0), &ops, &Counts::default()).unwrap();
}
