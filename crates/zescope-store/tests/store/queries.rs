//! What the store answers, scenario by scenario: spikes at every zoom, the
//! level following the zoom, pauses, counter rates, non-finite values.

use crate::model::checks::check_draw_envelope;
use crate::model::{MS, desc, fill, sid};
use zescope_store::{Envelope, SeriesKind, Store};

const GAUGE: SeriesKind = SeriesKind::Gauge;

#[test]
fn a_single_sample_spike_shows_at_every_zoom_level() {
    let n = 300_000;
    let spike_at = 123_457;
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[GAUGE]));
    fill(&mut store, id, 0, n, 1, |i, _| if i == spike_at { 1e9 } else { (i % 7) as f64 });
    let s = sid(&store, id, 0);
    let t_spike = spike_at as i64 * MS;
    let mut env = Envelope::new();
    for columns in [1, 3, 64, 500, 1920, 7000] {
        for (t0, t1) in [
            (0, (n as i64 - 1) * MS),
            (t_spike - 50_000 * MS, t_spike + 10 * MS),
            (t_spike - 3 * MS, t_spike + 80_000 * MS),
            (t_spike, t_spike),
        ] {
            store.envelope(s, t0, t1, columns, &mut env);
            let hit = env.columns().iter().find(|c| c.max == 1e9);
            let c = hit.unwrap_or_else(|| panic!("spike lost at {columns} columns over {t0}..{t1}"));
            assert!(c.t_start <= t_spike && t_spike <= c.t_end);
            // Every other column stays at the true level.
            assert!(env.columns().iter().filter(|c| c.max == 1e9).count() == 1);
        }
    }
}

#[test]
fn columns_cost_buckets_not_samples_and_the_level_follows_the_zoom() {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[GAUGE]));
    fill(&mut store, id, 0, 1 << 20, 1, |i, _| i as f64);
    let s = sid(&store, id, 0);
    let mut env = Envelope::new();
    let end = ((1 << 20) - 1) * MS;
    store.envelope(s, 0, end, 1000, &mut env);
    assert_eq!(env.samples_per_bucket(), 256, "1M samples over 1000 px: 1048/px -> 256-sample buckets");
    assert!(env.columns().len() <= 1002);
    store.envelope(s, 0, end, 100, &mut env);
    assert_eq!(env.samples_per_bucket(), 4096);
    store.envelope(s, 1000 * MS, 1500 * MS, 1000, &mut env);
    assert_eq!(env.samples_per_bucket(), 1, "zoomed in: raw samples");
    assert_eq!(env.columns().len(), 503, "501 samples in range plus one either side");
}

#[test]
fn a_pause_is_never_inside_a_column_and_breaks_the_line() {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[GAUGE]));
    fill(&mut store, id, 0, 50_000, 1, |_, _| 1.0);
    store.mark_gap(id);
    let resume = 50_000 * MS + 60_000 * MS;
    fill(&mut store, id, resume, 50_000, 1, |_, _| 2.0);
    let s = sid(&store, id, 0);
    let mut env = Envelope::new();
    // 10 columns of 16 s: the 60 s pause falls inside what would be one bucket.
    for columns in [3, 10, 100, 2000] {
        store.envelope(s, 0, resume + 50_000 * MS, columns, &mut env);
        let cols = env.columns();
        let after = cols.iter().position(|c| c.t_start >= resume).expect("a column after the pause");
        assert!(cols[after].break_before, "{columns} columns: no break after the pause");
        assert_eq!(cols[after].t_start, resume);
        assert!(cols[..after].iter().all(|c| c.t_end < resume && c.max == 1.0));
        assert_eq!(cols.iter().filter(|c| c.break_before).count(), 1);
    }
}

