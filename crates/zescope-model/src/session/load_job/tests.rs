//! The progressive open: pieces, order, bounds and refusals.

use super::*;
use crate::session::{Capture, RunHistory};
use crate::view::{Arrangement, TimeView};
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};

/// Two streams over the same time, counters and gauges, pauses, in a store whose cap has
/// coarsened the oldest history (so the raw part starts after coarse buckets, with a first
/// gap and first rates).
fn session() -> Session {
    let mut store = Store::new(3 << 20);
    let desc = |name: &str, n: usize| StreamDesc {
        name: name.into(),
        series: (0..n)
            .map(|s| SeriesDesc {
                name: format!("{name}{s}"),
                unit: "u".into(),
                kind: if s % 2 == 0 { SeriesKind::Cumulative { wrap: Some(65536.0) } } else { SeriesKind::Gauge },
            })
            .collect(),
    };
    let ids = [store.begin_stream(desc("a", 6)), store.begin_stream(desc("b", 3))];
    for k in 0..60i64 {
        for (j, &id) in ids.iter().enumerate() {
            let n = if j == 0 { 6 } else { 3 };
            if k % 7 == 3 {
                store.mark_gap(id);
            }
            let ts: Vec<i64> = (0..5000).map(|i| (k * 6000 + i) * 1_000_000 + j as i64 * 333 + i % 13).collect();
            let vals: Vec<f64> = (0..5000 * n).map(|v| ((v as i64 * (k + 1) * 37) % 70000) as f64).collect();
            store.append(id, &ts, &vals).unwrap();
        }
    }
    store.end_stream(ids[0]);
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    Session::capture(&store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] })
}

/// Everything the job hands over, applied as the window applies it, into a store of `cap`
/// bytes (never over it, checked after every piece).
fn open_progressively(path: &Path, cap: usize) -> (Store, Vec<usize>, Option<(i64, i64)>) {
    let mut job = LoadJob::spawn(path.to_path_buf());
    let mut store = Store::new(cap);
    let (mut ended, mut order, mut span) = (Vec::new(), Vec::new(), None);
    loop {
        match job.next(Duration::from_secs(30)).expect("an event") {
            LoadEvent::Head(h) => {
                h.session.restore_into(&mut store).unwrap();
                if store.origin_ns().is_none()
                    && let Some(o) = h.origin_ns
                {
                    store.set_origin(o);
                }
                (ended, span) = (h.ended, h.span);
            }
            LoadEvent::Piece(p) => {
                let id = store.streams().nth(p.stream).unwrap().id;
                store.restore_more(id, &p.raw, p.first).unwrap();
                assert!(store.memory_used() <= cap, "{} bytes over a cap of {cap}", store.memory_used());
                if p.last && ended[p.stream] {
                    store.end_stream(id);
                }
                order.push(p.stream);
            }
            LoadEvent::Done => return (store, order, span),
            LoadEvent::Failed(e) => panic!("{e}"),
        }
    }
}

#[test]
fn pieces_rebuild_what_a_one_shot_load_gives_for_both_versions() {
    let s = session();
    assert!(s.streams.iter().all(|x| !x.data.coarse.is_empty()), "the cap coarsened some history");
    assert!(s.streams.iter().all(|x| x.data.raw.gaps.len() > 2 && !x.data.raw.first_rates.is_empty()));
    let dir = tempfile::tempdir().unwrap();
    let v2 = dir.path().join("v2.ron");
    crate::session::save(&v2, &s).unwrap();
    let v1 = dir.path().join("v1.ron");
    std::fs::write(&v1, crate::session::to_v1_string(&s).unwrap()).unwrap();
    let mut whole = Store::new(usize::MAX);
    crate::session::load(&v2).unwrap().restore_into(&mut whole).unwrap();
    for path in [&v2, &v1] {
        let (store, order, span) = open_progressively(path, usize::MAX);
        assert_eq!(store.origin_ns(), whole.origin_ns());
        assert_eq!(span, whole.total_time_range(), "the head knows the whole time range");
        for (a, b) in whole.streams().zip(store.streams()) {
            let (mut got, mut want) = (store.stream_data(b.id).unwrap(), whole.stream_data(a.id).unwrap());
            if path == &v1 {
                // Version 1 keeps no counter's intervals in its coarse buckets: they are
                // estimated from each bucket's time, the rest is the same.
                for d in [&mut got, &mut want] {
                    d.coarse.iter_mut().flat_map(|b| &mut b.series).for_each(|x| (x.area, x.dur) = (0.0, 0.0));
                }
            }
            assert!(got == want, "{}: the stream's data differs", path.display());
        }
        // In time order: the streams' chunks alternate (they cover the same time).
        let switches = order.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(switches > order.len() / 4, "{switches} switches in {} pieces", order.len());
    }
}

