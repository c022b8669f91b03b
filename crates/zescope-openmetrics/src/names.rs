//! How a counter is named for Prometheus: `zescope_` + the metric's name in snake_case, its unit
//! turned into a base unit (seconds, bytes, joules, celsius, ratio, …) with the factor that
//! converts values, the `source` label from the way its group is read, and the names zescope
//! keeps for its own metrics ([`reserved`]).
//!
//! Base units are plain strings (the suffix and `# UNIT` of a family), so this crate needs no
//! OpenMetrics library: `zescope serve` hands them to its encoder, the backfill writer spells
//! them out.

use zescope_sampler::ReadPath;
use zescope_sampler::layout::Kind;

/// The prefix of every metric zescope serves.
pub const PREFIX: &str = "zescope";

/// A driver's unit in Prometheus terms: the base unit (`None`: not one Prometheus names, the
/// driver's unit goes into the help text instead) and the factor from the driver's unit to it.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseUnit {
    /// The base unit as the family's suffix spells it ("seconds", "bytes", "ratio", …), or
    /// `None` for counts and units without a base ("cycles", "inferences").
    pub unit: Option<&'static str>,
    /// Multiply a value in the driver's unit by this to get it in `unit`.
    pub scale: f64,
}

/// Maps a layout's unit ("ns", "MHz", "%", "°C", "B", …) onto a Prometheus base unit.
pub fn base_unit(unit: &str) -> BaseUnit {
    let u = unit.trim();
    let known = |unit: &'static str, scale: f64| BaseUnit { unit: Some(unit), scale };
    match u {
        "%" => return known("ratio", 0.01),
        "°C" | "C" | "degC" | "celsius" => return known("celsius", 1.0),
        "bytes" => return known("bytes", 1.0),
        "KiB" => return known("bytes", 1024.0),
        "MiB" => return known("bytes", 1024.0 * 1024.0),
        "GiB" => return known("bytes", 1024.0 * 1024.0 * 1024.0),
        "KB" => return known("bytes", 1e3),
        _ => {}
    }
    // A rate, as the streamer gives a count within each report: bytes a second ("GB/s" too), or
    // a count of something (cycles, events) a second. The value stays; its name says per second.
    if let Some(per) = u.strip_suffix("/s") {
        let inner = base_unit(per);
        let counted = !per.is_empty() && per.chars().all(|c| c.is_ascii_alphabetic());
        return match inner.unit {
            Some("bytes") => known("bytes_per_second", inner.scale),
            None if counted => known("per_second", 1.0),
            _ => BaseUnit { unit: None, scale: 1.0 },
        };
    }
    // An SI prefix on a base unit.
    let (factor, base) = match u.char_indices().nth(1) {
        Some((i, _)) => {
            let f = match &u[..i] {
                "k" => Some(1e3),
                "M" => Some(1e6),
                "G" => Some(1e9),
                "T" => Some(1e12),
                "m" => Some(1e-3),
                "u" | "µ" => Some(1e-6),
                "n" => Some(1e-9),
                "p" => Some(1e-12),
                _ => None,
            };
            match f {
                Some(f) if is_base(&u[i..]) => (f, &u[i..]),
                _ => (1.0, u),
            }
        }
        None => (1.0, u),
    };
    match base {
        "s" => known("seconds", factor),
        "B" => known("bytes", factor),
        "J" => known("joules", factor),
        "V" => known("volts", factor),
        "A" => known("amperes", factor),
        "W" => known("watts", factor),
        "Hz" => known("hertz", factor),
        _ => BaseUnit { unit: None, scale: 1.0 },
    }
}

fn is_base(s: &str) -> bool {
    matches!(s, "s" | "B" | "J" | "V" | "A" | "W" | "Hz")
}

