//! The cheap mutation run that keeps guarding the loaders in CI (the coverage-guided fuzzers in
//! `fuzz/` go deeper, but need their own toolchain set-up and time).
//!
//! Real files (the example session, the session corpus, the shipped layouts and a real autosave
//! checkpoint in `tests/hostile/checkpoint/`) are mutated the ways damaged or hostile files
//! differ from good ones: bit flips, truncation, a duplicated span, and numbers replaced by huge,
//! negative or non-integer ones. Every outcome must be a loaded file or a named error (a
//! non-empty message), never a panic; a loaded session must also restore into a store. The case
//! counts are bounded so the whole file runs in a few seconds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use zescope_model::session::SessionError;
use zescope_model::session::autosave::checkpoint_from_text;
use zescope_sampler::layout::LayoutSet;
use zescope_store::Store;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn session_seeds() -> Vec<Vec<u8>> {
    let mut seeds = vec![read(&root().join("../../assets/example-session.ron"))];
    let mut corpus: Vec<PathBuf> =
        std::fs::read_dir(root().join("tests/session_corpus")).unwrap().map(|e| e.unwrap().path()).collect();
    corpus.sort();
    seeds.extend(corpus.iter().map(|p| read(p)));
    seeds.extend(v2_seeds());
    seeds
}

/// The example and the checkpoint fixture (4200 samples: two chunks) as the current version
/// writes them: RON text, then the binary data section.
fn v2_seeds() -> Vec<Vec<u8>> {
    let example = zescope_model::session::from_slice(&read(&root().join("../../assets/example-session.ron"))).unwrap();
    let (text, chunks) = checkpoint_seed();
    let checkpoint =
        checkpoint_from_text("checkpoint.ron", std::str::from_utf8(&text).unwrap(), |name| Ok(chunks[name].clone()))
            .unwrap();
    [example, checkpoint].iter().map(|s| zescope_model::session::to_bytes(s).unwrap()).collect()
}

fn layout_seeds() -> Vec<Vec<u8>> {
    zescope_sampler::layout::BUILT_IN.iter().map(|(_, text)| text.as_bytes().to_vec()).collect()
}

/// The checkpoint fixture: its text and chunk files.
fn checkpoint_seed() -> (Vec<u8>, BTreeMap<String, Vec<u8>>) {
    let dir = root().join("tests/hostile/checkpoint");
    let text = read(&dir.join("checkpoint.ron"));
    let chunks = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "checkpoint.ron")
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), read(&p)))
        .collect();
    (text, chunks)
}

/// The checkpoint fixture's session checkpointed again by this version's autosaver: its text and
/// chunk files (packed and sealed, as a session's data section holds them).
fn current_checkpoint_seed() -> (Vec<u8>, BTreeMap<String, Vec<u8>>) {
    use zescope_model::session::Capture;
    use zescope_model::session::autosave::Autosaver;
    let (text, chunks) = checkpoint_seed();
    let session =
        checkpoint_from_text("checkpoint.ron", std::str::from_utf8(&text).unwrap(), |name| Ok(chunks[name].clone()))
            .unwrap();
    let mut store = Store::new(64 << 20);
    let r = session.restore_into(&mut store).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut saver = Autosaver::in_root(root.path()).unwrap();
    let ui = Capture { history: &r.history, arrangement: &r.arrangement, view: &r.view, markers: &r.markers };
    assert!(saver.checkpoint(&store, ui));
    saver.wait().unwrap();
    let dir = saver.dir().to_path_buf();
    let text = read(&dir.join("checkpoint.ron"));
    let chunks = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("c-"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), read(&p)))
        .collect();
    (text, chunks)
}

/// Numbers a mutation puts where the file had one.
const HUGE: &[&str] =
    &["18446744073709551615", "18446744073709551616", "-1", "4294967296", "1e308", "-9223372036854775808", "0"];

#[derive(Debug, Clone)]
enum Mutation {
    /// Flip bit `bit` of the byte at this fraction of the file.
    Flip { at: f64, bit: u8 },
    /// Keep this fraction of the file.
    Truncate(f64),
    /// Repeat the span `[at, at + len)` right after itself, `times` times.
    Duplicate { at: f64, len: usize, times: u8 },
    /// Replace the number at this fraction of the file's numbers with `HUGE[k]`.
    Number { which: f64, k: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0.0..1.0f64, 0..8u8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        (0.0..1.0f64).prop_map(Mutation::Truncate),
        (0.0..1.0f64, 1..4096usize, 1..8u8).prop_map(|(at, len, times)| Mutation::Duplicate { at, len, times }),
        (0.0..1.0f64, 0..HUGE.len()).prop_map(|(which, k)| Mutation::Number { which, k }),
    ]
}

fn index(frac: f64, len: usize) -> usize {
    ((frac * len as f64) as usize).min(len.saturating_sub(1))
}

