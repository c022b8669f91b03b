//! View files: a way of looking at a run — which series in which pane, their colours and
//! visibility, each pane's held value range, the window length, the triggers and the derived
//! series' definitions — saved apart
//! from any data, so it can be put onto another live run or recording, on another machine
//! (`docs/view-format.md` is the format's description for users).
//!
//! Series are named by patterns, not by the device they were seen on: the device's kind (`gpu`,
//! `npu`, or any), and globs on the group's and the metric's names. [`ViewFile::apply`] lays the
//! panes out for the series a run has, and says which patterns matched nothing.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use zescope_sampler::layout::glob::matches;

use crate::derive::Derivation;
use crate::triggers::Trigger;
use crate::view::panes::Arrangement;
use crate::view::{SeriesKey, ViewLength};

/// The newest version this build reads and writes: 2 added `derived`. A view without derived
/// series is written as version 1, which every zescope that reads views reads; one with them as
/// version 2 (an older zescope then refuses it, naming the version, rather than dropping them).
pub const VERSION: u32 = 2;
/// The oldest version this build reads.
pub const OLDEST: u32 = 1;
/// The largest view file read (bytes): a view names patterns, not data.
pub const MAX_BYTES: u64 = 1 << 20;

/// A view file (RON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewFile {
    /// Format version ([`VERSION`]).
    pub version: u32,
    /// What it shows, for menus.
    #[serde(default)]
    pub name: String,
    /// The live window's length: `"10s"`, `"1min"`, `"10min"` or `"all"`.
    #[serde(default)]
    pub window: Option<String>,
    /// The panes, top to bottom.
    pub panes: Vec<ViewPane>,
    /// Triggers (`docs/triggers.md`) and the time kept around their firings.
    #[serde(default)]
    pub triggers: Vec<ViewTrigger>,
    /// Derived series (`docs/derived-series.md`), as definitions `NAME=EXPR` or
    /// `NAME[UNIT]=EXPR` (version 2 on): re-created on the run the view is put onto.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<String>,
}

/// One pane of a view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewPane {
    /// Its series, in legend order: each pattern takes every series it matches.
    pub series: Vec<SeriesPattern>,
    /// The value axis held at (min, max); `None`: fitted to the data.
    #[serde(default)]
    pub y_lock: Option<(f64, f64)>,
}

/// Series named by device kind, group and metric (globs: `*`, `?`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesPattern {
    /// `"gpu"`, `"npu"` (the device's kind), or `None` for any device.
    #[serde(default)]
    pub device: Option<String>,
    /// The metric group (glob).
    pub group: String,
    /// The metric (glob).
    pub metric: String,
    /// Colour, `"#rrggbb"`; `None`: the palette's next.
    #[serde(default)]
    pub color: Option<String>,
    /// Kept in the pane but not drawn.
    #[serde(default)]
    pub hidden: bool,
    /// Not every device has it: matching nothing is not worth saying (a view made for several
    /// catalogues).
    #[serde(default)]
    pub optional: bool,
}

/// A trigger of a view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewTrigger {
    /// The expression.
    pub expr: String,
    /// Seconds kept before a firing.
    pub pre_s: f64,
    /// Seconds kept after.
    pub post_s: f64,
}

/// A view put onto a run's series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Applied {
    /// The panes, with the series found (a pane whose patterns found none is left out).
    pub arrangement: Arrangement,
    /// Held value ranges, per pane id of `arrangement`.
    pub y_lock: BTreeMap<u64, (f64, f64)>,
    /// The window length, when the view sets one.
    pub window: Option<ViewLength>,
    /// The triggers.
    pub triggers: Vec<Trigger>,
    /// Patterns (not optional) that matched no series (shown as "gpu/ComputeBasic/Foo*"), to
    /// tell the user.
    pub missing: Vec<SeriesPattern>,
}

/// The derived series' definitions of `v`, parsed (already checked by [`ViewFile::parse`]).
pub fn derivations(v: &ViewFile) -> Vec<Derivation> {
    v.derived.iter().filter_map(|d| Derivation::parse(d).ok()).collect()
}