#[test]
fn cumulative_counters_plot_as_rates_with_wraps_resets_and_gaps_handled() {
    let wrap = SeriesKind::Cumulative { wrap: Some(256.0) };
    let plain = SeriesKind::Cumulative { wrap: None };
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[wrap, plain]));
    // +10 per ms on both; the u8-like counter wraps at 256 (250 -> 4 at sample 6),
    // the other resets to 0 at sample 5.
    let ts: Vec<i64> = (0..8).map(|i| i * MS).collect();
    let mut vals = Vec::new();
    for i in 0..8i64 {
        vals.push(((200 + 10 * i) % 256) as f64);
        vals.push(if i < 5 { (1000 + 10 * i) as f64 } else { (10 * (i - 5)) as f64 });
    }
    store.append(id, &ts, &vals).unwrap();
    let (w, p) = (sid(&store, id, 0), sid(&store, id, 1));
    // First sample: no rate, but the raw total is there.
    assert_eq!(store.nearest(w, 0).unwrap().value, None);
    assert_eq!(store.nearest_raw(w, 0).unwrap().value, Some(200.0));
    assert_eq!(store.nearest_raw(w, 6 * MS).unwrap().value, Some(4.0));
    for i in 1..8 {
        assert_eq!(store.nearest(w, i * MS).unwrap().value, Some(10_000.0), "wrapping counter at {i}");
    }
    assert_eq!(store.nearest(p, 5 * MS).unwrap().value, None, "a reset has no rate");
    assert_eq!(store.nearest(p, 6 * MS).unwrap().value, Some(10_000.0));
    let st = store.stats(p, 0, 7 * MS);
    assert_eq!((st.samples, st.count, st.non_finite), (8, 6, 0));
    assert_eq!((st.min, st.max, st.mean), (10_000.0, 10_000.0, 10_000.0));
    // After a pause the first sample connects to nothing: no rate.
    store.mark_gap(id);
    store.append(id, &[100 * MS, 101 * MS], &[50.0, 5000.0, 60.0, 5010.0]).unwrap();
    assert_eq!(store.nearest(p, 100 * MS).unwrap().value, None);
    assert_eq!(store.nearest(p, 101 * MS).unwrap().value, Some(10_000.0));
    assert_eq!(store.series_desc(p).unwrap().plotted_unit(), "u/s");
}

#[test]
fn wrap_crossing_is_a_rate_not_a_drop() {
    let mut store = Store::new(1 << 30);
    let m = 4_294_967_296.0;
    let id = store.begin_stream(desc(&[SeriesKind::Cumulative { wrap: Some(m) }]));
    store.append(id, &[0, MS, 2 * MS], &[m - 1000.0, 3000.0, 7000.0]).unwrap();
    let s = sid(&store, id, 0);
    assert_eq!(store.nearest(s, MS).unwrap().value, Some(4000.0 * 1000.0));
    let mut env = Envelope::new();
    store.envelope(s, 0, 2 * MS, 10, &mut env);
    assert!(env.columns().iter().all(|c| c.count == 0 || c.min >= 0.0), "no negative rate at the wrap");
}

#[test]
fn non_finite_values_are_counted_and_never_merged() {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[GAUGE]));
    fill(&mut store, id, 0, 10_000, 1, |i, _| match i {
        100 => f64::NAN,
        200 => f64::INFINITY,
        300 => f64::NEG_INFINITY,
        _ => 1.0,
    });
    let s = sid(&store, id, 0);
    let mut env = Envelope::new();
    store.envelope(s, 0, 9_999 * MS, 1, &mut env);
    let c = env.columns()[0];
    assert_eq!((c.min, c.max, c.mean, c.non_finite, c.count), (1.0, 1.0, 1.0, 3, 9_997));
    let st = store.stats(s, 0, 250 * MS);
    assert_eq!((st.non_finite, st.count, st.max), (2, 249, 1.0));
    assert!(store.nearest(s, 100 * MS).unwrap().value.unwrap().is_nan());
}

#[test]
fn the_envelope_buffer_is_reused() {
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[GAUGE]));
    fill(&mut store, id, 0, 100_000, 1, |i, _| i as f64);
    let s = sid(&store, id, 0);
    let mut env = Envelope::new();
    store.envelope(s, 0, 99_999 * MS, 800, &mut env);
    let ptr = env.columns().as_ptr();
    for k in 0..50 {
        store.envelope(s, k * 1000 * MS, 99_999 * MS, 800, &mut env);
        assert_eq!(env.columns().as_ptr(), ptr, "the envelope reallocated");
    }
}

#[test]
fn the_origin_is_the_first_time_appended() {
    let mut store = Store::new(1 << 30);
    assert_eq!(store.origin_ns(), None, "none while empty");
    let id = store.begin_stream(desc(&[GAUGE]));
    store.append(id, &[5_000_000_000, 6_500_000_000], &[0.0, 1.0]).unwrap();
    assert_eq!(store.origin_ns(), Some(5_000_000_000));
    store.append(id, &[7_000_000_000], &[2.0]).unwrap();
    assert_eq!(store.origin_ns(), Some(5_000_000_000), "later samples leave it");
    assert_eq!(store.time_range(id), Some((5_000_000_000, 7_000_000_000)));
}

