//! The writer's output read back with a minimal protobuf reader (field number → values), checked
//! field by field against the numbers of Perfetto's protos.

use super::*;

/// One field's value: a varint, a fixed 64-bit word, or bytes.
#[derive(Clone, Debug, PartialEq)]
enum F {
    V(u64),
    D(u64),
    B(Vec<u8>),
}

fn varint(b: &[u8], i: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let byte = b[*i];
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return v;
        }
        shift += 7;
    }
}

/// The fields of a message, in order.
fn fields(b: &[u8]) -> Vec<(u32, F)> {
    let (mut i, mut out) = (0, Vec::new());
    while i < b.len() {
        let tag = varint(b, &mut i);
        let f = match tag & 7 {
            0 => F::V(varint(b, &mut i)),
            1 => {
                let w = u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
                i += 8;
                F::D(w)
            }
            2 => {
                let n = varint(b, &mut i) as usize;
                i += n;
                F::B(b[i - n..i].to_vec())
            }
            w => panic!("wire type {w}"),
        };
        out.push(((tag >> 3) as u32, f));
    }
    out
}

fn get(fs: &[(u32, F)], n: u32) -> Vec<F> {
    fs.iter().filter(|(k, _)| *k == n).map(|(_, f)| f.clone()).collect()
}

fn bytes(f: &F) -> &[u8] {
    match f {
        F::B(b) => b,
        other => panic!("not bytes: {other:?}"),
    }
}

fn packets(trace: &[u8]) -> Vec<Vec<(u32, F)>> {
    fields(trace)
        .into_iter()
        .map(|(n, f)| {
            assert_eq!(n, 1, "a Trace holds only packets");
            fields(bytes(&f))
        })
        .collect()
}

#[test]
fn counter_rows_use_their_sequences_defaults() {
    let mut w = TraceWriter::new(Vec::new());
    let dev = w.track(None, "GPU", "PCI 0000:03:00.0").unwrap();
    let a = w.counter_track(Some(dev), "GPU/G/a", "ns", "").unwrap();
    let b = w.counter_track(Some(dev), "GPU/G/b", "MHz", "").unwrap();
    let set = w.counter_set(&[a, b]).unwrap();
    w.counters(&set, 1_000_000_000_000, &[1.5, -2.0]).unwrap();
    assert!(w.counters(&set, 5, &[1.0]).is_err(), "a short row is refused");
    let n = w.bytes_written();
    let out = w.into_inner().unwrap();
    assert_eq!(out.len() as u64, n);
    let p = packets(&out);
    assert_eq!(p.len(), 5);
    // The device track: uuid 1, its name and description; children ordered explicitly.
    let dev = fields(bytes(&get(&p[0], 60)[0]));
    assert_eq!(get(&dev, 1), [F::V(1)]);
    assert_eq!(get(&dev, 2), [F::B(b"GPU".to_vec())]);
    assert_eq!(get(&dev, 14), [F::B(b"PCI 0000:03:00.0".to_vec())]);
    assert_eq!(get(&dev, 11), [F::V(3)]);
    // The counter tracks: parent, rank among siblings, unit.
    let ta = fields(bytes(&get(&p[1], 60)[0]));
    assert_eq!(get(&ta, 5), [F::V(1)]);
    assert_eq!(get(&ta, 12), [F::V(0)]);
    let ca = fields(bytes(&get(&ta, 8)[0]));
    assert_eq!(get(&ca, 3), [F::V(1)], "ns is UNIT_TIME_NS");
    assert_eq!(get(&ca, 6), [F::B(b"ns".to_vec())]);
    let tb = fields(bytes(&get(&p[2], 60)[0]));
    assert_eq!(get(&tb, 12), [F::V(1)]);
    let cb = fields(bytes(&get(&tb, 8)[0]));
    assert_eq!(get(&cb, 3), []);
    assert_eq!(get(&cb, 6), [F::B(b"MHz".to_vec())]);
    // The set's sequence: incremental state cleared, defaults on CLOCK_MONOTONIC naming a then b.
    let seq = get(&p[3], 10);
    assert_eq!(get(&p[3], 13), [F::V(1)]);
    let defaults = fields(bytes(&get(&p[3], 59)[0]));
    assert_eq!(get(&defaults, 58), [F::V(3)]);
    let ev = fields(bytes(&get(&defaults, 11)[0]));
    assert_eq!(get(&ev, 11), [F::V(2)]);
    assert_eq!(get(&ev, 45), [F::V(3)]);
    // The row: its time, the same sequence needing its state, a TYPE_COUNTER with both values.
    assert_eq!(get(&p[4], 8), [F::V(1_000_000_000_000)]);
    assert_eq!(get(&p[4], 10), seq);
    assert_ne!(seq, [F::V(1)], "counters have a sequence of their own");
    assert_eq!(get(&p[4], 13), [F::V(2)]);
    let row = fields(bytes(&get(&p[4], 11)[0]));
    assert_eq!(get(&row, 9), [F::V(4)]);
    assert_eq!(get(&row, 44), [F::D(1.5f64.to_bits())]);
    assert_eq!(get(&row, 46), [F::D((-2.0f64).to_bits())]);
}