impl SeriesPattern {
    /// `kind/group/metric` as the user reads it (`*` for any device).
    pub fn shown(&self) -> String {
        format!("{}/{}/{}", self.device.as_deref().unwrap_or("*"), self.group, self.metric)
    }

    /// Does it name metric `metric` of group `group` of a device of `kind` (lower case: `gpu`,
    /// `npu`, …)? For a device's catalogue, before any run sampled it.
    pub fn names(&self, group: &str, metric: &str, kind: Option<&str>) -> bool {
        self.device.as_deref().is_none_or(|d| kind.is_some_and(|k| d.eq_ignore_ascii_case(k)))
            && matches(&self.group, group)
            && matches(&self.metric, metric)
    }

    /// Does it name `key`, whose device is of `kind` (lower case: `gpu`, `npu`, …)?
    pub fn matches(&self, key: &SeriesKey, kind: Option<&str>) -> bool {
        self.device.as_deref().is_none_or(|d| kind.is_some_and(|k| d.eq_ignore_ascii_case(k)))
            && matches(&self.group, &key.group)
            && matches(&self.metric, &key.metric)
    }
}

/// A window length by its name in a view file.
pub fn window_named(s: &str) -> Option<ViewLength> {
    match s {
        "10s" => Some(ViewLength::Sec10),
        "1min" => Some(ViewLength::Min1),
        "10min" => Some(ViewLength::Min10),
        "all" => Some(ViewLength::All),
        _ => None,
    }
}

/// A window length's name in a view file.
pub fn window_name(w: ViewLength) -> &'static str {
    match w {
        ViewLength::Sec10 => "10s",
        ViewLength::Min1 => "1min",
        ViewLength::Min10 => "10min",
        ViewLength::All => "all",
    }
}

fn hex(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

fn parse_hex(s: &str) -> Option<[u8; 3]> {
    let h = s.strip_prefix('#').filter(|h| h.len() == 6)?;
    let b = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).ok();
    Some([b(0)?, b(2)?, b(4)?])
}

impl ViewFile {
    /// The view of `arrangement`: each pane's series by their device's kind (`kind_of`, lower case),
    /// group and metric; colours, hidden series, held ranges (`y_lock` by pane id), the window
    /// and the triggers.
    pub fn from_arrangement(
        name: &str,
        arrangement: &Arrangement,
        y_lock: &BTreeMap<u64, (f64, f64)>,
        window: ViewLength,
        triggers: &[Trigger],
        kind_of: impl Fn(&str) -> Option<String>,
    ) -> ViewFile {
        ViewFile {
            version: VERSION,
            name: name.to_owned(),
            window: Some(window_name(window).to_owned()),
            panes: arrangement
                .panes
                .iter()
                .map(|p| ViewPane {
                    series: p
                        .series
                        .iter()
                        .map(|k| SeriesPattern {
                            device: kind_of(&k.device),
                            group: k.group.clone(),
                            metric: k.metric.clone(),
                            color: arrangement.colors.get(k).map(|&c| hex(c)),
                            hidden: arrangement.hidden.contains(k),
                            optional: false,
                        })
                        .collect(),
                    y_lock: y_lock.get(&p.id).copied(),
                })
                .collect(),
            triggers: triggers
                .iter()
                .map(|t| ViewTrigger { expr: t.text.clone(), pre_s: t.pre.as_secs_f64(), post_s: t.post.as_secs_f64() })
                .collect(),
            derived: Vec::new(),
        }
        .with_derived(&[])
    }

    /// The view keeping the derived series `defs` too (version 2 with any, 1 without).
    pub fn with_derived(mut self, defs: &[Derivation]) -> ViewFile {
        self.derived = defs.iter().map(Derivation::definition).collect();
        self.version = if self.derived.is_empty() { OLDEST } else { VERSION };
        self
    }

