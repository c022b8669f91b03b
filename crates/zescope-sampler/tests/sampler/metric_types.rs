//! Metric types as a user reads them, on the simulated driver: one group holding a metric of
//! every type (DURATION, EVENT, THROUGHPUT, RATIO, RAW, FLAG and the streamer's TIMESTAMP), read
//! with the time-based streamer (each report's values about that report alone: counts per
//! second, busy time its running total as exported memory gives it, states as read) and through
//! exported memory with the generic
//! `MetricOrder` layout (running totals kept for the store: counts cumulative, busy time `Busy`,
//! states `State`). The simulated device's built-in groups report each metric's type for what
//! it is, its realistic catalogue (Intel's ComputeBasic) is shown by type too, and a layout's
//! `Busy` needs a unit of time. The exact arithmetic of each conversion
//! is unit-tested beside it (`read/streamer/plan.rs`, the store's `rate.rs`); here every type goes
//! through the whole path.

use std::time::Duration;

use ze_sim::config::{DeviceConfig, Export, GroupConfig, MetricConfig, Signal};
use zescope_sampler::layout::{Kind, LayoutSet};
use zescope_sampler::testing::*;
use zescope_sampler::{Command, Event, RunInfo, SampleBatch, SamplerHandle, Via};

/// (metric, signal): one metric of each type the driver reports.
const METRICS: [(&str, Signal); 8] = [
    ("Busy", Signal::GpuTime),                   // DURATION, ns
    ("Cycles", Signal::BusyCycles),              // EVENT, cycles
    ("Bytes", Signal::BytesRead),                // THROUGHPUT, bytes
    ("Frequency", Signal::FrequencyMhz),         // THROUGHPUT, MHz: an average, already per time
    ("Utilization", Signal::UtilizationPercent), // RATIO, %
    ("Temperature", Signal::TemperatureC),       // RAW: a reading
    ("Context", Signal::ContextId),              // RAW: an id
    ("Throttled", Signal::Throttled),            // FLAG
];

/// A GPU with the metrics of [`METRICS`] twice: group "Streamed" (time-based streamer only) and
/// group "Exported" (one DMA-BUF for the group, another domain).
fn sim_with_every_type() -> std::sync::Arc<ze_sim::Sim> {
    let metrics: Vec<MetricConfig> = METRICS
        .iter()
        .map(|&(name, signal)| MetricConfig { name: name.into(), description: format!("{name} ({signal:?})"), signal })
        .collect();
    let group = |name: &str, domain, export, stream| GroupConfig {
        name: name.into(),
        domain,
        export,
        metrics: metrics.clone(),
        stream,
        ..Default::default()
    };
    sim(|c| {
        c.devices = vec![DeviceConfig {
            name: "ze-sim GPU".into(),
            groups: vec![group("Streamed", 0, Export::None, true), group("Exported", 1, Export::Group, false)],
            sub_devices: Vec::new(),
            ..Default::default()
        }];
    })
}

fn start(h: &SamplerHandle, group: &str, via: Via) -> RunInfo {
    let mut cfg = run_config(&[group]);
    cfg.interval = Duration::from_millis(10);
    cfg.via = via;
    h.send(Command::Start(cfg));
    wait_for(h, T, |e| match e {
        Event::RunStarted(i) => Some(i.clone()),
        Event::Error(e) => panic!("run failed: {e:?}"),
        _ => None,
    })
}

/// Column `k` of every sample of `batches` (rows of `n` values).
fn column(batches: &[SampleBatch], n: usize, k: usize) -> Vec<f64> {
    batches.iter().flat_map(|b| b.values.chunks(n).map(|r| r[k]).collect::<Vec<_>>()).collect()
}

/// The busy shares (%) a running total of busy ns in column `k` gives from each sample to the
/// next: its growth over the time between them.
fn busy_shares(batches: &[SampleBatch], n: usize, k: usize) -> Vec<f64> {
    per_second(batches, n, k).into_iter().map(|r| r * 1e-9 * 100.0).collect()
}

