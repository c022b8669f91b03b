//! A live scrape of `zescope serve` and a backfill of a recording of the same configuration
//! (`zescope record --out x.ron`, then `zescope export x.ron --openmetrics x.om`) name the same
//! series: the same metric names with the same label sets, device identity (`uuid`, `driver`,
//! `pci_bdf`, `simulated`) included. Both on the simulated device, over two devices, a group read from
//! exported memory, one through the metric streamer, and both devices' telemetry.
//!
//! What legitimately differs is left out of the comparison, and nothing else: serve's own metrics
//! (`zescope_build_info`, `zescope_device_info`, the sampler's health `zescope_sampler_*`) are
//! about the serving process now, not about the recorded counters, and a backfill does not write
//! them. Neither side carries a run number, so there is none to compare.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::support::serve::{OPENMETRICS, Serve, get};

/// The configuration both commands are given (besides `--source sim`).
const CONFIG: &[&str] =
    &["--device", "0,1", "--group", "ze-sim GPU:ComputeBasic", "--group", "ze-sim GPU:RenderBasic", "--telemetry"];

/// A series: its sample name and its labels.
type Series = (String, BTreeMap<String, String>);

/// The labels of `{a="x",b="y\"z"}` (OpenMetrics escapes: `\\`, `\"`, `\n`).
pub(crate) fn labels(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = text;
    while let Some((key, tail)) = rest.split_once("=\"") {
        let mut value = String::new();
        let mut chars = tail.char_indices();
        let end = loop {
            match chars.next() {
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c)) => value.push(c),
                    None => panic!("a label value ends in a backslash: {text}"),
                },
                Some((i, '"')) => break i,
                Some((_, c)) => value.push(c),
                None => panic!("a label value is not closed: {text}"),
            }
        };
        assert!(out.insert(key.trim_start_matches(',').to_owned(), value).is_none(), "a label twice: {text}");
        rest = &tail[end + 1..];
    }
    out
}

/// The series of an OpenMetrics text (a scrape or a backfill), less serve's own metrics.
fn series(text: &str) -> BTreeSet<Series> {
    let mut out = BTreeSet::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (name, rest) = match line.find(['{', ' ']) {
            Some(i) => line.split_at(i),
            None => panic!("not a sample: {line}"),
        };
        if name.starts_with("zescope_sampler_") || name == "zescope_build_info" || name == "zescope_device_info" {
            continue;
        }
        let labelled = rest.strip_prefix('{').map(|r| &r[..r.rfind('}').unwrap_or_else(|| panic!("{line}"))]);
        out.insert((name.to_owned(), labels(labelled.unwrap_or(""))));
    }
    out
}

#[test]
fn a_live_scrape_and_a_backfill_of_the_same_configuration_name_the_same_series() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("x.ron");
    let rec = crate::support::zescope()
        .args(["--source", "sim", "record", "--interval", "10ms", "--duration", "1s"])
        .args(CONFIG)
        .arg("--out")
        .arg(&run)
        .output()
        .unwrap();
    assert!(rec.status.success(), "record: {}", String::from_utf8_lossy(&rec.stderr));
    let om = dir.path().join("x.om");
    let exp = crate::support::zescope().arg("export").arg(&run).arg("--openmetrics").arg(&om).output().unwrap();
    assert!(exp.status.success(), "export: {}", String::from_utf8_lossy(&exp.stderr));
    let backfilled = series(&std::fs::read_to_string(&om).unwrap());

    // Scrape until every backfilled series has been served (a value not read yet is not served),
    // and a little longer: whatever serve adds after that is a difference too.
    let s = Serve::start(CONFIG);
    let mut live = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut extra = 5;
    while extra > 0 {
        let (status, _, page) = get(s.addr, "/metrics", Some(OPENMETRICS));
        assert_eq!(status, 200, "{page}");
        live.extend(series(&page));
        if backfilled.is_subset(&live) {
            extra -= 1;
        }
        if Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    s.stop();

    let only_live: Vec<&Series> = live.difference(&backfilled).collect();
    let only_backfilled: Vec<&Series> = backfilled.difference(&live).collect();
    assert!(
        only_live.is_empty() && only_backfilled.is_empty(),
        "only scraped: {only_live:#?}\nonly backfilled: {only_backfilled:#?}"
    );

    // Not an empty agreement: both devices with their identity, every way of reading, and
    // telemetry's domain labels are in it.
    for (device, uuid, bdf) in [
        ("ze-sim GPU", "01000000-0000-0000-515a-000000000000", "0000:03:00.0"),
        ("ze-sim NPU", "01000000-0000-0000-5e5a-000002000000", "0000:00:0b.0"),
    ] {
        let mine: Vec<&Series> = live.iter().filter(|(_, l)| l["device"] == device).collect();
        // The NPU: its groups' metrics and its one engine group (all its driver's Sysman has).
        let least = if device == "ze-sim GPU" { 10 } else { 4 };
        assert!(mine.len() > least, "{device}: {mine:#?}");
        assert!(mine.iter().any(|(n, _)| n == "zescope_engine_busy_ratio"), "{device}: {mine:#?}");
        assert!(mine.iter().all(|(_, l)| l["uuid"] == uuid && l["driver"] == "0x10000" && l["simulated"] == "true"));
        assert!(mine.iter().all(|(_, l)| l.get("pci_bdf").map(String::as_str) == Some(bdf)), "{device}: {mine:#?}");
    }
    let sources: BTreeSet<&str> = live.iter().map(|(_, l)| l["source"].as_str()).collect();
    assert_eq!(sources, ["export", "streamer", "sysman"].into());
    assert!(live.iter().any(|(n, l)| n == "zescope_gpu_throttle_reason" && l["reason"] == "thermal_limit"));
    assert!(live.iter().any(|(n, l)| n == "zescope_energy_joules_total" && l["domain"] == "package"));
    assert!(live.iter().any(|(n, l)| n == "zescope_gpu_time_seconds_total" && l["group"] == "ComputeBasic"));
}

#[test]
fn labels_parse_with_their_escapes() {
    let got = labels(r#"a="x",b="y\"z\\",c="1\n2""#);
    let want: BTreeMap<String, String> =
        [("a", "x"), ("b", "y\"z\\"), ("c", "1\n2")].into_iter().map(|(k, v)| (k.into(), v.into())).collect();
    assert_eq!(got, want);
    let set = series("# TYPE m gauge\nm{a=\"1\"} 2 3.000\nzescope_sampler_running 1\nn 4\n# EOF\n");
    assert_eq!(set.len(), 2);
    assert!(set.contains(&("n".to_owned(), BTreeMap::new())));
}
