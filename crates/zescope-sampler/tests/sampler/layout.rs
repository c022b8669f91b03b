//! Layouts: the built-in files parse and fit the simulated driver's groups, selection prefers
//! the most specific match, and every way a layout can be wrong gives an error that names the
//! layout and the field.

use zescope_sampler::layout::decode::MetricDesc;
use zescope_sampler::layout::*;

fn target<'a>(simulated: bool, group: &'a str) -> Owner<'a> {
    Owner { simulated, driver_uuid: "01006d69-732d", device: "ze-sim GPU", group }
}

/// ComputeBasic's metrics as the simulated driver describes them (types and units).
fn sim_metrics() -> Vec<MetricDesc> {
    use level_zero_sys::*;
    [
        ("GpuTime", ZET_METRIC_TYPE_DURATION, "ns"),
        ("GpuBusyCycles", ZET_METRIC_TYPE_EVENT, "cycles"),
        ("GpuFrequency", ZET_METRIC_TYPE_THROUGHPUT, "MHz"),
        ("GpuUtilization", ZET_METRIC_TYPE_RATIO, "%"),
        ("GpuPower", ZET_METRIC_TYPE_THROUGHPUT, "W"),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(n, metric_type, unit))| MetricDesc {
        name: n.to_string(),
        description: String::new(),
        unit: unit.into(),
        value_type: if i < 2 { ZET_VALUE_TYPE_UINT64 } else { ZET_VALUE_TYPE_FLOAT64 },
        metric_type,
    })
    .collect()
}

#[test]
fn built_in_layouts_parse_and_the_most_specific_match_wins() {
    let set = LayoutSet::built_in();
    assert_eq!(set.layouts.len(), 4);
    assert_eq!(set.select(&target(true, "ComputeBasic")).unwrap().name, "ze-sim ComputeBasic");
    assert_eq!(set.select(&target(true, "zescope custom")).unwrap().name, "ze-sim (any group)");
    assert!(set.select(&target(false, "ComputeBasic")).is_none(), "no built-in layout for real hardware");
}

#[test]
fn explicit_and_metric_order_layouts_decode_the_same_bytes() {
    let set = LayoutSet::built_in();
    let explicit =
        Decoder::new(set.select(&target(true, "ComputeBasic")).unwrap(), "ComputeBasic", &sim_metrics(), 4096).unwrap();
    let generic = Decoder::new(set.select(&target(true, "other")).unwrap(), "other", &sim_metrics(), 4096).unwrap();
    let mut snap = vec![0u8; explicit.span];
    snap[0..4].copy_from_slice(&0x4d49535au32.to_le_bytes());
    snap[16..24].copy_from_slice(&123_456u64.to_le_bytes());
    snap[32..40].copy_from_slice(&5_000u64.to_le_bytes());
    snap[48..56].copy_from_slice(&1800.5f64.to_le_bytes());
    let (mut a, mut b) = (vec![0.0; 5], vec![0.0; 5]);
    assert_eq!(explicit.decode(&snap, &mut a), Some(123_456));
    assert_eq!(generic.decode(&snap, &mut b), Some(123_456));
    assert_eq!(a, b);
    assert_eq!((a[0], a[2]), (5000.0, 1800.5));
    let kinds = |d: &Decoder| d.fields.iter().map(|f| f.kind).collect::<Vec<_>>();
    assert_eq!(kinds(&explicit), [Kind::Busy, Kind::Cumulative, Kind::Gauge, Kind::Gauge, Kind::Gauge]);
    assert_eq!(kinds(&generic), kinds(&explicit), "metric types give the kinds the explicit layout spells out");
    assert!(explicit.check_magic(&snap).is_ok());
}

#[test]
fn a_layout_that_does_not_fit_the_buffer_names_layout_and_field() {
    let set = LayoutSet::built_in();
    let l = set.select(&target(true, "ComputeBasic")).unwrap();
    let e = Decoder::new(l, "ComputeBasic", &sim_metrics(), 64).unwrap_err().to_string();
    assert_eq!(
        e,
        "layout \"ze-sim ComputeBasic\": counter \"GpuPower\" at offset 64 (8 bytes) does not fit the exported buffer of 64 bytes"
    );
}

