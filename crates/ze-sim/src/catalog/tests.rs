//! The realistic catalogue's shape: its size, `ComputeBasic` as documented, valid names, and
//! what selecting it changes.

use std::collections::HashSet;

use super::model::{MetricType, ResultType, Unit};
use super::*;
use crate::config::{Export, SimConfig};

fn modelled(g: &GroupConfig, name: &str) -> model::Model {
    let m = g.metrics.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("{} has no {name}", g.name));
    match m.signal {
        Signal::Modelled(x) => x,
        other => panic!("{name} is {other:?}"),
    }
}

#[test]
fn the_catalogue_is_the_size_of_a_real_gpus() {
    let groups = realistic_groups();
    assert!(groups.len() >= 30, "{} groups", groups.len());
    // A streamable group also reports QueryBeginTime (an IP-sampling one does not).
    let metrics: usize = groups.iter().map(|g| g.metrics.len() + usize::from(g.has_stream_timestamp())).sum();
    assert!(metrics >= 1000, "{metrics} metrics");
    let names: HashSet<&str> = groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names.len(), groups.len(), "group names are unique");
    for g in &groups {
        let ms: HashSet<&str> = g.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(ms.len(), g.metrics.len(), "metric names are unique in {}", g.name);
        assert!(!ms.contains("QueryBeginTime"), "the streamer adds it to {}", g.name);
    }
    // Every kind of metric type and result type appears.
    let models: Vec<model::Model> = groups
        .iter()
        .flat_map(|g| g.metrics.iter())
        .filter_map(|m| match m.signal {
            Signal::Modelled(x) => Some(x),
            _ => None,
        })
        .collect();
    for ty in [
        MetricType::Duration,
        MetricType::Event,
        MetricType::EventWithRange,
        MetricType::Throughput,
        MetricType::Ratio,
        MetricType::Raw,
        MetricType::Flag,
    ] {
        assert!(models.iter().any(|m| m.ty == ty), "no {ty:?} metric");
    }
    for r in [ResultType::U32, ResultType::U64, ResultType::F32, ResultType::Bool8] {
        assert!(models.iter().any(|m| m.result == r), "no {r:?} result");
    }
}

#[test]
fn compute_basic_has_the_45_metrics_intels_tools_document() {
    let g = realistic_groups().into_iter().find(|g| g.name == "ComputeBasic").unwrap();
    assert!(g.stream && g.export == Export::None && g.domain == 0);
    assert_eq!(g.metrics.len() + 1, 45, "44 and the streamer's QueryBeginTime");
    let documented = [
        ("GpuTime", "ns", MetricType::Duration),
        ("GpuCoreClocks", "cycles", MetricType::Event),
        ("AvgGpuCoreFrequencyMHz", "MHz", MetricType::Event),
        ("GpuBusy", "%", MetricType::Ratio),
        ("CsThreads", "threads", MetricType::Event),
        ("EuActive", "%", MetricType::Ratio),
        ("EuAvgIpcRate", "number", MetricType::Ratio),
        ("RasterizedPixels", "pixels", MetricType::Event),
        ("SamplerTexels", "texels", MetricType::Event),
        ("ShaderMemoryAccesses", "messages", MetricType::Event),
        ("GtiReadThroughput", "bytes", MetricType::Throughput),
        ("CoreFrequencyMHz", "MHz", MetricType::Raw),
        ("ReportReason", "", MetricType::Raw),
        ("ContextId", "", MetricType::Raw),
        ("StreamMarker", "", MetricType::Raw),
    ];
    for (name, unit, ty) in documented {
        let m = modelled(&g, name);
        assert_eq!((m.unit.text(), m.ty), (unit, ty), "{name}");
    }
    assert_eq!(modelled(&g, "GpuTime").result, ResultType::U64);
    assert_eq!(modelled(&g, "EuActive").result, ResultType::F32);
    assert_eq!(modelled(&g, "ReportReason").result, ResultType::U32);
    assert!(g.metrics.iter().all(|m| m.description.len() > 10), "every metric is described");
}

