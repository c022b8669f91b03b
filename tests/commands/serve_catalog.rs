//! `zescope serve` on a realistic catalogue (ze-sim's `catalog: Realistic`: a GPU with dozens of
//! groups and over a thousand metrics) exposes the groups it was asked for and nothing else of
//! the catalogue: a page for `--group 'ComputeB*' --group 'Engine*'` holds one family per metric
//! of ComputeBasic and EngineActivity, labelled with their group, and no other group's.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use ze_sim::catalog::realistic_groups;

use crate::support::serve::{Serve, get};

/// The value of label `name` in a sample line.
fn label<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let at = line.find(&format!("{name}=\""))? + name.len() + 2;
    line[at..].split('"').next()
}

#[test]
fn a_page_holds_the_asked_groups_families_and_not_the_rest_of_the_catalogue() {
    let s = Serve::start_with(
        &["--group", "ComputeB*", "--group", "Engine*", "--no-telemetry"],
        Some("(catalog: Realistic)"),
    );
    let asked = ["ComputeBasic", "EngineActivity"];
    let catalogue = realistic_groups();
    // Every metric of the asked groups is a series; QueryBeginTime is the reports' time.
    let wanted: usize = catalogue.iter().filter(|g| asked.contains(&g.name.as_str())).map(|g| g.metrics.len()).sum();
    let deadline = Instant::now() + Duration::from_secs(20);
    let page = loop {
        let (status, _, text) = get(s.addr, "/metrics", None);
        assert_eq!(status, 200);
        let groups: BTreeSet<&str> = text.lines().filter_map(|l| label(l, "group")).collect();
        if groups.len() == asked.len() {
            break text;
        }
        assert!(Instant::now() < deadline, "both groups never reached the page:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let samples: Vec<&str> = page.lines().filter(|l| !l.starts_with('#') && label(l, "group").is_some()).collect();
    let groups: BTreeSet<&str> = samples.iter().filter_map(|l| label(l, "group")).collect();
    assert_eq!(groups, asked.into_iter().collect(), "only the asked groups");
    let families: BTreeSet<&str> = samples.iter().map(|l| l.split(['{', ' ']).next().unwrap()).collect();
    assert_eq!(families.len(), wanted, "one family per metric of the asked groups:\n{page}");
    let sources: BTreeSet<(&str, &str)> =
        samples.iter().map(|l| (label(l, "group").unwrap(), label(l, "source").unwrap())).collect();
    assert_eq!(sources, [("ComputeBasic", "streamer"), ("EngineActivity", "export")].into_iter().collect());
    // No metric only the rest of the catalogue has shows up, by its help text.
    let asked_descriptions: BTreeSet<&str> = catalogue
        .iter()
        .filter(|g| asked.contains(&g.name.as_str()))
        .flat_map(|g| g.metrics.iter().map(|m| m.description.as_str()))
        .collect();
    let helps: Vec<&str> = page.lines().filter(|l| l.starts_with("# HELP zescope_")).collect();
    for g in catalogue.iter().filter(|g| !asked.contains(&g.name.as_str())) {
        for m in g.metrics.iter().filter(|m| !asked_descriptions.contains(m.description.as_str())) {
            assert!(
                !helps.iter().any(|h| h.contains(&m.description)),
                "{}/{} is served though its group was not asked for",
                g.name,
                m.name
            );
        }
    }
    assert!(
        page.lines().count() < 4 * wanted + 40,
        "the page is the asked groups' size: {} lines",
        page.lines().count()
    );
    s.stop();
}