/// What running total `k` grew by per second of its samples' times, from the second sample on
/// (asserting it is one: it never goes down).
fn per_second(batches: &[SampleBatch], n: usize, k: usize) -> Vec<f64> {
    let totals = column(batches, n, k);
    let times: Vec<i64> = batches.iter().flat_map(|b| b.timestamps.iter().copied()).collect();
    assert!(totals.windows(2).all(|w| w[1] >= w[0]), "a running total: {totals:?}");
    (1..totals.len()).map(|i| (totals[i] - totals[i - 1]) / (times[i] - times[i - 1]) as f64 * 1e9).collect()
}

fn stop(h: &SamplerHandle, sim: &ze_sim::Sim) {
    h.send(Command::Stop);
    wait_for(h, T, |e| matches!(e, Event::RunStopped { .. }).then_some(()));
    assert!(sim.report().is_clean(), "{:?}", sim.report());
    shut_down(h);
}

#[test]
fn a_streamer_keeps_counts_and_busy_time_as_running_totals_and_states_as_read() {
    let sim = sim_with_every_type();
    let h = sampler_on(&sim);
    let info = start(&h, "Streamed", Via::Streamer);
    let s = &info.streams[0];
    let got: Vec<(&str, &str, Kind)> = s.series.iter().map(|x| (x.name.as_str(), x.unit.as_str(), x.kind)).collect();
    assert_eq!(
        got,
        [
            ("Busy", "ns", Kind::Busy),
            ("Cycles", "cycles", Kind::Cumulative),
            ("Bytes", "bytes", Kind::Cumulative),
            ("Frequency", "MHz", Kind::Gauge),
            ("Utilization", "%", Kind::Gauge),
            ("Temperature", "C", Kind::Gauge),
            ("Context", "", Kind::State),
            ("Throttled", "", Kind::State),
        ],
        "QueryBeginTime, the TIMESTAMP, is the reports' time and no series"
    );
    let n = s.series.len();
    let batches = collect_samples(&h, 400);
    let col = |k| column(&batches, n, k);
    assert!(s.series[..3].iter().all(|x| x.wrap.is_none()), "a total zescope keeps in a double does not wrap");
    let busy = busy_shares(&batches, n, 0);
    let (cycles, bytes) = (per_second(&batches, n, 1), per_second(&batches, n, 2));
    let (freq, util) = (col(3), col(4));
    for i in 1..freq.len() {
        // Busy time and utilisation follow the same workload, each with its own noise (at most
        // 5 points in any phase): the busy share of a report (the total's growth from the
        // report before) is the utilisation, so each report added its own busy ns.
        let b = busy[i - 1];
        assert!((0.0..=100.0).contains(&b), "a share: {b}");
        assert!((b - util[i]).abs() <= 10.5, "busy {b} % against utilisation {} %", util[i]);
        // Busy cycles a second over the clock (MHz): the utilisation again, so each report
        // added its own count to the total.
        let share = cycles[i - 1] / (freq[i] * 1e6) * 100.0;
        assert!((share - util[i]).abs() <= 12.0, "cycles/s {} at {} MHz: {share} % busy", cycles[i - 1], freq[i]);
        // Memory read between 0.1 and 40 GB/s in every phase (±5 %).
        assert!((0.9e8..=4.3e10).contains(&bytes[i - 1]), "bytes/s {}", bytes[i - 1]);
        assert!((250.0..=2150.0).contains(&freq[i]), "MHz as the driver gives them: {}", freq[i]);
    }
    assert!(col(6).iter().all(|v| [0.0, 33.0, 34.0].contains(v)), "context ids as read: {:?}", col(6));
    assert!(col(7).iter().all(|v| *v == 0.0 || *v == 1.0), "a flag is 0 or 1: {:?}", col(7));
    stop(&h, &sim);
}