#[test]
fn drawing_bands_enclose_every_column_at_any_magnitude() {
    let n = 600_000;
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[GAUGE, GAUGE, GAUGE]));
    fill(&mut store, id, 0, n, 3, |i, s| match s {
        // A 1.5 GHz clock moving by fractions of a Hz: f32 alone would round it to 128 Hz.
        0 => 1.5e9 + ((i * 7919) % 1000) as f64 * 1e-3,
        // A wave with NaNs and one deep spike.
        1 if i % 50_000 == 7 => f64::NAN,
        1 if i == 345_678 => -1e12,
        1 => (i as f64 * 1e-3).sin(),
        // Tiny values, and stretches of only infinities (columns without a finite value).
        _ if i % 40_000 < 9_000 => f64::INFINITY,
        _ => 1e-20 * i as f64,
    });
    let mut env = Envelope::new();
    let end = (n as i64 - 1) * MS;
    let mut banded = 0;
    for s in 0..3 {
        let sid = sid(&store, id, s);
        for columns in [1, 7, 100, 1554] {
            for (t0, t1) in [(0, end), (end / 3, end), (12_345 * MS, 512_000 * MS)] {
                store.envelope(sid, t0, t1, columns, &mut env);
                banded += check_draw_envelope(&store, sid, &env) as usize;
            }
        }
    }
    assert!(banded > 0, "no query read the drawing bands");
}

#[test]
fn many_series_queried_at_once_equal_each_queried_alone() {
    // 16 series over 600 columns of pyramid nodes (~600 samples each): enough work that
    // `draw_envelopes` and `envelopes` split the series over two threads on a machine with two
    // cores (`zescope_store::par`).
    const COLS: usize = 600;
    let (n, k) = (400_000, 16);
    let mut store = Store::new(1 << 30);
    let kinds = [GAUGE; 16];
    let id = store.begin_stream(desc(&kinds));
    fill(&mut store, id, 0, n, k, |i, s| match s % 4 {
        0 => ((i * (s + 3)) % 1_009) as f64,
        1 if i % 7_777 == s => f64::NAN,
        1 => (i as f64 * 1e-3 * (s + 1) as f64).sin(),
        2 => 1.5e9 + (i % 1_000) as f64 * 1e-3,
        _ => -((i / (s + 1)) as f64),
    });
    let series: Vec<_> = (0..k).map(|s| sid(&store, id, s)).collect();
    assert!(
        zescope_store::par::worth_it(k * COLS) || zescope_store::par::cores() == 1,
        "the query is large enough to split"
    );
    let end = (n as i64 - 1) * MS;
    for (t0, t1) in [(0, end), (end / 5, end - 3 * MS)] {
        let mut together: Vec<Envelope> = (0..k).map(|_| Envelope::new()).collect();
        let mut alone = Envelope::new();
        for draw in [true, false] {
            if draw {
                store.draw_envelopes(&series, t0, t1, COLS, &mut together);
            } else {
                store.envelopes(&series, t0, t1, COLS, &mut together);
            }
            for (s, got) in series.iter().zip(&together) {
                let mut one = [Envelope::new()];
                if draw {
                    store.draw_envelopes(&[*s], t0, t1, COLS, &mut one);
                } else {
                    store.envelope(*s, t0, t1, COLS, &mut alone);
                    std::mem::swap(&mut one[0], &mut alone);
                }
                let bits = |e: &Envelope| {
                    e.columns()
                        .iter()
                        .map(|c| (c.t_start, c.t_end, c.min.to_bits(), c.max.to_bits(), c.count, c.samples))
                        .collect::<Vec<_>>()
                };
                assert_eq!(got.is_exact(), one[0].is_exact());
                assert_eq!(bits(got), bits(&one[0]), "series {s:?}, draw {draw}");
                assert!(got.columns().iter().any(|c| c.count > 0));
            }
        }
    }
}

/// A device cannot be busy for longer than the time that passed: a sample read early (1.07 ms of
/// busy time over 1 ms between the two samples' times) is drawn at 100 %, at the leaves and in
/// every bucket above them, and counted; a cycle counter's rate is not clamped.
#[test]
fn a_busy_share_over_the_elapsed_time_is_clamped_and_counted() {
    let busy = SeriesKind::BusyTime { wrap: None, unit_s: 1e-9 };
    let cycles = SeriesKind::Cumulative { wrap: None };
    let mut store = Store::new(1 << 30);
    let id = store.begin_stream(desc(&[busy, cycles]));
    // 0.5 ms busy each ms, and 2.1 M cycles; sample 500 comes 0.214 ms after its predecessor
    // with a whole ms of each.
    let mut ts = Vec::new();
    let mut vals = Vec::new();
    let (mut t, mut b, mut c) = (0i64, 0.0f64, 0.0f64);
    for i in 0..2000 {
        let dt = if i == 500 { 214_000 } else { MS };
        t += dt;
        b += if i == 500 { 1_070_000.0 } else { 500_000.0 };
        c += 2.1e6;
        ts.push(t);
        vals.extend([b, c]);
    }
    store.append(id, &ts, &vals).unwrap();
    let mut env = Envelope::new();
    for columns in [3, 100, 5000] {
        store.envelope(sid(&store, id, 0), ts[0], t, columns, &mut env);
        let max = env.columns().iter().map(|c| c.max).fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(max, 100.0, "{columns} columns");
    }
    assert_eq!(store.busy_clamps(), 1, "the one share over 100 % is counted");
    store.envelope(sid(&store, id, 1), ts[0], t, 5000, &mut env);
    let max = env.columns().iter().map(|c| c.max).fold(f64::NEG_INFINITY, f64::max);
    assert!(max > 9e9, "cycles are not clamped: {max}");
}