/// `GpuBusyCycles` → `gpu_busy_cycles`, `EU Active %` → `eu_active`, `GPUBusy` → `gpu_busy`:
/// lowercase ASCII letters, digits and single underscores. A word starts at an upper-case letter
/// after a lower-case one, or after an upper-case letter or digit when a lower-case one follows
/// (`L3Misses` → `l3_misses`, but `3D` stays `3d`). Never empty, never starting with a digit.
pub fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1);
        let starts_word = c.is_ascii_uppercase()
            && match prev {
                Some(p) if p.is_ascii_lowercase() => true,
                Some(p) if p.is_ascii_uppercase() || p.is_ascii_digit() => next.is_some_and(char::is_ascii_lowercase),
                _ => false,
            };
        if starts_word && !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "metric_");
    }
    out
}

/// The family name of a counter, without the unit suffix and `_total` (the encoder adds them):
/// `zescope_` + its snake_case name, less a trailing unit word the encoder would repeat.
pub fn family_name(metric: &str, unit: &BaseUnit) -> String {
    let mut s = snake(metric);
    if let Some(u) = unit.unit {
        let suffix = format!("_{u}");
        if let Some(stripped) = s.strip_suffix(&suffix) {
            s = stripped.to_owned();
        } else if s == u {
            s.clear();
        }
    }
    if s.is_empty() { PREFIX.to_owned() } else { format!("{PREFIX}_{s}") }
}

/// Names zescope gives its own metrics (`zescope_device_info`, `zescope_build_info`, the
/// sampler's health `zescope_sampler_*`, the processes' `zescope_process_memory_bytes` and
/// `zescope_process_shared_memory_bytes`, the OTLP export's `zescope_otlp_*`): a counter's
/// family never takes one.
pub fn reserved(name: &str) -> bool {
    name == "zescope_device"
        || name == "zescope_build"
        || name.starts_with("zescope_sampler")
        || name.starts_with("zescope_otlp")
        || name == crate::processes::MEMORY_FAMILY
        || name == crate::processes::SHARED_FAMILY
}

/// Which of `families` a counter's samples go to (the catalog's one rule, for `zescope serve`
/// and `export --openmetrics` alike): `Ok(i)`, an existing family of that name that `fits` (same kind and unit),
/// or `Err(name)`, the name of a new family: `name`, or `alt()` when `name` is taken by a family
/// of another kind or unit or is `reserved`.
pub fn pick_family<F>(
    families: &[F],
    name: String,
    alt: impl FnOnce() -> String,
    name_of: impl Fn(&F) -> &str,
    fits: impl Fn(&F) -> bool,
    reserved: impl Fn(&str) -> bool,
) -> Result<usize, String> {
    let found = |name: &str| families.iter().position(|f| name_of(f) == name && fits(f));
    if let Some(i) = found(&name) {
        return Ok(i);
    }
    let name = if reserved(&name) || families.iter().any(|f| name_of(f) == name) { alt() } else { name };
    found(&name).ok_or(name)
}

/// Help text that both text formats carry as it is: one line, no backslash or double quote
/// (which each format escapes differently), never empty.
pub fn help_text(description: &str, fallback: &str) -> String {
    let text = if description.trim().is_empty() { fallback } else { description };
    let one_line: String = text
        .chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => ' ',
            '"' => '\'',
            '\\' => '/',
            c => c,
        })
        .collect();
    one_line.trim().to_owned()
}

/// Whether the counter is a Prometheus counter (a running total: cumulative, or busy time in its
/// unit of time; served as its raw running total with `_total`, so `rate()` of busy seconds is
/// the busy share) or a gauge (levels, and states: an id or flag is a gauge's value).
pub fn is_counter(kind: Kind) -> bool {
    kind.is_running_total()
}

