//! Capabilities that let a process read hardware metrics whatever the kernel knobs say.
//!
//! i915 and xe let a process open a metrics stream while their paranoid knob is 1 only if it is
//! `perfmon_capable()`: CAP_PERFMON (bit 38) or, on older kernels, CAP_SYS_ADMIN (bit 21).

use super::Check;
use super::paranoid::{KnobState, Reading};

/// Bit of `CAP_SYS_ADMIN` in a capability mask: what kernels before 5.8 ask instead of CAP_PERFMON.
pub(super) const CAP_SYS_ADMIN: u32 = 21;
/// Bit of `CAP_PERFMON` in a capability mask (Linux 5.8 and later).
pub(super) const CAP_PERFMON: u32 = 38;

/// An effective capability mask (`CapEff`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Capabilities(pub u64);

impl Capabilities {
    /// Is capability number `bit` in the mask? Numbers of 64 and above are never set.
    pub(super) fn has(self, bit: u32) -> bool {
        bit < 64 && self.0 & (1u64 << bit) != 0
    }

    /// What the kernel's `perfmon_capable()` asks.
    pub(super) fn perfmon_capable(self) -> bool {
        self.has(CAP_PERFMON) || self.has(CAP_SYS_ADMIN)
    }

    fn describe(self) -> String {
        let yes = |b| if self.has(b) { "yes" } else { "no" };
        format!("CAP_PERFMON {}, CAP_SYS_ADMIN {}", yes(CAP_PERFMON), yes(CAP_SYS_ADMIN))
    }
}

pub(super) fn check(caps: Capabilities, knobs: &[KnobState]) -> Check {
    const NAME: &str = "capabilities";
    if caps.perfmon_capable() {
        return Check::ok(NAME, format!("{}: metrics may be read whatever the paranoid knobs say", caps.describe()));
    }
    let restricting: Vec<&str> =
        knobs.iter().filter(|k| matches!(k.reading, Reading::Value(v) if v != 0)).map(|k| k.knob.sysctl).collect();
    if restricting.is_empty() {
        Check::ok(NAME, format!("{}: not needed while no paranoid knob restricts metrics", caps.describe()))
    } else {
        Check::warn(
            NAME,
            format!("{}: needed while {} is not 0", caps.describe(), restricting.join(" and ")),
            "lower the knob (see its line above), or grant the capability to zescope: \
             sudo setcap cap_perfmon+ep \"$(command -v zescope)\"",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::paranoid::{KNOBS, parse_paranoid};
    use super::super::proc_status::parse_cap_mask;
    use super::*;
    use crate::Status;

    fn knob(value: &str) -> KnobState {
        KnobState { knob: &KNOBS[0], reading: parse_paranoid(value).map_or_else(Reading::Garbage, Reading::Value) }
    }

    #[test]
    fn bits_from_cap_eff_text() {
        let root = Capabilities(parse_cap_mask("000001ffffffffff").unwrap());
        assert!(root.has(CAP_PERFMON) && root.has(CAP_SYS_ADMIN) && root.perfmon_capable());
        let perfmon = Capabilities(parse_cap_mask("0000004000000000").unwrap());
        assert!(perfmon.has(CAP_PERFMON) && !perfmon.has(CAP_SYS_ADMIN) && perfmon.perfmon_capable());
        let admin = Capabilities(parse_cap_mask("0000000000200000").unwrap());
        assert!(!admin.has(CAP_PERFMON) && admin.perfmon_capable());
        // CAP_SYS_PTRACE (19) and CAP_SYS_RAWIO (17) are not enough
        assert!(!Capabilities((1 << 19) | (1 << 17)).perfmon_capable());
        assert!(!Capabilities(0).has(64));
    }

    #[test]
    fn missing_capabilities_matter_only_while_a_knob_is_up() {
        let none = Capabilities(0);
        assert_eq!(check(none, &[knob("0\n")]).status, Status::Ok);
        assert_eq!(check(none, &[]).status, Status::Ok);
        let c = check(none, &[knob("1\n")]);
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("dev.i915.perf_stream_paranoid"), "{c:?}");
        assert!(c.fix.unwrap().contains("setcap cap_perfmon+ep"));
        assert_eq!(check(Capabilities(1 << CAP_PERFMON), &[knob("1")]).status, Status::Ok);
    }
}