/// A busy time read at uneven intervals: 1 ms wholly busy, then 9 ms idle, over and over. The
/// rates are 100 % and 0 %, half and half; the engine was busy a tenth of the time.
fn uneven_busy(store: &mut Store, cycles: usize) -> (zescope_store::StreamId, i64) {
    let kind = SeriesKind::BusyTime { wrap: None, unit_s: 1e-9 };
    let id = store.begin_stream(desc(&[kind]));
    let (mut ts, mut vals) = (vec![0], vec![0.0]);
    let (mut t, mut busy) = (0i64, 0.0);
    for _ in 0..cycles {
        t += MS;
        busy += MS as f64;
        ts.push(t);
        vals.push(busy);
        t += 9 * MS;
        ts.push(t);
        vals.push(busy);
    }
    store.append(id, &ts, &vals).unwrap();
    (id, t)
}

#[test]
fn a_counters_mean_rate_is_its_rise_over_the_time_it_took_not_the_mean_of_its_reads() {
    let mut store = Store::new(1 << 30);
    // 2 000 reads: several blocks, so ranges take whole pyramid nodes and scan part blocks.
    let (id, end) = uneven_busy(&mut store, 1000);
    let s = sid(&store, id, 0);
    let busy_share = |st: zescope_store::RangeStats| st.mean;
    // The whole run, a range in whole cycles cutting blocks on both sides, and one cycle.
    let whole = store.stats(s, 0, end);
    assert_eq!((whole.count, whole.min, whole.max), (2000, 0.0, 100.0));
    assert!((busy_share(whole) - 10.0).abs() < 1e-9, "busy {} % of the run, not 10 %", whole.mean);
    assert!((whole.weight - 10.0).abs() < 1e-9, "the mean weighs 10 s of intervals: {}", whole.weight);
    let part = store.stats(s, 300 * MS + 1, 8_300 * MS);
    assert_eq!(part.count, 1600);
    assert!((busy_share(part) - 10.0).abs() < 1e-9, "a part of the run: {} %", part.mean);
    let one = store.stats(s, 10 * MS + 1, 20 * MS);
    assert!((busy_share(one) - 10.0).abs() < 1e-9, "one cycle: {} %", one.mean);
    // Two ranges merged weigh each by its time: 1 ms at 100 % and 9 ms at 0 % are 10 %.
    let (a, b) = (store.stats(s, 10 * MS + 1, 11 * MS), store.stats(s, 11 * MS + 1, 20 * MS));
    assert_eq!((a.mean, b.mean), (100.0, 0.0));
    assert!((a.merge(b).mean - 10.0).abs() < 1e-9, "merged: {} %", a.merge(b).mean);
    // A gauge's mean stays the mean of its values.
    let g = store.begin_stream(desc(&[GAUGE]));
    store.append(g, &[0, MS, 10 * MS], &[0.0, 100.0, 50.0]).unwrap();
    assert_eq!(store.stats(sid(&store, g, 0), 0, 10 * MS).mean, 50.0);
    // Saved and restored, the same answers.
    store.end_stream(id);
    let mut copy = Store::new(1 << 30);
    let id2 = copy.restore_stream(&store.stream_data(id).unwrap()).unwrap();
    let s2 = sid(&copy, id2, 0);
    for (t0, t1) in [(0, end), (300 * MS + 1, 8_300 * MS), (10 * MS + 1, 20 * MS)] {
        assert_eq!(copy.stats(s2, t0, t1).mean.to_bits(), store.stats(s, t0, t1).mean.to_bits(), "{t0}..{t1}");
    }
}

#[test]
fn a_counters_mean_rate_over_coarsened_history_weighs_each_bucket_by_its_time() {
    // A cap that coarsens the oldest blocks to their summaries: the mean over the whole run
    // still weighs rates by time, from the summaries' own sums.
    let mut store = Store::new(1 << 30);
    let (id, end) = uneven_busy(&mut store, 20_000);
    let s = sid(&store, id, 0);
    let before = store.stats(s, 0, end).mean;
    store.set_memory_cap(store.memory_used() / 3);
    let ret = store.retention(id).unwrap();
    assert!(ret.spans.iter().any(|x| x.level > 0), "some history coarsened: {ret:?}");
    let after = store.stats(s, 0, end);
    assert!((before - 10.0).abs() < 1e-9 && (after.mean - 10.0).abs() < 1e-9, "{before} %, then {} %", after.mean);
}
