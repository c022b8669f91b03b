//! Malformed session files: each one in `tests/session_corpus/` must be refused, by `load` or
//! by `restore_into`, with an error that says what is wrong (and where), never a panic. The
//! corpus is derived from `assets/example-session.ron` by `regenerate_corpus` (run with
//! `cargo test -p zescope-model --test model corpus -- --ignored` after a format change); 100 MB of garbage is
//! made at test time rather than committed.

use std::path::{Path, PathBuf};

use zescope_model::session::{self, SessionError, codec};
use zescope_store::Store;

/// Every corpus file and a piece of the error it must give.
const EXPECTED: &[(&str, &str)] = &[
    ("empty.ron", "line 1"),
    ("truncated.ron", "line "),
    ("wrong_type.ron", "line "),
    ("missing_field.ron", "evicted_samples"),
    ("newer_version.ron", "version 8 is newer than this zescope reads"),
    ("unknown_version.ron", "version 0 is not a known version"),
    ("not_a_session.ron", "not a zescope session file"),
    ("other_format.ron", "format is \"zescope-layout\""),
    ("nan_range.ron", "view.range"),
    ("huge_samples.ron", "streams[0].raw.chunks"),
    ("huge_ordinal.ron", "streams[0].raw.chunks"),
    ("negative_count.ron", "line "),
    ("nan_count.ron", "line "),
    ("first_rates_length.ron", "streams[0].raw.first_rates"),
    ("corrupt_chunk.ron", "streams[0].raw.chunks[0]: base64"),
    ("short_chunk.ron", "streams[0].raw.chunks[0]"),
    ("non_monotonic.ron", "does not increase"),
    ("deep_nesting.ron", "recursion limit"),
    ("bad_color.ron", "view.colors"),
    ("bad_gaps.ron", "streams[0].raw.gaps"),
    ("bad_device_index.ron", "runs[0].device"),
    ("coarse_claims.ron", "streams[0].coarse.chunks"),
    ("first_gap_without_gap.ron", "streams[0]: invalid stream data: raw: first_gap"),
    ("binary.ron", "not text"),
];

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/session_corpus")
}

/// Load and restore, as opening a file in the app does.
fn open(path: &Path) -> Result<(), SessionError> {
    let s = session::load(path)?;
    let mut store = Store::new(1 << 30);
    s.restore_into(&mut store).map(|_| ())
}

#[test]
fn every_malformed_file_gives_its_error() {
    let mut seen = Vec::new();
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let want = EXPECTED.iter().find(|(f, _)| *f == name).map(|e| e.1);
        let want = want.unwrap_or_else(|| panic!("{name} has no expected error in EXPECTED"));
        let got = std::panic::catch_unwind(|| open(&path)).unwrap_or_else(|_| panic!("{name}: panicked"));
        match got {
            Ok(()) => wrong.push(format!("{name}: opened without an error")),
            Err(e) if !e.to_string().contains(want) => wrong.push(format!("{name}: expected {want:?} in {e:?}")),
            Err(_) => {}
        }
        seen.push(name);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for (f, _) in EXPECTED {
        assert!(seen.iter().any(|s| s == f), "{f} is missing from the corpus");
    }
}

#[test]
fn the_example_session_opens() {
    open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/example-session.ron"))
        .expect("the example is valid");
}

#[test]
fn a_hundred_megabytes_of_garbage_is_refused_quickly_and_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let binary: Vec<u8> = (0..100 << 20).map(|_| next() as u8).collect();
    let path = dir.path().join("garbage.ron");
    std::fs::write(&path, &binary).unwrap();
    assert!(matches!(open(&path), Err(SessionError::NotASession(_))));
    let text: Vec<u8> = binary.iter().map(|b| b' ' + b % 95).collect();
    std::fs::write(&path, &text).unwrap();
    // Printable garbage: not a session (it never names the format), with where RON gave up.
    let e = open(&path).unwrap_err();
    assert!(matches!(&e, SessionError::NotASession(m) if m.contains("(line 1, column ")), "{e}");
}

/// LEB128, as the data section writes lengths.
fn varint(b: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let x = b[*pos];
        *pos += 1;
        v |= u64::from(x & 0x7f) << shift;
        if x & 0x80 == 0 {
            break;
        }
    }
    v
}

/// A version 7 file (the example has no coarse history) as version 3 wrote it: the same head
/// with `version: 3`, and each chunk of the data section without its 4-byte checksum.
fn unsealed(v4: &[u8], version: u8) -> Vec<u8> {
    let line2 = b"// binary data after the RON text of this many bytes: ";
    let at = v4.windows(line2.len()).position(|w| w == line2).unwrap() + line2.len();
    let digits = v4[at..].iter().take_while(|c| c.is_ascii_digit()).count();
    let len: usize = std::str::from_utf8(&v4[at..at + digits]).unwrap().parse().unwrap();
    let data_at = at + digits + 1 + len;
    let mut head = v4[..data_at].to_vec();
    let v = head.windows(11).position(|w| w == b"version: 7,").expect("the head names version 7");
    head[v + 9] = version;
    let (mut pos, data) = (0, &v4[data_at..]);
    while pos < data.len() {
        let n = varint(data, &mut pos) as usize;
        let body = &data[pos..pos + n - 4];
        let mut x = body.len() as u64;
        loop {
            let more = x >= 0x80;
            head.push((x as u8 & 0x7f) | if more { 0x80 } else { 0 });
            x >>= 7;
            if !more {
                break;
            }
        }
        head.extend_from_slice(body);
        pos += n;
    }
    head
}