    /// Reads and checks a view file; the error names the file and the problem.
    pub fn load(path: &Path) -> Result<ViewFile, String> {
        let name = path.display();
        let f = std::fs::File::open(path).map_err(|e| format!("{name}: {e}"))?;
        let len = f.metadata().map_err(|e| format!("{name}: {e}"))?.len();
        if len > MAX_BYTES {
            return Err(format!("{name}: {len} bytes is too big for a view file (at most {MAX_BYTES})"));
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
        ViewFile::parse(&text).map_err(|e| format!("{name}: {e}"))
    }

    /// Parses and checks view file text.
    pub fn parse(text: &str) -> Result<ViewFile, String> {
        let v: ViewFile = ron::from_str(text).map_err(|e| format!("not a view file: {e}"))?;
        if !(OLDEST..=VERSION).contains(&v.version) {
            return Err(format!("version {} is not one this zescope reads ({OLDEST} to {VERSION})", v.version));
        }
        if v.version < 2 && !v.derived.is_empty() {
            return Err(format!("derived series came with version 2: this file says version {}", v.version));
        }
        let mut names: Vec<String> = Vec::new();
        for d in &v.derived {
            let def = Derivation::parse(d).map_err(|e| format!("derived series \"{d}\": {e}"))?;
            if names.contains(&def.name) {
                return Err(format!("derived series '{}' is defined twice", def.name));
            }
            names.push(def.name);
        }
        if let Some(w) = v.window.as_deref().filter(|w| window_named(w).is_none()) {
            return Err(format!("window \"{w}\" is none of 10s, 1min, 10min, all"));
        }
        for (i, p) in v.panes.iter().enumerate() {
            for s in &p.series {
                if let Some(c) = s.color.as_deref().filter(|c| parse_hex(c).is_none()) {
                    return Err(format!("pane {}: colour \"{c}\" of {} is not #rrggbb", i + 1, s.shown()));
                }
            }
            if let Some((lo, hi)) = p.y_lock
                && !(lo.is_finite() && hi.is_finite() && hi > lo)
            {
                return Err(format!("pane {}: y_lock ({lo}, {hi}) is not a range", i + 1));
            }
        }
        for t in &v.triggers {
            Trigger::parse(&t.expr).map_err(|e| format!("trigger \"{}\": {e}", t.expr))?;
            if !(t.pre_s.is_finite() && t.post_s.is_finite() && t.pre_s >= 0.0 && t.post_s >= 0.0) {
                return Err(format!("trigger \"{}\": pre_s and post_s must be seconds ≥ 0", t.expr));
            }
        }
        Ok(v)
    }

    /// The view as RON text.
    pub fn to_text(&self) -> String {
        let pretty = ron::ser::PrettyConfig::new().depth_limit(4);
        ron::ser::to_string_pretty(self, pretty).unwrap_or_default()
    }

    /// Saves the view at `path` (atomically).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = self.to_text();
        crate::session::write_atomic(path, |f| {
            use std::io::Write as _;
            f.write_all(text.as_bytes()).map_err(|e| crate::session::SessionError::io(path, "cannot write", e))
        })
        .map_err(|e| e.to_string())
    }

    /// Lays the view out for the series `keys` (in the order they were first seen) whose devices
    /// are of `kind_of` (lower case).
    pub fn apply(&self, keys: &[SeriesKey], kind_of: impl Fn(&str) -> Option<String>) -> Applied {
        let mut out = Applied { window: self.window.as_deref().and_then(window_named), ..Applied::default() };
        for p in &self.panes {
            let mut found: Vec<SeriesKey> = Vec::new();
            for s in &p.series {
                let kind = |k: &SeriesKey| kind_of(&k.device);
                let hits: Vec<&SeriesKey> = keys.iter().filter(|k| s.matches(k, kind(k).as_deref())).collect();
                if hits.is_empty() && !s.optional {
                    out.missing.push(s.clone());
                }
                for k in hits {
                    if found.contains(k) || out.arrangement.contains(k) {
                        continue;
                    }
                    if let Some(c) = s.color.as_deref().and_then(parse_hex) {
                        out.arrangement.colors.insert(k.clone(), c);
                    }
                    if s.hidden {
                        out.arrangement.hidden.insert(k.clone());
                    }
                    found.push(k.clone());
                }
            }
            if found.is_empty() {
                continue;
            }
            let id = out.arrangement.add_pane();
            if let Some(pane) = out.arrangement.panes.iter_mut().find(|x| x.id == id) {
                pane.series = found;
            }
            if let Some(r) = p.y_lock {
                out.y_lock.insert(id, r);
            }
        }
        out.triggers = self
            .triggers
            .iter()
            .filter_map(|t| {
                let d = |s: f64| std::time::Duration::from_secs_f64(s.clamp(0.0, 1e9));
                Some(Trigger::parse(&t.expr).ok()?.around(d(t.pre_s), d(t.post_s)))
            })
            .collect();
        out
    }

