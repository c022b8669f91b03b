//! The kernel knobs that gate hardware metrics on Intel GPUs.
//!
//! With `dev.i915.perf_stream_paranoid` (i915) or `dev.xe.observation_paranoid` (xe) at 1, the
//! default, only a `perfmon_capable()` process may open a metrics stream, so Level Zero lists the
//! groups but activating one fails with ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS. A missing knob
//! means that kernel driver is not loaded.

use std::path::Path;

use super::Check;
use super::caps::Capabilities;

/// One paranoid sysctl.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Knob {
    /// The kernel driver that owns it.
    pub driver: &'static str,
    /// The name `sysctl` takes.
    pub sysctl: &'static str,
    /// Its file under `/proc/sys`, absolute (read below another root in tests).
    pub path: &'static str,
}

/// The knobs of both Intel GPU kernel drivers, i915 first; the doctor reads each one.
pub(super) const KNOBS: [Knob; 2] = [
    Knob { driver: "i915", sysctl: "dev.i915.perf_stream_paranoid", path: "/proc/sys/dev/i915/perf_stream_paranoid" },
    Knob { driver: "xe", sysctl: "dev.xe.observation_paranoid", path: "/proc/sys/dev/xe/observation_paranoid" },
];

/// What reading a knob gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Reading {
    /// The file does not exist: the driver is not loaded.
    Missing,
    /// The number the file holds: 0 lets every user read metrics, anything else only
    /// `perfmon_capable()` processes.
    Value(u32),
    /// The file exists but reading it failed; the text is the I/O error.
    Unreadable(String),
    /// The file held something that is not a number.
    Garbage(String),
}

/// A knob and what reading it gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct KnobState {
    /// Which knob (one of [`KNOBS`]).
    pub knob: &'static Knob,
    /// What its file held.
    pub reading: Reading,
}

/// Parses a knob file's text ("1\n"); the error quotes text that is not a non-negative number.
pub(super) fn parse_paranoid(text: &str) -> Result<u32, String> {
    let t = text.trim();
    t.parse::<u32>().map_err(|_| format!("{t:?} is not a number"))
}

pub(super) fn read(knob: &'static Knob, root: &Path) -> KnobState {
    let path = root.join(knob.path.trim_start_matches('/'));
    let reading = match std::fs::read_to_string(&path) {
        Ok(text) => parse_paranoid(&text).map_or_else(Reading::Garbage, Reading::Value),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Reading::Missing,
        Err(e) => Reading::Unreadable(e.to_string()),
    };
    KnobState { knob, reading }
}

pub(super) fn read_all() -> Vec<KnobState> {
    KNOBS.iter().map(|k| read(k, Path::new("/"))).collect()
}

/// The checks for the knobs: one per loaded driver's knob, or one warning when neither Intel GPU
/// driver is loaded.
pub(super) fn checks(all: &[KnobState], caps: Capabilities) -> Vec<Check> {
    if all.iter().all(|s| s.reading == Reading::Missing) {
        let paths: Vec<&str> = all.iter().map(|s| s.knob.path).collect();
        let drivers: Vec<&str> = all.iter().map(|s| s.knob.driver).collect();
        return vec![Check::warn(
            "Intel GPU metric knobs",
            format!(
                "neither {} exists: no Intel GPU kernel driver ({}) is loaded, so no Intel GPU can report \
                 hardware metrics",
                paths.join(" nor "),
                drivers.join(", ")
            ),
            "on a machine with an Intel GPU, load its kernel driver (sudo modprobe i915, or xe on newer GPUs); \
             NPUs and other vendors' GPUs do not use these knobs",
        )];
    }
    all.iter().map(|s| check(s, caps)).collect()
}

