//! A damaged session says so: over 400 bytes of a small session's data section flipped (by
//! 0x01, 0x80 or 0xff in turn), one at a time, and a sample of the bytes of the checksummed coarse chunks in its RON text. Each flip
//! must give an error naming the chunk (or the data section's framing), or, only where the
//! byte is outside checksummed data, a load with identical values. Before version 4's
//! checksums, most such flips loaded silently with other values.

use zescope_model::session::{self, Capture, RunHistory, Session};
use zescope_model::view::{Arrangement, TimeView};
use zescope_store::{SeriesDesc, SeriesKind, Store, StreamDesc};

/// A session with two streams from a store of `cap` bytes: stream `a` of 3 series over two raw
/// chunks, `b` of 2 series; `rounds` of `per` samples each.
fn session(cap: usize, rounds: i64, per: i64) -> Session {
    let mut store = Store::new(cap);
    let desc = |name: &str, n: usize| StreamDesc {
        name: name.into(),
        series: (0..n)
            .map(|s| SeriesDesc {
                name: format!("{name}{s}"),
                unit: "u".into(),
                kind: if s % 2 == 0 { SeriesKind::Cumulative { wrap: None } } else { SeriesKind::Gauge },
            })
            .collect(),
    };
    let ids = [store.begin_stream(desc("a", 3)), store.begin_stream(desc("b", 2))];
    for k in 0..rounds {
        for (j, &id) in ids.iter().enumerate() {
            let n = 3 - j;
            let m = if j == 0 { per } else { per / 8 };
            let ts: Vec<i64> = (0..m).map(|i| (k * per + i) * 1_000_000 + j as i64 * 7 + i % 5).collect();
            let vals: Vec<f64> = (0..m * n as i64).map(|v| ((v * (k + 3) * 31) % 9000) as f64 * 0.5).collect();
            store.append(id, &ts, &vals).unwrap();
        }
    }
    let (history, arrangement, view) = (RunHistory::default(), Arrangement::default(), TimeView::default());
    Session::capture(&store, Capture { history: &history, arrangement: &arrangement, view: &view, markers: &[] })
}

fn bits(s: &Session) -> Vec<(Vec<i64>, Vec<u64>, usize)> {
    s.streams
        .iter()
        .map(|x| {
            let raw = &x.data.raw;
            (raw.timestamps.clone(), raw.values.iter().map(|v| v.to_bits()).collect(), x.data.coarse.len())
        })
        .collect()
}

/// Where the data section starts.
fn data_start(file: &[u8]) -> usize {
    let line2 = b"// binary data after the RON text of this many bytes: ";
    let at = file.windows(line2.len()).position(|w| w == line2).unwrap() + line2.len();
    let digits = file[at..].iter().take_while(|c| c.is_ascii_digit()).count();
    let len: usize = std::str::from_utf8(&file[at..at + digits]).unwrap().parse().unwrap();
    at + digits + 1 + len
}

/// Flip `mask` into byte `at`; the outcome must be a named error (`Ok(false)`) or the same
/// values (`Ok(true)`).
fn judge(file: &[u8], at: usize, mask: u8, good: &Session, named: &[&str]) -> Result<bool, String> {
    let mut bad = file.to_vec();
    bad[at] ^= mask;
    match session::from_slice(&bad) {
        Err(e) => {
            let e = e.to_string();
            if named.iter().any(|n| e.contains(n)) { Ok(false) } else { Err(format!("byte {at} ^ {mask:#x}: {e}")) }
        }
        Ok(s) if bits(&s) == bits(good) && s.streams[0].data.coarse == good.streams[0].data.coarse => Ok(true),
        Ok(_) => Err(format!("byte {at} ^ {mask:#x}: loaded with other values")),
    }
}

#[test]
fn every_flipped_byte_of_the_data_section_is_an_error_naming_its_chunk() {
    let good = session(1 << 30, 5, 1000);
    assert_eq!(good.streams[0].data.raw.timestamps.len(), 5000, "two raw chunks");
    let file = session::to_bytes(&good).unwrap();
    let start = data_start(&file);
    let (mut wrong, mut loaded_same, mut tried) = (Vec::new(), 0, 0);
    // Every byte of the first 64 (lengths, counts, column headers) and of the last chunk's
    // checksum; an even sample of the rest (each load takes a while in a debug build).
    let len = file.len() - start;
    let step = (len / 400).max(1);
    for at in
        (start..file.len()).filter(|&at| at - start < 64 || file.len() - at <= 4 || (at - start).is_multiple_of(step))
    {
        tried += 1;
        // The data section is all chunks: each flip is a chunk's error, or the framing's.
        match judge(&file, at, [0x01, 0x80, 0xff][at % 3], &good, &["streams[", "data section"]) {
            Err(e) => wrong.push(e),
            Ok(true) => loaded_same += 1,
            Ok(false) => {}
        }
    }
    assert!(tried >= 200, "{tried} positions of {len}");
    assert!(wrong.is_empty(), "{} of {tried} flips:\n{}", wrong.len(), wrong.join("\n"));
    assert_eq!(loaded_same, 0, "no byte of the data section is outside a checksum");
}

#[test]
fn flipped_bytes_of_the_coarse_chunks_are_errors_naming_them() {
    let good = session(256 << 10, 60, 5000);
    assert!(good.streams.iter().any(|s| !s.data.coarse.is_empty()), "the cap coarsened some history");
    let file = session::to_bytes(&good).unwrap();
    let text = std::str::from_utf8(&file[..data_start(&file)]).unwrap();
    // The coarse chunks are the base64 strings of `coarse: (buckets: N, chunks: ["…"])`.
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(k) = text[from..].find("coarse: (") {
        let open = from + k + text[from + k..].find("chunks: [").unwrap() + "chunks: [".len();
        let close = open + text[open..].find(']').unwrap();
        if close > open + 1 {
            spans.push((open, close));
        }
        from = close;
    }
    assert!(!spans.is_empty());
    let (mut wrong, mut tried) = (Vec::new(), 0);
    let total: usize = spans.iter().map(|(a, b)| b - a).sum();
    for (a, b) in spans {
        // An even sample of the lists (quotes, commas and whitespace included): 300 or so.
        for at in (a..b).step_by((total / 300).max(1)) {
            tried += 1;
            // A flip inside a chunk is its error; one in the list's punctuation, RON's.
            if let Err(e) = judge(&file, at, 0x01, &good, &[".coarse.chunks", "line "]) {
                wrong.push(e);
            }
        }
    }
    assert!(tried >= 200, "{tried} positions");
    assert!(wrong.is_empty(), "{} of {tried}:\n{}", wrong.len(), wrong.join("\n"));
}