#[test]
fn exported_memory_keeps_running_totals_for_rates_and_shares_and_states_as_read() {
    let sim = sim_with_every_type();
    let h = sampler_on(&sim);
    let info = start(&h, "Exported", Via::Export);
    let s = &info.streams[0];
    assert_eq!(s.layout, "ze-sim (any group)", "the generic layout: kinds from the metric types");
    let got: Vec<(&str, &str, Kind)> = s.series.iter().map(|x| (x.name.as_str(), x.unit.as_str(), x.kind)).collect();
    assert_eq!(
        got,
        [
            ("Busy", "ns", Kind::Busy),
            ("Cycles", "cycles", Kind::Cumulative),
            ("Bytes", "bytes", Kind::Cumulative),
            ("Frequency", "MHz", Kind::Gauge),
            ("Utilization", "%", Kind::Gauge),
            ("Temperature", "C", Kind::Gauge),
            ("Context", "", Kind::State),
            ("Throttled", "", Kind::State),
        ]
    );
    assert_eq!(s.series[0].wrap, Some(2f64.powi(64)), "busy time wraps at its u64 width, as a counter does");
    assert_eq!(s.series[6].wrap, None, "a state never wraps: it is no total");
    let n = s.series.len();
    let batches = collect_samples(&h, 50);
    let busy = column(&batches, n, 0);
    assert!(busy.windows(2).all(|w| w[1] >= w[0]), "busy time is kept as its running total (ns)");
    assert!(
        column(&batches, n, 6).iter().all(|v| [0.0, 33.0, 34.0].contains(v)),
        "context ids as the driver wrote them"
    );
    assert!(column(&batches, n, 7).iter().all(|v| *v == 0.0 || *v == 1.0), "a bool8 flag read as one byte");
    stop(&h, &sim);
}

#[test]
fn a_layout_declaring_busy_time_in_a_unit_that_is_no_time_is_refused_by_name() {
    let mut set = LayoutSet::default();
    let e = set
        .add_file(
            "busy.ron",
            r#"Layout(name: "odd", matches: [()], counters: Explicit([
                (metric: "GpuTime", offset: 0, value: U64, kind: Busy, unit: "cycles"),
            ]))"#,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("busy.ron") && e.contains("\"odd\"") && e.contains("\"GpuTime\""), "{e}");
    assert!(e.contains("kind Busy needs a unit of time"), "{e}");
    let ok = set.add_file(
        "states.ron",
        r#"Layout(name: "ok", matches: [()], counters: Explicit([
            (metric: "GpuTime", offset: 0, value: U64, kind: Busy, unit: "us"),
            (metric: "Context", offset: 8, value: U32, kind: State, unit: ""),
        ]))"#,
    );
    assert_eq!(ok.unwrap(), 1, "Busy in µs and a State are layout kinds");
}

