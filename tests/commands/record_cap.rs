//! `zescope record --memory-cap`: a recording larger than its cap keeps its span in the session,
//! its oldest part summarised.

use std::path::PathBuf;
use std::process::{Child, Stdio};

/// `--memory-cap`: a recording that outgrows its cap keeps its whole span, the oldest part
/// summarised, in the session it writes; the same recording without the cap keeps every sample.
/// (16 MiB, the least cap, is ~4 s of three streamed groups at 100k reports a second each: one
/// group's packs too well since the store's scaled form, ~1.1 MB a second, to pass it in 7 s; both
/// run at once.)
#[test]
fn a_recording_past_its_memory_cap_keeps_its_span_with_the_oldest_history_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let start = |name: &str, cap: Option<&str>| {
        let path = dir.path().join(name);
        let mut c = crate::support::zescope();
        c.args(["--source", "sim", "record", "--via", "streamer", "--no-telemetry"])
            .args(["--group", "RenderBasic", "--group", "ComputeBasic", "--group", "MemoryTraffic"])
            .args(["--interval", "100us", "--duration", "7s", "--out"])
            .arg(&path)
            .env_remove("ZE_SIM_CONFIG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(cap) = cap {
            c.args(["--memory-cap", cap]);
        }
        (path, c.spawn().unwrap())
    };
    let kept = |(path, child): (PathBuf, Child)| {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut store = zescope_store::Store::new(1 << 30);
        zescope_model::session::load(&path).unwrap().restore_into(&mut store).unwrap();
        let r = store.coarsening().into_iter().map(|(_, r)| r).next().expect("a stream");
        let samples: u64 = r.spans.iter().map(|s| s.samples).sum::<u64>() + r.evicted_samples;
        let span_s = match (r.spans.first(), r.spans.last()) {
            (Some(a), Some(b)) => (b.t_last - a.t_first) as f64 / 1e9,
            _ => 0.0,
        };
        (r.coarsened_before(), samples, span_s)
    };
    let (whole, capped) = (start("whole.ron", None), start("capped.ron", Some("16M")));
    let (whole, capped) = (kept(whole), kept(capped));
    assert!(whole.0.is_none(), "the default cap holds 7 s whole: {whole:?}");
    assert!(capped.0.is_some(), "16 MiB holds 7 s of three streamed groups only summarised: {capped:?}");
    // Both recorded ~7 s at 100k reports a second, and the capped session still stands for them.
    for (what, k) in [("whole", whole), ("capped", capped)] {
        assert!(k.1 > 500_000 && k.2 > 6.0, "{what}: {k:?}");
    }
    let bad = crate::support::zescope()
        .args(["--source", "sim", "record", "--memory-cap", "lots", "--out"])
        .arg(dir.path().join("x.ron"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--memory-cap"), "{}", String::from_utf8_lossy(&bad.stderr));
}