#[test]
fn version_2_3_and_4_files_still_load() {
    // Version 3 is version 4 without the checksums; version 2 is version 3 without two column
    // forms: the same head and data section.
    let s = session::from_str(&example()).unwrap();
    let bytes = session::to_bytes(&s).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for version in [b'3', b'2'] {
        let path = dir.path().join("old.ron");
        std::fs::write(&path, unsealed(&bytes, version)).unwrap();
        let back = session::load(&path).unwrap_or_else(|e| panic!("a version {} file loads: {e}", version as char));
        assert_eq!(back.streams[0].data.raw.timestamps, s.streams[0].data.raw.timestamps);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back.streams[0].data.raw.values), bits(&s.streams[0].data.raw.values));
    }
    // Version 4 is version 7 without the scaled column form and a counter's intervals in coarse
    // buckets (the example has none): the same head and data section.
    let v4 = bytes.windows(11).position(|w| w == b"version: 7,").expect("the head names version 7");
    let mut relabelled = bytes.clone();
    relabelled[v4 + 9] = b'4';
    let path = dir.path().join("v4.ron");
    std::fs::write(&path, relabelled).unwrap();
    let back = session::load(&path).unwrap_or_else(|e| panic!("a version 4 file loads: {e}"));
    assert_eq!(back.streams[0].data.raw.timestamps, s.streams[0].data.raw.timestamps);
    // And a version 4 reader does not take a file without checksums for one with them.
    let path = dir.path().join("v4-unsealed.ron");
    std::fs::write(&path, unsealed(&bytes, b'4')).unwrap();
    let e = session::load(&path).unwrap_err().to_string();
    assert!(e.contains("streams[0].raw.chunks[0]"), "{e}");
}

fn example() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/example-session.ron")).unwrap()
}

/// Replace the first occurrence of `from` (which must be there).
fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} not in the example");
    text.replacen(from, to, 1)
}

/// The example's first raw chunk.
fn first_chunk(text: &str) -> String {
    let s = session::from_str(text).unwrap();
    let f = s.streams[0].data.raw.timestamps.len();
    let n = s.streams[0].data.desc.series.len();
    codec::encode_raw(&s.streams[0].data.raw.timestamps[..f], &s.streams[0].data.raw.values[..f * n], n)
}

#[test]
#[ignore = "rewrites tests/session_corpus from the example session"]
fn regenerate_corpus() {
    let ex = example();
    let dir = corpus();
    std::fs::create_dir_all(&dir).unwrap();
    let chunk = first_chunk(&ex);
    let s = session::from_str(&ex).unwrap();
    let raw = &s.streams[0].data.raw;
    let n = s.streams[0].data.desc.series.len();
    let mut ts = raw.timestamps.clone();
    ts[10] = ts[9];
    let backwards = codec::encode_raw(&ts, &raw.values, n);
    let files: Vec<(&str, String)> = vec![
        ("empty.ron", String::new()),
        ("truncated.ron", ex[..ex.len() * 3 / 5].to_owned()),
        ("wrong_type.ron", edit(&ex, "interval_ns: 10000000", "interval_ns: \"fast\"")),
        ("missing_field.ron", edit(&ex, "evicted_samples: 0,", "")),
        ("newer_version.ron", edit(&ex, "version: 1,", "version: 8,")),
        ("unknown_version.ron", edit(&ex, "version: 1,", "version: 0,")),
        ("not_a_session.ron", "(name: \"a layout\", counters: [])".to_owned()),
        ("other_format.ron", edit(&ex, "format: \"zescope-session\"", "format: \"zescope-layout\"")),
        (
            "nan_range.ron",
            edit(
                &ex,
                "mode: Live,\n        range: None,",
                "mode: Zoomed,\n        range: Some((start_s: NaN, end_s: 2.0)),",
            ),
        ),
        ("huge_samples.ron", edit(&ex, "samples: 201,", "samples: 18446744073709551615,")),
        (
            "huge_ordinal.ron",
            edit(
                &ex,
                "first_ordinal: 0,\n                first_gap",
                "first_ordinal: 18446744073709551615,\n                first_gap",
            ),
        ),
        ("negative_count.ron", edit(&ex, "evicted_samples: 0,", "evicted_samples: -3,")),
        ("nan_count.ron", edit(&ex, "samples: 201,", "samples: NaN,")),
        ("first_rates_length.ron", edit(&ex, "first_rates: [", "first_rates: [\n                None,")),
        ("corrupt_chunk.ron", edit(&ex, &chunk[..40], &format!("!{}", &chunk[1..40]))),
        ("short_chunk.ron", edit(&ex, &chunk, &chunk[..chunk.len() / 2 / 4 * 4])),
        ("non_monotonic.ron", edit(&ex, &chunk, &backwards)),
        ("deep_nesting.ron", format!("{}{}", "(a: ".repeat(20_000), ")".repeat(20_000))),
        ("bad_color.ron", edit(&ex, "\"#0072b2\"", "\"blue\"")),
        ("bad_gaps.ron", edit(&ex, "gaps: [],", "gaps: [\n                7,\n                3,\n            ],")),
        ("bad_device_index.ron", edit(&ex, "device: 0,", "device: 7,")),
        ("coarse_claims.ron", edit(&ex, "buckets: 0,", "buckets: 3,")),
        ("first_gap_without_gap.ron", edit(&ex, "first_gap: 0,", "first_gap: 5,")),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let mut binary = b"(format: \"zescope-session\", ".to_vec();
    binary.extend([0xff, 0xfe, 0x00, 0x80, 0xc3]);
    std::fs::write(dir.join("binary.ron"), binary).unwrap();
}