#[test]
fn a_nan_is_no_point_on_its_track_and_a_row_of_nan_is_no_packet() {
    let mut w = TraceWriter::new(Vec::new());
    let dev = w.track(None, "GPU", "").unwrap();
    let tracks: Vec<TrackId> =
        ["a", "b", "c"].iter().map(|n| w.counter_track(Some(dev), n, "W", "").unwrap()).collect();
    let set2 = w.counter_set(&tracks).unwrap();
    // The device's track, three counter tracks, the set's defaults; uuids 1 (device), 2, 3, 4.
    let before = 5;
    w.counters(&set2, 10, &[f64::NAN, 2.0, 3.0]).unwrap();
    w.counters(&set2, 20, &[1.0, f64::NAN, f64::NAN]).unwrap();
    w.counters(&set2, 30, &[f64::NAN; 3]).unwrap();
    let p = packets(&w.into_inner().unwrap());
    assert_eq!(p.len(), before + 2, "the row of NaN only wrote nothing");
    let uuid = |k: usize| F::V(2 + k as u64);
    // At 10: b on the event's own track, c as its one extra track (the defaults' list overridden).
    let row = fields(bytes(&get(&p[before], 11)[0]));
    assert_eq!(get(&p[before], 8), [F::V(10)]);
    assert_eq!(get(&row, 9), [F::V(4)]);
    assert_eq!(get(&row, 11), [uuid(1)]);
    assert_eq!(get(&row, 44), [F::D(2.0f64.to_bits())]);
    assert_eq!(get(&row, 45), [uuid(2)]);
    assert_eq!(get(&row, 46), [F::D(3.0f64.to_bits())]);
    // At 20: a alone; its empty list of extra tracks would mean the defaults', so it has none
    // and no extra value either.
    let row = fields(bytes(&get(&p[before + 1], 11)[0]));
    assert_eq!(get(&row, 11), [uuid(0)]);
    assert_eq!(get(&row, 44), [F::D(1.0f64.to_bits())]);
    assert_eq!((get(&row, 45), get(&row, 46)), (vec![], vec![]));
}

#[test]
fn slices_instants_and_the_clock_snapshot() {
    let mut w = TraceWriter::new(Vec::new());
    w.clock_snapshot(&[(Clock::Monotonic, 10), (Clock::Boottime, 20), (Clock::Realtime, 30)], None).unwrap();
    let t = w.track(None, "markers", "").unwrap();
    let args = vec![("device".to_owned(), Value::Dict(vec![("pci".to_owned(), Value::Text("0000:03:00.0".into()))]))];
    w.slice_begin(t, 100, "solve", &args).unwrap();
    w.slice_end(t, 200).unwrap();
    w.instant(t, 150, "mark", &[("n".to_owned(), Value::Int(-3))]).unwrap();
    let p = packets(&w.into_inner().unwrap());
    let snap = fields(bytes(&get(&p[0], 6)[0]));
    let clocks: Vec<_> = get(&snap, 1).iter().map(|c| fields(bytes(c))).collect();
    assert_eq!(clocks.len(), 3);
    assert_eq!((get(&clocks[1], 1), get(&clocks[1], 2)), (vec![F::V(6)], vec![F::V(20)]));
    assert_eq!(get(&snap, 2), [], "no primary clock: Perfetto's default");
    for (i, (ty, ts)) in [(1, 100), (2, 200), (3, 150)].into_iter().enumerate() {
        let pk = &p[2 + i];
        assert_eq!(get(pk, 8), [F::V(ts)]);
        assert_eq!(get(pk, 58), [F::V(3)], "on CLOCK_MONOTONIC");
        let ev = fields(bytes(&get(pk, 11)[0]));
        assert_eq!(get(&ev, 9), [F::V(ty)]);
        assert_eq!(get(&ev, 11), [F::V(1)]);
    }
    let begin = fields(bytes(&get(&p[2], 11)[0]));
    assert_eq!(get(&begin, 23), [F::B(b"solve".to_vec())]);
    let ann = fields(bytes(&get(&begin, 4)[0]));
    assert_eq!(get(&ann, 10), [F::B(b"device".to_vec())]);
    let entry = fields(bytes(&get(&ann, 11)[0]));
    assert_eq!(get(&entry, 6), [F::B(b"0000:03:00.0".to_vec())]);
    let inst = fields(bytes(&get(&p[4], 11)[0]));
    let ann = fields(bytes(&get(&inst, 4)[0]));
    assert_eq!(get(&ann, 4), [F::V(-3i64 as u64)]);
}

#[test]
fn an_empty_counter_set_is_refused() {
    let mut w = TraceWriter::new(Vec::new());
    assert!(w.counter_set(&[]).is_err());
}
