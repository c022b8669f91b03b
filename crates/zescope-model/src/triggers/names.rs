//! Does a trigger name anything that is sampled, and if not, what could it have meant?
//!
//! A trigger whose pattern matches no series would watch nothing and never fire: `record` would
//! record its whole duration into an empty file. [`unmatched`] is the check `record`, `serve` and
//! the window make before they accept a trigger: it says which names of the run come closest
//! (those holding what was typed, then the fewest edits away; case ignored), as `list --group`
//! lists the groups there are.

use zescope_sampler::RunInfo;
use zescope_sampler::layout::glob::matches;
use zescope_sampler::telemetry::throttle_names;

use super::syntax::{Condition, Trigger, mask_of};

/// A series a trigger could watch.
#[derive(Clone, Debug, PartialEq)]
pub struct Offered {
    /// The device's name.
    pub device: String,
    /// The group ("Telemetry" for Sysman's series).
    pub group: String,
    /// The metric.
    pub metric: String,
    /// The throttle reasons its bits stand for (empty: not a throttle series).
    pub throttle: Vec<(u32, String)>,
}

/// The series of run `info`.
pub fn offered(info: &RunInfo) -> Vec<Offered> {
    info.streams
        .iter()
        .flat_map(|s| {
            s.series.iter().map(|x| Offered {
                device: s.device.clone(),
                group: s.group.clone(),
                metric: x.name.clone(),
                throttle: throttle_names(&x.description),
            })
        })
        .collect()
}

/// Every trigger of `triggers` that would watch nothing of run `info`, said in one message;
/// `Ok` when each watches something (`record` and `serve` refuse to go on otherwise).
pub fn check(triggers: &[Trigger], info: &RunInfo) -> Result<(), String> {
    let series = offered(info);
    let said: Vec<String> = triggers.iter().filter_map(|t| unmatched(t, &series)).collect();
    if said.is_empty() { Ok(()) } else { Err(said.join("; ")) }
}

/// How many closest names an error offers.
const SUGGESTIONS: usize = 5;

/// Why trigger `t` would watch nothing of `series`, naming what it could mean; `None` when it
/// watches something (or waits for a marker, which no series decides).
pub fn unmatched(t: &Trigger, series: &[Offered]) -> Option<String> {
    match &t.condition {
        Condition::Marker(_) => None,
        Condition::Throttle(word) => {
            if series.iter().any(|s| mask_of(word, &s.throttle).is_some()) {
                return None;
            }
            let reasons: Vec<&str> = series.iter().flat_map(|s| s.throttle.iter().map(|(_, n)| n.as_str())).collect();
            Some(if reasons.is_empty() {
                format!(
                    "trigger '{}' watches throttle reasons, and nothing sampled reports them (telemetry is off, or \
                     the driver offers none)",
                    t.text
                )
            } else {
                format!(
                    "trigger '{}' names no throttle reason of this run; the reasons: {}",
                    t.text,
                    reasons.join(", ")
                )
            })
        }
        Condition::Series { pattern: p, .. } => {
            let hit = |s: &Offered| {
                p.device.as_deref().is_none_or(|d| matches(d, &s.device))
                    && matches(&p.group, &s.group)
                    && matches(&p.metric, &s.metric)
            };
            if series.iter().any(hit) {
                return None;
            }
            let close = closest(p, series);
            Some(if close.is_empty() {
                format!("trigger '{}' names a series, and nothing is sampled", t.text)
            } else {
                format!("trigger '{}' names no series of this run; it could mean {}", t.text, close.join(", "))
            })
        }
    }
}

/// The names of `series` closest to what `p` asks for (at most five): those that hold what was
/// typed (or are held by it) first, then the fewest edits away, case ignored; quoted as an
/// expression takes them.
pub fn closest(p: &super::SeriesPattern, series: &[Offered]) -> Vec<String> {
    let wanted = format!("{}/{}", p.group, p.metric).to_lowercase().replace(['*', '?'], "");
    // Names that hold what was typed (or are held by it) first, then by edits.
    let mut names: Vec<((bool, usize), String)> = series
        .iter()
        .map(|s| {
            let name = format!("{}/{}", s.group, s.metric);
            let low = name.to_lowercase();
            let within = low.contains(&wanted) || wanted.contains(&low);
            ((!within, distance(&wanted, &low)), name)
        })
        .collect();
    names.sort();
    names.dedup_by(|a, b| a.1 == b.1);
    names.into_iter().take(SUGGESTIONS).map(|(_, n)| quoted(&n)).collect()
}

/// A series name as an expression takes it: in double quotes when it holds a space, a
/// parenthesis, a comma or a comparison.
pub fn quoted(name: &str) -> String {
    if name.contains([' ', '(', ')', ',', '<', '>']) { format!("\"{name}\"") } else { name.to_owned() }
}

/// Edits (insert, delete, replace a character) that turn `a` into `b`.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(names: &[(&str, &str)]) -> Vec<Offered> {
        names
            .iter()
            .map(|(g, m)| Offered {
                device: "ze-sim GPU".into(),
                group: g.to_string(),
                metric: m.to_string(),
                throttle: vec![],
            })
            .collect()
    }

    #[test]
    fn a_pattern_that_matches_nothing_is_named_with_the_closest_names() {
        let s = series(&[
            ("ComputeBasic", "GpuTime"),
            ("ComputeBasic", "GpuUtilization"),
            ("ComputeBasic", "GpuBusyCycles"),
            ("Telemetry", "GPU temperature"),
        ]);
        let t = Trigger::parse("ComputeBasic/GpuBusy > 80").unwrap();
        let e = unmatched(&t, &s).expect("refused");
        assert!(
            e.starts_with("trigger 'ComputeBasic/GpuBusy > 80' names no series of this run; it could mean "),
            "{e}"
        );
        assert!(e.contains("ComputeBasic/GpuBusyCycles, "), "closest first: {e}");
        assert!(e.contains("\"Telemetry/GPU temperature\""), "quoted as an expression takes it: {e}");
        for ok in [
            "ComputeBasic/GpuUtilization > 80",
            "*/GpuTime rise 5 in 1s",
            "\"Telemetry/GPU temperature\" > 90",
            "marker solve*",
        ] {
            assert_eq!(unmatched(&Trigger::parse(ok).unwrap(), &s), None, "{ok}");
        }
        let t = Trigger::parse("throttle power").unwrap();
        assert!(unmatched(&t, &s).unwrap().contains("nothing sampled reports them"));
    }

    #[test]
    fn edit_distance() {
        assert_eq!(distance("gpubusy", "gpubusycycles"), 6);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
    }
}
