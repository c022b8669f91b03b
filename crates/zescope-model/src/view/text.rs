//! Numbers and times for people, the same on screen, in exported images and on the command
//! line: SI prefixes and units ([`si`]), time-axis labels ([`time_label`]), durations both ways
//! ([`duration`], [`parse_duration`]), rates and byte counts, and counts of things ([`plural`]).

/// Base units that may carry an SI prefix in a driver's unit string ("MHz", "ns", "mW").
const BASES: [&str; 6] = ["Hz", "W", "s", "B", "J", "V"];

/// A unit that already has a prefix ("MHz", "ns/s") as the value in its base unit: 2100 MHz →
/// 2.1e9 Hz, so that `si` can pick the right prefix instead of printing "2.1 kMHz".
fn normalize(value: f64, unit: &str) -> (f64, String) {
    let (head, tail) = unit.split_once('/').map_or((unit, None), |(h, t)| (h, Some(t)));
    let mut chars = head.chars();
    let factor = match chars.next() {
        Some('k') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        Some('T') => 1e12,
        Some('m') => 1e-3,
        Some('u') | Some('µ') => 1e-6,
        Some('n') => 1e-9,
        Some('p') => 1e-12,
        _ => return (value, unit.to_owned()),
    };
    let base = chars.as_str();
    if !BASES.contains(&base) {
        return (value, unit.to_owned());
    }
    let unit = match tail {
        Some(t) => format!("{base}/{t}"),
        None => base.to_owned(),
    };
    (value * factor, unit)
}

/// The unit without its SI prefix, for telling which units can share an axis: "MB/s" and
/// "B/s" → "B/s", "ns/s" → "s/s", "%" → "%". Units without a known base are returned as they are.
pub fn base_unit(unit: &str) -> String {
    normalize(1.0, unit).1
}

/// `value` with an SI prefix and `unit`: 1234567 B/s → "1.23 MB/s", 0.0021 s → "2.10 ms".
/// Percent and °C are never prefixed; prefixed units are re-prefixed (2100 MHz → 2.1 GHz).
/// NaN/inf are spelled out.
pub fn si(value: f64, unit: &str) -> String {
    si_digits(value, unit, 3)
}

/// An axis tick's label: [`si`], with more significant digits where three would give this tick
/// the label of its neighbours `step` away (deep zoom: "20.1 kJ" three times becomes "20.098 kJ",
/// "20.1 kJ", "20.102 kJ").
pub fn si_tick(value: f64, step: f64, unit: &str) -> String {
    let label = |v: f64, digits: usize| si_digits(v, unit, digits);
    if !(step.is_finite() && step > 0.0) {
        return si(value, unit);
    }
    (3..=9)
        .map(|d| (label(value - step, d), label(value, d), label(value + step, d)))
        .find(|(a, b, c)| a != b && b != c)
        .map_or_else(|| si(value, unit), |(_, b, _)| b)
}

fn si_digits(value: f64, unit: &str, digits: usize) -> String {
    let (value, unit) = normalize(value, unit);
    let unit = unit.as_str();
    if !value.is_finite() {
        return format!("{value} {unit}").trim_end().to_owned();
    }
    let no_prefix = matches!(unit, "%" | "°C" | "C" | "") || unit.starts_with('%');
    if no_prefix || value == 0.0 {
        return format!("{} {unit}", trim(value, digits)).trim_end().to_owned();
    }
    const PREFIXES: [(f64, &str); 9] = [
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
        (1.0, ""),
        (1e-3, "m"),
        (1e-6, "µ"),
        (1e-9, "n"),
        (1e-12, "p"),
    ];
    let a = value.abs();
    let (scale, p) = PREFIXES.iter().find(|(s, _)| a >= *s * 0.9995).copied().unwrap_or((1e-12, "p"));
    format!("{} {p}{unit}", trim(value / scale, digits))
}

