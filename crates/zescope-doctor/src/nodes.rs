//! Access to the device nodes Level Zero drivers open: `/dev/dri/renderD*` (GPUs) and
//! `/dev/accel/accel*` (NPUs).
//!
//! A driver that cannot open its node does not report the device at all, so "no device" is often
//! just a missing `render` group membership — or one added after the user logged in, which the
//! running session does not have yet. Access is tested by opening the node read/write, exactly
//! what the driver does; nothing is sent to the device.

use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::Check;
use super::proc_status::ProcStatus;

const NAME: &str = "device nodes";

/// One device node and whether this process may open it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NodeProbe {
    pub path: PathBuf,
    /// Owning group.
    pub gid: u32,
    /// `Ok` when it opened read/write, else the error kind and message.
    pub access: Result<(), (ErrorKind, String)>,
}

/// A line of `/etc/group`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GroupEntry {
    pub name: String,
    pub gid: u32,
    pub members: Vec<String>,
}

/// Parses `/etc/group` text, skipping lines that are not `name:x:gid:members`.
pub(crate) fn parse_group_file(text: &str) -> Vec<GroupEntry> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?.trim();
            let _password = f.next()?;
            let gid = f.next()?.trim().parse().ok()?;
            let members = f.next().unwrap_or("").split(',').map(str::trim).filter(|m| !m.is_empty());
            (!name.is_empty() && !name.starts_with('#')).then(|| GroupEntry {
                name: name.to_owned(),
                gid,
                members: members.map(str::to_owned).collect(),
            })
        })
        .collect()
}

pub(super) fn read_group_file() -> Vec<GroupEntry> {
    std::fs::read_to_string("/etc/group").map(|t| parse_group_file(&t)).unwrap_or_default()
}

/// The nodes in `dir` whose names start with `prefix`, each opened read/write to test access.
pub(crate) fn probe_dir(dir: &Path, prefix: &str) -> Vec<NodeProbe> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let gid = std::fs::metadata(&path).map(|m| m.gid()).unwrap_or(u32::MAX);
            let access = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .map(drop)
                .map_err(|e| (e.kind(), e.to_string()));
            NodeProbe { path, gid, access }
        })
        .collect()
}

pub(super) fn probe_all() -> Vec<NodeProbe> {
    let mut v = probe_dir(Path::new("/dev/dri"), "renderD");
    v.extend(probe_dir(Path::new("/dev/accel"), "accel"));
    v
}

