//! The source tree's rows and ticks without a window: groups collapsed until opened or matched,
//! a group's tick meaning all its metrics, a metric's tick in an unticked group taking that group
//! with it alone.

use std::collections::BTreeSet;

use super::super::state::AppState;
use super::index::SearchIndex;
use super::rows::{Change, OpenGroups, Row, apply, build, tag};
use zescope_sampler::{DevicePath, GroupEntry, GroupExportKind, Inventory, MetricEntry};

const GPU: DevicePath = DevicePath { driver: 0, device: 0, sub_device: None };

fn inventory() -> Inventory {
    let group = |name: &str, domain: u32, metrics: &[&str]| GroupEntry {
        name: name.into(),
        description: format!("{name} set"),
        domain,
        exports: GroupExportKind::None,
        streamable: true,
        tracer: false,
        metrics: metrics
            .iter()
            .map(|m| MetricEntry { name: m.to_string(), description: String::new(), unit: "%".into() })
            .collect(),
        unavailable: None,
        export_unavailable: None,
        ways: vec![zescope_sampler::Via::Streamer],
    };
    Inventory {
        source: None,
        devices: vec![zescope_sampler::testing::gpu_entry(
            GPU,
            "GPU",
            vec![
                group("ComputeBasic", 0, &["GpuTime", "GpuBusy", "EuActive"]),
                group("L3_1", 0, &["L3Bank00Hits", "GpuBusy"]),
                group("Engine", 2, &["EngineBusy"]),
            ],
        )],
    }
}

/// A state with the inventory and the GPU picked with `groups` ticked.
fn state(groups: &[&str]) -> AppState {
    let mut s = AppState::default();
    s.inventory = Some(inventory());
    s.selection.pick(GPU, groups.iter().map(|g| g.to_string()).collect());
    s
}

fn rows(s: &AppState, open: &OpenGroups, query: &str) -> (Vec<Row>, usize) {
    let inv = s.inventory.as_ref().unwrap();
    let mut ix = SearchIndex::default();
    ix.update(inv, query);
    let mut rows = Vec::new();
    let shown = build(&mut rows, inv, s, &ix, open, query);
    (rows, shown.metrics)
}

fn ticked(s: &AppState) -> (BTreeSet<String>, Vec<(String, Vec<String>)>) {
    let sel = &s.selection;
    let excluded = sel.excluded.iter().map(|(g, m)| (g.clone(), m.iter().cloned().collect())).collect();
    (sel.groups.clone(), excluded)
}

