//! The realistic catalogue (`catalog: Realistic`) through the driver's entry points, in-process:
//! a GPU reports dozens of groups and over a thousand metrics with their real types and units,
//! `ComputeBasic` streams values of the types its properties say, and a group that exports
//! memory holds each metric in its result type.

mod common;

use std::ffi::CStr;

use common::fixture::{Fixture, fixture};
use common::stream::stream_tour;
use common::{ok, read_mapped_u64};
use level_zero_sys::*;
use ze_sim::catalog::Catalog;

fn realistic() -> Fixture {
    fixture(|c| c.catalog = Catalog::Realistic)
}

/// (name, metric type, result type, units) of a metric.
fn properties(f: &Fixture, m: zet_metric_handle_t) -> (String, u32, u32, String) {
    let mut p = zet_metric_properties_t { stype: ZET_STRUCTURE_TYPE_METRIC_PROPERTIES, ..Default::default() };
    // SAFETY: a valid properties struct with no chain.
    ok(unsafe { (f.raw.api.zetMetricGetProperties)(m, &mut p) }).unwrap();
    // SAFETY: the driver NUL-terminates the fixed strings.
    let s = |b: &[core::ffi::c_char]| unsafe { CStr::from_ptr(b.as_ptr()) }.to_string_lossy().into_owned();
    (s(&p.name), p.metricType, p.resultType, s(&p.resultUnits))
}

fn find<'a>(props: &'a [(String, u32, u32, String)], name: &str) -> &'a (String, u32, u32, String) {
    props.iter().find(|p| p.0 == name).unwrap_or_else(|| panic!("no metric {name}"))
}

#[test]
fn a_realistic_gpu_reports_dozens_of_groups_and_a_thousand_metrics_with_their_types() {
    let f = realistic();
    let gpu = f.gpu();
    let groups = f.raw.groups(gpu).unwrap();
    assert!(groups.len() >= 30, "{} groups", groups.len());
    let metrics: usize = groups.iter().map(|&g| f.raw.metrics(g).unwrap().len()).sum();
    assert!(metrics >= 1000, "{metrics} metrics");
    let cb = f.raw.group_by_name(gpu, "ComputeBasic").unwrap();
    let info = f.raw.group(cb).unwrap();
    assert_eq!(info.sampling, ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED);
    let props: Vec<_> = f.raw.metrics(cb).unwrap().into_iter().map(|m| properties(&f, m)).collect();
    assert_eq!(props.len(), 45);
    for (name, ty, result, unit) in [
        ("QueryBeginTime", ZET_METRIC_TYPE_TIMESTAMP, ZET_VALUE_TYPE_UINT64, "ns"),
        ("GpuTime", ZET_METRIC_TYPE_DURATION, ZET_VALUE_TYPE_UINT64, "ns"),
        ("GpuCoreClocks", ZET_METRIC_TYPE_EVENT, ZET_VALUE_TYPE_UINT64, "cycles"),
        ("GpuBusy", ZET_METRIC_TYPE_RATIO, ZET_VALUE_TYPE_FLOAT32, "%"),
        ("EuActive", ZET_METRIC_TYPE_RATIO, ZET_VALUE_TYPE_FLOAT32, "%"),
        ("CsThreads", ZET_METRIC_TYPE_EVENT, ZET_VALUE_TYPE_UINT64, "threads"),
        ("GtiReadThroughput", ZET_METRIC_TYPE_THROUGHPUT, ZET_VALUE_TYPE_UINT64, "bytes"),
        ("ReportReason", ZET_METRIC_TYPE_RAW, ZET_VALUE_TYPE_UINT32, ""),
    ] {
        assert_eq!(find(&props, name), &(name.to_owned(), ty, result, unit.to_owned()));
    }
    let l3 = f.raw.group_by_name(gpu, "L3_1").unwrap();
    let flag = f.raw.metrics(l3).unwrap().into_iter().map(|m| properties(&f, m)).find(|p| p.1 == ZET_METRIC_TYPE_FLAG);
    assert_eq!(flag.map(|p| (p.0, p.2)), Some(("CoreFrequencyChanged".into(), ZET_VALUE_TYPE_BOOL8)));
    // The tile has the catalogue too; the NPU keeps its own groups.
    let tile = f.raw.sub_devices(gpu).unwrap()[0];
    assert_eq!(f.raw.groups(tile).unwrap().len(), groups.len());
    let npu = f.raw.devices(f.drv).unwrap()[1];
    assert!(f.raw.group_by_name(npu, "NpuActivity").is_ok());
}

