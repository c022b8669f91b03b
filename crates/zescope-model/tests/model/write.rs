//! Exports read back: the PNG decodes at the requested size, the SVG parses and holds one path
//! per visible series (in its colour) and the axis labels, the CSV has a row per sample in range
//! and a column per visible series with the store's values.

use std::collections::BTreeMap;

use zescope_model::view::TimeAxis;
use zescope_model::view::panes::{Arrangement, PaneSpec};
use zescope_model::view::series::{SeriesEntry, SeriesKey};
use zescope_model::write::{self, WriteSpec};
use zescope_sampler::SeriesInfo;
use zescope_sampler::layout::Kind;
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};

const MS: i64 = 1_000_000;

struct Fixture {
    store: Store,
    arrangement: Arrangement,
    series: BTreeMap<SeriesKey, SeriesEntry>,
}

fn key(m: &str) -> SeriesKey {
    SeriesKey { device: "dev".into(), group: "g".into(), metric: m.into() }
}

/// Two streams (two groups): "power" and "temp" gauges in one, a cumulative "bytes" counter in
/// the other, sampled at different times. Pane 1: power + temp (temp hidden); pane 2: bytes.
fn fixture() -> Fixture {
    let mut store = Store::new(usize::MAX);
    let gauge = |n: &str, u: &str| SeriesDesc { name: n.into(), unit: u.into(), kind: SeriesKind::Gauge };
    let a = store.begin_stream(StreamDesc { name: "a".into(), series: vec![gauge("power", "W"), gauge("temp", "C")] });
    let b = store.begin_stream(StreamDesc {
        name: "b".into(),
        series: vec![SeriesDesc {
            name: "bytes".into(),
            unit: "B".into(),
            kind: SeriesKind::Cumulative { wrap: None },
        }],
    });
    for i in 0..3000i64 {
        store.append(a, &[i * MS], &[100.0 + (i as f64 * 0.01).sin() * 20.0, 40.0 + i as f64 * 1e-3]).unwrap();
        if i % 2 == 0 {
            store.append(b, &[i * MS + 300_000], &[(i * 4096) as f64]).unwrap();
        }
    }
    let info = |n: &str, u: &str, kind| SeriesInfo {
        name: n.into(),
        description: String::new(),
        unit: u.into(),
        kind,
        wrap: None,
    };
    let mut series = BTreeMap::new();
    series.insert(
        key("power"),
        SeriesEntry { info: info("power", "W", Kind::Gauge), ids: vec![store.series_id(a, 0).unwrap()] },
    );
    series.insert(
        key("temp"),
        SeriesEntry { info: info("temp", "C", Kind::Gauge), ids: vec![store.series_id(a, 1).unwrap()] },
    );
    series.insert(
        key("bytes"),
        SeriesEntry { info: info("bytes", "B", Kind::Cumulative), ids: vec![store.series_id(b, 0).unwrap()] },
    );
    let arrangement = Arrangement {
        panes: vec![
            PaneSpec { id: 1, series: vec![key("power"), key("temp")] },
            PaneSpec { id: 2, series: vec![key("bytes")] },
        ],
        next_id: 2,
        hidden: [key("temp")].into_iter().collect(),
        colors: [(key("power"), [200, 10, 10]), (key("temp"), [10, 200, 10]), (key("bytes"), [10, 10, 200])]
            .into_iter()
            .collect(),
    };
    Fixture { store, arrangement, series }
}

#[test]
fn png_decodes_at_the_requested_size() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.png");
    let spec = WriteSpec::from_arrangement(&f.arrangement, &f.series, None, None);
    write::png(&f.store, &spec, &path, (900, 700)).unwrap();
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    assert_eq!((frame.width, frame.height), (900, 700));
    let px = &buf[..frame.buffer_size()];
    let has = |rgb: [u8; 3]| px.chunks(3).any(|p| p == rgb);
    assert!(has([200, 10, 10]) && has([10, 10, 200]), "the visible series are drawn in their colours");
    assert!(!has([10, 200, 10]), "the hidden series is not drawn");
    assert!(write::png(&f.store, &spec, &path, (10, 10)).is_err(), "absurd sizes are refused");
}

