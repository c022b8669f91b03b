//! Who this process is, from `/proc/self/status`: effective uid, supplementary groups and
//! effective capabilities. Read from the file rather than asked of libc so that the doctor needs
//! no `unsafe`, and so that the parsers can be tested on fixture text.

use super::caps::Capabilities;

/// The fields of `/proc/self/status` the doctor needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ProcStatus {
    /// Effective user id.
    pub euid: u32,
    /// Effective group id.
    pub egid: u32,
    /// Supplementary groups the process carries (fixed at login: a group added later is not here).
    pub groups: Vec<u32>,
    /// The `CapEff` mask.
    pub cap_eff: u64,
}

impl ProcStatus {
    /// This process's status; `None` when `/proc/self/status` cannot be read or lacks a field
    /// (the checks then assume no capabilities).
    pub(super) fn read_self() -> Option<ProcStatus> {
        std::fs::read_to_string("/proc/self/status").ok().and_then(|t| ProcStatus::parse(&t))
    }

    /// Parses the text of `/proc/<pid>/status`; `None` when a needed line is missing or malformed.
    pub(super) fn parse(text: &str) -> Option<ProcStatus> {
        let field = |name: &str| {
            text.lines().find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(':')).map(str::trim))
        };
        // "Uid:\treal\teffective\tsaved\tfs"
        let second = |v: &str| v.split_whitespace().nth(1).and_then(|x| x.parse::<u32>().ok());
        let euid = second(field("Uid")?)?;
        let egid = second(field("Gid")?)?;
        let groups = field("Groups")
            .unwrap_or("")
            .split_whitespace()
            .map(|g| g.parse::<u32>().ok())
            .collect::<Option<Vec<_>>>()?;
        let cap_eff = parse_cap_mask(field("CapEff")?)?;
        Some(ProcStatus { euid, egid, groups, cap_eff })
    }

    /// The effective capabilities (`CapEff`).
    pub(super) fn capabilities(&self) -> Capabilities {
        Capabilities(self.cap_eff)
    }

    /// Is `gid` among the groups this process runs with?
    pub(super) fn in_group(&self, gid: u32) -> bool {
        self.egid == gid || self.groups.contains(&gid)
    }
}

/// A capability mask as `/proc` prints it: 16 hex digits, no prefix.
pub(super) fn parse_cap_mask(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: &str = "Name:\tzescope\nUmask:\t0022\nState:\tR (running)\nTgid:\t4242\nPid:\t4242\n\
        Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nFDSize:\t64\n\
        Groups:\t4 24 27 44 105 1000 \nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n\
        CapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n";

    const ROOT: &str = "Name:\tcat\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\nCapEff:\t000001ffffffffff\n";

    #[test]
    fn parses_a_user_process() {
        let s = ProcStatus::parse(USER).unwrap();
        assert_eq!(s, ProcStatus { euid: 1000, egid: 1000, groups: vec![4, 24, 27, 44, 105, 1000], cap_eff: 0 });
        assert!(s.in_group(105) && s.in_group(1000) && !s.in_group(106));
    }

    #[test]
    fn parses_root_with_no_supplementary_groups() {
        let s = ProcStatus::parse(ROOT).unwrap();
        assert_eq!((s.euid, s.groups.len(), s.cap_eff), (0, 0, 0x1ff_ffff_ffff));
    }

    #[test]
    fn effective_uid_is_the_second_column() {
        let t = "Uid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\nCapEff:\t0\n";
        assert_eq!(ProcStatus::parse(t).unwrap().euid, 0);
    }

    #[test]
    fn malformed_or_missing_lines_give_none() {
        assert_eq!(ProcStatus::parse(""), None);
        assert_eq!(ProcStatus::parse("Uid:\t1000\nGid:\t1\t1\nCapEff:\t0\n"), None);
        assert_eq!(ProcStatus::parse("Uid:\t1\t1\nGid:\t1\t1\nCapEff:\tzz\n"), None);
        assert_eq!(ProcStatus::parse("Uid:\t1\t1\nGid:\t1\t1\nGroups:\t4 x\nCapEff:\t0\n"), None);
        // a name that merely starts like a field is not that field
        assert_eq!(ProcStatus::parse("Uid:\t1\t1\nGid:\t1\t1\nCapEffX:\t0\n"), None);
    }

    #[test]
    fn cap_masks() {
        assert_eq!(parse_cap_mask("000001ffffffffff"), Some(0x1ff_ffff_ffff));
        assert_eq!(parse_cap_mask("0000004000000000"), Some(1 << 38));
        assert_eq!(parse_cap_mask(" 0000000000200000\n"), Some(1 << 21));
        assert_eq!(parse_cap_mask(""), None);
        assert_eq!(parse_cap_mask("0x10"), None);
        assert_eq!(parse_cap_mask("10000000000000000"), None);
    }
}