#[test]
fn exported_groups_have_only_types_the_generic_layout_reads() {
    for g in realistic_groups().iter().filter(|g| g.export != Export::None) {
        assert!(!g.stream, "{}: the streamer's timestamp is no slot a layout reads", g.name);
        for m in &g.metrics {
            let Signal::Modelled(x) = m.signal else { panic!("{}", m.name) };
            assert_ne!(x.result, ResultType::Bool8, "{}/{}", g.name, m.name);
            if x.is_cumulative() {
                assert!(matches!(x.ty, MetricType::Duration | MetricType::Event), "{}/{} counts up", g.name, m.name);
            }
        }
    }
}

#[test]
fn selecting_it_replaces_the_gpu_groups_and_keeps_the_npus() {
    let cfg = SimConfig::from_ron("(catalog: Realistic)", "test").unwrap();
    let gpu = apply(cfg.clone());
    let n = realistic_groups().len();
    assert_eq!(gpu.devices[0].groups.len(), n, "the GPU");
    assert_eq!(gpu.devices[0].sub_devices[0].groups.len(), n, "its tile");
    assert_eq!(gpu.devices[1].groups, cfg.devices[1].groups, "the NPU keeps its own");
    assert!(gpu.validate().is_ok(), "{:?}", gpu.validate());
    let builtin = SimConfig::default();
    assert_eq!(builtin.catalog, Catalog::Builtin);
    assert_eq!(apply(builtin.clone()), builtin, "the default is left as it is");
}

#[test]
fn modelled_metrics_report_their_own_types_and_units() {
    let g = realistic_groups().into_iter().find(|g| g.name == "ComputeBasic").unwrap();
    let busy = g.metrics.iter().find(|m| m.name == "GpuBusy").unwrap().signal;
    assert_eq!(
        (busy.metric_type(), busy.result_type(), busy.unit()),
        (ZET_METRIC_TYPE_RATIO, ZET_VALUE_TYPE_FLOAT32, "%")
    );
    let context = g.metrics.iter().find(|m| m.name == "ContextId").unwrap().signal;
    assert!(context.is_state() && !busy.is_state(), "a RAW id is a state, a ratio is not");
    let (word, value) = gauge(busy, 97.25);
    assert_eq!((f32::from_bits(word as u32), value), (97.25, 97.25));
    assert_eq!(gauge(Signal::PowerWatts, 1.5), (1.5f64.to_bits(), 1.5), "built-in gauges stay f64");
    assert_eq!(Unit::None.text(), "");
}

#[test]
fn the_documented_modelled_metrics_parse_and_validate() {
    let doc = include_str!("../../../../docs/ze-sim.md");
    let block = doc
        .split("```ron")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("Modelled"))
        .expect("docs/ze-sim.md shows a configuration with a modelled metric");
    let cfg = SimConfig::from_ron(block, "docs/ze-sim.md").unwrap();
    let m = &cfg.devices[0].groups[0].metrics[0];
    let Signal::Modelled(x) = m.signal else { panic!("{m:?}") };
    assert_eq!((x.ty, x.result, x.unit.text()), (MetricType::Ratio, ResultType::F32, "%"));
    assert!(cfg.devices[0].groups[0].metrics[1].signal.is_cumulative());
}

#[test]
fn the_documented_size_is_the_size() {
    let groups = realistic_groups();
    let metrics: usize = groups.iter().map(|g| g.metrics.len() + usize::from(g.has_stream_timestamp())).sum();
    let doc = include_str!("../../../../docs/ze-sim.md");
    let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!("reports {} groups and about 1,300 metrics", groups.len())),
        "docs/ze-sim.md gives the size"
    );
    // "about 1,300": within 10 %.
    assert!((1170..=1430).contains(&metrics), "{metrics} metrics: update the docs' \"about 1,300\"");
}