fn apply(bytes: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for m in mutations {
        if b.is_empty() {
            break;
        }
        match *m {
            Mutation::Flip { at, bit } => {
                let i = index(at, b.len());
                b[i] ^= 1 << bit;
            }
            Mutation::Truncate(keep) => b.truncate(index(keep, b.len())),
            Mutation::Duplicate { at, len, times } => {
                let i = index(at, b.len());
                let span = b[i..(i + len).min(b.len())].to_vec();
                let tail = b.split_off(i + span.len());
                for _ in 0..times {
                    b.extend_from_slice(&span);
                }
                b.extend(tail);
            }
            Mutation::Number { which, k } => {
                let numbers = number_spans(&b);
                if let Some(&(s, e)) = numbers.get(index(which, numbers.len())) {
                    b.splice(s..e, HUGE[k].bytes());
                }
            }
        }
    }
    b
}

/// `(start, end)` of every run of ASCII digits.
fn number_spans(b: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            spans.push((s, i));
        } else {
            i += 1;
        }
    }
    spans
}

fn named(e: &SessionError) {
    assert!(!e.to_string().trim().is_empty(), "an error without a message: {e:?}");
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() }
}

/// A loaded session must also restore into a store, or fail with a named error; a load error
/// must be named.
fn restores_or_named(loaded: Result<zescope_model::session::Session, SessionError>) {
    match loaded {
        Ok(s) => {
            if let Err(e) = s.restore_into(&mut Store::new(64 << 20)) {
                named(&e);
            }
        }
        Err(e) => named(&e),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutated_sessions_load_or_give_a_named_error(
        seed in any::<prop::sample::Index>(),
        ms in prop::collection::vec(mutation(), 1..4),
    ) {
        let seeds = session_seeds();
        let bytes = apply(&seeds[seed.index(seeds.len())], &ms);
        restores_or_named(zescope_model::session::from_slice(&bytes));
    }

    #[test]
    fn mutated_layouts_load_or_give_a_named_error(
        seed in any::<prop::sample::Index>(),
        ms in prop::collection::vec(mutation(), 1..4),
    ) {
        let seeds = layout_seeds();
        let bytes = apply(&seeds[seed.index(seeds.len())], &ms);
        let Ok(text) = String::from_utf8(bytes) else { return Ok(()) };
        if let Err(e) = LayoutSet::default().add_file("mutated.ron", &text) {
            prop_assert_eq!(&e.origin, "mutated.ron");
            prop_assert!(!e.message.trim().is_empty());
        }
    }

    #[test]
    fn mutated_checkpoints_load_or_give_a_named_error(
        current in any::<bool>(),
        in_chunk in any::<bool>(),
        ms in prop::collection::vec(mutation(), 1..4),
    ) {
        let (mut text, mut chunks) = if current { current_checkpoint_seed() } else { checkpoint_seed() };
        if in_chunk {
            for c in chunks.values_mut() {
                *c = apply(c, &ms);
            }
        } else {
            text = apply(&text, &ms);
        }
        let Ok(text) = String::from_utf8(text) else { return Ok(()) };
        let r = checkpoint_from_text("mutated/checkpoint.ron", &text, |name| {
            chunks.get(name).cloned().ok_or_else(|| SessionError::NotASession(format!("no chunk {name}")))
        });
        restores_or_named(r);
    }
}

#[test]
fn the_unmutated_seeds_load() {
    let example = read(&root().join("../../assets/example-session.ron"));
    zescope_model::session::from_slice(&example).expect("the example session loads");
    let (text, chunks) = checkpoint_seed();
    let s =
        checkpoint_from_text("checkpoint.ron", std::str::from_utf8(&text).unwrap(), |name| Ok(chunks[name].clone()))
            .expect("the checkpoint fixture loads");
    assert_eq!(s.streams[0].data.raw.timestamps.len(), 4200, "4096 samples from the chunk file, 104 inline");
    let (text, chunks) = current_checkpoint_seed();
    assert!(std::str::from_utf8(&text).unwrap().contains("version: 7,"), "the autosaver writes the current version");
    assert_eq!(chunks.len(), 2, "4200 samples: a full chunk and the last one, each a file");
    let again =
        checkpoint_from_text("checkpoint.ron", std::str::from_utf8(&text).unwrap(), |name| Ok(chunks[name].clone()))
            .expect("the current checkpoint loads");
    assert_eq!(again.streams[0].data, s.streams[0].data, "the same samples through either version");
    let v2 = v2_seeds();
    assert!(v2.iter().all(|b| b.contains(&0)), "the seeds hold a binary data section");
    assert_eq!(zescope_model::session::from_slice(&v2[1]).unwrap(), s, "the checkpoint round-trips through version 2");
    assert_eq!(number_spans(b"a12 b 3"), vec![(1, 3), (6, 7)]);
    let dup = apply(b"abcdef", &[Mutation::Duplicate { at: 0.34, len: 2, times: 2 }]);
    assert_eq!(dup, b"abcdcdcdef");
}
