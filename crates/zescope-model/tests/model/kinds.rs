//! Busy time and states in session files: recorded, saved and loaded back they keep their kind
//! (the file spells `Busy(wrap: …)` and `State`), the store keeps busy time as a running total
//! plotted as a share in % and a state as read, and the phase table gives busy time's share and
//! total but a state neither mean nor total. A busy series whose unit is no time is refused by
//! name.

use std::collections::BTreeMap;
use std::time::Duration;

use zescope_model::session::{self, Recorder, Session};
use zescope_model::view::phases::{PhaseRange, phase_table};
use zescope_model::view::{SeriesEntry, SeriesKey};
use zescope_sampler::layout::Kind;
use zescope_sampler::{
    DevicePath, Inventory, ReadPath, RunConfig, RunInfo, SampleBatch, SeriesInfo, StreamInfo, Target,
};
use zescope_store::{SeriesKind, Store};

/// A session of one group: busy time (ns, wrapping at 2^64), and a context id, sampled every
/// 10 ms: busy 4 ms of each 10 (40 %), the context 7, 7, 9, 9, 9.
fn recorded() -> Session {
    let series = |name: &str, unit: &str, kind, wrap| SeriesInfo {
        name: name.into(),
        description: String::new(),
        unit: unit.into(),
        kind,
        wrap,
    };
    let info = RunInfo {
        run: 1,
        config: RunConfig {
            targets: vec![Target::new(DevicePath::default(), vec!["G".into()])],
            interval: Duration::from_millis(10),
            via: Default::default(),
            telemetry: false,
        },
        devices: vec!["Card".into()],
        simulated: true,
        streams: vec![StreamInfo {
            index: 0,
            target: 0,
            device: "Card".into(),
            group: "G".into(),
            layout: "sim layout".into(),
            series: vec![
                series("GpuTime", "ns", Kind::Busy, Some(2f64.powi(64))),
                series("ContextId", "", Kind::State, None),
            ],
            read_path: ReadPath::Mapped,
        }],
        imports: 1,
        notices: Vec::new(),
    };
    let mut rec = Recorder::new("unused.ron".into(), Inventory { source: None, devices: Vec::new() });
    rec.started(&info);
    let timestamps: Vec<i64> = (0..5).map(|i| 1_000_000_000 + i * 10_000_000).collect();
    let values = [0.0, 7.0, 4e6, 7.0, 8e6, 9.0, 12e6, 9.0, 16e6, 9.0].to_vec();
    rec.samples(&SampleBatch { run: 1, stream: 0, timestamps, values, gap_before: false }).unwrap();
    rec.session()
}

#[test]
fn busy_time_and_states_keep_their_kind_through_a_file_and_the_phase_table() {
    let text = session::to_v1_string(&recorded()).unwrap();
    assert!(text.contains("kind: Busy(") && text.contains("wrap: Some(1.8446744073709552e19)"), "{text}");
    assert!(text.contains("kind: State"), "{text}");
    let loaded = session::from_str(&text).unwrap();
    let again = session::from_slice(&session::to_bytes(&loaded).unwrap()).unwrap();
    assert_eq!(again.streams[0].meta.series, loaded.streams[0].meta.series, "the binary form keeps them too");

    let mut store = Store::new(usize::MAX);
    let restored = loaded.restore_into(&mut store).unwrap();
    let desc = &store.streams().next().unwrap().desc.series;
    assert_eq!(desc[0].kind, SeriesKind::BusyTime { wrap: Some(2f64.powi(64)), unit_s: 1e-9 });
    assert_eq!(desc[1].kind, SeriesKind::State);
    let series: BTreeMap<SeriesKey, SeriesEntry> = restored.series;
    let units: Vec<String> = series.values().map(SeriesEntry::plotted_unit).collect();
    assert_eq!(units, ["", "%"], "ContextId as read, GpuTime as a share (key order)");

    let all = PhaseRange::new("all", 0, i64::MAX);
    let table = phase_table(&store, &series, &[all]);
    let row = |m: &str| table.rows.iter().find(|r| r.series == format!("G/{m}")).unwrap();
    let busy = row("GpuTime");
    assert!((busy.mean - 40.0).abs() < 1e-9 && busy.min == busy.max, "4 ms busy in each 10 ms: {busy:?}");
    assert_eq!((busy.total, busy.total_unit.as_str()), (Some(16e6), "ns"), "the time busy, in the counter's unit");
    let ctx = row("ContextId");
    assert!(ctx.mean.is_nan(), "no mean of ids: {ctx:?}");
    assert_eq!((ctx.min, ctx.max, ctx.samples, ctx.total), (7.0, 9.0, 5, None), "no total either");
    assert!(
        table.to_csv().lines().any(|l| l.starts_with("all,") && l.contains("G/ContextId,,7,9,")),
        "{}",
        table.to_csv()
    );
}

#[test]
fn busy_time_in_a_unit_that_is_no_time_is_refused_naming_the_field() {
    let mut s = recorded();
    s.streams[0].meta.series[0].unit = "cycles".into();
    let err = session::from_str(&session::to_v1_string(&s).unwrap()).unwrap_err().to_string();
    assert!(err.contains("streams[0].meta.series[0].unit") && err.contains("\"cycles\""), "{err}");
    assert!(err.contains("not a unit of time"), "{err}");
}
