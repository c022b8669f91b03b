//! The phase table and the A/B cursors, driven through egui_kittest on the example recording:
//! the table's numbers equal a computation over the session's own samples, it sorts by a
//! column and copies as CSV and Markdown; cursors set with the A/B keys, Shift+click and a drag
//! read the stored samples, and their span is a row of the table.

use std::sync::Arc;

use egui::{Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use zescope_model::session::Session;
use zescope_model::view::phases::{Column, PhaseRow};
use zescope_window::ZescopeApp;
use zescope_window::dialogs::ScriptedDialogs;
use zescope_window::settings::Settings;

use crate::support::example_session as example;
use zescope_model::view::TimeAxis;

/// An app showing the example recording, fitted whole.
fn opened() -> Harness<'static, ZescopeApp> {
    let mut h = crate::support::showing(&example(), Settings::default(), [1400.0, 900.0], Some(0.05));
    h.step();
    h
}

/// The samples of `metric` in the example session, as saved: (t_ns, value) rows.
fn saved(metric: &str) -> Vec<(i64, f64)> {
    let s: Session = zescope_model::session::load(&example()).unwrap();
    let st = &s.streams[0];
    let n = st.meta.series.len();
    let k = st.meta.series.iter().position(|m| m.metric == metric).unwrap();
    let raw = &st.data.raw;
    raw.timestamps.iter().enumerate().map(|(i, &t)| (t, raw.values[i * n + k])).collect()
}

fn row<'a>(rows: &'a [PhaseRow], phase: &str, series: &str) -> &'a PhaseRow {
    rows.iter().find(|r| r.phase == phase && r.series == series).unwrap_or_else(|| panic!("no row {phase} {series}"))
}

fn copied(h: &Harness<'_, ZescopeApp>) -> Option<String> {
    h.output().platform_output.commands.iter().find_map(|c| match c {
        egui::OutputCommand::CopyText(t) => Some(t.clone()),
        _ => None,
    })
}

fn open_table(h: &mut Harness<'_, ZescopeApp>) {
    h.get_by_label("View").click();
    h.run();
    h.get_by_label("Phase table").click();
    h.run();
    assert!(h.state().windows.phases.open);
}

#[test]
fn the_phase_table_shows_sorts_and_copies_what_the_samples_say() {
    let mut h = opened();
    open_table(&mut h);
    let rows = h.state().windows.phases.table.rows.clone();
    assert_eq!(rows.len(), 5, "one row per series for the visible range");

    // The visible range is the whole recording: a gauge's mean is the mean of its samples,
    // a cumulative counter's total the last total minus the first.
    let freq = saved("GpuFrequency");
    let mean = freq.iter().map(|s| s.1).sum::<f64>() / freq.len() as f64;
    let r = row(&rows, "visible", "ComputeBasic/GpuFrequency");
    assert!((r.mean - mean).abs() < 1e-9 * mean, "{} vs {mean}", r.mean);
    assert_eq!(r.samples, freq.len() as u64);
    let busy = saved("GpuBusyCycles");
    let r = row(&rows, "visible", "ComputeBasic/GpuBusyCycles");
    assert_eq!(r.total, Some(busy.last().unwrap().1 - busy[0].1));
    let power = saved("GpuPower");
    let r = row(&rows, "visible", "ComputeBasic/GpuPower");
    let watts = power.iter().map(|s| s.1).sum::<f64>() / power.len() as f64;
    assert!((r.power_w.unwrap() - watts).abs() < 1e-9 * watts);
    assert!((r.energy_j.unwrap() - watts * r.measured_s).abs() < 1e-6 * watts * r.measured_s);
    let span = (power.last().unwrap().0 - power[0].0) as f64 / 1e9;
    assert!((r.measured_s - span).abs() < 1e-9, "the samples' span: {} s against {span} s", r.measured_s);

    // Sorting: a click on "mean" sorts ascending, a second click descending.
    // (The legends under the panes have a "mean" heading too: the table's comes last.)
    h.get_all_by_label("mean").last().expect("a mean heading").click();
    h.run();
    let means: Vec<f64> = h.state().windows.phases.table.rows.iter().map(|r| r.mean).collect();
    assert!(means.windows(2).all(|w| w[0] <= w[1]), "ascending: {means:?}");
    h.get_by_label("mean (up)").click();
    h.run();
    let means: Vec<f64> = h.state().windows.phases.table.rows.iter().map(|r| r.mean).collect();
    assert!(means.windows(2).all(|w| w[0] >= w[1]), "descending: {means:?}");
    assert_eq!(h.state().windows.phases.sort, Some((Column::Mean, false)));

    // Copy CSV: a header, then the rows in the order shown, numbers as computed.
    h.get_by_label("Copy CSV").click();
    h.step();
    let csv = copied(&h).expect("Copy CSV put text on the clipboard");
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("phase,start_s,duration_s,measured_s,series,mean,min,max,total"), "{}", lines[0]);
    assert_eq!(lines.len(), 6);
    let first = &h.state().windows.phases.table.rows[0];
    let cells: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(cells[4], first.series);
    assert_eq!(cells[5].parse::<f64>().unwrap(), first.mean);
    h.get_by_label("Copy Markdown").click();
    h.step();
    let md = copied(&h).expect("Copy Markdown put text on the clipboard");
    assert!(md.starts_with("| phase | start_s |") && md.lines().nth(1).unwrap().starts_with("|---|"), "{md}");
    assert_eq!(md.lines().count(), 7);
}