/// The check; `user` is the login name (`$USER`), to tell "not in the group" from "added to it
/// after logging in".
pub(super) fn check(nodes: &[NodeProbe], me: Option<&ProcStatus>, groups: &[GroupEntry], user: Option<&str>) -> Check {
    if nodes.is_empty() {
        return Check::fail(
            NAME,
            "no /dev/dri/renderD* or /dev/accel/accel*: no GPU or NPU kernel driver has created a device node \
             (or, in a container, none was passed in)",
            "load the kernel driver of your GPU or NPU (i915, xe, intel_vpu; `lspci -k` shows which is in use); \
             in a container pass the nodes in (docker run --device /dev/dri ...)",
        );
    }
    let group_name =
        |gid: u32| groups.iter().find(|g| g.gid == gid).map_or_else(|| format!("gid {gid}"), |g| g.name.clone());
    let (ok, denied): (Vec<&NodeProbe>, Vec<&NodeProbe>) = nodes.iter().partition(|n| n.access.is_ok());
    let list = |ns: &[&NodeProbe]| ns.iter().map(|n| n.path.display().to_string()).collect::<Vec<_>>().join(", ");
    if denied.is_empty() {
        return Check::ok(NAME, format!("{} open read/write", list(&ok)));
    }
    let mut detail = Vec::new();
    let mut fix = None;
    for n in &denied {
        let (kind, msg) = n.access.as_ref().unwrap_err();
        let group = group_name(n.gid);
        let mut line = format!("{} (group {group}) cannot be opened: {msg}", n.path.display());
        if *kind == ErrorKind::PermissionDenied {
            let listed =
                user.is_some_and(|u| groups.iter().any(|g| g.gid == n.gid && g.members.iter().any(|m| m == u)));
            let carried = me.is_some_and(|s| s.in_group(n.gid));
            if listed && !carried {
                line.push_str(&format!(
                    "; you were added to group {group}, but this login session started before that"
                ));
                fix.get_or_insert_with(|| format!("log out and log in again (or run zescope under `sg {group}`)"));
            } else if !carried {
                line.push_str(&format!("; you are not in group {group}"));
                fix.get_or_insert_with(|| format!("sudo usermod -aG {group} $USER, then log out and log in again"));
            }
        }
        detail.push(line);
    }
    if !ok.is_empty() {
        detail.push(format!("{} open read/write", list(&ok)));
    }
    let fix = fix.unwrap_or_else(|| "check the node's owner and mode (ls -l /dev/dri /dev/accel) and dmesg".into());
    if ok.is_empty() { Check::fail(NAME, detail.join("\n"), fix) } else { Check::warn(NAME, detail.join("\n"), fix) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;

    const GROUPS: &str = "root:x:0:\nvideo:x:44:alice\n# comment\nrender:x:105:alice,bob\nbroken line\nalice:x:1000:\n";

    fn node(path: &str, gid: u32, access: Result<(), ErrorKind>) -> NodeProbe {
        NodeProbe { path: path.into(), gid, access: access.map_err(|k| (k, format!("{k}"))) }
    }

    fn me(groups: Vec<u32>) -> ProcStatus {
        ProcStatus { euid: 1000, egid: 1000, groups, cap_eff: 0 }
    }

    #[test]
    fn parses_the_group_file() {
        let g = parse_group_file(GROUPS);
        assert_eq!(g.len(), 4);
        assert_eq!(g[2], GroupEntry { name: "render".into(), gid: 105, members: vec!["alice".into(), "bob".into()] });
        assert!(g[0].members.is_empty());
    }

    #[test]
    fn no_nodes_fail_and_say_no_driver() {
        let c = check(&[], None, &[], None);
        assert_eq!(c.status, Status::Fail);
        assert!(c.detail.contains("no /dev/dri/renderD*"));
    }

    #[test]
    fn a_denied_node_names_the_group_and_the_usermod_fix() {
        let groups = parse_group_file(GROUPS);
        let nodes = [node("/dev/dri/renderD128", 105, Err(ErrorKind::PermissionDenied))];
        let c = check(&nodes, Some(&me(vec![1000])), &groups, Some("carol"));
        assert_eq!(c.status, Status::Fail);
        assert!(c.detail.contains("/dev/dri/renderD128 (group render)"), "{c:?}");
        assert!(c.detail.contains("you are not in group render"), "{c:?}");
        assert_eq!(c.fix.unwrap(), "sudo usermod -aG render $USER, then log out and log in again");
    }

    #[test]
    fn a_group_added_after_login_asks_to_log_in_again() {
        let groups = parse_group_file(GROUPS);
        let nodes = [node("/dev/dri/renderD128", 105, Err(ErrorKind::PermissionDenied))];
        // alice is listed in /etc/group but this process does not carry gid 105
        let c = check(&nodes, Some(&me(vec![44, 1000])), &groups, Some("alice"));
        assert_eq!(c.status, Status::Fail);
        assert!(c.detail.contains("started before that"), "{c:?}");
        assert!(c.fix.unwrap().starts_with("log out and log in again"));
    }

    #[test]
    fn some_nodes_open_is_a_warning_all_open_is_ok() {
        let groups = parse_group_file(GROUPS);
        let ok = node("/dev/dri/renderD128", 105, Ok(()));
        let denied = node("/dev/dri/renderD129", 105, Err(ErrorKind::PermissionDenied));
        assert_eq!(check(std::slice::from_ref(&ok), Some(&me(vec![105])), &groups, Some("bob")).status, Status::Ok);
        let c = check(&[ok, denied], Some(&me(vec![1000])), &groups, Some("carol"));
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("renderD129") && c.detail.contains("renderD128 open read/write"), "{c:?}");
    }

    #[test]
    fn other_errors_point_at_the_node_not_the_group() {
        let nodes = [node("/dev/accel/accel0", 105, Err(ErrorKind::NotFound))];
        let c = check(&nodes, Some(&me(vec![105])), &parse_group_file(GROUPS), Some("bob"));
        assert_eq!(c.status, Status::Fail);
        assert!(c.fix.unwrap().contains("ls -l /dev/dri /dev/accel"));
    }

    #[test]
    fn probes_files_in_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["renderD128", "card0", "renderD129"] {
            std::fs::write(dir.path().join(n), "").unwrap();
        }
        let probes = probe_dir(dir.path(), "renderD");
        let names: Vec<_> = probes.iter().map(|p| p.path.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["renderD128", "renderD129"]);
        assert!(probe_dir(&dir.path().join("missing"), "renderD").is_empty());
    }
}