fn change(s: &mut AppState, c: Change) {
    let inv = s.inventory.take().unwrap();
    apply(vec![c], &inv, s, &mut OpenGroups::default(), false);
    s.inventory = Some(inv);
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn groups_are_collapsed_until_opened_and_the_search_opens_what_matches() {
    let s = state(&["ComputeBasic"]);
    let mut open = OpenGroups::default();
    let (r, shown) = rows(&s, &open, "");
    assert_eq!(r, [Row::Device(0), Row::Group(0, 0), Row::Group(0, 1), Row::Group(0, 2), Row::Telemetry(0)]);
    assert_eq!(shown, 6, "every metric of the picked device");
    open.open.insert((GPU, "L3_1".into()));
    let (r, _) = rows(&s, &open, "");
    assert_eq!(r[2..6], [Row::Group(0, 1), Row::GroupInfo(0, 1), Row::Metric(0, 1, 0), Row::Metric(0, 1, 1)]);
    let (r, shown) = rows(&s, &OpenGroups::default(), "gpubusy");
    let expect = [Row::Device(0), Row::Group(0, 0), Row::GroupInfo(0, 0), Row::Metric(0, 0, 1)];
    assert_eq!((r[..4].to_vec(), shown), (expect.to_vec(), 2));
    assert_eq!(r[4..7], [Row::Group(0, 1), Row::GroupInfo(0, 1), Row::Metric(0, 1, 1)]);
    assert!(!r.contains(&Row::Group(0, 2)), "a group without a match is hidden");
    let mut closed = OpenGroups::default();
    closed.closed_in_search.insert((GPU, "ComputeBasic".into()));
    let (r, _) = rows(&s, &closed, "gpubusy");
    assert_eq!(r[1..3], [Row::Group(0, 0), Row::Group(0, 1)], "closed during the search");
}

#[test]
fn a_groups_tick_takes_all_its_metrics_and_one_group_per_domain() {
    let mut s = state(&["L3_1"]);
    s.selection.excluded.insert("ComputeBasic".into(), set(&["GpuTime"]));
    change(&mut s, Change::Group(GPU, 0, true));
    assert_eq!(ticked(&s), (set(&["ComputeBasic"]), vec![]), "L3_1 shares its domain; no metric left out");
    change(&mut s, Change::Group(GPU, 2, true));
    assert_eq!(ticked(&s).0, set(&["ComputeBasic", "Engine"]), "another domain joins");
    change(&mut s, Change::Group(GPU, 0, false));
    assert_eq!(ticked(&s).0, set(&["Engine"]));
}

#[test]
fn a_metrics_tick_takes_its_group_alone_and_the_last_one_unticked_drops_it() {
    let mut s = state(&["L3_1"]);
    change(&mut s, Change::Metric(GPU, 0, 1, true));
    let only_busy = vec![("ComputeBasic".to_owned(), vec!["EuActive".to_owned(), "GpuTime".to_owned()])];
    assert_eq!(ticked(&s), (set(&["ComputeBasic"]), only_busy), "the group with GpuBusy only");
    change(&mut s, Change::Metric(GPU, 0, 0, true));
    assert_eq!(ticked(&s).1, [("ComputeBasic".to_owned(), vec!["EuActive".to_owned()])]);
    change(&mut s, Change::Metric(GPU, 0, 2, true));
    assert_eq!(ticked(&s), (set(&["ComputeBasic"]), vec![]), "all ticked again: nothing left out");
    for m in 0..3 {
        change(&mut s, Change::Metric(GPU, 0, m, false));
    }
    assert_eq!(ticked(&s), (set(&[]), vec![]), "unticking the last metric unticks the group");
    let run = s.run_config();
    assert!(run.is_ok(), "the telemetry alone still runs: {run:?}");
}

#[test]
fn a_bare_number_typed_for_the_interval_is_in_the_unit_the_box_showed() {
    use super::typed_interval;
    use std::time::Duration;
    let ms = Duration::from_millis;
    assert_eq!(typed_interval("5", ms(10)), Some(ms(5)), "the box showed 10 ms");
    assert_eq!(typed_interval(" 2.5 ", ms(1500)), Some(Duration::from_micros(2_500_000)), "it showed 1.5 s");
    assert_eq!(typed_interval("250", Duration::from_micros(100)), Some(Duration::from_micros(250)), "100 µs");
    assert_eq!(typed_interval("250us", ms(10)), Some(Duration::from_micros(250)), "a unit typed wins");
    assert_eq!(typed_interval("5 ms", Duration::from_secs(2)), Some(ms(5)));
    assert_eq!(typed_interval("fast", ms(10)), None);
}

/// A group the way chosen cannot read says so ("not by streamer"), not its export kind, which
/// read as the way it would be read (a tracer-based group under a server's `--via streamer`
/// showed "DMA-BUF"); with auto, its export kind says what it lacks.
#[test]
fn a_group_the_chosen_way_cannot_read_says_so_not_its_export() {
    use zescope_sampler::Via;
    assert_eq!(tag("cannot be read", Via::Streamer, GroupExportKind::Group), "not by streamer");
    assert_eq!(tag("cannot be read", Via::Export, GroupExportKind::Group), "not by exported memory");
    assert_eq!(tag("cannot be read", Via::Tracer, GroupExportKind::None), "not by tracer");
    assert_eq!(tag("cannot be read", Via::Auto, GroupExportKind::None), "no export");
    assert_eq!(tag("exported memory", Via::Auto, GroupExportKind::PerMetric), "DMA-BUF per metric");
    assert_eq!(tag("tracer (4 events)", Via::Auto, GroupExportKind::Group), "tracer");
    assert_eq!(tag("streamer, 160 µs", Via::Streamer, GroupExportKind::None), "streamer");
}

#[test]
fn the_search_says_how_many_metrics_and_telemetry_series_it_found() {
    let said = |metrics, telemetry| super::rows::Shown { metrics, telemetry }.text();
    assert_eq!(said(0, 0), "no metric of the ticked devices matches");
    assert_eq!(said(1, 0), "1 metric matches");
    assert_eq!(said(2, 0), "2 metrics match");
    assert_eq!(said(0, 1), "1 telemetry series matches");
    assert_eq!(said(0, 4), "4 telemetry series match");
    assert_eq!(said(2, 5), "2 metrics and 5 telemetry series match");
}