/// A cursor past the recording's last sample reads that sample, and says how far it is instead
/// of passing it off as the value at the cursor; B − A is not given then (it was the difference to
/// a value seconds before B).
#[test]
fn a_cursor_past_the_data_says_how_old_its_value_is_and_gives_no_difference() {
    use zescope_model::view::cursors::Which;
    let mut h = opened();
    let freq = saved("GpuFrequency");
    let (mid, last) = (freq[freq.len() / 2], freq[freq.len() - 1]);
    h.state_mut().cursors.set(Which::A, mid.0);
    h.state_mut().cursors.set(Which::B, last.0 + 5_000_000_000);
    h.step();
    h.step();
    let st = h.state();
    let rows = st.cursors.readout(&st.store, &st.state.ingest.series);
    let r = rows.iter().find(|r| r.series == "ComputeBasic/GpuFrequency").unwrap();
    assert_eq!((r.at_a, r.at_b), (Some(mid.1), Some(last.1)), "the nearest samples");
    assert_eq!((r.far_a.as_deref(), r.far_b.as_deref()), (None, Some("5.0 s before")));
    assert_eq!(r.diff(), None, "no B − A where B read a sample 5 s before it");
    assert!(h.query_all_by_label_contains("(5.0 s before)").count() >= 1, "the readout says so");
}

/// Screen x of plot x `x` on a plot spanning `frame`, the view showing `range`.
fn screen_x(frame: egui::Rect, range: (f64, f64), x: f64) -> f32 {
    frame.left() + ((x - range.0) / (range.1 - range.0)) as f32 * frame.width()
}