#[test]
fn svg_has_one_path_per_visible_series_and_the_axis_labels() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.svg");
    let spec = WriteSpec::from_arrangement(&f.arrangement, &f.series, None, None);
    write::svg(&f.store, &spec, &path, (1000, 800)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("valid XML");
    let paths = |color: &str| {
        doc.descendants().filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some(color)).count()
    };
    assert_eq!(paths("#C80A0A"), 1, "power");
    assert_eq!(paths("#0A0AC8"), 1, "bytes");
    assert_eq!(paths("#0AC80A"), 0, "temp is hidden");
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_owned())
        .collect();
    // Titles and axis names say the unit the ticks print (2 MB/s of bytes: "MB/s", not "B/s").
    for want in ["time since the first sample", "Pane 1 — W", "W", "Pane 2 — MB/s", "MB/s", "g/power", "g/bytes"] {
        assert!(texts.iter().any(|t| t == want), "{want:?} in {texts:?}");
    }
    assert!(!texts.iter().any(|t| t == "g/temp"), "no legend entry for the hidden series");

    // One pane only.
    let one = WriteSpec::from_arrangement(&f.arrangement, &f.series, Some(&[1]), None);
    write::svg(&f.store, &one, &path, (1000, 400)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("#0A0AC8") && !text.contains("#C80A0A"));
}

#[test]
fn csv_has_the_samples_in_range_with_the_stores_values() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.csv");
    let range = Some((1000 * MS, 1999 * MS));
    let spec = WriteSpec::from_arrangement(&f.arrangement, &f.series, None, range);
    let rows = write::csv(&f.store, &spec, &path).unwrap();
    let mut r = csv::Reader::from_path(&path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(header, ["time_s", "g/power [W]", "g/bytes [B]"], "visible series, stored units");
    let records: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), rows);
    assert_eq!(rows, 1000 + 500, "1000 samples of stream a and 500 of stream b in range");
    // Every value equals the store's sample at that time.
    let mut expected = Vec::new();
    let ids = [f.series[&key("power")].ids[0], f.series[&key("bytes")].ids[0]];
    for (col, id) in ids.iter().enumerate() {
        f.store.for_each_raw_row(id.stream(), |t, row| {
            if (1000 * MS..=1999 * MS).contains(&t) {
                expected.push((t, col, row[id.index()]));
            }
        });
    }
    expected.sort_by_key(|e| e.0);
    for (rec, (t, col, v)) in records.iter().zip(&expected) {
        let time: f64 = rec[0].parse().unwrap();
        assert!((time - TimeAxis::of(&f.store).x(*t)).abs() < 1e-9);
        assert_eq!(rec[1 + col].parse::<f64>().unwrap(), *v, "at {t}");
        assert!(rec[2 - col].is_empty(), "the other stream's cell is empty");
    }
}

#[test]
fn markers_are_drawn_on_every_pane_as_bands_and_lines_with_their_names() {
    use zescope_model::view::{Markers, markers::mark_rgb};
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.svg");
    let mut m = Markers::default();
    m.begin(500 * MS, "solve");
    m.end(1500 * MS, "solve");
    m.instant(2000 * MS, "tick");
    m.instant(-5000 * MS, "before the range");
    let mut spec = WriteSpec::from_arrangement(&f.arrangement, &f.series, None, None);
    spec.markers = m.marks().to_vec();
    write::svg(&f.store, &spec, &path, (1000, 800)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("valid XML");
    let hex = |[r, g, b]: [u8; 3]| format!("#{r:02X}{g:02X}{b:02X}");
    let (band, line) = (hex(mark_rgb(&m.marks()[0])), hex(mark_rgb(&m.marks()[1])));
    let bands =
        doc.descendants().filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(band.as_str())).count();
    let lines = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some(line.as_str()))
        .count();
    assert_eq!((bands, lines), (2, 2), "a band and a line on each of the two panes");
    let named =
        |t: &str| doc.descendants().filter(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(t)).count();
    assert_eq!((named("solve"), named("tick"), named("before the range")), (2, 2, 0));
    // The band spans the range: its width is a third of the 3 s shown, give or take the margins.
    let widths: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(band.as_str()))
        .map(|n| n.attribute("width").unwrap().parse().unwrap())
        .collect();
    assert!(widths.iter().all(|w| (200.0..330.0).contains(w)), "{widths:?}");
}

