//! How much memory this process may use: the machine's memory, the address-space limit
//! (`RLIMIT_AS`, as `prlimit --as` or `ulimit -v` set it) and the memory limit of the control
//! group the process runs in (cgroup v2 `memory.max`, v1 `memory.limit_in_bytes`, of its group
//! and every group above it). [`default_cap`](super::default_cap) takes a quarter of the
//! smallest of them, so a zescope started under a limit caps its samples within that limit,
//! not within the machine's memory.
//!
//! Everything is read from `/proc` and `/sys/fs/cgroup` (no system call): a file that cannot be
//! read or parsed is a limit that is not there.

use std::path::{Path, PathBuf};

/// A limit at or above this (`RLIM_INFINITY`, cgroup v1's "no limit" page-rounded `i64::MAX`)
/// is no limit.
const UNLIMITED: u64 = 1 << 62;

/// The smallest of the machine's memory and the process's limits, in bytes; `None` when none
/// could be read.
pub(crate) fn memory_limit() -> Option<u64> {
    let total = read("/proc/meminfo").and_then(|s| mem_total(&s));
    let space = read("/proc/self/limits").and_then(|s| address_space(&s));
    let group = read("/proc/self/cgroup").and_then(|s| cgroup_limit(&s, Path::new("/sys/fs/cgroup")));
    [total, space, group].into_iter().flatten().min()
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
pub(crate) fn mem_total(meminfo: &str) -> Option<u64> {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib.saturating_mul(1024))
        .filter(|&b| b > 0)
}

/// The soft address-space limit of `/proc/self/limits` ("Max address space  1500000000 …").
pub(crate) fn address_space(limits: &str) -> Option<u64> {
    let line = limits.lines().find_map(|l| l.strip_prefix("Max address space"))?;
    line.split_whitespace().next()?.parse::<u64>().ok().filter(|&b| b < UNLIMITED)
}

/// The smallest memory limit of the groups `/proc/self/cgroup` names, under `root` (the cgroup
/// mount). v2: `memory.max` of the group and each group above it; v1: the memory controller's
/// `memory.limit_in_bytes`, likewise. The mount's own top is read too: in a container the
/// group's path is often the host's while the mount shows the container's own group.
pub(crate) fn cgroup_limit(proc_cgroup: &str, root: &Path) -> Option<u64> {
    let mut found = Vec::new();
    for line in proc_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let (base, file) = match controllers {
            "" => (root.to_path_buf(), "memory.max"),
            c if c.split(',').any(|c| c == "memory") => (root.join("memory"), "memory.limit_in_bytes"),
            _ => continue,
        };
        let mut dir: PathBuf = base.join(path.trim_start_matches('/'));
        loop {
            found.extend(read(dir.join(file)).and_then(|s| s.trim().parse::<u64>().ok()));
            if dir == base || !dir.pop() || !dir.starts_with(&base) {
                break;
            }
        }
        found.extend(read(base.join(file)).and_then(|s| s.trim().parse::<u64>().ok()));
    }
    found.into_iter().filter(|&b| b > 0 && b < UNLIMITED).min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_space_limit_is_read_from_proc_limits() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max address space         1500000000           unlimited            bytes     \n";
        assert_eq!(address_space(limits), Some(1_500_000_000));
        assert_eq!(address_space(&limits.replace("1500000000", "unlimited")), None);
        assert_eq!(mem_total("MemTotal:       24576000 kB\nMemFree: 1 kB\n"), Some(24_576_000 * 1024));
    }

    #[test]
    fn the_smallest_limit_of_the_group_and_those_above_it_counts() {
        struct Dir(PathBuf);
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
        impl Dir {
            fn path(&self) -> &Path {
                &self.0
            }
        }
        let root = Dir(std::env::temp_dir().join(format!("zescope-cgroup-test-{}", std::process::id())));
        let group = root.path().join("user.slice/app");
        std::fs::create_dir_all(&group).unwrap();
        std::fs::write(group.join("memory.max"), "max\n").unwrap();
        std::fs::write(root.path().join("user.slice/memory.max"), "2147483648\n").unwrap();
        assert_eq!(cgroup_limit("0::/user.slice/app\n", root.path()), Some(2 << 30));
        std::fs::write(group.join("memory.max"), "536870912\n").unwrap();
        assert_eq!(cgroup_limit("0::/user.slice/app\n", root.path()), Some(512 << 20));
        // v1: the memory controller's hierarchy; its "no limit" is a page-rounded i64::MAX.
        let v1 = root.path().join("memory/docker/x");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("memory.limit_in_bytes"), "9223372036854771712\n").unwrap();
        assert_eq!(cgroup_limit("4:memory:/docker/x\n", root.path()), None);
        std::fs::write(root.path().join("memory/memory.limit_in_bytes"), "1073741824\n").unwrap();
        assert_eq!(cgroup_limit("4:cpu,memory:/docker/x\n", root.path()), Some(1 << 30));
        assert_eq!(cgroup_limit("3:cpu:/\n", root.path()), None);
    }
}