#[test]
fn a_session_over_the_cap_opens_within_it_as_a_one_shot_open_does() {
    let s = session();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.ron");
    crate::session::save(&path, &s).unwrap();
    let mut exact = Store::new(usize::MAX);
    s.restore_into(&mut exact).unwrap();
    let cap = exact.memory_used() / 3;
    let (store, _, span) = open_progressively(&path, cap);
    let mut one_shot = Store::new(cap);
    crate::session::load(&path).unwrap().restore_into(&mut one_shot).unwrap();
    assert!(one_shot.memory_used() <= cap);
    assert_eq!(span, exact.total_time_range());
    assert_eq!(store.total_time_range(), one_shot.total_time_range(), "the same history kept");
    for ((a, b), c) in store.streams().zip(one_shot.streams()).zip(exact.streams()) {
        assert_eq!(a.appended, c.appended, "every sample went through the store");
        assert_eq!(store.time_range(a.id), one_shot.time_range(b.id));
        for k in (1..store.series(a.id).count()).step_by(2) {
            // Gauges: coarsening keeps every bucket's extremes, however it went.
            let (t0, t1) = store.time_range(a.id).unwrap();
            let [x, y, z] = [(&store, a.id), (&one_shot, b.id), (&exact, c.id)]
                .map(|(st, id)| st.stats(st.series_id(id, k).unwrap(), t0, t1));
            assert_eq!((x.min, x.max), (y.min, y.max), "stream {:?} series {k}", a.id);
            assert_eq!((x.min, x.max), (z.min, z.max), "stream {:?} series {k}: the exact extremes", a.id);
        }
    }
}

#[test]
fn a_chunk_damaged_part_way_ends_the_job_naming_it_after_the_good_ones() {
    let s = session();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.ron");
    crate::session::save(&path, &s).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // Junk in the chunk three quarters into the data section, over more bytes than a column
    // takes where the chunk has them (so a column's length and mode are hit, not only packed
    // bits that decode to other values); the chunks' lengths (a LEB128 before each chunk's
    // bytes) stay as they were.
    let (text, data) = io::split(&bytes).unwrap();
    let data = data.unwrap();
    let mut pos = 0;
    let payload = loop {
        let len = zescope_store::bits::checked_varint(data, &mut pos).expect("a chunk's length") as usize;
        if pos + len > data.len() * 3 / 4 {
            break pos..pos + len;
        }
        pos += len;
    };
    let at = text.len() + payload.start + 16;
    let end = text.len() + payload.end.min(payload.start + 16 + 8192);
    bytes[at..end].fill(0xff);
    std::fs::write(&path, &bytes).unwrap();
    let mut job = LoadJob::spawn(path.clone());
    let mut pieces = 0;
    let e = loop {
        match job.next(Duration::from_secs(30)).expect("an event") {
            LoadEvent::Head(_) => {}
            LoadEvent::Piece(_) => pieces += 1,
            LoadEvent::Done => panic!("damage not found"),
            LoadEvent::Failed(e) => break e.to_string(),
        }
    };
    assert!(pieces > 10, "the good chunks before it came first: {pieces} ({e})");
    assert!(e.contains("streams[") && e.contains("].raw.chunks["), "{e}");
    assert!(job.next(Duration::ZERO).is_none() && job.is_over());
    assert!(crate::session::load(&path).is_err(), "the one-shot load refuses it too");
}

#[test]
fn a_cancelled_or_dropped_job_stops() {
    let s = session();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.ron");
    crate::session::save(&path, &s).unwrap();
    let mut job = LoadJob::spawn(path.clone());
    assert!(matches!(job.next(Duration::from_secs(30)), Some(LoadEvent::Head(_))));
    job.stop();
    drop(LoadJob::spawn(path));
    let e = match LoadJob::spawn(dir.path().join("missing.ron")).next(Duration::from_secs(30)) {
        Some(LoadEvent::Failed(e)) => e.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(e.contains("missing.ron"), "{e}");
}