#[test]
fn an_svg_of_100000_markers_holds_at_most_one_line_per_pixel_column() {
    use zescope_model::view::Markers;
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.svg");
    let mut m = Markers::default();
    // As many as a recording keeps by default, all within the 3 s shown.
    for k in 0..100_000i64 {
        m.instant(k * 30_000, &format!("m{k}"));
    }
    assert_eq!(m.len(), 100_000);
    let mut spec = WriteSpec::from_arrangement(&f.arrangement, &f.series, None, None);
    spec.markers = m.marks().to_vec();
    write::svg(&f.store, &spec, &path, (1000, 800)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("valid XML");
    let lines = doc.descendants().filter(|n| n.has_tag_name("polyline")).count();
    // Two panes of under 1000 pixel columns each (and the series' own lines).
    assert!(lines <= 2 * 1000 + 10, "{lines} lines");
    assert!(text.len() < 2_000_000, "{} bytes", text.len());
}

/// The CSV of the visible data offers both: "as shown" holds what the window plots (a cumulative
/// counter's rate per second, headed with the plotted unit), "raw running totals" the stored
/// totals; the two are named so in the menu and the export options.
#[test]
fn csv_as_shown_holds_rates_raw_holds_running_totals() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let range = Some((1000 * MS, 1999 * MS));
    let spec = WriteSpec::from_arrangement(&f.arrangement, &f.series, None, range);
    let read = |values| {
        let path = dir.path().join(format!("{values:?}.csv"));
        write::csv_of(&f.store, &spec, &path, values).unwrap();
        let mut r = csv::Reader::from_path(&path).unwrap();
        let header: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
        let bytes: Vec<f64> = r.records().map(Result::unwrap).filter_map(|rec| rec[2].parse().ok()).collect();
        (header, bytes)
    };
    let (header, rates) = read(write::Values::Shown);
    assert_eq!(header, ["time_s", "g/power [W]", "g/bytes [B/s]"], "plotted units");
    // 8192 B every 2 ms: 4,096,000 B/s at every sample of the range.
    assert_eq!(rates.len(), 500);
    assert!(rates.iter().all(|&r| (r - 4_096_000.0).abs() < 1e-3), "{:?}", &rates[..5]);
    let (header, totals) = read(write::Values::Raw);
    assert_eq!(header, ["time_s", "g/power [W]", "g/bytes [B]"]);
    assert_eq!(totals[0], 1000.0 * 4096.0, "the running total at 1000 ms");
    let shown = write::format("csv-shown").expect("an export option --csv-shown");
    assert!(shown.name().contains("as shown"), "{}", shown.name());
    assert!(write::format("csv").unwrap().name().contains("raw running totals"));
}

/// Exported images draw throttle reasons as the window does: an amber band (its reasons named)
/// where the mask is set, nothing where it is clear. A state: drawn as steps.
#[test]
fn images_draw_the_throttle_bands() {
    let mut store = Store::new(usize::MAX);
    let desc = SeriesDesc { name: "GPU throttle reasons".into(), unit: String::new(), kind: SeriesKind::State };
    let s = store.begin_stream(StreamDesc { name: "Telemetry".into(), series: vec![desc] });
    // PL1 (bit 0) set from 4 s to 6 s of 10 s, clear elsewhere; a sample every 100 ms.
    for i in 0..=100i64 {
        let set = (40..60).contains(&i);
        store.append(s, &[i * 100 * MS], &[if set { 1.0 } else { 0.0 }]).unwrap();
    }
    let k = SeriesKey { device: "dev".into(), group: "Telemetry".into(), metric: "GPU throttle reasons".into() };
    let info = SeriesInfo {
        name: k.metric.clone(),
        description: zescope_sampler::telemetry::throttle_description(),
        unit: String::new(),
        kind: Kind::State,
        wrap: None,
    };
    let series: BTreeMap<SeriesKey, SeriesEntry> =
        [(k.clone(), SeriesEntry { info, ids: vec![store.series_id(s, 0).unwrap()] })].into_iter().collect();
    let arrangement = Arrangement {
        panes: vec![PaneSpec { id: 1, series: vec![k.clone()] }],
        next_id: 1,
        hidden: Default::default(),
        colors: [(k, [10, 10, 200])].into_iter().collect(),
    };
    let spec = WriteSpec::from_arrangement(&arrangement, &series, None, None);
    assert_eq!(spec.panes[0].series[0].throttle.len(), zescope_sampler::telemetry::THROTTLE_REASONS.len());
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("t.svg");
    write::svg(&store, &spec, &svg, (1000, 400)).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("average power cap (PL1)"), "the band names its reason");
    let png = dir.path().join("t.png");
    write::png(&store, &spec, &png, (1000, 400)).unwrap();
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    let (w, h) = (frame.width as usize, frame.height as usize);
    // Amber: red and green well above blue. Count amber pixels per column in the plot's middle row.
    let amber = |x: usize| {
        let p = &buf[(h / 2 * w + x) * 3..][..3];
        let (r, g, b) = (i32::from(p[0]), i32::from(p[1]), i32::from(p[2]));
        r > b + 20 && g > b + 5
    };
    let tinted: Vec<usize> = (0..w).filter(|&x| amber(x)).collect();
    assert!(tinted.len() > 100, "a band of about a fifth of the plot: {} columns", tinted.len());
    let (first, last) = (tinted[0], tinted[tinted.len() - 1]);
    assert!(last - first < w / 3, "one band, 4 s to 6 s of 10: columns {first}..{last}");
}