#[test]
fn compute_basic_streams_values_of_the_types_its_properties_say() {
    let f = realistic();
    let gpu = f.gpu();
    stream_tour(&f.raw, f.drv, gpu, "ComputeBasic", "realistic ComputeBasic");
    let g = f.raw.group_by_name(gpu, "ComputeBasic").unwrap();
    let props: Vec<_> = f.raw.metrics(g).unwrap().into_iter().map(|m| properties(&f, m)).collect();
    let c = f.raw.context(f.drv).unwrap();
    f.raw.activate(c, gpu, &[g]).unwrap();
    let o = f.raw.open(c, gpu, g, 100_000, 1, std::ptr::null_mut()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let (_, raw) = f.raw.read(o.streamer).unwrap();
    let calc = f.raw.api.zetMetricGroupCalculateMetricValues.unwrap();
    let ty = ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES;
    let mut n = 0u32;
    // SAFETY: a count query, then a buffer of the count asked for.
    ok(unsafe { calc(g, ty, raw.len(), raw.as_ptr(), &mut n, std::ptr::null_mut()) }).unwrap();
    let mut values = vec![zet_typed_value_t::default(); n as usize];
    // SAFETY: as above.
    ok(unsafe { calc(g, ty, raw.len(), raw.as_ptr(), &mut n, values.as_mut_ptr()) }).unwrap();
    assert!(values.len() >= 2 * props.len(), "{} values", values.len());
    for report in values.chunks(props.len()) {
        for (v, p) in report.iter().zip(&props) {
            assert_eq!(v.r#type, p.2, "{}: Calculate answers the result type its properties report", p.0);
        }
        let value = |name: &str| report[props.iter().position(|p| p.0 == name).unwrap()].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&value("GpuBusy")), "{}", value("GpuBusy"));
        assert!(value("GpuTime") <= o.period_ns as f64 * 1.01, "busy at most the whole period");
        assert!(value("AvgGpuCoreFrequencyMHz") > 100.0 && value("AvgGpuCoreFrequencyMHz") <= 2100.0);
        assert_eq!((value("ReportReason"), value("ContextId")), (1.0, 32.0));
        assert_eq!(value("RasterizedPixels"), 0.0, "a compute workload draws nothing");
        assert!((0.5..=2.0).contains(&value("EuAvgIpcRate")) || value("GpuBusy") < 10.0);
    }
    f.raw.close_streamer(o.streamer).unwrap();
    f.clean_teardown(c, gpu);
    let r = f.sim.report();
    assert_eq!(r.violation_kinds(), ["teardown_with_open_streamer"], "only the tour's deliberate one: {r:?}");
    assert!(r.leaks.is_empty(), "{r:?}");
}

#[test]
fn every_sub_devices_set_is_the_same_whether_the_buffer_holds_all_sets_or_not() {
    // A buffer with room for every set is filled in one pass; a smaller one takes the general
    // path (whole sets in order, the last cut short). The values must not depend on which.
    let f = fixture(|c| {
        c.catalog = Catalog::Realistic;
        let tile = c.devices[0].sub_devices[0].clone();
        c.devices[0].sub_devices.push(tile);
    });
    let gpu = f.gpu();
    let g = f.raw.group_by_name(gpu, "ComputeBasic").unwrap();
    let c = f.raw.context(f.drv).unwrap();
    f.raw.activate(c, gpu, &[g]).unwrap();
    let o = f.raw.open(c, gpu, g, 100_000, 1, std::ptr::null_mut()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let (_, raw) = f.raw.read(o.streamer).unwrap();
    let (sets, counts, all) = f.raw.calculate_sets_into(g, &raw, None).unwrap();
    assert!(sets >= 2, "the root device gives a set per sub-device: {sets}");
    assert!(counts.iter().all(|&n| n == counts[0] && n > 0), "{counts:?}");
    let short = all.len() as u32 - 1;
    let (short_sets, short_counts, part) = f.raw.calculate_sets_into(g, &raw, Some(short)).unwrap();
    assert_eq!(short_sets, sets);
    assert_eq!(short_counts.last().copied(), Some(counts[0] - 1), "the last set cut short");
    let bits = |v: &zet_typed_value_t| (v.r#type, v.as_u64(), v.as_f64().map(f64::to_bits));
    assert_eq!(part.len(), all.len() - 1);
    for (i, (a, b)) in all.iter().zip(&part).enumerate() {
        assert_eq!(bits(a), bits(b), "value {i} of {}", all.len());
    }
    // Sub-device 1 of 2 reports three quarters of what sub-device 0 does, times and states alike.
    let n = counts[0] as usize;
    let scaled = (0..n).filter(|&i| bits(&all[i]) != bits(&all[n + i])).count();
    assert!(scaled > 0 && scaled < n, "{scaled} of {n} values differ between the sets");
    f.raw.close_streamer(o.streamer).unwrap();
    f.clean_teardown(c, gpu);
    assert!(f.sim.report().is_clean());
}

#[test]
fn an_exported_group_holds_each_metric_in_its_result_type() {
    let f = realistic();
    let (c, d, g, e) = f.running_group("EngineActivity");
    assert!(e.fd >= 0 && e.size >= 4096);
    // Two more snapshots (counted by the driver; a loaded machine may take long): the running
    // totals have moved past zero.
    let written = f.sim.snapshots_written();
    common::wait_until("two more snapshots", || f.sim.snapshots_written() >= written + 2);
    // Deactivated, the buffer keeps its last snapshot.
    f.raw.activate(c, d, &[]).unwrap();
    let ts = read_mapped_u64(e.fd, e.size, ze_sim::export::OFFSET_TIMESTAMP);
    let slot = |i: usize| read_mapped_u64(e.fd, e.size, ze_sim::export::OFFSET_COUNTERS + 8 * i);
    let truth = f.sim.ground_truth("EngineActivity", ts).expect("the last snapshot is in the history");
    let names: Vec<String> = f.raw.metrics(g).unwrap().into_iter().map(|m| properties(&f, m).0).collect();
    let at = |name: &str| names.iter().position(|n| n == name).unwrap();
    let busy = slot(at("EngineBusyTime"));
    assert!(busy > 0 && busy as f64 == truth[at("EngineBusyTime")], "a running total in ns");
    let util = f32::from_bits(slot(at("EngineUtilization")) as u32);
    assert!((0.0..=100.0).contains(&util) && util as f64 == truth[at("EngineUtilization")], "an f32: {util}");
    assert_eq!(slot(at("EngineContextId")), 32, "a u32");
    f.raw.destroy_context(c).unwrap();
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}