#[test]
fn cursors_read_the_stored_samples_and_their_span_is_a_phase() {
    let mut h = opened();
    let frame = h.state().plot_frames.iter().find_map(|(_, r)| *r).expect("a plot");
    let y = frame.center().y;
    h.hover_at(Pos2::new(frame.left() + frame.width() * 0.25, y));
    h.step();
    h.key_press(egui::Key::A);
    h.step();
    h.hover_at(Pos2::new(frame.left() + frame.width() * 0.75, y));
    h.step();
    h.key_press(egui::Key::B);
    h.step();
    h.step();
    let c = h.state().cursors;
    let (a, b) = (c.a.expect("A set by its key"), c.b.expect("B set by its key"));
    assert!(a < b);

    // The readout's values are the saved samples nearest each cursor.
    let freq = saved("GpuFrequency");
    let near = |t: i64| freq.iter().min_by_key(|s| (s.0 - t).unsigned_abs()).unwrap().1;
    let a_state = h.state();
    let rows = c.readout(&a_state.store, &a_state.state.ingest.series);
    let r = rows.iter().find(|r| r.series == "ComputeBasic/GpuFrequency").unwrap();
    assert_eq!((r.at_a, r.at_b), (Some(near(a)), Some(near(b))));
    assert_eq!(r.diff(), Some(near(b) - near(a)));
    assert!(h.query_by_label_contains("Δt = ").is_some(), "the readout window shows Δt");
    assert!(h.query_by_label("B − A").is_some(), "with a column of differences");

    // The span A..B is a phase of the table, as long as the cursors are apart.
    h.state_mut().windows.phases.open = true;
    h.run();
    let rows = h.state().windows.phases.table.rows.clone();
    let span = row(&rows, "A..B", "ComputeBasic/GpuFrequency");
    assert!((span.duration_s - (b - a) as f64 * 1e-9).abs() < 1e-12);
    let inside: Vec<f64> = freq.iter().filter(|s| s.0 >= a && s.0 <= b).map(|s| s.1).collect();
    assert_eq!(span.samples, inside.len() as u64);
    assert_eq!(span.max, inside.iter().copied().fold(f64::MIN, f64::max));

    // A drag that starts on A's line moves A, not the time axis: in a pane below the floating
    // windows, which open in the panes' area.
    let below =
        ["Phase table", "A/B cursors"].map(|w| h.get_by_label(w).rect().bottom()).into_iter().fold(0.0, f32::max);
    let y =
        h.state().plot_frames.iter().find_map(|(_, r)| r.filter(|r| r.top() > below)).expect("a pane below").center().y;
    let range =
        zescope_model::view::TimeView::range(&h.state().view, zescope_model::view::data_x(&h.state().store)).unwrap();
    let ax = screen_x(frame, range, TimeAxis::of(&h.state().store).x(a));
    let to = frame.left() + frame.width() * 0.5;
    h.hover_at(Pos2::new(ax, y));
    h.step();
    h.event(egui::Event::PointerButton {
        pos: Pos2::new(ax, y),
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.step();
    for k in 1..=6 {
        h.hover_at(Pos2::new(ax + (to - ax) * k as f32 / 6.0, y));
        h.step();
    }
    h.event(egui::Event::PointerButton {
        pos: Pos2::new(to, y),
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.step();
    h.step();
    let moved = h.state().cursors.a.unwrap();
    let want = TimeAxis::of(&h.state().store).ns(range.0 + (range.1 - range.0) * 0.5);
    assert!((moved - want).abs() < ((range.1 - range.0) * 1e9 / 200.0) as i64, "A dragged to the middle");
    let after =
        zescope_model::view::TimeView::range(&h.state().view, zescope_model::view::data_x(&h.state().store)).unwrap();
    assert_eq!(after, range, "the drag did not pan");

    // Shift+click moves the nearer cursor (B, at three quarters) to where it is clicked.
    let at = Pos2::new(frame.left() + frame.width() * 0.9, y);
    h.hover_at(at);
    h.step();
    h.event(egui::Event::ModifiersChanged(Modifiers::SHIFT));
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: at,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::SHIFT,
        });
        h.step();
    }
    h.event(egui::Event::ModifiersChanged(Modifiers::NONE));
    h.step();
    let c = h.state().cursors;
    assert!(c.b.unwrap() > b, "B moved right");
    assert_eq!(c.a, Some(moved), "A stayed");
}

/// `(t0, t1, columns)` the first pane's envelopes of the data and of the comparison asked for.
fn queries(h: &mut Harness<'_, ZescopeApp>) -> ((i64, i64, usize), (i64, i64, usize)) {
    let id = h.state().panes.arrangement.panes[0].id;
    let main = h.state_mut().panes.plot(id).last_query().expect("the pane drew its data");
    let cmp =
        h.state().comparison.as_ref().expect("a comparison").last_query(id).expect("the pane drew the comparison");
    (main, cmp)
}

#[test]
fn a_comparison_run_is_overlaid_shifted_tabulated_and_saved_as_a_reference() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.ron");
    std::fs::copy(example(), &other).unwrap();
    let mut h = opened();
    h.state_mut().files.dialogs = Box::new(Arc::new(ScriptedDialogs::answering([Some(other.clone())])));
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Compare with…").click();
    h.run();
    assert!(h.state().comparison.is_some(), "File → Compare with… opened the other session");
    assert!(h.query_by_label("other.ron").is_some(), "the comparison bar names it");
    let n = h.state().state.ingest.series.len();
    assert!(n > 1);
    h.get_by_label(&format!("{n} series in common"));

    // The same recording, aligned on its start: the overlay asks for exactly the data's range.
    let (main, cmp) = queries(&mut h);
    assert_eq!(main, cmp);

    // An offset of 1.5 s shows the comparison 1.5 s later: the same pixels show its samples
    // from 1.5 s earlier on its own clock.
    h.state_mut().comparison.as_mut().unwrap().offset_s = 1.5;
    h.run();
    let (main, cmp) = queries(&mut h);
    assert!((cmp.0 - (main.0 - 1_500_000_000)).abs() <= 1 && (cmp.1 - (main.1 - 1_500_000_000)).abs() <= 1);

    // Aligned on a marker both sessions hold: the data's M1 one second after its start, the
    // comparison's two seconds after its start, so the comparison moves one second earlier
    // (and the offset still applies).
    let (lo, _) = h.state().store.total_time_range().unwrap();
    h.state_mut().markers.push(zescope_model::view::Mark {
        t_ns: lo + 1_000_000_000,
        label: "M1".into(),
        span: zescope_model::view::Span::Instant,
    });
    {
        let c = h.state_mut().comparison.as_mut().unwrap();
        let (c_lo, _) = c.store.total_time_range().unwrap();
        c.markers.push(zescope_model::session::Marker {
            t_ns: c_lo + 2_000_000_000,
            label: "M1".into(),
            span: Default::default(),
        });
        c.align_marker = Some("M1".into());
        c.offset_s = 0.25;
    }
    h.run();
    assert!(h.query_by_value("marker M1").is_some(), "the comparison bar shows the shared marker it aligns on");
    let (main, cmp) = queries(&mut h);
    assert!((cmp.0 - (main.0 + 750_000_000)).abs() <= 1, "{cmp:?} vs {main:?}");
    {
        let c = h.state_mut().comparison.as_mut().unwrap();
        c.align_marker = None;
        c.markers.clear();
    }
    h.state_mut().markers.clear();

    // The phase table gets the comparison's columns; the same samples compare as no change.
    h.state_mut().comparison.as_mut().unwrap().offset_s = 0.0;
    h.state_mut().windows.phases.open = true;
    h.run();
    assert!(h.query_by_label("change").is_some() && h.query_by_label("mean (cmp)").is_some());
    let rows = h.state().windows.phases.table.rows.clone();
    let r = row(&rows, "visible", "ComputeBasic/GpuFrequency");
    assert_eq!(r.other.as_ref().map(|o| o.mean), Some(r.mean));
    assert_eq!(r.change_pct(), Some(0.0));
    h.state_mut().comparison.as_mut().unwrap().offset_s = 1.5;
    h.run();
    let rows = h.state().windows.phases.table.rows.clone();
    let r = row(&rows, "visible", "ComputeBasic/GpuFrequency");
    assert!(r.other.as_ref().unwrap().samples < r.samples, "shifted, part of the comparison falls outside");

    // Saved with the session as a reference (path and offset), reopened with it.
    let saved = dir.path().join("with-comparison.ron");
    h.state_mut().perform(Some(zescope_window::files::FileAction::Save(saved.clone())));
    crate::support::pump(&mut h, "the save", |a| a.files.current.as_deref() == Some(saved.as_path()));
    let s = zescope_model::session::load(&saved).unwrap();
    let reference = s.comparison.expect("the comparison is saved");
    assert_eq!(reference.path, other.display().to_string());
    assert_eq!(reference.offset_s, 1.5);

    let reopen = |h: &mut Harness<'_, ZescopeApp>| {
        h.state_mut().comparison = None;
        h.state_mut().perform(Some(zescope_window::files::FileAction::Open(saved.clone())));
        crate::support::pump(h, "the reopened session", |a| a.files.current.as_deref() == Some(saved.as_path()));
        h.run();
    };
    reopen(&mut h);
    let c = h.state().comparison.as_ref().expect("reopened with its comparison");
    assert_eq!((c.path.clone(), c.offset_s), (other.clone(), 1.5));

    // A comparison that shares no series with the data (another device's run) says so, rather
    // than overlaying nothing without a word, and its note does not widen the panes.
    let rights = |h: &Harness<'_, ZescopeApp>| -> Vec<f32> {
        h.state().plot_frames.iter().filter_map(|(_, r)| r.map(|r| r.right())).collect()
    };
    let before = rights(&h);
    let c = h.state_mut().comparison.as_mut().unwrap();
    let keys: Vec<_> = c.series.keys().cloned().collect();
    for k in keys {
        let e = c.series.remove(&k).unwrap();
        c.series.insert(zescope_model::view::SeriesKey { device: "another device".into(), ..k }, e);
    }
    h.run();
    h.get_by_label_contains("no series in common");
    assert_eq!(rights(&h), before, "the plots keep their width");
    assert!(
        h.query_by_label_contains("series in common")
            .is_some_and(|_| h.query_by_label(&format!("{n} series in common")).is_none())
    );

    // The comparison's file is gone: the session opens, a banner says what is missing.
    std::fs::remove_file(&other).unwrap();
    reopen(&mut h);
    assert!(h.state().comparison.is_none());
    assert!(h.query_by_label_contains("cannot compare with").is_some(), "a banner names the missing file");
}