/// One prefixed unit for a table row of values in `unit` (the legend's last/min/max/mean): the
/// prefix the largest magnitude among `values` would get from [`si`], and the factor to divide
/// the values by. 1.2e6 and 3e5 ns/s → (1e6, "ms/s"): the unit column says what the numbers use.
pub fn row_scale(values: &[f64], unit: &str) -> (f64, String) {
    let big = values.iter().copied().filter(|v| v.is_finite()).map(f64::abs).fold(0.0, f64::max);
    let (raw_factor, base) = normalize(1.0, unit);
    let sample = si(big, unit);
    let shown = sample.split_once(' ').map_or("", |(_, u)| u);
    let factor = shown.strip_suffix(base.as_str()).and_then(prefix_factor);
    match factor {
        Some(f) if big != 0.0 && !shown.is_empty() => (f / raw_factor, shown.to_owned()),
        _ => (1.0, unit.to_owned()),
    }
}

/// The factor of an SI prefix as [`si`] writes it ("" → 1, "k" → 1e3, "µ" → 1e-6).
fn prefix_factor(p: &str) -> Option<f64> {
    Some(match p {
        "" => 1.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "m" => 1e-3,
        "µ" => 1e-6,
        "n" => 1e-9,
        "p" => 1e-12,
        _ => return None,
    })
}

/// A value already divided by its row's scale ([`row_scale`]): three significant digits, no unit.
pub fn scaled(value: f64) -> String {
    if value.is_finite() { trim(value, 3) } else { value.to_string() }
}

/// Three significant digits without trailing zeros noise: 1.50 → "1.5", 123.4 → "123".
fn trim(v: f64, digits: usize) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - mag).clamp(0, 9) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_owned() } else { s }
}

/// A duration for status texts: "250 µs", "1 ms", "2.5 s", "1 min 30 s", "1 h 46 min", "2 d 3 h":
/// to the second below an hour, to the minute below a day, to the hour beyond.
pub fn duration(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        return si(s, "s");
    }
    let secs = d.as_secs() + u64::from(d.subsec_nanos() >= 500_000_000);
    if secs < 3600 {
        let (m, rest) = (secs / 60, secs % 60);
        return if rest == 0 { format!("{m} min") } else { format!("{m} min {rest} s") };
    }
    let mins = (secs + 30) / 60;
    if mins < 24 * 60 {
        let (h, m) = (mins / 60, mins % 60);
        return if m == 0 { format!("{h} h") } else { format!("{h} h {m} min") };
    }
    let hours = (mins + 30) / 60;
    let (days, h) = (hours / 24, hours % 24);
    if h == 0 { format!("{days} d") } else { format!("{days} d {h} h") }
}

/// A rate in Hz as "10 kHz".
pub fn hz(v: f64) -> String {
    si(v, "Hz")
}

/// Below this share of the requested rate the achieved rate is a warning (a tick now and then
/// lost to scheduling on a busy machine is not).
pub const RATE_WARN_SHARE: f64 = 0.95;

/// "98.2 Hz of 100 Hz requested" and whether it is short enough to warn about. A measured rate a
/// little above the request (the clocks' jitter) reads as the request: never "101 of 100".
pub fn rate(achieved: f64, requested: f64) -> (String, bool) {
    let shown = if achieved > requested && achieved <= requested * 1.02 { requested } else { achieved };
    // Rounded down, so a rate just short of the request never reads as reaching it.
    let shown_text = if shown < requested { hz_below(shown, requested) } else { hz(shown) };
    let warn = achieved.is_finite() && requested > 0.0 && achieved < RATE_WARN_SHARE * requested;
    (format!("{shown_text} of {} requested", hz(requested)), warn)
}

/// `v` Hz (below `cap`) with as many digits as it takes not to round up to `cap`'s text.
fn hz_below(v: f64, cap: f64) -> String {
    let capped = hz(cap);
    std::iter::once(hz(v))
        .chain((4..=6).map(|digits| format!("{} Hz", trim(v, digits))))
        .find(|s| *s != capped)
        .unwrap_or_else(|| format!("{v} Hz"))
}

/// A wall-clock time (Unix milliseconds) as "2026-12-01 04:27:08 UTC"; "unknown" for 0 or less.
pub fn utc(unix_ms: i64) -> String {
    if unix_ms <= 0 {
        return "unknown".into();
    }
    let secs = unix_ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// A count with its digits in groups of three: "1,349,881".
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    grouped
}