/// The check for one knob, some of which is loaded.
fn check(state: &KnobState, caps: Capabilities) -> Check {
    let k = state.knob;
    let name = k.sysctl;
    match &state.reading {
        Reading::Missing => Check::ok(
            name,
            format!("the {} driver is not loaded ({} does not exist); the other Intel GPU driver is", k.driver, k.path),
        ),
        Reading::Value(0) => Check::ok(name, "0: every user may read hardware metrics"),
        Reading::Value(v) if caps.perfmon_capable() => Check::ok(
            name,
            format!("{v}: only privileged processes may read hardware metrics, and this one is (CAP_PERFMON)"),
        ),
        Reading::Value(v) => Check::fail(
            name,
            format!(
                "{v}: only processes with CAP_PERFMON may read hardware metrics, and this one has not; \
                 activating a metric group fails with ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS"
            ),
            format!(
                "sudo sysctl {name}=0\n(to keep it after a reboot: echo {name}=0 | sudo tee /etc/sysctl.d/60-zescope.conf)"
            ),
        ),
        Reading::Unreadable(e) => Check::warn(
            name,
            format!("{} cannot be read: {e}", k.path),
            format!("check it as root: sudo sysctl {name}"),
        ),
        Reading::Garbage(e) => {
            Check::warn(name, format!("{}: {e}", k.path), format!("set it to 0: sudo sysctl {name}=0"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;

    fn state(i: usize, reading: Reading) -> KnobState {
        KnobState { knob: &KNOBS[i], reading }
    }

    #[test]
    fn parses_knob_values() {
        assert_eq!(parse_paranoid("1\n"), Ok(1));
        assert_eq!(parse_paranoid("0"), Ok(0));
        assert_eq!(parse_paranoid(" 2 \n"), Ok(2));
        assert!(parse_paranoid("").is_err());
        assert!(parse_paranoid("-1\n").is_err());
        assert!(parse_paranoid("one").unwrap_err().contains("\"one\""));
    }

    #[test]
    fn reads_knob_files_under_a_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc/sys/dev/i915")).unwrap();
        std::fs::write(dir.path().join("proc/sys/dev/i915/perf_stream_paranoid"), "1\n").unwrap();
        assert_eq!(read(&KNOBS[0], dir.path()).reading, Reading::Value(1));
        assert_eq!(read(&KNOBS[1], dir.path()).reading, Reading::Missing);
        std::fs::create_dir_all(dir.path().join("proc/sys/dev/xe")).unwrap();
        std::fs::write(dir.path().join("proc/sys/dev/xe/observation_paranoid"), "maybe").unwrap();
        assert!(matches!(read(&KNOBS[1], dir.path()).reading, Reading::Garbage(_)));
    }

    #[test]
    fn a_raised_knob_fails_an_unprivileged_user_with_the_sysctl_fix() {
        let all = [state(0, Reading::Value(1)), state(1, Reading::Missing)];
        let c = checks(&all, Capabilities(0));
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].status, Status::Fail);
        assert!(c[0].fix.as_deref().unwrap().starts_with("sudo sysctl dev.i915.perf_stream_paranoid=0"), "{c:?}");
        // xe is missing but i915 is loaded: nothing to fix
        assert_eq!(c[1].status, Status::Ok);
        // the same knob is fine with CAP_PERFMON
        assert_eq!(checks(&all, Capabilities(1 << 38))[0].status, Status::Ok);
        let xe = [state(0, Reading::Missing), state(1, Reading::Value(1))];
        let fix = checks(&xe, Capabilities(0))[1].fix.clone().unwrap();
        assert_eq!(fix.lines().next(), Some("sudo sysctl dev.xe.observation_paranoid=0"));
    }

    #[test]
    fn zero_is_ok_and_missing_both_is_a_warning() {
        let all = [state(0, Reading::Value(0)), state(1, Reading::Missing)];
        assert!(checks(&all, Capabilities(0)).iter().all(|c| c.status == Status::Ok));
        let none = [state(0, Reading::Missing), state(1, Reading::Missing)];
        let c = checks(&none, Capabilities(0));
        assert_eq!(c.len(), 1, "one warning for both: {c:?}");
        assert_eq!(c[0].status, Status::Warn);
        assert!(c[0].detail.contains("is loaded") && c[0].fix.as_deref().unwrap().contains("modprobe i915"));
    }
}