/// While live, the phase table's numbers change every half second; its headings stay put.
#[test]
fn the_phase_tables_headings_stay_put_while_live() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.get_by_label("Start").click();
    crate::support::pump(&mut h, "samples", |a| a.state.ingest.samples_total > 20);
    h.state_mut().windows.phases.open = true;
    h.step();
    h.step();
    let headings = |h: &Harness<'_, ZescopeApp>| -> Vec<egui::Rect> {
        ["phase", "start", "duration", "total", "energy", "mean power"]
            .iter()
            .map(|l| h.get_by_label(l).rect())
            .collect()
    };
    let first = headings(&h);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let mut frames = 0;
    while std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        h.step();
        frames += 1;
        assert_eq!(headings(&h), first, "frame {frames}: the headings moved");
    }
    // Headings are words, not the CSV's column names: a cell of "energy" says its unit ("20.1 kJ")
    // where "energy_J" claimed joules.
    for csv_name in ["start_s", "duration_s", "measured_s", "energy_J", "mean_power_W"] {
        assert!(h.query_by_label(csv_name).is_none(), "the heading {csv_name}");
    }
    // The start reads as a time, not as ten decimals.
    assert!(h.query_by_label_contains(".000000").is_none());
    crate::support::quit_discarding(&mut h);
}