    /// The groups and metrics to record for this view: (group glob, metric glob) of every
    /// pattern, for `record --view`.
    pub fn recorded(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for s in self.panes.iter().flat_map(|p| &p.series) {
            let pair = (s.group.clone(), s.metric.clone());
            if !out.contains(&pair) {
                out.push(pair);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(device: &str, group: &str, metric: &str) -> SeriesKey {
        SeriesKey { device: device.into(), group: group.into(), metric: metric.into() }
    }

    fn kind(d: &str) -> Option<String> {
        Some(if d.contains("NPU") { "npu" } else { "gpu" }.to_owned())
    }

    #[test]
    fn a_view_saved_on_one_device_fits_another() {
        let gpu = [key("GPU A", "ComputeBasic", "GpuBusy"), key("GPU A", "Telemetry", "Package power")];
        let mut arrangement = Arrangement::default();
        arrangement.place_new(&gpu, &BTreeMap::new());
        arrangement.colors.insert(gpu[0].clone(), [1, 2, 3]);
        let id = arrangement.panes[0].id;
        let locks = BTreeMap::from([(id, (0.0, 100.0))]);
        let t = Trigger::parse("ComputeBasic/GpuBusy > 80").unwrap();
        let v = ViewFile::from_arrangement("busy", &arrangement, &locks, ViewLength::Sec10, &[t], kind);
        let text = v.to_text();
        let back = ViewFile::parse(&text).unwrap();
        assert_eq!(back, v);
        // Another machine: another GPU's name, and an NPU whose series the view does not name.
        let other = [
            key("GPU B", "ComputeBasic", "GpuBusy"),
            key("GPU B", "Telemetry", "Package power"),
            key("NPU", "ComputeBasic", "GpuBusy"),
        ];
        let a = back.apply(&other, kind);
        let shown: Vec<&SeriesKey> = a.arrangement.panes.iter().flat_map(|p| &p.series).collect();
        assert_eq!(shown, [&other[0], &other[1]]);
        assert_eq!(a.arrangement.colors.get(&other[0]), Some(&[1, 2, 3]));
        assert_eq!(a.y_lock.get(&a.arrangement.panes[0].id), Some(&(0.0, 100.0)));
        assert_eq!(a.window, Some(ViewLength::Sec10));
        assert_eq!(a.triggers[0].text, "ComputeBasic/GpuBusy > 80");
        assert!(a.missing.is_empty());
    }

    #[test]
    fn missing_series_are_named_and_the_rest_shown() {
        let v = ViewFile::parse(
            r#"(version: 1, panes: [(series: [
                (device: Some("npu"), group: "NpuActivity", metric: "*"),
                (group: "ComputeBasic", metric: "Gpu*"),
            ])])"#,
        )
        .unwrap();
        let a = v.apply(&[key("GPU", "ComputeBasic", "GpuTime"), key("GPU", "Other", "X")], kind);
        let missing: Vec<String> = a.missing.iter().map(SeriesPattern::shown).collect();
        assert_eq!(missing, ["npu/NpuActivity/*"]);
        assert!(a.missing[0].names("NpuActivity", "Inferences", Some("npu")));
        assert!(!a.missing[0].names("NpuActivity", "Inferences", Some("gpu")), "another kind of device");
        assert_eq!(a.arrangement.panes.len(), 1);
        assert_eq!(a.arrangement.panes[0].series, [key("GPU", "ComputeBasic", "GpuTime")]);
    }

    #[test]
    fn the_shipped_views_load_and_fit_the_simulated_devices() {
        let shipped = [
            include_str!("../../../assets/views/compute-occupancy.ron"),
            include_str!("../../../assets/views/memory-traffic.ron"),
            include_str!("../../../assets/views/thermals-and-power.ron"),
            include_str!("../../../assets/views/npu-inference.ron"),
        ];
        let gpu = [
            key("ze-sim GPU", "ComputeBasic", "GpuUtilization"),
            key("ze-sim GPU", "MemoryTraffic", "BytesRead"),
            key("ze-sim GPU", "Telemetry", "GPU frequency actual"),
            key("ze-sim GPU", "Telemetry", "Package power"),
        ];
        let npu = [
            key("ze-sim NPU", "NpuActivity", "NpuUtilization"),
            key("ze-sim NPU", "NpuActivity", "Inferences"),
            key("ze-sim NPU", "NpuActivity", "NpuPower"),
        ];
        let all: Vec<SeriesKey> = gpu.iter().chain(&npu).cloned().collect();
        for text in shipped {
            let v = ViewFile::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let a = v.apply(&all, kind);
            assert!(!a.arrangement.panes.is_empty(), "{} shows something on the simulated devices", v.name);
            assert!(a.missing.is_empty(), "{}: {:?}", v.name, a.missing);
        }
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let e = |t: &str| ViewFile::parse(t).unwrap_err();
        assert!(e("(version: 3, panes: [])").contains("version 3 is not one this zescope reads (1 to 2)"));
        assert!(e(r#"(version: 1, window: Some("5s"), panes: [])"#).contains("\"5s\""));
        assert!(
            e(r#"(version: 1, panes: [(series: [(group: "G", metric: "M", color: Some("red"))])])"#).contains("red")
        );
        assert!(e(r#"(version: 1, panes: [(series: [], y_lock: Some((3.0, 1.0)))])"#).contains("not a range"));
        let t = e(r#"(version: 1, panes: [], triggers: [(expr: "G/M >", pre_s: 1.0, post_s: 1.0)])"#);
        assert!(t.contains("column 6"), "{t}");
        assert!(e("nonsense").starts_with("not a view file"));
    }

    #[test]
    fn derived_series_are_kept_from_version_2_on() {
        let defs = [
            Derivation::parse("bw[GB/s]=rate(MemoryTraffic/BytesRead) / 1e9").unwrap(),
            Derivation::parse("idle=100 - ComputeBasic/GpuTime").unwrap(),
        ];
        let arrangement = Arrangement::default();
        let plain = ViewFile::from_arrangement("v", &arrangement, &BTreeMap::new(), ViewLength::Sec10, &[], kind);
        assert_eq!(plain.version, 1, "without derived series, readable by every zescope that reads views");
        assert!(!plain.to_text().contains("derived"), "{}", plain.to_text());
        let v = plain.with_derived(&defs);
        assert_eq!(v.version, 2);
        let back = ViewFile::parse(&v.to_text()).unwrap();
        assert_eq!(back, v);
        assert_eq!(derivations(&back), defs, "the definitions, parsed back");
        // A version 1 file from before derived series still reads.
        assert!(ViewFile::parse("(version: 1, panes: [])").unwrap().derived.is_empty());
        let e = |t: &str| ViewFile::parse(t).unwrap_err();
        let old = e(r#"(version: 1, panes: [], derived: ["x=A/b"])"#);
        assert!(old.contains("derived series came with version 2"), "{old}");
        let bad = e(r#"(version: 2, panes: [], derived: ["x=rate(A/b"])"#);
        assert!(bad.contains("derived series \"x=rate(A/b\": column 11"), "{bad}");
        let twice = e(r#"(version: 2, panes: [], derived: ["x=A/b", "x=A/c"])"#);
        assert!(twice.contains("'x' is defined twice"), "{twice}");
    }
}