/// The `source` label of a group from the way the sampler reads it (`StreamInfo::read_path`):
/// its way, [`ReadPath::way`] (exported memory, mapped, read as a file, or copied from the
/// device, is `export`).
pub fn source_label(read_path: ReadPath) -> &'static str {
    read_path.way()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_units_become_base_units_with_their_factor() {
        let cases = [
            ("ns", Some("seconds"), 1e-9),
            ("ms", Some("seconds"), 1e-3),
            ("B", Some("bytes"), 1.0),
            ("bytes", Some("bytes"), 1.0),
            ("MB", Some("bytes"), 1e6),
            ("MiB", Some("bytes"), 1048576.0),
            ("%", Some("ratio"), 0.01),
            ("°C", Some("celsius"), 1.0),
            ("MHz", Some("hertz"), 1e6),
            ("mW", Some("watts"), 1e-3),
            ("mJ", Some("joules"), 1e-3),
            ("cycles", None, 1.0),
            ("", None, 1.0),
            ("ms/frame", None, 1.0),
            // The streamer's rates: a count within each report, a second.
            ("bytes/s", Some("bytes_per_second"), 1.0),
            ("GB/s", Some("bytes_per_second"), 1e9),
            ("cycles/s", Some("per_second"), 1.0),
            ("events/s", Some("per_second"), 1.0),
            ("J/s", None, 1.0),
            ("%/s", None, 1.0),
        ];
        for (unit, want, scale) in cases {
            let b = base_unit(unit);
            assert_eq!(b.unit, want, "{unit}");
            assert!((b.scale - scale).abs() <= scale * 1e-12, "{unit}: {} != {scale}", b.scale);
        }
    }

    #[test]
    fn names_are_snake_case_with_the_prefix_and_no_repeated_unit() {
        assert_eq!(snake("GpuBusyCycles"), "gpu_busy_cycles");
        assert_eq!(snake("EU Active %"), "eu_active");
        assert_eq!(snake("L3Misses"), "l3_misses");
        assert_eq!(snake("3D busy"), "metric_3d_busy");
        assert_eq!(snake("GPUBusy"), "gpu_busy");
        assert_eq!(snake("%"), "metric_");
        assert_eq!(family_name("GpuTime", &base_unit("ns")), "zescope_gpu_time");
        assert_eq!(family_name("BusySeconds", &base_unit("s")), "zescope_busy");
        assert_eq!(family_name("Inferences", &base_unit("inferences")), "zescope_inferences");
        assert_eq!(family_name("Bytes", &base_unit("B")), "zescope");
        // A rate's family says so (the encoder adds the unit): not `zescope_l3_bytes_read`, a
        // gauge of bytes a second that reads as bytes.
        assert_eq!(family_name("L3BytesRead", &base_unit("bytes/s")), "zescope_l3_bytes_read");
        assert_eq!(base_unit("bytes/s").unit, Some("bytes_per_second"));
        assert_eq!(family_name("RenderBusyCycles", &base_unit("cycles/s")), "zescope_render_busy_cycles");
        assert_eq!(family_name("MemoryBandwidth", &base_unit("bytes/s")), "zescope_memory_bandwidth");
    }

    #[test]
    fn help_is_one_line_without_characters_the_formats_escape_differently() {
        assert_eq!(help_text("a \"quoted\"\nline \\ x", "m"), "a 'quoted' line / x");
        assert_eq!(help_text("  ", "GpuTime"), "GpuTime");
    }

    #[test]
    fn a_family_is_shared_by_its_kind_and_renamed_for_another() {
        // (name, counter)
        let families = vec![("zescope_busy".to_owned(), false), ("zescope_bytes".to_owned(), true)];
        let pick = |name: &str, counter: bool, reserved: fn(&str) -> bool| {
            pick_family(&families, name.into(), || format!("{name}_alt"), |f| &f.0, |f| f.1 == counter, reserved)
        };
        assert_eq!(pick("zescope_busy", false, |_| false), Ok(0), "same name, kind and unit: shared");
        assert_eq!(pick("zescope_bytes", true, |_| false), Ok(1));
        assert_eq!(pick("zescope_busy", true, |_| false), Err("zescope_busy_alt".into()), "taken by a gauge");
        assert_eq!(pick("zescope_new", true, |_| false), Err("zescope_new".into()));
        assert_eq!(pick("zescope_device", false, |n| n == "zescope_device"), Err("zescope_device_alt".into()));
        let with_alt = [("zescope_x".to_owned(), false), ("zescope_x_alt".to_owned(), true)];
        let got = pick_family(&with_alt, "zescope_x".into(), || "zescope_x_alt".into(), |f| &f.0, |f| f.1, |_| false);
        assert_eq!(got, Ok(1), "the renamed family is shared too");
    }
}