/// The phase table's headings stay at its top while its rows scroll under them.
#[test]
fn the_phase_tables_headings_stay_while_its_rows_scroll() {
    let sim = crate::support::sim(|_| {});
    let mut h = crate::support::harness_on(&sim);
    h.get_by_label("Start").click();
    crate::support::pump(&mut h, "many series", |a| {
        a.state.ingest.samples_total > 20 && a.state.ingest.series.len() > 12
    });
    h.state_mut().windows.phases.open = true;
    for _ in 0..4 {
        h.step();
    }
    let heading = h.get_by_label("duration").rect();
    let first_row = |h: &Harness<'_, ZescopeApp>| {
        h.get_all_by_label("visible").map(|n| n.rect().top()).fold(f32::INFINITY, f32::min)
    };
    let before = first_row(&h);
    let over_rows = egui::pos2(heading.center().x, heading.bottom() + 80.0);
    crate::support::wheel(&mut h, over_rows, -200.0, egui::Modifiers::NONE);
    assert!(first_row(&h) < before - 50.0, "the rows scrolled: {before} -> {}", first_row(&h));
    assert_eq!(h.get_by_label("duration").rect(), heading, "the headings stayed");
    crate::support::quit_discarding(&mut h);
}

/// In the dark theme the comparison's shade (halfway to the background) is dimmer than the
/// data's colours: where the two runs' lines meet, the data's line is the one on top. The same
/// recording compared with itself lines up sample for sample, so every pixel of the overlay is
/// also a pixel of the data; painted in the frame's order, the data's colour must win there.
#[test]
fn the_comparison_is_drawn_under_the_data_in_the_dark_theme() {
    use egui::epaint::{Mesh, Shape};
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.ron");
    std::fs::copy(example(), &other).unwrap();
    let settings = Settings { theme: zescope_window::settings::Theme::Dark, ..Settings::default() };
    let mut h = crate::support::showing(&example(), settings, [1400.0, 900.0], Some(0.05));
    h.step();
    h.state_mut().compare_with(&other, 0.0, None);
    h.run();
    h.step();
    assert!(h.state().comparison.is_some(), "the comparison is open");
    let bg = h.ctx.global_style().visuals.extreme_bg_color;
    assert!(h.ctx.global_style().visuals.dark_mode, "the dark theme");

    let mut shapes = Vec::new();
    fn flatten(s: Shape, out: &mut Vec<Shape>) {
        match s {
            Shape::Vec(v) => v.into_iter().for_each(|s| flatten(s, out)),
            s => out.push(s),
        }
    }
    h.output().shapes.iter().for_each(|c| flatten(c.shape.clone(), &mut shapes));
    // The plots' line and band meshes (untextured, one colour each), in paint order.
    let meshes: Vec<(&Mesh, egui::Color32)> = shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Mesh(m) if m.texture_id == egui::TextureId::default() && m.indices.len() >= 30 => {
                let c = m.vertices.first()?.color;
                m.vertices.iter().all(|v| v.color == c).then_some((&**m, c))
            }
            _ => None,
        })
        .collect();
    let halfway = |c: egui::Color32| {
        let mix = |a: u8, b: u8| ((a as u16 + b as u16) / 2) as u8;
        egui::Color32::from_rgb(mix(c.r(), bg.r()), mix(c.g(), bg.g()), mix(c.b(), bg.b()))
    };
    let colors: std::collections::BTreeSet<[u8; 4]> = meshes.iter().map(|(_, c)| c.to_array()).collect();
    let pairs: Vec<(egui::Color32, egui::Color32)> = colors
        .iter()
        .map(|c| egui::Color32::from_rgba_premultiplied(c[0], c[1], c[2], c[3]))
        .filter(|&c| colors.contains(&halfway(c).to_array()) && halfway(c) != c)
        .map(|c| (c, halfway(c)))
        .collect();
    assert!(!pairs.is_empty(), "the data's lines and the comparison's shades of them are drawn: {colors:?}");

    // The colour painted last at each pixel.
    let mut top: std::collections::HashMap<(i32, i32), egui::Color32> = Default::default();
    for (m, c) in &meshes {
        for p in crate::envelope_plot::covered_pixels(m) {
            top.insert((p.0 as i32, p.1 as i32), *c);
        }
    }
    for (ours, theirs) in pairs {
        let covered: std::collections::HashSet<(i32, i32)> = meshes
            .iter()
            .filter(|(_, c)| *c == ours)
            .flat_map(|(m, _)| crate::envelope_plot::covered_pixels(m))
            .map(|p| (p.0 as i32, p.1 as i32))
            .collect();
        let hidden = covered.iter().filter(|p| top.get(p) == Some(&theirs)).count();
        assert!(covered.len() > 100, "{ours:?} is drawn ({} pixels)", covered.len());
        assert_eq!(
            hidden,
            0,
            "{hidden} of the {} pixels of the data's {ours:?} are under the comparison's {theirs:?}",
            covered.len()
        );
    }
}