#[test]
fn wrong_memory_is_caught_by_the_magic() {
    let set = LayoutSet::built_in();
    let d =
        Decoder::new(set.select(&target(true, "ComputeBasic")).unwrap(), "ComputeBasic", &sim_metrics(), 4096).unwrap();
    let e = d.check_magic(&vec![0xff; d.span]).unwrap_err().to_string();
    assert!(e.contains("magic at offset 0 is 0xffffffff, expected 0x4d49535a"), "{e}");
}

#[test]
fn a_layout_naming_a_metric_the_group_lacks_is_rejected() {
    let mut set = LayoutSet::default();
    set.add_file(
        "mine.ron",
        r#"Layout(name: "mine", matches: [(group: Some("G"))],
            counters: Explicit([(metric: "Nope", offset: 0, value: U32, kind: Gauge, unit: "x")]))"#,
    )
    .unwrap();
    let l = set.select(&Owner { simulated: false, driver_uuid: "", device: "d", group: "G" }).unwrap();
    let e = Decoder::new(l, "G", &sim_metrics(), 4096).unwrap_err().to_string();
    assert_eq!(e, "layout \"mine\": counter \"Nope\" is not a metric of group \"G\"");
}

#[test]
fn values_of_every_type_decode_little_endian_with_scale() {
    let mut set = LayoutSet::default();
    set.add_file(
        "types.ron",
        r#"Layout(name: "types", matches: [()], counters: Explicit([
            (metric: "a", offset: 0, value: U8, kind: Gauge, unit: "x"),
            (metric: "b", offset: 2, value: U16, kind: Gauge, unit: "x"),
            (metric: "c", offset: 4, value: I32, kind: Gauge, unit: "x", scale: 0.5),
            (metric: "d", offset: 8, value: F32, kind: Gauge, unit: "x"),
            (metric: "e", offset: 16, value: I64, kind: Gauge, unit: "x"),
        ]))"#,
    )
    .unwrap();
    let metrics: Vec<MetricDesc> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|n| MetricDesc {
            name: n.to_string(),
            description: String::new(),
            unit: String::new(),
            value_type: 0,
            metric_type: level_zero_sys::ZET_METRIC_TYPE_RATIO,
        })
        .collect();
    let l = set.select(&Owner { simulated: true, driver_uuid: "", device: "", group: "" }).unwrap();
    let d = Decoder::new(l, "g", &metrics, 24).unwrap();
    let mut s = vec![0u8; 24];
    s[0] = 200;
    s[2..4].copy_from_slice(&60000u16.to_le_bytes());
    s[4..8].copy_from_slice(&(-10i32).to_le_bytes());
    s[8..12].copy_from_slice(&1.5f32.to_le_bytes());
    s[16..24].copy_from_slice(&(-7i64).to_le_bytes());
    let mut v = vec![0.0; 5];
    assert_eq!(d.decode(&s, &mut v), None, "no timestamp in this layout");
    assert_eq!(v, [200.0, 60000.0, -5.0, 1.5, -7.0]);
    // A snapshot shorter than the layout reads nothing out of bounds: NaN instead.
    d.decode(&s[..10], &mut v);
    assert_eq!(v[0], 200.0);
    assert_eq!(v[2], -5.0);
    assert!(v[3].is_nan() && v[4].is_nan());
}

#[test]
fn malformed_layout_files_are_rejected_with_file_and_place() {
    let mut set = LayoutSet::default();
    let e = set.add_file("bad.ron", "Layout(name: \"x\",\n matches: [()],\n counters: Nope)").unwrap_err().to_string();
    assert!(e.starts_with("layout file bad.ron: 3:"), "{e}");
    let e = set
        .add_file("empty.ron", "Layout(name: \"x\", matches: [], counters: MetricOrder(first: 0, stride: 8))")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`matches` is empty"), "{e}");
    let e = set
        .add_file(
            "seq.ron",
            "Layout(name: \"s\", matches: [()], seqlock: Some(4), counters: MetricOrder(first: 0, stride: 8))",
        )
        .unwrap();
    assert_eq!(e, 1);
    let l = set.select(&Owner { simulated: true, driver_uuid: "", device: "", group: "" }).unwrap();
    let err = Decoder::new(l, "g", &sim_metrics(), 4096).unwrap_err().to_string();
    assert!(err.contains("seqlock word at offset 4 is not 8-byte aligned"), "{err}");
}
