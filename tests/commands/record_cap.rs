//! `zescope record --memory-cap`: a recording larger than its cap keeps its span in the session,
//! its oldest part summarised.

use std::path::PathBuf;
use std::process::{Child, Stdio};

/// `--memory-cap`: a recording that outgrows its cap keeps its whole span, the oldest part
/// summarised, in the session it writes; the same recording without the cap keeps every sample.
/// (16 MiB, the least cap, is ~4 s of three streamed groups at 100k reports a second each: one
/// group's packs too well since the store's scaled form, ~1.1 MB a second, to pass it in 7 s; both
/// run at once, for 12 s: on a machine as busy as CI's the simulated device, which makes its
/// reports on the reading thread, fell to ~63k reports a second and 7 s of them stayed under the
/// cap.)
#[test]
fn a_recording_past_its_memory_cap_keeps_its_span_with_the_oldest_history_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let start = |name: &str, cap: Option<&str>| {
        let path = dir.path().join(name);
        let mut c = crate::support::zescope();
        c.args(["--source", "sim", "record", "--via", "streamer", "--no-telemetry"])
            .args(["--group", "RenderBasic", "--group", "ComputeBasic", "--group", "MemoryTraffic"])
            .args(["--interval", "100us", "--duration", "12s", "--out"])
            .arg(&path)
            .env_remove("ZE_SIM_CONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cap) = cap {
            c.args(["--memory-cap", cap]);
        }
        (path, c.spawn().unwrap())
    };
    let kept = |(path, child): (PathBuf, Child)| {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // What record says it recorded, every stream's samples (`--no-telemetry`: no telemetry
        // reads counted apart).
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(!said.contains("telemetry"), "{said}");
        let recorded: u64 = said
            .lines()
            .find_map(|l| l.strip_prefix("recorded ")?.split(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no 'recorded N samples' in {said}"));
        let mut store = zescope_store::Store::new(1 << 30);
        zescope_model::session::load(&path).unwrap().restore_into(&mut store).unwrap();
        let streams: Vec<_> = store.coarsening().into_iter().map(|(_, r)| r).collect();
        let held = |r: &zescope_store::Retention| r.spans.iter().map(|s| s.samples).sum::<u64>() + r.evicted_samples;
        assert_eq!(streams.iter().map(held).sum::<u64>(), recorded, "the session stands for every sample recorded");
        let r = streams.first().expect("a stream");
        let span_s = match (r.spans.first(), r.spans.last()) {
            (Some(a), Some(b)) => (b.t_last - a.t_first) as f64 / 1e9,
            _ => 0.0,
        };
        (r.coarsened_before(), held(r), span_s)
    };
    let (whole, capped) = (start("whole.ron", None), start("capped.ron", Some("16M")));
    let (whole, capped) = (kept(whole), kept(capped));
    assert!(whole.0.is_none(), "the default cap holds 12 s whole: {whole:?}");
    assert!(capped.0.is_some(), "16 MiB holds 12 s of three streamed groups only summarised: {capped:?}");
    // Both recorded ~12 s of a group streamed at 100k reports a second (at least 30k a second
    // read on a machine as busy as CI's, where the simulated device, which makes its reports on
    // the reading thread, falls behind), and the capped session still stands for them (above:
    // every sample recorded is held, summarised or not).
    for (what, k) in [("whole", whole), ("capped", capped)] {
        assert!(k.1 > 360_000 && k.2 > 11.0, "{what}: {k:?}");
    }
    let bad = crate::support::zescope()
        .args(["--source", "sim", "record", "--memory-cap", "lots", "--out"])
        .arg(dir.path().join("x.ron"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--memory-cap"), "{}", String::from_utf8_lossy(&bad.stderr));
}
