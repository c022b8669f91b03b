//! The telemetry stream's vocabulary, for whoever reads its samples: the stream's name and
//! layout, and how the throttle reasons series names the bits of its bitmask. The sampler's
//! Sysman reader (`read/telemetry/sysman.rs`) writes series that follow it; the window, sessions and the
//! OpenMetrics naming read them by it.

/// The name of the telemetry stream (`StreamInfo::group`).
pub const GROUP: &str = "Telemetry";

/// `StreamInfo::layout` of the telemetry stream (sessions keep it: it is how a loaded stream is
/// known as telemetry). Its `read_path` is `ReadPath::Sysman`, whose name is the same word.
pub const LAYOUT: &str = "sysman";

/// Names of the throttle reason bits, bit 0 first: what the throttle series' description lists.
pub const THROTTLE_REASONS: [&str; 7] = [
    "average power cap (PL1)",
    "burst power cap (PL2)",
    "current limit (PL4)",
    "thermal limit",
    "power supply alert",
    "software frequency range",
    "hardware frequency range",
];

/// Prefix of a throttle series' description, followed by `bit N: name` items separated by "; ".
pub const THROTTLE_DESCRIPTION: &str = "Frequency throttle reasons as a bitmask: ";

/// The description of a throttle reasons series.
pub fn throttle_description() -> String {
    let bits: Vec<String> = THROTTLE_REASONS.iter().enumerate().map(|(i, n)| format!("bit {i}: {n}")).collect();
    format!("{THROTTLE_DESCRIPTION}{}", bits.join("; "))
}

/// The reason names carried by a throttle series' description (empty for any other series).
pub fn throttle_names(description: &str) -> Vec<(u32, String)> {
    let Some(rest) = description.strip_prefix(THROTTLE_DESCRIPTION) else {
        return Vec::new();
    };
    rest.split("; ")
        .filter_map(|item| {
            let (bit, name) = item.strip_prefix("bit ")?.split_once(": ")?;
            Some((bit.parse().ok().filter(|b| *b < 32)?, name.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_names_round_trip_through_the_description() {
        let names = throttle_names(&throttle_description());
        assert_eq!(names.len(), THROTTLE_REASONS.len());
        assert_eq!(names[0], (0, "average power cap (PL1)".to_owned()));
        assert_eq!(names[3], (3, "thermal limit".to_owned()));
        assert!(throttle_names("Actual clock").is_empty());
        assert!(throttle_names(&format!("{THROTTLE_DESCRIPTION}bit 99: nonsense; bit x: y")).is_empty());
    }
}
