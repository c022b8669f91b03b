use super::*;
use zescope_model::view::TimeAxis;
use zescope_model::view::throttle::Band;
use zescope_store::{SeriesDesc, SeriesKind, StreamDesc};

const MS: i64 = 1_000_000;
const S: i64 = 1_000 * MS;

#[test]
fn labels_name_the_set_bits() {
    let names = vec![(0, "average power cap (PL1)".to_owned()), (3, "thermal limit".to_owned())];
    assert_eq!(label(1, &names), "average power cap (PL1)");
    assert_eq!(label(9, &names), "average power cap (PL1), thermal limit");
    assert_eq!(label(4, &names), "throttled");
}

/// A throttle series read every 100 ms for 8 s: `mask_at(t)` at each read.
fn store_of(mask_at: impl Fn(i64) -> u32) -> (Store, SeriesId) {
    let mut store = Store::new(64 << 20);
    let desc = SeriesDesc { name: "throttle reasons".into(), unit: "".into(), kind: SeriesKind::State };
    let id = store.begin_stream(StreamDesc { name: "telemetry".into(), series: vec![desc] });
    let ts: Vec<i64> = (0..=80).map(|i| i * 100 * MS).collect();
    let vals: Vec<f64> = ts.iter().map(|&t| mask_at(t) as f64).collect();
    store.append(id, &ts, &vals).unwrap();
    let series = store.series_id(id, 0).unwrap();
    (store, series)
}

fn bands_at(store: &Store, id: SeriesId, t0: i64, t1: i64, columns: usize) -> Vec<Band> {
    bands(store, id, t0, t1, columns, &mut Envelope::new())
}

/// PL1 set from 1 s to 2 s and from 5 s to 6 s, clear in between and around.
fn two_runs(t: i64) -> u32 {
    u32::from((S..2 * S).contains(&t) || (5 * S..6 * S).contains(&t))
}

#[test]
fn runs_separated_by_clear_time_are_separate_bands() {
    let (store, id) = store_of(two_runs);
    // One sample a column or fewer: exactly the two runs, each from its first set sample to the
    // sample that saw it clear.
    for columns in [81, 200, 1600] {
        let got = bands_at(&store, id, 0, 8 * S, columns);
        let want =
            [Band { from: S, to: 2 * S, mask: 1, share: 1.0 }, Band { from: 5 * S, to: 6 * S, mask: 1, share: 1.0 }];
        assert_eq!(got, want, "{columns} columns");
    }
}

#[test]
fn no_zoom_puts_a_full_band_over_clear_time() {
    let (store, id) = store_of(two_runs);
    for columns in [2, 3, 5, 8, 13, 40, 80] {
        let got = bands_at(&store, id, 0, 8 * S, columns);
        for b in &got {
            // A band set throughout lies within a run; a column mixing set and clear says so.
            if b.share >= 1.0 {
                assert!((S..=2 * S).contains(&b.from) && b.to <= 2 * S || b.from >= 5 * S && b.to <= 6 * S, "{b:?}");
            } else {
                assert!(b.share > 0.0 && b.share < 1.0, "{b:?}");
            }
        }
        // The set time drawn (width × share) is the set time sampled, within a sample a band.
        let drawn: f64 = got.iter().map(|b| (b.to - b.from) as f64 * f64::from(b.share)).sum::<f64>() / S as f64;
        assert!((drawn - 2.0).abs() <= 0.1 * got.len() as f64 + 0.1, "{columns} columns: {drawn} s of {got:?}");
    }
}

#[test]
fn a_view_inside_a_run_is_covered_whole() {
    let (store, id) = store_of(two_runs);
    // Between two samples of the first run: no sample in view, the state held since 1.2 s.
    let got = bands_at(&store, id, 1_230 * MS, 1_270 * MS, 400);
    assert_eq!(got, [Band { from: 1_230 * MS, to: 1_270 * MS, mask: 1, share: 1.0 }]);
    // From inside the run to past its end: the band starts at the view's edge.
    let got = bands_at(&store, id, 1_550 * MS, 3 * S, 400);
    assert_eq!(got, [Band { from: 1_550 * MS, to: 2 * S, mask: 1, share: 1.0 }]);
    // A clear view shows none.
    assert_eq!(bands_at(&store, id, 3 * S, 4 * S, 400), []);
}

#[test]
fn a_change_of_reasons_starts_a_new_band() {
    // PL1 from 1 s, thermal too from 2 s, all clear at 3 s.
    let (store, id) = store_of(|t| {
        if t >= 3 * S {
            0
        } else if t >= 2 * S {
            9
        } else {
            u32::from(t >= S)
        }
    });
    let got = bands_at(&store, id, 0, 8 * S, 800);
    let want = [Band { from: S, to: 2 * S, mask: 1, share: 1.0 }, Band { from: 2 * S, to: 3 * S, mask: 9, share: 1.0 }];
    assert_eq!(got, want);
}

#[test]
fn a_run_set_at_the_newest_sample_ends_there() {
    let (store, id) = store_of(|t| u32::from(t >= 7 * S));
    assert_eq!(bands_at(&store, id, 0, 9 * S, 900), [Band { from: 7 * S, to: 8 * S, mask: 1, share: 1.0 }]);
    // With samples after the view, it runs to the view's edge.
    assert_eq!(bands_at(&store, id, 0, 7_500 * MS, 750), [Band { from: 7 * S, to: 7_500 * MS, mask: 1, share: 1.0 }]);
}

/// In a pane of several devices a band's label names its device: painted, as the window paints it.
#[test]
fn a_band_names_its_device_when_given_one() {
    let (store, id) = store_of(two_runs);
    let names = vec![(0, "average power cap (PL1)".to_owned())];
    let ctx = egui::Context::default();
    let input = egui::RawInput {
        screen_rect: Some(Rect::from_min_size(egui::pos2(0.0, 0.0), egui::vec2(800.0, 200.0))),
        ..Default::default()
    };
    let texts = |device: Option<&str>| {
        let mut out = ctx.run_ui(input.clone(), |ui| {
            let frame = Rect::from_min_size(egui::pos2(0.0, 0.0), egui::vec2(800.0, 200.0));
            let bounds = egui_plot::PlotBounds::from_min_max([0.0, 0.0], [TimeAxis::of(&store).x(8 * S), 1.0]);
            let t = PlotTransform::new(frame, bounds, false);
            let series = [Throttled { id, names: names.clone(), device: device.map(str::to_owned) }];
            paint(ui, frame, &t, &store, &series);
        });
        out.textures_delta.clear();
        let mut found = Vec::new();
        for c in out.shapes {
            if let egui::Shape::Text(t) = c.shape {
                found.push(t.galley.text().to_owned());
            }
        }
        found
    };
    assert_eq!(texts(Some("ze-sim NPU")), ["ze-sim NPU · average power cap (PL1)"; 2], "both runs, named");
    assert_eq!(texts(None), ["average power cap (PL1)"; 2]);
    assert_eq!(band_label(1, &names, Some("GPU")), "GPU · average power cap (PL1)");
}