/// `n` and the word for that many: "1 marker", "2 markers" (`one`, `many`).
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `n` with its digits grouped ([`count`]) and the word for that many: "1 tick", "12,345 ticks".
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// Bytes with binary prefixes: "512 MiB".
pub fn bytes(b: usize) -> String {
    let b = b as f64;
    for (s, p) in [(1u64 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if b >= s as f64 {
            return format!("{} {p}", trim(b / s as f64, 3));
        }
    }
    format!("{b} B")
}

/// Time-axis labels: `x` is seconds since the store's origin (the session's first sample):
/// "1.5 s", "1:15.25", "1:02:05".
pub fn time_label(x: f64) -> String {
    let neg = x < 0.0;
    let a = x.abs();
    let s = if a >= 3600.0 {
        format!("{}:{:02}:{:02}", (a / 3600.0) as u64, ((a % 3600.0) / 60.0) as u64, (a % 60.0) as u64)
    } else if a >= 60.0 {
        format!("{}:{:06.3}", (a / 60.0) as u64, a % 60.0).trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        format!("{a:.3}").trim_end_matches('0').trim_end_matches('.').to_owned() + " s"
    };
    if neg { format!("-{s}") } else { s }
}

/// "100us", "1ms", "2.5s", "1m", "1h" (a bare number is seconds).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().map_err(|_| format!("{s:?} is not a duration (try 100us, 1ms, 10s, 2m)"))?;
    let secs = match unit.trim() {
        "ns" => v * 1e-9,
        "us" | "µs" => v * 1e-6,
        "ms" => v * 1e-3,
        "" | "s" => v,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        u => return Err(format!("unknown unit {u:?} in {s:?} (use ns, us, ms, s, m or h)")),
    };
    if !(0.0..=1e9).contains(&secs) {
        return Err(format!("{s:?} is out of range"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thing_is_singular_and_none_or_many_plural() {
        assert_eq!(plural(1, "marker", "markers"), "1 marker");
        assert_eq!(plural(0, "marker", "markers"), "0 markers");
        assert_eq!(plural(2, "telemetry read", "telemetry reads"), "2 telemetry reads");
        assert_eq!(counted(1, "tick", "ticks"), "1 tick");
        assert_eq!(counted(12_345, "tick", "ticks"), "12,345 ticks");
    }

    #[test]
    fn deep_zoom_ticks_get_the_digits_that_tell_them_apart() {
        let ticks: Vec<String> = [20_098.0, 20_100.0, 20_102.0].iter().map(|&v| si_tick(v, 2.0, "J")).collect();
        assert_eq!(ticks, ["20.098 kJ", "20.1 kJ", "20.102 kJ"], "not '20.1 kJ' three times");
        assert_eq!(si_tick(20_000.0, 5_000.0, "J"), si(20_000.0, "J"), "three digits where they tell ticks apart");
        assert_eq!(si_tick(1.5, f64::NAN, "W"), si(1.5, "W"));
    }

    #[test]
    fn base_units_drop_only_si_prefixes() {
        assert_eq!(base_unit("MB/s"), "B/s");
        assert_eq!(base_unit("B/s"), "B/s");
        assert_eq!(base_unit("ns/s"), "s/s");
        assert_eq!(base_unit("MHz"), "Hz");
        assert_eq!(base_unit("%"), "%");
        assert_eq!(base_unit("°C"), "°C");
        // "m" of "mcycles" is no prefix of a known base: kept as it is.
        assert_eq!(base_unit("mcycles"), "mcycles");
        assert_ne!(base_unit("B/s"), base_unit("°C"));
    }

    #[test]
    fn a_row_uses_one_prefixed_unit_that_its_numbers_are_in() {
        let (f, u) = row_scale(&[1.2e6, 3e5, f64::NAN], "ns/s");
        assert_eq!((f, u.as_str()), (1e6, "ms/s"));
        assert_eq!(scaled(3e5 / f), "0.3");
        let (f, u) = row_scale(&[2.1e9, 1.6e9], "Hz");
        assert_eq!((f, u.as_str(), scaled(1.6e9 / f)), (1e9, "GHz", "1.6".to_owned()));
        assert_eq!(row_scale(&[1500.0], "MHz"), (1e3, "GHz".to_owned()), "re-prefixed like si");
        assert_eq!(row_scale(&[42.0, 97.0], "%"), (1.0, "%".to_owned()));
        assert_eq!(row_scale(&[2e6], "cycles"), (1e6, "Mcycles".to_owned()));
        assert_eq!(row_scale(&[], "W"), (1.0, "W".to_owned()), "nothing to scale by");
        assert_eq!(row_scale(&[5.0], ""), (1.0, String::new()));
    }

    #[test]
    fn wall_clock_times_in_utc() {
        assert_eq!(utc(0), "unknown");
        assert_eq!(utc(1_000), "1970-01-01 00:00:01 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC", "a leap day");
        assert_eq!(utc(1_795_955_228_500), "2026-11-29 12:27:08 UTC");
    }

    #[test]
    fn rates_read_honestly() {
        assert_eq!(rate(98.0, 100.0), ("98 Hz of 100 Hz requested".to_owned(), false), "2 % short: no alarm");
        assert_eq!(rate(100.7, 100.0).0, "100 Hz of 100 Hz requested", "jitter above is not 101 of 100");
        assert_eq!(rate(99.96, 100.0).0, "99.96 Hz of 100 Hz requested", "just short does not round up to 100");
        assert!(rate(90.0, 100.0).1, "10 % short warns");
        assert_eq!(rate(150.0, 100.0).0, "150 Hz of 100 Hz requested", "far above is shown as measured");
    }

    #[test]
    fn si_prefixes_and_units() {
        assert_eq!(si(1_234_567.0, "B/s"), "1.23 MB/s");
        assert_eq!(si(0.0021, "s"), "2.1 ms");
        assert_eq!(si(999.9, "W"), "1 kW");
        assert_eq!(si(42.0, "%"), "42 %");
        assert_eq!(si(0.0, "W"), "0 W");
        assert_eq!(si(-2500.0, "MHz"), "-2.5 GHz");
        assert_eq!(si(957e6, "ns/s"), "957 ms/s");
        assert_eq!(si(1.5, "cycles"), "1.5 cycles");
        assert_eq!(si(f64::NAN, "W"), "NaN W");
        assert_eq!(si(1.0, ""), "1");
    }

    #[test]
    fn counts_group_their_digits_in_threes() {
        let cases = [(0, "0"), (999, "999"), (1_000, "1,000"), (99_963, "99,963"), (1_349_881, "1,349,881")];
        for (n, want) in cases {
            assert_eq!(count(n), want);
        }
        assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn durations_rates_and_bytes() {
        assert_eq!(duration(std::time::Duration::from_micros(100)), "100 µs");
        assert_eq!(duration(std::time::Duration::from_secs(90)), "1 min 30 s");
        let secs = |s: f64| duration(std::time::Duration::from_secs_f64(s));
        assert_eq!(secs(119.6), "2 min", "never '1 min 60 s'");
        assert_eq!(secs(3599.4), "59 min 59 s");
        assert_eq!(secs(3599.6), "1 h");
        assert_eq!(secs(6350.0), "1 h 46 min", "a checkpoint's age of 105 min 50 s");
        assert_eq!(secs(86_369.0), "23 h 59 min");
        assert_eq!(secs(86_399.0), "1 d");
        assert_eq!(secs(2.0 * 86_400.0 + 3.0 * 3600.0 + 100.0), "2 d 3 h");
        assert_eq!(hz(10_000.0), "10 kHz");
        assert_eq!(bytes(512 << 20), "512 MiB");
        assert_eq!(bytes(100), "100 B");
    }

    #[test]
    fn time_labels() {
        assert_eq!(time_label(1.5), "1.5 s");
        assert_eq!(time_label(0.0), "0 s");
        assert_eq!(time_label(75.25), "1:15.25");
        assert_eq!(time_label(3725.0), "1:02:05");
        assert_eq!(time_label(-2.0), "-2 s");
    }

    #[test]
    fn durations_parse_with_units_and_reject_junk() {
        use std::time::Duration;
        assert_eq!(parse_duration("100us").unwrap(), Duration::from_micros(100));
        assert_eq!(parse_duration("1ms").unwrap(), Duration::from_millis(1));
        assert_eq!(parse_duration("2.5s").unwrap(), Duration::from_millis(2500));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("fast").unwrap_err().contains("not a duration"));
        assert!(parse_duration("3 parsecs").unwrap_err().contains("unknown unit"));
    }
}