#[test]
fn the_simulated_devices_built_in_groups_report_each_metric_as_what_it_is() {
    use level_zero_sys::*;
    let sim = sim(|c| c.metrics = ze_sim::config::MetricsEnable::Always);
    let l = zescope_ze::Loader::in_process(sim.in_process()).expect("open the simulated driver");
    let mut seen = Vec::new();
    for device in l.drivers[0].devices().unwrap() {
        for g in device.metric_groups().unwrap() {
            for m in g.metrics().unwrap() {
                seen.push((g.info.name.clone(), m.info.name.clone(), m.info.metric_type, m.info.units.clone()));
            }
        }
    }
    let ty = |group: &str, metric: &str| {
        let s = seen.iter().find(|s| s.0 == group && s.1 == metric).unwrap_or_else(|| panic!("{group}/{metric}"));
        (s.2, s.3.as_str())
    };
    assert_eq!(ty("ComputeBasic", "GpuTime"), (ZET_METRIC_TYPE_DURATION, "ns"), "time busy");
    assert_eq!(ty("ComputeBasic", "GpuBusyCycles"), (ZET_METRIC_TYPE_EVENT, "cycles"));
    assert_eq!(ty("ComputeBasic", "GpuFrequency"), (ZET_METRIC_TYPE_THROUGHPUT, "MHz"), "an average per time");
    assert_eq!(ty("ComputeBasic", "GpuUtilization"), (ZET_METRIC_TYPE_RATIO, "%"));
    assert_eq!(ty("ComputeBasic", "GpuPower"), (ZET_METRIC_TYPE_THROUGHPUT, "W"));
    assert_eq!(ty("RenderBasic", "QueryBeginTime"), (ZET_METRIC_TYPE_TIMESTAMP, "ns"));
    assert_eq!(ty("RenderBasic", "RenderBusyTime"), (ZET_METRIC_TYPE_DURATION, "ns"));
    assert_eq!(ty("RenderBasic", "L3BytesRead"), (ZET_METRIC_TYPE_THROUGHPUT, "bytes"));
    assert_eq!(ty("NpuActivity", "NpuBusyTime"), (ZET_METRIC_TYPE_DURATION, "ns"));
    assert_eq!(ty("NpuActivity", "Inferences"), (ZET_METRIC_TYPE_EVENT, "inferences"));
    assert_eq!(ty("NocTraffic", "NocBytesRead"), (ZET_METRIC_TYPE_THROUGHPUT, "bytes"));
    // A group exporting memory per metric says so in every metric's type, as the extension has it.
    assert_eq!(ty("MemoryTraffic", "MemoryTemperature").0, ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF);
    // Every metric of every built-in group maps onto a kind the layouts and the streamer know.
    for (g, m, t, unit) in &seen {
        let kind = zescope_sampler::layout::kinds::exported_kind(*t, unit);
        assert!(kind.is_some() || *t == ZET_METRIC_TYPE_TIMESTAMP, "{g}/{m}: type {t:#x}");
    }
    assert!(sim.report().is_clean());
}

#[test]
fn the_realistic_catalogue_is_shown_by_type() {
    let sim = sim(|c| c.catalog = ze_sim::config::Catalog::Realistic);
    let h = sampler_on(&sim);
    // Intel's ComputeBasic as oneprof lists it, through the streamer.
    let info = start(&h, "ComputeBasic", Via::Auto);
    let s = &info.streams[0];
    let get = |name: &str| {
        let i = s.series.iter().position(|x| x.name == name).unwrap_or_else(|| panic!("{name}"));
        (i, s.series[i].unit.as_str(), s.series[i].kind)
    };
    assert!(s.series.iter().all(|x| x.name != "QueryBeginTime"), "the TIMESTAMP is the reports' time");
    let (busy, unit, kind) = get("GpuTime");
    assert_eq!((unit, kind), ("ns", Kind::Busy), "DURATION ns: busy time, as exported memory gives it");
    assert_eq!(
        (get("GpuCoreClocks").1, get("GpuCoreClocks").2),
        ("cycles", Kind::Cumulative),
        "EVENT: a count, kept as its running total"
    );
    assert_eq!(get("AvgGpuCoreFrequencyMHz").1, "MHz", "an EVENT in MHz is an average, shown as it is");
    assert_eq!((get("GpuBusy").1, get("GpuBusy").2), ("%", Kind::Gauge), "RATIO in percent");
    for state in ["ReportReason", "ContextId"] {
        assert_eq!(get(state).2, Kind::State, "{state}: a RAW id is a state");
    }
    assert_eq!(get("CoreFrequencyMHz").2, Kind::Gauge, "a RAW frequency in MHz is a level");
    let (ctx, _, _) = get("ContextId");
    let (gpu_busy, _, _) = get("GpuBusy");
    let n = s.series.len();
    let batches = collect_samples(&h, 100);
    let shares = busy_shares(&batches, n, busy);
    assert!(!shares.is_empty() && shares.iter().all(|v| (0.0..=100.0).contains(v)), "{shares:?}");
    assert!(column(&batches, n, ctx).iter().all(|&v| v == 32.0), "the context id as read, never scaled");
    assert!(column(&batches, n, gpu_busy).iter().any(|v| v.fract() != 0.0), "a f32 percentage keeps its fraction");
    stop(&h, &sim);
}
